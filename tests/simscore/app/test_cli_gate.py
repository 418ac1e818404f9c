"""``simscore gate``: exit 0 when the candidate passes, 1 on a regression, 2 on bad input."""

from __future__ import annotations

import json
import logging
import re
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



# ----------------------------------------------------------------------------- contexts collected from sampling policies

SAMPLER = (
    "import numpy as np\n\n\n"
    "class Sampler:\n"
    "    '''The first allowed action; a random allowed one while sampling_scale > 0 (drawn from the dialogue's "
    "generator).'''\n\n"
    "    name = 'sampler'\n\n"
    "    def __init__(self):\n"
    "        self.sampling_scale = 0.0\n"
    "        self.rng = None\n\n"
    "    def begin_dialogue(self, rng):\n"
    "        self.rng = rng\n\n"
    "    def choose(self, belief, mask):\n"
    "        allowed = np.flatnonzero(mask)\n"
    "        if self.sampling_scale > 0 and self.rng is not None:\n"
    "            return int(self.rng.choice(allowed))\n"
    "        return int(allowed[0])\n"
)


def _sampled_contexts(tmp_path: Path, scale_recorded: float) -> tuple[Path, Path]:
    """Contexts of 3 dialogues of Sampler with sampling scale 1, the log's header saying ``scale_recorded``; the
    module and the context file."""
    import importlib.util

    from contexts import collect_contexts
    from policies import run_dialogues

    tmp_path.mkdir(exist_ok=True)
    module = tmp_path / "sampler.py"
    module.write_text(SAMPLER, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("gate_test_sampler", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    sampler = loaded.Sampler()
    sampler.sampling_scale = 1.0
    log = tmp_path / "s.jsonl"
    run_dialogues(sampler, 3, seed=5, log_path=log, log_source={"name": "s", "sampling_scale": scale_recorded})
    contexts = collect_contexts([log], name="C_col")
    path = tmp_path / "col.jsonl"
    contexts.filter(lambda c: c.metadata["turn_index"] > 0, name="C_col").to_jsonl(path)
    return module, path


def test_a_source_samples_with_the_scale_its_collection_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    # collected sampling (scale 1): replayed greedily, the dialogues part at once; with the recorded scale they replay
    module, contexts = _sampled_contexts(tmp_path, 1.0)
    argv = ["gate", "handcrafted", "handcrafted", "--contexts", str(contexts), "--source", f"s={module}:Sampler",
            "-k", "1", "--resamples", "0", "--max-negative-flip-rate", "1"]
    with caplog.at_level(logging.INFO, logger="simscore.app.cli"):
        assert main(argv) == 0
    assert f"contexts of {contexts}" in capsys.readouterr().out
    assert [r.getMessage() for r in caplog.records if r.name == "simscore.app.cli"] == [
        f"gate: the sources replayed as {contexts} records their collection (the dialogues' seeds from their ids): "
        f"'s' by --source {module}:Sampler, sampling scale 1"]
    _, unrecorded = _sampled_contexts(tmp_path / "0", 0.0)  # the same dialogues, a header saying they were greedy
    assert main([*argv[:4], str(unrecorded), *argv[5:]]) == 2
    assert "reaches another belief state at turn" in capsys.readouterr().err


def test_an_experiment_s_own_c_col_replays_with_its_runs_as_they_collected_it(
    tiny_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """C_col was collected with [contexts] collect_scale = 1 (sampled): the gate replayed it greedily and refused it."""
    folder = tiny_run[0]
    with caplog.at_level(logging.INFO, logger="simscore.app.cli"):
        code = main(["gate", str(folder / "runs" / "ts-1"), str(folder / "runs" / "ts-1"), "--contexts",
                     str(folder / "contexts" / "col.jsonl"), "-k", "1", "--resamples", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"82 contexts of {folder / 'contexts' / 'col.jsonl'}, K=1 continuations (82 pairs, R_TS)" in out
    [line] = [r.getMessage() for r in caplog.records if r.name == "simscore.app.cli"]
    assert line.endswith("; ".join(f"'{run}' by {folder.resolve() / 'runs' / run} checkpoint 60, sampling scale 1"
                                   for run in ("ts-1", "ts-2", "iq-1", "iq-2")))


# ----------------------------------------------------------------------------- options of the other mode, the bounds


@pytest.mark.parametrize(("given", "named"), [
    (["--reward", "iq"], "--reward applies"),
    (["-k", "2"], "--continuations applies"),
    (["--continuations", "2", "--reward", "ts"], "--continuations, --reward apply"),
    (["--max-change-above-floor", "0.2"], "--max-change-above-floor applies"),
    (["--contexts", "c.jsonl"], "--contexts applies"),
    (["--source", "a=random"], "--source applies"),
    (["--dialogues", "3"], "--dialogues applies"),
])
def test_options_of_policies_are_refused_with_logs_before_any_work(given: list[str], named: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # the logs do not exist: reading them would be another error
    assert main(["gate", "--logs", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), *given]) == 2
    assert capsys.readouterr().err == (f"simscore gate: error: {named} to policies, not to --logs (outcome logs have "
                                       "no contexts to replay and no actions)\n")


def test_the_defaults_of_policies_are_filled_in_after_the_check(tmp_path: Path) -> None:
    out = tmp_path / "gate.json"
    assert main(["gate", "handcrafted", "handcrafted", "--dialogues", "2", "--resamples", "0",
                 "--max-negative-flip-rate", "1", "--out", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert (record["continuations"], record["reward"], record["result"]["limits"]["max_change_above_floor"]) == (
        4, "ts", 0.1)


def test_continuations_are_bounded_when_the_arguments_are_read(capsys: pytest.CaptureFixture[str]) -> None:
    from simscore.app.cli.gate import MAX_CONTINUATIONS

    with pytest.raises(SystemExit) as exc:
        main(["gate", "handcrafted", "handcrafted", "-k", "1000000"])
    assert exc.value.code == 2
    assert ("argument --continuations/-k: expected at most 1,000 continuations per context (MAX_CONTINUATIONS), "
            "got '1000000'") in capsys.readouterr().err
    assert MAX_CONTINUATIONS == 1_000


# ----------------------------------------------------------------------------- a policy that crashes: exit 3

CRASHING = (
    "import numpy as np\n\n\n"
    "class Crashing:\n"
    "    name = 'crashing'\n\n"
    "    def choose(self, belief, mask):\n"
    "        if belief.offer_happened:\n"
    "            raise RuntimeError('no venue for you')\n"
    "        return int(np.flatnonzero(mask)[-1])\n\n\n"
    "class Invalid:\n"
    "    def choose(self, belief, mask):\n"
    "        return 999\n"
)


@pytest.mark.parametrize(("role", "name", "said"), [
    ("candidate", "Crashing", "the candidate {spec} crashed while being replayed (RuntimeError: no venue for you)"),
    ("baseline", "Crashing", "the baseline {spec} crashed while being replayed (RuntimeError: no venue for you)"),
    ("candidate", "Invalid", "the candidate {spec} gave an invalid action while being replayed: policy 'candidate "
     "{spec}' chose 999 in dialogue s0-000000 turn 1; expected a summary action index in [0, 16)"),
])
def test_a_policy_that_crashes_leaves_the_gate_undecided(role: str, name: str, said: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "crashing.py"
    module.write_text(CRASHING, encoding="utf-8")
    spec = f"{module}:{name}"
    pair = ["handcrafted", spec] if role == "candidate" else [spec, "handcrafted"]
    out = tmp_path / "gate.json"
    assert main(["gate", *pair, "--dialogues", "2", "-k", "1", "--out", str(out)]) == 3
    captured = capsys.readouterr()
    assert captured.err == (f"simscore gate: undecided: {said.format(spec=spec)}: the gate could not be decided "
                            "(exit 3)\n")
    assert captured.out == "" and not out.exists()


def test_the_exit_codes_are_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 the candidate passes; 1 a regression; 2 bad input" in text
    assert "3 undecided: the baseline, the candidate or a source's policy crashed" in text


# ----------------------------------------------------------------------------- progress away from a terminal


def test_the_replay_and_the_bootstrap_log_progress_away_from_a_terminal(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    import simscore.progress

    # every step counts as long: the bootstrap of 20,000 resamples lasts many intervals even on a quiet machine
    # (of 2,000 it once ended within its first 5 ms, and a step that ends within its interval writes nothing)
    monkeypatch.setattr(simscore.progress, "LOG_INTERVAL", 0.001)
    argv = ["gate", "handcrafted", "random", "--dialogues", "4", "-k", "2", "--resamples", "20000"]
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        assert main(argv) == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "simscore.progress"]
    replaying = [line for line in lines if line.startswith("gate: replaying: ")]
    assert replaying and all(re.fullmatch(r"gate: replaying: \d+/\d+ continuations done, \d+s", line)
                             for line in replaying), lines
    assert any(line.startswith("gate: bootstrap (20000 resamples): ") for line in lines), lines
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        assert main([*argv, "--quiet"]) == 1
    assert [r for r in caplog.records if r.name == "simscore.progress"] == []
