"""The simscore command line, end to end on the shipped example files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simscore.app.cli import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
A = str(EXAMPLES / "responses_a.jsonl")
B = str(EXAMPLES / "responses_b.jsonl")


def test_compare_action_measures_prints_summary(capsys, tmp_path):
    out = tmp_path / "scores.json"
    assert main(["compare", A, B, "--measures", "tmr,dmr,cer,cmr", "--out", str(out), "--signatures"]) == 0
    printed = capsys.readouterr().out
    assert "gpsarsa-ts-seed1  vs  gpsarsa-iq-seed1  (24 contexts)" in printed
    assert "tmr" in printed and "95% CI" in printed and "cer|levenshtein" in printed
    data = json.loads(out.read_text())
    assert set(data["summary"]) == {"tmr", "dmr", "cer", "cmr"}
    assert len(data["scores"]) == 24
    # the example files differ in 7 of 24 actions, 2 of them with another intent
    assert data["summary"]["tmr"]["mean"] == pytest.approx(17 / 24)
    assert data["summary"]["dmr"]["mean"] == pytest.approx(22 / 24)


@pytest.mark.slow
def test_compare_all_measures_csv(capsys, tmp_path):
    out = tmp_path / "scores.csv"
    assert main(["compare", A, B, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name in ("tmr", "dmr", "cer", "cmr", "use_cos", "use_ang", "bleu4", "bertscore"):
        assert f"\n{name} " in printed
    header = out.read_text().splitlines()[0]
    assert header == "context_id,tmr,dmr,cer,cmr,use_cos,use_ang,bleu4,bertscore"


def test_unknown_measure_did_you_mean(capsys):
    assert main(["compare", A, B, "--measures", "blue4"]) == 2
    err = capsys.readouterr().err
    assert "unknown measure 'blue4'; did you mean 'bleu4'?" in err


def test_bad_files(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "simscore-responses", "version": 1}\n{"context_id": "x", "action": "inform("}\n')
    assert main(["compare", str(bad), B, "--measures", "tmr"]) == 2
    assert "bad.jsonl, line 2" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.jsonl"), B, "--measures", "tmr"]) == 2
    assert "file not found" in capsys.readouterr().err
    other = tmp_path / "other.jsonl"
    other.write_text('{"format": "simscore-responses", "version": 1}\n{"context_id": "x", "text": "hi"}\n')
    assert main(["compare", other.as_posix(), B, "--measures", "tmr"]) == 2
    assert "responses cover different contexts" in capsys.readouterr().err
    assert main(["compare", A, B, "--measures", "tmr", "--out", str(tmp_path / "x.txt")]) == 2
    assert ".csv or .json" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["compare", A])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["frobnicate"])


def test_experiment_commands_record_the_command_line(monkeypatch, tmp_path):
    from simscore.app import experiment

    seen = {}

    def fake_run(config, out, **kwargs):
        seen.update(config=config, out=out, **kwargs)
        return Path(out) / "report.md"

    monkeypatch.setattr(experiment, "run_experiment", fake_run)
    assert main(["demo", "--out", str(tmp_path / "my demo"), "--jobs", "2", "--quiet"]) == 0
    assert seen["command"] == f"simscore demo --out '{tmp_path / 'my demo'}'"  # quoted for a shell
    assert seen["config"] == experiment.DEMO_CONFIG and seen["n_jobs"] == 2
    assert main(["run", str(EXAMPLES / "paper.toml")]) == 0
    assert seen["command"] == f"simscore run {EXAMPLES / 'paper.toml'} --out simscore-paper"
