"""The CSV form of simscore's responses files, and :func:`read_responses` for either form.

simscore's own responses file is JSON Lines (:meth:`Responses.to_jsonl
<simscore.responses.Responses.to_jsonl>`); systems outside Python often log a CSV instead:
a header row with the columns ``context_id, action, text`` (any order; ``action`` or ``text``
may be left out), then one response per row, an empty cell meaning missing.
:func:`read_responses_csv` and :func:`write_responses_csv` read and write that form, and
:func:`read_responses` reads either (by suffix or content) — what ``simscore compare`` and
:class:`policies.adapters.LoggedPolicy` read.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Literal

from simscore.acts import Act
from simscore.errors import ActParseError, FileFormatError, InvalidResponseError, excerpt
from simscore.io import atomic_open, open_input, prepare_output, read_csv_rows, read_head
from simscore.io.untrusted import read_spreadsheet_cell, spreadsheet_cell
from simscore.responses import Response, Responses
from simscore.samples import SampledResponses

__all__ = ["CSV_COLUMNS", "read_responses", "read_sampled_responses", "read_responses_csv", "write_responses_csv",
           "response_file_format"]

#: Columns of a CSV response log, in the order :func:`write_responses_csv` writes them.
CSV_COLUMNS: tuple[str, ...] = ("context_id", "action", "text")

_JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
_CSV_LOG = "a CSV response log (columns context_id, action, text)"
#: How much of a file :func:`response_file_format` looks at.
_HEAD_BYTES = 4096


def read_responses_csv(
    path: str | os.PathLike[str], *, policy: str | None = None, stream: IO[bytes] | None = None
) -> Responses:
    """Read a CSV response log: a header row, then one response per row.

    Columns (any order): ``context_id`` (required, non-empty, unique), ``action`` (a PyDial
    act string) and ``text``; at least one of ``action`` and ``text`` must be present, and
    no other column. An empty cell means missing (so a CSV log cannot hold an empty text
    ``""``; use JSON Lines for that); every row needs an action or a text. Blank lines are
    skipped; a leading apostrophe before a formula character is dropped (what
    :func:`write_responses_csv` adds so that spreadsheets do not run the cell); the file is
    UTF-8 (a byte-order mark is accepted at its start); a row, and so a cell, may be up to
    :data:`simscore.io.reading.MAX_LINE_LENGTH` characters long (:func:`simscore.io.read_csv_rows`,
    which leaves the :mod:`csv` module's process-wide field limit alone). The file is read once
    from its start, so a pipe works.

    Parameters
    ----------
    path : path-like
    policy : str, optional
        Policy name of the result (default: the file name without its suffix).
    stream : binary file, optional
        Read this open stream instead of opening ``path``, which then only names it.

    Returns
    -------
    Responses
        In file order, with empty provenance.

    Raises
    ------
    FileFormatError
        Naming the file and the (first physical) line of the bad row: missing or unknown
        columns, a row with the wrong number of cells, an empty or repeated context id, an
        action that does not parse, a row with neither action nor text, malformed CSV, a
        JSON file of simscore's (named by its kind).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text('context_id,action,text\\nc1,request(food),What food?\\nc2,,Bye!\\n')
    >>> r = read_responses_csv(path)
    >>> r.policy, r["c1"].action, r["c2"]
    ('log', Act.parse('request(food)'), Response(action=None, text='Bye!'))
    """
    p = Path(path)
    source = open_input(p) if stream is None else stream
    with io.TextIOWrapper(source, encoding="utf-8-sig", newline="") as handle:
        try:
            pairs = _read_csv_rows(p, read_csv_rows(handle, p, expected=_CSV_LOG))
        except UnicodeDecodeError as exc:
            raise FileFormatError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return Responses(pairs, policy=p.stem if policy is None else policy)


def _read_csv_rows(path: Path, rows: Iterator[tuple[int, list[str]]]) -> dict[str, Response]:
    header_line, row = next(((number, row) for number, row in rows if row), (1, []))
    if not row:
        raise FileFormatError(path, "empty file, expected a header row 'context_id,action,text'", line=1)
    header = [cell.strip() for cell in row]
    unknown = [cell for cell in header if cell not in CSV_COLUMNS]
    if unknown:
        raise FileFormatError(
            path,
            f"unknown column(s) {', '.join(map(excerpt, unknown[:5]))} in the header (expected {', '.join(CSV_COLUMNS)})",
            line=header_line,
        )
    repeated = sorted({cell for cell in header if header.count(cell) > 1})
    if repeated:
        raise FileFormatError(
            path, f"column(s) {', '.join(map(repr, repeated))} appear more than once", line=header_line
        )
    if "context_id" not in header:
        raise FileFormatError(path, "the header lacks the column 'context_id'", line=header_line)
    if "action" not in header and "text" not in header:
        raise FileFormatError(path, "the header needs a column 'action', 'text' or both", line=header_line)
    width = len(header)
    id_at = header.index("context_id")
    action_at = header.index("action") if "action" in header else None
    text_at = header.index("text") if "text" in header else None
    pairs: dict[str, Response] = {}
    first_line: dict[str, int] = {}
    parsed: dict[str, Act] = {}
    for start, row in rows:
        if not row:
            continue
        if len(row) != width:
            raise FileFormatError(
                path, f"expected {width} cells ({', '.join(header)}), found {len(row)}", line=start
            )
        row = [read_spreadsheet_cell(cell) for cell in row]
        context_id = row[id_at]
        if not context_id:
            raise FileFormatError(path, "empty 'context_id'", line=start)
        if context_id in pairs:
            raise FileFormatError(
                path,
                f"context id {excerpt(context_id)} appears more than once (first on line {first_line[context_id]})",
                line=start,
            )
        action_text = row[action_at] if action_at is not None else ""
        text = row[text_at] if text_at is not None else ""
        action: Act | None = None
        if action_text:
            action = parsed.get(action_text)
            if action is None:
                try:
                    action = parsed[action_text] = Act.parse(action_text)
                except ActParseError as exc:
                    raise FileFormatError(path, f"column 'action': {exc}", line=start) from None
        if action is None and not text:
            raise FileFormatError(path, f"context {excerpt(context_id)} has neither an action nor a text", line=start)
        pairs[context_id] = Response(action, text or None)
        first_line[context_id] = start
    return pairs


def write_responses_csv(
    path: str | os.PathLike[str], responses: Responses | Mapping[str, Response], *, overwrite: bool = False
) -> None:
    """Write responses as a CSV response log (columns ``context_id, action, text``), atomically.

    Missing actions and texts are written as empty cells; the policy name and provenance are
    not stored (CSV has no header line for them — use
    :meth:`Responses.to_jsonl <simscore.responses.Responses.to_jsonl>` to keep them). An
    existing file is replaced only with ``overwrite=True``. A cell that a spreadsheet would run
    as a formula (a text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return,
    and not a plain number) is written with a leading apostrophe
    (:func:`simscore.io.untrusted.spreadsheet_cell`), which :func:`read_responses_csv` removes.

    Raises
    ------
    simscore.errors.OutputExistsError
        ``path`` exists and ``overwrite`` is false (checked before any work).
    InvalidResponseError
        Naming the context whose text is ``""``: an empty cell reads back as missing, so an
        empty text cannot be stored in CSV.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> write_responses_csv(path, {"c1": Response(Act.parse('inform(name="la mimosa")'), "La Mimosa, then.")})
    >>> print(path.read_text(), end="")
    context_id,action,text
    c1,"inform(name=""la mimosa"")","La Mimosa, then."
    >>> dict(read_responses_csv(path)) == {"c1": Response(Act.parse('inform(name="la mimosa")'), "La Mimosa, then.")}
    True
    """
    prepare_output(path, overwrite=overwrite)
    rows = []
    for context_id, response in responses.items():
        if not isinstance(response, Response):
            raise InvalidResponseError(
                f"response for context {context_id!r} must be a Response, got {type(response).__name__}"
            )
        if response.text == "":
            raise InvalidResponseError(
                f"context {context_id!r}: an empty text cannot be written to CSV (an empty cell means "
                "missing); use Responses.to_jsonl"
            )
        action = "" if response.action is None else str(response.action)
        rows.append(tuple(spreadsheet_cell(cell) for cell in (context_id, action, response.text or "")))
    with atomic_open(path, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows)


def response_file_format(
    path: str | os.PathLike[str], requested: str = "auto", *, head: bytes | None = None
) -> Literal["jsonl", "csv"]:
    """The format :func:`read_responses` reads ``path`` in: ``requested``, or for ``"auto"`` by suffix or content.

    ``.csv`` is CSV; ``.jsonl``, ``.json`` and ``.ndjson`` are JSON Lines; any other file is
    JSON Lines if it starts with ``{`` (after a byte-order mark and blanks), CSV if not. The
    content is ``head`` (the file's first bytes, which a caller that goes on reading the same
    stream has looked at: :func:`simscore.io.read_head`), else read from ``path``.

    >>> response_file_format("log.ndjson"), response_file_format("log.txt", "csv")
    ('jsonl', 'csv')
    >>> response_file_format("/dev/stdin", head=b'\\xef\\xbb\\xbf {"format": ')
    'jsonl'
    """
    if requested == "jsonl":
        return "jsonl"
    if requested == "csv":
        return "csv"
    if requested != "auto":
        raise ValueError(f"format must be 'auto', 'jsonl' or 'csv', got {requested!r}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if head is None:
        with open_input(path) as handle:
            head = handle.read(_HEAD_BYTES)
    return "jsonl" if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "csv"


def read_responses(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "jsonl", "csv"] = "auto",  # noqa: A002
    stream: IO[bytes] | None = None,
) -> Responses:
    """Read a response log: simscore's JSON Lines responses file or the CSV form.

    The file is read once from its start (its first bytes looked at where the format is told
    by content), so a pipe works as well as a file: ``simscore compare <(zcat a.jsonl.gz)
    b.csv``, ``... | simscore compare /dev/stdin b.jsonl``.

    Parameters
    ----------
    path : path-like
    format : {"auto", "jsonl", "csv"}, default "auto"
        ``"jsonl"``: :meth:`Responses.read_jsonl <simscore.responses.Responses.read_jsonl>`;
        ``"csv"``: :func:`read_responses_csv`; ``"auto"``: by suffix (``.csv``; ``.jsonl``,
        ``.json``, ``.ndjson``), otherwise JSON Lines if the file starts with ``{`` and CSV
        if not.
    stream : binary file, optional
        Read this open stream instead of opening ``path``, which then only names it.

    Raises
    ------
    FileFormatError
        Naming the file and the line of the first bad record; a file of another of
        simscore's kinds is named as such.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "answers.txt"
    >>> _ = path.write_text("context_id,action\\nc1,bye()\\n")
    >>> read_responses(path)["c1"].action
    Act.parse('bye()')
    """
    p = Path(path)
    chosen, stream = _format_and_stream(p, format, stream)
    if chosen == "jsonl":
        return Responses.read_jsonl(p, stream=stream)
    return read_responses_csv(p, stream=stream)


def _format_and_stream(p: Path, format: str, stream: IO[bytes] | None) -> tuple[str, IO[bytes] | None]:  # noqa: A002
    """The format of ``p`` (:func:`response_file_format`) and the stream to read it from."""
    if format == "auto" and p.suffix.lower() not in (".csv", *_JSONL_SUFFIXES):
        # told by content: look at the first bytes of the one stream that is read
        head, stream = read_head(open_input(p) if stream is None else stream, _HEAD_BYTES)
        return response_file_format(p, format, head=head), stream
    return response_file_format(p, format), stream


def read_sampled_responses(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "jsonl", "csv"] = "auto",  # noqa: A002
    stream: IO[bytes] | None = None,
) -> SampledResponses:
    """Read a response log with one or several samples per context, as :func:`read_responses` tells its format.

    JSON Lines: version 2 (K samples per context, :mod:`simscore.samples`) or version 1 (one
    sample); a CSV log holds one sample per context. What ``simscore compare`` reads.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "answers.csv"
    >>> _ = path.write_text("context_id,action\\nc1,bye()\\n")
    >>> read_sampled_responses(path).n_samples
    1
    """
    p = Path(path)
    chosen, stream = _format_and_stream(p, format, stream)
    if chosen == "jsonl":
        return SampledResponses.read_jsonl(p, stream=stream)
    return SampledResponses.single(read_responses_csv(p, stream=stream))
