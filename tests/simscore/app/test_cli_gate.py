"""``simscore gate``: exit 0 when the candidate passes, 1 on a regression, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contexts import GridSpec, generate_grid
from policies import HandcraftedPolicy, RandomPolicy
from policies.sim import simulated_contexts
from simscore.app.cli import main


def test_a_policy_against_itself_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gate.json"
    assert main(["gate", "handcrafted", "handcrafted", "--dialogues", "10", "-k", "2", "--resamples", "200",
                 "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    record = json.loads(out.read_text(encoding="utf-8"))
    result = record["result"]
    assert result["passed"] and result["negative_flips"] == 0 and result["pairs"] >= 59
    assert result["behaviour_change"]["value"] == 0.0 and result["churn_floor"]["value"] == 0.0
    assert result["units"] == 10 and record["regressed"] == [] and record["mode"] == "policies"
    assert f"({result['pairs']} pairs, R_TS)" in stdout and stdout.splitlines()[-2] == "PASS"


def test_random_against_handcrafted_is_a_regression_with_its_contexts_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gate.json"
    assert main(["gate", "handcrafted", "random", "--dialogues", "5", "-k", "2", "--resamples", "200",
                 "--out", str(out)]) == 1
    stdout = capsys.readouterr().out
    record = json.loads(out.read_text(encoding="utf-8"))
    result = record["result"]
    assert not result["passed"] and result["negative_flips"] > 0
    assert result["behaviour_change"]["value"] > 0.5 and result["churn_floor"]["value"] == 0.0
    assert len(result["reasons"]) == 2 and "REGRESSION: the negative flip rate's upper 95% bound" in stdout
    regressed = record["regressed"]
    assert sum(row["negative_flips"] for row in regressed) == result["negative_flips"]
    assert f"regressed contexts (negative flips of the K continuations; the acts at the context): {len(regressed)}" in stdout
    first = regressed[0]
    assert f"  {first['context_id']}  {first['negative_flips']}/2  baseline {first['baseline_act']}" in stdout
    assert {row["comparison"] for row in record["flips"]} == {"total", "action", "after"}


def test_a_context_file_with_its_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contexts = tmp_path / "col.jsonl"
    simulated_contexts({"rand": RandomPolicy(seed=0), "hc": HandcraftedPolicy()}, 2, seed=3).to_jsonl(contexts)
    # the random source's dialogues were made by random (seed 0): given, they replay; else refused
    assert main(["gate", "handcrafted", "handcrafted", "--contexts", str(contexts), "--source", "rand=random",
                 "-k", "1", "--resamples", "0", "--max-negative-flip-rate", "1"]) == 0
    assert "contexts of " + str(contexts) in capsys.readouterr().out
    assert main(["gate", "handcrafted", "handcrafted", "--contexts", str(contexts), "-k", "1"]) == 2
    assert "source 'rand'" in capsys.readouterr().err
    assert main(["gate", "handcrafted", "handcrafted", "--contexts", str(contexts), "--source", "rnd=random"]) == 2
    assert f"--source 'rnd': no context of {contexts} comes from it (sources: 'hc', 'rand')" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["handcrafted", "hf:models/x"], "a language model answers contexts but does not act in the simulated world"),
    (["handcrafted", "openai:http://127.0.0.1:9/v1"], "an endpoint answers contexts but does not act in the simulated world"),
    (["handcrafted", "nowhere:thing"], "POLICY: cannot import 'nowhere'"),
    (["handcrafted", "random", "--source", "a=random"], "--source names the policies that made a --contexts file"),
    (["handcrafted", "random", "--max-negative-flip-rate", "2"], "expected a share in [0, 1], got '2'"),
    (["handcrafted", "random", "--dialogues", "2", "--contexts", "x.jsonl"], "--dialogues collects contexts"),
    (["a.csv", "b.csv", "--logs", "--dialogues", "3"], "--dialogues applies to policies, not to --logs"),
])
def test_bad_input_exits_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["gate", *argv])
    except SystemExit as exc:  # argparse refuses a bad option value itself
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_generated_contexts_cannot_be_replayed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = tmp_path / "gen.jsonl"
    generate_grid(GridSpec(levels=(0.0, 1.0))).to_jsonl(grid)
    assert main(["gate", "handcrafted", "random", "--contexts", str(grid)]) == 2
    assert "does not name its dialogue" in capsys.readouterr().err


# ----------------------------------------------------------------------------- outcome logs


def _log(path: Path, rows: list[tuple[str, int, int, float]]) -> Path:
    path.write_text("task_id,trial,success,reward\n" + "".join(f"{t},{k},{s},{r}\n" for t, k, s, r in rows),
                    encoding="utf-8")
    return path


def test_two_outcome_logs_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 30 tasks x 2 trials; the candidate wins task 0 trial 1 back and loses nothing: 0 of 60, bound 1 - 0.05^(1/60)
    base = [(f"task{t}", k, int((t, k) != (0, 1)), 1.0 if (t, k) != (0, 1) else 0.0) for t in range(30) for k in (0, 1)]
    cand = [(t, k, 1, 1.0) for t, k, _, _ in base]
    out = tmp_path / "gate.json"
    argv = ["gate", "--logs", str(_log(tmp_path / "a.csv", base)), str(_log(tmp_path / "b.csv", cand)), "--out", str(out)]
    assert main(argv) == 0
    stdout = capsys.readouterr().out
    assert "60 paired outcomes of 30 tasks" in stdout
    assert "negative flips    0 of 60 pairs (30 tasks): rate 0.0000 [0.0000, 0.0000]; upper 95% bound 0.0487" in stdout
    assert "positive flips    1: rate 0.0167" in stdout
    assert "reward difference 0.0167" in stdout
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["mode"] == "logs" and record["result"]["negative_flip_upper_exact"] == pytest.approx(0.0487029, abs=1e-6)
    assert record["result"]["behaviour_change"] is None


def test_two_outcome_logs_fail_with_the_lost_tasks_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = [(f"task{t}", k, 1, 1.0) for t in range(30) for k in (0, 1)]
    lost = {("task3", 0), ("task3", 1), ("task17", 1)}
    cand = [(t, k, int((t, k) not in lost), 0.0 if (t, k) in lost else 1.0) for t, k, _, _ in base]
    argv = ["gate", "--logs", str(_log(tmp_path / "a.csv", base)), str(_log(tmp_path / "b.csv", cand))]
    assert main(argv) == 1
    stdout = capsys.readouterr().out
    # 3 of 60: rate 0.05; the exact one-sided bound is the 95th percentile of Beta(3 + 1, 60 - 3) = 0.1242
    assert "negative flips    3 of 60 pairs (30 tasks): rate 0.0500 [" in stdout
    assert "upper 95% bound 0.1242 (limit 0.05)  FAIL" in stdout
    assert stdout.splitlines()[-4:] == ["regressed tasks: 3", "  task3 trial 0  reward 1 -> 0",
                                        "  task3 trial 1  reward 1 -> 0", "  task17 trial 1  reward 1 -> 0"]


def test_outcome_logs_of_other_tasks_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _log(tmp_path / "a.csv", [("t1", 0, 1, 1.0), ("t2", 0, 1, 1.0)])
    b = _log(tmp_path / "b.csv", [("t1", 0, 1, 1.0), ("t3", 0, 1, 1.0)])
    assert main(["gate", "--logs", str(a), str(b)]) == 2
    assert capsys.readouterr().err == (
        f"simscore gate: error: the logs do not hold the same tasks (with trials): 1 only in the baseline ({a}): "
        f"'t2' trial 0; 1 only in the candidate ({b}): 't3' trial 0\n")


def test_a_policy_from_a_python_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "mypolicy.py"
    module.write_text(
        "import numpy as np\n\n\n"
        "class FirstAllowed:\n"
        "    name = 'first'\n\n"
        "    def choose(self, belief, mask):\n"
        "        return int(np.flatnonzero(mask)[0])\n\n\n"
        "class TextOnly:\n"
        "    def respond(self, context):\n"
        "        return 'hello'\n",
        encoding="utf-8",
    )
    assert main(["gate", "handcrafted", f"{module}:FirstAllowed", "--dialogues", "3", "-k", "1", "--resamples", "0"]) == 1
    assert f"candidate {module}:FirstAllowed" in capsys.readouterr().out
    assert main(["gate", "handcrafted", f"{module}:TextOnly", "--dialogues", "3"]) == 2
    assert "has no choose(belief, mask) -> int: only summary policies act in the simulated world" in capsys.readouterr().err


def test_the_tau2_fixture_as_outcome_logs_is_too_small_to_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Four real tau2-bench simulations: nothing lost against itself, but four pairs cannot show a rate below 0.05."""
    results = json.loads((Path(__file__).parents[2] / "data" / "tau2" / "airline_whissle_4_simulations.json")
                         .read_text(encoding="utf-8"))
    log = tmp_path / "whissle.jsonl"
    log.write_text("".join(json.dumps({"task_id": s["task_id"], "trial": s["trial"], "reward": s["reward_info"]["reward"],
                                       "success": s["reward_info"]["reward"] == 1}) + "\n"
                           for s in results["simulations"]), encoding="utf-8")
    assert main(["gate", "--logs", str(log), str(log), "--resamples", "100"]) == 1
    stdout = capsys.readouterr().out
    # no flip in 4 pairs: 1 - 0.05 ** (1 / 4) = 0.5271
    assert "negative flips    0 of 4 pairs (4 tasks): rate 0.0000 [0.0000, 0.0000]; upper 95% bound 0.5271" in stdout
    assert "(no negative flip, but 4 pairs cannot show a rate below the limit: 59 or more are needed)" in stdout
    assert main(["gate", "--logs", str(log), str(log), "--max-negative-flip-rate", "0.6"]) == 0


@pytest.mark.slow  # about 5 s: it trains a run first
def test_a_trained_gp_sarsa_run_against_random_is_a_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A GP-SARSA run folder (30 training dialogues, its last checkpoint, greedy) replayed in its own world."""
    from policies.gpsarsa.training import TrainingConfig, train

    run = tmp_path / "ts-1"
    train(TrainingConfig(reward="ts", seed=1, dialogues=30, every=30, eval_dialogues=5), run)
    out = tmp_path / "gate.json"
    assert main(["gate", str(run), "random", "--dialogues", "10", "-k", "2", "--resamples", "200",
                 "--out", str(out)]) == 1
    stdout = capsys.readouterr().out
    record = json.loads(out.read_text(encoding="utf-8"))
    result = record["result"]
    assert (result["pairs"], result["negative_flips"], result["units"], result["unit"]) == (124, 11, 10, "dialogues")
    assert result["churn_floor"]["value"] == 0.0  # a greedy checkpoint has no randomness of its own
    assert len(record["regressed"]) > 0 and "regressed contexts (negative flips" in stdout
    assert main(["gate", str(run), str(run), "--dialogues", "10", "-k", "2", "--resamples", "200"]) == 0


def test_out_dash_writes_the_json_to_standard_output(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # it wrote a file named "-"
    monkeypatch.chdir(tmp_path)
    base = [(f"task{t}", k, 1, 1.0) for t in range(30) for k in (0, 1)]
    argv = ["gate", "--logs", str(_log(tmp_path / "a.csv", base)), str(_log(tmp_path / "b.csv", base)), "--out", "-"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["mode"] == "logs" and "60 paired outcomes of 30 tasks" in err
    assert not (tmp_path / "-").exists()

