"""The measure interface shared by the action and text measures.

A measure is a small configured object: ``name``, ``level`` (``"action"`` or ``"text"``),
``higher_is_better``, ``bounds`` (documented range of one per-context score), ``symmetric``,
``signature()`` and ``score_pairs(a, b) -> np.ndarray``. Scoring never changes what a measure
computes; caches that cannot change a result are allowed.

Both levels share one rule of work: a comparison has few distinct inputs, so each measure
scores each distinct pair once (:func:`unique_pairs`) and broadcasts the result.
"""

from __future__ import annotations

import abc
import functools
import importlib.metadata
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from simscore.errors import InvalidResponseError, MissingValueWarning
from simscore.measures.options import MeasureOption

__all__ = ["Measure", "PairwiseMeasure", "unique_pairs", "check_pair_lengths", "warn_missing", "dist_version"]


@runtime_checkable
class Measure(Protocol):
    """What every registered measure provides."""

    name: str
    level: Literal["action", "text"]
    higher_is_better: bool
    symmetric: bool
    bounds: tuple[float, float]

    def signature(self) -> str:
        """Everything that determines the numbers: versions, model, layer, options."""
        ...

    def score_pairs(self, a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
        """Score pair ``(a[i], b[i])`` for every ``i``; float64 array of ``len(a)``.

        A pair with a missing input (None: an action measure on a text-only response, or a
        text measure on an action-only one) scores NaN, with a :class:`MissingValueWarning`.
        """
        ...


@functools.lru_cache(maxsize=256)
def dist_version(*names: str) -> str:
    """Installed version of the first distribution found among ``names``, else ``"unknown"``.

    Cached (at most 256 name tuples): reading package metadata costs about a millisecond,
    and signatures are built for every comparison.
    """
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def check_pair_lengths(name: str, a: Sequence[Any], b: Sequence[Any]) -> None:
    """Raise if the two sides of a pairwise scoring differ in length."""
    if len(a) != len(b):
        raise InvalidResponseError(
            f"{name}: a and b must have the same length, got {len(a)} and {len(b)}"
        )


def unique_pairs(
    a: Sequence[Any], b: Sequence[Any]
) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
    """Factorise two aligned sequences of hashables into distinct values and distinct pairs.

    Returns
    -------
    values : list
        Distinct values over both sides (None included if present).
    pair_a, pair_b : ndarray of int, shape (n_unique_pairs,)
        Indices into ``values`` of each distinct pair.
    inverse : ndarray of int, shape (len(a),)
        For every input position, the index of its distinct pair.

    Examples
    --------
    >>> values, pa, pb, inv = unique_pairs(["x", "y", "x"], ["y", "y", "y"])
    >>> [(values[i], values[j]) for i, j in zip(pa, pb)], inv.tolist()
    ([('x', 'y'), ('y', 'y')], [0, 1, 0])
    """
    n = len(a)
    both = list(a)
    both.extend(b)
    # Factorise by object identity first (C speed; responses read from files or produced by
    # a policy share their objects), then by value over the few distinct objects only.
    identity = np.fromiter(map(id, both), dtype=np.uint64, count=2 * n)
    id_codes, id_uniques = pd.factorize(identity)
    first = np.empty(len(id_uniques), dtype=np.int64)
    first[id_codes[::-1]] = np.arange(2 * n - 1, -1, -1)
    objects = np.empty(len(first), dtype=object)
    objects[:] = [both[i] for i in first]
    value_codes, uniques = pd.factorize(objects, use_na_sentinel=False)
    codes = value_codes.astype(np.int64, copy=False)[id_codes]
    k = max(len(uniques), 1)
    keys = codes[:n] * k + codes[n:]
    distinct, inverse = np.unique(keys, return_inverse=True)
    # pandas turns None into NaN; inputs are Acts or strings, so a float NaN was a None.
    values = [None if isinstance(v, float) and v != v else v for v in uniques]
    return values, distinct // k, distinct % k, inverse.reshape(-1)


def warn_missing(name: str, count: int, what: str, *, stacklevel: int = 2) -> None:
    """Warn that ``count`` pairs scored NaN because one side had no ``what`` (``stacklevel`` as the caller's own)."""
    if count:
        warnings.warn(
            f"{name}: {count} pair(s) have no {what} on at least one side; scored NaN",
            MissingValueWarning,
            stacklevel=stacklevel + 1,
        )


class PairwiseMeasure(abc.ABC):
    """Base class doing the shared work: factorise, score each distinct pair once, broadcast.

    Subclasses set the class attributes of :class:`Measure` and implement
    :meth:`_score_distinct`, which only ever sees pairs with both sides present.
    ``compare`` factorises a comparison once per level and calls :meth:`score_distinct`
    for every measure of that level, so the factorisation is shared.
    """

    name: str = ""
    level: Literal["action", "text"] = "action"
    higher_is_better: bool = True
    symmetric: bool = True
    bounds: tuple[float, float] = (0.0, 1.0)
    #: what a None input is missing, for the warning ("action" or "text")
    _missing_what: str = "value"
    #: the options :meth:`from_options` takes (see :mod:`simscore.measures.options`)
    options: ClassVar[Mapping[str, MeasureOption]] = {}

    @classmethod
    def from_options(cls, options: Mapping[str, Any], shared: dict[Any, Any]) -> PairwiseMeasure:
        """The measure configured with ``options`` (names from :attr:`options`, already checked).

        ``shared`` is one dictionary per :func:`~simscore.measures.resolve_measures` call, where
        measures configured alike can share a model (``use_cos`` and ``use_ang`` share their
        encoder). By default the options are the constructor's keyword arguments.
        """
        return cls(**options)

    @abc.abstractmethod
    def signature(self) -> str:
        """Everything that determines the numbers: versions, model, layer, options."""

    @abc.abstractmethod
    def _score_distinct(self, left: list[Any], right: list[Any]) -> np.ndarray:
        """Scores of the pairs ``(left[k], right[k])``; neither side is None."""

    def _check_value(self, value: Any) -> None:  # noqa: B027 - optional hook, no check by default
        """Raise if a (non-None) input has the wrong type; called once per distinct input."""

    def score_distinct(self, values: list[Any], pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
        """Scores of pairs given as indices into ``values`` (distinct values, as from
        :func:`unique_pairs`); NaN where a side is None."""
        out = np.full(len(pair_a), np.nan)
        for value in values:
            if value is not None:
                self._check_value(value)
        present = np.array([v is not None for v in values], dtype=bool)
        ok = present[pair_a] & present[pair_b] if len(values) else np.zeros(0, dtype=bool)
        if ok.any():
            idx = np.flatnonzero(ok)
            out[idx] = self._score_indexed(values, pair_a[idx], pair_b[idx])
        return out

    def _score_indexed(self, values: list[Any], pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
        """Scores of the pairs ``(values[pair_a[k]], values[pair_b[k]])``, none of them None.

        The values are distinct, so a measure that only needs equality can work on the
        indices; by default the pairs are handed to :meth:`_score_distinct`.
        """
        return self._score_distinct([values[i] for i in pair_a], [values[j] for j in pair_b])

    def _factorise(self, a: Sequence[Any], b: Sequence[Any]) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
        """:func:`unique_pairs` of the inputs (a measure may convert unhashable inputs first)."""
        return unique_pairs(a, b)

    def score_pairs(self, a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
        """Score pair ``(a[i], b[i])`` for every ``i``: float64 array of ``len(a)``."""
        check_pair_lengths(self.name, a, b)
        if len(a) == 0:
            return np.zeros(0)
        values, pair_a, pair_b, inverse = self._factorise(a, b)
        scores = self.score_distinct(values, pair_a, pair_b)[inverse]
        warn_missing(self.name, int(np.isnan(scores).sum()), self._missing_what)
        return scores

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature()}>"
