"""benchmarks/bench_demo.py: the demo's profile, run at a tiny size, and its reading of run.log."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_demo.py"

LOG = """\
[2026-12-02 21:00:00,000] experiment 'demo': 6 runs x 5000 dialogues, output /tmp/x
[2026-12-02 21:01:00,000] training: 6 runs trained, 0 had finished, 123.4 s
[2026-12-02 21:01:01,000] contexts: 0.5 s
[2026-12-02 21:01:02,000] responses: 70 new response files, 9.0 s
[2026-12-02 21:02:00,000] text measures: 6548 distinct texts embedded up front, 132.0 s
[2026-12-02 21:02:50,000] behaviour maps (2 context sets, each run's checkpoints on C_col): 6.5 s
[2026-12-02 21:03:00,000] scoring (all comparisons, 8 measures): 168.0 s
[2026-12-02 21:03:01,000] consequences (15 comparisons, 2 continuations per context): 16.2 s
[2026-12-02 21:03:40,000] explain: 36.0 s -> /tmp/x/explain/index.md
[2026-12-02 21:04:20,000] figures and report: 38.0 s -> /tmp/x/report.md
[2026-12-02 21:04:20,000] total: 428.0 s
"""

#: A run that draws its figures while explain runs beside them (two jobs), then writes the report.
LOG_BESIDE = """[20:59:58] flow strata on the held-out set (beside the scoring): 57.2 s
[21:00:00] final, handcrafted and random policies on the final evaluation users (beside the scoring): 15.8 s
[21:00:05] consequences (27 comparisons, 2 continuations per context, beside the scoring): 15.0 s
[21:00:15] figures: 9.8 s
[21:00:18] explain: 12.8 s -> /tmp/p1/explain/explain.md (beside the scoring and the figures)
[21:00:20] report: 1.3 s -> /tmp/p1/report.md
[21:00:20] total: 135.1 s
"""


def test_step_seconds_reads_each_step_of_the_run_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import bench_demo

    assert bench_demo.step_seconds(LOG) == {
        "training": 123.4, "contexts": 0.5, "responding": 9.0, "embedding texts": 132.0,
        "behaviour maps": 6.5, "scoring (incl. embedding, maps)": 168.0, "consequences": 16.2, "explain": 36.0,
        "figures and report": 38.0, "total": 428.0,
    }
    assert bench_demo.step_seconds(LOG_BESIDE) == {
        "held-out flow strata": 57.2, "final/handcrafted/random policies": 15.8, "consequences": 15.0, "explain": 12.8, "figures": 9.8,
        "report": 1.3, "total": 135.1,
    }


@pytest.mark.slow  # about 40 s: six tiny trainings, the whole pipeline
def test_a_tiny_demo_is_profiled_step_by_step_beside_its_limits(tmp_path: Path) -> None:
    out = tmp_path / "profile.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dialogues", "100", "--eval-dialogues", "10", "--measures", "action",
         "--no-generated", "--resamples", "20", "--jobs", "1", "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["step"]: r for r in json.loads(out.read_text(encoding="utf-8"))}
    assert list(rows) == ["training", "contexts", "responding", "behaviour maps", "scoring (incl. embedding, maps)",
                          "final/handcrafted/random policies", "consequences", "explain", "figures", "report",
                          "total"]
    assert "embedding texts" not in rows  # action measures embed nothing
    # 6 runs x (100 training + 10 evaluation dialogues at each of 10 checkpoints), one worker
    assert rows["training"]["limit"] == "simulator alone, 1,200 dialogues / 1 workers"
    assert rows["figures"]["limit"].startswith("savefig of ")
    for step in ("training", "figures"):
        assert rows[step]["limit_seconds"] > 0
        assert rows[step]["ratio"] == pytest.approx(rows[step]["seconds"] / rows[step]["limit_seconds"])
    assert rows["total"]["share"] == 1.0
    parts = ("total", "behaviour maps", "embedding texts")  # the last two: parts of scoring
    assert sum(r["seconds"] for s, r in rows.items() if s not in parts) <= rows["total"]["seconds"]
    assert done.stdout.splitlines()[0].split() == ["step", "s", "share", "limit", "limit", "s", "ratio"]
