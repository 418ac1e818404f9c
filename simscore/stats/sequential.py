"""Decisions that stay valid when a monitor checks again and again (:class:`~simscore.BehaviourMonitor`).

A monitor compares a policy's behaviour at check ``k`` with its behaviour at check ``k − 1`` on
one fixed context set and calls the policy *converged* once the behaviour stays within a
tolerance. Read as a test at every check, "the mean similarity is at or above the threshold"
fires sooner or later for a policy that still changes by slightly more than the tolerance:
every check is a fresh chance. This module gives the monitor a rule whose error does not grow
with the number of checks.

**The quantity.** At check ``k`` every context ``i`` of the ``n`` monitored ones has a
similarity score ``s_ki`` (previous vs current response) in the measure's range
``[lo, hi]`` (``hi`` = 1 for every measure: identical responses; ``lo`` = 0 for the action
measures). Its *change* is ``y_ki = (hi − s_ki) / (hi − lo)`` in [0, 1]; the check's change
rate ``p_k`` is the expected mean change — for TMR, the probability that a context's action
changed between the two checks. A threshold ``t`` on the mean similarity is a tolerance
``ε = (hi − t) / (hi − lo)`` on the change rate (TMR ≥ 0.99: at most 1 % of actions change).

**The null hypothesis** ("not converged") at check ``k``: ``p_k > ε`` — the behaviour still
changes by more than the tolerance. The monitor declares *converged* at check ``k`` only if it
rejects the null at ``k`` and at each of the ``patience − 1`` checks before (and for every
measure: an intersection–union test, no multiplicity correction needed).

**The rule** (``rule="sequential"``): check ``k`` spends ``α_k = α / (k (k + 1))`` of the
level ``α`` (:func:`spent_alpha`; the spends add up to ``α`` over any number of checks) and
rejects when the one-sided ``1 − α_k`` upper confidence bound of ``p_k`` is at most ``ε``,
i.e. when the lower bound of the mean similarity (:func:`similarity_lower_bound`, the
``<measure>_cs_low`` column of the monitor's history) is at or above the threshold. The bound
is Clopper–Pearson's for binary scores (TMR, DMR: the number of changed contexts) and the
Chernoff–Hoeffding bound ``n · KL(ȳ ‖ p) = ln(1/α_k)`` for other bounded scores.

**What it guarantees.** If, given the two policies of each check, the per-context changes are
independent — the contexts are a sample from the contexts of interest drawn independently of
training (the assumption behind the monitor's bootstrap intervals too), or the training
changes each context independently — then for any training process, any number of checks and
any dependence between checks (the same contexts are reused at every check)::

    P(converged is ever declared at a check k while p_j > ε at one of the checks j of its window) ≤ α

by the union bound over the checks: at each check the bound fails with probability at most
``α_k`` (Hoeffding 1956 extends the binomial tail to changes with different probabilities;
Hoeffding 1963 gives the Chernoff bound for bounded ones). The rule is a confidence sequence
for the per-check change rates: with probability ``1 − α`` every ``<measure>_cs_low`` is at
or below that check's true mean similarity, simultaneously at all checks.

**The price.** Certifying a change below ``ε`` needs contexts: with none changed the change's
bound is ``1 − α_k^{1/n}``, so declaring at check ``k`` at all needs
``n ≥ ln(1/α_k) / −ln(1 − ε)`` contexts (C_gen's 1,296 at TMR ≥ 0.99 and α = 0.05: until check
150 at most, and then only with no context changed). A converged policy whose behaviour still
drifts at half the tolerance is rarely declared; the old rule declares it at once, and also
declares a policy that has not converged. :func:`simulate_monitor`
measures both rules (``benchmarks/bench_monitor_rules.py``; numbers in docs/guide/rl.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simscore.checks import check_bool, check_int, check_level, check_probability, check_seed

__all__ = ["RULES", "spent_alpha", "change_upper_bound", "similarity_lower_bound", "MonitorSimulation",
           "simulate_monitor"]

#: The monitor's decision rules: ``"sequential"`` (the default: anytime-valid, see the module
#: docstring) and ``"point"`` (every measure's mean at or above the threshold at each check:
#: the rule before simscore 0.2.0, without error control over repeated checks).
RULES: tuple[str, ...] = ("sequential", "point")


def spent_alpha(alpha: float, check: int) -> float:
    """The level spent at check ``check`` (1, 2, ...): ``α / (check (check + 1))``; they add up to ``α``.

    >>> [round(spent_alpha(0.05, k), 6) for k in (1, 2, 3, 100)]
    [0.025, 0.008333, 0.004167, 5e-06]
    >>> round(sum(spent_alpha(0.05, k) for k in range(1, 10_001)), 6)  # α (1 − 1/10,001)
    0.049995
    """
    check = check_int("check", check, minimum=1, error=ValueError)
    return check_level("alpha", alpha) / (check * (check + 1.0))


def _kl_bernoulli(y: float, p: float) -> float:
    from scipy.special import rel_entr

    return float(rel_entr(y, p) + rel_entr(1.0 - y, 1.0 - p))


def change_upper_bound(changes: float | np.ndarray, n: int | np.ndarray, level: float | np.ndarray, *,
                       binary: bool = True) -> np.ndarray:
    """One-sided upper confidence bound, at ``1 − level``, of a change rate from ``n`` contexts.

    Parameters
    ----------
    changes : float or array
        With ``binary``: the number of changed contexts (Clopper–Pearson: the ``p`` with
        ``P(Binomial(n, p) ≤ changes) = level``; 1 when all changed). Otherwise the sum of the
        per-context changes in [0, 1] (Chernoff–Hoeffding: the ``p ≥ ȳ`` with
        ``n · KL(ȳ ‖ p) = ln(1/level)``, ``ȳ = changes / n``).
    n : int or array
        Contexts (at least 1).
    level : float or array
        The error spent, in (0, 1).

    Returns
    -------
    numpy.ndarray
        The bounds (shape of the broadcast inputs; a 0-d array for scalars).

    Examples
    --------
    >>> float(change_upper_bound(0, 1296, 0.025))  # 1 − 0.025^(1/1296)
    0.0028423...
    >>> float(change_upper_bound(0.0, 1296, 0.025, binary=False))  # the same when nothing changed
    0.0028423...
    >>> float(change_upper_bound(3, 1296, 0.025)) < float(change_upper_bound(3.0, 1296, 0.025, binary=False))
    True
    """
    x, size, spent = np.broadcast_arrays(np.asarray(changes, dtype=np.float64), np.asarray(n, dtype=np.float64),
                                         np.asarray(level, dtype=np.float64))
    if binary:
        from scipy.stats import beta

        with np.errstate(invalid="ignore", divide="ignore"):
            bound = beta.ppf(1.0 - spent, x + 1.0, np.maximum(size - x, 1.0))
        return np.where(x >= size, 1.0, bound)
    out = np.empty(x.shape, dtype=np.float64)
    for index in np.ndindex(x.shape):
        out[index] = _kl_upper(float(x[index]) / float(size[index]), float(size[index]), float(spent[index]))
    return out


def _kl_upper(mean: float, n: float, level: float) -> float:
    if mean >= 1.0:
        return 1.0
    target = math.log(1.0 / level) / n
    if mean <= 0.0:
        return -math.expm1(-target)  # KL(0 ‖ p) = −ln(1 − p)
    from scipy.optimize import brentq

    high = 1.0 - 1e-15
    if _kl_bernoulli(mean, high) <= target:
        return 1.0
    return float(brentq(lambda p: _kl_bernoulli(mean, p) - target, mean, high, xtol=1e-14))


def similarity_lower_bound(scores: Sequence[float] | np.ndarray, level: float, *,
                           bounds: tuple[float, float] = (0.0, 1.0), binary: bool = False) -> float:
    """Lower confidence bound, at ``1 − level``, of the mean similarity of one check.

    ``hi − (hi − lo) · U`` with ``U`` the :func:`change_upper_bound` of the changes
    ``(hi − s) / (hi − lo)``. Missing scores (NaN) are left out; none left gives NaN. A measure
    without a finite lower bound (CER without ``clip``) is bounded at 0: a score below 0 counts
    as a full change, so the decision is about the clipped score.

    Parameters
    ----------
    scores : array of float
        The per-context scores of the check.
    level : float
        Error spent at this check (:func:`spent_alpha`).
    bounds : (float, float)
        The measure's range (``Measure.bounds``); the upper end must be finite.
    binary : bool
        Every score is ``lo`` or ``hi`` (TMR, DMR): the exact binomial bound.

    Examples
    --------
    >>> round(similarity_lower_bound([1.0] * 1296, 0.025, binary=True), 5)
    0.99716
    >>> round(similarity_lower_bound([1.0] * 1290 + [0.0] * 6, 0.025, binary=True), 5)  # 6 changes: below 0.99
    0.98995
    """
    low, high = float(bounds[0]), float(bounds[1])
    if not math.isfinite(high):
        raise ValueError(f"bounds: the upper end must be finite, got {bounds!r}")
    if not math.isfinite(low):
        low = min(0.0, high - 1.0)
    values = np.asarray(scores, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan
    change = (high - np.clip(values, low, high)) / (high - low)
    total = float(np.count_nonzero(change > 0.5)) if binary else float(change.sum())
    bound = float(change_upper_bound(total, values.size, level, binary=binary))
    return high - (high - low) * bound


@dataclass(frozen=True)
class MonitorSimulation:
    """What :func:`simulate_monitor` found: per rule, the check at which each replication was declared converged.

    Attributes
    ----------
    declared : dict of str to numpy.ndarray
        Per rule (``"point"``, ``"sequential"``), one int per replication: the check (1, 2, ...)
        of the first declaration, 0 when never within the simulated checks.
    checks : int
        Checks simulated.
    """

    declared: dict[str, np.ndarray]
    checks: int

    def rate(self, rule: str, within: int | None = None) -> float:
        """Share of replications declared converged by check ``within`` (default: all checks)."""
        last = self.checks if within is None else within
        at = self.declared[rule]
        return float(np.mean((at > 0) & (at <= last)))

    def median_check(self, rule: str) -> float:
        """Median check of the first declaration (never declared counts as after the last check; NaN if most never)."""
        at = self.declared[rule].astype(np.float64)
        at[at == 0] = np.inf
        median = float(np.median(at))
        return median if math.isfinite(median) else math.nan


def _first_run(stable: np.ndarray, patience: int) -> np.ndarray:
    """Per row, the 1-based column at which ``patience`` consecutive Trues first end (0: never)."""
    run = np.zeros(stable.shape[0], dtype=np.int64)
    declared = np.zeros(stable.shape[0], dtype=np.int64)
    for k in range(stable.shape[1]):
        run = np.where(stable[:, k], run + 1, 0)
        declared = np.where((declared == 0) & (run >= patience), k + 1, declared)
    return declared


def simulate_monitor(change_rates: Sequence[float] | np.ndarray, n_contexts: int, *, threshold: float = 0.99,
                     patience: int = 3, alpha: float = 0.05, replications: int = 1000, seed: int = 0,
                     volatile: bool = False) -> MonitorSimulation:
    """Simulate a monitor watching TMR at every check and record when each rule declares convergence.

    Check ``k`` (1, 2, ..., ``len(change_rates)``) changes each of the ``n_contexts`` contexts'
    actions with probability ``change_rates[k − 1]``, independently of the other checks; with
    ``volatile`` the same contexts change at every check instead (a sub-population that flips
    back and forth: one binomial draw per replication with the first rate, reused). The
    decisions are the monitor's for one binary measure with ``require_change=False``: the point
    rule (TMR ≥ ``threshold``) and the sequential rule (:func:`similarity_lower_bound` with
    :func:`spent_alpha` at or above it), each for ``patience`` consecutive checks.

    Rates above the tolerance ``1 − threshold`` give the false-"converged" rate; rates below it
    the power and the time to declare.

    Examples
    --------
    >>> sim = simulate_monitor([0.012] * 50, 1296, replications=200, seed=1)
    >>> sim.rate("point") > 0.2, sim.rate("sequential")
    (True, 0.0)
    """
    rates = np.asarray(change_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or np.any(~(rates >= 0.0) | (rates > 1.0)):
        raise ValueError("change_rates must be a non-empty list of probabilities in [0, 1]")
    n = check_int("n_contexts", n_contexts, minimum=1, error=ValueError)
    threshold = check_probability("threshold", threshold, error=ValueError)
    patience = check_int("patience", patience, minimum=1, error=ValueError)
    replications = check_int("replications", replications, minimum=1, maximum=10**7, error=ValueError)
    rng = np.random.default_rng(check_seed("seed", seed, error=ValueError))
    checks = rates.size
    if check_bool("volatile", volatile):
        changes = np.repeat(rng.binomial(n, rates[0], size=(replications, 1)), checks, axis=1)
    else:
        changes = rng.binomial(n, rates, size=(replications, checks))
    spent = np.array([spent_alpha(alpha, k) for k in range(1, checks + 1)])
    # the bound depends on the count and the check only: one table over the counts that occur
    counts, where = np.unique(changes, return_inverse=True)
    table = 1.0 - change_upper_bound(counts[:, np.newaxis], n, spent[np.newaxis, :], binary=True)
    lower = table[where.reshape(changes.shape), np.arange(checks)[np.newaxis, :]]
    point = (n - changes) / n >= threshold
    return MonitorSimulation({"point": _first_run(point, patience), "sequential": _first_run(lower >= threshold,
                                                                                             patience)}, checks)
