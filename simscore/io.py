"""Atomic file writing and bounded, line-numbered reading, shared by all packages.

Files are written to a temporary file in the target directory and renamed over the
target, so an interrupted write never leaves a torn file. The temporary file is created
with mode 0666, so the process umask applies to it as to any new file (no umask is read
or changed). Reading reports the 1-based line number of the first bad line.

Every reader of the three packages reads through the functions here, so a hostile or broken
file costs bounded memory and time and ends in a :class:`~simscore.errors.FileFormatError`
naming the file and line, whatever its bytes. The limits, by name:

* :data:`MAX_LINE_LENGTH` — the longest line of a JSON Lines or CSV file (a stream without
  line breaks, such as ``/dev/zero``, stops there instead of filling memory);
* :data:`MAX_FILE_BYTES` — the largest file read whole (a JSON document, a checkpoint);
* :data:`MAX_NESTING` — the deepest nesting of JSON arrays and objects (100,000 nested
  brackets would otherwise exhaust Python's recursion).

They are module attributes read at each call, so a program with unusual files may raise them.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from simscore.errors import FileFormatError, OutputExistsError

__all__ = [
    "atomic_open",
    "atomic_write_text",
    "write_jsonl",
    "read_jsonl",
    "read_text",
    "read_bytes",
    "read_json",
    "parse_json",
    "parse_toml",
    "read_lines",
    "dumps",
    "format_problem",
    "prepare_output",
    "same_file",
    "is_temporary",
    "files_digest",
]


#: The longest line a JSON Lines or CSV reader accepts (bytes for JSON Lines, characters for
#: CSV): 16 MiB, far above any record simscore writes (a context with its dialogue history is
#: a few kB).
MAX_LINE_LENGTH = 16 * 2**20

#: The largest file read whole (JSON documents such as ConvLab data or a saved comparison,
#: TOML, a checkpoint's arrays): 2 GiB.
MAX_FILE_BYTES = 2 * 2**30

#: The deepest nesting of arrays and objects in a JSON document or record; simscore's own
#: files nest at most 6 levels, ConvLab's dialogue files 7.
MAX_NESTING = 64

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_TOKEN_BYTES = 6
_TEMPORARY_SUFFIX = ".tmp"


def _create_temporary(directory: Path, name: str) -> tuple[int, str]:
    """Create a new, empty temporary file next to ``name`` (mode 0666 minus the umask)."""
    for _ in range(100):
        candidate = directory / f".{name}.{secrets.token_hex(_TOKEN_BYTES)}{_TEMPORARY_SUFFIX}"
        try:
            return os.open(candidate, _CREATE_FLAGS, 0o666), str(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {directory / name}")


def is_temporary(name: str) -> bool:
    """Whether a file name is one of :func:`atomic_open`'s temporary files, ``.<target>.<12 hex digits>.tmp``.

    Such a file is left behind only when a process is killed in the middle of a write; it is
    never a finished output, so a program resuming the interrupted work may delete it.

    >>> is_temporary(".report.md.0a1b2c3d4e5f.tmp"), is_temporary("report.md"), is_temporary(".x.tmp")
    (True, False, False)
    """
    if not (name.startswith(".") and name.endswith(_TEMPORARY_SUFFIX)):
        return False
    target, dot, token = name[1:-len(_TEMPORARY_SUFFIX)].rpartition(".")
    return bool(dot and target) and len(token) == 2 * _TOKEN_BYTES and all(c in "0123456789abcdef" for c in token)


def prepare_output(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> Path:
    """Check, before any work, that ``path`` may be written; returns it as a :class:`~pathlib.Path`.

    This is the one output check of simscore, contexts and policies: every public writer calls
    it (with ``overwrite``) and every command calls it before any work (with its inputs, through
    :func:`simscore.app.cli_files.check_outputs`); the write itself is :func:`atomic_open`.

    * An output that is one of the ``inputs`` (the same file, however it is spelt: symbolic
      links and ``..`` resolved, hard links compared by device and inode) is refused, even with
      ``overwrite``: nothing the user gave is replaced.
    * An existing file is refused unless ``overwrite`` (the command line's ``--force``).
    * The directory must exist or be creatable, and be writable.

    Raises
    ------
    simscore.errors.OutputExistsError
        The output is an input, or exists and ``overwrite`` is false.
    PermissionError, NotADirectoryError
        The location cannot be written (naming the directory).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "log.jsonl").write_text("{}")
    2
    >>> prepare_output(folder / "log.jsonl", inputs=[folder / "log.jsonl"], overwrite=True)
    Traceback (most recent call last):
    ...
    simscore.errors.OutputExistsError: ... is also an input: refusing to write over it
    >>> prepare_output(folder / "out.jsonl").name
    'out.jsonl'
    """
    target = Path(path)
    if target.is_dir():
        raise OutputExistsError(f"{target} is a directory, expected a file name")
    resolved = target.resolve()
    for given in inputs:
        if same_file(target, given):
            raise OutputExistsError(f"{target} is also an input: refusing to write over it")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise OutputExistsError(f"{target} exists; use --force (or overwrite=True) to replace it")
    folder = resolved.parent
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(f"{existing} is not a directory: cannot write {target}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"{existing} is not writable: cannot write {target}")
    # try what the write will do, leaving nothing behind (root passes os.access anywhere, /proc say)
    try:
        if existing == folder:
            fd, probe = _create_temporary(folder, target.name)
            os.close(fd)
            os.unlink(probe)
        else:  # the write will create the missing folders
            os.rmdir(tempfile.mkdtemp(prefix=".simscore-probe-", dir=existing))
    except OSError as exc:
        raise PermissionError(f"{existing} is not writable ({exc.strerror}): cannot write {target}") from None
    return target


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file: the same inode if both exist, else the same resolved path.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> same_file(folder / "x" / ".." / "a.txt", folder / "a.txt")
    True
    """
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return Path(a).resolve() == Path(b).resolve()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path`` and rename it over ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left untouched.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(target.parent, target.name)
    try:
        if mode == "w":
            kwargs.setdefault("encoding", "utf-8")
            kwargs.setdefault("newline", "\n")
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(obj: Any) -> str:
    """Compact, deterministic JSON (sorted keys are *not* forced: order is meaningful)."""
    return _ENCODER.encode(obj)


def write_jsonl(
    path: str | os.PathLike[str], header: Mapping[str, Any], records: Iterable[Mapping[str, Any]]
) -> None:
    """Write a header line and one JSON object per record, atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(dumps(dict(header)))
        handle.write("\n")
        for record in records:
            handle.write(dumps(record))
            handle.write("\n")


def format_problem(obj: Any, format_name: str, versions: Iterable[int], *, what: str = "format") -> str | None:
    """What is wrong with a file header's ``format``/``version`` fields, or None if nothing.

    >>> format_problem({"format": "x", "version": 1}, "x", (1,)) is None
    True
    >>> format_problem({"format": "x", "version": 3}, "x", (1, 2))
    'unsupported format version 3 (this simscore reads version 1, 2)'
    >>> format_problem([], "x", (1,))
    'expected a JSON object, got list'
    >>> format_problem({"format": "x", "version": True}, "x", (1,))
    'unsupported format version True (this simscore reads version 1)'
    """
    if not isinstance(obj, Mapping):
        return f"expected a JSON object, got {type(obj).__name__}"
    if obj.get("format") != format_name:
        return f"{what} is {obj.get('format')!r}, expected {format_name!r}"
    supported = tuple(versions)
    version = obj.get("version")
    if type(version) is not int or version not in supported:  # true == 1 and 1.0 == 1 in Python, not here
        return (
            f"unsupported {what} version {obj.get('version')!r} "
            f"(this simscore reads version {', '.join(map(str, supported))})"
        )
    return None


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON number {name}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}')


def _too_deep(text: str) -> int | None:
    """The 1-based line where valid JSON ``text`` nests deeper than :data:`MAX_NESTING`, or None.

    Brackets inside strings do not count. Only C-speed passes over the text: escaped
    backslashes and quotes are dropped (pairs of backslashes first, so a run of them is read
    as JSON reads it), everything but quotes and brackets is deleted, and a bracket counts
    where an even number of quotes precede it.
    """
    limit = MAX_NESTING
    if text.count("[") + text.count("{") <= limit:  # the usual case, at the speed of str.count
        return None
    import numpy as np

    if "\\" in text:
        text_ = text.replace("\\\\", "").replace('\\"', "")
    else:
        text_ = text
    structure = np.frombuffer(text_.encode("utf-8").translate(None, _NOT_STRUCTURE), dtype=np.uint8)
    quotes = structure == ord('"')
    outside = (np.cumsum(quotes, dtype=np.uint8) & 1) == 0  # parity survives the wrap-around
    steps = np.where((structure == ord("[")) | (structure == ord("{")), 1, -1)[outside & ~quotes]
    if int(np.cumsum(steps).max(initial=0)) <= limit:
        return None
    depth = 0  # found: find its line (only on this error path)
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
    return 1


def parse_json(text: str, path: str | os.PathLike[str], *, line: int | None = None) -> Any:
    """JSON ``text`` read from ``path`` (at ``line`` of it, for a JSON Lines record), strictly and bounded.

    ``NaN`` and ``Infinity`` are refused (they are not JSON), and so is nesting deeper than
    :data:`MAX_NESTING`.

    Raises
    ------
    FileFormatError
        Naming the file and line: invalid JSON, a non-standard number, too deep a nesting.

    Examples
    --------
    >>> parse_json('{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
    >>> parse_json("[" * 100 + "]" * 100, "x.json")
    Traceback (most recent call last):
    ...
    simscore.errors.FileFormatError: x.json, line 1: arrays and objects nested deeper than 64 levels (simscore.io.MAX_NESTING)
    >>> parse_json('{"a": NaN}', "x.jsonl", line=3)
    Traceback (most recent call last):
    ...
    simscore.errors.FileFormatError: x.jsonl, line 3: invalid JSON (non-standard JSON number NaN)
    """
    deep = f"arrays and objects nested deeper than {MAX_NESTING} levels (simscore.io.MAX_NESTING)"
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise FileFormatError(path, deep, line=line if line is not None else _too_deep(text)) from None
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        column = f", column {exc.colno}" if line is None else f" at column {exc.colno}"
        raise FileFormatError(path, f"invalid JSON ({exc.msg}{column})", line=where) from None
    except ValueError as exc:
        raise FileFormatError(path, f"invalid JSON ({exc})", line=line) from None
    deep_line = _too_deep(text)
    if deep_line is not None:
        raise FileFormatError(path, deep, line=line if line is not None else deep_line)
    return value


def parse_toml(text: str, path: str | os.PathLike[str]) -> dict[str, Any]:
    """TOML ``text`` read from ``path``, with tables and arrays nested at most :data:`MAX_NESTING` deep.

    Raises
    ------
    FileFormatError
        Naming the file (and the line, where :mod:`tomllib` gives one): invalid TOML, too deep
        a nesting (which would otherwise exhaust Python's recursion).

    >>> parse_toml('a = [[1], [2]]', "c.toml")
    {'a': [[1], [2]]}
    >>> parse_toml("a = " + "[" * 100_000 + "]" * 100_000, "c.toml")
    Traceback (most recent call last):
    ...
    simscore.errors.FileFormatError: c.toml: tables and arrays nested deeper than 64 levels (simscore.io.MAX_NESTING)
    """
    import tomllib

    deep = f"tables and arrays nested deeper than {MAX_NESTING} levels (simscore.io.MAX_NESTING)"
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise FileFormatError(path, deep) from None
    except tomllib.TOMLDecodeError as exc:
        raise FileFormatError(path, f"invalid TOML ({exc})") from None
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:  # a configuration is small: walk it
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            raise FileFormatError(path, deep)
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return data


def read_json(path: str | os.PathLike[str], *, limit: int | None = None) -> Any:
    """A whole JSON file, read by :func:`read_text` and parsed by :func:`parse_json`.

    Raises
    ------
    FileFormatError
        The file is missing, a directory, larger than ``limit`` (default :data:`MAX_FILE_BYTES`),
        not UTF-8, or not valid JSON within the limits (naming the line).
    """
    return parse_json(read_text(path, limit=limit), path)


def read_jsonl(
    path: str | os.PathLike[str], *, format_name: str, versions: Iterable[int]
) -> tuple[dict[str, Any], Iterator[tuple[int, dict[str, Any]]]]:
    """Read a JSON Lines file with a header line.

    Lines are read up to :data:`MAX_LINE_LENGTH` bytes and parsed by :func:`parse_json`.

    Parameters
    ----------
    path : path-like
        The file.
    format_name : str
        Expected value of the header's ``"format"`` field.
    versions : iterable of int
        Supported values of the header's ``"version"`` field.

    Returns
    -------
    header : dict
        The parsed header.
    records : iterator of (line_number, dict)
        The remaining non-blank lines, parsed lazily; a bad line raises
        :class:`~simscore.errors.FileFormatError` naming its line number.
    """
    p = Path(path)
    handle = _open_binary(p)
    lines = read_lines(handle, p)
    try:
        number, raw = next(lines, (1, b""))
        first = decode_line(p, raw.removeprefix(codecs.BOM_UTF8), number)
    except FileFormatError:
        handle.close()
        raise
    if not first.strip():
        handle.close()
        raise FileFormatError(p, "empty file, expected a header line", line=1)
    try:
        header = _parse_line(p, first, 1)
    except FileFormatError:
        handle.close()
        raise
    problem = format_problem(header, format_name, versions, what="header format")
    if problem:
        handle.close()
        raise FileFormatError(p, problem.replace("header format version", "format version"), line=1)

    def records() -> Iterator[tuple[int, dict[str, Any]]]:
        with handle:
            for number, raw in lines:
                line = decode_line(p, raw, number)
                if line.strip():
                    yield number, _parse_line(p, line, number)

    return header, records()


def _open_binary(path: Path) -> IO[bytes]:
    try:
        return open(path, "rb")  # decoded line by line, so a bad byte is reported with its line
    except FileNotFoundError:
        raise FileFormatError(path, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(path, "is a directory, expected a file") from None


def read_lines(handle: IO[Any], path: str | os.PathLike[str], *, start: int = 1) -> Iterator[tuple[int, Any]]:
    """``(line number, line)`` of an open file, each line at most :data:`MAX_LINE_LENGTH` long.

    Works on binary and text handles alike (lines keep their line break). A longer line is a
    :class:`~simscore.errors.FileFormatError` naming it, raised after reading no more than
    the limit, so a stream without line breaks costs bounded memory.

    >>> import io
    >>> list(read_lines(io.StringIO("a\\nb"), "x.csv"))
    [(1, 'a\\n'), (2, 'b')]
    """
    limit = MAX_LINE_LENGTH
    number = start
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and line[-1:] not in ("\n", b"\n"):
            unit = "bytes" if isinstance(line, bytes) else "characters"
            raise FileFormatError(
                path, f"line longer than {limit:,} {unit} (simscore.io.MAX_LINE_LENGTH)", line=number
            )
        yield number, line
        number += 1


def read_bytes(path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """The whole file, at most ``limit`` bytes (default :data:`MAX_FILE_BYTES`).

    Raises
    ------
    FileFormatError
        The file is missing, is a directory, or is longer than the limit (found after reading
        no more than the limit: a device or a pipe that never ends costs bounded memory).
    """
    p = Path(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    with _open_binary(p) as handle:
        # read what a regular file says it holds, then in chunks (a pipe or a device says 0):
        # never more than limit + 1 bytes, and never a buffer of that size up front
        size = os.fstat(handle.fileno()).st_size
        chunks = [handle.read(min(size, limit) + 1)]
        total = len(chunks[0])
        while chunks[-1] and total <= limit:
            chunks.append(handle.read(min(2**20, limit + 1 - total)))
            total += len(chunks[-1])
    data = chunks[0] if len(chunks) <= 2 and not chunks[-1] else b"".join(chunks)
    if len(data) > limit:
        name = "simscore.io.MAX_FILE_BYTES" if limit == MAX_FILE_BYTES else "the limit of this kind of file"
        raise FileFormatError(p, f"larger than {limit:,} bytes ({name})")
    return data


def read_text(path: str | os.PathLike[str], *, limit: int | None = None) -> str:
    """The whole file as UTF-8 text (a leading BOM dropped), read by :func:`read_bytes`.

    Raises
    ------
    FileFormatError
        The file is missing, is a directory, is larger than ``limit`` (default
        :data:`MAX_FILE_BYTES`), or holds a byte that is not UTF-8 (naming its line).
    """
    p = Path(path)
    raw = read_bytes(p, limit=limit)
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(
            p, f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start - line_start + 1}", line=line
        ) from None


def files_digest(root: str | os.PathLike[str], files: Iterable[str | os.PathLike[str]]) -> str:
    """SHA-256 of ``files`` (under ``root``, hashed in the order given): each file's path relative
    to ``root`` (with ``/``), its size and its bytes, read in blocks -- what its content is, wherever
    the folder lies.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("x")
    >>> files_digest(folder, [folder / "a.txt"])[:12]
    '40a8cf652ed9'
    """
    base = Path(root)
    digest = hashlib.sha256()
    for name in files:
        path = Path(name)
        digest.update(f"{path.relative_to(base).as_posix()}\0{path.stat().st_size}\0".encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def decode_line(path: str | os.PathLike[str], raw: bytes, number: int) -> str:
    """``raw`` decoded as UTF-8, or a :class:`~simscore.errors.FileFormatError` naming the file, line and byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            path, f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}", line=number
        ) from None


def _parse_line(path: Path, line: str, number: int) -> dict[str, Any]:
    obj = parse_json(line, path, line=number)
    if not isinstance(obj, dict):
        raise FileFormatError(path, f"expected a JSON object, got {type(obj).__name__}", line=number)
    return obj
