"""simscore.report: saved tables round-trip, the Markdown report, and rebuilding it from files."""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pandas as pd
import pytest
from test_analysis import col_only as _small
from test_analysis import synthetic_tables

from simscore import analysis as an
from simscore import report
from simscore.errors import FileFormatError

META = {
    "title": "Synthetic experiment",
    "signatures": {"tmr": "tmr|simscore:0.1.0", "dmr": "dmr|simscore:0.1.0", "cer": "cer|levenshtein:x|clip:no",
                   "cmr": "cmr|simscore:0.1.0"},
    "config": {"runs_per_reward": 2, "checkpoints": [1, 2, 3], "context_sets": ["col", "gen"]},
    "versions": {"simscore": "0.1.0", "numpy": "2.4.6"},
    "seeds": {"training": [1, 2], "bootstrap": 0},
    "bootstrap": {"n_resamples": 100, "seed": 0},
    "findings": {"converged_tmr": 0.85},
}


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()




# ----------------------------------------------------------------------------- saving and loading


def test_save_and_load_round_trip(tables, tmp_path):
    extra = dict(tables)
    extra["stability"] = an.stability_table(tables["convergence"], threshold=0.95)  # nullable ints
    extra["notes"] = pd.DataFrame({"what": ["a|b", "c"], "value": [1.5, np.nan], "flag": [True, False]})
    written = report.save_tables(tmp_path, extra, META)
    assert set(written) == set(extra)
    loaded = report.load_tables(tmp_path)
    assert list(loaded.tables) == list(extra)
    assert loaded.meta == META
    for name, frame in extra.items():
        pd.testing.assert_frame_equal(loaded.tables[name], frame.reset_index(drop=True), check_exact=True)
    assert loaded.tables["stability"]["first_stable"].dtype == "Int64"
    assert loaded.tables["convergence"]["checkpoint"].dtype == np.int64

    document = json.loads((tmp_path / "convergence.json").read_text())
    assert document["format"] == "simscore-table" and document["version"] == 1
    assert document["meta"]["signatures"] == META["signatures"]
    assert document["columns"] == list(an.SCHEMAS["convergence"])
    notes = json.loads((tmp_path / "notes.json").read_text())
    assert notes["records"][1] == ["c", None, False]  # NaN is stored as null
    csv = pd.read_csv(tmp_path / "seeds.csv")
    assert list(csv.columns) == list(an.SCHEMAS["seeds"])
    np.testing.assert_allclose(csv["mean"], tables["seeds"]["mean"])
    index = json.loads((tmp_path / "tables.json").read_text())
    assert index["tables"] == list(extra) and index["format"] == "simscore-tables"


def test_save_tables_rejects_bad_input(tables, tmp_path):
    with pytest.raises(ValueError, match="plain file stem"):
        report.save_tables(tmp_path, {"../x": tables["seeds"]})
    with pytest.raises(ValueError, match="plain file stem"):
        report.save_tables(tmp_path, {"tables": tables["seeds"]})
    with pytest.raises(ValueError, match=r"tables\['seeds'\] lacks column\(s\) run_a, run_b"):
        report.save_tables(tmp_path, {"seeds": tables["seeds"].drop(columns=["run_a", "run_b"])})
    with pytest.raises(ValueError, match="meta must be JSON-serialisable"):
        report.save_tables(tmp_path, {"seeds": tables["seeds"]}, {"when": object()})
    assert not list(tmp_path.iterdir())  # validation happens before anything is written


def test_load_tables_names_the_bad_file(tables, tmp_path):
    with pytest.raises(FileFormatError, match="not a directory"):
        report.load_tables(tmp_path / "missing")
    with pytest.raises(FileFormatError, match=r"tables\.json: file not found"):
        report.load_tables(tmp_path)
    report.save_tables(tmp_path, {"seeds": tables["seeds"], "chance": tables["chance"]}, META)
    (tmp_path / "chance.json").write_text('{"format": "simscore-table", "version": 1, "records": [')
    with pytest.raises(FileFormatError, match=r"chance\.json, line 1: invalid JSON"):
        report.load_tables(tmp_path)
    (tmp_path / "chance.json").write_text('{"format": "simscore-table", "version": 7}')
    with pytest.raises(FileFormatError, match="unsupported format version 7"):
        report.load_tables(tmp_path)
    (tmp_path / "chance.json").unlink()
    with pytest.raises(FileFormatError, match=r"chance\.json: file not found"):
        report.load_tables(tmp_path)
    broken = json.loads((tmp_path / "seeds.json").read_text())
    broken["columns"] = broken["columns"][:-1]
    broken["records"] = [r[:-1] for r in broken["records"]]
    (tmp_path / "seeds.json").write_text(json.dumps(broken))
    index = {"format": "simscore-tables", "version": 1, "tables": ["seeds"]}
    (tmp_path / "tables.json").write_text(json.dumps(index))
    with pytest.raises(FileFormatError, match=r"seeds\.json: table 'seeds' lacks column\(s\) missing"):
        report.load_tables(tmp_path)


# ----------------------------------------------------------------------------- Markdown


def test_markdown_table_formatting():
    frame = pd.DataFrame({"name": ["a|b", ""], "mean": [0.12345, np.nan], "n": [3, 4]})
    assert report.markdown_table(frame).splitlines() == [
        "| name | mean | n |",
        "|---|---:|---:|",
        "| a\\|b | 0.123 | 3 |",
        "| — | — | 4 |",
    ]
    assert "| 0.1 |" in report.markdown_table(frame.iloc[:1], digits=1)


def test_report_sections_and_numbers(tables):
    text = report.build_report(tables, META)
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == [
        "Findings",
        "Absolute performance (paper's Table 1)",
        "Convergence (paper's Table 2)",
        "Seeds (paper's Table 4 and Figure 3)",
        "Reward models (paper's Table 3 and Figure 5)",
        "Per turn (paper's Figure 4)",
        "Correlation between measures (paper's Figure 6)",
        "Chance level",
        "Measure signatures",
        "Reproducibility",
    ]
    assert text.startswith("# Synthetic experiment\n")
    assert "Context sets: col, gen. Measures: TMR, DMR, CER, CMR." in text
    # convergence: mean over the two ts runs on col at k = 2 (0.8 and 0.9) and k = 3 (0.9 and 1.0)
    assert "| col | ts | 2 | 2 | 0.850 | 0.950 | 0.925 | 0.925 |" in text
    assert "| col | ts | 3 | 2 | 0.950 | 0.950 | 0.950 | 0.958 |" in text
    assert "| col | ts | ts-1 | 3 | 2 | 2 | 2 |" in text  # first checkpoint with TMR ≥ 0.85 from then on
    # seeds: one pair per reward; ts TMR falls 0.5 → 0.3 → 0.2
    assert "| col | ts | 3 | 1 | 0.200 | 0.800 | 0.650 | 0.633 |" in text
    # reward models: four ts-iq pairs, mean with its interval over pairs
    assert re.search(r"\| col \| 3 \| ts-iq \| 4 \| 0\.438 \[0\.\d{3}, 0\.\d{3}\] \|", text)
    assert "| seed pairs (col) | 1 | 24 | 0.667 |" in text
    assert "| CER | 0.781 | 0.760 | 1.000 | 0.973 |" in text
    assert "| col | chance (random vs trained) | 1 | 0.000 | 0.000 | 0.000 | 0.000 |" in text
    assert "| ts | 3 | 2 | 0.930 [" in text  # performance: mean success rate of 0.95 and 0.91
    assert "| cer | `cer\\|levenshtein:x\\|clip:no` |" in text
    assert '"training": [' in text and '"runs_per_reward": 2' in text and '"converged_tmr": 0.85' in text
    assert "![Convergence curves]" not in text  # no figures were given


def test_report_states_findings_with_numbers(tables):
    text = report.build_report(tables, META)
    findings = [line for line in text.splitlines() if line.startswith("- (")]
    assert len(findings) == 5
    assert findings[0].startswith("- (1) Policies converge") and "**Holds:**" in findings[0]
    assert "0.850 (gen/ts, k=3" in findings[0] and "needs ≥ 0.85" in findings[0]  # threshold from meta
    assert "**Holds:** final-checkpoint seed-pair TMR vs convergence TMR: 0.200 vs 0.950 (col/ts)" in findings[1]
    assert "DMR 0.800 vs TMR 0.200 (col/ts)" in findings[2]
    assert "r = 0.973, MSE = 0.003 (n = 560)" in findings[3]
    assert "**Does not hold:**" in findings[4] and "dmr: gen 0.964 vs col 0.964" in findings[4]
    default = report.build_report(tables, {k: v for k, v in META.items() if k != "findings"})
    assert "needs ≥ 0.9 " in default and "(1) Policies converge" in default


def test_report_skips_absent_tables(tables):
    text = report.build_report({"convergence": tables["convergence"], "seeds": tables["seeds"].iloc[:0]}, {})
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["Findings", "Convergence (paper's Table 2)", "Measure signatures", "Reproducibility"]
    assert "**Not assessed:** no correlation table" in text
    assert "No signatures were recorded." in text


def test_rebuild_from_saved_tables_gives_the_same_report(tables, tmp_path):
    small = _small(tables)
    report.save_tables(tmp_path, small, META)
    expected_figures = {name: tmp_path / "figures" / f"{name}.png" for name in report.TABLE_NAMES}
    expected = report.build_report(small, META, figures=expected_figures, base=tmp_path)

    parser = argparse.ArgumentParser()
    report.add_subcommands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", str(tmp_path)])
    assert args.func(args) == 0  # `simscore report DIR`

    text = (tmp_path / "report.md").read_text()
    assert text == expected
    links = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert links == [f"figures/{name}.png" for name in report.TABLE_NAMES]
    for link in links:
        assert (tmp_path / link).read_bytes()[:4] == b"\x89PNG"
    for table in re.findall(r"\[(\w+)\]\((\w+)\.csv\)", text):
        assert (tmp_path / f"{table[1]}.csv").is_file()
    assert not [p for p in tmp_path.rglob("*.tmp")]

    # written from memory with the same figures: identical text
    again = report.write_report(tmp_path, small, META, figures=expected_figures)
    assert again.read_text() == expected


def test_write_report_checks_given_figures(tables, tmp_path):
    with pytest.raises(FileNotFoundError, match="convergence.png"):
        report.write_report(tmp_path, tables, META, figures={"convergence": tmp_path / "convergence.png"})
    assert not (tmp_path / "report.md").exists()


def test_collect_versions():
    versions = report.collect_versions()
    assert versions["numpy"] == np.__version__
    assert versions["pandas"] == pd.__version__
    assert set(versions) >= {"simscore", "matplotlib", "sacrebleu", "bert-score"}
