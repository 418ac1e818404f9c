"""The monitor's anytime-valid rule: its bounds against closed forms, its error rate by simulation, the monitor itself."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from simscore import Act, BehaviourMonitor, Response
from simscore.stats import Bootstrap
from simscore.stats.sequential import change_upper_bound, similarity_lower_bound, simulate_monitor, spent_alpha

N = 1296  # C_gen


def test_spent_alpha_adds_up_to_alpha():
    spends = [spent_alpha(0.05, k) for k in range(1, 100_001)]
    assert spends[:3] == pytest.approx([0.025, 0.05 / 6, 0.05 / 12])
    assert sum(spends) == pytest.approx(0.05 * (1 - 1 / 100_001))
    with pytest.raises(ValueError, match="check must be >= 1, got 0"):
        spent_alpha(0.05, 0)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 1.0"):
        spent_alpha(1.0, 1)


@pytest.mark.parametrize(("changes", "n", "level"), [(0, 1296, 0.025), (3, 1296, 0.004), (12, 1296, 1e-5),
                                                     (5, 40, 0.01), (39, 40, 0.2)])
def test_binary_bound_is_clopper_pearson(changes, n, level):
    bound = float(change_upper_bound(changes, n, level))
    assert binom.cdf(changes, n, bound) == pytest.approx(level, rel=1e-6)  # the definition
    two_sided = binomtest(changes, n).proportion_ci(confidence_level=1 - 2 * level, method="exact")
    assert bound == pytest.approx(two_sided.high, rel=1e-9)
    assert float(change_upper_bound(n, n, level)) == 1.0


@pytest.mark.parametrize(("mean", "n", "level"), [(0.0, 1296, 0.025), (0.004, 1296, 0.001), (0.3, 50, 0.05)])
def test_bounded_bound_solves_the_chernoff_equation(mean, n, level):
    bound = float(change_upper_bound(mean * n, n, level, binary=False))
    kl = (mean * math.log(mean / bound) if mean else 0.0) + (1 - mean) * math.log((1 - mean) / (1 - bound))
    assert bound > mean and n * kl == pytest.approx(math.log(1 / level), rel=1e-9)
    assert float(change_upper_bound(n, n, level, binary=False)) == 1.0


def test_bounded_bound_holds_its_level_for_scores_between_the_ends():
    # changes in [0, 1] with mean exactly the tolerance (Beta(1, 99): mean 0.01): the bound falls to 0.01
    # or below in at most `level` of the samples
    rng = np.random.default_rng(7)
    changes = rng.beta(1.0, 99.0, size=(4000, 300))
    bounds = change_upper_bound(changes.sum(axis=1), 300, 0.05, binary=False)
    assert np.mean(bounds <= 0.01) <= 0.05


def test_similarity_lower_bound_maps_the_measure_range():
    assert similarity_lower_bound([1.0] * N, 0.025, binary=True) == pytest.approx(1 - (1 - 0.025 ** (1 / N)))
    # a cosine in [-1, 1]: a change of (1 - s) / 2
    cos = similarity_lower_bound([1.0] * 99 + [0.0], 0.05, bounds=(-1.0, 1.0))
    assert cos == pytest.approx(1 - 2 * float(change_upper_bound(0.5, 100, 0.05, binary=False)))
    # CER without clip has no lower end: a negative score counts as a full change (as clipped at 0)
    assert similarity_lower_bound([1.0] * 99 + [-3.0], 0.05, bounds=(-np.inf, 1.0)) == pytest.approx(
        similarity_lower_bound([1.0] * 99 + [0.0], 0.05))
    assert similarity_lower_bound([1.0, math.nan], 0.05, binary=True) == similarity_lower_bound([1.0], 0.05, binary=True)
    assert math.isnan(similarity_lower_bound([math.nan], 0.05))
    with pytest.raises(ValueError, match=r"bounds: the upper end must be finite, got \(0.0, inf\)"):
        similarity_lower_bound([1.0], 0.05, bounds=(0.0, math.inf))


@pytest.mark.parametrize(
    ("rates", "volatile", "point_at_least", "sequential_at_most"),
    [
        ([0.012] * 60, False, 0.35, 0.0),  # 1.2 x the tolerance at every check
        ([0.010] * 60, False, 0.95, 0.05),  # exactly the tolerance: the boundary of the null
        ([0.011] * 60, True, 0.2, 0.05),  # the same contexts flip back and forth (1 in 400 certified: a lucky sample)
    ],
)
def test_repeated_checks_declare_an_unconverged_policy_under_the_point_rule_only(rates, volatile, point_at_least,
                                                                                  sequential_at_most):
    sim = simulate_monitor(rates, N, threshold=0.99, patience=3, replications=400, seed=3, volatile=volatile)
    assert sim.rate("point") >= point_at_least
    assert sim.rate("sequential") <= sequential_at_most
    # the old rule's error grows with the checks, unless every check sees the same changes
    assert (sim.rate("point", within=5) < sim.rate("point")) is not volatile


def test_simulation_golden_values_and_power():
    unconverged = simulate_monitor([0.012] * 100, N, replications=500, seed=0)
    assert (unconverged.rate("point"), unconverged.rate("sequential")) == (0.546, 0.0)
    converged = simulate_monitor([0.0025] * 100, N, replications=500, seed=0)
    assert (converged.rate("point"), converged.rate("sequential")) == (1.0, 0.78)
    assert converged.median_check("point") == converged.median_check("sequential") == 3.0
    late = simulate_monitor([0.05] * 20 + [0.0] * 40, N, replications=200, seed=0)  # converges at check 21
    assert late.median_check("sequential") == 23.0 and late.rate("sequential") == 1.0
    assert math.isnan(simulate_monitor([0.02] * 10, N, replications=10).median_check("point"))


def test_simulate_monitor_refuses_bad_rates():
    with pytest.raises(ValueError, match=r"change_rates must be a non-empty list of probabilities in \[0, 1\]"):
        simulate_monitor([0.1, 1.5], N)
    with pytest.raises(ValueError, match="n_contexts must be >= 1, got 0"):
        simulate_monitor([0.1], 0)


class Drifting:
    """Answers context i with request(food) or, once flipped, request(area): a policy whose changes we set."""

    ANSWERS = (Response(Act.parse("request(food)")), Response(Act.parse("request(area)")))

    def __init__(self, flipped):
        self.flipped = flipped

    def respond(self, context):
        return self.ANSWERS[int(self.flipped[int(context.id[1:])])]


CONTEXTS = [SimpleNamespace(id=f"c{i}") for i in range(N)]


def _run(rule, rate, checks, seed=6):
    rng = np.random.default_rng(seed)
    monitor = BehaviourMonitor(CONTEXTS, ("tmr",), threshold=0.99, patience=3, require_change=False, rule=rule,
                               bootstrap=Bootstrap(n_resamples=0))
    flipped = np.zeros(N, dtype=bool)
    for step in range(checks + 1):
        flipped ^= rng.random(N) < rate  # each context's action changes with probability `rate`
        monitor.update(Drifting(flipped.copy()), step)
        if monitor.converged:
            break
    return monitor


def test_the_monitor_decides_as_the_simulation():
    # 1.1 % of the actions change at every update: the point rule stops at the 7th, the sequential one never
    point, sequential = _run("point", 0.011, 12), _run("sequential", 0.011, 12)
    assert point.converged and len(point.history()) == 7
    assert not sequential.converged and len(sequential.history()) == 12
    history = sequential.history()
    changes = np.rint((1 - history["tmr"]) * N).astype(int)
    levels = [spent_alpha(0.05, k) for k in range(1, 13)]
    assert history["tmr_cs_low"].to_numpy() == pytest.approx(1 - change_upper_bound(changes, N, levels))
    assert history["stable"].tolist() == (history["tmr_cs_low"] >= 0.99).tolist()
    # nothing changes: declared at the third comparison, as the simulation says
    still = _run("sequential", 0.0, 10)
    assert still.converged and still.history()["step"].tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rule": "bayes"}, "rule must be one of 'sequential', 'point', got 'bayes'"),
        ({"alpha": 0.0}, "alpha must be in (0, 1), got 0.0"),
        ({"threshold": 1.0}, "threshold=1.0 leaves the sequential rule no tolerance"),
    ],
)
def test_monitor_refuses_a_rule_it_cannot_apply(kwargs, message):
    with pytest.raises(ValueError) as info:
        BehaviourMonitor(CONTEXTS[:5], **kwargs)
    assert str(info.value).startswith(message)
    BehaviourMonitor(CONTEXTS[:5], threshold=1.0, rule="point")  # the point rule takes any threshold


@pytest.mark.extra("sb3")
def test_the_sb3_callback_decides_with_the_monitor_defaults():
    import inspect

    from simscore.integrations.sb3 import BehaviourConvergenceCallback

    monitor, callback = (inspect.signature(f).parameters for f in (BehaviourMonitor, BehaviourConvergenceCallback))
    assert monitor["rule"].default == callback["rule"].default == "sequential"
    assert monitor["alpha"].default == callback["alpha"].default == 0.05
    with pytest.raises(ValueError, match="rule must be one of 'sequential', 'point', got 'anytime'"):
        BehaviourConvergenceCallback(CONTEXTS[:5], rule="anytime")
