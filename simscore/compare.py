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

Contexts of one dialogue are not independent: with ``clusters`` (metadata columns naming a
dialogue, e.g. ``("source_name", "dialogue_id")`` of collected contexts) the bootstrap
resamples whole dialogues.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore._version import __version__
from simscore.checks import check_int, check_number, check_seed
from simscore.errors import ContextMismatchError, InvalidResponseError, MissingValueWarning
from simscore.io import atomic_open, prepare_output
from simscore.measures import DEFAULT_MEASURES, resolve_measures
from simscore.measures.base import Measure, PairwiseMeasure, unique_pairs, warn_missing
from simscore.progress import show_progress
from simscore.responses import Responses
from simscore.stats import MAX_RESAMPLES, bootstrap_ci_shared
from simscore.untrusted import spreadsheet_frame

if TYPE_CHECKING:
    from simscore.strata import StratifiedComparison

__all__ = ["compare", "cluster_codes", "Comparison", "DEFAULT_MEASURES", "JSON_CHUNK"]

_SUMMARY_COLUMNS = ["mean", "count", "missing", "ci_low", "ci_high"]

#: Per-context records made at a time by :meth:`Comparison.write_json`.
JSON_CHUNK = 10_000


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
        Provenance of both sides and the bootstrap settings (seed, resamples, confidence).
    """

    scores: pd.DataFrame
    summary: pd.DataFrame
    signatures: dict[str, str]
    a: str = ""
    b: str = ""
    info: dict[str, Any] = field(default_factory=dict)

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
        :func:`simscore.strata.stratify` (``cluster``, ``n_resamples``, ``n_permutations``,
        ``confidence``, ``seed``).

        >>> from simscore import Act, Response, Responses
        >>> a = Responses({f"c{i}": Response(Act.parse("hello()")) for i in range(4)})
        >>> b = Responses({f"c{i}": Response(Act.parse("hello()" if i % 2 else "bye()")) for i in range(4)})
        >>> flows = {f"c{i}": {"flow": "seen" if i % 2 else "unseen"} for i in range(4)}
        >>> compare(a, b, ["tmr"], metadata=flows).by_stratum("flow").table["mean"].tolist()
        [1.0, 0.0]
        """
        from simscore.strata import stratify

        return stratify(self, by, **options)

    def to_json_dict(self) -> dict[str, Any]:
        """Everything as plain JSON types (NaN becomes null)."""
        document = self._json_document()
        document["scores"] = list(document["scores"])
        return document

    def _json_document(self) -> dict[str, Any]:
        summary = {
            name: {col: _json_number(row[col]) for col in _SUMMARY_COLUMNS}
            for name, row in self.summary.iterrows()
        }
        return {
            "simscore": __version__,
            "a": self.a,
            "b": self.b,
            "info": self.info,
            "signatures": self.signatures,
            "summary": summary,
            "scores": _Records(self.scores),
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
        """A readable fixed-width table of the summary.

        >>> from simscore import Act, Response, Responses, compare
        >>> r = Responses({"c1": Response(Act.parse("hello()"))})
        >>> print(compare(r, r, measures=["tmr"]).format_summary())
        measure      mean  95% CI                n  missing
        tmr        1.0000  [1.0000, 1.0000]      1        0
        """
        confidence = self.info.get("confidence", 0.95)
        ci_head = f"{confidence:.0%} CI"
        lines = [f"{'measure':<9} {'mean':>7}  {ci_head:<16} {'n':>6} {'missing':>8}"]
        for name, row in self.summary.iterrows():
            ci = f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
            lines.append(
                f"{name:<9} {row['mean']:>7.4f}  {ci:<16} {int(row['count']):>6} {int(row['missing']):>8}"
            )
        return "\n".join(lines)


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
    return metadata.reindex(ids)


def cluster_codes(meta: pd.DataFrame | None, columns: Iterable[str]) -> np.ndarray | None:
    """One code per row naming its cluster: the distinct values of the ``columns`` together.

    A row without a value in one of the columns is a cluster of its own; None without columns.

    >>> frame = pd.DataFrame({"source_name": ["a", "a", "b", None], "dialogue_id": ["d1", "d1", "d1", "d2"]})
    >>> cluster_codes(frame, ["source_name", "dialogue_id"]).tolist()
    [0, 0, 1, 2]
    """
    columns = tuple(columns)
    if not columns:
        return None
    if meta is None:
        raise ValueError(f"clusters {list(columns)} need the contexts' metadata (metadata=...)")
    missing = [c for c in columns if c not in meta.columns]
    if missing:
        raise ValueError(f"clusters: the metadata has no column(s) {missing} (it has {list(meta.columns)})")
    keys = meta[list(columns)].astype(object).where(meta[list(columns)].notna(), None)
    labels = [tuple(row) for row in keys.itertuples(index=False, name=None)]
    codes = pd.factorize(pd.Series(labels, dtype=object))[0]
    alone = np.array([any(v is None for v in label) for label in labels], dtype=bool)
    codes[alone] = codes.max(initial=-1) + 1 + np.arange(int(alone.sum()))  # no cluster: a unit of its own
    return np.unique(codes, return_inverse=True)[1].reshape(-1)


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
    a: Responses,
    b: Responses,
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    metadata: Any = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: bool = True,
    clusters: str | Iterable[str] | None = None,
) -> Comparison:
    """Score every pair of responses of two policies over the same contexts.

    Parameters
    ----------
    a, b : Responses
        The two policies' responses; they must cover the same context ids.
    measures : names or Measure objects
        Default :data:`~simscore.measures.DEFAULT_MEASURES`, the four action measures (no
        model needed); ``"all"`` gives all eight.
    metadata : DataFrame, mapping or ContextSet, optional
        Context metadata (e.g. turn index) joined onto the per-context scores.
    n_resamples, confidence, seed
        Bootstrap settings for the confidence interval of each mean (seeded: same inputs,
        same interval); ``n_resamples=0`` skips the intervals (NaN).
    progress : bool, default True
        The progress of a text measure's embedding (:mod:`simscore.progress`): on a terminal
        a bar once it takes more than a second, else a log line at least every minute of a
        long one; False: none.
    clusters : str or iterable of str, optional
        Metadata column(s) whose values together name the cluster of a context (e.g.
        ``("source_name", "dialogue_id")``): the bootstrap resamples clusters, not contexts
        (a context without a value is a cluster of its own). Needs ``metadata``.

    Returns
    -------
    Comparison

    Raises
    ------
    ContextMismatchError
        If ``a`` and ``b`` cover different context ids (the message lists some of them).

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
    """
    n_resamples = check_int("n_resamples", n_resamples, minimum=0, maximum=MAX_RESAMPLES, error=ValueError)
    seed = check_seed("seed", seed)
    confidence = check_number("confidence", confidence, minimum=0.0, exclusive_minimum=True)
    if not confidence < 1.0:
        raise ValueError(f"confidence must be < 1, got {confidence!r}")
    if not isinstance(measures, (str, Measure, Iterable)):
        raise TypeError(f"measures must be a name, a Measure or an iterable of them, got {type(measures).__name__}")
    resolved = resolve_measures(measures)
    ids = _align(a, b)
    meta = _metadata_frame(metadata, ids)
    cluster_columns = (clusters,) if isinstance(clusters, str) else tuple(clusters or ())
    codes = cluster_codes(meta, cluster_columns)
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

    frame = pd.DataFrame(columns, index=pd.Index(ids, name="context_id"))
    if meta is not None:
        clash = [c for c in meta.columns if c in frame.columns]
        if clash:
            raise ValueError(f"metadata columns clash with measure names: {', '.join(map(str, clash))}")
        frame = frame.join(meta)

    if n_resamples == 0:  # means only (e.g. a chance level logged every training check)
        intervals = {name: (float("nan"), float("nan")) for name in columns}
    else:
        # Contexts with equal codes have the same pair of responses at both levels, so equal
        # scores under every measure: the resampling depends on the responses, not on which
        # measures were asked for.
        groups = np.zeros(len(ids), dtype=np.int64)
        b_ids = None if b.ids == a.ids else ids
        for level, pick in (("action", Responses.actions), ("text", Responses.texts)):
            if level in factorised:
                part = factorised[level][3]
            else:
                left, right = pick(a), pick(b, b_ids)
                if left.count(None) == len(left) and right.count(None) == len(right):
                    continue  # one code for every context: the groups stay as they are
                part = unique_pairs(left, right)[3]
            # re-compact so the codes never overflow
            groups = np.unique(groups * (int(part.max(initial=0)) + 1) + part, return_inverse=True)[1].reshape(-1)
        intervals = bootstrap_ci_shared(columns, groups, n_resamples=n_resamples, confidence=confidence, seed=seed,
                                        clusters=codes)
    rows = {}
    for name, column in columns.items():
        valid = column[~np.isnan(column)]
        rows[name] = {
            "mean": float(valid.mean()) if len(valid) else float("nan"),
            "count": int(len(valid)),
            "missing": int(len(column) - len(valid)),
            "ci_low": intervals[name][0],
            "ci_high": intervals[name][1],
        }
    summary = pd.DataFrame.from_dict(rows, orient="index", columns=_SUMMARY_COLUMNS)
    summary.index.name = "measure"
    info = {
        "a_provenance": dict(a.provenance),
        "b_provenance": dict(b.provenance),
        "seed": seed,
        "n_resamples": n_resamples,
        "confidence": confidence,
    }
    if cluster_columns:
        info["clusters"] = list(cluster_columns)
    return Comparison(
        scores=frame,
        summary=summary,
        signatures={m.name: m.signature() for m in resolved},
        a=a.policy,
        b=b.policy,
        info=info,
    )
