"""The stable-baselines3 examples run end to end (slow: each trains a small model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.extra("sb3")

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _run(script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args], capture_output=True, text=True,
                         cwd=ROOT, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("script", ["sb3_ppo_convergence.py", "sb3_maskable_ppo.py"])
def test_training_examples_stop_and_draw_the_curve(script, tmp_path):
    stdout = _run(script, "--out", str(tmp_path), "--eval", "50")
    assert "behaviour converged: stopping at step" in stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    stopped = summary["stopped"]
    assert stopped["stopped_by_callback"] is True
    assert stopped["steps"] < int(summary["config"]["max_steps"])
    history = pd.read_csv(tmp_path / "history.csv")
    assert len(history) >= 3 and history["stable"].iloc[-3:].all()
    assert (tmp_path / "behaviour.png").read_bytes()[:8] == PNG_SIGNATURE
    log = pd.read_csv(tmp_path / "progress.csv")
    assert any(c.startswith("behaviour/") for c in log.columns)


@pytest.mark.slow
@pytest.mark.extra("text")
def test_compare_example_scores_every_pair(tmp_path):
    _run("sb3_compare_policies.py", "--out", str(tmp_path), "--eval", "50")
    table = pd.read_csv(tmp_path / "comparisons.csv")
    assert set(table["measure"]) == {"tmr", "dmr", "cer", "cmr", "use_cos", "use_ang", "bleu4", "bertscore"}
    assert len(table) == 4 * 8 and table["count"].eq(1296).all()
    assert set(pd.read_csv(tmp_path / "performance.csv")["policy"]) == {"maskableppo", "gpsarsa", "handcrafted"}
