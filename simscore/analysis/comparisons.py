"""The paper's comparisons of policies' responses: convergence, seeds, reward models, chance level.

Each function compares :class:`~simscore.responses.Responses` with
:func:`~simscore.comparison.compare` and returns an :class:`~simscore.analysis.tables.AnalysisResult`:
a tidy table in its schema and the comparisons behind it, keyed by a named tuple of the
table's identity columns.

>>> from simscore import Act, Response, Responses
>>> ck = [Responses({f"c{i}": Response(Act.parse("hello()" if i < k else "bye()"))
...                  for i in range(4)}) for k in (1, 2, 4)]
>>> result = convergence(ck, ["tmr"], run="r1", reward="ts", context_set="col")
>>> result.table[["run", "checkpoint", "previous", "measure", "mean"]]
  run  checkpoint  previous measure  mean
0  r1           2         1     tmr  0.75
1  r1           3         2     tmr  0.50
>>> next(iter(result.comparisons))
ConvergenceKey(context_set='col', reward='ts', run='r1', checkpoint=2, previous=1)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from simscore.analysis.tables import (
    SCHEMAS,
    AnalysisResult,
    ChanceKey,
    ConvergenceKey,
    MeasuresArg,
    RewardModelsKey,
    SeedsKey,
    check_table,
    schema_frame,
    summary_rows,
)
from simscore.checks import check_int
from simscore.comparison import Comparison, compare
from simscore.measures import DEFAULT_MEASURES
from simscore.responses import Responses
from simscore.stats import Bootstrap
from simscore.stats.clusters import AUTO, Clusters

__all__ = [
    "convergence",
    "first_stable_checkpoint",
    "stability_table",
    "seeds",
    "reward_models",
    "chance_level",
]


def _ordered_checkpoints(
    checkpoints: Mapping[int, Responses] | Sequence[Responses], what: str
) -> list[tuple[int, Responses]]:
    if isinstance(checkpoints, Mapping):
        items = [(check_int(f"{what}: checkpoint label", k), v) for k, v in checkpoints.items()]
        items.sort(key=lambda kv: kv[0])
    elif isinstance(checkpoints, Sequence) and not isinstance(checkpoints, (str, bytes)):
        items = [(k, v) for k, v in enumerate(checkpoints, start=1)]
    else:
        raise TypeError(
            f"{what} must be a mapping checkpoint -> Responses or a sequence of Responses, "
            f"got {type(checkpoints).__name__}"
        )
    for k, responses in items:
        if not isinstance(responses, Responses):
            raise TypeError(
                f"{what}: checkpoint {k} must be simscore.Responses, got {type(responses).__name__}"
            )
    return items


def _compare(
    a: Responses, b: Responses, measures: MeasuresArg, metadata: Any, bootstrap: Bootstrap, clusters: Clusters
) -> Comparison:
    """One :func:`~simscore.comparison.compare` with the analysis' metadata, clusters and bootstrap settings."""
    return compare(a, b, measures, metadata=metadata, bootstrap=bootstrap, clusters=clusters)



# ----------------------------------------------------------------------------- convergence


def convergence(
    checkpoints: Mapping[int, Responses] | Sequence[Responses],
    measures: MeasuresArg = DEFAULT_MEASURES,
    *,
    run: str = "",
    reward: str = "",
    context_set: str = "",
    metadata: Any = None,
    clusters: Clusters = AUTO,
    bootstrap: Bootstrap | None = None,
) -> AnalysisResult[ConvergenceKey]:
    """Convergence of one run [paper's Table 2]: checkpoint k against checkpoint k − 1.

    Parameters
    ----------
    checkpoints : mapping int → Responses, or sequence of Responses
        The run's responses per checkpoint; a mapping is ordered by its integer labels, a
        sequence is labelled 1..K.
    measures : names or Measure objects
        As for :func:`~simscore.comparison.compare`.
    run, reward, context_set : str
        Labels written into the table.
    metadata
        Context metadata joined onto the scores (:func:`~simscore.comparison.compare`).
    clusters : "auto", str, sequence of str or None, default "auto"
        The unit of the intervals, as for :func:`~simscore.comparison.compare`: by default the
        dialogues of collected contexts (given their ``metadata``), else contexts; or metadata
        column(s) naming a context's cluster; None: contexts.
    bootstrap : simscore.stats.Bootstrap, optional
        Bootstrap settings of each comparison's intervals (default ``Bootstrap()``).

    Returns
    -------
    AnalysisResult
        ``table`` in the ``convergence`` schema (K − 1 rows per measure); comparisons keyed
        by :class:`~simscore.analysis.tables.ConvergenceKey`.
    """
    items = _ordered_checkpoints(checkpoints, "checkpoints")
    if len(items) < 2:
        raise ValueError(f"checkpoints: convergence needs at least two checkpoints, got {len(items)}")
    settings = Bootstrap.resolve(bootstrap, "convergence")
    rows: list[pd.DataFrame] = []
    comparisons: dict[ConvergenceKey, Comparison] = {}
    for (k_prev, previous), (k, current) in itertools.pairwise(items):
        comparison = _compare(current, previous, measures, metadata, settings, clusters)
        key = ConvergenceKey(context_set, reward, run, k, k_prev)
        comparisons[key] = comparison
        rows.append(summary_rows(comparison, **key._asdict()))
    return AnalysisResult(schema_frame(rows, "convergence"), comparisons, ConvergenceKey._fields)


def first_stable_checkpoint(curve: pd.Series | pd.DataFrame, threshold: float) -> int | None:
    """The first checkpoint from which on a curve stays at or above ``threshold``.

    Parameters
    ----------
    curve : Series or DataFrame
        Values indexed by checkpoint, or a ``convergence`` table restricted to one
        (context_set, reward, run, measure) (its ``checkpoint`` and ``mean`` columns are used).
    threshold : float

    Returns
    -------
    int or None
        The smallest checkpoint k with value ≥ threshold at k and at every later checkpoint;
        None if the last value is below the threshold (NaN counts as below).

    Examples
    --------
    >>> first_stable_checkpoint(pd.Series([0.5, 0.95, 0.8, 0.92, 0.99], index=[2, 3, 4, 5, 6]), 0.9)
    5
    >>> first_stable_checkpoint(pd.Series([0.95, 0.5], index=[2, 3]), 0.9) is None
    True
    """
    if isinstance(curve, pd.DataFrame):
        for column in ("checkpoint", "mean"):
            if column not in curve.columns:
                raise ValueError(f"curve lacks column {column!r}")
        identity = [c for c in ("context_set", "reward", "run", "measure") if c in curve.columns]
        if identity and len(curve.drop_duplicates(identity)) > 1:
            raise ValueError(
                "curve holds several curves; restrict it to one "
                f"({', '.join(identity)}) before calling first_stable_checkpoint"
            )
        if curve["checkpoint"].duplicated().any():
            raise ValueError("curve has repeated checkpoints")
        series = pd.Series(curve["mean"].to_numpy(), index=curve["checkpoint"].to_numpy())
    elif isinstance(curve, pd.Series):
        series = curve
    else:
        raise TypeError(f"curve must be a pandas Series or DataFrame, got {type(curve).__name__}")
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    series = series.sort_index()
    above = (series.to_numpy(dtype=np.float64) >= threshold)  # NaN compares False
    stable = None
    for checkpoint, ok in zip(reversed(series.index.tolist()), reversed(above.tolist()), strict=True):
        if not ok:
            break
        stable = int(checkpoint)
    return stable


def stability_table(table: pd.DataFrame, *, threshold: float = 0.9) -> pd.DataFrame:
    """:func:`first_stable_checkpoint` of every curve of a ``convergence`` table.

    Returns
    -------
    DataFrame
        ``stability`` schema; ``first_stable`` is a nullable integer (``<NA>`` = never).
    """
    check_table(table, "convergence", "table")
    rows = []
    for key, curve in table.groupby(["context_set", "reward", "run", "measure"], sort=False):
        rows.append((*key, float(threshold), first_stable_checkpoint(curve, threshold)))
    frame = pd.DataFrame(rows, columns=list(SCHEMAS["stability"]))
    frame["first_stable"] = pd.array(
        [pd.NA if v is None else v for v in frame["first_stable"]], dtype="Int64"
    )
    return frame


# ----------------------------------------------------------------------------- seeds / rewards


def seeds(
    runs: Mapping[str, Mapping[int, Responses] | Sequence[Responses]],
    measures: MeasuresArg = DEFAULT_MEASURES,
    *,
    reward: str = "",
    context_set: str = "",
    metadata: Any = None,
    clusters: Clusters = AUTO,
    bootstrap: Bootstrap | None = None,
) -> AnalysisResult[SeedsKey]:
    """Runs of one reward model with different seeds, pairwise at every checkpoint [Table 4, Figure 3].

    Parameters
    ----------
    runs : mapping run name → (mapping checkpoint → Responses, or sequence labelled 1..K)
        At least two runs. Every pair of runs (in the mapping's order: ``run_a`` comes first)
        is compared at every checkpoint both runs have.
    measures, reward, context_set, metadata, clusters, bootstrap
        As for :func:`convergence`.

    Returns
    -------
    AnalysisResult
        ``seeds`` schema; comparisons keyed by :class:`~simscore.analysis.tables.SeedsKey`.
    """
    if not isinstance(runs, Mapping) or len(runs) < 2:
        raise ValueError(f"runs must be a mapping of at least two run names to checkpoints, got {runs!r:.80}")
    ordered = {str(name): dict(_ordered_checkpoints(ck, f"runs[{name!r}]")) for name, ck in runs.items()}
    settings = Bootstrap.resolve(bootstrap, "seeds")
    rows: list[pd.DataFrame] = []
    comparisons: dict[SeedsKey, Comparison] = {}
    checkpoints = sorted(set().union(*(set(ck) for ck in ordered.values())))
    for k in checkpoints:
        for run_a, run_b in itertools.combinations(ordered, 2):
            if k not in ordered[run_a] or k not in ordered[run_b]:
                continue
            comparison = _compare(ordered[run_a][k], ordered[run_b][k], measures, metadata, settings, clusters)
            key = SeedsKey(context_set, reward, k, run_a, run_b)
            comparisons[key] = comparison
            rows.append(summary_rows(comparison, **key._asdict()))
    if not rows:
        raise ValueError("runs: no checkpoint is shared by any two runs")
    return AnalysisResult(schema_frame(rows, "seeds"), comparisons, SeedsKey._fields)


def reward_models(
    runs: Mapping[str, Mapping[str, Responses]],
    measures: MeasuresArg = DEFAULT_MEASURES,
    *,
    checkpoint: int,
    context_set: str = "",
    metadata: Any = None,
    clusters: Clusters = AUTO,
    bootstrap: Bootstrap | None = None,
) -> AnalysisResult[RewardModelsKey]:
    """Every run of reward A against every run of reward B at one checkpoint [Table 3, Figure 5].

    The within-reward pairs (A vs A, B vs B) are computed beside the cross pairs, so the
    ``group`` column holds e.g. ``"ts-ts"``, ``"iq-iq"`` and ``"ts-iq"``.

    Parameters
    ----------
    runs : mapping reward → (mapping run name → Responses at ``checkpoint``)
        At least two rewards. Groups follow the mapping's order: within groups first, then
        the cross groups ``"<first>-<second>"``.
    checkpoint : int
        The checkpoint label written into the table.
    measures, context_set, metadata, clusters, bootstrap
        As for :func:`convergence`.

    Returns
    -------
    AnalysisResult
        ``reward_models`` schema; comparisons keyed by
        :class:`~simscore.analysis.tables.RewardModelsKey`.
    """
    checkpoint = check_int("checkpoint", checkpoint)
    if not isinstance(runs, Mapping) or len(runs) < 2:
        raise ValueError("runs must map at least two reward names to their runs")
    for reward, reward_runs in runs.items():
        if not isinstance(reward_runs, Mapping) or not reward_runs:
            raise ValueError(f"runs[{reward!r}] must be a non-empty mapping run name -> Responses")
        for name, responses in reward_runs.items():
            if not isinstance(responses, Responses):
                raise TypeError(
                    f"runs[{reward!r}][{name!r}] must be simscore.Responses, got {type(responses).__name__}"
                )
    settings = Bootstrap.resolve(bootstrap, "reward_models")
    pairs: list[tuple[str, str, str, str]] = []
    for reward, reward_runs in runs.items():
        pairs += [(reward, a, reward, b) for a, b in itertools.combinations(reward_runs, 2)]
    for reward_a, reward_b in itertools.combinations(runs, 2):
        pairs += [(reward_a, a, reward_b, b) for a in runs[reward_a] for b in runs[reward_b]]
    rows: list[pd.DataFrame] = []
    comparisons: dict[RewardModelsKey, Comparison] = {}
    for reward_a, run_a, reward_b, run_b in pairs:
        comparison = _compare(runs[reward_a][run_a], runs[reward_b][run_b], measures, metadata, settings, clusters)
        key = RewardModelsKey(
            context_set, checkpoint, f"{reward_a}-{reward_b}", str(reward_a), str(run_a), str(reward_b), str(run_b)
        )
        comparisons[key] = comparison
        rows.append(summary_rows(comparison, **key._asdict()))
    return AnalysisResult(schema_frame(rows, "reward_models"), comparisons, RewardModelsKey._fields)


# ----------------------------------------------------------------------------- chance level


def chance_level(
    random: Responses,
    trained: Responses,
    measures: MeasuresArg = DEFAULT_MEASURES,
    *,
    checkpoint: int,
    reward: str = "",
    run: str = "",
    context_set: str = "",
    metadata: Any = None,
    clusters: Clusters = AUTO,
    bootstrap: Bootstrap | None = None,
) -> AnalysisResult[ChanceKey]:
    """A random policy against a trained one: what "dissimilar" looks like.

    Parameters
    ----------
    random : Responses
        A (seeded) random policy's responses.
    trained : Responses
        The trained policy's responses (run ``run`` of ``reward`` at ``checkpoint``).
    measures, reward, run, context_set, metadata, clusters, bootstrap
        As for :func:`convergence`.

    Returns
    -------
    AnalysisResult
        ``chance`` schema; comparisons keyed by :class:`~simscore.analysis.tables.ChanceKey`.
    """
    checkpoint = check_int("checkpoint", checkpoint)
    comparison = _compare(random, trained, measures, metadata, Bootstrap.resolve(bootstrap, "chance_level"),
                          clusters)
    key = ChanceKey(context_set, reward, run, checkpoint)
    table = schema_frame([summary_rows(comparison, **key._asdict())], "chance")
    return AnalysisResult(table, {key: comparison}, ChanceKey._fields)


