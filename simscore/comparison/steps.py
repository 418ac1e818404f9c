"""Compare two policies' responses over one context set: :func:`compare` and its steps.

The responses are aligned by context id; every pair is scored with each measure; the result
(:class:`~simscore.comparison.result.Comparison`) keeps the per-context scores (a pandas
DataFrame) and a summary per measure (mean, count, missing count and a seeded bootstrap
confidence interval of the mean).

Scale: each side's inputs are factorised once per level and every measure scores each
distinct pair once. The factorisation of both levels (actions and texts, whichever measures
are asked for) also gives every context a code for its pair of responses, and the shared
bootstrap (:func:`simscore.stats.bootstrap_ci_shared`) draws how often each distinct pair
occurs whenever there are few, so a million contexts cost about as much as a thousand — and a
measure's interval does not depend on which other measures are asked for.

Contexts of one dialogue are not independent: given the contexts' metadata, the bootstrap of
collected contexts (C_col) resamples whole dialogues, as the experiment's report does
(``clusters="auto"``, the one rule of :mod:`simscore.stats.clusters`); ``clusters`` names other
columns, or None for contexts as units. The summary says which units it resampled.

The steps, in order: align (:func:`_aligned`), score (:func:`_scored`), summarise
(:func:`_summarised`); sampled responses take :func:`_compare_sampled`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simscore.comparison.inputs import input_record, inputs_of
from simscore.comparison.result import SUMMARY_COLUMNS, Comparison, ComparisonInfo
from simscore.errors import (
    ContextMismatchError,
    InvalidResponseError,
    MissingValueWarning,
    SampleCountError,
    SharedSeedWarning,
)
from simscore.io.config import resolve_settings
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.measures.base import Measure, PairwiseMeasure, unique_pairs, warn_missing
from simscore.progress import show_progress
from simscore.responses import Responses
from simscore.samples import SampledResponses, shared_seed
from simscore.stats import Bootstrap, bootstrap_ci_shared, warn_undefined_intervals
from simscore.stats.clusters import AUTO, Clusters, cluster_codes, resolve_clusters, unit_name
from simscore.stats.consistency import self_consistency

__all__ = ["compare"]


def _align(a: Responses, b: Responses) -> list[str]:
    for name, side in (("a", a), ("b", b)):
        if not isinstance(side, Responses):
            raise InvalidResponseError(
                f"{name} must be simscore.Responses, got {type(side).__name__}"
            )
    ids = list(a.ids)
    if not ids and not len(b):
        raise InvalidResponseError("nothing to compare: both response sets are empty (no contexts)")
    if a.ids == b.ids or (len(ids) == len(b) and all(i in b for i in ids)):
        return ids
    only_a = [i for i in ids if i not in b]
    only_b = [i for i in b.ids if i not in a]
    parts = []
    for label, missing in (("in a but not in b", only_a), ("in b but not in a", only_b)):
        if missing:
            shown = ", ".join(repr(i) for i in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            parts.append(f"{len(missing)} context id(s) {label}: {shown}{more}")
    raise ContextMismatchError("responses cover different contexts: " + "; ".join(parts))


# ----------------------------------------------------------------------------- what a comparison was made from



def _metadata_frame(metadata: Any, ids: list[str]) -> pd.DataFrame | None:
    if metadata is None:
        return None
    if hasattr(metadata, "metadata_frame"):
        metadata = metadata.metadata_frame()
    if isinstance(metadata, Mapping):
        metadata = pd.DataFrame.from_dict(dict(metadata), orient="index")
    if not isinstance(metadata, pd.DataFrame):
        raise TypeError(
            "metadata must be a pandas DataFrame indexed by context id, a mapping "
            f"context id -> dict, or an object with metadata_frame(); got {type(metadata).__name__}"
        )
    missing = [i for i in ids if i not in metadata.index]
    if missing:
        shown = ", ".join(repr(i) for i in missing[:5])
        raise ContextMismatchError(f"metadata lacks {len(missing)} compared context id(s): {shown}")
    frame = metadata.reindex(ids)
    structured = [column for column in frame.columns
                  if _may_be_structured(frame[column].dtype) and frame[column].map(_is_structured).any()]
    return frame.drop(columns=structured) if structured else frame


def _is_structured(value: Any) -> bool:
    """A list or object value (a transcript context's ``messages`` and ``tools``), which no score table holds."""
    return isinstance(value, (Mapping, list, tuple))


def _may_be_structured(dtype: Any) -> bool:
    """Whether a column of ``dtype`` can hold a list or object value: not one of numbers, booleans, times or
    strings (whose cells need not be looked at one by one)."""
    if isinstance(dtype, pd.StringDtype) or pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return False
    return not (isinstance(dtype, np.dtype) and dtype.kind in "mM")


def _warn_textless(textless: Mapping[str, int], a: Responses, b: Responses, ids: list[str], *, stacklevel: int) -> None:
    """One warning for the text measures' NaN pairs: which policy lacks texts, and how to word its acts."""
    lacking = [
        f"{side.policy or label!r} has no text for {n} of {len(ids)} contexts"
        for label, side in (("a", a), ("b", b))
        if (n := sum(text is None for text in side.texts(ids)))
    ]
    counts = set(textless.values())
    pairs = str(counts.pop()) if len(counts) == 1 else "some"
    warnings.warn(
        f"{', '.join(textless)}: {pairs} pair(s) have no text on at least one side; scored NaN "
        f"({'; '.join(lacking)}). An act-only policy gets words from the template NLG: "
        "run_policy(policy, contexts, nlg=policies.TemplateNLG(name)) in Python, "
        "or `simscore respond POLICY CONTEXTS --out FILE --nlg template` on the command line",
        MissingValueWarning,
        stacklevel=stacklevel,
    )


def compare(
    a: Responses | SampledResponses,
    b: Responses | SampledResponses,
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    metadata: Any = None,
    bootstrap: Bootstrap | None = None,
    progress: bool = True,
    clusters: Clusters = AUTO,
    chance: Responses | SampledResponses | None = None,
    n_permutations: int = 10_000,
) -> Comparison:
    """Score every pair of responses of two policies over the same contexts.

    Parameters
    ----------
    a, b : Responses or SampledResponses
        The two policies' responses; they must cover the same context ids. Sampled responses
        (:class:`~simscore.samples.SampledResponses`, K >= 2 samples per context on both sides,
        the same K) are compared sample against sample: each context's score is the mean over
        its K² cross pairs, and :attr:`Comparison.consistency` holds each policy's agreement
        with itself, the agreement between them relative to it and the permutation test
        (:func:`simscore.stats.consistency.self_consistency`). Sampled responses of one sample are
        compared as single responses.
    measures : names or Measure objects
        Default :data:`~simscore.measures.DEFAULT_MEASURES`, the four action measures (no
        model needed); ``"all"`` gives all eight.
    metadata : DataFrame, mapping or ContextSet, optional
        Context metadata (e.g. turn index) joined onto the per-context scores; columns that
        hold lists or objects (a transcript context's ``messages`` and ``tools``,
        :mod:`contexts.transcripts`) are left out, since a score table holds scalars.
    bootstrap : Bootstrap, optional
        The settings of each mean's confidence interval (:class:`~simscore.stats.Bootstrap`;
        default 1,000 resamples, 95 %, seed 0: same inputs, same interval);
        ``Bootstrap(n_resamples=0)`` skips the intervals (NaN).
    progress : bool, default True
        The progress of a text measure's embedding (:mod:`simscore.progress`): on a terminal
        a bar once it takes more than a second, else a log line at least every minute of a
        long one; False: none.
    clusters : "auto", str, iterable of str or None, default "auto"
        The unit of the bootstrap. ``"auto"``: with ``metadata`` of collected contexts (C_col,
        whose metadata names each context's dialogue: :func:`~simscore.stats.clusters.dialogue_clusters`)
        whole dialogues are resampled, as the experiment's report does; otherwise contexts.
        Metadata column name(s): their values together name a context's cluster (a context
        without a value is a cluster of its own, counted in a warning; a column without any
        value is an error). None (or ``()``): every context is a unit. :attr:`Comparison.info`
        records the columns (``clusters``), the unit (``unit``) and how many there are (``units``).
    chance : Responses or SampledResponses, optional
        Sampled responses only: a random policy's responses over the same contexts, whose
        agreement with A's and B's samples is the chance level of :attr:`Comparison.consistency`.
    n_permutations : int, default 10,000
        Sampled responses only: relabellings of the self-consistency permutation test.

    Returns
    -------
    Comparison

    The steps: :func:`_aligned` (the ids both sides cover, the metadata, the bootstrap's units),
    :func:`_scored` (every distinct pair once per measure), :func:`_summarised` (means and
    intervals); sampled responses take :func:`_compare_sampled`.

    Raises
    ------
    ContextMismatchError
        If ``a`` and ``b`` cover different context ids (the message lists some of them).
    SampleCountError
        Sampled responses with different numbers of samples per context on the two sides.

    Examples
    --------
    >>> from simscore import Act, Response, Responses
    >>> a = Responses({"c1": Response(Act.parse("request(food)")),
    ...                "c2": Response(Act.parse("inform(name=x,food=thai)"))}, policy="A")
    >>> b = Responses({"c2": Response(Act.parse("inform(name=y,food=thai)")),
    ...                "c1": Response(Act.parse("request(area)"))}, policy="B")
    >>> c = compare(a, b)
    >>> c.scores.round(3)
                tmr  dmr   cer    cmr
    context_id
    c1          0.0  1.0  0.50  0.200
    c2          0.0  1.0  0.75  0.667
    >>> c.mean("dmr")
    1.0

    Three samples per context (:mod:`simscore.samples`): A says ``hello()`` twice and ``bye()``
    once where B always says ``bye()``.

    >>> from simscore.samples import SampledResponses
    >>> from simscore.stats import Bootstrap
    >>> sa = SampledResponses({"c1": [Response(Act.parse(x)) for x in ("hello()", "hello()", "bye()")]}, policy="A")
    >>> sb = SampledResponses({"c1": [Response(Act.parse("bye()"))] * 3}, policy="B")
    >>> s = compare(sa, sb, ["tmr"], bootstrap=Bootstrap(n_resamples=0), n_permutations=100)
    >>> round(s.mean("tmr"), 4), s.consistency.table.loc["tmr", ["within_a", "within_b"]].round(4).tolist()
    (0.3333, [0.3333, 1.0])
    """
    settings = resolve_settings(Bootstrap, bootstrap, where="compare", parameter="bootstrap")
    if not isinstance(measures, (str, Measure, Iterable)):
        raise TypeError(f"measures must be a name, a Measure or an iterable of them, got {type(measures).__name__}")
    resolved = resolve_measures(measures)
    if isinstance(a, SampledResponses) or isinstance(b, SampledResponses) or chance is not None:
        return _compare_sampled(a, b, resolved, metadata=metadata, clusters=clusters, chance=chance,
                                bootstrap=settings, n_permutations=n_permutations, progress=progress)
    aligned = _aligned(a, b, metadata, clusters)
    columns, factorised = _scored(a, b, aligned.ids, resolved, progress)
    summary = _summarised(columns, factorised, aligned, settings)
    info = ComparisonInfo(
        a_provenance=dict(a.provenance), b_provenance=dict(b.provenance), bootstrap=settings,
        clusters=aligned.cluster_columns, unit=aligned.unit, units=aligned.units,
        inputs=inputs_of(a, b, aligned.ids, factorised),
    )
    return Comparison(scores=_scores_frame(columns, aligned.ids, aligned.meta), summary=summary,
                      signatures={m.name: m.signature() for m in resolved}, a=a.policy, b=b.policy, info=info)


@dataclass(frozen=True)
class _Aligned:
    """The contexts both sides cover (in ``a``'s order), their metadata and the bootstrap's units."""

    ids: list[str]
    meta: pd.DataFrame | None
    cluster_columns: tuple[str, ...]
    codes: np.ndarray | None  # each context's unit (None: every context is one)
    unit: str

    @property
    def units(self) -> int:
        return len(self.ids) if self.codes is None else int(self.codes.max(initial=-1)) + 1


def _aligned(a: Responses, b: Responses, metadata: Any, clusters: Clusters, *, depth: int = 1) -> _Aligned:
    """Step one of :func:`compare`: align by context id, join the metadata, find the units.

    ``depth``: the frames between this function and :func:`compare` (its warnings name compare's caller).
    """
    ids = _align(a, b)
    meta = _metadata_frame(metadata, ids)
    cluster_columns = tuple(resolve_clusters(clusters, meta))
    return _Aligned(ids, meta, cluster_columns, cluster_codes(meta, cluster_columns, check=True, stacklevel=depth + 1),
                    unit_name(cluster_columns))


#: Per level: the distinct values, each context's pair of codes into them, and each context's distinct pair.
_Factorised = dict[str, tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]]


def _scored(a: Responses, b: Responses, ids: list[str], resolved: Sequence[Measure],
            progress: bool) -> tuple[dict[str, np.ndarray], _Factorised]:
    """Step two of :func:`compare`: every measure's per-context scores, each distinct pair scored once.

    Also returns both levels' factorisation (the intervals' groups and the record of the inputs
    need both, whichever measures were asked for).
    """
    columns: dict[str, np.ndarray] = {}
    factorised: _Factorised = {}
    textless: dict[str, int] = {}
    b_ids = None if b.ids == a.ids else ids  # ids follow a's order; b needs a look-up only if its order differs
    with show_progress(progress):
        for measure in resolved:
            pick = Responses.actions if measure.level == "action" else Responses.texts
            if isinstance(measure, PairwiseMeasure):
                if measure.level not in factorised:
                    factorised[measure.level] = unique_pairs(pick(a), pick(b, b_ids))
                values, pair_a, pair_b, inverse = factorised[measure.level]
                scores = measure.score_distinct(values, pair_a, pair_b)[inverse]
                missing = int(np.isnan(scores).sum())
                if measure.level == "text" and missing:
                    textless[measure.name] = missing  # one warning for all of them, saying how to add words
                else:
                    warn_missing(measure.name, missing, measure.level, stacklevel=3)  # the caller of compare
            else:
                scores = np.asarray(measure.score_pairs(pick(a, ids), pick(b, ids)), dtype=np.float64)
            columns[measure.name] = scores
    if textless:
        _warn_textless(textless, a, b, ids, stacklevel=4)
    for level, pick in (("action", Responses.actions), ("text", Responses.texts)):
        if level not in factorised:
            factorised[level] = unique_pairs(pick(a), pick(b, b_ids))
    return columns, factorised


def _summarised(columns: Mapping[str, np.ndarray], factorised: _Factorised, aligned: _Aligned,
                bootstrap: Bootstrap) -> pd.DataFrame:
    """Step three of :func:`compare`: per measure the mean, the counts and the bootstrap interval."""
    codes = aligned.codes
    if bootstrap.n_resamples == 0:  # means only (e.g. a chance level logged every training check)
        intervals = {name: (float("nan"), float("nan")) for name in columns}
    else:
        # Contexts with equal codes have the same pair of responses at both levels, so equal
        # scores under every measure: the resampling depends on the responses, not on which
        # measures were asked for.
        groups = np.zeros(len(aligned.ids), dtype=np.int64)
        for level in ("action", "text"):
            part = factorised[level][3]
            # re-compact so the codes never overflow (a level with one code leaves the groups as they are)
            groups = np.unique(groups * (int(part.max(initial=0)) + 1) + part, return_inverse=True)[1].reshape(-1)
        intervals = bootstrap_ci_shared(dict(columns), groups, n_resamples=bootstrap.n_resamples,
                                        confidence=bootstrap.confidence, seed=bootstrap.seed, clusters=codes)
    rows = {}
    alone = []  # measures whose values fall in one unit: an undefined interval
    for name, column in columns.items():
        present = ~np.isnan(column)
        valid = column[present]
        if bootstrap.n_resamples and (len(valid) if codes is None else np.count_nonzero(np.bincount(codes[present]))) == 1:
            alone.append(name)
        rows[name] = {
            "mean": float(valid.mean()) if len(valid) else float("nan"),
            "count": int(len(valid)),
            "missing": int(len(column) - len(valid)),
            "ci_low": intervals[name][0],
            "ci_high": intervals[name][1],
        }
    summary = pd.DataFrame.from_dict(rows, orient="index", columns=SUMMARY_COLUMNS)
    summary.index.name = "measure"
    warn_undefined_intervals(alone, aligned.unit[:-1], confidence=bootstrap.confidence, stacklevel=3)
    return summary


def _as_sampled(side: Any, name: str) -> SampledResponses:
    if isinstance(side, SampledResponses):
        return side
    if isinstance(side, Responses):
        return SampledResponses.single(side)
    raise InvalidResponseError(f"{name} must be simscore.Responses or SampledResponses, got {type(side).__name__}")


def _scores_frame(columns: Mapping[str, np.ndarray], ids: list[str], meta: pd.DataFrame | None) -> pd.DataFrame:
    """The per-context scores (one column per measure, index ``context_id``) with the metadata joined on."""
    frame = pd.DataFrame(dict(columns), index=pd.Index(ids, name="context_id"))
    if meta is not None:
        clash = [c for c in meta.columns if c in frame.columns]
        if clash:
            raise ValueError(f"metadata columns clash with measure names: {', '.join(map(str, clash))}")
        frame = frame.join(meta)
    return frame


def _compare_sampled(
    a: Responses | SampledResponses, b: Responses | SampledResponses, resolved: list[Measure], *, metadata: Any,
    clusters: Clusters, chance: Responses | SampledResponses | None, bootstrap: Bootstrap, n_permutations: int,
    progress: bool,
) -> Comparison:
    """:func:`compare` of sampled responses: per context the mean over cross pairs, and the self-consistency.

    One sample per context on both sides is compared as single responses (:func:`compare`).
    """
    a, b = _as_sampled(a, "a"), _as_sampled(b, "b")
    if a.n_samples == 1 and b.n_samples == 1:
        if chance is not None:
            raise ValueError("chance= applies to sampled responses (K >= 2 per context); for one response per "
                             "context compare the random policy's responses themselves (simscore.analysis.chance_level)")
        return compare(a.sample(0), b.sample(0), resolved, metadata=metadata, bootstrap=bootstrap, progress=progress,
                       clusters=clusters)
    if a.n_samples != b.n_samples:
        raise SampleCountError(
            f"a and b must have the same number of samples per context: {a.policy or 'a'!r} has {a.n_samples}, "
            f"{b.policy or 'b'!r} has {b.n_samples} (run both with the same --samples K)"
        )
    seed = shared_seed(a, b)
    if seed is not None:
        warnings.warn(
            f"{a.policy or 'a'!r} and {b.policy or 'b'!r} were both drawn with seed {seed}: their k-th samples share "
            "random numbers, which makes them look more alike than independent draws; draw each with a seed of its "
            "own (simscore respond --seed)", SharedSeedWarning, stacklevel=3,
        )
    aligned = _aligned(a.sample(0), b.sample(0), metadata, clusters, depth=2)
    ids = aligned.ids
    with show_progress(progress):
        consistency = self_consistency(
            a, b, resolved, units=aligned.codes, unit=aligned.unit,
            chance=None if chance is None else _as_sampled(chance, "chance"), bootstrap=bootstrap,
            n_permutations=n_permutations,
        )
    columns = {m.name: consistency.per_context[f"{m.name}_between"].to_numpy() for m in resolved}
    frame = _scores_frame(columns, ids, aligned.meta)
    table = consistency.table
    rows = {
        m.name: {"mean": table.loc[m.name, "between"], "count": int(table.loc[m.name, "contexts"]),
                 "missing": len(ids) - int(table.loc[m.name, "contexts"]),
                 "ci_low": table.loc[m.name, "between_low"], "ci_high": table.loc[m.name, "between_high"]}
        for m in resolved
    }
    summary = pd.DataFrame.from_dict(rows, orient="index", columns=SUMMARY_COLUMNS)
    summary.index.name = "measure"
    info = ComparisonInfo(
        a_provenance=dict(a.provenance), b_provenance=dict(b.provenance), bootstrap=bootstrap,
        clusters=aligned.cluster_columns, unit=aligned.unit, units=consistency.info["units"], samples=a.n_samples,
        n_permutations=consistency.info["n_permutations"], inputs={"a": input_record(a, ids), "b": input_record(b, ids)},
    )
    return Comparison(scores=frame, summary=summary, signatures={m.name: m.signature() for m in resolved},
                      a=a.policy, b=b.policy, info=info, consistency=consistency)
