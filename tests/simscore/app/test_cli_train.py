"""simscore.app.cli_train: ``simscore train`` trains, resumes and rejects bad arguments."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from policies.gpsarsa_policy import GPSarsaPolicy
from policies.training import (
    TrainingConfigMismatchError,
    list_checkpoints,
    load_checkpoint,
)
from simscore.app.cli_train import add_subcommands


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
        ["train", "--reward", "ts", "--seed", "-1", "--out", "x"],
        ["train", "--reward", "ts", "--seed", "1", "--every", "0", "--out", "x"],
        ["train", "--reward", "ts", "--seed", "1"],
    ],
)
def test_cli_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _run(argv)
    assert "error" in capsys.readouterr().err
