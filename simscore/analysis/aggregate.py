"""Means over pairs of comparisons: seed-pair and reward-model aggregates, chance-level contrast."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from simscore.analysis.tables import AGG_COLUMNS, SCHEMAS, check_table, typed_table
from simscore.stats import Bootstrap, bootstrap_ci

__all__ = ["aggregate_pairs", "seeds_aggregate", "reward_models_aggregate", "final_rows", "contrast"]


def aggregate_pairs(
    table: pd.DataFrame,
    by: Sequence[str],
    *,
    bootstrap: Bootstrap | None = None,
) -> pd.DataFrame:
    """Mean over pairs (rows) per ``by`` and measure, with a bootstrap interval over pairs.

    Parameters
    ----------
    table : DataFrame
        Rows with ``measure``, ``mean``, ``ci_low``, ``ci_high`` and the ``by`` columns.
    by : sequence of str
        Grouping columns (``measure`` is always added last).
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the interval over pairs (default ``Bootstrap()``).

    Returns
    -------
    DataFrame
        ``*by, measure, mean, ci_low, ci_high, std, min, max, n_pairs``. Rows with a NaN mean
        are left out; ``ci_*`` is a seeded percentile bootstrap over pairs, or the pair's own
        interval when there is one pair; ``std`` uses ddof 1 (NaN for one pair).

    Examples
    --------
    >>> t = pd.DataFrame({"reward": ["ts"] * 3, "measure": ["tmr"] * 3, "mean": [0.5, 0.7, 0.9],
    ...                   "ci_low": [0.4, 0.6, 0.8], "ci_high": [0.6, 0.8, 1.0]})
    >>> aggregate_pairs(t, ["reward"])[["reward", "measure", "mean", "std", "min", "max", "n_pairs"]].round(3)
      reward measure  mean  std  min  max  n_pairs
    0     ts     tmr   0.7  0.2  0.5  0.9        3
    """
    settings = Bootstrap.resolve(bootstrap, "aggregate_pairs")
    by = list(by)
    needed = [*by, "measure", "mean", "ci_low", "ci_high"]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks column(s) {', '.join(missing)}")
    rows = []
    valid = table[table["mean"].notna()]
    for key, group in valid.groupby([*by, "measure"], sort=False):
        values = group["mean"].to_numpy(dtype=np.float64)
        if len(values) == 1:
            low, high = float(group["ci_low"].iloc[0]), float(group["ci_high"].iloc[0])
        else:
            low, high = bootstrap_ci(values, n_resamples=settings.n_resamples, confidence=settings.confidence,
                                     rng=settings.seed)
        std = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
        rows.append(
            (*key, float(values.mean()), low, high, std, float(values.min()), float(values.max()), len(values))
        )
    frame = pd.DataFrame(rows, columns=[*by, "measure", *AGG_COLUMNS])
    return typed_table(frame)


def seeds_aggregate(
    table: pd.DataFrame, *, bootstrap: Bootstrap | None = None
) -> pd.DataFrame:
    """Mean over seed pairs per context set, reward, checkpoint and measure (``seeds_aggregate`` schema).

    ``bootstrap`` as for :func:`aggregate_pairs`.
    """
    check_table(table, "seeds", "table")
    settings = Bootstrap.resolve(bootstrap, "seeds_aggregate")
    return aggregate_pairs(table, ["context_set", "reward", "checkpoint"], bootstrap=settings)


def reward_models_aggregate(
    table: pd.DataFrame, *, bootstrap: Bootstrap | None = None
) -> pd.DataFrame:
    """Mean over pairs per context set, checkpoint, group and measure (``reward_models_aggregate`` schema).

    ``bootstrap`` as for :func:`aggregate_pairs`.
    """
    check_table(table, "reward_models", "table")
    settings = Bootstrap.resolve(bootstrap, "reward_models_aggregate")
    return aggregate_pairs(table, ["context_set", "checkpoint", "group"], bootstrap=settings)


def final_rows(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Rows at the last checkpoint of each ``by`` group."""
    if table.empty:
        return table
    last = table.groupby(list(by), sort=False)["checkpoint"].transform("max")
    return table[table["checkpoint"] == last]


def contrast(
    *,
    chance: pd.DataFrame,
    convergence: pd.DataFrame | None = None,
    seeds: pd.DataFrame | None = None,
    reward_models: pd.DataFrame | None = None,
    bootstrap: Bootstrap | None = None,
) -> pd.DataFrame:
    """Chance level beside the trained comparisons at their final checkpoints (``contrast`` schema).

    Rows per context set and measure: ``"chance (random vs trained)"``,
    ``"convergence (final k vs k-1)"``, ``"seeds (final checkpoint)"`` and one
    ``"reward models <group> (checkpoint k)"`` per cross-reward group; each the mean over its
    pairs (:func:`aggregate_pairs`, with ``bootstrap``).
    """
    settings = Bootstrap.resolve(bootstrap, "contrast")
    check_table(chance, "chance", "chance")
    parts: list[pd.DataFrame] = [chance.assign(comparison="chance (random vs trained)")]
    if convergence is not None:
        check_table(convergence, "convergence", "convergence")
        final = final_rows(convergence, ["context_set", "reward", "run"])
        parts.append(final.assign(comparison="convergence (final k vs k-1)"))
    if seeds is not None:
        check_table(seeds, "seeds", "seeds")
        parts.append(final_rows(seeds, ["context_set", "reward"]).assign(comparison="seeds (final checkpoint)"))
    if reward_models is not None:
        check_table(reward_models, "reward_models", "reward_models")
        cross = reward_models[reward_models["reward_a"] != reward_models["reward_b"]]
        if not cross.empty:
            labels = "reward models " + cross["group"] + " (checkpoint " + cross["checkpoint"].astype(str) + ")"
            parts.append(cross.assign(comparison=labels))
    pooled = pd.concat(
        [p[["context_set", "comparison", "measure", "mean", "ci_low", "ci_high"]] for p in parts],
        ignore_index=True,
    )
    aggregated = aggregate_pairs(pooled, ["context_set", "comparison"], bootstrap=settings)
    order = {name: i for i, name in enumerate(dict.fromkeys(aggregated["context_set"]))}
    aggregated = aggregated.sort_values("context_set", key=lambda s: s.map(order), kind="stable")
    return aggregated[list(SCHEMAS["contrast"])].reset_index(drop=True)


