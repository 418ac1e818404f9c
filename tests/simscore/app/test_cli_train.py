"""simscore.app.cli.train: ``simscore train`` trains, resumes and rejects bad arguments."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from policies.gpsarsa.policy import GPSarsaPolicy
from policies.gpsarsa.training import (
    TrainingConfig,
    TrainingConfigMismatchError,
    list_checkpoints,
    load_checkpoint,
)
from simscore.app.cli.train import _FIELDS, add_subcommands
from simscore.errors import ConfigError


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_subcommands(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_train_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["train", "--reward", "iq", "--seed", "1", "--dialogues", "30", "--every", "15", "--eval", "10",
            "--out", str(out), "--quiet"]
    assert _run(argv) == 0
    printed = capsys.readouterr().out
    assert "ckpt-000030 (30 dialogues)" in printed and len(printed.splitlines()) == 4
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["reward"] == "iq" and info["config"]["eval_dialogues"] == 10
    assert [c.dialogues for c in list_checkpoints(out)] == [15, 30]
    assert _run(argv[:6] + ["45"] + argv[7:]) == 0
    assert "resumed" in capsys.readouterr().out and list_checkpoints(out)[-1].dialogues == 45
    assert isinstance(load_checkpoint(out), GPSarsaPolicy)
    with pytest.raises(TrainingConfigMismatchError, match="sigma"):
        _run(argv + ["--sigma", "2"])


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--reward", "bleu", "--seed", "1", "--out", "x"],
        ["train", "--reward", "ts", "--seed", "1"],
        ["train", "--reward", "ts", "--seed", "1e9", "--out", "x"],
        ["train", "--reward", "ts", "--seed", "-1", "--out", "x"],
    ],
)
def test_cli_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _run(argv)
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--seed", "1", "--every", "0"], "every must be"),
        (["--seed", "1", "--dialogues", "99999999999999999999", "--every", "1"], "dialogues must be <= 100,000,000"),
        (["--seed", "1", "--dialogues", "100000000", "--every", "1"], "checkpoint less often"),
        (["--seed", "1", "--eval-scale", "-1"], "eval_scale must be"),
    ],
)
def test_cli_config_errors_are_named_before_any_work(tmp_path: Path, extra: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _run(["train", "--reward", "ts", *extra, "--out", str(tmp_path / "run")])
    assert not (tmp_path / "run").exists()


def test_cli_defaults_are_the_training_config_defaults() -> None:
    parser = argparse.ArgumentParser()
    add_subcommands(parser.add_subparsers())
    args = parser.parse_args(["train", "--reward", "ts", "--seed", "0", "--out", "x"])
    assert [getattr(args, option) for option in _FIELDS if option not in ("reward", "seed")] == [None] * 11
    defaults = TrainingConfig()
    train_parser = parser._subparsers._group_actions[0].choices["train"]  # the help text names the defaults
    for action in train_parser._actions:
        found = re.search(r"\(default (\S+?)[,)]", action.help or "")
        if found:
            assert float(found.group(1)) == float(getattr(defaults, _FIELDS[action.dest])), action.dest


def test_help_is_plain_text_without_markup_or_internal_notes(capsys):
    from simscore.app.cli import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert "Train one GP-SARSA run (a reward model and a seed)" in text and "DIR/evaluation.csv" in text
    for markup in ("``", ":mod:", ":class:", "imported only"):
        assert markup not in text
