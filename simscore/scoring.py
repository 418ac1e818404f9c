"""Score two plain lists against each other: :func:`score` → :class:`ScoreResult`.

The ``score(predictions, references)`` form users of sacrebleu or Hugging Face ``evaluate``
expect, on top of :func:`~simscore.comparison.compare` (no second implementation): item ``i`` of
``a`` is paired with item ``i`` of ``b``, each item becomes a
:class:`~simscore.responses.Response`, and the result carries per measure the mean, its
bootstrap confidence interval and the per-item scores.

What the items are (``kind``)
-----------------------------
``"act"`` (alias ``"action"``)
    Semantic actions: :class:`~simscore.acts.Act` objects, PyDial act strings
    (``'inform(food=thai,area=north)'``, read by :meth:`Act.parse <simscore.acts.Act.parse>`)
    or ConvLab turns, lists of ``[intent, domain, slot, value]``
    (:meth:`Act.from_convlab <simscore.acts.Act.from_convlab>`), mixed freely. A string that
    does not parse is an error.
``"text"``
    Prompts (strings).
``"auto"`` (default)
    Acts if any item is an ``Act`` or a ConvLab list, or if **every** string item of both
    lists parses as an act; texts otherwise. A text that happens to be shaped like an act
    (``"hello()"``) is read as an act unless every item is known to be text — pass
    ``kind="text"`` to be sure.

``None`` items are missing values: every measure scores that pair NaN (with a
:class:`~simscore.errors.MissingValueWarning`) and leaves it out of the mean, count and
interval, exactly as :func:`~simscore.comparison.compare` does. Measures of the other level
than the items are an error (an action measure cannot score texts).

Measures
--------
Names, groups (``"action"``, ``"text"``, ``"all"``) or configured measure objects. Default:
the four action measures for acts, the four text measures for texts. Pass measure
*instances* to reuse them across calls: a text measure keeps its loaded model and its
embedding caches, so scoring the next batch costs only the new sentences.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd

from simscore.acts import Act
from simscore.comparison import compare
from simscore.errors import ActParseError, InvalidResponseError, MissingValueWarning, SampleCountError
from simscore.measures import ACTION_MEASURES, TEXT_MEASURES, resolve_measures
from simscore.measures.base import Measure
from simscore.responses import Response, Responses
from simscore.samples import SampledResponses
from simscore.stats import Bootstrap, bootstrap_ci_shared, format_interval, warn_undefined_intervals
from simscore.stats.consistency import Consistency

__all__ = ["score", "ScoreResult", "MeasureScore"]

_KIND_ALIASES = {"auto": "auto", "act": "act", "action": "act", "text": "text"}


@dataclass(frozen=True)
class MeasureScore:
    """One measure's result in a :class:`ScoreResult`.

    Attributes
    ----------
    name : str
    mean : float
        Mean over the scored (non-NaN) pairs; NaN if none was scored.
    ci_low, ci_high : float
        Seeded percentile-bootstrap interval of the mean; NaN from one scored item (with a
        :class:`~simscore.errors.MissingValueWarning`: one value says nothing about its spread).
    count : int
        Pairs scored.
    missing : int
        Pairs scored NaN (a side was None).
    scores : numpy.ndarray
        Per-item scores, shape ``(n,)``, float64, read-only.
    signature : str
        Everything that determines the numbers (versions, model, options).
    """

    name: str
    mean: float
    ci_low: float
    ci_high: float
    count: int
    missing: int
    scores: np.ndarray
    signature: str

    def __repr__(self) -> str:
        """The numbers without the per-item scores (``scores``) and the signature (``signature``)."""
        return (f"MeasureScore(name={self.name!r}, mean={self.mean!r}, ci=({self.ci_low!r}, {self.ci_high!r}), "
                f"count={self.count}, missing={self.missing})")


@dataclass(frozen=True)
class ScoreResult:
    """The result of :func:`score`: per measure mean, interval and per-item scores.

    Attributes
    ----------
    kind : {"act", "text"}
        What the items were read as.
    measures : mapping of str to MeasureScore
        In the order the measures were given (read-only).
    confidence : float
    n_resamples : int
    seed : int
        Bootstrap settings of the intervals.
    consistency : Consistency or None
        With ``score(..., samples=True)``: each side's agreement with itself, their agreement
        relative to it and the permutation test (:mod:`simscore.stats.consistency`); else None.

    Examples
    --------
    >>> r = score(["request(food)", "hello()"], ["request(area)", "hello()"], measures=["tmr", "dmr"])
    >>> print(r)
    measure      mean  95% CI             unit       n
    tmr        0.5000  [0.0000, 1.0000]   items      2
    dmr        1.0000  [1.0000, 1.0000]   items      2
    >>> r
    ScoreResult(kind='act', items=2, means={'tmr': 0.5, 'dmr': 1.0}, confidence=0.95, n_resamples=1000, seed=0)
    >>> r.kind, r["tmr"].mean, r.means
    ('act', 0.5, {'tmr': 0.5, 'dmr': 1.0})
    >>> r["tmr"]
    MeasureScore(name='tmr', mean=0.5, ci=(0.0, 1.0), count=2, missing=0)
    >>> r["tmr"].scores
    array([0., 1.])
    """

    kind: Literal["act", "text"]
    measures: Mapping[str, MeasureScore]
    confidence: float
    n_resamples: int
    seed: int
    consistency: Consistency | None = None

    def __getitem__(self, name: str) -> MeasureScore:
        try:
            return self.measures[name]
        except KeyError:
            raise KeyError(f"no measure {name!r} in this result (have: {', '.join(self.measures)})") from None

    def __len__(self) -> int:
        """Number of scored items (pairs)."""
        first = next(iter(self.measures.values()))
        return len(first.scores)

    def __str__(self) -> str:
        """A short table: per measure the mean, its interval (``undefined`` from one item), the
        unit the interval resampled and the count of scored items."""
        head = f"{self.confidence:.0%} CI"
        lines = [f"{'measure':<9} {'mean':>7}  {head:<18} {'unit':<6} {'n':>5}"]
        for name, m in self.measures.items():
            interval = format_interval(m.ci_low, m.ci_high) if self.n_resamples else "none (0 resamples)"
            lines.append(f"{name:<9} {m.mean:>7.4f}  {interval:<18} {'items':<6} {m.count:>5}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        """The kind, the number of items, each measure's mean and the bootstrap settings."""
        return (f"ScoreResult(kind={self.kind!r}, items={len(self)}, means={self.means!r}, "
                f"confidence={self.confidence!r}, n_resamples={self.n_resamples}, seed={self.seed})")

    @property
    def means(self) -> dict[str, float]:
        """Measure name → mean."""
        return {name: m.mean for name, m in self.measures.items()}

    def summary(self) -> pd.DataFrame:
        """One row per measure (index ``measure``): mean, count, missing, ci_low, ci_high."""
        rows = {
            name: {"mean": m.mean, "count": m.count, "missing": m.missing, "ci_low": m.ci_low, "ci_high": m.ci_high}
            for name, m in self.measures.items()
        }
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=["mean", "count", "missing", "ci_low", "ci_high"])
        frame.index.name = "measure"
        return frame


def _as_list(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes, Act)) or isinstance(values, Mapping):
        raise TypeError(f"{name} must be a sequence of items (e.g. a list of strings), got {type(values).__name__}")
    if isinstance(values, np.ndarray):
        return values.tolist()
    if not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of items, got {type(values).__name__}")
    return list(values)


def _to_act(value: Any, cache: dict[str, Act], where: str) -> Act | None:
    if value is None or isinstance(value, Act):
        return value
    if isinstance(value, str):
        act = cache.get(value)
        if act is None:
            try:
                act = cache[value] = Act.parse(value)
            except ActParseError as exc:
                raise ActParseError(value, exc.position, f"{where}: {exc.reason} (pass kind='text' for prose)") from None
        return act
    if isinstance(value, (list, tuple)):
        return Act.from_convlab(value)
    raise InvalidResponseError(
        f"{where}: expected an Act, an act string, a ConvLab act list or None, got {type(value).__name__} {value!r}"
    )


def _references_of(item: Any) -> list[Any] | None:
    """An item's references when it holds several (a list of them); None for one reference.

    A ConvLab act is itself a list (of ``[intent, domain, slot, value]`` lists of strings), so
    a list whose first element is such a 4-string list is one act, not several references.
    """
    if not isinstance(item, (list, tuple)):
        return None
    first = item[0] if item else None
    if isinstance(first, (list, tuple)) and first and all(isinstance(part, str) for part in first):
        return None
    return list(item)


def _best_per_item(
    comparison: Any, resolved: Sequence[Measure], owner: np.ndarray, n_items: int,
    *, n_resamples: int, confidence: float, seed: int,
) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """Each item's best score over its references, and the summary of those, as compare() makes it."""
    columns: dict[str, np.ndarray] = {}
    for measure in resolved:
        pairs = pd.Series(comparison.scores[measure.name].to_numpy(dtype=np.float64), index=owner)
        best = pairs.groupby(level=0).max() if measure.higher_is_better else pairs.groupby(level=0).min()
        columns[measure.name] = best.reindex(range(n_items)).to_numpy(dtype=np.float64)
    rows = np.nan_to_num(np.column_stack(list(columns.values())), nan=-np.inf)
    groups = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)  # equal rows, equal values
    if n_resamples == 0:
        intervals = {name: (float("nan"), float("nan")) for name in columns}
    else:
        intervals = bootstrap_ci_shared(columns, groups, n_resamples=n_resamples, confidence=confidence, seed=seed)
    summary = {}
    for name, column in columns.items():
        valid = column[~np.isnan(column)]
        summary[name] = {"mean": float(valid.mean()) if len(valid) else float("nan"), "count": int(len(valid)),
                         "missing": int(len(column) - len(valid)), "ci_low": intervals[name][0],
                         "ci_high": intervals[name][1]}
    return columns, pd.DataFrame.from_dict(summary, orient="index")


def _detect_kind(items: Sequence[Any]) -> str:
    """``"act"`` or ``"text"`` for ``kind="auto"`` (see the module docstring)."""
    strings = set()
    for value in items:
        if isinstance(value, (Act, list, tuple)):
            return "act"
        if isinstance(value, str):
            strings.add(value)
    for text in strings:
        try:
            Act.parse(text)
        except ActParseError:
            return "text"
    return "act"  # every string is an act (or every item is None: the cheap measures then)


def score(
    predictions: Sequence[Any],
    references: Sequence[Any],
    measures: str | Measure | Iterable[str | Measure] | None = None,
    *,
    kind: str = "auto",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: bool = True,
    samples: bool = False,
    n_permutations: int = 10_000,
) -> ScoreResult:
    """Score ``predictions[i]`` against ``references[i]`` for every ``i`` with each measure.

    The names follow ``score(predictions, references)`` of sacrebleu and ``evaluate``; the
    eight measures are symmetric, so which side is which matters only for a measure of your own.

    Parameters
    ----------
    predictions, references : sequence
        Two equal-length lists of texts, act strings, ConvLab act lists or
        :class:`~simscore.acts.Act` objects (``None`` = missing). An item of ``references``
        may be a list of several references (texts, act strings, Acts or ConvLab act lists):
        the item's score is then its best over them, for acts as for texts (the largest
        similarity; the smallest value of a measure where lower is better), as bert-score
        scores several references. The interval resamples items, not references. ``bleu4``
        takes one reference per item (its symmetric form has no multi-reference BLEU yet).
    measures : names or Measure objects, optional
        Default: the action measures for acts, the text measures for texts. Pass measure
        instances to reuse their models and caches across calls.
    kind : {"auto", "act", "text"}
        How to read the items (module docstring); ``"action"`` is an alias of ``"act"``.
    n_resamples, confidence, seed
        Bootstrap settings of each mean's interval (seeded: same inputs, same interval).
    progress : bool, default True
        The progress of a text measure's embedding, as :func:`~simscore.comparison.compare` shows it.
    samples : bool, default False
        True: every item of ``predictions`` and of ``references`` is a list of K >= 2 samples
        (the same K everywhere) of a sampled policy's answer to one context. An item's score is
        then the mean over its K² cross pairs, and :attr:`ScoreResult.consistency` holds each
        side's agreement with itself, the agreement between them relative to it and the
        permutation test (:mod:`simscore.stats.consistency`; items are the units).
    n_permutations : int, default 10,000
        With ``samples=True``: relabellings of the permutation test.

    Returns
    -------
    ScoreResult

    Raises
    ------
    InvalidResponseError
        If the lengths differ, a list is empty or an item has an unsupported type.
    ActParseError
        If ``kind="act"`` (or a mixed list under ``"auto"``) has a string that is no act.
    ValueError
        If a measure's level does not match the items.

    Examples
    --------
    >>> print(score(["request(food)", "hello()"], ["request(area)", "hello()"]))
    measure      mean  95% CI             unit       n
    tmr        0.5000  [0.0000, 1.0000]   items      2
    dmr        1.0000  [1.0000, 1.0000]   items      2
    cer        0.7500  [0.5000, 1.0000]   items      2
    cmr        0.6000  [0.2000, 1.0000]   items      2
    >>> score(["request(food)"], [[["Request", "Restaurant", "Area", "?"]]], measures="dmr")["dmr"].mean
    1.0
    >>> r = score(["Which area?", "Goodbye."], ["Which part of town?", "Goodbye."], measures="bleu4")
    >>> r.kind, float(r["bleu4"].scores[1])
    ('text', 1.0)

    Several references for an item (here the first): each item scores its best match.

    >>> r = score(["request(food)", "bye()"], [["request(area)", "request(food)"], "hello()"], measures="tmr")
    >>> r["tmr"].scores.tolist(), len(r)
    ([1.0, 0.0], 2)

    Three samples per item (a sampled policy answering each context three times):

    >>> r = score([["hello()", "hello()", "bye()"], ["bye()"] * 3], [["bye()"] * 3] * 2, measures="tmr",
    ...           samples=True, n_permutations=200)
    >>> r["tmr"].scores.round(4).tolist(), r.consistency.table.loc["tmr", ["within_a", "between"]].round(4).tolist()
    ([0.3333, 1.0], [0.6667, 0.6667])
    """
    items_a, items_b = _as_list(predictions, "predictions"), _as_list(references, "references")
    if len(items_a) != len(items_b):
        raise InvalidResponseError(
            f"predictions and references must have the same length, got {len(items_a)} and {len(items_b)}"
        )
    if not items_a:
        raise InvalidResponseError("predictions and references are empty: nothing to score")
    if kind not in _KIND_ALIASES:
        raise ValueError(f"kind must be 'auto', 'act' or 'text', got {kind!r}")
    n_items = len(items_a)
    n_samples, items_a, items_b, several = _items(items_a, items_b, samples)
    multi = any(refs is not None for refs in several)
    owner = np.arange(n_items)
    if multi:  # one pair per (prediction, reference); each item keeps its best pair
        for i, refs in enumerate(several):
            if refs == []:
                raise InvalidResponseError(f"references[{i}]: an empty list of references")
        counts = [1 if refs is None else len(refs) for refs in several]
        owner = np.repeat(np.arange(n_items), counts)
        items_a = [items_a[i] for i in owner]
        items_b = [ref for i, refs in enumerate(several) for ref in (refs if refs is not None else [items_b[i]])]
    resolved_kind = _KIND_ALIASES[kind]
    if resolved_kind == "auto":
        resolved_kind = _detect_kind(items_a + items_b)
    level = "action" if resolved_kind == "act" else "text"
    if measures is None:
        measures = ACTION_MEASURES if level == "action" else TEXT_MEASURES
    resolved = resolve_measures(measures)
    if multi and any(m.name == "bleu4" for m in resolved):
        raise ValueError(
            "bleu4 takes one reference per item: the symmetric sentence BLEU has no multi-reference form yet "
            "(the best of several references, as for the other measures, would not be sacrebleu's "
            "multi-reference BLEU); score bleu4 with one reference per item"
        )
    wrong = [m.name for m in resolved if m.level != level]
    if wrong:
        raise ValueError(
            f"measures {', '.join(map(repr, wrong))} score {'texts' if level == 'action' else 'actions'}, "
            f"but the items were read as {'acts' if level == 'action' else 'texts'} (kind={kind!r})"
        )

    ids = [str(i) for i in range(len(items_a))]
    sides = []
    for name, items in (("predictions", items_a), ("references", items_b)):
        responses: dict[str, Response] = {}
        if level == "action":
            cache: dict[str, Act] = {}
            converted = [_to_act(v, cache, f"{name}[{i}]") for i, v in enumerate(items)]
            for context_id, act in zip(ids, converted):
                # a Response needs an action or a text; a missing act is a text-less placeholder
                responses[context_id] = Response(act) if act is not None else Response(text="")
        else:
            for i, (context_id, text) in enumerate(zip(ids, items)):
                if text is not None and not isinstance(text, str):
                    raise InvalidResponseError(f"{name}[{i}]: a text must be a string or None, got {type(text).__name__}")
                responses[context_id] = Response(text=text) if text is not None else Response(Act("none"))
        sides.append(Responses(responses, policy=name))
    pair = _grouped(sides, n_samples, n_items)
    with warnings.catch_warnings():  # compare's words are of contexts; score's own warning below is of items
        warnings.filterwarnings("ignore", "^.*: a .* interval from one context is undefined", MissingValueWarning)
        settings = Bootstrap(n_resamples=0 if multi else n_resamples, confidence=confidence, seed=seed)
        comparison = compare(pair[0], pair[1], resolved, bootstrap=settings, progress=progress,
                             n_permutations=n_permutations)
    if multi:
        best, summary = _best_per_item(comparison, resolved, owner, n_items,
                                       n_resamples=n_resamples, confidence=confidence, seed=seed)
    else:
        best = {m.name: comparison.scores[m.name].to_numpy(dtype=np.float64) for m in resolved}
        summary = comparison.summary

    alone = [m.name for m in resolved if n_resamples and summary.loc[m.name, "count"] == 1]
    warn_undefined_intervals(alone, "item", confidence=confidence)
    out: dict[str, MeasureScore] = {}
    for measure in resolved:
        row = summary.loc[measure.name]
        values = np.array(best[measure.name], dtype=np.float64, copy=True)
        values.setflags(write=False)
        out[measure.name] = MeasureScore(
            name=measure.name,
            mean=float(row["mean"]),
            ci_low=float(row["ci_low"]),
            ci_high=float(row["ci_high"]),
            count=int(row["count"]),
            missing=int(row["missing"]),
            scores=values,
            signature=comparison.signatures[measure.name],
        )
    return ScoreResult(
        kind="act" if level == "action" else "text",
        measures=MappingProxyType(out),
        confidence=float(confidence),
        n_resamples=int(n_resamples),
        seed=int(seed),
        consistency=comparison.consistency,
    )


def _items(items_a: list[Any], items_b: list[Any], samples: bool) -> tuple[int, list[Any], list[Any], list[Any]]:
    """(K, the items of each side, each reference item's list of references or None) of :func:`score`.

    With ``samples`` the items' samples in one list per side, item-major (sample k of item i at
    i * K + k), and no item has several references; else K = 1 and the items as given.
    """
    if not samples:
        return 1, items_a, items_b, [_references_of(item) for item in items_b]
    n_samples, flat_a = _flat_samples(items_a, "predictions")
    k_b, flat_b = _flat_samples(items_b, "references")
    if k_b != n_samples:
        raise SampleCountError(f"predictions have {n_samples} samples per item, references {k_b}: "
                               "both sides need the same number")
    return n_samples, flat_a, flat_b, [None] * len(flat_b)


def _grouped(sides: list[Responses], n_samples: int, n_items: int) -> list[Responses | SampledResponses]:
    """The two sides as :func:`compare` takes them: K samples per item regrouped, or as they are (K = 1)."""
    if n_samples == 1:
        return list(sides)
    return [SampledResponses({str(i): [side[str(i * n_samples + k)] for k in range(n_samples)]
                              for i in range(n_items)}, policy=side.policy) for side in sides]


def _flat_samples(items: list[Any], name: str) -> tuple[int, list[Any]]:
    """(K, the items' samples in one list, item-major) of a side of ``score(..., samples=True)``."""
    flat: list[Any] = []
    k = None
    for i, item in enumerate(items):
        if isinstance(item, (str, bytes, Act, Mapping)) or not isinstance(item, Sequence):
            raise InvalidResponseError(f"{name}[{i}]: with samples=True an item is a list of samples, "
                                       f"got {type(item).__name__}")
        if k is None:
            k = len(item)
        elif len(item) != k:
            raise SampleCountError(f"{name}[{i}] has {len(item)} samples, {name}[0] has {k}: every item needs the same")
        flat.extend(item)
    if k is None or k < 2:
        raise SampleCountError(f"with samples=True every item needs at least 2 samples, {name}[0] has {k or 0}")
    return k, flat
