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

    <cache_dir>/v2/<SHA-256 of the signature, 32 hex digits>/
        signature.json    {"format": "simscore-embedding-cache", "version": 2, "signature": "..."}
        <SHA-256 of the file's bytes, 32 hex digits>.npz
                          one shard: the texts one call embedded, a zip of stored (not
                          compressed) members, in this order:
                          "shard.json" {"format": "simscore-embedding-cache", "version": 2,
                          "signature": the whole signature, "arrays": {name: [dtype, shape]}}
                          (every array that follows, its dtype as numpy spells it: "<f4");
                          then .npy arrays: "keys" (n, 32) uint8, the SHA-256 of each text
                          (sorted); per array of an entry, "a<i>" (its rows of every text, one
                          text after the other) and "n<i>" (n,) int64 (each text's rows)

**Safety.** Every file is written atomically (:func:`simscore.io.atomic_open`: a killed write
leaves a temporary file, which is never read). A shard is used only after every check, made
before anything is inflated or allocated:

- it is a regular file, opened without following a link or waiting on a FIFO
  (``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``), of at most :data:`MAX_BYTES` bytes (a larger
  one, left by a bound since lowered, is not read: the next write evicts it), read once;
- its name is the SHA-256 of its bytes (integrity: a torn or altered shard is never used);
- its ``shard.json`` records this folder's whole signature (origin: a shard copied from
  another signature's folder is not used) and, for every array, the dtype the caller asks for
  and a shape that agrees with the others;
- every member is stored, not compressed, and declares in the zip directory no more bytes
  than the shard has; every ``.npy`` header (read with ``read_magic`` and
  ``read_array_header_*``, no pickle) names the recorded dtype and shape, and its member holds
  exactly the bytes they take -- so nothing is allocated that the file does not hold, and
  every member is read up to its declared size only, its CRC checked.

A shard that fails a check gets one :class:`~simscore.errors.CacheShardWarning` naming it and
why, and is set aside: a regular file is deleted, anything else named like a shard (a FIFO, a
link, a folder) is renamed ``<name>.bad``; its texts are embedded again, so no number changes.
A shard that cannot be opened (no permission) is warned about once and skipped.

What the checks cannot do: whoever can write the cache folder can write a shard that passes
them all -- the right signature, consistent shapes, the name of its own digest -- holding
other numbers. The digest proves integrity and ``shard.json`` proves the signature it
records, not who wrote it: the folder must be as trusted as the outputs it feeds (keep it
writable by the user who runs simscore only).

Shards are written with fixed zip timestamps, so the same embeddings make the same bytes and
the same name: two processes that store the same texts at once write the same file; others
write other files, and a shard removed by another process while this one looks for it is a
cache miss. Another format version lives in its own folder (``v1/``, ``v3/``, ...) and is
never read, written or evicted by this one; a ``signature.json`` of another format, version
or signature, or one that is not a regular file, makes its folder ignored (one log line).

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
import errno
import hashlib
import io
import logging
import math
import os
import stat
import threading
import tokenize
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from simscore.errors import CacheShardWarning, TextMeasureError
from simscore.io import atomic_open, atomic_write_text, dumps, format_problem
from simscore.io.reading import parse_json

__all__ = ["EmbeddingCache", "FORMAT", "VERSION", "MAX_BYTES", "MAX_SHARDS", "text_key", "check_cache_dir"]

logger = logging.getLogger(__name__)

#: The ``format`` of ``signature.json`` and of each shard's ``shard.json``.
FORMAT = "simscore-embedding-cache"
#: The format version this simscore reads and writes (also the name of its folder, ``v2``).
VERSION = 2
#: Most bytes of shards in one cache folder (every signature together): 4 GiB, about 110,000
#: texts of BERTScore token embeddings on MiniLM (the demo stores its 6,548 texts in 0.26 GB:
#: 250 MB of BERTScore token embeddings, 14 MB of USE vectors). Also the most a shard may hold.
MAX_BYTES = 4 * 2**30
#: Most shards in one signature folder before they are merged into one.
MAX_SHARDS = 64

#: One text's arrays, as the measure stores them (e.g. a sentence vector; token embeddings and weights).
Entry = tuple[np.ndarray, ...]

_KEY_BYTES = 32
_NAME_DIGITS = 32
_SUFFIX = ".npz"
_SET_ASIDE = ".bad"
_SIGNATURE_FILE = "signature.json"
_HEADER = "shard.json"
_SIGNATURE_LIMIT = 2**20
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISLNK, "a symbolic link"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
#: What reading a hostile zip or .npy header can raise (numpy reads a header as a Python literal).
_DAMAGE = (OSError, ValueError, EOFError, OverflowError, NotImplementedError, SyntaxError, RecursionError,
           tokenize.TokenError, zipfile.BadZipFile, zipfile.LargeZipFile)


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


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read (what it is), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((f"is {kind}, not a regular file" for test, kind in _KINDS if test(mode)), "is not a regular file")


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes, read once.

    Never follows a link or waits on a FIFO (``O_NOFOLLOW | O_NONBLOCK``), and reads a device
    or a folder not at all (``lstat`` before the open, ``fstat`` after it). ValueError saying
    what the path is when it is not such a file; OSError when it cannot be opened
    (FileNotFoundError when it is gone).
    """
    reason = _not_regular(os.lstat(path).st_mode)
    if reason is not None:
        raise ValueError(reason)
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since the lstat
            raise ValueError("is a symbolic link, not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        reason = _not_regular(info.st_mode)
        if reason is not None:
            raise ValueError(reason)
        if info.st_size > limit:
            raise ValueError(f"holds {info.st_size:,} bytes, more than the {limit:,} it may hold")
        parts, left = [], info.st_size + 1  # one byte more: a file that grew while read is refused
        while left > 0:
            part = os.read(fd, min(left, 2**30))
            if not part:
                break
            parts.append(part)
            left -= len(part)
    finally:
        os.close(fd)
    data = b"".join(parts)
    if len(data) != info.st_size:
        raise ValueError(f"changed size while it was read ({info.st_size:,} bytes, then {len(data):,})")
    return data


def _describe(array: np.ndarray) -> list[Any]:
    return [array.dtype.str, list(array.shape)]


def _shard_bytes(signature: str, keys: np.ndarray, arrays: Sequence[np.ndarray], counts: Sequence[np.ndarray]) -> bytes:
    """A shard as zip bytes: the same signature and arrays always give the same bytes (fixed zip timestamps)."""
    members = [("keys", keys)]
    for i, (array, count) in enumerate(zip(arrays, counts, strict=True)):
        members += [(f"a{i}", np.ascontiguousarray(array)), (f"n{i}", count)]
    header = {"format": FORMAT, "version": VERSION, "signature": signature,
              "arrays": {name: _describe(array) for name, array in members}}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, content in [(_HEADER, None), *members]:
            info = zipfile.ZipInfo(name if content is None else f"{name}.npy", date_time=_ZIP_TIME)
            info.external_attr = 0o644 << 16
            with archive.open(info, "w", force_zip64=True) as handle:
                if content is None:
                    handle.write(dumps(header).encode("utf-8", "surrogatepass"))
                else:
                    np.lib.format.write_array(handle, content, allow_pickle=False)
    return buffer.getvalue()


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, size: int) -> IO[bytes]:
    """An open member whose directory entry declares ``size`` bytes or fewer, stored as written."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        raise ValueError(f"{info.filename} is compressed or encrypted (method {info.compress_type}); "
                         "shards store their members as written")
    if info.file_size != info.compress_size or info.file_size > size:
        raise ValueError(f"{info.filename} declares {info.file_size:,} bytes ({info.compress_size:,} stored), "
                         f"more than the {size:,} it may hold")
    return archive.open(info)


def _read_exactly(member: IO[bytes], size: int, name: str) -> bytes:
    """``size`` bytes, the rest of ``member`` (whose CRC is checked at its end); never more."""
    data = member.read(size)
    if len(data) != size or member.read(1):
        raise ValueError(f"{name} does not hold the {size:,} bytes it declares")
    return data


def _recorded(document: Any, signature: str, names: Sequence[str], dtypes: Mapping[str, np.dtype[Any]]
              ) -> dict[str, tuple[np.dtype[Any], tuple[int, ...]]]:
    """The dtype and shape ``shard.json`` records for each array, checked against the caller's."""
    problem = format_problem(document, FORMAT, (VERSION,))
    if problem is not None:
        raise ValueError(f"{_HEADER}: {problem}")
    if document.get("signature") != signature:
        raise ValueError(f"{_HEADER}: made under another signature (copied from another folder?)")
    arrays = document.get("arrays")
    if not isinstance(arrays, dict) or list(arrays) != list(names):
        raise ValueError(f"{_HEADER}: records arrays {sorted(arrays) if isinstance(arrays, dict) else arrays!r:.200}, "
                         f"expected {list(names)}")
    recorded = {}
    for name, expected in dtypes.items():
        spec = arrays[name]
        if not (isinstance(spec, list) and len(spec) == 2 and spec[0] == expected.str):
            raise ValueError(f"{_HEADER}: {name} is recorded as {spec!r:.100}, expected dtype {expected.str!r}")
        shape = spec[1]
        if not isinstance(shape, list) or not shape or not all(type(n) is int and n >= 0 for n in shape):
            raise ValueError(f"{_HEADER}: {name} has no shape of non-negative integers ({spec!r:.100})")
        recorded[name] = (expected, tuple(shape))
    n = recorded["keys"][1][0]
    for name, (_, shape) in recorded.items():
        wanted = (n, _KEY_BYTES) if name == "keys" else (n,) if name[0] == "n" else None
        if wanted is not None and shape != wanted:
            raise ValueError(f"{_HEADER}: {name} has shape {shape}, expected {wanted} for {n} texts")
    return recorded


def _parse_shard(data: bytes, signature: str, dtypes: Sequence[np.dtype[Any]]) -> dict[bytes, Entry]:
    """The entries of a shard's bytes; ValueError when they are not a shard of ``signature`` and ``dtypes``.

    Every size is checked before it is read or allocated (module docstring, **Safety**).
    """
    wanted: dict[str, np.dtype[Any]] = {"keys": np.dtype(np.uint8)}
    for i, dtype in enumerate(dtypes):
        wanted |= {f"a{i}": np.dtype(dtype), f"n{i}": np.dtype(np.int64)}
    names = [_HEADER, *(f"{name}.npy" for name in wanted)]
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if [info.filename for info in infos] != names:
                raise ValueError(f"holds {[info.filename for info in infos]!r:.300}, expected {names}")
            with _member(archive, infos[0], min(len(data), _SIGNATURE_LIMIT)) as member:
                text = _read_exactly(member, infos[0].file_size, _HEADER).decode("utf-8", "surrogatepass")
            recorded = _recorded(parse_json(text, _HEADER), signature, list(wanted), wanted)
            total = sum(math.prod(shape) * dtype.itemsize for dtype, shape in recorded.values())
            if total > len(data):
                raise ValueError(f"{_HEADER} records {total:,} bytes of arrays in a shard of {len(data):,}")
            arrays = {name: _read_npy(archive, info, len(data), *recorded[name])
                      for name, info in zip(wanted, infos[1:], strict=True)}
    except ValueError:
        raise
    except _DAMAGE as exc:
        raise ValueError(f"not a shard's zip of arrays ({type(exc).__name__}: {str(exc):.200})") from None
    keys = arrays["keys"]
    columns = []
    for i in range(len(dtypes)):
        array, count = arrays[f"a{i}"], arrays[f"n{i}"]
        # each count within the rows first: a sum of huge counts could wrap around in int64
        if array.ndim < 1 or (count < 0).any() or (count > array.shape[0]).any() or int(count.sum()) != array.shape[0]:
            raise ValueError(f"n{i} does not count the rows of a{i} per text")
        starts = np.concatenate([[0], np.cumsum(count)])
        columns.append([array[starts[k] : starts[k + 1]].copy() for k in range(len(keys))])
    return {bytes(key): tuple(column[k] for column in columns) for k, key in enumerate(keys)}


def _read_npy(archive: zipfile.ZipFile, info: zipfile.ZipInfo, size: int, dtype: np.dtype[Any],
              shape: tuple[int, ...]) -> np.ndarray:
    """One ``.npy`` member whose header names ``dtype`` and ``shape`` and which holds exactly their bytes."""
    with _member(archive, info, size) as member:
        version = np.lib.format.read_magic(member)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"{info.filename} has .npy format version {version}")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        stored_shape, fortran, stored_dtype = read_header(member)
        if stored_shape != shape or stored_dtype != dtype or fortran:
            raise ValueError(f"{info.filename} has shape {stored_shape} and dtype {stored_dtype.str}"
                             f"{' (Fortran order)' if fortran else ''}; {_HEADER} records {shape} and {dtype.str}")
        nbytes = math.prod(shape) * dtype.itemsize
        if info.file_size - member.tell() != nbytes:
            raise ValueError(f"{info.filename} holds {info.file_size - member.tell():,} bytes of data, "
                             f"its shape takes {nbytes:,}")
        return np.frombuffer(_read_exactly(member, nbytes, info.filename), dtype=dtype).reshape(shape)


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
        #: per signature folder: the shards skipped in this process (set aside, or unreadable)
        self._skipped: dict[str, set[str]] = {}
        self._unwritable = False

    def __getstate__(self) -> dict[str, Any]:
        return {"root": self.root}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["root"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.root)!r})"

    @property
    def folder(self) -> Path:
        """The folder of this format version, ``<root>/v2``."""
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
            The dtype of each array of an entry; a shard that records others is not used.

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
            skipped = self._skipped.setdefault(folder.name, set())
            todo = sorted(({index[k] for k in wanted if k in index} | (present - indexed)) - skipped)
            for name in todo:
                entries = self._read(folder / name, signature, dtypes)
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
        data = _shard_bytes(signature, keys, arrays, counts)
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
            self._merge(folder, signature, dtypes)
        self._evict(keep=folder / name)

    def _usable(self, folder: Path, signature: str, *, create: bool) -> bool:
        """Whether ``folder`` is this signature's, in this format; created (its ``signature.json``) if asked."""
        if folder.name in self._ignored:
            return False
        path = folder / _SIGNATURE_FILE
        if not os.path.lexists(path):
            if not create:
                return False
            atomic_write_text(path, dumps({"format": FORMAT, "version": VERSION, "signature": signature}) + "\n")
            return True
        try:
            document = parse_json(_read_regular(path, _SIGNATURE_LIMIT).decode("utf-8", "surrogatepass"), path)
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

    def _read(self, path: Path, signature: str, dtypes: Sequence[np.dtype[Any]]) -> dict[bytes, Entry] | None:
        """A shard's entries, after every check (module docstring); None, and the shard set aside, if one fails."""
        try:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_BYTES:  # the bound was lowered: evicted next
                logger.info("embedding cache: %s holds %d bytes, more than MAX_BYTES (%d); not read",
                            path, info.st_size, MAX_BYTES)
                return None
            data = _read_regular(path, MAX_BYTES)
            if hashlib.sha256(data).hexdigest()[:_NAME_DIGITS] != path.name[:_NAME_DIGITS]:
                raise ValueError("its content does not match its name (torn or altered)")
            entries = _parse_shard(data, signature, dtypes)
        except FileNotFoundError:  # removed meanwhile by another process: a miss
            return None
        except OSError as exc:  # not ours to set aside (e.g. no permission): skipped in this process
            self._skipped.setdefault(path.parent.name, set()).add(path.name)
            warnings.warn(CacheShardWarning(f"embedding cache: cannot read {path} ({exc.strerror or exc}); "
                                            "skipped, its texts are embedded again"), stacklevel=3)
            return None
        except ValueError as exc:
            self._set_aside(path, str(exc))
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be evicted
        return entries

    def _set_aside(self, path: Path, why: str) -> None:
        """Delete a failed shard (a regular file), or rename anything else ``<name>.bad``; one warning."""
        done = "skipped"
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(path).st_mode):
                path.unlink()
                done = "deleted"
            else:  # a link, a FIFO, a folder: not the cache's to delete
                os.replace(path, path.with_name(path.name + _SET_ASIDE))
                done = f"renamed {path.name + _SET_ASIDE}"
        if os.path.lexists(path):  # read-only, or the name is taken: never read again by this process
            self._skipped.setdefault(path.parent.name, set()).add(path.name)
            done = "skipped"
        warnings.warn(CacheShardWarning(f"embedding cache: {path}: {why}; {done}, its texts are embedded again"),
                      stacklevel=3)

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

    def _merge(self, folder: Path, signature: str, dtypes: Sequence[np.dtype[Any]]) -> None:
        """Merge every shard of ``folder`` into one (the first shard that holds a text gives its entry)."""
        names = sorted(self._listing(folder))
        merged: dict[bytes, Entry] = {}
        for name in names:
            for key, entry in (self._read(folder / name, signature, dtypes) or {}).items():
                merged.setdefault(key, entry)
        if not merged:
            return
        keys = sorted(merged)
        arrays = [np.concatenate([np.atleast_1d(merged[k][i]) for k in keys]) for i in range(len(dtypes))]
        counts = [np.array([len(np.atleast_1d(merged[k][i])) for k in keys], dtype=np.int64) for i in range(len(dtypes))]
        raw = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), _KEY_BYTES)
        written = self._write(folder, _shard_bytes(signature, raw, arrays, counts))
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
                        info = os.lstat(Path(folder.path) / name)
                        if stat.S_ISREG(info.st_mode):  # what is not a shard is set aside when read
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
