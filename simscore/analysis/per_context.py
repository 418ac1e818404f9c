"""Analyses over the per-context scores of comparisons: pooling, per-turn scores, the first
system turn of each pair, and text measures where the actions match.

:func:`per_turn` pools many comparisons by turn index [paper's Figure 4];
:func:`first_turn` keeps each compared pair apart at one turn (is a seed pair's first system
turn all-or-nothing?); :func:`text_at_matching_actions` asks how similar the wording is where
the two policies chose the same action (paper's Table 2: TMR 1.000, yet the text measures
stay well below 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from simscore.analysis.tables import SCHEMAS, AnalysisResult, RewardModelsKey, SeedsKey, typed_table
from simscore.checks import check_int
from simscore.comparison import Comparison
from simscore.stats import Bootstrap, bootstrap_ci, warn_undefined_intervals
from simscore.stats.clusters import cluster_codes, unit_name

__all__ = ["ScoresArg", "clusters_of", "pooled_scores", "pool", "per_turn", "first_turn", "text_at_matching_actions"]


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


def clusters_of(comparisons: Iterable[Comparison] | None) -> tuple[str, ...]:
    """The metadata columns the comparisons' intervals resampled by (``compare(clusters=...)``); () for none.

    Analyses over their per-context scores resample the same units (a dialogue met by several
    compared pairs is one unit). Comparisons made with different clusters are an error.
    """
    if comparisons is None:
        return ()
    found = {c.info.clusters for c in comparisons}
    if len(found) > 1:
        raise ValueError(f"the comparisons were made with different clusters: {sorted(found)}")
    return found.pop() if found else ()


def pooled_scores(scores: ScoresArg) -> pd.DataFrame:
    """The per-context scores of all comparisons stacked into one DataFrame.

    Columns: the measures the comparisons share (first comparison's order), then every
    metadata column any of them carries (NaN where a comparison lacks it, e.g. the turn index
    of generated contexts); index ``context_id`` (repeated across comparisons). A DataFrame
    is returned as it is.
    """
    comparisons = _as_comparisons(scores, "scores")
    return scores if comparisons is None else _stack(comparisons)


def pool(scores: ScoresArg, measures: Iterable[str] | None) -> tuple[pd.DataFrame, list[str]]:
    """Stacked per-context scores and the measure columns to use."""
    comparisons = _as_comparisons(scores, "scores")
    frame: pd.DataFrame = scores if comparisons is None else _stack(comparisons)
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
    bootstrap: Bootstrap | None = None,
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
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of each turn's interval over the pooled pairs (default ``Bootstrap()``).

    Returns
    -------
    DataFrame
        ``per_turn`` schema, sorted by turn index then measure order: ``mean`` over the pooled
        pairs of that turn, its bootstrap interval and ``count`` of pairs (NaN scores left out).
        A turn whose pairs fall in one unit (one context, or one dialogue of collected
        contexts) has no interval: NaN, with one :class:`~simscore.errors.MissingValueWarning`
        naming every such row (as :func:`first_turn` and :func:`text_at_matching_actions`).

    Examples
    --------
    >>> frame = pd.DataFrame({"tmr": [1.0, 0.0, 1.0], "turn_index": [1, 1, 2]})
    >>> per_turn(frame, measures=["tmr"], group="g")  # turn 2: one context, an undefined interval
      group  turn_index measure  mean  ci_low  ci_high  count
    0     g           1     tmr   0.5     0.0      1.0      2
    1     g           2     tmr   1.0     NaN      NaN      1
    """
    settings = Bootstrap.resolve(bootstrap, "per_turn")
    comparisons = _as_comparisons(scores, "scores")  # once: scores may be a generator
    frame, names = pool(scores if comparisons is None else comparisons, measures)
    clusters = clusters_of(comparisons)
    if turn_column not in frame.columns:
        raise ValueError(
            f"scores have no {turn_column!r} column; compare with metadata= carrying the contexts' turn index"
        )
    turns = pd.to_numeric(frame[turn_column], errors="coerce")
    frame = frame.assign(**{turn_column: turns})[turns.notna()]
    rows = []
    for turn, part in frame.groupby(turn_column, sort=True):
        units = cluster_codes(part, clusters)
        for name in names:
            mean, low, high, count = _interval(part[name].to_numpy(dtype=np.float64), settings, units)
            rows.append((group, int(turn), name, mean, low, high, count))
    table = typed_table(pd.DataFrame(rows, columns=list(SCHEMAS["per_turn"])))
    _warn_alone(table, settings, unit_name(clusters)[:-1], lambda row: f"turn {row.turn_index} {row.measure}")
    return table


#: What one unit is where a table pools comparisons of context sets with different units.
_EITHER_UNIT = "unit (a context, or a dialogue of collected contexts)"


def _warn_alone(table: pd.DataFrame, bootstrap: Bootstrap, unit: str, label: Any) -> None:
    """One warning naming the rows of ``table`` whose interval rests on one ``unit`` (NaN although scored)."""
    if not bootstrap.n_resamples:
        return
    alone = table[(table["count"] > 0) & table["ci_low"].isna()]
    warn_undefined_intervals([label(row) for row in alone.itertuples(index=False)], unit,
                             confidence=bootstrap.confidence, stacklevel=3)




def _interval(
    values: np.ndarray, bootstrap: Bootstrap, clusters: np.ndarray | None = None
) -> tuple[float, float, float, int]:
    """Mean, bootstrap interval (resampling ``clusters`` when given) and count of the non-NaN ``values``."""
    present = ~np.isnan(values)
    values = values[present]
    low, high = bootstrap_ci(values, n_resamples=bootstrap.n_resamples, confidence=bootstrap.confidence,
                             rng=bootstrap.seed, clusters=None if clusters is None else clusters[present])
    mean = float(values.mean()) if len(values) else float("nan")
    return mean, low, high, len(values)


def _comparison_mapping(comparisons: Any, parameter: str) -> Mapping[Any, Comparison]:
    mapping = comparisons.comparisons if isinstance(comparisons, AnalysisResult) else comparisons
    if not isinstance(mapping, Mapping):
        raise TypeError(
            f"{parameter} must be an AnalysisResult or a mapping key -> Comparison, got {type(comparisons).__name__}"
        )
    for key, comparison in mapping.items():
        if not isinstance(comparison, Comparison):
            raise TypeError(f"{parameter}[{key!r}] must be a simscore Comparison, got {type(comparison).__name__}")
    return mapping


def _pair_identity(key: Any) -> tuple[str, int, str, str, str, str, str]:
    """``context_set, checkpoint, group, reward_a, run_a, reward_b, run_b`` of a seeds or reward-models key."""
    if isinstance(key, SeedsKey):
        return (key.context_set, key.checkpoint, f"{key.reward}-{key.reward}", key.reward, key.run_a,
                key.reward, key.run_b)
    if isinstance(key, RewardModelsKey):
        return (key.context_set, key.checkpoint, key.group, key.reward_a, key.run_a, key.reward_b, key.run_b)
    raise TypeError(
        f"comparisons: key {key!r} is neither a SeedsKey nor a RewardModelsKey "
        "(first_turn compares pairs of runs: the seeds or reward_models analyses)"
    )


def first_turn(
    comparisons: Mapping[SeedsKey | RewardModelsKey, Comparison] | AnalysisResult,
    *,
    measures: Iterable[str] | None = None,
    turn: int = 1,
    turn_column: str = "turn_index",
    bootstrap: Bootstrap | None = None,
) -> pd.DataFrame:
    """Each compared pair of runs at one turn [the paper's Figure 4, per pair]: the first system turn by default.

    :func:`per_turn` pools all pairs; here every pair keeps its own row, so one can see that
    a seed pair's first system turn is all-or-nothing (TMR 0 or 1 over its turn-1 contexts)
    while its dialogue act agrees (DMR 1).

    Parameters
    ----------
    comparisons : AnalysisResult or mapping key → Comparison
        Comparisons of the ``seeds`` analysis (:class:`~simscore.analysis.tables.SeedsKey`)
        and/or the ``reward_models`` analysis (:class:`~simscore.analysis.tables.RewardModelsKey`),
        made with ``metadata=`` carrying ``turn_column``.
    measures : iterable of str, optional
        Default: every measure of each comparison.
    turn : int
        The turn index kept (1: the first turn where the system decides after the user spoke).
    turn_column : str
        The metadata column with the turn index.
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of each pair's interval over its contexts of that turn (default
        ``Bootstrap()``).

    Returns
    -------
    DataFrame
        ``first_turn`` schema, one row per (pair, measure) in the mapping's order: the pair's
        mean at ``turn``, its interval and ``count`` of contexts (NaN mean and count 0 when
        the pair has no context of that turn).

    Examples
    --------
    >>> from simscore import Act, Response, Responses
    >>> from simscore.analysis import seeds
    >>> acts = {"a": ["hello()", "request(food)", "bye()"], "b": ["hello()", "request(area)", "bye()"]}
    >>> runs = {run: [Responses({f"c{i}": Response(Act.parse(x)) for i, x in enumerate(xs)})]
    ...         for run, xs in acts.items()}
    >>> result = seeds(runs, ["tmr", "dmr"], reward="ts", context_set="col",
    ...                metadata={"c0": {"turn_index": 0}, "c1": {"turn_index": 1}, "c2": {"turn_index": 1}})
    >>> first_turn(result)[["group", "run_a", "run_b", "turn_index", "measure", "mean", "count"]]
       group run_a run_b  turn_index measure  mean  count
    0  ts-ts     a     b           1     tmr   0.5      2
    1  ts-ts     a     b           1     dmr   1.0      2
    """
    settings = Bootstrap.resolve(bootstrap, "first_turn")
    mapping = _comparison_mapping(comparisons, "comparisons")
    turn = check_int("turn", turn)
    names = None if measures is None else ([measures] if isinstance(measures, str) else list(measures))
    rows = []
    for key, comparison in mapping.items():
        identity = _pair_identity(key)
        scores = comparison.scores
        if turn_column not in scores.columns:
            raise ValueError(
                f"comparisons[{key!r}] has no {turn_column!r} column; compare with metadata= carrying the "
                "contexts' turn index"
            )
        wanted = list(comparison.measures) if names is None else names
        missing = [m for m in wanted if m not in comparison.measures]
        if missing:
            raise ValueError(f"measures: comparisons[{key!r}] has no {', '.join(map(repr, missing))} scores")
        at_turn = scores[pd.to_numeric(scores[turn_column], errors="coerce") == turn]
        units = cluster_codes(at_turn, clusters_of([comparison]))
        for name in wanted:
            mean, low, high, count = _interval(at_turn[name].to_numpy(dtype=np.float64), settings, units)
            rows.append((*identity, int(turn), name, mean, low, high, count))
    table = typed_table(pd.DataFrame(rows, columns=list(SCHEMAS["first_turn"])))
    _warn_alone(table, settings, _EITHER_UNIT, lambda row: f"{row.run_a} vs {row.run_b} at turn {turn} {row.measure}")
    return table


def _reward_label(key: Any) -> str:
    if hasattr(key, "reward"):
        return str(key.reward)
    if hasattr(key, "group"):
        return str(key.group)
    raise TypeError(f"analyses: key {key!r} has neither a reward nor a group field")


def text_at_matching_actions(
    analyses: Mapping[str, Mapping[Any, Comparison] | AnalysisResult],
    *,
    measures: Iterable[str] | None = None,
    match_measure: str = "tmr",
    bootstrap: Bootstrap | None = None,
) -> pd.DataFrame:
    """Text measures over the context pairs whose actions match [the paper's Table 2 at TMR 1.000].

    Where two policies choose the same action, an action measure says "identical"; the text
    measures say how differently that action was worded. The paper found them well below 1
    (angular ≈ 0.87, BLEU-4 ≈ 0.5, BERTScore ≈ 0.92) for checkpoints with TMR 1.000.

    Parameters
    ----------
    analyses : mapping analysis name → (AnalysisResult or mapping key → Comparison)
        E.g. ``{"convergence": conv, "seeds": seeds, "reward_models": cross_pairs}``. Every
        key needs a ``context_set`` field and a ``reward`` (or ``group``) field, as the keys of
        :mod:`simscore.analysis` have.
    measures : iterable of str, optional
        Default: the text-level measures (:data:`simscore.measures.TEXT_MEASURES`) the
        comparisons have.
    match_measure : str
        The per-pair total match (1: the same action).
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the interval over the pooled pairs (default ``Bootstrap()``).

    Returns
    -------
    DataFrame
        ``text_at_matching_actions`` schema: one row per analysis, context set, reward (in
        order of appearance) and measure, pooling the pairs of all its comparisons with
        ``match_measure`` = 1; NaN mean and count 0 where none match.

    Examples
    --------
    >>> from simscore import Act, Response, Responses, compare
    >>> a = Responses({"c1": Response(Act.parse("hello()"), "Hello!"), "c2": Response(Act.parse("bye()"), "Bye.")})
    >>> b = Responses({"c1": Response(Act.parse("hello()"), "Hello!"), "c2": Response(Act.parse("hello()"), "Hi.")})
    >>> key = SeedsKey("col", "ts", 1, "a", "b")
    >>> t = text_at_matching_actions({"seeds": {key: compare(a, b, ["tmr", "bleu4"])}})
    >>> t[["context_set", "analysis", "reward", "measure", "mean", "count"]]
      context_set analysis reward measure  mean  count
    0         col    seeds     ts   bleu4   1.0      1
    """
    settings = Bootstrap.resolve(bootstrap, "text_at_matching_actions")
    if not isinstance(analyses, Mapping) or not analyses:
        raise ValueError("analyses must be a non-empty mapping analysis name -> comparisons")
    mappings = {str(name): _comparison_mapping(c, f"analyses[{name!r}]") for name, c in analyses.items()}
    if measures is None:
        from simscore.measures import TEXT_MEASURES

        present = {m for mapping in mappings.values() for c in mapping.values() for m in c.measures}
        names = [m for m in TEXT_MEASURES if m in present]
        if not names:
            raise ValueError(
                f"measures: the comparisons have no text measure ({', '.join(TEXT_MEASURES)}); pass measures="
            )
    else:
        names = [measures] if isinstance(measures, str) else list(measures)
    rows = []
    for analysis, mapping in mappings.items():
        groups: dict[tuple[str, str], list[pd.DataFrame]] = {}
        members: dict[tuple[str, str], list[Comparison]] = {}
        for key, comparison in mapping.items():
            if not hasattr(key, "context_set"):
                raise TypeError(f"analyses[{analysis!r}]: key {key!r} has no context_set field")
            scores = comparison.scores
            missing = [m for m in (match_measure, *names) if m not in comparison.measures]
            if missing:
                raise ValueError(
                    f"analyses[{analysis!r}][{key!r}] has no {', '.join(map(repr, missing))} scores"
                )
            matching = scores.loc[scores[match_measure].to_numpy() == 1.0, [*names, *clusters_of([comparison])]]
            groups.setdefault((str(key.context_set), _reward_label(key)), []).append(matching)
            members.setdefault((str(key.context_set), _reward_label(key)), []).append(comparison)
        for (context_set, reward), parts in groups.items():
            pooled = pd.concat(parts, ignore_index=True)
            # one context set's comparisons resample its units (dialogues on C_col, contexts on C_gen)
            units = cluster_codes(pooled, clusters_of(members[(context_set, reward)]))
            for name in names:
                mean, low, high, count = _interval(pooled[name].to_numpy(dtype=np.float64), settings, units)
                rows.append((context_set, analysis, reward, name, mean, low, high, count))
    table = typed_table(pd.DataFrame(rows, columns=list(SCHEMAS["text_at_matching_actions"])))
    _warn_alone(table, settings, _EITHER_UNIT, lambda row: f"{row.analysis} {row.context_set} {row.reward} {row.measure}")
    return table
