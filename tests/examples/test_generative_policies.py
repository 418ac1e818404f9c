"""``examples/generative_policies.py`` end to end with its tiny random model (slow: trains GP-SARSA, loads
the text measures' models)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.extra("text")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_example_compares_prompts_decodings_and_checkpoints(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "generative_policies.py"), "--out", str(tmp_path), "--dialogues", "2",
         "--max-new-tokens", "4"],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("RANDOMLY INITIALISED GPT-2: its texts are noise") == 2
    table = pd.read_csv(tmp_path / "comparisons.csv")
    assert list(table.columns) == ["contexts", "pair", "what", "use_cos", "use_ang", "bleu4", "bertscore"]
    assert list(table["pair"]) == ["lm-A vs lm-B", "lm-A vs lm-C", "gp-1000 vs gp-2000"] * 2
    assert table[["use_cos", "use_ang", "bleu4", "bertscore"]].notna().all().all()
    assert (tmp_path / "lm-C-C_gen.jsonl").is_file() and (tmp_path / "gp-2000-C_col.jsonl").is_file()
