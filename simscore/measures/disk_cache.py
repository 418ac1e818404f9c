"""An on-disk cache of the text measures' embeddings, shared by runs, stages and processes.

Embedding the texts is most of what a text measure costs (the demo: 6,548 texts, 25 s of its
71 s), and the texts of a comparison come back: a re-run of an experiment, another stage of
the same run, ``simscore compare`` on files scored before. A text measure given a cache
folder -- the ``cache_dir`` option of ``use_cos``, ``use_ang``, ``bertscore``, ``emb_cos`` and
``emb_ang`` (``simscore compare --cache-dir DIR``); an experiment uses
``<out>/cache/embeddings`` -- keeps there every embedding it computes and reads it back instead
of embedding the text again, in this process, a later one, or another one at the same time.

**Key.** What determines an embedding -- the encoder's part of the signature for ``use_*`` and
``emb_*`` (their cosine and angular measures share it), the whole signature for ``bertscore``
(:meth:`~simscore.measures.base.Measure.signature`: package versions, model and its digest,
layer, idf, long-text rule, device, dtype) -- and the text (its SHA-256). The folder is in no
signature: the cache cannot change a number. It returns the very arrays the model computed,
bit for bit, and a score is computed from them exactly as from fresh ones; a text is read
from the cache or embedded whole, never in part. A text that a long-text rule cut when it was
embedded is not counted or warned about again when its embedding comes from the cache (the
signature names the rule).

**Layout** (format version :data:`VERSION`)::

    <cache_dir>/v1/<SHA-256 of the signature, 32 hex digits>/
        signature.json    {"format": "simscore-embedding-cache", "version": 1, "signature": "..."}
        <SHA-256 of the file's bytes, 32 hex digits>.npz
                          one shard: the texts one call embedded, as .npy arrays (read with
                          allow_pickle=False): "keys" (n, 32) uint8, the SHA-256 of each text
                          (sorted); per array of an entry, "a<i>" (its rows of every text, one
                          text after the other) and "n<i>" (n,) int64 (each text's rows)

**Safety.** Every file is written atomically (:func:`simscore.io.atomic_open`: a killed write
leaves a temporary file, which is never read). A shard's name is the SHA-256 of its bytes,
checked on every read, so a torn or altered shard is never used: it is deleted with a log
line and its texts are embedded again. Shards are written with fixed zip timestamps, so the
same embeddings make the same bytes and the same name: two processes that store the same
texts at once write the same file; others write other files, and a shard removed by another
process while this one looks for it is a cache miss. Another format version lives in its own
folder (``v2/``, ...) and is never read, written or evicted by this one; a ``signature.json``
of another format, version or signature makes its folder ignored (one log line).

**Bound.** After each write, the least recently used shards of the version folder (by
modification time, which every read refreshes) are deleted until all its shards together
take at most :data:`MAX_BYTES` (a module attribute read at each write, so a program may raise
or lower it); a shard larger than the bound alone is not written. A signature folder with
more than :data:`MAX_SHARDS` shards (many small calls, e.g. a monitor inside a training loop)
has them merged into one.

Examples
--------
>>> import tempfile
>>> cache = EmbeddingCache(tempfile.mkdtemp())
>>> cache.put("demo|model:x", {"hello": (np.array([0.6, 0.8], dtype=np.float32),)})
>>> found = cache.get("demo|model:x", ["hello", "unseen"], (np.float32,))
>>> list(found), found["hello"][0]
(['hello'], array([0.6, 0.8], dtype=float32))
>>> cache.get("demo|model:y", ["hello"], (np.float32,))  # another signature: nothing
{}
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import threading
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simscore.errors import TextMeasureError
from simscore.io import atomic_open, atomic_write_text, dumps, format_problem, read_bytes, read_json

__all__ = ["EmbeddingCache", "FORMAT", "VERSION", "MAX_BYTES", "MAX_SHARDS", "text_key", "check_cache_dir"]

logger = logging.getLogger(__name__)

#: The ``format`` of ``signature.json``.
FORMAT = "simscore-embedding-cache"
#: The format version this simscore reads and writes (also the name of its folder, ``v1``).
VERSION = 1
#: Most bytes of shards in one cache folder (every signature together): 4 GiB, about 110,000
#: texts of BERTScore token embeddings on MiniLM (the demo stores its 6,548 texts in 0.26 GB:
#: 250 MB of BERTScore token embeddings, 14 MB of USE vectors).
MAX_BYTES = 4 * 2**30
#: Most shards in one signature folder before they are merged into one.
MAX_SHARDS = 64

#: One text's arrays, as the measure stores them (e.g. a sentence vector; token embeddings and weights).
Entry = tuple[np.ndarray, ...]

_KEY_BYTES = 32
_NAME_DIGITS = 32
_SUFFIX = ".npz"
_SIGNATURE_FILE = "signature.json"
_SIGNATURE_LIMIT = 2**20
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def text_key(text: str) -> bytes:
    """The SHA-256 of a text's UTF-8 bytes (lone surrogates kept as they are), its key in the cache.

    >>> text_key("hello").hex()[:16]
    '2cf24dba5fb0a30e'
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def check_cache_dir(cache_dir: Any) -> Path:
    """``cache_dir`` as a path, checked before any work: a path that is not an existing file.

    >>> check_cache_dir(__file__)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simscore.errors.TextMeasureError: cache_dir: '...disk_cache.py' exists and is not a folder
    """
    if not isinstance(cache_dir, (str, os.PathLike)) or not os.fspath(cache_dir):
        raise TextMeasureError(f"cache_dir must be a folder path, got {cache_dir!r:.80}")
    path = Path(cache_dir)
    if path.exists() and not path.is_dir():
        raise TextMeasureError(f"cache_dir: {str(path)!r} exists and is not a folder")
    return path


def _is_shard(name: str) -> bool:
    stem = name[: -len(_SUFFIX)]
    return name.endswith(_SUFFIX) and len(stem) == _NAME_DIGITS and all(c in "0123456789abcdef" for c in stem)


def _shard_bytes(keys: np.ndarray, arrays: Sequence[np.ndarray], counts: Sequence[np.ndarray]) -> bytes:
    """A shard as ``.npz`` bytes: the same arrays always give the same bytes (fixed zip timestamps)."""
    members = [("keys", keys)]
    for i, (array, count) in enumerate(zip(arrays, counts, strict=True)):
        members += [(f"a{i}", array), (f"n{i}", count)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, array in members:
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
            info.external_attr = 0o644 << 16
            with archive.open(info, "w", force_zip64=True) as handle:
                np.lib.format.write_array(handle, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _parse_shard(data: bytes, dtypes: Sequence[np.dtype[Any]]) -> dict[bytes, Entry]:
    """The entries of a shard's bytes; ValueError when they are not a shard of ``dtypes``."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"not an .npz of arrays ({exc})") from None
    expected = {"keys", *(f"{p}{i}" for i in range(len(dtypes)) for p in "an")}
    if set(arrays) != expected:
        raise ValueError(f"holds {sorted(arrays)}, expected {sorted(expected)}")
    keys = arrays["keys"]
    if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != _KEY_BYTES:
        raise ValueError(f"keys: {keys.dtype} {keys.shape}, expected uint8 (n, {_KEY_BYTES})")
    columns = []
    for i, dtype in enumerate(dtypes):
        array, count = arrays[f"a{i}"], arrays[f"n{i}"]
        if array.dtype != np.dtype(dtype) or array.ndim < 1:
            raise ValueError(f"a{i}: {array.dtype} {array.shape}, expected {np.dtype(dtype)} rows")
        if count.dtype != np.int64 or count.shape != (len(keys),) or (count < 0).any() \
                or int(count.sum()) != array.shape[0]:
            raise ValueError(f"n{i} does not count the rows of a{i} per text")
        starts = np.concatenate([[0], np.cumsum(count)])
        columns.append([array[starts[k] : starts[k + 1]].copy() for k in range(len(keys))])
    return {bytes(key): tuple(column[k] for column in columns) for k, key in enumerate(keys)}


class EmbeddingCache:
    """A cache folder of embeddings (module docstring): :meth:`get` and :meth:`put` by signature and text.

    Parameters
    ----------
    root : path-like
        The cache folder (created on the first write). Nothing is read on construction.

    Thread-safe; processes share the folder safely (module docstring). Sent to another
    process (joblib, Dask) it carries its folder only.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        #: per signature folder: text key -> name of the shard that holds it
        self._index: dict[str, dict[bytes, str]] = {}
        #: per signature folder: the shards already indexed
        self._indexed: dict[str, set[str]] = {}
        self._ignored: set[str] = set()
        self._unwritable = False

    def __getstate__(self) -> dict[str, Any]:
        return {"root": self.root}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["root"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.root)!r})"

    @property
    def folder(self) -> Path:
        """The folder of this format version, ``<root>/v1``."""
        return self.root / f"v{VERSION}"

    def signature_folder(self, signature: str) -> Path:
        """The folder of one signature's shards."""
        return self.folder / hashlib.sha256(signature.encode("utf-8", "surrogatepass")).hexdigest()[:_NAME_DIGITS]

    def get(self, signature: str, texts: Sequence[str], dtypes: Sequence[Any]) -> dict[str, Entry]:
        """The stored entries of those ``texts`` that the cache holds for ``signature``.

        Parameters
        ----------
        signature : str
            What determines the embeddings.
        texts : sequence of str
        dtypes : sequence of dtype
            The dtype of each array of an entry; a shard that holds others is not used.

        Returns
        -------
        dict
            Text -> its arrays (copies, owned by the caller), for the texts found.
        """
        folder = self.signature_folder(signature)
        wanted = {text_key(text): text for text in texts}
        found: dict[str, Entry] = {}
        dtypes = tuple(np.dtype(d) for d in dtypes)
        with self._lock:
            if not wanted or not self._usable(folder, signature, create=False):
                return found
            index, indexed = self._index.setdefault(folder.name, {}), self._indexed.setdefault(folder.name, set())
            present = self._listing(folder)
            for gone in indexed - present:  # removed by another process (evicted, merged)
                indexed.discard(gone)
            for key in [k for k, name in index.items() if name not in present]:
                del index[key]
            todo = sorted({index[k] for k in wanted if k in index} | (present - indexed))
            for name in todo:
                entries = self._read(folder / name, dtypes)
                if entries is None:
                    continue
                indexed.add(name)
                for key, entry in entries.items():
                    index.setdefault(key, name)
                    if key in wanted and wanted[key] not in found:
                        found[wanted[key]] = entry
        return found

    def put(self, signature: str, entries: Mapping[str, Entry]) -> None:
        """Store ``entries`` (text -> its arrays, every text with the same dtypes) as one shard, then keep the bound."""
        if not entries:
            return
        folder = self.signature_folder(signature)
        keyed = sorted((text_key(text), tuple(np.asarray(a) for a in entry)) for text, entry in entries.items())
        width = {len(entry) for _, entry in keyed}
        if len(width) != 1:
            raise ValueError("every entry must hold the same number of arrays")
        keys = np.frombuffer(b"".join(k for k, _ in keyed), dtype=np.uint8).reshape(len(keyed), _KEY_BYTES)
        arrays, counts = [], []
        for i in range(width.pop()):
            parts = [np.atleast_1d(entry[i]) for _, entry in keyed]
            if len({p.dtype for p in parts}) != 1:
                raise ValueError(f"array {i} of the entries has several dtypes: {sorted({str(p.dtype) for p in parts})}")
            arrays.append(np.concatenate(parts))
            counts.append(np.array([len(p) for p in parts], dtype=np.int64))
        data = _shard_bytes(keys, arrays, counts)
        with self._lock:
            if self._unwritable:
                return
            try:
                self._store(folder, signature, data, [k for k, _ in keyed], [a.dtype for a in arrays])
            except OSError as exc:  # a read-only cache still serves what it holds
                self._unwritable = True
                logger.warning("embedding cache %s: cannot write (%s); it is only read from now on", self.root, exc)

    # -- inside the lock ------------------------------------------------------------------

    def _store(self, folder: Path, signature: str, data: bytes, keys: list[bytes],
               dtypes: Sequence[np.dtype[Any]]) -> None:
        if not self._usable(folder, signature, create=True):
            return
        name = self._write(folder, data)
        if name is None:
            return
        index = self._index.setdefault(folder.name, {})
        for key in keys:
            index.setdefault(key, name)
        self._indexed.setdefault(folder.name, set()).add(name)
        if len(self._listing(folder)) > MAX_SHARDS:
            self._merge(folder, dtypes)
        self._evict(keep=folder / name)

    def _usable(self, folder: Path, signature: str, *, create: bool) -> bool:
        """Whether ``folder`` is this signature's, in this format; created (its ``signature.json``) if asked."""
        if folder.name in self._ignored:
            return False
        path = folder / _SIGNATURE_FILE
        if not path.exists():
            if not create:
                return False
            atomic_write_text(path, dumps({"format": FORMAT, "version": VERSION, "signature": signature}) + "\n")
            return True
        try:
            document = read_json(path, limit=_SIGNATURE_LIMIT)
        except (OSError, ValueError) as exc:
            return self._ignore(folder, f"unreadable {_SIGNATURE_FILE} ({exc})")
        problem = format_problem(document, FORMAT, (VERSION,))
        if problem is None and document.get("signature") != signature:
            problem = "it names another signature"
        return True if problem is None else self._ignore(folder, problem)

    def _ignore(self, folder: Path, why: str) -> bool:
        self._ignored.add(folder.name)
        logger.warning("embedding cache %s ignored: %s", folder, why)
        return False

    @staticmethod
    def _listing(folder: Path) -> set[str]:
        try:
            return {entry.name for entry in os.scandir(folder) if _is_shard(entry.name)}
        except FileNotFoundError:
            return set()

    def _read(self, path: Path, dtypes: Sequence[np.dtype[Any]]) -> dict[bytes, Entry] | None:
        """A shard's entries, checked against its name; None (and the shard deleted) if it fails."""
        try:
            data = read_bytes(path)
        except (OSError, ValueError) as exc:
            if path.exists():  # else removed meanwhile by another process: a miss
                logger.warning("embedding cache: cannot read %s (%s); its texts are embedded again", path, exc)
            return None
        try:
            if hashlib.sha256(data).hexdigest()[:_NAME_DIGITS] != path.name[:_NAME_DIGITS]:
                raise ValueError("its content does not match its name (torn or altered)")
            entries = _parse_shard(data, dtypes)
        except ValueError as exc:
            logger.warning("embedding cache: %s is damaged: %s; deleted, its texts are embedded again", path, exc)
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be evicted
        return entries

    def _write(self, folder: Path, data: bytes) -> str | None:
        """Write one shard's bytes under their digest (refreshed if present); its name, or None if too big."""
        if len(data) > MAX_BYTES:
            logger.info("embedding cache: a shard of %d bytes exceeds the cache's bound (%d); not stored",
                        len(data), MAX_BYTES)
            return None
        name = hashlib.sha256(data).hexdigest()[:_NAME_DIGITS] + _SUFFIX
        path = folder / name
        try:
            os.utime(path)  # the same shard already stored (by this or another process)
        except FileNotFoundError:
            with atomic_open(path, "wb") as handle:
                handle.write(data)
        return name

    def _merge(self, folder: Path, dtypes: Sequence[np.dtype[Any]]) -> None:
        """Merge every shard of ``folder`` into one (the first shard that holds a text gives its entry)."""
        names = sorted(self._listing(folder))
        merged: dict[bytes, Entry] = {}
        for name in names:
            for key, entry in (self._read(folder / name, dtypes) or {}).items():
                merged.setdefault(key, entry)
        if not merged:
            return
        keys = sorted(merged)
        arrays = [np.concatenate([np.atleast_1d(merged[k][i]) for k in keys]) for i in range(len(dtypes))]
        counts = [np.array([len(np.atleast_1d(merged[k][i])) for k in keys], dtype=np.int64) for i in range(len(dtypes))]
        raw = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), _KEY_BYTES)
        written = self._write(folder, _shard_bytes(raw, arrays, counts))
        if written is None:
            return
        for old in names:
            if old != written:
                with contextlib.suppress(FileNotFoundError):
                    (folder / old).unlink()
        self._index[folder.name] = dict.fromkeys(keys, written)
        self._indexed[folder.name] = {written}

    def _evict(self, keep: Path) -> None:
        """Delete the least recently used shards of the version folder until they fit :data:`MAX_BYTES`."""
        shards = []
        with contextlib.suppress(FileNotFoundError):
            for folder in os.scandir(self.folder):
                if not folder.is_dir(follow_symlinks=False):
                    continue
                for name in self._listing(Path(folder.path)):
                    with contextlib.suppress(FileNotFoundError):
                        info = os.stat(Path(folder.path) / name)
                        shards.append((info.st_mtime_ns, Path(folder.path) / name, info.st_size))
        total = sum(size for _, _, size in shards)
        for _, path, size in sorted(shards):
            if total <= MAX_BYTES:
                break
            if path == keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            total -= size
            index = self._index.get(path.parent.name, {})
            for key in [k for k, name in index.items() if name == path.name]:
                del index[key]
            self._indexed.get(path.parent.name, set()).discard(path.name)
