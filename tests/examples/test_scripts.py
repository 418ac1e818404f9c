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
    "compare_tool_agents.py": "test_scripts.py",
    "convlab_answer_states.py": "test_convlab_answer_states.py",
    "generative_policies.py": "test_generative_policies.py",
    "map_tool_agents.py": "test_scripts.py",
    "rl_loop_convergence.py": "test_scripts.py",
    "sampled_policies.py": "test_scripts.py",
    "sb3_compare_policies.py": "test_sb3_examples.py",
    "sb3_maskable_ppo.py": "test_sb3_examples.py",
    "sb3_ppo_convergence.py": "test_sb3_examples.py",
    "tiny_models.py": "test_scripts.py",
    "trl_sft_behaviour.py": "test_scripts.py",
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_trl_sft_behaviour_logs_the_curve_and_stops(tmp_path) -> None:
    for module in ("torch", "transformers", "datasets", "trl"):
        pytest.importorskip(module, reason=f"{module} missing: pip install 'simscore-dialogue[text,trl]'")
    plot = tmp_path / "curve.png"
    out = _run("trl_sft_behaviour.py", "--plot", str(plot))
    lines = out.splitlines()
    start = lines.index("SFT of a tiny GPT-2 on 48 turns; 12 C_gen contexts answered every 2 steps")
    rows = [re.fullmatch(r"step +(\d+): bleu4 (\S+) \[(\S+), (\S+)\]  chance (\S+)  vs initial (\S+)  stable (\d)",
                         line) for line in lines[start + 1:] if line.startswith("step ")]
    assert rows and all(rows), lines[start:]
    steps = [int(row.group(1)) for row in rows]
    assert steps == list(range(2, 2 * len(rows) + 1, 2))
    for row in rows:
        low, mean, high = float(row.group(3)), float(row.group(2)), float(row.group(4))
        assert 0.0 <= low <= mean <= high <= 1.0 and 0.0 <= float(row.group(5)) <= 1.0
    assert [int(row.group(7)) for row in rows][-2:] == [1, 2]
    assert f"stopped at step {steps[-1]} of 60: BLEU-4 vs the previous check >= 0.9 for 2 checks in a row" in lines
    assert re.search(r"^cost: \S+ s per check \(\d+ checks\) vs \S+ s per training step", out, re.M)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and lines[-1] == f"behaviour curve: {plot}"


def test_compare_tool_agents_on_the_shipped_tau2_files(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    out = _run("compare_tool_agents.py", "--view", str(page))
    assert out.startswith("A = gpt-4.1\nB = ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm\n")
    # trajectories: 30 and 31 alike in every mode; with subset also 45 (tests/contexts/test_two_agents.py by hand)
    # message by message (agentevals' strict) only 30: in 31 gpt-4.1 made three lookups in one message
    for mode, tmr in (("strict", "0.3333"), ("unordered", "0.3333"), ("subset", "0.5000"), ("superset", "0.3333"),
                      ("per_message", "0.1667")):
        block = out.split(f"calls={mode}\n")[1]
        assert re.match(rf"measure +mean +95% CI +n +missing\ntmr +{tmr} +\[", block), block[:200]
        assert "6 clusters resampled (by task_id)" in block.split("chance level")[0]
    assert "2. Turns paired by task, trial and turn: 49 turns both agents took, 9 of them on the same history" in out
    assert re.search(r"tmr +0\.7143 +\[0\.\d{4}, 0\.\d{4}\] +49 +0", out)
    assert "chance level: A's response vs B's response to another task_id (1,988 pairs)" in out
    assert "task 45: the same actions in all 8 turns both took" in out
    assert "task 30, turn 2: A reply()  |  B get_reservation_details(reservation_id=1N99U6)" in out
    assert out.rstrip().endswith(f"wrote {page}") and "get_reservation_details" in page.read_text(encoding="utf-8")


def test_map_tool_agents_on_the_shipped_tau2_files(tmp_path: Path) -> None:
    out = _run("map_tool_agents.py", "--resamples", "200", "--out", str(tmp_path))
    assert out.startswith("6 agents on 6 shared airline tasks (13, 26, 30, 31, 45, 48), trial(s) [0]\n")
    assert "  claude-sonnet-4-5  claude-sonnet-4-5 (user gpt-4.1): reward 6 of 6\n" in out
    strict, unordered = out.split("calls=unordered")
    # the trajectories in order: the fine-tune is nearest its base (TMR 2 of 6 tasks, as compare_tool_agents prints)
    assert re.search(r"^tmr: pairs 0\.000 to 0\.333; chance 0\.000 to 0\.000$", strict, re.M)
    assert re.search(r"^  gpt-4\.1-sft's nearest: gpt-4\.1 0\.333 \[", strict, re.M)
    cmr = strict.split("\ncmr: ")[1]
    assert re.search(r"^  gpt-4\.1-sft's nearest: gpt-4\.1 0\.508 \[\S+, \S+\], then gpt-4o 0\.389; p 0\.\d{3}", cmr, re.M)
    assert re.search(r"^  cluster gpt-4\.1 \+ gpt-4\.1-sft \+ gpt-4o: at 0\.551, support \d+%$", cmr, re.M)
    # in any order, claude-sonnet-4-5 is (just) nearer the fine-tune than its base is
    assert re.search(r"^  gpt-4\.1-sft's nearest: claude-sonnet-4-5 0\.502 .* then gpt-4\.1 0\.491; ", unordered, re.M)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"map_{m}.png" for m in ("cer", "cmr", "dmr", "tmr")]


@pytest.mark.slow
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


def test_tiny_models_writes_a_folder_the_generative_policy_loads(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="the text extra writes and loads the model")
    from policies.lm.generative import GenerativePolicy

    out = _run("tiny_models.py", str(tmp_path / "m"), "--architecture", "t5")
    assert out.strip() == str(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir())[:3] == ["config.json", "generation_config.json",
                                                                        "model.safetensors"]
    assert GenerativePolicy(tmp_path / "m").kind == "encoder-decoder"
    refused = subprocess.run([sys.executable, str(EXAMPLES / "tiny_models.py"), str(tmp_path / "m")],
                             capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert refused.returncode == 2 and "exists and is not an empty folder; name a new one" in refused.stderr

