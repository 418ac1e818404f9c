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


# -- response formats and outputs ---------------------------------------------------------------


def _as_csv(tmp_path, source, name):
    from simscore import Responses
    from simscore.responses_csv import write_responses_csv

    path = tmp_path / name
    write_responses_csv(path, Responses.read_jsonl(source))
    return str(path)


def test_compare_reads_csv_logs(capsys, tmp_path):
    a_csv, b_csv = _as_csv(tmp_path, A, "a.csv"), _as_csv(tmp_path, B, "b.csv")
    assert main(["compare", a_csv, b_csv, "--measures", "tmr,dmr", "--score-only"]) == 0
    from_csv = capsys.readouterr().out
    assert from_csv == f"{17 / 24!r}\n{22 / 24!r}\n"
    # CSV against JSON Lines, and a CSV log without a telling suffix (detected by content)
    plain = tmp_path / "b_log"
    plain.write_text((tmp_path / "b.csv").read_text())
    assert main(["compare", A, str(plain), "--measures", "tmr,dmr", "--score-only"]) == 0
    assert capsys.readouterr().out == from_csv
    assert main(["compare", a_csv, b_csv, "--measures", "tmr"]) == 0
    assert capsys.readouterr().out.startswith("a  vs  b  (24 contexts)\nmeasure ")  # CSV: the file stem names the policy


def test_compare_json_on_stdout(capsys):
    assert main(["compare", A, B, "--measures", "tmr,cer", "--out", "-"]) == 0
    data = json.loads(capsys.readouterr().out)  # nothing but JSON on stdout
    assert data["a"] == "gpsarsa-ts-seed1" and data["b"] == "gpsarsa-iq-seed1"
    assert set(data["signatures"]) == {"tmr", "cer"} and data["signatures"]["cer"].startswith("cer|levenshtein")
    assert data["summary"]["tmr"]["mean"] == pytest.approx(17 / 24)
    assert len(data["scores"]) == 24 and set(data["scores"][0]) == {"context_id", "tmr", "cer"}
    assert main(["compare", A, B, "--measures", "tmr", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["signatures"] == {"tmr": data["signatures"]["tmr"]}


def test_compare_csv_and_text_formats(capsys, tmp_path):
    assert main(["compare", A, B, "--measures", "tmr,dmr", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "context_id,tmr,dmr" and len(lines) == 25
    assert main(["compare", A, B, "--measures", "tmr,dmr", "--out", "-", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == lines
    assert main(["compare", A, B, "--measures", "tmr", "--format", "text", "--signatures"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("gpsarsa-ts-seed1  vs  gpsarsa-iq-seed1  (24 contexts)\nmeasure ")
    assert "\ntmr       tmr|" in text
    # a file in any format, whatever its suffix, with the summary still shown
    out = tmp_path / "summary.txt"
    assert main(["compare", A, B, "--measures", "tmr", "--out", str(out), "--format", "text"]) == 0
    assert out.read_text().startswith("gpsarsa-ts-seed1  vs  gpsarsa-iq-seed1")
    assert capsys.readouterr().out.endswith(f"wrote {out}\n")
    scores = tmp_path / "scores.dat"
    assert main(["compare", A, B, "--measures", "tmr", "--out", str(scores), "--format", "csv", "--score-only"]) == 0
    assert capsys.readouterr().out == f"{17 / 24!r}\n"  # only the number, though a file was written too
    assert scores.read_text().splitlines()[0] == "context_id,tmr"


def test_compare_output_flag_conflicts(capsys):
    for argv, fragment in (
        (["--score-only", "--out", "-"], "--score-only prints only the scores on stdout"),
        (["--score-only", "--format", "json"], "cannot be combined with --out - or --format"),
        (["--out", "scores.txt"], "output path must end in .csv or .json (or give --format), got 'scores.txt'"),
    ):
        assert main(["compare", A, B, "--measures", "tmr", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("simscore compare: error: ") and fragment in err
    with pytest.raises(SystemExit) as info:
        main(["compare", A, B, "--format", "yaml"])
    assert info.value.code == 2


def test_score_only_prints_nan_for_undefined_scores(capsys, tmp_path):
    from simscore import Response, Responses

    text_only = tmp_path / "text.jsonl"
    Responses({"c1": Response(text="Hello.")}, policy="t").to_jsonl(text_only)
    with pytest.warns(Warning):
        assert main(["compare", str(text_only), str(text_only), "--measures", "tmr", "--score-only"]) == 0
    assert capsys.readouterr().out == "nan\n"


def test_log_messages_leave_data_on_stdout_alone():
    from simscore.app.cli import _stdout_is_data, build_parser

    def data(*argv):
        return _stdout_is_data(build_parser().parse_args(["compare", A, B, *argv]))

    assert data("--out", "-") and data("--score-only") and data("--format", "json") and data("--format", "csv")
    assert not data() and not data("--format", "text") and not data("--out", "x.json")
    assert not _stdout_is_data(build_parser().parse_args(["report", "x"]))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--jobs", "0"], "argument --jobs: expected a positive integer, got '0'"),
        (["compare", A, B, "--seed", "1.5"], "argument --seed: expected a seed, an integer from 0 to 9223372036854775807, got '1.5'"),
        (["compare", A, B, "--resamples", "-5"], "argument --resamples: expected an integer from 0 to 1,000,000, got '-5'"),
        (["compare", A, B, "--permutations", "0"], "argument --permutations: expected an integer from 1 to 1,000,000, got '0'"),
    ],
)
def test_bad_numbers_are_usage_errors_before_anything_happens(argv, message, tmp_path, capsys):
    out = tmp_path / "folder"
    with pytest.raises(SystemExit):
        main([*argv, "--out", str(out)] if argv[0] == "demo" else argv)
    assert message in capsys.readouterr().err
    assert not out.exists()  # demo --jobs 0 left its folder behind
