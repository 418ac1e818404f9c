"""similarity() and BehaviourMonitor on hand-built policies with known behaviour."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from simscore import Act, BehaviourMonitor, Response, similarity
from simscore.stats import Bootstrap

CONTEXTS = [SimpleNamespace(id=f"c{i}") for i in range(10)]


class Table:
    """Answers context i with acts[i] (a policy whose behaviour we set by hand)."""

    def __init__(self, acts):
        self.acts = [Act.parse(a) for a in acts]

    def respond(self, context):
        return Response(self.acts[int(context.id[1:])])


def test_similarity_summary():
    a = Table(["request(food)"] * 10)
    b = Table(["request(food)"] * 7 + ["request(area)"] * 2 + ["bye()"])
    summary = similarity(a, b, CONTEXTS, measures=("tmr", "dmr"))
    assert summary.loc["tmr", "mean"] == pytest.approx(0.7)
    assert summary.loc["dmr", "mean"] == pytest.approx(0.9)
    assert summary.loc["tmr", "count"] == 10


def test_monitor_converges_after_patience_and_resets_on_change():
    # ten contexts certify nothing: the patience logic is the same under both rules, shown with the point rule
    monitor = BehaviourMonitor(CONTEXTS, measures=("tmr",), threshold=0.85, patience=2, rule="point")
    learning = ["request(food)"] * 10
    assert monitor.update(Table(learning), 0) is None
    changed = ["request(area)"] * 5 + ["request(food)"] * 5
    assert monitor.update(Table(changed), 1).mean("tmr") == pytest.approx(0.5)
    assert monitor.stable_updates == 0 and not monitor.converged
    almost = ["request(area)"] * 4 + ["request(food)"] * 6  # 9 of 10 unchanged
    assert monitor.update(Table(almost), 2).mean("tmr") == pytest.approx(0.9)
    assert monitor.stable_updates == 1 and not monitor.converged
    monitor.update(Table(almost), 3)
    assert monitor.converged
    monitor.update(Table(learning), 4)  # a big change resets the count
    assert monitor.stable_updates == 0 and not monitor.converged
    history = monitor.history()
    assert history["step"].tolist() == [1, 2, 3, 4]
    assert history["previous_step"].tolist() == [0, 1, 2, 3]
    assert history["stable"].tolist() == [False, True, True, False]
    assert history["tmr"].round(2).tolist() == [0.5, 0.9, 1.0, 0.6]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"threshold": 1.5}, "threshold"), ({"patience": 0}, "patience"), ({"measures": ["tmrr"]}, "did you mean")],
)
def test_monitor_bad_arguments(kwargs, message):
    with pytest.raises((ValueError, KeyError), match=message):
        BehaviourMonitor(CONTEXTS, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"contexts": []}, ValueError, "contexts: the monitor needs at least one context, got an empty list"),
        ({"contexts": ()}, ValueError, "contexts: the monitor needs at least one context, got an empty tuple"),
        ({"contexts": [CONTEXTS[0], CONTEXTS[0]]}, ValueError,
         "contexts[1]: the id 'c0' appears twice (a snapshot keeps one response per context id)"),
        ({"contexts": [CONTEXTS[0], object()]}, TypeError, "contexts[1] must be a context (an object with a string "
                                                           "'id', e.g. contexts.Context), got object <object object at"),
        ({"contexts": "c0"}, TypeError, "contexts must be a ContextSet or an iterable of contexts (objects with an "
                                        "'id'), got str 'c0'"),
        ({"bootstrap": {"n_resamples": 5}}, TypeError,
         "BehaviourMonitor(): bootstrap must be a simscore.stats.Bootstrap, got dict"),
        ({"patience": 2.5}, ValueError, "patience must be an int, got float 2.5"),
        ({"patience": True}, ValueError, "patience must be an int, got bool True"),
        ({"threshold": float("nan")}, ValueError, "threshold must be a finite number, got nan"),
        ({"require_change": "no"}, TypeError, "require_change must be True or False, got str 'no'"),
    ],
)
def test_monitor_refuses_what_an_update_would_fail_on_when_it_is_built(kwargs, error, message):
    contexts = kwargs.pop("contexts", CONTEXTS)
    with pytest.raises(error) as info:
        BehaviourMonitor(contexts, **kwargs)
    assert str(info.value).startswith(message)


def test_monitor_needs_contexts_and_a_policy():
    with pytest.raises(ValueError, match="at least one context"):
        BehaviourMonitor([])
    monitor = BehaviourMonitor(CONTEXTS)
    with pytest.raises(TypeError, match="respond"):
        monitor.update(object(), 0)


def test_monitor_records_intervals_and_the_chance_level():
    baseline = Table(["bye()"] * 5 + ["request(food)"] * 5)
    monitor = BehaviourMonitor(CONTEXTS, measures=("tmr", "dmr"), baseline=baseline,
                               bootstrap=Bootstrap(n_resamples=200, seed=1))
    assert monitor.latest is None
    monitor.update(Table(["request(food)"] * 10), 0)
    monitor.update(Table(["request(food)"] * 8 + ["request(area)"] * 2), 1)
    row = monitor.latest
    assert row["tmr"] == pytest.approx(0.8) and row["dmr"] == pytest.approx(1.0)
    assert row["tmr_ci_low"] <= 0.8 <= row["tmr_ci_high"] and row["tmr_ci_high"] <= 1.0
    assert row["tmr_chance"] == pytest.approx(0.3) and row["dmr_chance"] == pytest.approx(0.5)
    assert list(monitor.history().columns) == [
        "step", "previous_step", "tmr", "tmr_ci_low", "tmr_ci_high", "tmr_cs_low", "tmr_chance",
        "dmr", "dmr_ci_low", "dmr_ci_high", "dmr_cs_low", "dmr_chance", "stable"]


def test_monitor_baseline_must_cover_the_contexts():
    from simscore import Responses

    with pytest.raises(ValueError, match="baseline: no response for 10 context"):
        BehaviourMonitor(CONTEXTS, baseline=Responses({"other": Table(["bye()"]).respond(SimpleNamespace(id="c0"))}))


def test_require_change_ignores_an_unchanging_start():
    constant = Table(["bye()"] * 10)
    monitor = BehaviourMonitor(CONTEXTS, measures=("tmr",), threshold=0.9, patience=2, require_change=True,
                               rule="point")
    for step in range(5):
        monitor.update(constant, step)
    assert monitor.stable_updates == 0 and not monitor.converged and not monitor.changed
    monitor.update(Table(["request(food)"] * 10), 5)  # learning takes hold
    monitor.update(Table(["request(food)"] * 10), 6)
    monitor.update(Table(["request(food)"] * 10), 7)
    assert monitor.changed and monitor.converged
    assert monitor.history()["stable"].tolist() == [True, True, True, True, False, True, True]


def test_require_change_by_default():
    never_changes = BehaviourMonitor(CONTEXTS, measures=("tmr",), patience=1)
    assert never_changes.require_change is True
    for step in range(3):
        never_changes.update(Table(["request(food)"] * 10), step)
    assert not never_changes.converged and never_changes.stable_updates == 0


@pytest.mark.extra("sb3")
def test_require_change_defaults_agree_with_the_sb3_callback():
    import inspect

    from simscore.integrations.sb3 import BehaviourConvergenceCallback

    monitor_default = inspect.signature(BehaviourMonitor).parameters["require_change"].default
    callback_default = inspect.signature(BehaviourConvergenceCallback).parameters["require_change"].default
    assert monitor_default is callback_default is True
