"""simscore.outcomes.gate: outcome logs read and paired, and the gate's decision, with numbers computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from simscore.errors import FileFormatError, OutcomeLogError
from simscore.outcomes.gate import (
    GateLimits,
    exact_upper_bound,
    gate,
    pair_outcome_logs,
    pairs_needed,
    read_outcome_log,
)
from simscore.stats import Bootstrap

#: Ten tasks: the candidate loses t7 (a negative flip) and wins t9 (a positive one).
BASELINE = "task_id,success,reward\n" + "".join(
    f"t{i},{s},{r}\n" for i, s, r in zip(range(1, 11), [1, 1, 1, 1, 1, 1, 1, 1, 0, 0], [15, 14, 16, 13, 15, 12, 15, 14, -20, -25]))
CANDIDATE = "task_id,success,reward\n" + "".join(
    f"t{i},{s},{r}\n" for i, s, r in zip(range(1, 11), [1, 1, 1, 1, 1, 1, 0, 1, 1, 0], [15, 13, 16, 13, 15, 12, -22, 14, 11, -25]))


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_ten_tasks_by_hand(tmp_path: Path) -> None:
    paired = pair_outcome_logs(read_outcome_log(_write(tmp_path, "a.csv", BASELINE)),
                               read_outcome_log(_write(tmp_path, "b.csv", CANDIDATE)))
    result = gate(paired.baseline_success, paired.candidate_success, clusters=paired.clusters,
                  baseline_reward=paired.baseline_reward, candidate_reward=paired.candidate_reward,
                  limits=GateLimits(max_negative_flip_rate=0.5), bootstrap=Bootstrap(n_resamples=500))
    assert (result.negative_flips, result.positive_flips, result.pairs, result.units) == (1, 1, 10, 10)
    assert result.negative_flip_rate.value == 0.1 and result.positive_flip_rate.value == 0.1
    # reward differences: t2 -1, t7 -37, t9 +31: mean -7 / 10
    assert result.reward_difference is not None and result.reward_difference.value == pytest.approx(-0.7)
    # Clopper-Pearson: (1 - p)^10 + 10 p (1 - p)^9 = 0.05 at p = 0.3942
    p = result.negative_flip_upper_exact
    assert p == pytest.approx(0.394163, abs=1e-6)
    assert (1 - p) ** 10 + 10 * p * (1 - p) ** 9 == pytest.approx(0.05)
    assert result.negative_flip_upper == max(p, result.negative_flip_upper_bootstrap)
    assert result.passed and result.reasons == ()
    assert [paired.tasks[i] for i in result.negative] == ["t7"]
    assert result.behaviour_change is None and result.churn_floor is None


def test_the_default_limit_fails_one_flip_in_ten_and_says_why(tmp_path: Path) -> None:
    paired = pair_outcome_logs(read_outcome_log(_write(tmp_path, "a.csv", BASELINE)),
                               read_outcome_log(_write(tmp_path, "b.csv", CANDIDATE)))
    result = gate(paired.baseline_success, paired.candidate_success, clusters=paired.clusters,
                  bootstrap=Bootstrap(n_resamples=200))
    assert not result.passed
    assert result.reasons == ("the negative flip rate's upper 95% bound 0.3942 exceeds 0.05",)
    assert "REGRESSION: the negative flip rate's upper 95% bound 0.3942 exceeds 0.05" in result.format()


@pytest.mark.parametrize(("pairs", "passed"), [(58, False), (59, True)])
def test_no_flip_passes_only_with_enough_pairs(pairs: int, passed: bool) -> None:
    same = np.ones(pairs, dtype=bool)
    result = gate(same, same, bootstrap=Bootstrap(n_resamples=100))
    assert result.negative_flip_upper == pytest.approx(1 - 0.05 ** (1 / pairs))  # no event in n: 1 - alpha^(1/n)
    assert result.passed is passed
    if not passed:
        assert "no negative flip, but 58 pairs cannot show a rate below the limit: 59 or more are needed" in result.reasons[0]


def test_the_behaviour_change_is_judged_above_the_floor() -> None:
    ones = np.ones(100, dtype=bool)
    changed = np.arange(100) < 30
    floor = np.arange(100) < 25  # the baseline's own churn: 25 of 100
    result = gate(ones, ones, changed=changed, floor_changed=floor, bootstrap=Bootstrap(n_resamples=100))
    assert result.change_above_floor is not None and result.change_above_floor.value == pytest.approx(0.05)
    assert result.passed
    strict = gate(ones, ones, changed=changed, floor_changed=floor, limits=GateLimits(max_change_above_floor=0.04),
                  bootstrap=Bootstrap(n_resamples=100))
    assert strict.reasons == ("the behaviour change exceeds the baseline's churn floor by 0.0500 (more than 0.04)",)


def test_clusters_move_together_in_the_bootstrap() -> None:
    # one task of five trials all flipped among 20 tasks: as pairs the bootstrap is tighter than as tasks
    a = np.ones(100, dtype=bool)
    b = a.copy()
    b[:5] = False
    tasks = np.repeat(np.arange(20), 5)
    by_task = gate(a, b, clusters=tasks, bootstrap=Bootstrap(n_resamples=2000))
    by_pair = gate(a, b, bootstrap=Bootstrap(n_resamples=2000))
    assert by_task.units == 20 and by_pair.units == 100
    assert by_task.negative_flip_upper_bootstrap > by_pair.negative_flip_upper_bootstrap
    assert by_task.negative_flip_upper_exact == by_pair.negative_flip_upper_exact


def test_exact_bound_and_pairs_needed_by_hand() -> None:
    assert exact_upper_bound(0, 1) == pytest.approx(0.95)
    assert exact_upper_bound(0, 59) == pytest.approx(1 - 0.05 ** (1 / 59))
    assert pairs_needed(0.05) == 59 and pairs_needed(0.1) == math.ceil(math.log(0.05) / math.log(0.9)) == 29
    with pytest.raises(ValueError, match="0 <= count <= n"):
        exact_upper_bound(3, 2)


def test_json_lines_with_trials_pair_by_trial(tmp_path: Path) -> None:
    rows_a = [{"task_id": "11", "trial": t, "success": True, "reward": 1.0} for t in (0, 1)]
    rows_b = [{"task_id": 11, "trial": 1, "success": False, "reward": 0.0},
              {"task_id": "11", "trial": 0, "success": 1, "reward": 1}]
    a = read_outcome_log(_write(tmp_path, "a.jsonl", "".join(json.dumps(r) + "\n" for r in rows_a)))
    b = read_outcome_log(_write(tmp_path, "b.log", "".join(json.dumps(r) + "\n" for r in rows_b)))  # told by content
    paired = pair_outcome_logs(a, b)
    assert paired.trials == (0, 1) and paired.candidate_success.tolist() == [True, False]
    assert paired.clusters.tolist() == [0, 0]


@pytest.mark.parametrize(("text", "message"), [
    ("task,success\nt1,1\n", "line 1: no column 'task_id' in the header (it has 'task', 'success'); an outcome log "
     "has task_id and success"),
    ("task_id,reward\nt1,1\n", "line 1: no column 'success' in the header"),
    ("task_id,success\nt1,maybe\n", "line 2: success 'maybe' is not a boolean (true/false or 1/0)"),
    ("task_id,success\nt1,2\n", "line 2: success '2' is not a boolean"),
    ("task_id,success,reward\nt1,1,nan\n", "line 2: reward 'nan' is not a finite number"),
    ("task_id,success,trial\nt1,1,-1\n", "line 2: trial '-1' is not a whole number >= 0"),
    ("task_id,success\nt1,1\nt2,0\nt1,0\n", "line 4: task 't1' appears twice (lines 2 and 4); repeated runs of a task "
     "need a trial column"),
    ("task_id,success,trial\nt1,1,0\nt1,0,0\n", "line 3: task 't1' trial 0 appears twice (lines 2 and 3)"),
    ("task_id,success\n", "no outcome in the log"),
    ("task_id,success\nt1\n", "line 2: 1 cells, the header has 2"),
    ("", "empty file, expected a header row"),
])
def test_bad_csv_logs_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(FileFormatError) as caught:
        read_outcome_log(_write(tmp_path, "log.csv", text))
    assert message in str(caught.value) and str(caught.value).startswith(str(tmp_path / "log.csv"))


@pytest.mark.parametrize(("lines", "message"), [
    (['{"task_id": "a", "success": true}', '[1]'], "line 2: expected a JSON object, got an array"),
    (['{"task_id": "a", "success": true}', '{"task_id": "b"}'], "line 2: missing key 'success'"),
    (['{"task_id": "a", "success": true}', '{"task_id": "b", "success": true, "trial": 0}'],
     "line 2: 'trial' is present here but missing in the first record"),
    (['{"task_id": null, "success": true}'], "line 1: task_id null is not a non-empty string"),
    (['{"task_id": "a", "success": "yes"}'], "line 1: success 'yes' is not a boolean"),
    (['{"format": "simscore-contexts", "version": 2}'], "a context set (format 'simscore-contexts', JSON Lines) where "
     "an outcome log"),
])
def test_bad_json_lines_logs_are_named(tmp_path: Path, lines: list[str], message: str) -> None:
    with pytest.raises(FileFormatError, match=None) as caught:
        read_outcome_log(_write(tmp_path, "log.jsonl", "\n".join(lines) + "\n"))
    assert message in str(caught.value)


def test_a_long_value_is_cut_in_the_message(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError) as caught:
        read_outcome_log(_write(tmp_path, "log.csv", "task_id,success\nt1," + "x" * 100_000 + "\n"))
    assert len(str(caught.value)) < 300 and "100,000 characters" in str(caught.value)


def test_tasks_on_one_side_are_counted_and_named(tmp_path: Path) -> None:
    a = read_outcome_log(_write(tmp_path, "a.csv", "task_id,success\n" + "".join(f"t{i},1\n" for i in range(9))))
    b = read_outcome_log(_write(tmp_path, "b.csv", "task_id,success\n" + "".join(f"t{i},1\n" for i in range(2, 10))))
    with pytest.raises(OutcomeLogError) as caught:
        pair_outcome_logs(a, b)
    assert str(caught.value) == (f"the logs do not hold the same tasks: 2 only in the baseline ({tmp_path / 'a.csv'}): "
                                 f"'t0', 't1'; 1 only in the candidate ({tmp_path / 'b.csv'}): 't9'")
    many = read_outcome_log(_write(tmp_path, "c.csv", "task_id,success\n" + "".join(f"u{i},1\n" for i in range(40))))
    with pytest.raises(OutcomeLogError, match=r"40 only in the candidate .*'u0', 'u1', 'u2', 'u3', 'u4' and 35 more"):
        pair_outcome_logs(a, many)


def test_trials_on_one_side_only_are_refused(tmp_path: Path) -> None:
    a = read_outcome_log(_write(tmp_path, "a.csv", "task_id,success,trial\nt1,1,0\n"))
    b = read_outcome_log(_write(tmp_path, "b.csv", "task_id,success\nt1,1\n"))
    with pytest.raises(OutcomeLogError, match="a.csv has a trial column and the other log does not"):
        pair_outcome_logs(a, b)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="max_negative_flip_rate must be a share in"):
        GateLimits(max_negative_flip_rate=1.5)
    with pytest.raises(ValueError, match="changed and floor_changed go together"):
        gate([1], [1], changed=[1])
    with pytest.raises(ValueError, match="no pairs"):
        gate([], [])
    with pytest.raises(ValueError, match="candidate_success must hold one value per pair"):
        gate([1, 1], [1])


TAU2 = Path(__file__).resolve().parents[2] / "data" / "tau2" / "airline_whissle_4_simulations.json"


def test_tau2_bench_results_are_read_as_outcome_logs(tmp_path: Path) -> None:
    # τ²-bench's results document (indented, as its runner writes it): "invalid JSON at line 1" before
    log = read_outcome_log(TAU2)
    assert (log.tasks, log.trials) == (("11", "13", "28", "46"), (0, 0, 0, 0))
    assert log.success.tolist() == [False, True, True, True] and log.reward.tolist() == [0.0, 1.0, 1.0, 1.0]
    document = json.loads(TAU2.read_text(encoding="utf-8"))
    # the same on one line, and a reward that only rounds to 1 succeeds as τ²-bench counts it
    document["simulations"][0]["reward_info"]["reward"] = 1 - 1e-7
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(document), encoding="utf-8")
    assert read_outcome_log(compact).success.tolist() == [True, True, True, True]
    document["simulations"][0]["reward_info"]["reward"] = 0.999
    compact.write_text(json.dumps(document), encoding="utf-8")
    assert read_outcome_log(compact).success.tolist() == [False, True, True, True]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["simulations"][1].pop("reward_info"), r"simulation 2: no reward_info.reward \(the simulation was "
                                                           r"not evaluated\)"),
        (lambda d: d["simulations"][2].update(task_id=None), "simulation 3: task_id null is not a non-empty string"),
        (lambda d: d["simulations"][3].update(trial=-1), "simulation 4: trial -1 is not a whole number >= 0"),
        (lambda d: d["simulations"][3].update(task_id="11"), "simulation 4: task '11' trial 0 appears twice "
                                                             r"\(simulations 1 and 4\)"),
        (lambda d: d.update(simulations={}), "expected an outcome log .* or tau2-bench results .*, got an object"),
    ],
)
def test_malformed_tau2_bench_outcomes_are_named(tmp_path: Path, change, message: str) -> None:
    document = json.loads(TAU2.read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    with pytest.raises(FileFormatError, match=f"results.json: {message}"):
        read_outcome_log(path)
