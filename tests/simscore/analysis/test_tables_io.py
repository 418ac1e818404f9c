"""simscore.analysis.tables_io: saved tables round-trip with their dtypes; Markdown tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simscore import analysis as an
from simscore.analysis import tables_io
from simscore.errors import FileFormatError
from tests.simscore.synthetic import META, synthetic_tables


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()


# ----------------------------------------------------------------------------- saving and loading


def test_save_and_load_round_trip(tables, tmp_path):
    extra = dict(tables)
    extra["stability"] = an.stability_table(tables["convergence"], threshold=0.95)  # nullable ints
    extra["notes"] = pd.DataFrame({"what": ["a|b", "c"], "value": [1.5, np.nan], "flag": [True, False]})
    written = tables_io.save_tables(tmp_path, extra, META)
    assert set(written) == set(extra)
    loaded = tables_io.load_tables(tmp_path)
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
        tables_io.save_tables(tmp_path, {"../x": tables["seeds"]})
    with pytest.raises(ValueError, match="plain file stem"):
        tables_io.save_tables(tmp_path, {"tables": tables["seeds"]})
    with pytest.raises(ValueError, match=r"tables\['seeds'\] lacks column\(s\) run_a, run_b"):
        tables_io.save_tables(tmp_path, {"seeds": tables["seeds"].drop(columns=["run_a", "run_b"])})
    with pytest.raises(ValueError, match="meta must be JSON-serialisable"):
        tables_io.save_tables(tmp_path, {"seeds": tables["seeds"]}, {"when": object()})
    assert not list(tmp_path.iterdir())  # validation happens before anything is written


def test_load_tables_names_the_bad_file(tables, tmp_path):
    with pytest.raises(FileFormatError, match="not a directory"):
        tables_io.load_tables(tmp_path / "missing")
    with pytest.raises(FileFormatError, match=r"tables\.json: file not found"):
        tables_io.load_tables(tmp_path)
    tables_io.save_tables(tmp_path, {"seeds": tables["seeds"], "chance": tables["chance"]}, META)
    (tmp_path / "chance.json").write_text('{"format": "simscore-table", "version": 1, "records": [')
    with pytest.raises(FileFormatError, match=r"chance\.json, line 1: invalid JSON"):
        tables_io.load_tables(tmp_path)
    (tmp_path / "chance.json").write_text('{"format": "simscore-table", "version": 7}')
    with pytest.raises(FileFormatError, match="unsupported format version 7"):
        tables_io.load_tables(tmp_path)
    (tmp_path / "chance.json").unlink()
    with pytest.raises(FileFormatError, match=r"chance\.json: file not found"):
        tables_io.load_tables(tmp_path)
    broken = json.loads((tmp_path / "seeds.json").read_text())
    broken["columns"] = broken["columns"][:-1]
    broken["records"] = [r[:-1] for r in broken["records"]]
    (tmp_path / "seeds.json").write_text(json.dumps(broken))
    index = {"format": "simscore-tables", "version": 1, "tables": ["seeds"]}
    (tmp_path / "tables.json").write_text(json.dumps(index))
    with pytest.raises(FileFormatError, match=r"seeds\.json: table 'seeds' lacks column\(s\) missing"):
        tables_io.load_tables(tmp_path)


# ----------------------------------------------------------------------------- Markdown


def test_markdown_table_formatting():
    frame = pd.DataFrame({"name": ["a|b", ""], "mean": [0.12345, np.nan], "n": [3, 4]})
    assert tables_io.markdown_table(frame).splitlines() == [
        "| name | mean | n |",
        "|---|---:|---:|",
        "| a\\|b | 0.123 | 3 |",
        "| — | — | 4 |",
    ]
    assert "| 0.1 |" in tables_io.markdown_table(frame.iloc[:1], digits=1)



def test_collect_versions():
    versions = tables_io.collect_versions()
    assert versions["numpy"] == np.__version__
    assert versions["pandas"] == pd.__version__
    assert set(versions) >= {"simscore", "matplotlib", "sacrebleu", "bert-score"}


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("mean", 5.0, r"row 1: mean = 5.0 is outside tmr's range \[0, 1\]"),
        ("ci_low", -0.5, r"row 1: ci_low = -0.5 is outside tmr's range \[0, 1\]"),
        ("count", -1, r"row 1: count = -1.0 is outside its range \[0, ∞\]"),
    ],
)
def test_load_refuses_values_out_of_range(tmp_path: Path, column: str, value: float, message: str) -> None:
    frame = pd.DataFrame(
        {"measure": ["cer", "tmr"], "mean": [-3.0, 0.5], "ci_low": [-4.0, 0.4], "ci_high": [1.0, 0.6], "count": [3, 3]}
    )
    tables_io.save_tables(tmp_path, {"scores": frame}, {})
    tables_io.load_tables(tmp_path)  # a negative CER is in its range
    path = tmp_path / "scores.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["records"][1][list(frame.columns).index(column)] = value
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FileFormatError, match=message):
        tables_io.load_tables(tmp_path)


def test_tables_saved_with_other_settings_are_refused(tables, tmp_path):
    """A run that replaces the tables with other settings and stops half-way leaves a mixed folder."""
    tables_io.save_tables(tmp_path, tables, META)
    other = {**META, "bootstrap": {"n_resamples": 50, "seed": 1}}
    partial = tmp_path / "partial"
    tables_io.save_tables(partial, {n: tables[n] for n in ("seeds", "chance")}, other)
    for name in ("seeds", "chance"):
        (partial / f"{name}.json").replace(tmp_path / f"{name}.json")
    with pytest.raises(FileFormatError, match=r"tables.json: tables made with other settings than this index: "
                                              r"seeds, chance \(other bootstrap\)\. A run that replaces the tables "
                                              r"stopped before it finished: run it again"):
        tables_io.load_tables(tmp_path)
    tables_io.save_tables(tmp_path, tables, other)  # the run finished: consistent again
    assert tables_io.load_tables(tmp_path).meta["bootstrap"] == {"n_resamples": 50, "seed": 1}


@pytest.mark.parametrize(
    ("column", "index", "value", "message"),
    [
        ("count", 9, 1.5, r"column 'count', record 0: expected an integer \(int column\), got 1.5"),
        ("count", 9, True, r"column 'count', record 0: expected an integer \(int column\), got true"),
        ("mean", 6, "0.5", r"column 'mean', record 0: expected a number or null \(float column\), got \"0.5\""),
        ("run_a", 3, 7, r"column 'run_a', record 0: expected a string \(str column\), got 7"),
    ],
)
def test_a_value_of_another_type_is_refused_not_converted(tables, tmp_path, column, index, value, message):
    # numpy would read 1.5 into an int column as 1 (silently), and true as 1
    tables_io.save_tables(tmp_path, {"seeds": tables["seeds"]}, META)
    document = json.loads((tmp_path / "seeds.json").read_text())
    assert document["columns"][index] == column
    document["records"][0][index] = value
    (tmp_path / "seeds.json").write_text(json.dumps(document))
    with pytest.raises(FileFormatError, match=message):
        tables_io.load_tables(tmp_path)


def test_a_version_true_and_deep_nesting_are_refused(tables, tmp_path):
    tables_io.save_tables(tmp_path, {"seeds": tables["seeds"]}, META)
    index = json.loads((tmp_path / "tables.json").read_text())
    (tmp_path / "tables.json").write_text(json.dumps({**index, "version": True}))
    with pytest.raises(FileFormatError, match="unsupported format version true"):
        tables_io.load_tables(tmp_path)
    (tmp_path / "tables.json").write_text('{"format": "simscore-tables", "tables": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(FileFormatError, match=r"tables\.json, line 1: arrays and objects nested deeper than 64 levels"):
        tables_io.load_tables(tmp_path)


def test_tables_are_inert_in_csv_and_markdown(tables, tmp_path):
    seeds = tables["seeds"].copy()
    seeds.loc[0, "run_a"] = '=HYPERLINK("http://x")'
    tables_io.save_tables(tmp_path, {"seeds": seeds}, META)
    assert ",\"'=HYPERLINK(\"\"http://x\"\")\"," in (tmp_path / "seeds.csv").read_text()
    assert tables_io.load_tables(tmp_path).tables["seeds"].loc[0, "run_a"] == '=HYPERLINK("http://x")'  # JSON: exact
    cells = pd.DataFrame({"name": ["<script>alert(1)</script>", "[x](http://evil)", "a\nb|c", "TMR < 1 [0, 1]"]})
    assert tables_io.markdown_table(cells).splitlines()[2:] == [
        "| &lt;script>alert(1)&lt;/script> |", "| [x]\\(http://evil) |", "| a b\\|c |", "| TMR < 1 [0, 1] |",
    ]


def test_a_table_name_too_long_for_a_file_is_a_format_error(tables, tmp_path):
    # found by the deep fuzz run: a 4,000-character name was an OSError (file name too long)
    tables_io.save_tables(tmp_path, {"seeds": tables["seeds"]}, META)
    index = json.loads((tmp_path / "tables.json").read_text())
    (tmp_path / "tables.json").write_text(json.dumps({**index, "tables": ["x" * 4000]}))
    with pytest.raises(FileFormatError, match=r"bad table name 'xxx.*\.\.\. \(4,000 characters\) \(a plain file stem of at most 200"):
        tables_io.load_tables(tmp_path)
    with pytest.raises(ValueError, match="at most 200"):
        tables_io.save_tables(tmp_path / "other", {"x" * 201: tables["seeds"]}, META)
