"""Similarity inside training loops: :func:`similarity` and :class:`BehaviourMonitor`.

:func:`similarity` is the one-call form: run two policies on a context set and return the
summary of their comparison. :class:`BehaviourMonitor` watches one policy during training:
every ``update`` compares its current behaviour with the previous snapshot, and ``converged``
says whether every monitored measure has stayed at or above a threshold for ``patience``
consecutive updates — a behavioural stopping criterion for RL loops. Each update records the
means with their bootstrap confidence intervals and, given a ``baseline`` policy (a seeded
random policy: the chance level), how similar the current snapshot is to that baseline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from simscore.checks import check_bool, check_int, check_number
from simscore.compare import Comparison, compare
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.measures.base import Measure
from simscore.policy import Policy, check_contexts, run_policy
from simscore.responses import Responses
from simscore.stats import Bootstrap

__all__ = ["similarity", "BehaviourMonitor", "fixed_contexts"]


def similarity(
    policy_a: Policy,
    policy_b: Policy,
    contexts: Iterable[Any],
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    seed: int = 0,
) -> pd.DataFrame:
    """Run both policies on ``contexts`` and return the comparison summary.

    ``measures`` defaults to :data:`~simscore.measures.DEFAULT_MEASURES` (the four action
    measures, no model needed); ``"all"`` gives all eight.

    Returns
    -------
    pandas.DataFrame
        One row per measure: mean, count, missing, ci_low, ci_high.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simscore import Act, Response
    >>> class Fixed:
    ...     def __init__(self, act):
    ...         self.act = Act.parse(act)
    ...     def respond(self, context):
    ...         return Response(self.act)
    >>> ctx = [SimpleNamespace(id=f"c{i}") for i in range(3)]
    >>> similarity(Fixed("request(food)"), Fixed("request(area)"), ctx, ("tmr", "dmr"))["mean"].tolist()
    [0.0, 1.0]
    """
    items = list(contexts)
    a = run_policy(policy_a, items, name="a")
    b = run_policy(policy_b, items, name="b")
    return compare(a, b, measures, seed=seed).summary


def fixed_contexts(contexts: Iterable[Any], who: str) -> list[Any]:
    """``contexts`` as a list, checked once: at least one, each with a string ``id``, no id twice.

    A monitor answers the same contexts at every update, so a bad set is refused when ``who``
    is built, not at its first update (or, in a training callback, once training has run).

    >>> fixed_contexts([], "the monitor")
    Traceback (most recent call last):
    ...
    ValueError: contexts: the monitor needs at least one context, got an empty list
    """
    items = list(check_contexts(contexts))
    if not items:
        raise ValueError(f"contexts: {who} needs at least one context, got an empty {type(contexts).__name__}")
    seen: set[str] = set()
    for position, context in enumerate(items):
        if context.id in seen:
            raise ValueError(f"contexts[{position}]: the id {context.id!r:.60} appears twice (a snapshot keeps one "
                             "response per context id)")
        seen.add(context.id)
    return items


class BehaviourMonitor:
    """Track how much a policy's behaviour still changes between training steps.

    Parameters
    ----------
    contexts : iterable
        The fixed context set (objects with an ``id``), e.g. a ``contexts.ContextSet``.
    measures : names or Measure objects
        Measures to watch; default :data:`~simscore.measures.DEFAULT_MEASURES`, the four
        action measures (no model needed, so an update costs milliseconds).
    threshold : float
        Every measure's mean must be at least this for an update to count as stable.
    patience : int
        Number of consecutive stable updates after which ``converged`` is True.
    baseline : Policy or Responses, optional
        The chance level: a policy (e.g. a seeded random policy) run once on ``contexts``, or
        its responses. Every update also compares the current snapshot with it, recorded as
        ``<measure>_chance`` in :meth:`history`.
    require_change : bool
        Count stable updates only once the behaviour has changed at least once (some update
        below the threshold); default True, as in the stable-baselines3 callback. An untrained
        network often gives the same answer everywhere and keeps it until learning takes hold;
        without this, that start reads as converged. Pass False to watch a policy that may
        already be stable when monitoring starts.
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the confidence intervals (see :func:`~simscore.compare.compare`; default
        ``Bootstrap()``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simscore import Act, Response
    >>> class Fixed:
    ...     def respond(self, context):
    ...         return Response(Act.parse("request(food)"))
    >>> monitor = BehaviourMonitor([SimpleNamespace(id="c1")], patience=2, require_change=False)
    >>> [monitor.update(Fixed(), step) is None for step in (1, 2, 3)]
    [True, False, False]
    >>> monitor.converged, monitor.stable_updates
    (True, 2)
    >>> never_changed = BehaviourMonitor([SimpleNamespace(id="c1")], patience=2)  # require_change=True
    >>> for step in (1, 2, 3):
    ...     _ = never_changed.update(Fixed(), step)
    >>> never_changed.converged, never_changed.stable_updates
    (False, 0)
    >>> monitor.history()[["step", "tmr", "dmr", "stable"]].values.tolist()
    [[2, 1.0, 1.0, True], [3, 1.0, 1.0, True]]
    >>> list(monitor.history().columns)[:5]
    ['step', 'previous_step', 'tmr', 'tmr_ci_low', 'tmr_ci_high']
    """

    def __init__(
        self,
        contexts: Iterable[Any],
        measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
        *,
        threshold: float = 0.99,
        patience: int = 3,
        baseline: Policy | Responses | None = None,
        require_change: bool = True,
        bootstrap: Bootstrap | None = None,
    ) -> None:
        threshold = check_number("threshold", threshold, error=ValueError)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
        self.patience = check_int("patience", patience, minimum=1, error=ValueError)
        self.contexts = fixed_contexts(contexts, "the monitor")
        self.measures: Sequence[Measure] = resolve_measures(measures)
        self.threshold = threshold
        self.require_change = check_bool("require_change", require_change)
        self.changed = False
        self.bootstrap = Bootstrap.resolve(bootstrap, "BehaviourMonitor")
        self.stable_updates = 0
        self.baseline: Responses | None = None
        if baseline is not None:
            self.baseline = baseline if isinstance(baseline, Responses) else run_policy(baseline, self.contexts)
            missing = [c.id for c in self.contexts if c.id not in self.baseline]
            if missing:
                raise ValueError(f"baseline: no response for {len(missing)} context(s), e.g. {missing[0]!r}")
        self._previous: Responses | None = None
        self._previous_step: Any = None
        self._rows: list[dict[str, Any]] = []

    @property
    def converged(self) -> bool:
        """True once ``patience`` consecutive updates were all at or above the threshold
        (after the first change, with ``require_change``)."""
        return self.stable_updates >= self.patience

    @property
    def snapshot(self) -> Responses | None:
        """The responses recorded at the last update."""
        return self._previous

    def update(self, policy: Policy, step: Any) -> Comparison | None:
        """Snapshot ``policy`` and compare it with the previous snapshot.

        Returns
        -------
        Comparison or None
            The comparison previous → current; None at the first update (nothing to compare).
        """
        current = run_policy(policy, self.contexts, name=f"step {step}")
        previous, previous_step = self._previous, self._previous_step
        self._previous, self._previous_step = current, step
        if previous is None:
            return None
        comparison = self._compare(previous, current)
        row: dict[str, Any] = {"step": step, "previous_step": previous_step}
        for name in comparison.measures:
            stats = comparison.summary.loc[name]
            row[name] = float(stats["mean"])
            row[f"{name}_ci_low"] = float(stats["ci_low"])
            row[f"{name}_ci_high"] = float(stats["ci_high"])
        if self.baseline is not None:
            # only the chance level's means are recorded: no bootstrap
            chance = compare(self.baseline.subset(current.ids), current, self.measures, n_resamples=0)
            for name in chance.measures:
                row[f"{name}_chance"] = chance.mean(name)
        stable = all(row[name] >= self.threshold for name in comparison.measures)
        self.changed = self.changed or not stable
        counts = stable and (self.changed or not self.require_change)
        self.stable_updates = self.stable_updates + 1 if counts else 0
        row["stable"] = stable
        self._rows.append(row)
        return comparison

    @property
    def latest(self) -> dict[str, Any] | None:
        """The last row of :meth:`history` as a dict (None before the first comparison)."""
        return dict(self._rows[-1]) if self._rows else None

    def _compare(self, a: Responses, b: Responses) -> Comparison:
        settings = self.bootstrap
        return compare(a, b, self.measures, n_resamples=settings.n_resamples, confidence=settings.confidence,
                       seed=settings.seed)

    def history(self) -> pd.DataFrame:
        """One row per comparison with the previous snapshot.

        Columns: ``step``, ``previous_step``; per measure its mean, ``<measure>_ci_low`` and
        ``<measure>_ci_high`` (bootstrap interval of the mean) and, with a ``baseline``,
        ``<measure>_chance`` (the baseline vs the current snapshot); then ``stable``.
        """
        columns = ["step", "previous_step"]
        for m in self.measures:
            columns += [m.name, f"{m.name}_ci_low", f"{m.name}_ci_high"]
            if self.baseline is not None:
                columns.append(f"{m.name}_chance")
        columns.append("stable")
        return pd.DataFrame(self._rows, columns=columns)
