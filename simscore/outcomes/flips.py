"""Outcome flips: whether a difference in behaviour changes how the dialogue ends.

Two policies that act differently at a context may or may not serve the user differently. Given
paired outcomes — the same context and the same simulated user (common random numbers) once
continued with a *baseline* and once with a *candidate* — :func:`outcome_flips` says, separately
for the pairs where the two acted differently at the context and, as the control, where they
acted alike:

* the **negative flip rate**: the share of pairs where the baseline's continuation succeeds and
  the candidate's fails (Yan et al. 2021's negative flips); the **positive flip rate**, the
  other way round;
* the **benign churn rate**: the share of pairs whose outcome does not change at all (the same
  success, number of turns, interaction quality and reward);
* the mean differences (candidate − baseline) of reward, turns and interaction quality;
* 95 % percentile-bootstrap intervals of all of these from one shared set of resamples that
  move whole clusters (the dialogues the contexts were collected from:
  :func:`simscore.stats.bootstrap_ci_shared`);
* McNemar's exact test of the success pairs: under no difference the ``b`` negative and ``c``
  positive flips split as ``Binomial(b + c, 1/2)`` (:func:`scipy.stats.binomtest`). It treats
  the pairs as independent; the cluster-bootstrap intervals are the ones that account for pairs
  from one dialogue (and for several continuations of one context).

:func:`flip_decomposition` compares three replays of every context (:mod:`policies.sim.replay`
makes them): (a) the baseline throughout, (b) the candidate throughout, (c) the baseline's
action at the context and the candidate afterwards. (a) → (b) is the total effect; (c) → (b)
differs in the one action at the context and nothing else (the *action* effect); (a) → (c)
differs in the policy after it (the *after* effect).

This module knows nothing of contexts or policies: it takes plain arrays.

Examples
--------
>>> a = Outcomes(success=[1, 1, 0, 1, 1], reward=[15, 14, -6, 16, 15], turns=[5, 6, 6, 4, 5], iq=[4, 4, 2, 5, 4])
>>> b = Outcomes(success=[0, 1, 1, 1, 1], reward=[-8, 14, 13, 16, 15], turns=[8, 6, 7, 4, 5], iq=[3, 4, 3, 5, 4])
>>> table = outcome_flips(a, b, differ=[True, True, True, False, False], bootstrap=Bootstrap(n_resamples=200))
>>> table.differ.negative_flip_rate.value, table.differ.positive_flip_rate.value
(0.3333333333333333, 0.3333333333333333)
>>> table.differ.benign_churn_rate.value, table.agree.benign_churn_rate.value, table.differ.mcnemar.p_value
(0.3333333333333333, 1.0, 1.0)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from simscore.errors import MissingValueWarning
from simscore.stats import Bootstrap, bootstrap_ci_shared, format_interval, warn_undefined_intervals

if TYPE_CHECKING:
    import pandas

__all__ = [
    "GROUPS",
    "Outcomes",
    "Estimate",
    "McNemar",
    "FlipSummary",
    "FlipTable",
    "FlipDecomposition",
    "mcnemar_exact",
    "outcome_flips",
    "flip_decomposition",
]

#: The two groups of pairs: the policies acted differently at the context, or alike (the control).
GROUPS = ("differ", "agree")
#: The rates and mean differences of a :class:`FlipSummary`, in table order.
_QUANTITIES = ("negative_flip_rate", "positive_flip_rate", "benign_churn_rate", "reward_difference",
               "turns_difference", "iq_difference")


def _column(name: str, values: Any, *, dtype: Any) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per pair), got shape {array.shape}")
    if dtype is bool:
        if array.dtype != bool and not (array.size == 0 or np.isin(array, (0, 1)).all()):
            raise ValueError(f"{name} must hold booleans (or 0/1), got {array[~np.isin(array, (0, 1))][0]!r}")
        out = array.astype(bool)
    else:
        try:
            out = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers, got dtype {array.dtype}") from None
        if np.isinf(out).any():
            raise ValueError(f"{name} holds an infinite value")
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Outcomes:
    """How the dialogues of one arm ended: one value per pair, arrays of one length (read-only).

    Parameters
    ----------
    success : array-like of bool, shape (n,)
    reward : array-like of float, shape (n,)
        The dialogue's return (e.g. ``20 * success - T``).
    turns : array-like of float, shape (n,)
    iq : array-like of float, shape (n,), optional
        Interaction quality; NaN where the world does not estimate it (default: all NaN).

    Raises
    ------
    ValueError
        Arrays of other lengths or dimensions, a success that is not boolean, a NaN reward or
        turn count, an infinite value.
    """

    success: np.ndarray
    reward: np.ndarray
    turns: np.ndarray
    iq: np.ndarray = field(default_factory=lambda: np.empty(0))

    def __post_init__(self) -> None:
        success = _column("success", self.success, dtype=bool)
        n = len(success)
        iq = np.full(n, np.nan) if np.asarray(self.iq).size == 0 and n else self.iq
        columns = {"success": success, "reward": _column("reward", self.reward, dtype=float),
                   "turns": _column("turns", self.turns, dtype=float), "iq": _column("iq", iq, dtype=float)}
        for name, column in columns.items():
            if len(column) != n:
                raise ValueError(f"{name} has {len(column)} values, success {n}: one value per pair in every column")
            if name in ("reward", "turns") and np.isnan(column).any():
                raise ValueError(f"{name} holds NaN at pair {int(np.flatnonzero(np.isnan(column))[0])}")
            object.__setattr__(self, name, column)

    def __len__(self) -> int:
        return len(self.success)


@dataclass(frozen=True)
class Estimate:
    """A rate or mean difference with its bootstrap interval (NaN bounds: undefined)."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.4f} {format_interval(self.low, self.high)}"


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test of paired successes.

    Attributes
    ----------
    negative : int
        Discordant pairs where the baseline succeeds and the candidate fails.
    positive : int
        Discordant pairs where the candidate succeeds and the baseline fails.
    p_value : float
        Two-sided exact p-value, ``binomtest(negative, negative + positive, 0.5)``; 1 without
        a discordant pair.
    """

    negative: int
    positive: int
    p_value: float


def mcnemar_exact(negative: int, positive: int) -> McNemar:
    """McNemar's exact test from the two counts of discordant pairs.

    Under no difference each discordant pair is a negative flip with probability 1/2; the
    two-sided p-value is ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``.

    >>> mcnemar_exact(3, 1).p_value  # 2 * (1 + 4) / 16
    0.625
    >>> mcnemar_exact(0, 0).p_value, mcnemar_exact(6, 0).p_value  # 2 / 64
    (1.0, 0.03125)
    """
    negative, positive = int(negative), int(positive)
    if negative < 0 or positive < 0:
        raise ValueError(f"counts of discordant pairs must be >= 0, got {negative} and {positive}")
    if negative + positive == 0:
        return McNemar(0, 0, 1.0)
    from scipy.stats import binomtest

    return McNemar(negative, positive, float(binomtest(negative, negative + positive, 0.5).pvalue))


@dataclass(frozen=True)
class FlipSummary:
    """The flips of one group of pairs (:data:`GROUPS`).

    Attributes
    ----------
    group : str
        ``"differ"`` or ``"agree"``.
    pairs : int
        Pairs in the group.
    units : int
        Resampling units (clusters) the pairs fall in.
    negative_flip_rate, positive_flip_rate, benign_churn_rate : Estimate
        Shares of the group's pairs (NaN for an empty group).
    reward_difference, turns_difference, iq_difference : Estimate
        Mean of candidate − baseline over the group's pairs (IQ over the pairs with both IQs).
    mcnemar : McNemar
    """

    group: str
    pairs: int
    units: int
    negative_flip_rate: Estimate
    positive_flip_rate: Estimate
    benign_churn_rate: Estimate
    reward_difference: Estimate
    turns_difference: Estimate
    iq_difference: Estimate
    mcnemar: McNemar

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-ready row: every quantity with ``_low`` and ``_high``, the McNemar counts and p."""
        row: dict[str, Any] = {"group": self.group, "pairs": self.pairs, "units": self.units}
        for name in _QUANTITIES:
            estimate: Estimate = getattr(self, name)
            row.update({name: estimate.value, f"{name}_low": estimate.low, f"{name}_high": estimate.high})
        row.update({"mcnemar_negative": self.mcnemar.negative, "mcnemar_positive": self.mcnemar.positive,
                    "mcnemar_p": self.mcnemar.p_value})
        return row


@dataclass(frozen=True)
class FlipTable:
    """:func:`outcome_flips` of one baseline → candidate comparison.

    Attributes
    ----------
    baseline, candidate : str
        Their names.
    differ, agree : FlipSummary
        The pairs where the two acted differently at the context, and the control.
    unit : str
        What one resampling unit is (``"dialogues"``, ``"clusters"``, ``"pairs"``).
    bootstrap : Bootstrap
    """

    baseline: str
    candidate: str
    differ: FlipSummary
    agree: FlipSummary
    unit: str
    bootstrap: Bootstrap

    def to_records(self) -> list[dict[str, Any]]:
        """One flat row per group, led by the names and the unit (JSON-ready)."""
        lead = {"baseline": self.baseline, "candidate": self.candidate, "unit": self.unit}
        return [{**lead, **summary.to_dict()} for summary in (self.differ, self.agree)]

    def to_frame(self) -> pandas.DataFrame:
        """:meth:`to_records` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.to_records())

    def __str__(self) -> str:
        lines = [f"{self.baseline} -> {self.candidate} (intervals: {self.bootstrap.confidence:.0%}, "
                 f"{self.unit} resampled)"]
        for s in (self.differ, self.agree):
            lines.append(f"  {s.group}: {s.pairs} pairs in {s.units} {self.unit}; negative flips "
                         f"{s.negative_flip_rate}, positive {s.positive_flip_rate}, benign churn "
                         f"{s.benign_churn_rate}; reward {s.reward_difference}, turns {s.turns_difference}, "
                         f"IQ {s.iq_difference}; McNemar {s.mcnemar.negative}:{s.mcnemar.positive} "
                         f"p={s.mcnemar.p_value:.4g}")
        return "\n".join(lines)


def _group_columns(baseline: Outcomes, candidate: Outcomes, member: np.ndarray) -> dict[str, np.ndarray]:
    """Per pair: the indicators and differences of every quantity, NaN outside ``member``."""
    same = ((baseline.success == candidate.success) & (baseline.turns == candidate.turns)
            & (baseline.reward == candidate.reward)
            & ((baseline.iq == candidate.iq) | (np.isnan(baseline.iq) & np.isnan(candidate.iq))))
    values = {
        "negative_flip_rate": (baseline.success & ~candidate.success).astype(np.float64),
        "positive_flip_rate": (~baseline.success & candidate.success).astype(np.float64),
        "benign_churn_rate": same.astype(np.float64),
        "reward_difference": candidate.reward - baseline.reward,
        "turns_difference": candidate.turns - baseline.turns,
        "iq_difference": candidate.iq - baseline.iq,
    }
    return {name: np.where(member, column, np.nan) for name, column in values.items()}


def _summary(group: str, baseline: Outcomes, candidate: Outcomes, member: np.ndarray, units: np.ndarray,
             bootstrap: Bootstrap) -> tuple[FlipSummary, bool]:
    """The group's summary, and whether its intervals rest on one unit (undefined)."""
    columns = _group_columns(baseline, candidate, member)
    pairs = int(member.sum())
    n_units = len(np.unique(units[member]))
    if bootstrap.n_resamples and pairs:
        intervals = bootstrap_ci_shared(columns, np.arange(len(member)), n_resamples=bootstrap.n_resamples,
                                        confidence=bootstrap.confidence, seed=bootstrap.seed, clusters=units)
    else:
        intervals = {name: (math.nan, math.nan) for name in columns}
    estimates = {}
    undefined = False
    for name, column in columns.items():
        present = column[~np.isnan(column)]
        value = float(present.mean()) if present.size else math.nan
        low, high = intervals[name]
        undefined |= bool(present.size and np.isnan(low) and bootstrap.n_resamples)
        estimates[name] = Estimate(value, float(low), float(high))
    test = mcnemar_exact(int((baseline.success & ~candidate.success & member).sum()),
                         int((~baseline.success & candidate.success & member).sum()))
    return FlipSummary(group, pairs, n_units, mcnemar=test, **estimates), undefined


def outcome_flips(
    baseline: Outcomes,
    candidate: Outcomes,
    *,
    differ: Sequence[bool] | np.ndarray,
    clusters: Sequence[int] | np.ndarray | None = None,
    bootstrap: Bootstrap | None = None,
    names: tuple[str, str] = ("baseline", "candidate"),
    unit: str | None = None,
) -> FlipTable:
    """Negative and positive flips, benign churn and mean differences, where the actions differ and where not.

    Parameters
    ----------
    baseline, candidate : Outcomes
        Paired outcomes: pair ``i`` of both is the same context and the same simulated user.
    differ : array-like of bool, shape (n,)
        Whether the two acted differently at pair ``i``'s context (the group ``"differ"``;
        the others are the control ``"agree"``).
    clusters : array-like of int, shape (n,), optional
        A code per pair naming its resampling unit (the dialogue its context was collected
        from: pairs of one dialogue, and the continuations of one context, move together).
        Default: every pair is a unit.
    bootstrap : Bootstrap, optional
        Resamples, coverage and seed of the intervals (default :class:`~simscore.stats.Bootstrap`;
        ``n_resamples=0``: no intervals, NaN bounds).
    names : (str, str)
        The baseline's and the candidate's names in the table.
    unit : str, optional
        What one cluster is, in the table and its warnings (e.g. ``"dialogues"``); default
        ``"clusters"`` with ``clusters``, else ``"pairs"``.

    Returns
    -------
    FlipTable

    Warns
    -----
    MissingValueWarning
        For a group without pairs (its rates are NaN) and for intervals that rest on one unit.

    Examples
    --------
    >>> same = Outcomes(success=[1, 0, 1, 1], reward=[15, -25, 16, 14], turns=[5, 25, 4, 6], iq=[4, 1, 4, 4])
    >>> table = outcome_flips(same, same, differ=[True, True, False, False], bootstrap=Bootstrap(n_resamples=50))
    >>> table.differ.negative_flip_rate, table.agree.benign_churn_rate.value
    (Estimate(value=0.0, low=0.0, high=0.0), 1.0)
    """
    if not isinstance(baseline, Outcomes) or not isinstance(candidate, Outcomes):
        raise TypeError(f"baseline and candidate must be Outcomes, got {type(baseline).__name__} and "
                        f"{type(candidate).__name__}")
    n = len(baseline)
    if len(candidate) != n:
        raise ValueError(f"baseline has {n} pairs, candidate {len(candidate)}: outcomes are paired")
    member = _column("differ", differ, dtype=bool)
    if len(member) != n:
        raise ValueError(f"differ has {len(member)} values for {n} pairs")
    if clusters is None:
        units, unit = np.arange(n), unit or "pairs"
    else:
        codes = np.asarray(clusters)
        if codes.shape != (n,) or (n and not np.issubdtype(codes.dtype, np.integer)):
            raise ValueError(f"clusters must be one integer code per pair ({n}), got shape {codes.shape} "
                             f"and dtype {codes.dtype}")
        units, unit = codes, unit or "clusters"
    return _table(baseline, candidate, member, units, unit, bootstrap or Bootstrap(), names)


def _table(baseline: Outcomes, candidate: Outcomes, member: np.ndarray, units: np.ndarray, unit: str,
           bootstrap: Bootstrap, names: tuple[str, str]) -> FlipTable:
    summaries = []
    undefined: list[str] = []
    for group, in_group in zip(GROUPS, (member, ~member)):
        summary, one_unit = _summary(group, baseline, candidate, in_group, units, bootstrap)
        summaries.append(summary)
        if one_unit:
            undefined.append(group)
        if not summary.pairs:
            warnings.warn(f"{names[0]} -> {names[1]}: no pair in group {group!r}; its rates are NaN",
                          MissingValueWarning, stacklevel=3)
    # named by group: every interval of a group that rests on one unit is undefined alike
    warn_undefined_intervals([f"{names[0]} -> {names[1]}, {group}" for group in undefined], unit.rstrip("s"),
                             confidence=bootstrap.confidence, stacklevel=3)
    return FlipTable(names[0], names[1], summaries[0], summaries[1], unit, bootstrap)


@dataclass(frozen=True)
class FlipDecomposition:
    """:func:`flip_decomposition`: three comparisons of the replays (a), (b), (c) of the same pairs.

    Attributes
    ----------
    total : FlipTable
        (a) → (b): the baseline throughout against the candidate throughout.
    action : FlipTable
        (c) → (b): the baseline's action at the context against the candidate's, the candidate
        afterwards in both — the effect of the one differing action.
    after : FlipTable
        (a) → (c): the same action at the context, then the baseline against the candidate —
        the effect of what the candidate does afterwards.
    """

    total: FlipTable
    action: FlipTable
    after: FlipTable

    def to_records(self) -> list[dict[str, Any]]:
        """Every table's rows, each led by ``comparison`` (``total``, ``action``, ``after``)."""
        return [{"comparison": name, **row} for name in ("total", "action", "after")
                for row in getattr(self, name).to_records()]

    def to_frame(self) -> pandas.DataFrame:
        """:meth:`to_records` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.to_records())


def flip_decomposition(
    a: Outcomes,
    b: Outcomes,
    c: Outcomes,
    *,
    differ: Sequence[bool] | np.ndarray,
    clusters: Sequence[int] | np.ndarray | None = None,
    bootstrap: Bootstrap | None = None,
    names: tuple[str, str] = ("A", "B"),
    unit: str | None = None,
) -> FlipDecomposition:
    """The total, action and after effects of replacing policy A by policy B (see :class:`FlipDecomposition`).

    Parameters
    ----------
    a, b, c : Outcomes
        The replays of every pair: (a) A throughout, (b) B throughout, (c) A's action at the
        context, then B.
    differ, clusters, bootstrap, unit
        As in :func:`outcome_flips` (one resampling for all three: the same units, the same seed).
    names : (str, str)
        A's and B's names; (c) is called ``"<A> then <B>"``.

    Returns
    -------
    FlipDecomposition

    Examples
    --------
    >>> a = Outcomes(success=[1, 1, 1], reward=[15, 15, 16], turns=[5, 5, 4], iq=[4, 4, 4])
    >>> b = Outcomes(success=[0, 1, 1], reward=[-10, 14, 16], turns=[10, 6, 4], iq=[2, 4, 4])
    >>> c = Outcomes(success=[0, 1, 1], reward=[-10, 15, 16], turns=[10, 5, 4], iq=[2, 4, 4])
    >>> d = flip_decomposition(a, b, c, differ=[True, True, False], bootstrap=Bootstrap(n_resamples=0))
    >>> d.total.differ.negative_flip_rate.value, d.action.differ.negative_flip_rate.value
    (0.5, 0.0)
    >>> d.after.differ.negative_flip_rate.value, d.action.candidate
    (0.5, 'B')
    """
    mixed = f"{names[0]} then {names[1]}"
    common: dict[str, Any] = {"differ": differ, "clusters": clusters, "bootstrap": bootstrap, "unit": unit}
    return FlipDecomposition(
        total=outcome_flips(a, b, names=names, **common),
        action=outcome_flips(c, b, names=(mixed, names[1]), **common),
        after=outcome_flips(a, c, names=(names[0], mixed), **common),
    )
