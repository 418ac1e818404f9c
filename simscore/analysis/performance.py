"""Absolute performance per reward model and checkpoint [paper's Table 1].

The number a reader of Table 1 wants is how the trained runs perform on the population of
simulated users, so the interval is one **over the evaluation users, the trained runs held
fixed**: every run is evaluated on its own fresh users at every checkpoint
(:mod:`policies.gpsarsa.evaluation`), the mean is the mean over all ``N = Σ n_r`` evaluation
dialogues of the ``R`` runs, and

* task success has the Wilson score interval of the ``Σ n_r · rate_r`` successes among the
  ``N`` dialogues;
* a mean (IQ, length) has ``mean ± t₀.₉₇₅,N−R · SE`` with ``SE² = Σ n_r s_r² / N²`` (``s_r``
  the standard deviation over run ``r``'s dialogues): the sampling error of the users, each
  run's own users independent of the others'.

How much the runs (seeds) differ is shown beside it as the range of the run means
(``*_run_min`` … ``*_run_max``): with three runs a Student-t interval over runs is too wide to
be informative (``t₀.₉₇₅,2 = 4.30``) and no number of evaluation users narrows it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from simscore.analysis.tables import RECORD_COLUMNS, SCHEMAS, typed_table
from simscore.stats import wilson_interval

__all__ = ["performance_table"]


_PERFORMANCE_RANGE = {"success_rate": (0.0, 1.0), "avg_iq": (1.0, 5.0), "avg_length": (0.0, math.inf)}
_SD = {"avg_iq": "avg_iq_sd", "avg_length": "avg_length_sd"}


def _users_interval(means: np.ndarray, sds: np.ndarray, n: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean over all dialogues and its t interval over the users (runs fixed; NaN below two dialogues)."""
    total = float(n.sum())
    mean = float((n * means).sum() / total)
    if total - len(n) < 1 or np.isnan(sds).any():
        return mean, math.nan, math.nan
    from scipy.special import stdtrit

    se = math.sqrt(float((n * sds**2).sum())) / total
    half = float(stdtrit(total - len(n), 0.5 + confidence / 2.0)) * se
    return mean, mean - half, mean + half


def performance_table(
    records: pd.DataFrame | Iterable[Mapping[str, Any]], *, confidence: float = 0.95
) -> pd.DataFrame:
    """Absolute performance per reward and checkpoint [Table 1]: mean over the runs' evaluation users.

    Parameters
    ----------
    records : DataFrame or iterable of dict
        One record per run and checkpoint with :data:`RECORD_COLUMNS`: ``reward``, ``run``,
        ``checkpoint``, ``eval_dialogues`` (``n_r``), ``success_rate`` (0–1), ``avg_iq``
        (1–5), ``avg_length`` (turns) and the standard deviations over the run's dialogues
        ``avg_iq_sd`` and ``avg_length_sd`` (as in a training run's ``evaluation.csv``).
    confidence : float
        Coverage of the intervals over the evaluation users (see the module docstring).

    Returns
    -------
    DataFrame
        ``performance`` schema, sorted by reward (first appearance) and checkpoint: per
        quantity the mean, its interval over the users (``_low``, ``_high``) and the range of
        the run means (``_run_min``, ``_run_max``); ``n_runs`` and ``n_dialogues``.

    Examples
    --------
    >>> recs = [{"reward": "ts", "run": r, "checkpoint": 1, "eval_dialogues": 100, "success_rate": s,
    ...          "avg_iq": 4.0, "avg_iq_sd": 1.0, "avg_length": 6.0, "avg_length_sd": 2.0}
    ...         for r, s in (("a", 0.97), ("b", 1.0))]
    >>> t = performance_table(recs)
    >>> t[["n_runs", "n_dialogues", "success_rate", "success_rate_run_min"]].round(3).to_dict("records")
    [{'n_runs': 2, 'n_dialogues': 200, 'success_rate': 0.985, 'success_rate_run_min': 0.97}]
    >>> round(float(t["avg_length_high"].iloc[0] - t["avg_length"].iloc[0]), 3)  # 1.972 * 2 / sqrt(200)
    0.279

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
        n = pd.to_numeric(part["eval_dialogues"], errors="raise").to_numpy(dtype=np.float64)
        if (n < 1).any():
            raise ValueError(f"records: eval_dialogues must be >= 1 (reward {reward!r}, checkpoint {checkpoint})")
        row: list[Any] = [reward, checkpoint, len(part), int(n.sum())]
        runs: list[float] = []
        for column in ("success_rate", "avg_iq", "avg_length"):
            values = pd.to_numeric(part[column], errors="raise").to_numpy(dtype=np.float64)
            floor, ceiling = _PERFORMANCE_RANGE[column]
            if column == "success_rate":
                mean = float((n * values).sum() / n.sum())
                low, high = wilson_interval(int(round(float((n * values).sum()))), int(n.sum()), confidence=confidence)
            else:
                sds = pd.to_numeric(part[_SD[column]], errors="raise").to_numpy(dtype=np.float64)
                mean, low, high = _users_interval(values, sds, n, confidence)
            # max/min keep a NaN bound (a single dialogue) when it comes first
            row += [mean, max(low, floor), min(high, ceiling)]
            runs += [float(values.min()), float(values.max())]
        rows.append(row + runs)
    table = pd.DataFrame(rows, columns=list(SCHEMAS["performance"]))
    table = table.sort_values(
        ["reward", "checkpoint"], key=lambda s: s.map(order) if s.name == "reward" else s, kind="stable"
    )
    return typed_table(table.reset_index(drop=True))
