"""Table schemas, result keys and the result type shared by every analysis.

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
    first_turn     context_set, checkpoint, group, reward_a, run_a, reward_b, run_b, turn_index, measure,
                   mean, ci_low, ci_high, count
    text_at_matching_actions
                   context_set, analysis, reward, measure, mean, ci_low, ci_high, count
    correlation    subset, measure_a, measure_b, r, mse, n
    performance    reward, checkpoint, n_runs, success_rate, success_rate_low, success_rate_high,
                   avg_iq, avg_iq_low, avg_iq_high, avg_length, avg_length_low, avg_length_high
    consequences   context_set, comparison, group, pair, n_pairs, baseline, candidate, reward, continuations,
                   effect, actions, count, contexts, dialogues, outcome_changed, the flip rates and mean
                   differences of simscore.outcomes.flips (each with _low and _high), mcnemar_negative,
                   mcnemar_positive, mcnemar_p (an experiment's [consequences]: no measure column)

Derived tables (computed from the ones above, never needed as input)::

    seeds_aggregate          context_set, reward, checkpoint, measure, mean, ci_low, ci_high, std, min, max, n_pairs
    reward_models_aggregate  context_set, checkpoint, group, measure, mean, ci_low, ci_high, std, min, max, n_pairs
    contrast                 context_set, comparison, measure, mean, ci_low, ci_high, n_pairs
    stability                context_set, reward, run, measure, threshold, first_stable

An experiment's ``[map]`` (:mod:`simscore.app.experiment.maps`) adds the behaviour maps' long
tables (:func:`simscore.analysis.behaviour_map.long_tables`: ``behaviour_map``,
``behaviour_map_clusters``, ``behaviour_map_policies``, ``behaviour_map_groups``, each with
``context_set`` and ``map`` first) and ``checkpoint_plateau`` (context_set, reward, run,
measure, checkpoints, first, last, start, size, height, support).

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
- ``first_turn``: one compared pair of runs (a seed pair has ``group`` ``"ts-ts"`` and
  ``reward_a == reward_b``) at one turn index (the first system turn, 1, by default): the
  pair's ``mean`` over its contexts of that turn, its interval and ``count`` of contexts
  (``mean`` NaN and ``count`` 0 when the pair has no context of that turn).
- ``text_at_matching_actions``: per ``analysis`` (``"convergence"``, ``"seeds"``,
  ``"reward_models"``), context set and ``reward`` (the runs' reward model, or the group such
  as ``"ts-iq"`` for pairs across reward models), the mean of a text measure over the pooled
  context pairs whose actions match (TMR = 1); ``count``: those pairs (NaN mean when none).
- ``subset``: ``"all"`` pairs or ``"nonmatching"`` pairs only (TMR = 0); ``r``: Pearson r;
  ``mse``: mean squared difference; ``n``: pairs where both measures are defined.
- aggregates: ``mean`` over pairs of the pairs' means, ``ci_low``/``ci_high`` a seeded
  percentile bootstrap over pairs (a single pair keeps its own interval), ``std`` (ddof 1),
  ``min``/``max`` over pairs, ``n_pairs``.
- ``performance``: the mean over runs per reward and checkpoint and its Student-t interval
  over runs (NaN with a single run).

String columns hold ``str``, ``checkpoint``/``previous``/``turn_index``/``count``/
``missing``/``n``/``n_pairs``/``n_runs`` hold ints, the rest floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeAlias, TypeVar

import numpy as np
import pandas as pd

from simscore.comparison import Comparison
from simscore.measures.base import Measure

__all__ = [
    "STAT_COLUMNS",
    "AGG_COLUMNS",
    "SCHEMAS",
    "RECORD_COLUMNS",
    "MeasuresArg",
    "ConvergenceKey",
    "SeedsKey",
    "RewardModelsKey",
    "ChanceKey",
    "AnalysisResult",
    "summary_rows",
    "typed_table",
    "schema_frame",
    "check_table",
    "combine",
]

#: The statistics every comparison-derived table ends in (from ``Comparison.summary``).
STAT_COLUMNS: tuple[str, ...] = ("mean", "ci_low", "ci_high", "count", "missing")
AGG_COLUMNS: tuple[str, ...] = ("mean", "ci_low", "ci_high", "std", "min", "max", "n_pairs")

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
    "first_turn": (
        "context_set", "checkpoint", "group", "reward_a", "run_a", "reward_b", "run_b", "turn_index", "measure",
        "mean", "ci_low", "ci_high", "count",
    ),
    "text_at_matching_actions": (
        "context_set", "analysis", "reward", "measure", "mean", "ci_low", "ci_high", "count",
    ),
    "correlation": ("subset", "measure_a", "measure_b", "r", "mse", "n"),
    "performance": (
        "reward", "checkpoint", "n_runs", "n_dialogues",
        "success_rate", "success_rate_low", "success_rate_high",
        "avg_iq", "avg_iq_low", "avg_iq_high",
        "avg_length", "avg_length_low", "avg_length_high",
        "success_rate_run_min", "success_rate_run_max",
        "avg_iq_run_min", "avg_iq_run_max",
        "avg_length_run_min", "avg_length_run_max",
    ),
    # with an experiment's [held_out] table (simscore.app.experiment.flow_strata): comparisons per flow stratum
    "flow_strata": (
        "context_set", "checkpoint", "comparison", "group", "pair", "pairs", "by", "stratum", "measure",
        "mean", "ci_low", "ci_high", "count", "missing", "dialogues",
    ),
    "flow_strata_tests": (
        "context_set", "checkpoint", "comparison", "group", "pair", "pairs", "by", "a", "b", "measure",
        "difference", "difference_low", "difference_high", "p_value", "exact", "n_permutations", "p", "n_a", "n_b",
    ),
    # with an experiment's [consequences] table (simscore.app.experiment.consequences): does a difference
    # in behaviour change how the dialogue ends? One row per comparison (or pooled group), effect and group
    # of contexts (the actions differ / agree), the flip rates of simscore.outcomes.flips with their intervals
    "consequences": (
        "context_set", "comparison", "group", "pair", "n_pairs", "baseline", "candidate", "reward", "continuations",
        "effect", "actions", "count", "contexts", "dialogues",
        *(f"{q}{end}" for q in ("outcome_changed", "negative_flip_rate", "positive_flip_rate", "benign_churn_rate",
                                "reward_difference", "turns_difference", "iq_difference") for end in ("", "_low", "_high")),
        "mcnemar_negative", "mcnemar_positive", "mcnemar_p",
    ),
    # with an experiment's [map] table (simscore.app.experiment.maps): who behaves like whom, the long tables
    # of simscore.analysis.behaviour_map.long_tables, and where each run's checkpoints plateau
    "behaviour_map": ("context_set", "map", "measure", "a", "b", "mean", "ci_low", "ci_high", "chance", "corrected"),
    "behaviour_map_clusters": ("context_set", "map", "measure", "merge", "left", "right", "members", "size", "height",
                               "support"),
    "behaviour_map_policies": ("context_set", "map", "measure", "policy", "position", "leaf", "x", "y", "nearest",
                               "similarity", "second", "second_similarity", "difference", "p", "contexts", "unit",
                               "units"),
    "behaviour_map_groups": ("context_set", "map", "measure", "group", "members", "clustered", "support"),
    "checkpoint_plateau": ("context_set", "reward", "run", "measure", "checkpoints", "first", "last", "start", "size",
                           "height", "support"),
    "seeds_aggregate": ("context_set", "reward", "checkpoint", "measure", *AGG_COLUMNS),
    "reward_models_aggregate": ("context_set", "checkpoint", "group", "measure", *AGG_COLUMNS),
    "contrast": ("context_set", "comparison", "measure", "mean", "ci_low", "ci_high", "n_pairs"),
    "stability": ("context_set", "reward", "run", "measure", "threshold", "first_stable"),
}

#: Columns of the evaluation records :func:`performance_table` reads (one per run and checkpoint).
RECORD_COLUMNS: tuple[str, ...] = (
    "reward", "run", "checkpoint", "eval_dialogues", "success_rate", "avg_iq", "avg_iq_sd", "avg_length",
    "avg_length_sd",
)

_INT_COLUMNS = frozenset(
    {"checkpoint", "previous", "turn_index", "count", "missing", "n", "n_pairs", "n_runs", "n_dialogues",
     "continuations", "contexts", "dialogues", "mcnemar_negative", "mcnemar_positive",
     "merge", "left", "right", "size", "position", "leaf", "units", "clustered", "checkpoints", "first", "last",
     "start"}
)
_STR_COLUMNS = frozenset(
    {"context_set", "reward", "run", "run_a", "run_b", "reward_a", "reward_b", "group", "measure",
     "subset", "measure_a", "measure_b", "comparison", "analysis", "pair", "baseline", "candidate", "effect",
     "actions", "map", "a", "b", "members", "policy", "nearest", "second", "unit"}
)

_FLOAT_COLUMNS = frozenset(
    c for columns in SCHEMAS.values() for c in columns
    if c not in _INT_COLUMNS and c not in _STR_COLUMNS and c != "first_stable"
)

MeasuresArg: TypeAlias = str | Measure | Iterable[str | Measure]


# ----------------------------------------------------------------------------- result keys
# Each analysis keys its comparisons by the identity columns of its table (every column before
# ``measure``), as a named tuple, so code reads ``key.reward_a`` rather than ``key[3]``.


class ConvergenceKey(NamedTuple):
    """Identity of a ``convergence`` comparison: checkpoint ``checkpoint`` vs ``previous``."""

    context_set: str
    reward: str
    run: str
    checkpoint: int
    previous: int


class SeedsKey(NamedTuple):
    """Identity of a ``seeds`` comparison: runs ``run_a`` and ``run_b`` at ``checkpoint``."""

    context_set: str
    reward: str
    checkpoint: int
    run_a: str
    run_b: str


class RewardModelsKey(NamedTuple):
    """Identity of a ``reward_models`` comparison: run ``run_a`` of ``reward_a`` vs ``run_b`` of ``reward_b``."""

    context_set: str
    checkpoint: int
    group: str
    reward_a: str
    run_a: str
    reward_b: str
    run_b: str


class ChanceKey(NamedTuple):
    """Identity of a ``chance`` comparison: the random policy vs run ``run`` at ``checkpoint``."""

    context_set: str
    reward: str
    run: str
    checkpoint: int


# ----------------------------------------------------------------------------- result type


KeyT = TypeVar("KeyT", bound=tuple)


@dataclass(frozen=True, eq=False)
class AnalysisResult(Generic[KeyT]):
    """A tidy table and the comparisons behind it.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (comparison, measure), in the schema of the analysis (:data:`SCHEMAS`).
    comparisons : dict
        Key (a named tuple of the ``key_columns``, e.g. :class:`ConvergenceKey`) →
        :class:`~simscore.comparison.Comparison`, for the per-context analyses
        (:func:`~simscore.analysis.per_turn`, :func:`~simscore.analysis.correlation`).
    key_columns : tuple of str
        The table's identity columns (every column before ``measure``): the key's fields.
    """

    table: pd.DataFrame
    comparisons: Mapping[KeyT, Comparison] = field(default_factory=dict)
    key_columns: tuple[str, ...] = ()

    def select(self, **labels: Any) -> list[Comparison]:
        """The comparisons whose identity columns equal ``labels`` (e.g. ``checkpoint=10``).

        >>> from simscore import Act, Response, Responses
        >>> from simscore.analysis import convergence
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
        return [
            comparison
            for key, comparison in self.comparisons.items()
            if all(dict(zip(self.key_columns, key, strict=True))[k] == v for k, v in labels.items())
        ]


# ----------------------------------------------------------------------------- helpers


def summary_rows(comparison: Comparison, **labels: Any) -> pd.DataFrame:
    """One comparison's summary as tidy rows: ``*labels, measure, mean, ci_low, ci_high, count, missing``.

    >>> from simscore import Act, Response, Responses, compare
    >>> r = Responses({"c1": Response(Act.parse("hello()")), "c2": Response(Act.parse("bye()"))})
    >>> summary_rows(compare(r, r, ["tmr", "dmr"]), run="x")
      run measure  mean  ci_low  ci_high  count  missing
    0   x     tmr   1.0     1.0      1.0      2        0
    1   x     dmr   1.0     1.0      1.0      2        0
    """
    summary = comparison.summary
    n = len(summary)
    data: dict[str, Any] = {name: [value] * n for name, value in labels.items()}
    data["measure"] = [str(m) for m in summary.index]
    for column in STAT_COLUMNS:
        values = summary[column].to_numpy()
        data[column] = values.astype(np.int64) if column in ("count", "missing") else values.astype(np.float64)
    return pd.DataFrame(data)


def schema_frame(rows: list[pd.DataFrame], schema: str) -> pd.DataFrame:
    """Concatenate row frames into the columns of ``schema``, typed (an empty table if no rows)."""
    columns = list(SCHEMAS[schema])
    if rows:
        frame = pd.concat(rows, ignore_index=True)[columns]
    else:
        frame = pd.DataFrame({c: [] for c in columns})
    return typed_table(frame)


def typed_table(frame: pd.DataFrame) -> pd.DataFrame:
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


def combine(results: Iterable[AnalysisResult[KeyT]]) -> AnalysisResult[KeyT]:
    """Concatenate results of the same analysis (e.g. ``convergence`` of every run).

    >>> from simscore import Act, Response, Responses
    >>> from simscore.analysis import convergence
    >>> r = Responses({"c1": Response(Act.parse("hello()"))})
    >>> both = combine([convergence([r, r], ["tmr"], run=name) for name in ("r1", "r2")])
    >>> both.table["run"].tolist(), len(both.comparisons)
    (['r1', 'r2'], 2)
    """
    parts = list(results)
    if not parts:
        raise ValueError("results: need at least one AnalysisResult")
    keys = {r.key_columns for r in parts}
    if len(keys) != 1:
        raise ValueError(f"results: cannot combine tables with different identity columns {sorted(keys)}")
    comparisons: dict[KeyT, Comparison] = {}
    for result in parts:
        for key, comparison in result.comparisons.items():
            if key in comparisons:
                raise ValueError(f"results: comparison {key!r} appears in more than one result")
            comparisons[key] = comparison
    table = typed_table(pd.concat([r.table for r in parts], ignore_index=True))
    return AnalysisResult(table=table, comparisons=comparisons, key_columns=parts[0].key_columns)


