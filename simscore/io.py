"""Atomic file writing and line-numbered JSON Lines reading, shared by all packages.

Files are written to a temporary file in the target directory and renamed over the
target, so an interrupted write never leaves a torn file. The temporary file is created
with mode 0666, so the process umask applies to it as to any new file (no umask is read
or changed). Reading reports the 1-based line number of the first bad line.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import secrets
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
    "dumps",
    "format_problem",
    "prepare_output",
    "is_temporary",
]


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

    * An output that is one of the ``inputs`` (the same file, however it is spelt: links and
      ``..`` resolved) is refused, even with ``overwrite``: nothing the user gave is replaced.
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
        if Path(given).resolve() == resolved:
            raise OutputExistsError(f"{target} is also an input: refusing to write over it")
    if target.exists() and not overwrite:
        raise OutputExistsError(f"{target} exists; use --force (or overwrite=True) to replace it")
    folder = resolved.parent
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(f"{existing} is not a directory: cannot write {target}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"{existing} is not writable: cannot write {target}")
    return target


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
    """
    if not isinstance(obj, Mapping):
        return f"expected a JSON object, got {type(obj).__name__}"
    if obj.get("format") != format_name:
        return f"{what} is {obj.get('format')!r}, expected {format_name!r}"
    supported = tuple(versions)
    if obj.get("version") not in supported:
        return (
            f"unsupported {what} version {obj.get('version')!r} "
            f"(this simscore reads version {', '.join(map(str, supported))})"
        )
    return None


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON number {name}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def read_jsonl(
    path: str | os.PathLike[str], *, format_name: str, versions: Iterable[int]
) -> tuple[dict[str, Any], Iterator[tuple[int, dict[str, Any]]]]:
    """Read a JSON Lines file with a header line.

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
    try:
        handle = open(p, "rb")  # decoded line by line, so a bad byte is reported with its line
    except FileNotFoundError:
        raise FileFormatError(p, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(p, "is a directory, expected a file") from None
    try:
        first = decode_line(p, handle.readline().removeprefix(codecs.BOM_UTF8), 1)
    except FileFormatError:
        handle.close()
        raise
    if not first.strip():
        handle.close()
        raise FileFormatError(p, "empty file, expected a header line", line=1)
    header = _parse_line(p, first, 1)
    problem = format_problem(header, format_name, versions, what="header format")
    if problem:
        handle.close()
        raise FileFormatError(p, problem.replace("header format version", "format version"), line=1)

    def records() -> Iterator[tuple[int, dict[str, Any]]]:
        with handle:
            for number, raw in enumerate(handle, start=2):
                line = decode_line(p, raw, number)
                if line.strip():
                    yield number, _parse_line(p, line, number)

    return header, records()


def read_text(path: str | os.PathLike[str]) -> str:
    """The whole file as UTF-8 text (a leading BOM dropped).

    Raises
    ------
    FileFormatError
        The file is missing, is a directory, or holds a byte that is not UTF-8 (naming its line).
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise FileFormatError(p, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(p, "is a directory, expected a file") from None
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


def decode_line(path: str | os.PathLike[str], raw: bytes, number: int) -> str:
    """``raw`` decoded as UTF-8, or a :class:`~simscore.errors.FileFormatError` naming the file, line and byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            path, f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}", line=number
        ) from None


def _parse_line(path: Path, line: str, number: int) -> dict[str, Any]:
    try:
        obj = _DECODER.decode(line)
    except (json.JSONDecodeError, ValueError) as exc:
        raise FileFormatError(path, f"invalid JSON ({exc})", line=number) from None
    if not isinstance(obj, dict):
        raise FileFormatError(path, f"expected a JSON object, got {type(obj).__name__}", line=number)
    return obj

