"""Analyses over the per-context scores of many comparisons: pooling and per-turn scores."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

import numpy as np
import pandas as pd

from simscore.analysis.tables import SCHEMAS, AnalysisResult, typed_table
from simscore.compare import Comparison
from simscore.stats import bootstrap_ci

__all__ = ["ScoresArg", "pooled_scores", "pool", "per_turn"]


ScoresArg: TypeAlias = Comparison | Iterable[Comparison] | AnalysisResult | pd.DataFrame


def _as_comparisons(scores: ScoresArg, parameter: str) -> list[Comparison] | None:
    """The comparisons in ``scores`` as a list (None for a DataFrame of per-context scores)."""
    if isinstance(scores, pd.DataFrame):
        return None
    if isinstance(scores, Comparison):
        return [scores]
    if isinstance(scores, AnalysisResult):
        comparisons = list(scores.comparisons.values())
    elif isinstance(scores, Iterable) and not isinstance(scores, (str, bytes)):
        comparisons = list(scores)
    else:
        raise TypeError(
            f"{parameter} must be a Comparison, an iterable of Comparison, an AnalysisResult or a "
            f"DataFrame of per-context scores; got {type(scores).__name__}"
        )
    for i, c in enumerate(comparisons):
        if not isinstance(c, Comparison):
            raise TypeError(f"{parameter}[{i}] must be a simscore Comparison, got {type(c).__name__}")
    if not comparisons:
        raise ValueError(f"{parameter}: need at least one comparison")
    return comparisons


def _stack(comparisons: list[Comparison]) -> pd.DataFrame:
    shared = [m for m in comparisons[0].measures if all(m in c.measures for c in comparisons)]
    extra = list(dict.fromkeys(
        column for c in comparisons for column in c.scores.columns if column not in c.measures
    ))
    return pd.concat(
        [c.scores[shared + [e for e in extra if e in c.scores.columns]] for c in comparisons], ignore_index=False
    ).reindex(columns=shared + extra)


def pooled_scores(scores: ScoresArg) -> pd.DataFrame:
    """The per-context scores of all comparisons stacked into one DataFrame.

    Columns: the measures the comparisons share (first comparison's order), then every
    metadata column any of them carries (NaN where a comparison lacks it, e.g. the turn index
    of generated contexts); index ``context_id`` (repeated across comparisons). A DataFrame
    is returned as it is.
    """
    comparisons = _as_comparisons(scores, "scores")
    return scores if comparisons is None else _stack(comparisons)  # type: ignore[return-value]


def pool(scores: ScoresArg, measures: Iterable[str] | None) -> tuple[pd.DataFrame, list[str]]:
    """Stacked per-context scores and the measure columns to use."""
    comparisons = _as_comparisons(scores, "scores")
    frame: pd.DataFrame = scores if comparisons is None else _stack(comparisons)  # type: ignore[assignment]
    if measures is not None:
        names = [measures] if isinstance(measures, str) else list(measures)
        missing = [m for m in names if m not in frame.columns]
        if missing:
            raise ValueError(
                f"measures: no score column for {', '.join(map(repr, missing))} "
                f"(columns: {', '.join(map(str, frame.columns))})"
            )
        return frame, names
    if comparisons is not None:
        return frame, [m for m in comparisons[0].measures if m in frame.columns]
    from simscore.measures import MEASURES

    names = [c for c in frame.columns if c in MEASURES]
    if not names:
        raise ValueError("measures: cannot tell the measure columns of this DataFrame; pass measures=")
    return frame, names


def per_turn(
    scores: ScoresArg,
    *,
    measures: Iterable[str] | None = None,
    group: str = "",
    turn_column: str = "turn_index",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Scores grouped by the contexts' turn index [Figure 4], pooled over all comparisons.

    Parameters
    ----------
    scores : Comparison, iterable of Comparison, AnalysisResult, or per-context DataFrame
        Comparisons made with ``metadata=`` carrying ``turn_column``.
    measures : iterable of str, optional
        Default: every measure of the comparisons.
    group : str
        Label written into the ``group`` column (concatenate several calls to compare groups).
    turn_column : str
        The metadata column with the turn index; contexts where it is missing are left out.

    Returns
    -------
    DataFrame
        ``per_turn`` schema, sorted by turn index then measure order: ``mean`` over the pooled
        pairs of that turn, its bootstrap interval and ``count`` of pairs (NaN scores left out).

    Examples
    --------
    >>> frame = pd.DataFrame({"tmr": [1.0, 0.0, 1.0], "turn_index": [1, 1, 2]})
    >>> per_turn(frame, measures=["tmr"], group="g")
      group  turn_index measure  mean  ci_low  ci_high  count
    0     g           1     tmr   0.5     0.0      1.0      2
    1     g           2     tmr   1.0     1.0      1.0      1
    """
    frame, names = pool(scores, measures)
    if turn_column not in frame.columns:
        raise ValueError(
            f"scores have no {turn_column!r} column; compare with metadata= carrying the contexts' turn index"
        )
    turns = pd.to_numeric(frame[turn_column], errors="coerce")
    frame = frame.assign(**{turn_column: turns})[turns.notna()]
    rows = []
    for turn, part in frame.groupby(turn_column, sort=True):
        for name in names:
            values = part[name].to_numpy(dtype=np.float64)
            values = values[~np.isnan(values)]
            low, high = bootstrap_ci(values, n_resamples=n_resamples, confidence=confidence, rng=seed)
            mean = float(values.mean()) if len(values) else float("nan")
            rows.append((group, int(turn), name, mean, low, high, len(values)))
    return typed_table(pd.DataFrame(rows, columns=list(SCHEMAS["per_turn"])))


