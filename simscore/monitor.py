"""Similarity inside training loops: :func:`similarity` and :class:`BehaviourMonitor`.

:func:`similarity` is the one-call form: run two policies on a context set and return the
summary of their comparison. :class:`BehaviourMonitor` watches one policy during training:
every ``update`` compares its current behaviour with the previous snapshot, and ``converged``
says whether every monitored measure has stayed within the tolerance ``1 − threshold`` for
``patience`` consecutive updates — a behavioural stopping criterion for RL loops. By default
each update's decision is anytime-valid (:mod:`simscore.stats.sequential`): checking at every update,
however often, declares a policy that still changes by more than the tolerance converged with
probability at most ``alpha``. Each update records the means with their bootstrap confidence
intervals, the sequential lower bound, given a ``baseline`` policy (a seeded random policy:
the chance level) how similar the current snapshot is to that baseline, and given a ``reference``
policy (the model before fine-tuning, a handcrafted policy) how similar it is to that reference,
with its interval. :meth:`BehaviourMonitor.scalars` gives an update's numbers as the flat keys a
training logger takes (the stable-baselines3 and Hugging Face callbacks of
:mod:`simscore.integrations` log them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from simscore.checks import check_bool, check_choice, check_int, check_level, check_number
from simscore.comparison import Comparison, compare
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.measures.action import DialogueActMatchRate, TotalMatchRate
from simscore.measures.base import Measure
from simscore.policy import Policy, check_contexts, run_policy
from simscore.responses import Responses
from simscore.stats import Bootstrap
from simscore.stats.sequential import RULES, similarity_lower_bound, spent_alpha

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
    return compare(a, b, measures, bootstrap=Bootstrap(seed=seed)).summary


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
        The tolerance: an update counts as stable when every measure's mean similarity is at
        least this — with ``rule="sequential"``, when its anytime-valid lower bound is.
    patience : int
        Number of consecutive stable updates after which ``converged`` is True.
    rule : {"sequential", "point"}
        ``"sequential"`` (default): update ``k`` is stable when every measure's lower
        confidence bound at level ``1 − alpha / (k (k + 1))`` (``<measure>_cs_low``) is at
        least ``threshold``. Null hypothesis ("not converged"): at one of the last
        ``patience`` updates the expected change (for TMR: the share of contexts whose action
        changed) exceeded ``1 − threshold``; the probability of ever declaring converged while
        it holds is at most ``alpha``, however many updates are made (assumptions and proof:
        :mod:`simscore.stats.sequential`). Needs ``threshold < 1`` and enough contexts: with 1,296
        contexts and TMR ≥ 0.99, a policy that changes 0.25 % of its actions per update is
        declared within 100 updates in 80 % of runs, one that changes 0.5 % in 3 %.
        ``"point"``: every measure's mean at or above ``threshold`` (the rule before simscore
        0.2.0). It declares a policy that changes 1.2 % of its actions per update converged
        within 100 updates in 58 % of runs (1,296 contexts, TMR ≥ 0.99, patience 3; see
        ``benchmarks/bench_monitor_rules.py``).
    alpha : float
        The false-"converged" level of the sequential rule, in (0, 1); default 0.05.
    baseline : Policy or Responses, optional
        The chance level: a policy (e.g. a seeded random policy) run once on ``contexts``, or
        its responses. Every update also compares the current snapshot with it, recorded as
        ``<measure>_chance`` in :meth:`history`.
    reference : Policy or Responses, optional
        A policy to stay close to (or move away from): run once on ``contexts``, or its
        responses. Every update compares the current snapshot with it, with a bootstrap interval:
        ``<measure>_reference``, ``<measure>_reference_ci_low``, ``<measure>_reference_ci_high``
        in :meth:`history`. It does not enter the stopping decision.
    require_change : bool
        Count stable updates only once the behaviour has changed at least once (some update
        below the threshold); default True, as in the stable-baselines3 callback. An untrained
        network often gives the same answer everywhere and keeps it until learning takes hold;
        without this, that start reads as converged. Pass False to watch a policy that may
        already be stable when monitoring starts.
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the confidence intervals (see :func:`~simscore.comparison.compare`; default
        ``Bootstrap()``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simscore import Act, Response
    >>> class Fixed:
    ...     def respond(self, context):
    ...         return Response(Act.parse("request(food)"))
    >>> contexts = [SimpleNamespace(id=f"c{i}") for i in range(2000)]
    >>> monitor = BehaviourMonitor(contexts, ("tmr", "dmr"), patience=2, require_change=False)
    >>> [monitor.update(Fixed(), step) is None for step in (1, 2, 3)]
    [True, False, False]
    >>> monitor.converged, monitor.stable_updates
    (True, 2)
    >>> monitor.history()[["step", "tmr", "tmr_cs_low", "stable"]].round(4).values.tolist()
    [[2, 1.0, 0.9982, True], [3, 1.0, 0.9976, True]]
    >>> list(monitor.history().columns)[:6]
    ['step', 'previous_step', 'tmr', 'tmr_ci_low', 'tmr_ci_high', 'tmr_cs_low']

    With 200 contexts nothing changing is no evidence that less than 1 % changes (the bound
    stays below 0.99); the point rule declares at once:

    >>> few = BehaviourMonitor(contexts[:200], ("tmr",), patience=2, require_change=False)
    >>> point = BehaviourMonitor(contexts[:200], ("tmr",), patience=2, require_change=False, rule="point")
    >>> for step in (1, 2, 3):
    ...     _, _ = few.update(Fixed(), step), point.update(Fixed(), step)
    >>> few.converged, point.converged
    (False, True)
    >>> never_changed = BehaviourMonitor(contexts, patience=2)  # require_change=True
    >>> for step in (1, 2, 3):
    ...     _ = never_changed.update(Fixed(), step)
    >>> never_changed.converged, never_changed.stable_updates
    (False, 0)
    """

    def __init__(
        self,
        contexts: Iterable[Any],
        measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
        *,
        threshold: float = 0.99,
        patience: int = 3,
        rule: str = "sequential",
        alpha: float = 0.05,
        baseline: Policy | Responses | None = None,
        require_change: bool = True,
        bootstrap: Bootstrap | None = None,
        reference: Policy | Responses | None = None,
    ) -> None:
        threshold = check_number("threshold", threshold, error=ValueError)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
        self.patience = check_int("patience", patience, minimum=1, error=ValueError)
        self.rule = check_choice("rule", rule, RULES)
        self.alpha = check_level("alpha", alpha, error=ValueError)
        if self.rule == "sequential" and threshold >= 1.0:
            raise ValueError("threshold=1.0 leaves the sequential rule no tolerance (no number of contexts shows that "
                             "nothing changes): use a threshold below 1, e.g. 0.99, or rule='point'")
        self.contexts = fixed_contexts(contexts, "the monitor")
        self.measures: Sequence[Measure] = resolve_measures(measures)
        self.threshold = threshold
        self.require_change = check_bool("require_change", require_change)
        self.changed = False
        self.bootstrap = Bootstrap.resolve(bootstrap, "BehaviourMonitor")
        self.stable_updates = 0
        self.baseline = self._fixed("baseline", baseline)
        self.reference = self._fixed("reference", reference)
        self._previous: Responses | None = None
        self._previous_step: Any = None
        self._rows: list[dict[str, Any]] = []

    def _fixed(self, what: str, policy: Policy | Responses | None) -> Responses | None:
        """A fixed comparison policy's responses on the contexts (run once), each context answered."""
        if policy is None:
            return None
        responses = policy if isinstance(policy, Responses) else run_policy(policy, self.contexts, name=what)
        missing = [c.id for c in self.contexts if c.id not in responses]
        if missing:
            raise ValueError(f"{what}: no response for {len(missing)} context(s), e.g. {missing[0]!r}")
        return responses

    @property
    def converged(self) -> bool:
        """True once ``patience`` consecutive updates were stable under ``rule`` (after the
        first change, with ``require_change``)."""
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
            row[f"{name}_cs_low"] = self._lower_bound(comparison, name, len(self._rows) + 1)
        if self.baseline is not None:
            # only the chance level's means are recorded: no bootstrap
            chance = compare(self.baseline.subset(current.ids), current, self.measures, bootstrap=Bootstrap(n_resamples=0))
            for name in chance.measures:
                row[f"{name}_chance"] = chance.mean(name)
        if self.reference is not None:
            reference = self._compare(self.reference.subset(current.ids), current)
            for name in reference.measures:
                stats = reference.summary.loc[name]
                for suffix, column in (("", "mean"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high")):
                    row[f"{name}_reference{suffix}"] = float(stats[column])
        within = all(row[name] >= self.threshold for name in comparison.measures)
        bound = "" if self.rule == "point" else "_cs_low"
        stable = all(row[f"{name}{bound}"] >= self.threshold for name in comparison.measures)
        # a change is seen in the means, whatever the rule: too few contexts to certify is no change
        self.changed = self.changed or not within
        counts = stable and (self.changed or not self.require_change)
        self.stable_updates = self.stable_updates + 1 if counts else 0
        row["stable"] = stable
        self._rows.append(row)
        return comparison

    @property
    def latest(self) -> dict[str, Any] | None:
        """The last row of :meth:`history` as a dict (None before the first comparison)."""
        return dict(self._rows[-1]) if self._rows else None

    def _lower_bound(self, comparison: Comparison, name: str, check: int) -> float:
        """The sequential lower bound of ``name``'s mean similarity at the ``check``-th comparison."""
        measure = next(m for m in self.measures if m.name == name)
        binary = isinstance(measure, (TotalMatchRate, DialogueActMatchRate))
        return similarity_lower_bound(comparison.scores[name].to_numpy(dtype=float), spent_alpha(self.alpha, check),
                                      bounds=measure.bounds, binary=binary)

    def _compare(self, a: Responses, b: Responses) -> Comparison:
        settings = self.bootstrap
        return compare(a, b, self.measures, bootstrap=settings)

    def history(self) -> pd.DataFrame:
        """One row per comparison with the previous snapshot.

        Columns: ``step``, ``previous_step``; per measure its mean, ``<measure>_ci_low`` and
        ``<measure>_ci_high`` (bootstrap interval of the mean), ``<measure>_cs_low`` (the
        sequential rule's lower bound: a confidence sequence, valid at every update at once,
        whichever ``rule`` decides) and, with a ``baseline``, ``<measure>_chance`` (the
        baseline vs the current snapshot); then ``stable`` (under ``rule``).
        """
        columns = ["step", "previous_step"]
        for m in self.measures:
            columns += [m.name, f"{m.name}_ci_low", f"{m.name}_ci_high", f"{m.name}_cs_low"]
            if self.baseline is not None:
                columns.append(f"{m.name}_chance")
            if self.reference is not None:
                columns += [f"{m.name}_reference", f"{m.name}_reference_ci_low", f"{m.name}_reference_ci_high"]
        columns.append("stable")
        return pd.DataFrame(self._rows, columns=columns)

    def scalars(self, prefix: str = "behaviour") -> dict[str, float]:
        """The last update's numbers as flat ``<prefix>/<column>`` keys, for a training logger.

        Every numeric column of the last :meth:`history` row (a measure's mean, its intervals, its
        sequential bound, its chance level, its similarity to the reference), then
        ``<prefix>/stable_checks`` (:attr:`stable_updates`); empty before the first comparison.
        The stable-baselines3 and Hugging Face callbacks log exactly these.

        >>> from types import SimpleNamespace
        >>> from simscore import Act, Response
        >>> class Fixed:
        ...     def respond(self, context):
        ...         return Response(Act.parse("request(food)"))
        >>> monitor = BehaviourMonitor([SimpleNamespace(id=f"c{i}") for i in range(5)], ("tmr",), rule="point")
        >>> monitor.scalars()
        {}
        >>> _ = monitor.update(Fixed(), 10), monitor.update(Fixed(), 20)
        >>> for key, value in monitor.scalars("behaviour").items():
        ...     print(key, round(value, 4))
        behaviour/tmr 1.0
        behaviour/tmr_ci_low 1.0
        behaviour/tmr_ci_high 1.0
        behaviour/tmr_cs_low 0.4782
        behaviour/stable_checks 0.0

        (5 of 5 actions unchanged: the one-sided Clopper-Pearson bound at level 0.05 / (1 · 2) is
        0.025 ** (1 / 5) = 0.4782.)
        """
        row = self.latest
        if row is None:
            return {}
        prefix = prefix.rstrip("/")
        values = {f"{prefix}/{key}": float(value) for key, value in row.items()
                  if key not in ("step", "previous_step", "stable")}
        values[f"{prefix}/stable_checks"] = float(self.stable_updates)
        return values
