"""One progress mechanism: a bar on a terminal, a log line at least every interval of a long step elsewhere."""

from __future__ import annotations

import io
import itertools
import logging
import time

import pytest

import simscore.progress as progress_module
from policies.gpsarsa import TrainingConfig, train
from simscore.parallel import run_jobs
from simscore.progress import Progress, format_elapsed, track


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _ticks(step: float = 65.0):
    """A clock that moves ``step`` seconds each time it is read: the elapsed times are known exactly."""
    counter = itertools.count()
    return lambda: step * next(counter)


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "simscore.progress"]


def test_a_short_step_logs_nothing(caplog):
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        with Progress(3, "quick", unit="things", stream=io.StringIO()) as bar:  # the default minute
            bar.update(3)
        assert list(track(range(5), "quick", stream=io.StringIO())) == [0, 1, 2, 3, 4]
    assert _lines(caplog) == []


def test_a_long_step_logs_what_how_far_and_how_long(caplog):
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        with Progress(30, "training", unit="runs", interval=0.05, clock=_ticks(), stream=io.StringIO()) as bar:
            bar.update(12)
            deadline = time.monotonic() + 30
            while not _lines(caplog) and time.monotonic() < deadline:
                time.sleep(0.01)
            bar.set_postfix_str("success 0.8")
            while len(_lines(caplog)) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
    lines = _lines(caplog)
    # the clock read 0 at the start and 65 s more at each line
    assert lines[0] == "training: 12/30 runs done, 1m05s"
    assert lines[1] == "training: 12/30 runs done (success 0.8), 2m10s"


def test_format_elapsed():
    assert [format_elapsed(s) for s in (0, 59.9, 60, 130, 3600, 3725.5)] == \
        ["0s", "59s", "1m00s", "2m10s", "1h00m00s", "1h02m05s"]


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_a_real_step_whose_units_take_long_reports_between_them(caplog, monkeypatch):
    """One job of run_jobs outlasts several intervals: lines come anyway, from the step's own thread."""
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.1)
    monkeypatch.setattr(progress_module, "CLOCK", _ticks(30.0))
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        assert run_jobs(_sleep, [(0.05,), (0.6,)], n_jobs=1, desc="training", unit="runs") == [0.05, 0.6]
    lines = _lines(caplog)
    assert len(lines) >= 2, lines
    assert lines[0].startswith("training: ") and lines[0].endswith(", 30s")
    assert lines[1].endswith(", 1m00s")
    assert set(lines) <= {f"training: {n}/2 runs done, {format_elapsed(30 * k)}" for n in (0, 1) for k in range(1, 99)}
    assert any(line.startswith("training: 1/2 runs done") for line in lines)  # during the long job


def test_training_away_from_a_terminal_logs_its_dialogues(caplog, monkeypatch, tmp_path):
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.2)
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        train(TrainingConfig(reward="ts", seed=3, dialogues=400, every=200, eval_dialogues=5), tmp_path / "run",
              progress=True)
    lines = _lines(caplog)
    assert lines, "training took longer than 0.2 s and logged nothing"
    assert all(line.startswith("training gpsarsa ts seed 3: ") and "/400 dialogues done" in line for line in lines)


def test_a_terminal_gets_a_bar_and_no_log_lines(caplog):
    terminal = _Terminal()
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        with Progress(4, "powers", unit="jobs", interval=0.01, stream=terminal) as bar:
            time.sleep(0.05)
            bar.update(4)
    assert "powers" in terminal.getvalue() and "4/4" in terminal.getvalue()
    assert _lines(caplog) == []


def test_nothing_when_asked_for_nothing(caplog):
    terminal = _Terminal()
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        with Progress(4, "quiet", interval=0.01, stream=terminal, enabled=False) as bar:
            time.sleep(0.05)
            bar.update(4)
    assert terminal.getvalue() == "" and _lines(caplog) == []


@pytest.mark.parametrize("unit", ["runs", "texts"])
def test_a_terminal_bar_counts_in_the_singular_unit(unit):
    terminal = _Terminal()
    with Progress(2, "x", unit=unit, stream=terminal) as bar:
        bar.update(2)
    assert f"{unit[:-1]}/s" in terminal.getvalue()
