"""The paper's analyses over comparisons: convergence, seeds, reward models, per turn, correlation.

Pure functions (pandas in, pandas out; no file IO, no plotting) that turn
:class:`~simscore.compare.Comparison` results into the tidy tables behind the tables and
figures of Ultes & Maier (SIGDIAL 2020), plus the chance-level baseline, the absolute
performance table and a check of the paper's findings. :mod:`simscore.plots` draws the
tables and :mod:`simscore.report` saves them and writes the Markdown report.

Table schemas
-------------
One schema per table, used everywhere (analysis, plots, report, saved CSV/JSON files).
Every comparison-derived table has one row per (comparison, measure); its identity columns
come before ``measure`` and it ends in the statistics of ``Comparison.summary``
(:data:`STAT_COLUMNS`)::

    convergence    context_set, reward, run, checkpoint, previous, measure, mean, ci_low, ci_high, count, missing
    seeds          context_set, reward, checkpoint, run_a, run_b, measure, mean, ci_low, ci_high, count, missing
    reward_models  context_set, checkpoint, group, reward_a, run_a, reward_b, run_b, measure,
                   mean, ci_low, ci_high, count, missing
    chance         context_set, reward, run, checkpoint, measure, mean, ci_low, ci_high, count, missing
    per_turn       group, turn_index, measure, mean, ci_low, ci_high, count
    correlation    subset, measure_a, measure_b, r, mse, n
    performance    reward, checkpoint, n_runs, success_rate, success_rate_low, success_rate_high,
                   avg_iq, avg_iq_low, avg_iq_high, avg_length, avg_length_low, avg_length_high

Derived tables (computed from the ones above, never needed as input)::

    seeds_aggregate          context_set, reward, checkpoint, measure, mean, ci_low, ci_high, std, min, max, n_pairs
    reward_models_aggregate  context_set, checkpoint, group, measure, mean, ci_low, ci_high, std, min, max, n_pairs
    contrast                 context_set, comparison, measure, mean, ci_low, ci_high, n_pairs
    stability                context_set, reward, run, measure, threshold, first_stable

Meaning of the columns:

- ``context_set``: the name of the context set compared on (``"col"``, ``"gen"``; free text).
- ``reward``, ``reward_a``, ``reward_b``: reward model of a run (``"ts"``, ``"iq"``; free text).
- ``run``, ``run_a``, ``run_b``: run name (e.g. ``"ts-seed1"``), unique within a reward.
- ``checkpoint``: integer checkpoint label k (1..K, or dialogues trained; any increasing ints).
  In ``convergence`` a row compares checkpoint ``checkpoint`` with the one before it,
  ``previous``.
- ``group``: ``"<reward_a>-<reward_b>"``, e.g. ``"ts-ts"``, ``"iq-iq"``, ``"ts-iq"``.
- ``mean``: the rate (mean over scored contexts); ``ci_low``/``ci_high``: its seeded
  bootstrap interval; ``count``: scored contexts; ``missing``: NaN pairs left out.
- ``turn_index``: the contexts' turn index metadata; ``count`` there: scored pairs pooled.
- ``subset``: ``"all"`` pairs or ``"nonmatching"`` pairs only (TMR = 0); ``r``: Pearson r;
  ``mse``: mean squared difference; ``n``: pairs where both measures are defined.
- aggregates: ``mean`` over pairs of the pairs' means, ``ci_low``/``ci_high`` a seeded
  percentile bootstrap over pairs (a single pair keeps its own interval), ``std`` (ddof 1),
  ``min``/``max`` over pairs, ``n_pairs``.
- ``performance``: the mean over runs per reward and checkpoint and its Student-t interval
  over runs (NaN with a single run).

String columns hold ``str``, ``checkpoint``/``previous``/``turn_index``/``count``/
``missing``/``n``/``n_pairs``/``n_runs`` hold ints, the rest floats.

Example
-------
>>> from simscore import Act, Response, Responses
>>> ck = [Responses({f"c{i}": Response(Act.parse("hello()" if i < k else "bye()"))
...                  for i in range(4)}) for k in (1, 2, 4)]
>>> result = convergence(ck, ["tmr"], run="r1", reward="ts", context_set="col")
>>> result.table[["run", "checkpoint", "previous", "measure", "mean"]]
  run  checkpoint  previous measure  mean
0  r1           2         1     tmr  0.75
1  r1           3         2     tmr  0.50
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from simscore.compare import DEFAULT_MEASURES, Comparison, bootstrap_ci, compare
from simscore.measures.base import Measure
from simscore.responses import Responses

__all__ = [
    "STAT_COLUMNS",
    "SCHEMAS",
    "RECORD_COLUMNS",
    "AnalysisResult",
    "Correlation",
    "Finding",
    "summary_rows",
    "check_table",
    "combine",
    "convergence",
    "first_stable_checkpoint",
    "stability_table",
    "seeds",
    "seeds_aggregate",
    "reward_models",
    "reward_models_aggregate",
    "aggregate_pairs",
    "chance_level",
    "contrast",
    "pooled_scores",
    "per_turn",
    "correlation",
    "correlation_table",
    "correlation_matrices",
    "performance_table",
    "findings",
]

#: The statistics every comparison-derived table ends in (from ``Comparison.summary``).
STAT_COLUMNS: tuple[str, ...] = ("mean", "ci_low", "ci_high", "count", "missing")
_AGG_COLUMNS: tuple[str, ...] = ("mean", "ci_low", "ci_high", "std", "min", "max", "n_pairs")

#: Column names of every table, by table name (see the module docstring).
SCHEMAS: dict[str, tuple[str, ...]] = {
    "convergence": ("context_set", "reward", "run", "checkpoint", "previous", "measure", *STAT_COLUMNS),
    "seeds": ("context_set", "reward", "checkpoint", "run_a", "run_b", "measure", *STAT_COLUMNS),
    "reward_models": (
        "context_set", "checkpoint", "group", "reward_a", "run_a", "reward_b", "run_b", "measure",
        *STAT_COLUMNS,
    ),
    "chance": ("context_set", "reward", "run", "checkpoint", "measure", *STAT_COLUMNS),
    "per_turn": ("group", "turn_index", "measure", "mean", "ci_low", "ci_high", "count"),
    "correlation": ("subset", "measure_a", "measure_b", "r", "mse", "n"),
    "performance": (
        "reward", "checkpoint", "n_runs",
        "success_rate", "success_rate_low", "success_rate_high",
        "avg_iq", "avg_iq_low", "avg_iq_high",
        "avg_length", "avg_length_low", "avg_length_high",
    ),
    "seeds_aggregate": ("context_set", "reward", "checkpoint", "measure", *_AGG_COLUMNS),
    "reward_models_aggregate": ("context_set", "checkpoint", "group", "measure", *_AGG_COLUMNS),
    "contrast": ("context_set", "comparison", "measure", "mean", "ci_low", "ci_high", "n_pairs"),
    "stability": ("context_set", "reward", "run", "measure", "threshold", "first_stable"),
}

#: Columns of the evaluation records :func:`performance_table` reads (one per run and checkpoint).
RECORD_COLUMNS: tuple[str, ...] = ("reward", "run", "checkpoint", "success_rate", "avg_iq", "avg_length")

_INT_COLUMNS = frozenset({"checkpoint", "previous", "turn_index", "count", "missing", "n", "n_pairs", "n_runs"})
_STR_COLUMNS = frozenset(
    {"context_set", "reward", "run", "run_a", "run_b", "reward_a", "reward_b", "group", "measure",
     "subset", "measure_a", "measure_b", "comparison"}
)

_FLOAT_COLUMNS = frozenset(
    c for columns in SCHEMAS.values() for c in columns
    if c not in _INT_COLUMNS and c not in _STR_COLUMNS and c != "first_stable"
)

MeasuresArg = str | Measure | Iterable[str | Measure]


# ----------------------------------------------------------------------------- result types


@dataclass(frozen=True, eq=False)
class AnalysisResult:
    """A tidy table and the comparisons behind it.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (comparison, measure), in the schema of the analysis (:data:`SCHEMAS`).
    comparisons : dict
        Identity tuple (the values of ``key_columns``) → :class:`Comparison`, for the
        per-context analyses (:func:`per_turn`, :func:`correlation`).
    key_columns : tuple of str
        The table's identity columns (every column before ``measure``).
    """

    table: pd.DataFrame
    comparisons: Mapping[tuple[Any, ...], Comparison] = field(default_factory=dict)
    key_columns: tuple[str, ...] = ()

    def select(self, **labels: Any) -> list[Comparison]:
        """The comparisons whose identity columns equal ``labels`` (e.g. ``checkpoint=10``).

        >>> from simscore import Act, Response, Responses
        >>> r = Responses({"c1": Response(Act.parse("hello()"))})
        >>> res = convergence([r, r, r], ["tmr"], run="r1")
        >>> [c.mean("tmr") for c in res.select(checkpoint=3)]
        [1.0]
        """
        unknown = [k for k in labels if k not in self.key_columns]
        if unknown:
            raise KeyError(
                f"unknown label(s) {', '.join(map(repr, unknown))}; "
                f"this result is keyed by {', '.join(self.key_columns)}"
            )
        positions = {name: i for i, name in enumerate(self.key_columns)}
        return [
            comparison
            for key, comparison in self.comparisons.items()
            if all(key[positions[k]] == v for k, v in labels.items())
        ]


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


@dataclass(frozen=True)
class Finding:
    """Whether one of the paper's findings holds in this run, with the numbers.

    Attributes
    ----------
    name : str
        Short identifier: ``converge``, ``seeds_differ``, ``dmr_above_tmr``,
        ``cer_cmr_agree``, ``gen_below_col``.
    holds : bool or None
        None when the tables needed to judge it are absent.
    evidence : str
        The numbers and thresholds behind the verdict.
    claim : str
        The finding as the paper states it.
    """

    name: str
    holds: bool | None
    evidence: str
    claim: str = ""


# ----------------------------------------------------------------------------- helpers


def _check_int_label(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    return int(value)


def _ordered_checkpoints(
    checkpoints: Mapping[int, Responses] | Sequence[Responses], what: str
) -> list[tuple[int, Responses]]:
    if isinstance(checkpoints, Mapping):
        items = [(_check_int_label(f"{what}: checkpoint label", k), v) for k, v in checkpoints.items()]
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


def summary_rows(comparison: Comparison, **labels: Any) -> pd.DataFrame:
    """One comparison's summary as tidy rows: ``*labels, measure, mean, ci_low, ci_high, count, missing``.

    >>> from simscore import Act, Response, Responses, compare
    >>> r = Responses({"c1": Response(Act.parse("hello()"))})
    >>> summary_rows(compare(r, r, ["tmr", "dmr"]), run="x")
      run measure  mean  ci_low  ci_high  count  missing
    0   x     tmr   1.0     1.0      1.0      1        0
    1   x     dmr   1.0     1.0      1.0      1        0
    """
    summary = comparison.summary
    n = len(summary)
    data: dict[str, Any] = {name: [value] * n for name, value in labels.items()}
    data["measure"] = [str(m) for m in summary.index]
    for column in STAT_COLUMNS:
        values = summary[column].to_numpy()
        data[column] = values.astype(np.int64) if column in ("count", "missing") else values.astype(np.float64)
    return pd.DataFrame(data)


def _frame(rows: list[pd.DataFrame], schema: str) -> pd.DataFrame:
    columns = list(SCHEMAS[schema])
    if rows:
        frame = pd.concat(rows, ignore_index=True)[columns]
    else:
        frame = pd.DataFrame({c: [] for c in columns})
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Cast the schema columns to their types (ints, strings, floats); other columns stay as they are."""
    frame = frame.copy()
    for column in frame.columns:
        if column in _INT_COLUMNS:
            if frame[column].isna().any():
                frame[column] = frame[column].astype("Int64")
            else:
                frame[column] = frame[column].astype(np.int64)
        elif column in _STR_COLUMNS:
            frame[column] = frame[column].astype(str)
        elif column in _FLOAT_COLUMNS:
            frame[column] = frame[column].astype(np.float64)
    return frame


def check_table(table: pd.DataFrame, schema: str, parameter: str = "table") -> None:
    """Raise if ``table`` is not a DataFrame with every column of schema ``schema``.

    >>> check_table(pd.DataFrame({"subset": []}), "correlation")
    Traceback (most recent call last):
    ...
    ValueError: table lacks column(s) measure_a, measure_b, r, mse, n of the 'correlation' table ...
    """
    if schema not in SCHEMAS:
        raise ValueError(f"unknown table schema {schema!r} (known: {', '.join(SCHEMAS)})")
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{parameter} must be a pandas DataFrame, got {type(table).__name__}")
    missing = [c for c in SCHEMAS[schema] if c not in table.columns]
    if missing:
        raise ValueError(
            f"{parameter} lacks column(s) {', '.join(missing)} of the {schema!r} table "
            f"(expected {', '.join(SCHEMAS[schema])})"
        )


def combine(results: Iterable[AnalysisResult]) -> AnalysisResult:
    """Concatenate results of the same analysis (e.g. ``convergence`` of every run).

    >>> from simscore import Act, Response, Responses
    >>> r = Responses({"c1": Response(Act.parse("hello()"))})
    >>> both = combine([convergence([r, r], ["tmr"], run=name) for name in ("r1", "r2")])
    >>> both.table["run"].tolist(), len(both.comparisons)
    (['r1', 'r2'], 2)
    """
    results = list(results)
    if not results:
        raise ValueError("results: need at least one AnalysisResult")
    keys = {r.key_columns for r in results}
    if len(keys) != 1:
        raise ValueError(f"results: cannot combine tables with different identity columns {sorted(keys)}")
    comparisons: dict[tuple[Any, ...], Comparison] = {}
    for result in results:
        for key, comparison in result.comparisons.items():
            if key in comparisons:
                raise ValueError(f"results: comparison {key!r} appears in more than one result")
            comparisons[key] = comparison
    table = _typed(pd.concat([r.table for r in results], ignore_index=True))
    return AnalysisResult(table=table, comparisons=comparisons, key_columns=results[0].key_columns)


def _compare_kwargs(metadata: Any, n_resamples: int, confidence: float, seed: int) -> dict[str, Any]:
    return {"metadata": metadata, "n_resamples": n_resamples, "confidence": confidence, "seed": seed}


# ----------------------------------------------------------------------------- convergence


def convergence(
    checkpoints: Mapping[int, Responses] | Sequence[Responses],
    measures: MeasuresArg = DEFAULT_MEASURES,
    *,
    run: str = "",
    reward: str = "",
    context_set: str = "",
    metadata: Any = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AnalysisResult:
    """Convergence of one run [paper's Table 2]: checkpoint k against checkpoint k − 1.

    Parameters
    ----------
    checkpoints : mapping int → Responses, or sequence of Responses
        The run's responses per checkpoint; a mapping is ordered by its integer labels, a
        sequence is labelled 1..K.
    measures : names or Measure objects
        As for :func:`~simscore.compare.compare`.
    run, reward, context_set : str
        Labels written into the table.
    metadata, n_resamples, confidence, seed
        Passed to :func:`~simscore.compare.compare`.

    Returns
    -------
    AnalysisResult
        ``table`` in the ``convergence`` schema (K − 1 rows per measure); comparisons keyed
        by ``(context_set, reward, run, checkpoint, previous)``.
    """
    items = _ordered_checkpoints(checkpoints, "checkpoints")
    if len(items) < 2:
        raise ValueError(f"checkpoints: convergence needs at least two checkpoints, got {len(items)}")
    kwargs = _compare_kwargs(metadata, n_resamples, confidence, seed)
    rows, comparisons = [], {}
    for (k_prev, previous), (k, current) in itertools.pairwise(items):
        comparison = compare(current, previous, measures, **kwargs)
        labels = {"context_set": context_set, "reward": reward, "run": run, "checkpoint": k, "previous": k_prev}
        comparisons[tuple(labels.values())] = comparison
        rows.append(summary_rows(comparison, **labels))
    return AnalysisResult(_frame(rows, "convergence"), comparisons, SCHEMAS["convergence"][:5])


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
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AnalysisResult:
    """Runs of one reward model with different seeds, pairwise at every checkpoint [Table 4, Figure 3].

    Parameters
    ----------
    runs : mapping run name → (mapping checkpoint → Responses, or sequence labelled 1..K)
        At least two runs. Every pair of runs (in the mapping's order: ``run_a`` comes first)
        is compared at every checkpoint both runs have.
    measures, reward, context_set, metadata, n_resamples, confidence, seed
        As for :func:`convergence`.

    Returns
    -------
    AnalysisResult
        ``seeds`` schema; comparisons keyed by ``(context_set, reward, checkpoint, run_a, run_b)``.
    """
    if not isinstance(runs, Mapping) or len(runs) < 2:
        raise ValueError(f"runs must be a mapping of at least two run names to checkpoints, got {runs!r:.80}")
    ordered = {str(name): dict(_ordered_checkpoints(ck, f"runs[{name!r}]")) for name, ck in runs.items()}
    kwargs = _compare_kwargs(metadata, n_resamples, confidence, seed)
    rows, comparisons = [], {}
    checkpoints = sorted(set().union(*(set(ck) for ck in ordered.values())))
    for k in checkpoints:
        for run_a, run_b in itertools.combinations(ordered, 2):
            if k not in ordered[run_a] or k not in ordered[run_b]:
                continue
            comparison = compare(ordered[run_a][k], ordered[run_b][k], measures, **kwargs)
            labels = {
                "context_set": context_set, "reward": reward, "checkpoint": k, "run_a": run_a, "run_b": run_b,
            }
            comparisons[tuple(labels.values())] = comparison
            rows.append(summary_rows(comparison, **labels))
    if not rows:
        raise ValueError("runs: no checkpoint is shared by any two runs")
    return AnalysisResult(_frame(rows, "seeds"), comparisons, SCHEMAS["seeds"][:5])


def reward_models(
    runs: Mapping[str, Mapping[str, Responses]],
    measures: MeasuresArg = DEFAULT_MEASURES,
    *,
    checkpoint: int,
    context_set: str = "",
    metadata: Any = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AnalysisResult:
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
    measures, context_set, metadata, n_resamples, confidence, seed
        As for :func:`convergence`.

    Returns
    -------
    AnalysisResult
        ``reward_models`` schema; comparisons keyed by
        ``(context_set, checkpoint, group, reward_a, run_a, reward_b, run_b)``.
    """
    checkpoint = _check_int_label("checkpoint", checkpoint)
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
    kwargs = _compare_kwargs(metadata, n_resamples, confidence, seed)
    pairs: list[tuple[str, str, str, str]] = []
    for reward, reward_runs in runs.items():
        pairs += [(reward, a, reward, b) for a, b in itertools.combinations(reward_runs, 2)]
    for reward_a, reward_b in itertools.combinations(runs, 2):
        pairs += [(reward_a, a, reward_b, b) for a in runs[reward_a] for b in runs[reward_b]]
    rows, comparisons = [], {}
    for reward_a, run_a, reward_b, run_b in pairs:
        comparison = compare(runs[reward_a][run_a], runs[reward_b][run_b], measures, **kwargs)
        labels = {
            "context_set": context_set, "checkpoint": checkpoint, "group": f"{reward_a}-{reward_b}",
            "reward_a": str(reward_a), "run_a": str(run_a), "reward_b": str(reward_b), "run_b": str(run_b),
        }
        comparisons[tuple(labels.values())] = comparison
        rows.append(summary_rows(comparison, **labels))
    return AnalysisResult(_frame(rows, "reward_models"), comparisons, SCHEMAS["reward_models"][:7])


def aggregate_pairs(
    table: pd.DataFrame,
    by: Sequence[str],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean over pairs (rows) per ``by`` and measure, with a bootstrap interval over pairs.

    Parameters
    ----------
    table : DataFrame
        Rows with ``measure``, ``mean``, ``ci_low``, ``ci_high`` and the ``by`` columns.
    by : sequence of str
        Grouping columns (``measure`` is always added last).

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
            low, high = bootstrap_ci(values, n_resamples=n_resamples, confidence=confidence, rng=seed)
        std = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
        rows.append(
            (*key, float(values.mean()), low, high, std, float(values.min()), float(values.max()), len(values))
        )
    frame = pd.DataFrame(rows, columns=[*by, "measure", *_AGG_COLUMNS])
    return _typed(frame)


def seeds_aggregate(table: pd.DataFrame, **bootstrap: Any) -> pd.DataFrame:
    """Mean over seed pairs per context set, reward, checkpoint and measure (``seeds_aggregate`` schema).

    ``bootstrap`` keywords (``n_resamples``, ``confidence``, ``seed``) go to :func:`aggregate_pairs`.
    """
    check_table(table, "seeds", "table")
    return aggregate_pairs(table, ["context_set", "reward", "checkpoint"], **bootstrap)


def reward_models_aggregate(table: pd.DataFrame, **bootstrap: Any) -> pd.DataFrame:
    """Mean over pairs per context set, checkpoint, group and measure (``reward_models_aggregate`` schema)."""
    check_table(table, "reward_models", "table")
    return aggregate_pairs(table, ["context_set", "checkpoint", "group"], **bootstrap)


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
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AnalysisResult:
    """A random policy against a trained one: what "dissimilar" looks like.

    Parameters
    ----------
    random : Responses
        A (seeded) random policy's responses.
    trained : Responses
        The trained policy's responses (run ``run`` of ``reward`` at ``checkpoint``).

    Returns
    -------
    AnalysisResult
        ``chance`` schema; comparisons keyed by ``(context_set, reward, run, checkpoint)``.
    """
    checkpoint = _check_int_label("checkpoint", checkpoint)
    comparison = compare(random, trained, measures, **_compare_kwargs(metadata, n_resamples, confidence, seed))
    labels = {"context_set": context_set, "reward": reward, "run": run, "checkpoint": checkpoint}
    table = _frame([summary_rows(comparison, **labels)], "chance")
    return AnalysisResult(table, {tuple(labels.values()): comparison}, SCHEMAS["chance"][:4])


def _final(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
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
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Chance level beside the trained comparisons at their final checkpoints (``contrast`` schema).

    Rows per context set and measure: ``"chance (random vs trained)"``,
    ``"convergence (final k vs k-1)"``, ``"seeds (final checkpoint)"`` and one
    ``"reward models <group> (checkpoint k)"`` per cross-reward group; each the mean over its
    pairs (:func:`aggregate_pairs`).
    """
    check_table(chance, "chance", "chance")
    parts: list[pd.DataFrame] = [chance.assign(comparison="chance (random vs trained)")]
    if convergence is not None:
        check_table(convergence, "convergence", "convergence")
        final = _final(convergence, ["context_set", "reward", "run"])
        parts.append(final.assign(comparison="convergence (final k vs k-1)"))
    if seeds is not None:
        check_table(seeds, "seeds", "seeds")
        parts.append(_final(seeds, ["context_set", "reward"]).assign(comparison="seeds (final checkpoint)"))
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
    aggregated = aggregate_pairs(
        pooled, ["context_set", "comparison"], n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    order = {name: i for i, name in enumerate(dict.fromkeys(aggregated["context_set"]))}
    aggregated = aggregated.sort_values("context_set", key=lambda s: s.map(order), kind="stable")
    return aggregated[list(SCHEMAS["contrast"])].reset_index(drop=True)


# ----------------------------------------------------------------------------- per-context analyses


ScoresArg = Comparison | Iterable[Comparison] | AnalysisResult | pd.DataFrame


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


def _pool(scores: ScoresArg, measures: Iterable[str] | None) -> tuple[pd.DataFrame, list[str]]:
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
    frame, names = _pool(scores, measures)
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
    return _typed(pd.DataFrame(rows, columns=list(SCHEMAS["per_turn"])))


def _pearson_mse(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = len(x)
    if n == 0:
        return float("nan"), float("nan"), 0
    mse = float(np.mean((x - y) ** 2))
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    # a (numerically) constant column has no correlation
    if n < 2 or sxx <= 1e-24 * n or syy <= 1e-24 * n:
        return float("nan"), mse, n
    r = float(dx @ dy) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r)), mse, n


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
    frame, names = _pool(scores, measures)
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
            value_r, value_mse, count = _pearson_mse(data[a], data[b])
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
    frame, names = _pool(scores, measures)
    subsets = ["all", "nonmatching"] if match_measure in frame.columns else ["all"]
    rows = []
    for subset in subsets:
        result = correlation(frame, measures=names, subset=subset, match_measure=match_measure)
        for a in names:
            for b in names:
                rows.append((subset, a, b, result.r.loc[a, b], result.mse.loc[a, b], int(result.n.loc[a, b])))
    return _typed(pd.DataFrame(rows, columns=list(SCHEMAS["correlation"])))


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


# ----------------------------------------------------------------------------- absolute performance


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
        row = frame[duplicated].iloc[0]
        raise ValueError(
            f"records: run {str(row['run'])!r} of reward {str(row['reward'])!r} "
            f"has checkpoint {row['checkpoint']} twice"
        )
    from scipy import stats

    rows = []
    order = {reward: i for i, reward in enumerate(dict.fromkeys(frame["reward"]))}
    for (reward, checkpoint), part in frame.groupby(["reward", "checkpoint"], sort=False):
        row: list[Any] = [reward, checkpoint, len(part)]
        for column in ("success_rate", "avg_iq", "avg_length"):
            values = pd.to_numeric(part[column], errors="raise").to_numpy(dtype=np.float64)
            values = values[~np.isnan(values)]
            mean = float(values.mean()) if len(values) else float("nan")
            if len(values) > 1:
                half = float(stats.t.ppf((1 + confidence) / 2, len(values) - 1)) * float(
                    values.std(ddof=1)
                ) / math.sqrt(len(values))
                low, high = _PERFORMANCE_RANGE[column]
                row += [mean, max(mean - half, low), min(mean + half, high)]
            else:
                row += [mean, float("nan"), float("nan")]
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(SCHEMAS["performance"]))
    table = table.sort_values(
        ["reward", "checkpoint"], key=lambda s: s.map(order) if s.name == "reward" else s, kind="stable"
    )
    return _typed(table.reset_index(drop=True))


# ----------------------------------------------------------------------------- findings

_CLAIMS = {
    "converge": (
        "(1) Policies converge: checkpoint-to-checkpoint TMR of the final checkpoints is high "
        "and stable or rising."
    ),
    "seeds_differ": (
        "(2) Runs with different seeds do not converge to the same behaviour: seed-pair TMR at the "
        "final checkpoint is clearly below the convergence TMR."
    ),
    "dmr_above_tmr": (
        "(3) DMR is much higher than TMR: policies choose the same dialogue act far more often "
        "than the same full action."
    ),
    "cer_cmr_agree": "(4) CER and CMR agree closely (high Pearson r, small mean squared error).",
    "gen_below_col": "(5) C_gen gives lower absolute scores than C_col, with the same trends.",
}


# thresholds are compared with this slack, so that 0.95 - 0.90 counts as a difference of 0.05
_EPS = 1e-9


def _fmt(value: float) -> str:
    return "nan" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _label(*parts: Any) -> str:
    return "/".join(str(p) for p in parts if str(p))


def _tmr_by_final(table: pd.DataFrame, by: list[str], measure: str = "tmr") -> dict[tuple, float]:
    part = table[table["measure"] == measure]
    final = _final(part, by)
    return {
        (key if isinstance(key, tuple) else (key,)): float(values.mean())
        for key, values in final.groupby(by, sort=False)["mean"]
    }


def _finding_converge(conv: pd.DataFrame | None, threshold: float, window: int, tolerance: float) -> Finding:
    if conv is None or conv.empty or not (conv["measure"] == "tmr").any():
        return Finding("converge", None, "no convergence table with TMR", _CLAIMS["converge"])
    parts, verdicts = [], []
    tmr = conv[conv["measure"] == "tmr"]
    for key, group in tmr.groupby(["context_set", "reward"], sort=False):
        curve = group.groupby("checkpoint")["mean"].mean().sort_index()
        final_k, final = int(curve.index[-1]), float(curve.iloc[-1])
        earlier = curve.iloc[-1 - window : -1]
        ok = final >= threshold - _EPS
        text = f"{_fmt(final)} ({_label(*key)}, k={final_k}"
        if len(earlier):
            before = float(earlier.mean())
            ok = ok and final >= before - tolerance - _EPS
            text += f"; mean of the {len(earlier)} checkpoint(s) before {_fmt(before)}"
        parts.append(text + ")")
        verdicts.append(ok)
    holds = all(verdicts)
    evidence = (
        f"final-checkpoint convergence TMR (mean over runs) {', '.join(parts)}; "
        f"needs ≥ {threshold:g} and no drop of more than {tolerance:g} below the earlier mean"
    )
    return Finding("converge", holds, evidence, _CLAIMS["converge"])


def _finding_seeds(conv: pd.DataFrame | None, seed_table: pd.DataFrame | None, margin: float) -> Finding:
    if conv is None or seed_table is None or conv.empty or seed_table.empty:
        return Finding(
            "seeds_differ", None, "needs both the convergence and the seeds tables", _CLAIMS["seeds_differ"]
        )
    conv_final = _tmr_by_final(conv, ["context_set", "reward"])
    seed_final = _tmr_by_final(seed_table, ["context_set", "reward"])
    parts, verdicts = [], []
    for key, seed_value in seed_final.items():
        if key not in conv_final:
            continue
        conv_value = conv_final[key]
        verdicts.append(seed_value <= conv_value - margin + _EPS)
        parts.append(f"{_fmt(seed_value)} vs {_fmt(conv_value)} ({_label(*key)})")
    if not verdicts:
        return Finding(
            "seeds_differ", None, "no (context set, reward) appears in both tables", _CLAIMS["seeds_differ"]
        )
    evidence = (
        f"final-checkpoint seed-pair TMR vs convergence TMR: {', '.join(parts)}; "
        f"needs seed-pair TMR ≤ convergence TMR − {margin:g}"
    )
    return Finding("seeds_differ", all(verdicts), evidence, _CLAIMS["seeds_differ"])


def _finding_dmr(seed_table: pd.DataFrame | None, rm_table: pd.DataFrame | None, margin: float) -> Finding:
    if seed_table is not None and not seed_table.empty:
        table, by, source = seed_table, ["context_set", "reward"], "seed pairs at the final checkpoint"
    elif rm_table is not None and not rm_table.empty:
        table, by, source = rm_table, ["context_set", "group"], "reward-model pairs"
    else:
        return Finding(
            "dmr_above_tmr", None, "needs the seeds or the reward_models table", _CLAIMS["dmr_above_tmr"]
        )
    tmr = _tmr_by_final(table, by, "tmr")
    dmr = _tmr_by_final(table, by, "dmr")
    parts, verdicts = [], []
    for key in tmr:
        if key not in dmr:
            continue
        verdicts.append(dmr[key] - tmr[key] >= margin - _EPS)
        parts.append(f"DMR {_fmt(dmr[key])} vs TMR {_fmt(tmr[key])} ({_label(*key)})")
    if not verdicts:
        return Finding("dmr_above_tmr", None, "the tables lack TMR or DMR", _CLAIMS["dmr_above_tmr"])
    evidence = f"{source}: {', '.join(parts)}; needs DMR − TMR ≥ {margin:g}"
    return Finding("dmr_above_tmr", all(verdicts), evidence, _CLAIMS["dmr_above_tmr"])


def _finding_cer_cmr(table: pd.DataFrame | None, min_r: float, max_mse: float) -> Finding:
    if table is None or table.empty:
        return Finding("cer_cmr_agree", None, "no correlation table", _CLAIMS["cer_cmr_agree"])

    def cell(subset: str) -> tuple[float, float, int] | None:
        row = table[(table["subset"] == subset) & (table["measure_a"] == "cer") & (table["measure_b"] == "cmr")]
        if row.empty:
            return None
        return float(row["r"].iloc[0]), float(row["mse"].iloc[0]), int(row["n"].iloc[0])

    everything = cell("all")
    if everything is None:
        return Finding("cer_cmr_agree", None, "the correlation table lacks CER or CMR", _CLAIMS["cer_cmr_agree"])
    r, mse, n = everything
    holds = (not math.isnan(r)) and r >= min_r - _EPS and mse <= max_mse + _EPS
    evidence = f"all pairs: r = {_fmt(r)}, MSE = {_fmt(mse)} (n = {n})"
    other = cell("nonmatching")
    if other is not None:
        evidence += f"; non-matching pairs: r = {_fmt(other[0])}, MSE = {_fmt(other[1])} (n = {other[2]})"
    evidence += f"; needs r ≥ {min_r:g} and MSE ≤ {max_mse:g} on all pairs"
    return Finding("cer_cmr_agree", holds, evidence, _CLAIMS["cer_cmr_agree"])


def _finding_gen_col(
    tables: Mapping[str, pd.DataFrame | None], generated: str, collected: str, min_trend_r: float
) -> Finding:
    joined = []
    for name, table in tables.items():
        if table is None or table.empty:
            continue
        keys = [c for c in SCHEMAS[name][: SCHEMAS[name].index("measure") + 1] if c != "context_set"]
        gen = table[table["context_set"] == generated][[*keys, "mean"]]
        col = table[table["context_set"] == collected][[*keys, "mean"]]
        both = gen.merge(col, on=keys, suffixes=("_gen", "_col"))
        if not both.empty:
            joined.append(both[["measure", "mean_gen", "mean_col"]])
    if not joined:
        return Finding(
            "gen_below_col",
            None,
            f"needs convergence or seeds rows on both context sets {generated!r} and {collected!r}",
            _CLAIMS["gen_below_col"],
        )
    pairs = pd.concat(joined, ignore_index=True).dropna()
    parts, verdicts = [], []
    for measure, part in pairs.groupby("measure", sort=False):
        gen_mean, col_mean = float(part["mean_gen"].mean()), float(part["mean_col"].mean())
        r, _, _ = _pearson_mse(part["mean_gen"].to_numpy(), part["mean_col"].to_numpy())
        flat = part["mean_gen"].nunique() == 1 and part["mean_col"].nunique() == 1
        same_trend = flat or (not math.isnan(r) and r >= min_trend_r - _EPS)
        verdicts.append(gen_mean < col_mean and same_trend)
        parts.append(f"{measure}: {generated} {_fmt(gen_mean)} vs {collected} {_fmt(col_mean)}, r = {_fmt(r)}")
    evidence = (
        f"matched comparisons ({len(pairs)} rows): {'; '.join(parts)}; needs the {generated} mean below "
        f"the {collected} mean and r ≥ {min_trend_r:g} across matched comparisons, for every measure"
    )
    return Finding("gen_below_col", all(verdicts), evidence, _CLAIMS["gen_below_col"])


def findings(
    *,
    convergence: pd.DataFrame | None = None,
    seeds: pd.DataFrame | None = None,
    reward_models: pd.DataFrame | None = None,
    correlation: pd.DataFrame | None = None,
    converged_tmr: float = 0.9,
    stable_window: int = 3,
    stable_tolerance: float = 0.05,
    seeds_margin: float = 0.1,
    dmr_margin: float = 0.2,
    agreement_r: float = 0.9,
    agreement_mse: float = 0.01,
    generated_set: str = "gen",
    collected_set: str = "col",
    trend_r: float = 0.5,
) -> tuple[Finding, ...]:
    """Check the paper's five findings on this run's tables.

    Parameters
    ----------
    convergence, seeds, reward_models, correlation : DataFrame, optional
        Tables in their schemas; a finding whose tables are missing has ``holds=None``.
    converged_tmr : float
        (1) Final-checkpoint convergence TMR (mean over runs, per context set and reward)
        must reach this.
    stable_window, stable_tolerance : int, float
        (1) "Stable or rising": the final value is at most ``stable_tolerance`` below the mean
        of the ``stable_window`` checkpoints before it.
    seeds_margin : float
        (2) Final-checkpoint seed-pair TMR (mean over pairs) must lie at least this far below
        the final convergence TMR of the same context set and reward.
    dmr_margin : float
        (3) Mean DMR − mean TMR over the final-checkpoint seed pairs (or, without a seeds
        table, the reward-model pairs per group) must reach this.
    agreement_r, agreement_mse : float
        (4) Pearson r of CER and CMR over all pairs ≥ ``agreement_r`` and MSE ≤ ``agreement_mse``.
    generated_set, collected_set, trend_r : str, str, float
        (5) Rows of the convergence and seeds tables matched across the two context sets:
        for every measure the mean on ``generated_set`` is below the mean on
        ``collected_set`` and their Pearson r across matched rows is ≥ ``trend_r``.

    Returns
    -------
    tuple of Finding
        In the paper's order: converge, seeds_differ, dmr_above_tmr, cer_cmr_agree, gen_below_col.
    """
    for name, table, schema in (
        ("convergence", convergence, "convergence"),
        ("seeds", seeds, "seeds"),
        ("reward_models", reward_models, "reward_models"),
        ("correlation", correlation, "correlation"),
    ):
        if table is not None:
            check_table(table, schema, name)
    if stable_window < 1:
        raise ValueError(f"stable_window must be at least 1, got {stable_window!r}")
    return (
        _finding_converge(convergence, converged_tmr, stable_window, stable_tolerance),
        _finding_seeds(convergence, seeds, seeds_margin),
        _finding_dmr(seeds, reward_models, dmr_margin),
        _finding_cer_cmr(correlation, agreement_r, agreement_mse),
        _finding_gen_col({"convergence": convergence, "seeds": seeds}, generated_set, collected_set, trend_r),
    )
