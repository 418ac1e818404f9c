"""Compare two policies' responses over one context set: :func:`compare` → :class:`Comparison`.

The responses are aligned by context id; every pair is scored with each measure; the
result keeps the per-context scores (a pandas DataFrame) and a summary per measure (mean,
count, missing count and a seeded bootstrap confidence interval of the mean).

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
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore._version import __version__
from simscore.checks import check_int, check_number, check_seed
from simscore.errors import (
    ContextMismatchError,
    InputMismatchError,
    InvalidResponseError,
    MissingValueWarning,
    SampleCountError,
    SharedSeedWarning,
)
from simscore.io import atomic_open, prepare_output
from simscore.io.formats import COMPARISON_FORMAT
from simscore.io.untrusted import spreadsheet_frame
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.measures.base import Measure, PairwiseMeasure, unique_pairs, warn_missing
from simscore.progress import show_progress
from simscore.responses import Responses
from simscore.samples import SampledResponses, shared_seed
from simscore.stats import MAX_RESAMPLES, Bootstrap, bootstrap_ci_shared, format_interval, warn_undefined_intervals
from simscore.stats.clusters import (
    AUTO,
    DIALOGUE_COLUMNS,
    Clusters,
    cluster_codes,
    dialogue_clusters,
    resolve_clusters,
    unit_name,
)
from simscore.stats.consistency import Consistency, self_consistency

if TYPE_CHECKING:
    from simscore.stats.strata import StratifiedComparison

__all__ = ["compare", "Comparison", "input_record", "check_inputs", "cluster_codes", "dialogue_clusters",
           "DIALOGUE_COLUMNS", "DEFAULT_MEASURES", "JSON_CHUNK", "COMPARISON_FORMAT", "COMPARISON_VERSION"]

_SUMMARY_COLUMNS = ["mean", "count", "missing", "ci_low", "ci_high"]

#: Per-context records made at a time by :meth:`Comparison.write_json`.
JSON_CHUNK = 10_000
#: The version of a saved comparison (:meth:`Comparison.write_json`, format
#: :data:`simscore.io.formats.COMPARISON_FORMAT`); a file without a ``format`` is version 1
#: (before simscore 0.2.0). Version 2: ``info`` records the inputs (``inputs``) and the bootstrap's units (``clusters``,
#: ``unit``, ``units``).
COMPARISON_VERSION = 2


class _Records(list[Any]):
    """The per-context records of a scores frame, made :data:`JSON_CHUNK` rows at a time as they are iterated.

    A ``list`` to :mod:`json`'s encoder (which then asks only its length and iterates it), so
    the records of millions of contexts are never all in memory at once. Each chunk goes
    through pandas' ``to_json`` as the whole frame did, so the values are the same.
    """

    def __init__(self, scores: pd.DataFrame) -> None:
        super().__init__()
        self._scores = scores

    def __len__(self) -> int:
        return len(self._scores)

    def __iter__(self) -> Iterator[Any]:
        for start in range(0, len(self._scores), JSON_CHUNK):
            chunk = self._scores.iloc[start : start + JSON_CHUNK]
            yield from json.loads(chunk.reset_index().to_json(orient="records"))


@dataclass(frozen=True)
class Comparison:
    """The result of comparing policy ``a`` with policy ``b`` on one context set.

    Attributes
    ----------
    scores : pandas.DataFrame
        One row per context (index ``context_id``, in ``a``'s order), one float column per
        measure, then any context metadata columns.
    summary : pandas.DataFrame
        One row per measure (index ``measure``): ``mean``, ``count`` (scored pairs),
        ``missing`` (NaN pairs left out), ``ci_low``, ``ci_high``.
    signatures : dict of str to str
        Measure name → signature.
    a, b : str
        Policy names.
    info : dict
        Provenance of both sides (``a_provenance``, ``b_provenance``), the bootstrap settings
        (``seed``, ``n_resamples``, ``confidence``), its units (``clusters``: the cluster
        columns, ``unit``: ``contexts``, ``dialogues`` or ``clusters``, ``units``: how many),
        and what it was made from (``inputs``: per side ``a`` and ``b`` the ``policy``, the
        number of ``contexts``, ``ids_sha256`` and ``responses_sha256``; :func:`input_record`,
        checked by :func:`check_inputs`); for sampled responses ``samples`` (K) and
        ``n_permutations`` instead of ``inputs``.
    consistency : Consistency or None
        For sampled responses (K >= 2 per context, :class:`~simscore.samples.SampledResponses`):
        each policy's agreement with itself, their agreement with each other relative to it and
        the permutation test (:mod:`simscore.stats.consistency`); None for one response per context.
    """

    scores: pd.DataFrame
    summary: pd.DataFrame
    signatures: dict[str, str]
    a: str = ""
    b: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    consistency: Consistency | None = None

    @property
    def measures(self) -> tuple[str, ...]:
        """Measure names, in column order."""
        return tuple(self.signatures)

    def mean(self, measure: str) -> float:
        """The rate (mean over scored contexts) of one measure."""
        return float(self.summary.loc[measure, "mean"])

    def by_stratum(self, by: str, **options: Any) -> StratifiedComparison:
        """Every measure per stratum of the metadata column ``by`` (e.g. ``flow``), with tests.

        The comparison must have been made with the contexts' metadata
        (``compare(a, b, metadata=contexts)``); ``options`` are those of
        :func:`simscore.stats.strata.stratify` (``cluster``, ``n_resamples``, ``n_permutations``,
        ``confidence``, ``seed``).

        >>> from simscore import Act, Response, Responses
        >>> a = Responses({f"c{i}": Response(Act.parse("hello()")) for i in range(4)})
        >>> b = Responses({f"c{i}": Response(Act.parse("hello()" if i % 2 else "bye()")) for i in range(4)})
        >>> flows = {f"c{i}": {"flow": "seen" if i % 2 else "unseen"} for i in range(4)}
        >>> compare(a, b, ["tmr"], metadata=flows).by_stratum("flow").table["mean"].tolist()
        [1.0, 0.0]
        """
        from simscore.stats.strata import stratify

        return stratify(self, by, **options)

    def to_json_dict(self) -> dict[str, Any]:
        """Everything as plain JSON types (NaN becomes null): the saved comparison's format.

        ``{"format": "simscore-comparison", "version": 2, "simscore": <version>, "a", "b",
        "info", "signatures", "summary": {measure: {mean, count, missing, ci_low, ci_high}},
        "scores": [{"context_id", <measure>: score, <metadata column>: value, ...}]}``, and for
        sampled responses ``"consistency"`` (:meth:`Consistency.to_json_dict
        <simscore.stats.consistency.Consistency.to_json_dict>`) after the scores.
        Version 2 added ``format``, ``version`` and ``info``'s ``inputs`` and units; a file
        without ``format`` is version 1.
        """
        document = self._json_document()
        document["scores"] = list(document["scores"])
        return document

    def _json_document(self) -> dict[str, Any]:
        summary = {
            name: {col: _json_number(row[col]) for col in _SUMMARY_COLUMNS}
            for name, row in self.summary.iterrows()
        }
        return {
            "format": COMPARISON_FORMAT,
            "version": COMPARISON_VERSION,
            "simscore": __version__,
            "a": self.a,
            "b": self.b,
            "info": self.info,
            "signatures": self.signatures,
            "summary": summary,
            "scores": _Records(self.scores),
            **({} if self.consistency is None else {"consistency": self.consistency.to_json_dict()}),
        }

    def write_json(self, handle: IO[str], *, extra: Mapping[str, Any] | None = None) -> None:
        """Write :meth:`to_json_dict` (and ``extra`` keys after it) to an open text file, as it is made.

        The bytes are those of ``json.dumps(document, indent=1)`` plus a line break, but the
        per-context records are made :data:`JSON_CHUNK` rows at a time and the text is written
        as it is encoded: a comparison of millions of contexts costs a chunk of memory, not a
        second copy of its scores as Python objects and a third as one string.
        """
        document = self._json_document()
        document.update(extra or {})
        pieces: list[str] = []
        for piece in json.JSONEncoder(indent=1, allow_nan=False).iterencode(document):
            pieces.append(piece)
            if len(pieces) >= 16_384:  # write in blocks: one call per piece would cost more than the encoding
                handle.write("".join(pieces))
                pieces.clear()
        pieces.append("\n")
        handle.write("".join(pieces))

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write per-context scores as ``.csv`` or everything as ``.json`` (:meth:`write_json`), atomically.

        An existing file is replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise).
        """
        suffix = os.fspath(path).rsplit(".", 1)[-1].lower()
        if suffix not in ("csv", "json"):
            raise ValueError(f"output path must end in .csv or .json, got {os.fspath(path)!r}")
        prepare_output(path, overwrite=overwrite)
        with atomic_open(path, "w") as handle:
            if suffix == "csv":  # text cells that a spreadsheet would run are made inert
                spreadsheet_frame(self.scores).to_csv(handle, float_format="%.10g")
            else:
                self.write_json(handle)

    def format_summary(self) -> str:
        """A readable fixed-width table of the summary, and a line naming the bootstrap's units.

        >>> from simscore import Act, Response, Responses, compare
        >>> r = Responses({"c1": Response(Act.parse("hello()")), "c2": Response(Act.parse("bye()"))})
        >>> print(compare(r, r, measures=["tmr"]).format_summary())
        measure      mean  95% CI                n  missing
        tmr        1.0000  [1.0000, 1.0000]      2        0
        95% CI: percentile bootstrap, 2 contexts resampled
        """
        confidence = self.info.get("confidence", 0.95)
        ci_head = f"{confidence:.0%} CI"
        lines = [f"{'measure':<9} {'mean':>7}  {ci_head:<16} {'n':>6} {'missing':>8}"]
        for name, row in self.summary.iterrows():
            ci = format_interval(row["ci_low"], row["ci_high"])
            lines.append(
                f"{name:<9} {row['mean']:>7.4f}  {ci:<16} {int(row['count']):>6} {int(row['missing']):>8}"
            )
        units = self.units_line()
        return "\n".join(lines + ([units] if units else []))

    def units_line(self) -> str | None:
        """What the intervals resampled, e.g. ``95% CI: percentile bootstrap, 48 dialogues resampled (by
        source_name, dialogue_id)``; None for a comparison saved before the units were recorded."""
        if "units" not in self.info:
            return None
        if not self.info.get("n_resamples", 1):
            return "no intervals (0 bootstrap resamples)"
        confidence = self.info.get("confidence", 0.95)
        columns = self.info.get("clusters") or []
        by = f" (by {', '.join(map(str, columns))})" if columns else ""
        count, unit = self.info["units"], str(self.info.get("unit", "units"))
        units = f"{count} {unit[:-1] if count == 1 else unit}"
        return f"{confidence:.0%} CI: percentile bootstrap, {units} resampled{by}"


def _json_number(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


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


def _ids_digest(ids: Sequence[str]) -> str:
    """SHA-256 of the context ids in the comparison's order (as JSON)."""
    return hashlib.sha256(json.dumps(list(ids), ensure_ascii=False).encode("utf-8")).hexdigest()


def _side_digest(ids_digest: str, levels: Sequence[tuple[list[Any], np.ndarray]]) -> str:
    """SHA-256 of one side's responses at the compared ids: per level (actions, then texts) its distinct
    values in order of first appearance (as text) and each context's rank among them.

    ``levels`` holds per level distinct values and a code per context into them, in any order
    of codes: they are ranked here, so every factorisation of the same responses gives the
    same digest.
    """
    digest = hashlib.sha256(ids_digest.encode("ascii"))
    for values, codes in levels:
        distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        shown = [None if values[d] is None else str(values[d]) for d in distinct[order]]
        digest.update(json.dumps(shown, ensure_ascii=False).encode("utf-8"))
        digest.update(rank[inverse.reshape(-1)].astype("<i8").tobytes())
    return digest.hexdigest()


def _input_records(a: Responses, b: Responses, ids: list[str], factorised: Mapping[str, Any]) -> dict[str, Any]:
    """``info["inputs"]``: per side the policy, the number and digest of the context ids and the responses' digest."""
    ids_digest = _ids_digest(ids)
    records = {}
    for side, responses, pick in (("a", a, 1), ("b", b, 2)):
        levels = [(factorised[level][0], factorised[level][pick][factorised[level][3]]) for level in ("action", "text")]
        records[side] = {"policy": responses.policy, "contexts": len(ids), "ids_sha256": ids_digest,
                         "responses_sha256": _side_digest(ids_digest, levels)}
    return records


def input_record(responses: Responses, ids: Sequence[str]) -> dict[str, Any]:
    """What :func:`compare` records of one side (``info["inputs"]["a"]``) for ``responses`` at ``ids``.

    ``policy``, ``contexts`` (the number of ``ids``), ``ids_sha256`` (SHA-256 of the ids in
    order) and ``responses_sha256`` (of the responses at those ids: the actions and texts, not
    the file's bytes, so the same responses saved as JSON Lines or CSV agree).

    >>> from simscore import Act, Response
    >>> r = Responses({"c1": Response(Act.parse("hello()")), "c2": Response(Act.parse("bye()"), "Bye.")}, policy="p")
    >>> record = input_record(r, ["c1", "c2"])
    >>> record["policy"], record["contexts"], record == compare(r, r, "tmr", n_resamples=0).info["inputs"]["a"]
    ('p', 2, True)
    """
    ids = list(ids)
    ids_digest = _ids_digest(ids)
    levels = []
    for column in (responses.actions(ids), responses.texts(ids)):
        values, pair_a, _, inverse = unique_pairs(column, column)
        levels.append((values, pair_a[inverse]))
    return {"policy": responses.policy, "contexts": len(ids), "ids_sha256": ids_digest,
            "responses_sha256": _side_digest(ids_digest, levels)}


def check_inputs(comparison: Comparison, a: Responses, b: Responses, *,
                 names: Mapping[str, str] | None = None) -> None:
    """Refuse responses that are not the ones ``comparison`` was made from.

    Each side's responses must have the policy name, the context ids and the responses that
    :func:`compare` recorded (``info["inputs"]``). A pair given the wrong way round is named
    as such ("swapped?"). A comparison without the record (saved by simscore before 0.2.0)
    cannot be checked: a :class:`~simscore.errors.MissingValueWarning` says so.

    Parameters
    ----------
    comparison : Comparison
    a, b : Responses
        The responses said to be sides A and B.
    names : mapping, optional
        How to name the sides in messages, e.g. ``{"a": "--a r.jsonl", "b": "--b h.jsonl"}``.

    Raises
    ------
    InputMismatchError
        Naming the side and what differs (policy, number of contexts, context ids, responses).
    """
    names = {"a": "a", "b": "b", **(names or {})}
    record = comparison.info.get("inputs")
    if not isinstance(record, Mapping):
        warnings.warn(
            f"the comparison does not record what it was made from (saved before simscore 0.2.0): cannot check "
            f"that {names['a']} and {names['b']} are its responses",
            MissingValueWarning,
            stacklevel=2,
        )
        return
    ids = [str(i) for i in comparison.scores.index]
    if _ids_digest(ids) != record["a"]["ids_sha256"]:
        raise InputMismatchError(f"the comparison's {len(ids)} per-context scores are not of the contexts it "
                                 f"records ({record['a']['contexts']}, SHA-256): was it edited?")
    found = {side: _found(responses, ids) for side, responses in (("a", a), ("b", b))}
    problems = {side: _differences(found[side], record[side]) for side in ("a", "b")}
    if not problems["a"] and not problems["b"]:
        return
    crossed = [not _differences(found[side], record[other]) for side, other in (("a", "b"), ("b", "a"))]
    if all(crossed):
        raise InputMismatchError(
            f"{names['a']} and {names['b']} are swapped? The comparison was made from "
            f"{_short(record['a']['policy'])} as A and {_short(record['b']['policy'])} as B; {names['a']} holds "
            f"B's responses and {names['b']} A's"
        )
    parts = []
    for side, other, holds_other in (("a", "B", crossed[0]), ("b", "A", crossed[1])):
        if problems[side]:
            also = f" (it holds {other}'s responses)" if holds_other else ""
            parts.append(f"{names[side]} is not what side {side.upper()} of the comparison was made from: "
                         f"{'; '.join(problems[side])}{also}")
    raise InputMismatchError("; ".join(parts))


def _short(policy: Any) -> str:
    text = repr(str(policy))
    return text if len(text) <= 62 else text[:58] + "...'"


def _found(responses: Responses, ids: list[str]) -> dict[str, Any]:
    """The record of ``responses`` at the comparison's ids (without a digest when they do not cover them)."""
    covers = len(responses) == len(ids) and all(i in responses for i in ids)
    if covers:
        return input_record(responses, ids)
    return {"policy": responses.policy, "contexts": len(responses),
            "missing": sum(i not in responses for i in ids), "extra": len(set(responses.ids) - set(ids))}


def _differences(found: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    """What differs between a file's record and the comparison's record of one side (empty: nothing)."""
    out = []
    if found["policy"] != expected["policy"]:
        out.append(f"policy {_short(found['policy'])}, not {_short(expected['policy'])}")
    if found["contexts"] != expected["contexts"]:
        out.append(f"{found['contexts']} contexts, not {expected['contexts']}")
    if "missing" in found:
        out.append(f"context ids differ ({found['missing']} of the comparison's missing, {found['extra']} others)")
    elif found["ids_sha256"] != expected["ids_sha256"]:
        out.append("context ids differ (SHA-256)")
    elif found["responses_sha256"] != expected["responses_sha256"]:
        out.append("responses differ (SHA-256 of the actions and texts)")
    return out


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
    structured = [column for column in frame.columns if frame[column].map(_is_structured).any()]
    return frame.drop(columns=structured) if structured else frame


def _is_structured(value: Any) -> bool:
    """A list or object value (a transcript context's ``messages`` and ``tools``), which no score table holds."""
    return isinstance(value, (Mapping, list, tuple))


def _warn_textless(textless: Mapping[str, int], a: Responses, b: Responses, ids: list[str]) -> None:
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
        stacklevel=3,
    )


def compare(
    a: Responses | SampledResponses,
    b: Responses | SampledResponses,
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    metadata: Any = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
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
    n_resamples, confidence, seed
        Bootstrap settings for the confidence interval of each mean (seeded: same inputs,
        same interval); ``n_resamples=0`` skips the intervals (NaN).
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
        value is an error). None (or ``()``): every context is a unit. ``info`` records the
        columns (``clusters``), the unit (``unit``) and how many there are (``units``).
    chance : Responses or SampledResponses, optional
        Sampled responses only: a random policy's responses over the same contexts, whose
        agreement with A's and B's samples is the chance level of :attr:`Comparison.consistency`.
    n_permutations : int, default 10,000
        Sampled responses only: relabellings of the self-consistency permutation test.

    Returns
    -------
    Comparison

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

    >>> from simscore.samples import SampledResponses, shared_seed
    >>> sa = SampledResponses({"c1": [Response(Act.parse(x)) for x in ("hello()", "hello()", "bye()")]}, policy="A")
    >>> sb = SampledResponses({"c1": [Response(Act.parse("bye()"))] * 3}, policy="B")
    >>> s = compare(sa, sb, ["tmr"], n_resamples=0, n_permutations=100)
    >>> round(s.mean("tmr"), 4), s.consistency.table.loc["tmr", ["within_a", "within_b"]].round(4).tolist()
    (0.3333, [0.3333, 1.0])
    """
    n_resamples, confidence, seed = _checked_settings(n_resamples, confidence, seed)
    if not isinstance(measures, (str, Measure, Iterable)):
        raise TypeError(f"measures must be a name, a Measure or an iterable of them, got {type(measures).__name__}")
    resolved = resolve_measures(measures)
    if isinstance(a, SampledResponses) or isinstance(b, SampledResponses) or chance is not None:
        return _compare_sampled(a, b, resolved, metadata=metadata, clusters=clusters, chance=chance,
                                bootstrap=Bootstrap(n_resamples, confidence, seed), n_permutations=n_permutations,
                                progress=progress)
    ids = _align(a, b)
    meta = _metadata_frame(metadata, ids)
    cluster_columns = resolve_clusters(clusters, meta)
    codes = cluster_codes(meta, cluster_columns, check=True)
    columns: dict[str, np.ndarray] = {}
    factorised: dict[str, tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]] = {}
    textless: dict[str, int] = {}
    with show_progress(progress):
        for measure in resolved:
            pick = Responses.actions if measure.level == "action" else Responses.texts
            if isinstance(measure, PairwiseMeasure):
                if measure.level not in factorised:
                    # ids follow a's order; b needs a look-up only if its order differs
                    b_ids = None if b.ids == a.ids else ids
                    factorised[measure.level] = unique_pairs(pick(a), pick(b, b_ids))
                values, pair_a, pair_b, inverse = factorised[measure.level]
                scores = measure.score_distinct(values, pair_a, pair_b)[inverse]
                missing = int(np.isnan(scores).sum())
                if measure.level == "text" and missing:
                    textless[measure.name] = missing  # one warning for all of them, saying how to add words
                else:
                    warn_missing(measure.name, missing, measure.level)
            else:
                scores = np.asarray(measure.score_pairs(pick(a, ids), pick(b, ids)), dtype=np.float64)
            columns[measure.name] = scores
    if textless:
        _warn_textless(textless, a, b, ids)

    frame = _scores_frame(columns, ids, meta)

    b_ids = None if b.ids == a.ids else ids
    for level, pick in (("action", Responses.actions), ("text", Responses.texts)):
        if level not in factorised:  # the intervals' groups and the record of the inputs need both levels
            factorised[level] = unique_pairs(pick(a), pick(b, b_ids))
    if n_resamples == 0:  # means only (e.g. a chance level logged every training check)
        intervals = {name: (float("nan"), float("nan")) for name in columns}
    else:
        # Contexts with equal codes have the same pair of responses at both levels, so equal
        # scores under every measure: the resampling depends on the responses, not on which
        # measures were asked for.
        groups = np.zeros(len(ids), dtype=np.int64)
        for level in ("action", "text"):
            part = factorised[level][3]
            # re-compact so the codes never overflow (a level with one code leaves the groups as they are)
            groups = np.unique(groups * (int(part.max(initial=0)) + 1) + part, return_inverse=True)[1].reshape(-1)
        intervals = bootstrap_ci_shared(columns, groups, n_resamples=n_resamples, confidence=confidence, seed=seed,
                                        clusters=codes)
    rows = {}
    alone = []  # measures whose values fall in one unit: an undefined interval
    for name, column in columns.items():
        present = ~np.isnan(column)
        valid = column[present]
        if n_resamples and (len(valid) if codes is None else np.count_nonzero(np.bincount(codes[present]))) == 1:
            alone.append(name)
        rows[name] = {
            "mean": float(valid.mean()) if len(valid) else float("nan"),
            "count": int(len(valid)),
            "missing": int(len(column) - len(valid)),
            "ci_low": intervals[name][0],
            "ci_high": intervals[name][1],
        }
    summary = pd.DataFrame.from_dict(rows, orient="index", columns=_SUMMARY_COLUMNS)
    summary.index.name = "measure"
    unit = unit_name(cluster_columns)
    warn_undefined_intervals(alone, unit[:-1], confidence=confidence)
    info: dict[str, Any] = {
        "a_provenance": dict(a.provenance),
        "b_provenance": dict(b.provenance),
        "seed": seed,
        "n_resamples": n_resamples,
        "confidence": confidence,
        "clusters": list(cluster_columns),
        "unit": unit,
        "units": len(ids) if codes is None else int(codes.max(initial=-1)) + 1,
        "inputs": _input_records(a, b, ids, factorised),
    }
    return Comparison(
        scores=frame,
        summary=summary,
        signatures={m.name: m.signature() for m in resolved},
        a=a.policy,
        b=b.policy,
        info=info,
    )


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


def _checked_settings(n_resamples: Any, confidence: Any, seed: Any) -> tuple[int, float, int]:
    """:func:`compare`'s bootstrap settings, checked (errors name the parameter)."""
    n_resamples = check_int("n_resamples", n_resamples, minimum=0, maximum=MAX_RESAMPLES, error=ValueError)
    seed = check_seed("seed", seed)
    confidence = check_number("confidence", confidence, minimum=0.0, exclusive_minimum=True)
    if not confidence < 1.0:
        raise ValueError(f"confidence must be < 1, got {confidence!r}")
    return n_resamples, confidence, seed


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
        return compare(a.sample(0), b.sample(0), resolved, metadata=metadata, n_resamples=bootstrap.n_resamples,
                       confidence=bootstrap.confidence, seed=bootstrap.seed, progress=progress, clusters=clusters)
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
    ids = _align(a.sample(0), b.sample(0))
    meta = _metadata_frame(metadata, ids)
    cluster_columns = resolve_clusters(clusters, meta)
    codes = cluster_codes(meta, cluster_columns, check=True)
    unit = unit_name(cluster_columns)
    with show_progress(progress):
        consistency = self_consistency(
            a, b, resolved, units=codes, unit=unit, chance=None if chance is None else _as_sampled(chance, "chance"),
            bootstrap=bootstrap, n_permutations=n_permutations,
        )
    columns = {m.name: consistency.per_context[f"{m.name}_between"].to_numpy() for m in resolved}
    frame = _scores_frame(columns, ids, meta)
    table = consistency.table
    rows = {
        m.name: {"mean": table.loc[m.name, "between"], "count": int(table.loc[m.name, "contexts"]),
                 "missing": len(ids) - int(table.loc[m.name, "contexts"]),
                 "ci_low": table.loc[m.name, "between_low"], "ci_high": table.loc[m.name, "between_high"]}
        for m in resolved
    }
    summary = pd.DataFrame.from_dict(rows, orient="index", columns=_SUMMARY_COLUMNS)
    summary.index.name = "measure"
    info: dict[str, Any] = {
        "a_provenance": dict(a.provenance), "b_provenance": dict(b.provenance), **bootstrap.to_dict(),
        "clusters": list(cluster_columns), "unit": unit, "units": consistency.info["units"],
        "samples": a.n_samples, "n_permutations": consistency.info["n_permutations"],
    }
    return Comparison(scores=frame, summary=summary, signatures={m.name: m.signature() for m in resolved},
                      a=a.policy, b=b.policy, info=info, consistency=consistency)
