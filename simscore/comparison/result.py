"""The result of :func:`~simscore.comparison.compare`: :class:`Comparison` and its typed :class:`ComparisonInfo`.

Scores per context, the summary per measure, the signatures, where the numbers come from, and
the saved comparison's format (:meth:`Comparison.write_json`, :meth:`Comparison.save`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore._version import __version__
from simscore.io import atomic_open, prepare_output
from simscore.io.formats import COMPARISON_FORMAT
from simscore.io.output import json_records
from simscore.io.untrusted import spreadsheet_frame
from simscore.stats import Bootstrap, format_interval
from simscore.stats.consistency import Consistency

if TYPE_CHECKING:
    from simscore.stats.strata import StratifiedComparison

__all__ = ["Comparison", "ComparisonInfo", "COMPARISON_VERSION", "JSON_CHUNK", "SUMMARY_COLUMNS"]

SUMMARY_COLUMNS = ["mean", "count", "missing", "ci_low", "ci_high"]

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
            yield from json_records(chunk.reset_index())


@dataclass(frozen=True)
class ComparisonInfo:
    """Where a comparison's numbers come from: both sides, the bootstrap and its units, the inputs.

    Attributes
    ----------
    a_provenance, b_provenance : dict
        Each side's provenance (checkpoint, seed, reward, ...), as its responses carry it.
    bootstrap : Bootstrap or None
        The interval's settings (None: a comparison file saved without them).
    clusters : tuple of str
        The metadata columns whose values named the bootstrap's units (empty: contexts).
    unit : str or None
        What a unit is (``contexts``, ``dialogues`` or ``clusters``); None in a file saved
        before the units were recorded, as ``units``.
    units : int or None
        How many units the intervals resampled.
    inputs : dict or None
        One response per context: what the comparison was made from, per side ``a`` and ``b``
        (:func:`input_record`, checked by :func:`check_inputs`).
    samples, n_permutations : int or None
        Sampled responses: samples per context (K) and the permutation test's relabellings.
    """

    a_provenance: dict[str, Any] = field(default_factory=dict)
    b_provenance: dict[str, Any] = field(default_factory=dict)
    bootstrap: Bootstrap | None = None
    clusters: tuple[str, ...] = ()
    unit: str | None = None
    units: int | None = None
    inputs: dict[str, Any] | None = None
    samples: int | None = None
    n_permutations: int | None = None

    @property
    def confidence(self) -> float:
        """The intervals' coverage (0.95 where a file did not record it)."""
        return 0.95 if self.bootstrap is None else self.bootstrap.confidence

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, as a saved comparison's ``info`` holds them (keys in the file's order)."""
        out: dict[str, Any] = {"a_provenance": dict(self.a_provenance), "b_provenance": dict(self.b_provenance)}
        if self.bootstrap is not None:
            out.update(seed=self.bootstrap.seed, n_resamples=self.bootstrap.n_resamples,
                       confidence=self.bootstrap.confidence)
        if self.unit is not None:
            out.update(clusters=list(self.clusters), unit=self.unit, units=self.units)
        for name in ("inputs", "samples", "n_permutations"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_dict(cls, info: Mapping[str, Any]) -> ComparisonInfo:
        """The ``info`` of a saved comparison (any version; what it lacks stays None), checked.

        >>> ComparisonInfo.from_dict({"seed": 3, "n_resamples": 10, "confidence": 0.9}).bootstrap
        Bootstrap(n_resamples=10, confidence=0.9, seed=3)
        >>> ComparisonInfo.from_dict({"units": "many"})
        Traceback (most recent call last):
        ...
        ValueError: info: units must be a whole number, got 'many'
        """
        if not isinstance(info, Mapping):
            raise ValueError(f"info must be an object, got {type(info).__name__}")
        settings = {key: info[key] for key in ("n_resamples", "confidence", "seed") if key in info}
        try:
            bootstrap = Bootstrap.from_mapping(settings) if settings else None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"info: {exc}") from None
        for key in ("units", "samples", "n_permutations"):
            value = info.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"info: {key} must be a whole number, got {value!r}")
        for key in ("a_provenance", "b_provenance", "inputs"):
            if info.get(key) is not None and not isinstance(info[key], Mapping):
                raise ValueError(f"info: {key} must be an object, got {type(info[key]).__name__}")
        clusters = info.get("clusters") or ()
        if not isinstance(clusters, (list, tuple)) or not all(isinstance(c, str) for c in clusters):
            raise ValueError(f"info: clusters must be a list of column names, got {clusters!r}")
        unit = info.get("unit")
        if unit is not None and not isinstance(unit, str):
            raise ValueError(f"info: unit must be a string, got {unit!r}")
        return cls(a_provenance=dict(info.get("a_provenance") or {}), b_provenance=dict(info.get("b_provenance") or {}),
                   bootstrap=bootstrap, clusters=tuple(clusters), unit=unit if "units" in info else None,
                   units=info.get("units"), inputs=None if info.get("inputs") is None else dict(info["inputs"]),
                   samples=info.get("samples"), n_permutations=info.get("n_permutations"))


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
    info : ComparisonInfo
        Provenance of both sides, the bootstrap's settings and units, and what the comparison
        was made from (:class:`ComparisonInfo`; saved as ``info`` by :meth:`ComparisonInfo.to_dict`).
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
    info: ComparisonInfo = field(default_factory=ComparisonInfo)
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

        >>> from simscore import Act, Response, Responses, compare
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
            name: {col: _json_number(row[col]) for col in SUMMARY_COLUMNS}
            for name, row in self.summary.iterrows()
        }
        return {
            "format": COMPARISON_FORMAT,
            "version": COMPARISON_VERSION,
            "simscore": __version__,
            "a": self.a,
            "b": self.b,
            "info": self.info.to_dict(),
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

    def write_csv(self, handle: IO[str]) -> None:
        """Write the per-context scores as CSV to an open text file, every number as it is.

        Each float is written as the shortest decimal that reads back as the same float (2/3 is
        ``0.6666666666666666``), as JSON writes it; text cells that a spreadsheet would run are
        made inert (:func:`~simscore.io.untrusted.spreadsheet_frame`).

        >>> import io, pandas as pd
        >>> c = Comparison(pd.DataFrame({"tmr": [2 / 3]}, index=pd.Index(["c1"], name="context_id")), pd.DataFrame(), {})
        >>> out = io.StringIO(); c.write_csv(out); print(out.getvalue(), end="")
        context_id,tmr
        c1,0.6666666666666666
        """
        spreadsheet_frame(self.scores).to_csv(handle, lineterminator="\n")

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write per-context scores as ``.csv`` (:meth:`write_csv`) or everything as ``.json`` (:meth:`write_json`), atomically.

        An existing file is replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise).
        """
        suffix = os.fspath(path).rsplit(".", 1)[-1].lower()
        if suffix not in ("csv", "json"):
            raise ValueError(f"output path must end in .csv or .json, got {os.fspath(path)!r}")
        prepare_output(path, overwrite=overwrite)
        with atomic_open(path, "w") as handle:
            if suffix == "csv":
                self.write_csv(handle)
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
        ci_head = f"{self.info.confidence:.0%} CI"
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
        info = self.info
        if info.units is None or info.unit is None:
            return None
        if info.bootstrap is not None and info.bootstrap.n_resamples == 0:
            return "no intervals (0 bootstrap resamples)"
        by = f" (by {', '.join(info.clusters)})" if info.clusters else ""
        units = f"{info.units} {info.unit[:-1] if info.units == 1 else info.unit}"
        return f"{info.confidence:.0%} CI: percentile bootstrap, {units} resampled{by}"


def _json_number(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


