"""Embedding progress bars: shown by compare(), score() and ``simscore compare`` on a terminal
when embedding takes a while; never in a log file, never with ``--quiet`` / ``progress=False``,
never from a measure called directly."""

from __future__ import annotations

import io
import sys

import pytest

import simscore.measures._progress as progress
from simscore import Response, Responses, compare, score
from simscore.app.cli import main
from simscore.measures._encoders import UsemEncoder
from simscore.measures.bertscore import BertScore
from simscore.measures.use import UseCosine
from simscore.stats import Bootstrap
from tests.simscore.measures.corpus import MANY

#: the models of the text extra: skipped, naming it, in an install without it
pytestmark = pytest.mark.extra("text")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _terminal(monkeypatch, *, delay: float = 0.0) -> _Terminal:
    """stderr as a terminal, and bars shown after ``delay`` (called inside a test: pytest's
    capture puts its own stderr back between a fixture's setup and the test)."""
    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setattr(progress, "PROGRESS_DELAY", delay)
    return screen


def _responses(texts: list[str], name: str) -> Responses:
    return Responses({f"c{i}": Response(text=t) for i, t in enumerate(texts)}, policy=name)


A, B = _responses(MANY[:30], "a"), _responses(MANY[30:60], "b")


def test_compare_shows_a_bar_while_embedding_on_a_terminal(monkeypatch):
    terminal = _terminal(monkeypatch)
    compare(A, B, measures=[BertScore()], bootstrap=Bootstrap(n_resamples=0))
    assert "bertscore: embedding" in terminal.getvalue() and "60/60" in terminal.getvalue()


def test_no_bar_when_asked_not_to_or_not_on_a_terminal(monkeypatch):
    terminal = _terminal(monkeypatch)
    compare(A, B, measures=[BertScore()], bootstrap=Bootstrap(n_resamples=0), progress=False)
    assert terminal.getvalue() == ""
    BertScore().score_pairs(MANY[:5], MANY[5:10])  # a measure called directly
    assert terminal.getvalue() == ""
    log = io.StringIO()  # a file, not a terminal
    monkeypatch.setattr(sys, "stderr", log)
    compare(A, B, measures=[BertScore()], bootstrap=Bootstrap(n_resamples=0))
    assert log.getvalue() == ""


@pytest.mark.slow
def test_score_passes_the_setting_on(monkeypatch):
    terminal = _terminal(monkeypatch)
    score(MANY[:20], MANY[20:40], measures=[UseCosine(encoder=UsemEncoder(threads=1))], n_resamples=0)
    assert "use: embedding" in terminal.getvalue()
    terminal.seek(0), terminal.truncate()
    score(MANY[:20], MANY[20:40], measures=[UseCosine(encoder=UsemEncoder(threads=1))], n_resamples=0,
          progress=False)
    assert terminal.getvalue() == ""


def test_the_default_delay_keeps_quick_calls_silent(monkeypatch):
    assert progress.PROGRESS_DELAY == 1.0
    screen = _terminal(monkeypatch, delay=1.0)
    compare(A, B, measures=[UseCosine(encoder=UsemEncoder(threads=1))], bootstrap=Bootstrap(n_resamples=0))
    assert screen.getvalue() == ""  # 60 texts embed in well under a second


@pytest.mark.slow
def test_cli_compare_bar_and_quiet(tmp_path, monkeypatch, capsys):
    terminal = _terminal(monkeypatch)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    A.to_jsonl(a), B.to_jsonl(b)
    assert main(["compare", str(a), str(b), "--measures", "use_cos", "--resamples", "10",
                 "--measure-option", "use_cos.threads=1"]) == 0
    assert "use: embedding" in terminal.getvalue()
    terminal.seek(0), terminal.truncate()
    assert main(["compare", str(a), str(b), "--measures", "use_cos", "--resamples", "10", "--quiet",
                 "--measure-option", "use_cos.threads=1"]) == 0
    assert terminal.getvalue() == ""
