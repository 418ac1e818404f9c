"""Were there enough contexts? The report's power lines, from :mod:`simscore.stats.power` (application layer).

Where the report sets two TMRs of the same contexts side by side — the seed pairs against the
late convergence comparisons (finding 3), the cross-reward pairs against the within-reward
pairs (finding 5) — a reader asks whether the contexts could tell a gap of that size at all.
:func:`enough_contexts` answers in one line, from the tables alone:

* ``n``: the contexts both comparisons were scored on (the table's ``count``);
* the design effect of clustering by dialogue, read from the comparison's own bootstrap
  interval (its resamples are dialogues on C_col): the interval's variance
  ``((high − low) / (2 z))²`` over the variance of ``n`` independent contexts
  ``p (1 − p) / n``, at least 1; ``n`` divided by it is the effective number of contexts;
* the smallest TMR difference those contexts detect with 80 % power in a two-sided McNemar test
  at 5 % (:func:`simscore.stats.power.detectable_difference`, independent indicators: the safe side),
  and, when the gap seen is smaller, the contexts a gap of that size needs
  (:func:`simscore.stats.power.contexts_needed`, times the design effect).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from simscore.errors import MissingValueWarning
from simscore.stats.power import contexts_needed, detectable_difference

__all__ = ["POWER", "ALPHA", "design_effect_from_interval", "enough_contexts", "seeds_power_lines",
           "reward_models_power_lines"]

#: Power and level of the McNemar test behind every line.
POWER, ALPHA = 0.8, 0.05


def design_effect_from_interval(mean: float, low: float, high: float, count: int, confidence: float) -> float:
    """The variance of a mean over its bootstrap interval, relative to ``count`` independent 0/1 values (≥ 1).

    1 where the interval or the binomial variance says nothing (a missing bound, a mean of 0 or 1).

    >>> round(design_effect_from_interval(0.5, 0.4, 0.6, 100, 0.95), 3)  # (0.2 / 3.92)² / 0.0025
    1.041
    """
    binomial = mean * (1.0 - mean) / count if count > 0 else 0.0
    if not (math.isfinite(low) and math.isfinite(high)) or binomial <= 0.0:
        return 1.0
    z = float(norm.ppf(0.5 + confidence / 2.0))
    return max(1.0, ((high - low) / (2.0 * z)) ** 2 / binomial)


def enough_contexts(what: str, higher: float, lower: float, count: int, deff: float) -> str:
    """One sentence: can ``count`` contexts (design effect ``deff``) tell TMR ``higher`` from ``lower``?

    >>> enough_contexts("seed pairs against convergence", 0.9, 0.6, 400, 1.0)  # doctest: +NORMALIZE_WHITESPACE
    'Enough contexts? seed pairs against convergence: 400 contexts detect a TMR difference of 0.068 below
    0.900 with 80% power (McNemar, 5%); the gap seen, 0.300, is larger: these contexts have the power to detect
    it.'
    """
    effective = max(1, int(count / deff))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValueWarning)
        detectable = detectable_difference(effective, float(np.clip(higher, 0.0, 1.0)), power=POWER, alpha=ALPHA)
    clustered = f" (about {effective:,} independent ones: design effect {deff:.2f} by dialogue)" if round(deff, 2) > 1.0 else ""
    head = f"Enough contexts? {what}: {count:,} contexts{clustered}"
    gap = higher - lower
    if not math.isfinite(detectable):
        return f"{head} detect no TMR difference below {higher:.3f} with {POWER:.0%} power (McNemar, {ALPHA:.0%})."
    line = (f"{head} detect a TMR difference of {detectable:.3f} below {higher:.3f} with {POWER:.0%} power "
            f"(McNemar, {ALPHA:.0%}); the gap seen, {gap:.3f}, ")
    if gap <= 0.0:
        return line + "goes the other way: there is no such difference to detect."
    if gap >= detectable:
        return line + "is larger: these contexts have the power to detect it."
    needed = math.ceil(contexts_needed(gap, higher, power=POWER, alpha=ALPHA) * deff)
    return line + f"is smaller: too few contexts to detect it reliably (a gap of that size needs about {needed:,})."


def _final_tmr(table: pd.DataFrame, **where: object) -> pd.DataFrame:
    """The TMR rows of C_col at the table's last checkpoint that match ``where``."""
    rows = table[(table["measure"] == "tmr") & (table["context_set"] == "col")]
    for column, value in where.items():
        rows = rows[rows[column].astype(str) == str(value)]
    return rows[rows["checkpoint"] == rows["checkpoint"].max()] if not rows.empty else rows


def _deff(rows: pd.DataFrame, confidence: float) -> float:
    """The mean design effect over a group's pairs."""
    return float(np.mean([design_effect_from_interval(r.mean, r.ci_low, r.ci_high, int(r.count), confidence)
                          for r in rows.itertuples()]))


def seeds_power_lines(seeds: pd.DataFrame, convergence: pd.DataFrame | None, confidence: float) -> list[str]:
    """Per reward model: the final seed pairs' TMR against the runs' convergence TMR on the same C_col contexts."""
    lines: list[str] = []
    if convergence is None:
        return lines
    for reward in dict.fromkeys(seeds["reward"].astype(str)):
        pairs = _final_tmr(seeds, reward=reward)
        runs = _final_tmr(convergence, reward=reward)
        if pairs.empty or runs.empty or int(pairs["checkpoint"].iloc[0]) != int(runs["checkpoint"].iloc[0]):
            continue
        lines.append(enough_contexts(
            f"C_col/{reward} at checkpoint {int(pairs['checkpoint'].iloc[0]):,}, seed pairs (TMR "
            f"{pairs['mean'].mean():.3f}) against the runs' last convergence step ({runs['mean'].mean():.3f})",
            float(runs["mean"].mean()), float(pairs["mean"].mean()), int(pairs["count"].iloc[0]),
            _deff(pairs, confidence)))
    return [*_paragraphs(lines)]


def reward_models_power_lines(table: pd.DataFrame, confidence: float) -> list[str]:
    """The final cross-reward pairs' TMR against the within-reward pairs' on the union of C_col."""
    rows = _final_tmr(table)
    if rows.empty:
        return []
    same = rows[[a == b for a, b in zip(rows["reward_a"], rows["reward_b"], strict=True)]]
    cross = rows[[a != b for a, b in zip(rows["reward_a"], rows["reward_b"], strict=True)]]
    if same.empty or cross.empty:
        return []
    line = enough_contexts(
        f"C_col at checkpoint {int(rows['checkpoint'].iloc[0]):,}, cross-reward pairs (TMR {cross['mean'].mean():.3f}) "
        f"against within-reward pairs ({same['mean'].mean():.3f})",
        float(same["mean"].mean()), float(cross["mean"].mean()), int(cross["count"].iloc[0]), _deff(cross, confidence))
    return [*_paragraphs([line])]


def _paragraphs(lines: Sequence[str]) -> list[str]:
    return [part for line in lines for part in (line, "")]
