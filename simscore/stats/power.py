"""How many contexts a comparison needs: the power of a paired test of two TMRs on one context set.

Two comparisons scored on the same ``n`` contexts — e.g. the seed pair and the reward-model
pair of the paper, both on C_col — give each context a pair of match indicators (TMR's
per-context 0/1). Whether the two TMRs differ is McNemar's question: of the contexts where
exactly one comparison matches (the *discordant* ones, a share ``ψ``), do more favour one side?
For a TMR ``p₁`` (``agreement``, the one you see) and ``p₂ = p₁ − d`` (``difference`` ``d``)
the two-sided McNemar test at level ``α`` (asymptotic, no continuity correction) has power
(Connor 1987, *Biometrics* 43, 207–211)::

    power(n) = Φ( (√n |d| − z_{1−α/2} √ψ) / √(ψ − d²) )
    n(power) = ( z_{1−α/2} √ψ + z_{power} √(ψ − d²) )² / d²

``ψ`` is the observed share of discordant contexts when both comparisons are at hand
(``discordance``); otherwise the share if the two indicators were independent given their
TMRs, ``ψ = p₁(1 − p₂) + p₂(1 − p₁)`` (for comparisons that share a policy, or contexts that
are hard for every pair, the indicators agree more often, ``ψ`` is smaller and fewer contexts
are needed: the default errs on the safe side then).

Contexts collected from dialogues come in clusters (one dialogue's turns resemble each other):
with an intra-cluster correlation ``icc`` and ``cluster_size`` contexts per dialogue the
variance grows by the design effect ``1 + (cluster_size − 1) · icc`` (Kish), so ``n`` grows by
it and a given ``n`` counts as ``n`` divided by it.

The report uses them (:mod:`simscore.app.report.power`): beside the seed pairs' TMR against the
late convergence TMR, and the cross-reward pairs' against the within-reward pairs', one line
says which TMR difference the contexts detect with 80 % power (:func:`detectable_difference`,
the design effect read from the comparison's interval over dialogues) and, where the gap seen is
smaller, how many contexts it would need (:func:`contexts_needed`).
"""

from __future__ import annotations

import math
import warnings

from simscore.checks import check_int, check_level, check_number, check_probability
from simscore.errors import MissingValueWarning

__all__ = ["tmr_power", "contexts_needed", "detectable_difference", "design_effect"]


def design_effect(icc: float = 0.0, cluster_size: float = 1.0) -> float:
    """Kish's design effect ``1 + (cluster_size − 1) · icc`` of clustered contexts.

    >>> design_effect(0.05, 7)
    1.3
    """
    icc = check_probability("icc", icc, error=ValueError)
    cluster_size = check_number("cluster_size", cluster_size, minimum=1.0, error=ValueError)
    return 1.0 + (cluster_size - 1.0) * icc


def _discordance(difference: float, agreement: float, discordance: float | None) -> float:
    """``ψ``, checked against the difference (a share of discordant contexts must be at least ``|d|``)."""
    agreement = check_probability("agreement", agreement, error=ValueError)
    difference = check_number("difference", difference, error=ValueError)
    other = agreement - difference
    if difference == 0.0 or not 0.0 <= other <= 1.0:
        raise ValueError(f"difference must be non-zero with agreement - difference in [0, 1], got difference "
                         f"{difference!r} for agreement {agreement!r}")
    if discordance is None:
        return agreement * (1.0 - other) + other * (1.0 - agreement)
    psi = check_probability("discordance", discordance, error=ValueError)
    if psi < abs(difference) or psi <= difference**2:
        raise ValueError(f"discordance must be at least |difference| = {abs(difference):g} (the TMRs differ only "
                         f"where the comparisons disagree), got {psi!r}")
    return psi


def _z(p: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(p))


def tmr_power(n_contexts: float, difference: float, agreement: float, *, alpha: float = 0.05,
              discordance: float | None = None, icc: float = 0.0, cluster_size: float = 1.0) -> float:
    """Power of the two-sided McNemar test to detect a TMR difference ``difference`` with ``n_contexts``.

    Parameters
    ----------
    n_contexts : float
        Contexts the two comparisons share (at least 1).
    difference : float
        ``p₁ − p₂``, non-zero (positive: the other comparison agrees less).
    agreement : float
        ``p₁``, the TMR you see, in [0, 1].
    alpha : float
        Level of the two-sided test, in (0, 1).
    discordance : float, optional
        Share of contexts where exactly one comparison matches; default: independence.
    icc, cluster_size : float
        Clustering by dialogue (:func:`design_effect`); default none.

    Examples
    --------
    >>> round(tmr_power(391, 0.1, 0.6), 4)  # ψ = 0.6 · 0.5 + 0.5 · 0.4 = 0.5
    0.8009
    >>> tmr_power(5, 1.0, 1.0), tmr_power(1, 1.0, 1.0)  # one comparison always matches, the other never
    (1.0, 0.0)
    """
    n = check_number("n_contexts", n_contexts, minimum=1.0, error=ValueError)
    psi = _discordance(difference, agreement, discordance)
    z = _z(1.0 - check_level("alpha", alpha, error=ValueError) / 2.0)
    effective = n / design_effect(icc, cluster_size)
    from scipy.special import ndtr

    spread = psi - difference**2  # 0 where every context is discordant the same way (d = ψ = 1): no variance left
    margin = math.sqrt(effective) * abs(difference) - z * math.sqrt(psi)
    if spread <= 0.0:
        return 1.0 if margin > 0.0 else 0.0
    return float(ndtr(margin / math.sqrt(spread)))


def contexts_needed(difference: float, agreement: float, *, power: float = 0.8, alpha: float = 0.05,
                    discordance: float | None = None, icc: float = 0.0, cluster_size: float = 1.0) -> int:
    """Contexts needed to detect a TMR difference ``difference`` with probability ``power``.

    The two-sided McNemar test at ``alpha`` on two comparisons scored on the same contexts (see
    the module docstring; parameters as :func:`tmr_power`), rounded up, times the design effect
    when the contexts are clustered.

    Examples
    --------
    >>> contexts_needed(0.1, 0.6)  # (1.96 √0.5 + 0.8416 √0.49)² / 0.01 = 390.08
    391
    >>> contexts_needed(0.1, 0.6, icc=0.05, cluster_size=7)  # × 1.3
    508
    >>> contexts_needed(0.05, 0.6, discordance=0.2)  # the comparisons disagree on fewer contexts
    626
    """
    psi = _discordance(difference, agreement, discordance)
    target = check_level("power", power, error=ValueError)
    z = _z(1.0 - check_level("alpha", alpha, error=ValueError) / 2.0)
    root = z * math.sqrt(psi) + _z(target) * math.sqrt(psi - difference**2)
    n = root**2 / difference**2 * design_effect(icc, cluster_size)
    return max(1, math.ceil(n - 1e-9))  # the tolerance keeps an exact integer from rounding up


def detectable_difference(n_contexts: int, agreement: float, *, power: float = 0.8, alpha: float = 0.05,
                          discordance: float | None = None, icc: float = 0.0, cluster_size: float = 1.0) -> float:
    """The smallest TMR difference (below ``agreement``) that ``n_contexts`` detect with probability ``power``.

    Solves :func:`tmr_power` ``= power`` for ``difference`` in ``(0, agreement]``. NaN, with a
    :class:`~simscore.errors.MissingValueWarning`, when even ``difference = agreement`` (the other
    comparison never matches) is not detected that often (or, with ``discordance``, when no
    difference up to it is).

    Examples
    --------
    >>> round(detectable_difference(391, 0.6), 3)
    0.1
    >>> round(detectable_difference(1296, 0.6), 4), round(detectable_difference(1296, 0.6, icc=0.1, cluster_size=11), 4)
    (0.0545, 0.0773)
    """
    n = check_int("n_contexts", n_contexts, minimum=1, error=ValueError)
    agreement = check_probability("agreement", agreement, error=ValueError)
    target = check_level("power", power, error=ValueError)
    largest = agreement if discordance is None else min(agreement, float(discordance))
    if largest <= 0.0:
        return _undetectable(n, agreement, target)

    def gap(d: float) -> float:
        return tmr_power(n, d, agreement, alpha=alpha, discordance=discordance, icc=icc, cluster_size=cluster_size) - target

    if gap(largest) < 0.0:
        return _undetectable(n, agreement, target)
    from scipy.optimize import brentq

    return float(brentq(gap, min(1e-9, largest), largest, xtol=1e-12))


def _undetectable(n: int, agreement: float, power: float) -> float:
    warnings.warn(f"{n} contexts detect no TMR difference below agreement {agreement:g} with power {power:g} "
                  "(detectable difference undefined: NaN)", MissingValueWarning, stacklevel=3)
    return math.nan
