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


def _wait_for_line(caplog, seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while not _lines(caplog) and time.monotonic() < deadline:
        time.sleep(0.01)
    return _lines(caplog)


def test_a_step_after_a_recent_line_shares_its_minute(caplog):
    """The last line went out 29.8 s ago: a step with a 30 s interval says where it is within a moment,
    not 30 s after its own start -- two quiet steps in a row are never silent for two minutes."""
    progress_module.LAST_LINE.at = time.monotonic() - 29.8
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        with Progress(5, "scoring", unit="pairs", interval=30.0, clock=_ticks(), stream=io.StringIO()) as bar:
            bar.update(2)
            lines = _wait_for_line(caplog, 20.0)  # far less than the step's own 30 s
    assert lines[:1] == ["scoring: 2/5 pairs done, 1m05s"]
    assert progress_module.LAST_LINE.at is not None and time.monotonic() - progress_module.LAST_LINE.at < 25


@pytest.mark.parametrize("silence", [None, 31.0, 1000.0])
def test_a_step_after_a_long_silence_keeps_its_own_minute(caplog, silence):
    """No line yet, or the last one longer than an interval ago: a short step stays silent."""
    progress_module.LAST_LINE.at = None if silence is None else time.monotonic() - silence
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        with Progress(5, "scoring", unit="pairs", interval=30.0, stream=io.StringIO()) as bar:
            time.sleep(0.3)
            bar.update(5)
    assert _lines(caplog) == []


def test_a_handler_with_a_line_clock_marks_the_last_line():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(progress_module.LineClock())
    log = logging.getLogger("simscore.test_line_clock")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        log.debug("below the level: no line")
        assert progress_module.LAST_LINE.at is None
        before = time.monotonic()
        log.info("training: 6 runs trained")
    finally:
        log.removeHandler(handler)
    assert stream.getvalue() == "training: 6 runs trained\n"  # let through, unchanged
    assert before <= progress_module.LAST_LINE.at <= time.monotonic()


def test_the_command_line_and_the_run_log_carry_a_line_clock(tmp_path, monkeypatch):
    from simscore.app.cli import _console_log
    from simscore.app.runner import _run_log

    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # as in a bare process (pytest's own left out)
    stream = io.StringIO()
    with _console_log(logging.INFO, stream), _run_log(tmp_path / "run.log"):
        handlers = logging.getLogger("simscore").handlers
        assert len(handlers) == 2
        assert all(any(isinstance(f, progress_module.LineClock) for f in h.filters) for h in handlers)
        logging.getLogger("simscore.app.experiment").info("contexts: 0.7 s")
    assert progress_module.LAST_LINE.at is not None
    assert "contexts: 0.7 s" in stream.getvalue() and "contexts: 0.7 s" in (tmp_path / "run.log").read_text()


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
