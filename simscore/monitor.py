"""Similarity inside training loops: :func:`similarity` and :class:`BehaviourMonitor`.

:func:`similarity` is the one-call form: run two policies on a context set and return the
summary of their comparison. :class:`BehaviourMonitor` watches one policy during training:
every ``update`` compares its current behaviour with the previous snapshot, and ``converged``
says whether every monitored measure has stayed at or above a threshold for ``patience``
consecutive updates — a behavioural stopping criterion for RL loops.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from simscore.compare import Comparison, compare
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.measures.base import Measure
from simscore.policy import Policy, run_policy
from simscore.responses import Responses

__all__ = ["similarity", "BehaviourMonitor"]


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

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simscore import Act, Response
    >>> class Fixed:
    ...     def respond(self, context):
    ...         return Response(Act.parse("request(food)"))
    >>> monitor = BehaviourMonitor([SimpleNamespace(id="c1")], patience=2)
    >>> [monitor.update(Fixed(), step) is None for step in (1, 2, 3)]
    [True, False, False]
    >>> monitor.converged, monitor.stable_updates
    (True, 2)
    >>> monitor.history()[["step", "tmr", "dmr", "stable"]].values.tolist()
    [[2, 1.0, 1.0, True], [3, 1.0, 1.0, True]]
    """

    def __init__(
        self,
        contexts: Iterable[Any],
        measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
        *,
        threshold: float = 0.99,
        patience: int = 3,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
        if patience < 1:
            raise ValueError(f"patience must be at least 1, got {patience!r}")
        self.contexts = list(contexts)
        if not self.contexts:
            raise ValueError("contexts: the monitor needs at least one context")
        self.measures: Sequence[Measure] = resolve_measures(measures)
        self.threshold = float(threshold)
        self.patience = int(patience)
        self.stable_updates = 0
        self._previous: Responses | None = None
        self._previous_step: Any = None
        self._rows: list[dict[str, Any]] = []

    @property
    def converged(self) -> bool:
        """True once ``patience`` consecutive updates were all at or above the threshold."""
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
        comparison = compare(previous, current, self.measures)
        means = {name: comparison.mean(name) for name in comparison.measures}
        stable = all(value >= self.threshold for value in means.values())
        self.stable_updates = self.stable_updates + 1 if stable else 0
        self._rows.append({"step": step, "previous_step": previous_step, **means, "stable": stable})
        return comparison

    def history(self) -> pd.DataFrame:
        """One row per comparison: step, previous step, each measure's mean, stable flag."""
        columns = ["step", "previous_step", *(m.name for m in self.measures), "stable"]
        return pd.DataFrame(self._rows, columns=columns)
