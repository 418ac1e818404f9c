"""Every script of ``examples/`` runs to completion in the test command, at a small size where it is long.

:data:`RUN_BY` names the test module that runs each script (those needing an optional extra skip,
naming it, where it is missing); a script added to ``examples/`` without a test fails
:func:`test_every_example_script_is_run_by_a_test`. The scripts without a module of their own run
here, as a user runs them (``python examples/NAME.py ...`` in a subprocess, from the repository).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HERE = Path(__file__).resolve().parent

#: Every example script -> the test module (in tests/examples/) that runs it.
RUN_BY: dict[str, str] = {
    "convlab_answer_states.py": "test_convlab_answer_states.py",
    "generative_policies.py": "test_generative_policies.py",
    "rl_loop_convergence.py": "test_scripts.py",
    "sampled_policies.py": "test_scripts.py",
    "sb3_compare_policies.py": "test_sb3_examples.py",
    "sb3_maskable_ppo.py": "test_sb3_examples.py",
    "sb3_ppo_convergence.py": "test_sb3_examples.py",
    "why_they_differ.py": "test_scripts.py",
}


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.stdout


def test_every_example_script_is_run_by_a_test() -> None:
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts == sorted(RUN_BY), "every example script needs an entry in RUN_BY and a test that runs it"
    for script, module in RUN_BY.items():
        assert script in (HERE / module).read_text(encoding="utf-8"), f"{module} does not run {script}"


def test_why_they_differ_on_the_shipped_files() -> None:
    out = _run("why_they_differ.py", "--permutations", "20")
    assert out.startswith("gpsarsa-ts-seed1 vs gpsarsa-iq-seed1 on 24 contexts of C_col_example\n")
    for heading in ("Disagreement by group (tmr: 1 - score)", "Disagreement by group (dmr: 1 - score)",
                    "Where do they disagree? depth-", "permutation importances (held out):",
                    "Two-sample test: can a classifier tell gpsarsa-ts-seed1 from gpsarsa-iq-seed1 given the context?"):
        assert heading in out, heading
    test = re.search(r"cross-validated accuracy (\S+) \(chance 0.5\), permutation p = (\S+) \(20 permutations, 4 folds",
                     out)
    assert test is not None, out[-2000:]
    accuracy, p_value = float(test.group(1)), float(test.group(2))
    assert 0.0 <= accuracy <= 1.0 and 1 / 21 <= p_value <= 1.0  # (1 + hits) / (1 + permutations)


def test_rl_loop_stops_when_the_behaviour_settles() -> None:
    # 50 dialogues a batch and a threshold of 0.8: the quick form of the default run (its docstring's)
    out = _run("rl_loop_convergence.py", "--batch", "50", "--max-dialogues", "500", "--threshold", "0.8",
               "--patience", "2")
    lines = out.splitlines()
    assert lines[0].split() == ["dialogues", "success", "TMR", "vs", "previous", "DMR", "vs", "previous", "stable"]
    assert lines[1].split()[0] == "50" and lines[1].endswith("(first snapshot)")
    rows = [line.split() for line in lines[2:-1]]
    assert [int(row[0]) for row in rows] == list(range(100, 50 * (len(rows) + 2), 50))
    assert all(0.0 <= float(v) <= 1.0 for row in rows for v in row[1:4])
    tmr, dmr, stable = ([float(row[k]) for row in rows] for k in (2, 3, 4))
    # stable checks count only after the behaviour changed once (a check below the threshold)
    assert stable[0] == 0 and stable[-2:] == [1, 2] and min(tmr[-2:] + dmr[-2:]) >= 0.8 > min(tmr[:-2] + dmr[:-2])
    assert lines[-1] == (f"behaviour converged after {rows[-1][0]} dialogues: TMR and DMR >= 0.8 for 2 consecutive "
                         "checks; stopping early")


@pytest.mark.extra("text")
def test_sampled_policies_against_their_own_ceiling() -> None:
    out = _run("sampled_policies.py", "--samples", "3", "--permutations", "200")
    assert out.startswith("24 contexts of C_col_example, 3 samples each, 200 permutations")
    found = re.findall(r"^(\S.* vs .*)\n  bleu4 +within A (\S+) +within B (\S+) +between (\S+) +normalised (\S+) "
                       r"\[\S+, \S+\] +gap (\S+) +p = (\S+)$", out, re.M)
    assert [pair for pair, *_ in found] == ["greedy vs sampled T=0.7", "greedy vs sampled T=1.5",
                                            "sampled T=0.7 vs sampled T=1.5"]
    for row in found:  # (pair, within A, within B, between, normalised, gap, p)
        assert 0.0 <= float(row[3]) <= 1.0 and 0.00497 <= float(row[6]) <= 1.0  # printed to 4 digits
    assert float(found[0][1]) == 1.0 and float(found[0][6]) == pytest.approx(1 / 201, rel=1e-3)  # greedy: copies of one answer
    random_rows = re.findall(r"^  (tmr|dmr|cer|cmr) .* p = (\S+)$", out, re.M)
    assert [name for name, _ in random_rows] == ["tmr", "dmr", "cer", "cmr"]
    assert all(float(p) > 0.05 for _, p in random_rows)  # one policy under two seeds: no difference found
