"""Absolute performance per reward model and checkpoint [paper's Table 1]."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from simscore.analysis.tables import RECORD_COLUMNS, SCHEMAS, typed_table
from simscore.stats import t_interval

__all__ = ["performance_table"]


_PERFORMANCE_RANGE = {"success_rate": (0.0, 1.0), "avg_iq": (1.0, 5.0), "avg_length": (0.0, math.inf)}


def performance_table(
    records: pd.DataFrame | Iterable[Mapping[str, Any]], *, confidence: float = 0.95
) -> pd.DataFrame:
    """Absolute performance per reward and checkpoint [Table 1]: mean over runs with a t-interval.

    Parameters
    ----------
    records : DataFrame or iterable of dict
        One record per run and checkpoint with :data:`RECORD_COLUMNS`: ``reward``, ``run``,
        ``checkpoint``, ``success_rate`` (0–1), ``avg_iq`` (1–5), ``avg_length`` (turns).
    confidence : float
        Coverage of the Student-t interval over runs (NaN with one run).

    Returns
    -------
    DataFrame
        ``performance`` schema, sorted by reward (first appearance) and checkpoint.

    Examples
    --------
    >>> recs = [{"reward": "ts", "run": r, "checkpoint": 1, "success_rate": s, "avg_iq": 4.0,
    ...          "avg_length": 5.0} for r, s in (("a", 0.8), ("b", 1.0))]
    >>> t = performance_table(recs)
    >>> t[["reward", "checkpoint", "n_runs", "success_rate", "success_rate_low"]].round(3)
      reward  checkpoint  n_runs  success_rate  success_rate_low
    0     ts           1       2           0.9               0.0

    Interval ends are clipped to each quantity's range (success 0–1, IQ 1–5, length ≥ 0).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    frame = records.copy() if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    missing = [c for c in RECORD_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"records lack field(s) {', '.join(missing)} (expected {', '.join(RECORD_COLUMNS)})"
        )
    duplicated = frame.duplicated(["reward", "run", "checkpoint"])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise ValueError(
            f"records: run {str(first['run'])!r} of reward {str(first['reward'])!r} "
            f"has checkpoint {first['checkpoint']} twice"
        )
    rows = []
    order = {reward: i for i, reward in enumerate(dict.fromkeys(frame["reward"]))}
    for (reward, checkpoint), part in frame.groupby(["reward", "checkpoint"], sort=False):
        row: list[Any] = [reward, checkpoint, len(part)]
        for column in ("success_rate", "avg_iq", "avg_length"):
            values = pd.to_numeric(part[column], errors="raise").to_numpy(dtype=np.float64)
            mean, low, high = t_interval(values[~np.isnan(values)], confidence=confidence)
            floor, ceiling = _PERFORMANCE_RANGE[column]
            # max/min keep a NaN bound (one run) when it comes first
            row += [mean, max(low, floor), min(high, ceiling)]
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(SCHEMAS["performance"]))
    table = table.sort_values(
        ["reward", "checkpoint"], key=lambda s: s.map(order) if s.name == "reward" else s, kind="stable"
    )
    return typed_table(table.reset_index(drop=True))


