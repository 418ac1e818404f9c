"""Correlation between measures over all compared pairs [paper's Figure 6]."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simscore.analysis.per_context import ScoresArg, pool
from simscore.analysis.tables import SCHEMAS, check_table, typed_table
from simscore.stats import pearson_mse

__all__ = ["Correlation", "correlation", "correlation_table", "correlation_matrices"]


@dataclass(frozen=True, eq=False)
class Correlation:
    """Pearson r and mean squared error between every pair of measures (square DataFrames).

    Attributes
    ----------
    subset : str
        ``"all"`` or ``"nonmatching"`` (pairs with TMR = 0 only).
    r, mse : pandas.DataFrame
        Index and columns are the measure names. ``r`` is NaN where a measure is constant
        (or fewer than two pairs are defined); ``mse`` is NaN where no pair is defined.
    n : pandas.DataFrame
        Number of pairs where both measures are defined (rows with NaN in either are dropped).
    """

    subset: str
    r: pd.DataFrame
    mse: pd.DataFrame
    n: pd.DataFrame




def correlation(
    scores: ScoresArg,
    *,
    measures: Iterable[str] | None = None,
    subset: str = "all",
    match_measure: str = "tmr",
) -> Correlation:
    """Pearson r and mean squared error between every pair of measures [Figure 6].

    Parameters
    ----------
    scores : Comparison, iterable of Comparison, AnalysisResult, or per-context DataFrame
        All compared pairs of all comparisons are pooled (pass each comparison once).
    measures : iterable of str, optional
        Default: every measure of the comparisons (of a DataFrame: columns named like
        registered measures).
    subset : {"all", "nonmatching"}
        ``"nonmatching"`` keeps only the pairs whose ``match_measure`` (TMR) is 0.
    match_measure : str
        The total-match column used to select non-matching pairs.

    Returns
    -------
    Correlation
        Rows with NaN in either measure of a pair of measures are dropped for that pair.

    Examples
    --------
    >>> f = pd.DataFrame({"tmr": [1.0, 0.0, 0.0, 0.0], "cmr": [1.0, 0.5, 0.2, np.nan]})
    >>> c = correlation(f)
    >>> c.r.round(3)
               tmr    cmr
    measure
    tmr      1.000  0.929
    cmr      0.929  1.000
    >>> round(float(c.mse.loc["tmr", "cmr"]), 3), int(c.n.loc["tmr", "cmr"])
    (0.097, 3)
    >>> nm = correlation(f, subset="nonmatching")
    >>> bool(np.isnan(nm.r.loc["tmr", "cmr"])), round(float(nm.mse.loc["tmr", "cmr"]), 3)
    (True, 0.145)
    """
    frame, names = pool(scores, measures)
    if subset == "nonmatching":
        if match_measure not in frame.columns:
            raise ValueError(
                f"subset='nonmatching' needs the {match_measure!r} scores (compare with measure {match_measure!r})"
            )
        frame = frame[frame[match_measure] == 0]
    elif subset != "all":
        raise ValueError(f"subset must be 'all' or 'nonmatching', got {subset!r}")
    data = {name: frame[name].to_numpy(dtype=np.float64) for name in names}
    r = pd.DataFrame(np.nan, index=names, columns=names)
    mse = pd.DataFrame(np.nan, index=names, columns=names)
    n = pd.DataFrame(0, index=names, columns=names, dtype=np.int64)
    for i, a in enumerate(names):
        for b in names[i:]:
            value_r, value_mse, count = pearson_mse(data[a], data[b])
            r.loc[a, b] = r.loc[b, a] = value_r
            mse.loc[a, b] = mse.loc[b, a] = value_mse
            n.loc[a, b] = n.loc[b, a] = count
    for frame_ in (r, mse, n):
        frame_.index.name = "measure"
        frame_.columns.name = None
    return Correlation(subset=subset, r=r, mse=mse, n=n)


def correlation_table(
    scores: ScoresArg,
    *,
    measures: Iterable[str] | None = None,
    match_measure: str = "tmr",
) -> pd.DataFrame:
    """Both subsets of :func:`correlation` as one tidy table (``correlation`` schema).

    Rows: for ``subset`` ``"all"`` then ``"nonmatching"`` (the latter only when the
    ``match_measure`` scores are present), every ordered pair of measures (the full square).
    """
    frame, names = pool(scores, measures)
    subsets = ["all", "nonmatching"] if match_measure in frame.columns else ["all"]
    rows = []
    for subset in subsets:
        result = correlation(frame, measures=names, subset=subset, match_measure=match_measure)
        for a in names:
            for b in names:
                rows.append((subset, a, b, result.r.loc[a, b], result.mse.loc[a, b], int(result.n.loc[a, b])))
    return typed_table(pd.DataFrame(rows, columns=list(SCHEMAS["correlation"])))


def correlation_matrices(table: pd.DataFrame, subset: str = "all") -> Correlation:
    """The square matrices of one subset of a ``correlation`` table (inverse of :func:`correlation_table`)."""
    check_table(table, "correlation", "table")
    part = table[table["subset"] == subset]
    if part.empty:
        raise ValueError(
            f"subset {subset!r} is not in the table (subsets: {', '.join(table['subset'].unique())})"
        )
    names = list(dict.fromkeys(part["measure_a"]))

    def square(column: str) -> pd.DataFrame:
        wide = part.pivot(index="measure_a", columns="measure_b", values=column)
        wide = wide.reindex(index=names, columns=names)
        wide.index.name = "measure"
        wide.columns.name = None
        return wide

    return Correlation(subset=subset, r=square("r"), mse=square("mse"), n=square("n").astype(np.int64))


