"""simscore.app.experiment.record: the run record saved beside the tables, and folders written by earlier versions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simscore.analysis import tables_io
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.record import RunRecord
from simscore.app.experiment.sections import HeldOutConfig
from simscore.app.report import document as report
from simscore.app.report.findings import Thresholds
from simscore.errors import FileFormatError
from simscore.stats import Bootstrap
from tests.simscore.synthetic import col_only, synthetic_tables

#: tables.json of `simscore demo` on main at 2ffcec8 (the record as that version saved it)
MAIN = Path(__file__).parent / "data" / "tables-main-2ffcec8.json"


def test_a_record_saved_by_main_reads_and_writes_back_unchanged():
    index = json.loads(MAIN.read_text(encoding="utf-8"))
    record = RunRecord.from_meta(index["meta"])
    assert record.bootstrap == Bootstrap(n_resamples=1000, confidence=0.95, seed=0)
    assert record.findings == Thresholds() and record.ignored_thresholds == ()
    assert record.command == "simscore demo --out /work/baseline/demo" and not record.started_from_python
    assert record.seeds == {"training": [1, 2, 3], "evaluation": 20200701, "collection": 2000003,
                            "random_policy": 0, "bootstrap": 0}
    # its configuration names an IQ setting this version no longer has: left out, with the reason
    assert record.config is None
    assert record.config_problem == ("the saved configuration: [training.iq] unknown key 'failure' (known: free_turns, "
                                     "per_extra_turn, per_repeat, per_reasked_slot, per_confirmation, "
                                     "per_rejected_offer, per_no_venue, per_user_correction, per_goal_change, "
                                     "per_user_confirm, per_repeated_request, per_unanswered_request, no_offer, "
                                     "hang_up, turn_limit)")
    assert list(record.signatures) == ["tmr", "dmr", "cer", "cmr", "use_cos", "use_ang", "bleu4", "bertscore"]
    again = record.to_meta()
    saved = {key: value for key, value in index["meta"].items() if key != "config"}
    assert json.dumps(again, indent=1) == json.dumps(saved, indent=1)  # same keys, order and values


def test_the_configuration_comes_back_typed():
    config = ExperimentConfig(name="typed", seeds=(4,), collect_dialogues=3, held_out=HeldOutConfig(dialogues=2))
    record = RunRecord.from_meta(RunRecord(config=config).to_meta())
    assert record.config == config and record.config.for_collection.dialogues == 3
    assert record.config_problem is None
    # a value out of range is a problem of the saved configuration, named; the rest of the record reads
    broken = {"title": "t", "config": {**config.to_dict(), "scoring": {"confidence": 2.0}}}
    record = RunRecord.from_meta(broken)
    assert record.config is None and record.title == "t"
    assert "the saved configuration" in record.config_problem and "confidence" in record.config_problem


@pytest.mark.slow
def test_a_folder_saved_by_main_rebuilds_its_report(tmp_path):
    meta = json.loads(MAIN.read_text(encoding="utf-8"))["meta"]
    small = col_only(synthetic_tables())
    tables_io.save_tables(tmp_path, small, meta)
    path = report.rebuild_report(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# simscore experiment 'demo'\n")
    assert "simscore demo --out /work/baseline/demo" in text and "Scored on 2026-11-25 (UTC)" in text
    assert ("The configuration saved with these tables is not one this simscore reads, so it is not shown: the "
            "saved configuration: [training.iq] unknown key 'failure'") in text


def test_the_three_ways_a_run_was_started():
    assert RunRecord.from_meta({}).command_recorded is False
    python = RunRecord.from_meta({"command": None})
    assert python.started_from_python and python.to_meta() == {"command": None}
    cli = RunRecord.from_meta({"command": "simscore run x.toml --out d"})
    assert cli.command == "simscore run x.toml --out d" and not cli.started_from_python
    assert RunRecord().to_meta() == {} and RunRecord.from_meta(None) == RunRecord()


def test_unknown_thresholds_are_kept_by_name_and_defaults_fill_in():
    record = RunRecord.from_meta({"findings": {"converged_tmr": 0.85, "stable_window": 3},
                                  "bootstrap": {"n_resamples": 100, "seed": 0}})
    assert record.findings == Thresholds(converged_tmr=0.85) and record.ignored_thresholds == ("stable_window",)
    assert record.bootstrap_settings == Bootstrap(n_resamples=100)
    assert RunRecord().thresholds == Thresholds() and RunRecord().bootstrap_settings == Bootstrap()


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ([1], "'meta' must be an object"),
        ({"titel": "x"}, "unknown key 'titel' in the run record"),
        ({"title": 3}, "'title' must be a string, got 3"),
        ({"signatures": {"tmr": 1}}, r"signatures\['tmr'\] must be a str"),
        ({"seeds": [1, 2]}, "'seeds' must be an object"),
        ({"bootstrap": {"n_resamples": -1}}, "n_resamples must be >= 0"),
        ({"bootstrap": {"resamples": 10}}, "unknown bootstrap setting"),
        ({"findings": {"late_fraction": 2}}, "late_fraction must be in"),
        ({"command": 5}, "'command' must be a string"),
    ],
)
def test_bad_records_are_named(meta, message):
    with pytest.raises(ValueError, match=message):
        RunRecord.from_meta(meta)


def test_rebuild_names_the_index_of_a_bad_record(tmp_path):
    tables_io.save_tables(tmp_path, col_only(synthetic_tables()), {"bootstrap": {"confidence": 2}})
    with pytest.raises(FileFormatError, match=r"tables.json: meta: bootstrap: confidence must be in \(0, 1\)"):
        report.rebuild_report(tmp_path)


def test_the_report_is_not_rebuilt_from_tables_of_mixed_settings(tmp_path):
    small = col_only(synthetic_tables())
    tables_io.save_tables(tmp_path, small, {"bootstrap": {"n_resamples": 100}})
    (tmp_path / "seeds.json").write_text((tmp_path / "seeds.json").read_text().replace('"n_resamples": 100',
                                                                                        '"n_resamples": 200'))
    with pytest.raises(FileFormatError, match=r"seeds \(other bootstrap\)"):
        report.rebuild_report(tmp_path)
    (tmp_path / "tables.json").unlink()  # a run deletes the index before it replaces the tables
    with pytest.raises(FileFormatError, match="tables.json: missing: this folder holds no complete set of tables"):
        report.rebuild_report(tmp_path)
