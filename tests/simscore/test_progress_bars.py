"""Progress bars are drawn only where stderr is a terminal: a log file gets no carriage returns."""

from __future__ import annotations

import io

from contexts import generate_grid
from contexts.generate import GridSpec
from policies import HandcraftedPolicy, SummaryPolicyAdapter, run_dialogues
from policies.gpsarsa import TrainingConfig, train
from simscore import run_policy
from simscore.parallel import run_jobs


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_bar_when_stderr_is_not_a_terminal(capsys, tmp_path):
    run_jobs(pow, [(2, 3), (3, 2)], n_jobs=1, progress=True)
    grid = generate_grid(GridSpec(levels=(0.0, 1.0)))
    run_policy(SummaryPolicyAdapter(HandcraftedPolicy()), grid, progress=True)
    run_dialogues(HandcraftedPolicy(), 3, seed=0, progress=True)
    train(TrainingConfig(reward="ts", seed=3, dialogues=20, every=10, eval_dialogues=5), tmp_path / "run", progress=True)
    assert capsys.readouterr().err == ""


def test_a_terminal_gets_the_bar(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    run_jobs(pow, [(2, 3), (3, 2)], n_jobs=1, progress=True, desc="powers")
    assert "powers" in terminal.getvalue() and "\r" in terminal.getvalue()
