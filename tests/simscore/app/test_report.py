"""simscore.app.report: the Markdown report of an experiment, and rebuilding it from saved tables."""

from __future__ import annotations

import argparse
import re

import pytest

from simscore import tables_io
from simscore.app import report
from tests.simscore.synthetic import META, synthetic_tables
from tests.simscore.synthetic import col_only as _small


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()


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
    assert len(findings) == 11
    assert findings[0].startswith("- (1) Policies converge") and "**Holds:**" in findings[0]  # gen/ts 0.85
    assert "col/ts: holds, ours late TMR 0.950" in findings[0]
    assert "late TMR ≥ 0.85 (partly ≥ 0.8)" in findings[0]  # threshold from meta
    assert "col/ts: holds, ours seed-pair TMR 0.200, convergence TMR 0.950" in findings[2]
    assert "**Not assessed:** no first_turn table." in findings[5]
    default = report.build_report(tables, {k: v for k, v in META.items() if k != "findings"})
    assert "late TMR ≥ 0.9 (partly ≥ 0.8)" in default


def test_report_skips_absent_tables(tables):
    text = report.build_report({"convergence": tables["convergence"], "seeds": tables["seeds"].iloc[:0]}, {})
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["Findings", "Convergence (paper's Table 2)", "Measure signatures", "Reproducibility"]
    assert "**Not assessed:** no correlation table" in text
    assert "No signatures were recorded." in text


def test_rebuild_from_saved_tables_gives_the_same_report(tables, tmp_path):
    small = _small(tables)
    tables_io.save_tables(tmp_path, small, META)
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


