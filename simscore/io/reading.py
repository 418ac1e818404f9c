"""Bounded, line-numbered reading, shared by all packages (and the output contract's names).

Files are written through :mod:`simscore.io.output` (the output contract: :func:`prepare_output`,
:func:`atomic_open`, offered here too): to a temporary file in the target directory, renamed
over the target, so an interrupted write never leaves a torn file; nothing but a regular file
is ever renamed over. Reading reports the 1-based line number of the first bad line.

Every reader of the three packages reads through the functions here, so a hostile or broken
file costs bounded memory and time and ends in a :class:`~simscore.errors.FileFormatError`
naming the file and line, whatever its bytes. Inputs are read once, from the start, so a pipe
works as well as a file (``<(zcat log.jsonl.gz)``, ``/dev/stdin``, a FIFO): :func:`open_input`,
and :func:`read_head` for a reader that looks at the first bytes before choosing how to read
the rest. A file of another of simscore's kinds where one kind belongs is named as such
(:mod:`simscore.io.formats`). The limits, by name:

* :data:`MAX_LINE_LENGTH` — the longest line of a JSON Lines file and the longest row of a CSV
  file (a stream without line breaks, such as ``/dev/zero``, stops there instead of filling
  memory; a CSV cell may be as long);
* :data:`MAX_FILE_BYTES` — the largest file read whole (a JSON document, a checkpoint); a
  regular file's size is checked before any byte is read, a stream is read up to the limit;
* :data:`MAX_NESTING` — the deepest nesting of JSON arrays and objects (100,000 nested
  brackets would otherwise exhaust Python's recursion).

They are module attributes read at each call, so a program with unusual files may raise them.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import stat
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from simscore.errors import FileFormatError, json_excerpt, json_kind
from simscore.io.formats import FILE_FORMATS, JSON_LINES_FORMATS, detect_format, kind_mismatch
from simscore.io.output import atomic_open, atomic_write_text, is_temporary, prepare_output, same_file

__all__ = [
    "atomic_open",
    "atomic_write_text",
    "write_jsonl",
    "read_jsonl",
    "read_text",
    "read_bytes",
    "read_json",
    "read_csv_rows",
    "open_input",
    "read_head",
    "parse_json",
    "parse_toml",
    "read_lines",
    "dumps",
    "format_problem",
    "prepare_output",
    "same_file",
    "is_temporary",
    "files_digest",
    "decode_line",
]


#: The longest line a JSON Lines or CSV reader accepts (bytes for JSON Lines, characters for
#: CSV, where a row may span several lines and its cells may be as long): 16 MiB, far above any
#: record simscore writes (a context with its dialogue history is a few kB).
MAX_LINE_LENGTH = 16 * 2**20

#: The largest file read whole (JSON documents such as ConvLab data or a saved comparison,
#: TOML, a checkpoint's arrays): 2 GiB.
MAX_FILE_BYTES = 2 * 2**30

#: The deepest nesting of arrays and objects in a JSON document or record; simscore's own
#: files nest at most 6 levels, ConvLab's dialogue files 7.
MAX_NESTING = 64


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


def _field(obj: Mapping[str, Any], key: str) -> str:
    """A header field for a message: its JSON value, or that it is missing."""
    return json_excerpt(obj[key], 60) if key in obj else "missing"


def format_problem(obj: Any, format_name: str, versions: Iterable[int], *, what: str = "format") -> str | None:
    """What is wrong with a file header's ``format``/``version`` fields, or None if nothing.

    A file of another of simscore's kinds is named as such (:func:`~simscore.io.formats.kind_mismatch`).

    >>> format_problem({"format": "x", "version": 1}, "x", (1,)) is None
    True
    >>> format_problem({"format": "x", "version": 3}, "x", (1, 2))
    'unsupported format version 3 (this simscore reads version 1, 2)'
    >>> format_problem([], "x", (1,))
    'expected a JSON object, got an array'
    >>> format_problem({"format": "x", "version": True}, "x", (1,))
    'unsupported format version true (this simscore reads version 1)'
    >>> print(format_problem({"format": "simscore-responses", "version": 1}, "simscore-contexts", (2,)))
    a responses file (format 'simscore-responses', JSON Lines)
    where a context set (format 'simscore-contexts', JSON Lines) belongs
    """
    if not isinstance(obj, Mapping):
        return f"expected a JSON object, got {json_kind(obj)}"
    found = detect_format(obj)
    if found != format_name:
        if found in FILE_FORMATS:
            return kind_mismatch(found, format_name)
        return f"{what} is {_field(obj, 'format')}, expected {format_name!r}"
    supported = tuple(versions)
    version = obj.get("version")
    if type(version) is not int or version not in supported:  # true == 1 and 1.0 == 1 in Python, not here
        return (
            f"unsupported {what} version {_field(obj, 'version')} "
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


def parse_json(
    text: str, path: str | os.PathLike[str], *, line: int | None = None, expected: str | None = None
) -> Any:
    """JSON ``text`` read from ``path`` (at ``line`` of it, for a JSON Lines record), strictly and bounded.

    ``NaN`` and ``Infinity`` are refused (they are not JSON), and so is nesting deeper than
    :data:`MAX_NESTING`. Where a whole document does not parse because it is a JSON Lines file
    of simscore's, the message names that file's kind and ``expected`` (a format name of
    :data:`~simscore.io.formats.FILE_FORMATS`, or a description); a byte-order mark inside the
    text is named as such.

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
    simscore.errors.FileFormatError: x.json, line 1: arrays and objects nested deeper than ... (simscore.io.reading.MAX_NESTING)
    >>> parse_json('{"a": NaN}', "x.jsonl", line=3)
    Traceback (most recent call last):
    ...
    simscore.errors.FileFormatError: x.jsonl, line 3: invalid JSON (non-standard JSON number NaN)
    >>> parse_json('\\ufeff{"context_id": "c2"}', "joined.jsonl", line=2)
    Traceback (most recent call last):
    ...
    simscore.errors.FileFormatError: joined.jsonl, line 2: a byte-order mark (U+FEFF) at column 1, where only ...
    """
    deep = f"arrays and objects nested deeper than {MAX_NESTING} levels (simscore.io.reading.MAX_NESTING)"
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise FileFormatError(path, deep, line=line if line is not None else _too_deep(text)) from None
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        if text[exc.pos : exc.pos + 1] == "\ufeff":
            raise FileFormatError(
                path, f"a byte-order mark (U+FEFF) at column {exc.colno}, where only the file's start may hold one "
                "(were files joined?)", line=where,
            ) from None
        found = detect_format(text[:_SNIFF_CHARACTERS]) if line is None else None
        if found in JSON_LINES_FORMATS and found != expected:
            raise FileFormatError(path, kind_mismatch(found, expected or "one JSON document"), line=1) from None
        column = f", column {exc.colno}" if line is None else f" at column {exc.colno}"
        raise FileFormatError(path, f"invalid JSON ({exc.msg}{column})", line=where) from None
    except ValueError as exc:
        raise FileFormatError(path, f"invalid JSON ({exc})", line=line) from None
    deep_line = _too_deep(text)
    if deep_line is not None:
        raise FileFormatError(path, deep, line=line if line is not None else deep_line)
    escape = _SURROGATE_ESCAPE.search(text)
    if escape is not None:  # JSON lets \ud800 stand alone; it is half a character, and no file can hold it
        surrogate = _lone_surrogate(value)
        if surrogate is not None:
            where = line if line is not None else text.count("\n", 0, escape.start()) + 1
            raise FileFormatError(path, f"a lone surrogate ({surrogate}) in a string: half of a UTF-16 pair, not "
                                  "a character", line=where)
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in any string of a parsed value (as ``\\ud800`` is written), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"\\u{ord(item[exc.start]):04x}"
    return None


def parse_toml(text: str, path: str | os.PathLike[str], *, expected: str = "a TOML file") -> dict[str, Any]:
    """TOML ``text`` read from ``path``, with tables and arrays nested at most :data:`MAX_NESTING` deep.

    Raises
    ------
    FileFormatError
        Naming the file (and the line, where :mod:`tomllib` gives one): invalid TOML, too deep
        a nesting (which would otherwise exhaust Python's recursion), a JSON file of simscore's
        (named by its kind, with ``expected``, what belongs there).

    >>> parse_toml('a = [[1], [2]]', "c.toml")
    {'a': [[1], [2]]}
    >>> parse_toml("a = " + "[" * 100_000 + "]" * 100_000, "c.toml")
    Traceback (most recent call last):
    ...
    simscore.errors.FileFormatError: c.toml: tables and arrays nested deeper than 64 levels (simscore.io.reading.MAX_NESTING)
    """
    import tomllib

    deep = f"tables and arrays nested deeper than {MAX_NESTING} levels (simscore.io.reading.MAX_NESTING)"
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise FileFormatError(path, deep) from None
    except tomllib.TOMLDecodeError as exc:
        found = detect_format(text[:_SNIFF_CHARACTERS])
        if found in FILE_FORMATS:
            raise FileFormatError(path, kind_mismatch(found, expected), line=1) from None
        raise FileFormatError(path, f"invalid TOML ({exc})") from None
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:  # a configuration is small: walk it
        value, depth = stack.pop()
        if depth > MAX_NESTING:
            raise FileFormatError(path, deep)
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return data


def read_json(path: str | os.PathLike[str], *, limit: int | None = None, expected: str | None = None) -> Any:
    """A whole JSON file, read by :func:`read_text` and parsed by :func:`parse_json` (``expected`` is its).

    Raises
    ------
    FileFormatError
        The file is missing, a directory, larger than ``limit`` (default :data:`MAX_FILE_BYTES`),
        not UTF-8, or not valid JSON within the limits (naming the line), or a JSON Lines file
        of simscore's (naming its kind).
    """
    return parse_json(read_text(path, limit=limit), path, expected=expected)


def read_jsonl(
    path: str | os.PathLike[str], *, format_name: str, versions: Iterable[int], stream: IO[bytes] | None = None
) -> tuple[dict[str, Any], Generator[tuple[int, dict[str, Any]], None, None]]:
    """Read a JSON Lines file with a header line.

    Lines are read up to :data:`MAX_LINE_LENGTH` bytes and parsed by :func:`parse_json`. A file
    of another of simscore's kinds (a JSON document such as a flow graph, or another JSON Lines
    format) is named as such, with the kind that belongs (:func:`~simscore.io.formats.kind_mismatch`).

    Parameters
    ----------
    path : path-like
        The file (read once from its start: a pipe or FIFO works).
    format_name : str
        Expected value of the header's ``"format"`` field.
    versions : iterable of int
        Supported values of the header's ``"version"`` field.
    stream : binary file, optional
        Read this open stream instead of opening ``path`` (which then only names it in
        messages), e.g. one whose first bytes :func:`read_head` looked at; it is closed when
        the records end.

    Returns
    -------
    header : dict
        The parsed header.
    records : generator of (line_number, dict)
        The remaining non-blank lines, parsed lazily; a bad line raises
        :class:`~simscore.errors.FileFormatError` naming its line number. Its ``close()``
        closes the file (as reading to the end does).
    """
    p = Path(path)
    handle = open_input(p) if stream is None else stream
    lines = read_lines(handle, p)
    try:
        number, raw = next(lines, (1, b""))
        first = decode_line(p, raw.removeprefix(codecs.BOM_UTF8), number)
        if not first.strip():
            raise FileFormatError(p, "empty file, expected a header line", line=1)
        try:
            header = _parse_line(p, first, 1)
        except FileFormatError:  # a JSON document of simscore's, say: name it
            found = detect_format(first[:_SNIFF_CHARACTERS] + handle.read(_SNIFF_CHARACTERS).decode("utf-8", "replace"))
            if found in FILE_FORMATS and found != format_name:
                raise FileFormatError(p, kind_mismatch(found, format_name), line=1) from None
            raise
        problem = format_problem(header, format_name, versions, what="header format")
        if problem:
            raise FileFormatError(p, problem.replace("header format version", "format version"), line=1)
    except BaseException:
        handle.close()
        raise

    def records() -> Generator[tuple[int, dict[str, Any]], None, None]:
        with handle:
            for number, raw in lines:
                line = decode_line(p, raw, number)
                if line.strip():
                    yield number, _parse_line(p, line, number)

    return header, records()


#: How much of a file is looked at to tell its kind (:func:`~simscore.io.formats.detect_format`).
_SNIFF_CHARACTERS = 4096


class _Wrapped(io.RawIOBase):
    """A readable raw stream over another stream ``inner``, which closing it closes."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self._inner = inner

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return int(self._inner.fileno())

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


class _Replay(_Wrapped):
    """A stream that gives ``head`` again, then the rest of ``inner`` (see :func:`read_head`)."""

    def __init__(self, head: bytes, inner: IO[bytes]) -> None:
        super().__init__(inner)
        self._head = memoryview(head)

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return int(self._inner.readinto(buffer))


class _Digesting(_Wrapped):
    """A raw stream that feeds every byte read from ``inner`` to ``digest`` (see :func:`open_input`)."""

    def __init__(self, inner: io.RawIOBase, digest: Any) -> None:
        super().__init__(inner)
        self._digest = digest

    def readinto(self, buffer: Any) -> int:
        n = self._inner.readinto(buffer)
        if n:
            self._digest.update(memoryview(buffer)[:n])
        return n or 0


def open_input(path: str | os.PathLike[str], *, digest: Any = None) -> IO[bytes]:
    """Open an input file to read once, from its start, as a buffered binary stream.

    Whatever the path names that can be read in order: a regular file, a FIFO or pipe (process
    substitution ``<(...)``, ``/dev/stdin``), a character device. Readers read it in one pass,
    never seeking, stating its size for anything but a bound, or opening it twice.

    Parameters
    ----------
    path : path-like
    digest : hashlib object, optional
        Updated with every byte read (e.g. ``hashlib.sha256()``: the digest of what was read,
        without a second pass over a file that a pipe cannot give twice).

    Raises
    ------
    FileFormatError
        The file is missing, is a directory or a socket.

    >>> import hashlib
    >>> digest = hashlib.sha256()
    >>> with open_input("/dev/null", digest=digest) as stream:
    ...     stream.read(), digest.hexdigest()[:12]
    (b'', 'e3b0c44298fc')
    """
    p = Path(path)
    try:
        raw: io.RawIOBase = open(p, "rb", buffering=0)
    except FileNotFoundError:
        raise FileFormatError(p, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(p, "is a directory, expected a file") from None
    except OSError:
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.stat(p).st_mode):
                raise FileFormatError(p, "is a socket, expected a file") from None
        raise
    if digest is not None:
        raw = _Digesting(raw, digest)
    return io.BufferedReader(raw)


def read_head(stream: IO[bytes], size: int) -> tuple[bytes, IO[bytes]]:
    """The first ``size`` bytes of ``stream`` (fewer if it ends sooner), and a stream that gives all of it again.

    For a reader that looks before it reads (a format told by content), on a pipe as on a
    file: the returned stream replays the bytes looked at, then reads on; closing it closes
    ``stream``.

    >>> import io
    >>> head, again = read_head(io.BytesIO(b'{"format": "x"}\\nrest'), 4)
    >>> head, again.read()
    (b'{"fo', b'{"format": "x"}\\nrest')
    """
    chunks, total = [], 0
    while total < size:
        chunk = stream.read(size - total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    head = b"".join(chunks)
    return head, io.BufferedReader(_Replay(head, stream))


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
                path, f"line longer than {limit:,} {unit} (simscore.io.reading.MAX_LINE_LENGTH)", line=number
            )
        yield number, line
        number += 1


def read_csv_rows(
    handle: IO[str], path: str | os.PathLike[str], *, expected: str = "a CSV file"
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of each row of an open CSV text file (``newline=""``), strictly.

    CSV as :mod:`csv`'s default dialect reads it with ``strict=True`` (comma-separated; a cell
    in double quotes may hold commas, line breaks and doubled quotes; a quote inside an
    unquoted cell is kept; a blank line is a row without cells), but without :mod:`csv`'s
    131,072-character limit on a cell, a setting of the whole process: a row, with every line
    it spans, may be up to :data:`MAX_LINE_LENGTH` characters long, and so may a cell.
    The line number is the row's first line. A byte-order mark that starts a row after the
    first line is an error (two files joined): a reader would take it for part of a cell. A
    JSON file of simscore's is named by its kind, with ``expected``, the CSV that belongs there.

    Raises
    ------
    FileFormatError
        Naming the file and line: a character after a closing quote, a quoted cell that never
        ends, a line break inside an unquoted cell, a row longer than the limit, a BOM, a file
        of simscore's that is not CSV.

    >>> import io
    >>> list(read_csv_rows(io.StringIO('id,text\\nc1,"a ""quoted"", multi-\\nline cell"\\n\\nc2,x"y\\n', newline=""), "x.csv"))
    [(1, ['id', 'text']), (2, ['c1', 'a "quoted", multi-\\nline cell']), (4, []), (5, ['c2', 'x"y'])]
    """
    cells: list[str] = []
    parts: list[str] = []  # of the quoted cell being read
    quoted = False
    start, size = 0, 0
    for number, line in _csv_lines(handle, path, expected):
        if not quoted and not cells:
            start, size = number, 0
            if _blank_row(line, number, path):
                yield number, []
                continue
        size = _row_size(size + len(line), path, start)
        pos: int | None = 0
        while pos is not None:
            if quoted:
                pos = _quoted_cell(line, pos, parts)
                if pos is None:  # the cell goes on, line break and all, on the next line
                    break
                quoted = False
                cells.append("".join(parts))
                parts = []
                pos = _after_quoted_cell(line, pos, path, number)
            elif line.startswith('"', pos):
                quoted, pos = True, pos + 1
            else:
                pos = _unquoted_cell(line, pos, cells, path, number)
            if pos is None:  # the row ends on this line
                yield start, cells
                cells = []
    if quoted:
        raise FileFormatError(path, "malformed CSV (a quoted cell that never ends)", line=start)


def _row_size(size: int, path: str | os.PathLike[str], start: int) -> int:
    if size > MAX_LINE_LENGTH:
        raise FileFormatError(path, f"a row longer than {MAX_LINE_LENGTH:,} characters (simscore.io.reading.MAX_LINE_LENGTH)",
                              line=start)
    return size


def _blank_row(line: str, number: int, path: str | os.PathLike[str]) -> bool:
    """Whether the line that starts a row is blank (a row without cells); a byte-order mark is an error past line 1."""
    if number > 1 and line.startswith("\ufeff"):
        raise FileFormatError(
            path, "a byte-order mark (U+FEFF) at column 1, where only the file's start may hold one "
            "(were files joined?)", line=number,
        )
    return not line.rstrip("\r\n")


def _quoted_cell(line: str, pos: int, parts: list[str]) -> int | None:
    """Read a quoted cell's text from ``pos`` into ``parts`` (doubled quotes as one): the position
    after its closing quote, or None if the cell goes on on the next line."""
    while True:
        close = line.find('"', pos)
        if close < 0:
            parts.append(line[pos:])
            return None
        parts.append(line[pos:close])
        if not line.startswith('"', close + 1):
            return close + 1
        parts.append('"')
        pos = close + 2


def _after_quoted_cell(line: str, pos: int, path: str | os.PathLike[str], number: int) -> int | None:
    """After a closing quote: the next cell's start (a comma), None at the end of the row, else an error."""
    if line.startswith(",", pos):
        return pos + 1
    if line[pos:] not in ("", "\n", "\r", "\r\n"):
        raise FileFormatError(path, f"malformed CSV (',' expected after '\"', at column {pos + 1})", line=number)
    return None


def _unquoted_cell(line: str, pos: int, cells: list[str], path: str | os.PathLike[str], number: int) -> int | None:
    """Append the unquoted cell at ``pos`` to ``cells``: the next cell's start, or None at the end of the row."""
    comma = line.find(",", pos)
    cell = line[pos:] if comma < 0 else line[pos:comma]
    if comma < 0:
        cell = cell.removesuffix("\n").removesuffix("\r")
    if "\r" in cell or "\n" in cell:
        raise FileFormatError(path, "malformed CSV (a line break inside an unquoted cell)", line=number)
    cells.append(cell)
    return None if comma < 0 else comma + 1


def _csv_lines(handle: IO[str], path: str | os.PathLike[str], expected: str) -> Iterator[tuple[int, str]]:
    """:func:`read_lines` of a CSV file, which must not be a JSON file of simscore's (named by its kind if it is)."""
    lines = read_lines(handle, path)
    ahead = list(itertools.islice(lines, 1))
    if ahead and ahead[0][1].lstrip("\ufeff \t\r\n").startswith("{"):  # JSON: look at its start (a few lines)
        while sum(len(line) for _, line in ahead) < _SNIFF_CHARACTERS and len(ahead) < 64:
            more = list(itertools.islice(lines, 1))
            if not more:
                break
            ahead.extend(more)
        found = detect_format("".join(line for _, line in ahead)[:_SNIFF_CHARACTERS])
        if found in FILE_FORMATS:
            raise FileFormatError(path, kind_mismatch(found, expected), line=1)
    return itertools.chain(ahead, lines)


def read_bytes(path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """The whole file, at most ``limit`` bytes (default :data:`MAX_FILE_BYTES`).

    A regular file larger than the limit is refused before any byte is read (its size is
    known); a pipe or a device is read up to the limit and refused there.

    Raises
    ------
    FileFormatError
        The file is missing, is a directory, or is longer than the limit (found after reading
        no more than the limit: a device or a pipe that never ends costs bounded memory).
    """
    p = Path(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    name = "simscore.io.reading.MAX_FILE_BYTES" if limit == MAX_FILE_BYTES else "the limit of this kind of file"
    with open_input(p) as handle:
        info = os.fstat(handle.fileno())
        size = info.st_size if stat.S_ISREG(info.st_mode) else 0
        if size > limit:
            raise FileFormatError(p, f"larger than {limit:,} bytes ({name}): {size:,} bytes")
        # read what a regular file says it holds, then in chunks (a pipe or a device says 0):
        # never more than limit + 1 bytes, and never a buffer of that size up front
        chunks = [handle.read(size + 1)]
        total = len(chunks[0])
        while chunks[-1] and total <= limit:
            chunks.append(handle.read(min(2**20, limit + 1 - total)))
            total += len(chunks[-1])
    data = chunks[0] if len(chunks) <= 2 and not chunks[-1] else b"".join(chunks)
    if len(data) > limit:
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
        raise FileFormatError(path, f"expected a JSON object, got {json_kind(obj)}", line=number)
    return obj
