"""Tests of simscore.io: bad bytes, too long lines, endless input and deep nesting are FileFormatErrors naming file and line.

Also: sizes known before reading, inputs read once (FIFOs fed by a thread), CSV rows checked
against the csv module's own, and messages that name a mid-file BOM, a bad header and cut what
they quote.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import threading
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simscore.io.reading
from contexts.context import ContextSet
from contexts.domain import load_domain
from simscore.analysis.tables_io import load_tables
from simscore.errors import FileFormatError
from simscore.io import (
    format_problem,
    parse_json,
    prepare_output,
    read_bytes,
    read_csv_rows,
    read_head,
    read_json,
    read_jsonl,
    read_text,
)
from simscore.io.formats import FILE_FORMATS
from simscore.responses import Response, Responses
from simscore.responses_csv import read_responses, read_responses_csv, write_responses_csv

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_read_text_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbfline one\nline \xff two\n")
    with pytest.raises(FileFormatError, match=r"line 2: not UTF-8 text: byte 0xff at column 6") as info:
        read_text(path)
    assert info.value.line == 2
    path.write_bytes(b"\xef\xbb\xbfok\n")
    assert read_text(path) == "ok\n"  # the BOM is dropped
    with pytest.raises(FileFormatError, match="is a directory"):
        read_text(tmp_path)


def test_jsonl_bad_byte_in_header_and_record(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"format": "x", "version": 1}\n{"a": 1}\n{"a": "\xff"}\n')
    header, records = read_jsonl(path, format_name="x", versions=(1,))
    assert header["version"] == 1
    with pytest.raises(FileFormatError, match=r"line 3: not UTF-8 text: byte 0xff at column 8") as info:
        list(records)
    assert str(path) in str(info.value)
    path.write_bytes(b'{"format": "\xfe"}\n')
    with pytest.raises(FileFormatError, match="line 1: not UTF-8 text: byte 0xfe"):
        read_jsonl(path, format_name="x", versions=(1,))


@pytest.mark.parametrize(
    "reader, name",
    [
        (Responses.read_jsonl, "responses.jsonl"),
        (ContextSet.read_jsonl, "contexts.jsonl"),
        (lambda path: load_tables(path.parent), "tables.json"),
    ],
)
def test_every_reader_reports_bad_bytes(tmp_path: Path, reader, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\x80\x81 not text\n")
    with pytest.raises(FileFormatError, match="line 1: not UTF-8 text: byte 0x80 at column 1"):
        reader(path)
    assert path.read_bytes() == b"\x80\x81 not text\n"  # the input is left as it was


def test_domain_files_report_bad_bytes(tmp_path: Path) -> None:
    (tmp_path / "ontology.json").write_bytes(b'{\n "x": "\xff"}\n')
    (tmp_path / "venues.csv").write_bytes(b"name\n")
    with pytest.raises(FileFormatError, match="line 2: not UTF-8 text"):
        load_domain(tmp_path / "ontology.json", tmp_path / "venues.csv")


# ----------------------------------------------------------------------------- named limits


def test_a_line_longer_than_the_limit_is_named_without_reading_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simscore.io.reading, "MAX_LINE_LENGTH", 100)
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"format": "x", "version": 1}\n' + b'{"a": "' + b"y" * 200 + b'"}\n{"a": 1}\n')
    header, records = read_jsonl(path, format_name="x", versions=(1,))
    with pytest.raises(FileFormatError, match=r"r\.jsonl, line 2: line longer than 100 bytes \(simscore\.io\.reading\.MAX_LINE_LENGTH\)"):
        list(records)
    path.write_bytes(b'{"format": "x", "version": 1}\n' + b'{"a": "' + b"y" * 91 + b'"}\n')  # exactly 100 bytes
    assert [record for _, record in read_jsonl(path, format_name="x", versions=(1,))[1]] == [{"a": "y" * 91}]


def test_endless_input_costs_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simscore.io.reading, "MAX_FILE_BYTES", 2**20)
    with pytest.raises(FileFormatError, match=r"/dev/zero: larger than 1,048,576 bytes \(simscore\.io\.reading\.MAX_FILE_BYTES\)"):
        read_text("/dev/zero")
    with pytest.raises(FileFormatError, match=r"/dev/zero: larger than 10 bytes \(the limit of this kind of file\)"):
        read_bytes("/dev/zero", limit=10)
    with pytest.raises(FileFormatError, match=r"/dev/zero, line 1: line longer than 16,777,216 bytes"):
        read_jsonl("/dev/zero", format_name="x", versions=(1,))


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[" * 100_000 + "]" * 100_000, 1),  # beyond Python's recursion: the decoder's RecursionError, named
        ('{"a": 1,\n "b":\n' + "[" * 65 + "]" * 65 + "}", 3),  # within it, but deeper than the limit
        ("[" * 65 + "\n" + "]" * 65, 1),
    ],
)
def test_nesting_beyond_the_limit_is_named_with_its_line(text: str, line: int) -> None:
    with pytest.raises(FileFormatError, match=rf"d\.json, line {line}: arrays and objects nested deeper than 64 levels"):
        parse_json(text, "d.json")


def test_brackets_in_strings_do_not_count_as_nesting() -> None:
    inside = '"' + "[{" * 100 + '\\"' + "[" * 100 + '\\\\"'
    text = "[" * 64 + "{\"s\": " + inside + ', "t": "\\\\\\\\[" }' + "]" * 64
    assert parse_json(text.replace("[" * 64 + "{", "[" * 63 + "{").replace("]" * 64, "]" * 63), "x")  # 64 levels
    with pytest.raises(FileFormatError, match="nested deeper than 64"):
        parse_json(text, "x")  # 65 levels: the brackets in the strings are not among them


def test_json_errors_name_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{\n  "a": 1,\n  "b": ]\n}\n', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"x\.json, line 3: invalid JSON \(Expecting value, column 8\)"):
        read_json(path)
    path.write_text('{"a": Infinity}', encoding="utf-8")
    with pytest.raises(FileFormatError, match="non-standard JSON number Infinity"):
        read_json(path)


@pytest.mark.parametrize(("version", "shown"), [(True, "true"), (1.0, "1.0"), ("1", "'1'"), (None, "null")])
def test_a_version_is_an_integer_not_something_equal_to_one(version: object, shown: str) -> None:
    # spelt as the JSON file spells it
    assert format_problem({"format": "x", "version": version}, "x", (1,)) == (
        f"unsupported format version {shown} (this simscore reads version 1)"
    )
    assert format_problem({"version": 1}, "x", (1,)) == "format is missing, expected 'x'"


@pytest.mark.parametrize("where", ["/proc/simscore-out.json", "/proc/no-such-folder/out.json"])
def test_an_unwritable_location_is_found_before_any_work(where: str) -> None:
    if not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    with pytest.raises(PermissionError, match=r"/proc is not writable \(.*\): cannot write " + where):
        prepare_output(where)


def test_checking_a_location_leaves_nothing_behind(tmp_path: Path) -> None:
    prepare_output(tmp_path / "out.json")
    prepare_output(tmp_path / "new" / "deeper" / "out.json")
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- sizes known before reading


def test_a_regular_file_over_the_limit_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simscore.io.reading, "MAX_FILE_BYTES", 64 * 2**20)
    sparse = tmp_path / "big.json"
    with open(sparse, "wb") as handle:
        handle.truncate(64 * 2**20 + 1)  # a sparse file: no block on disk, no byte read
    tracemalloc.start()
    try:
        with pytest.raises(FileFormatError, match=r"big\.json: larger than 67,108,864 bytes "
                                                  r"\(simscore\.io\.reading\.MAX_FILE_BYTES\): 67,108,865 bytes$"):
            read_json(sparse)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20  # was the limit and more: 64 MiB read before the refusal
    with pytest.raises(FileFormatError, match=r"larger than 1,000 bytes \(the limit of this kind of file\): 67,108,865"):
        read_bytes(sparse, limit=1000)


def test_a_stream_over_the_limit_is_read_up_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simscore.io.reading, "MAX_FILE_BYTES", 2**20)
    fifo = FifoWriter(tmp_path / "endless.json", b"[" + b" " * (2**20) + b"]")
    with pytest.raises(FileFormatError, match=r"endless\.json: larger than 1,048,576 bytes \(simscore\.io\.reading\.MAX_FILE_BYTES\)$"):
        read_json(fifo.path)
    fifo.finish()


# ----------------------------------------------------------------------------- inputs read once: pipes and FIFOs


class FifoWriter:
    """A FIFO at ``path`` and a thread that writes ``data`` into it (stopping when the reader leaves)."""

    def __init__(self, path: Path, data: bytes) -> None:
        os.mkfifo(path)
        self.path = path
        self.thread = threading.Thread(target=self._write, args=(data,), daemon=True)
        self.thread.start()

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(BrokenPipeError), open(self.path, "wb") as handle:
            handle.write(data)

    def finish(self) -> None:
        """Wait for the writer; if no reader ever opened the FIFO, open and drop it so the writer ends."""
        with contextlib.suppress(OSError):
            os.close(os.open(self.path, os.O_RDONLY | os.O_NONBLOCK))
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


def test_every_kind_of_responses_file_reads_from_a_fifo(tmp_path: Path) -> None:
    a = Responses.read_jsonl(EXAMPLES / "responses_a.jsonl")
    write_responses_csv(tmp_path / "a.csv", a)
    for name, data in [("jsonl", (EXAMPLES / "responses_a.jsonl").read_bytes()), ("csv", (tmp_path / "a.csv").read_bytes())]:
        fifo = FifoWriter(tmp_path / f"fifo-{name}", data)  # no suffix: the format is told by content
        read = read_responses(fifo.path)
        fifo.finish()
        assert dict(read) == dict(a), name


def test_a_logged_policy_reads_a_fifo_once_and_digests_it(tmp_path: Path) -> None:
    from policies.adapters import LoggedPolicy

    data = (EXAMPLES / "responses_a.jsonl").read_bytes()
    fifo = FifoWriter(tmp_path / "log", data)
    policy = LoggedPolicy.from_file(fifo.path)
    fifo.finish()
    assert policy.provenance["log_sha256"] == hashlib.sha256(data).hexdigest()
    assert policy.provenance["log_format"] == "jsonl" and len(policy) == 24
    assert LoggedPolicy.from_file(EXAMPLES / "responses_a.jsonl").provenance["log_sha256"] == hashlib.sha256(data).hexdigest()


def test_read_head_gives_the_whole_stream_again() -> None:
    for size in (0, 1, 5, 4096, 10_000):
        data = bytes(range(256)) * 20
        head, again = read_head(io.BytesIO(data), size)
        assert head == data[:size] and again.read() == data
        again.close()


# ----------------------------------------------------------------------------- CSV without the csv module's limit


def test_a_csv_cell_may_be_as_long_as_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit_before = csv.field_size_limit()
    text = "x" * 200_000 + ', "quoted", and\na line break'
    path = tmp_path / "long.csv"
    write_responses_csv(path, {"c1": Response(text=text)})
    assert read_responses_csv(path)["c1"].text == text  # was: field larger than field limit (131072)
    assert csv.field_size_limit() == limit_before  # the process-wide setting is left alone
    monkeypatch.setattr(simscore.io.reading, "MAX_LINE_LENGTH", 100_000)
    with pytest.raises(FileFormatError, match=r"long\.csv, line 2: line longer than 100,000 characters \(simscore\.io\.reading\.MAX_LINE_LENGTH\)"):
        read_responses_csv(path)
    # a row of many short lines (one quoted cell) is bounded as a whole, from its first line
    write_responses_csv(path, {"c1": Response(text="ok"), "c2": Response(text="y\n" * 60_000)}, overwrite=True)
    with pytest.raises(FileFormatError, match=r"long\.csv, line 3: a row longer than 100,000 characters \(simscore\.io\.reading\.MAX_LINE_LENGTH\)"):
        read_responses_csv(path)


_CSV_TEXT = st.text(alphabet='ab,"\n\r \ufeff', max_size=40)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(text=_CSV_TEXT)
def test_csv_rows_are_the_csv_modules_strict_rows(text: str) -> None:
    """Wherever the csv module reads a text strictly, read_csv_rows reads the same rows; where it refuses, so does this."""
    try:
        expected: list[list[str]] | None = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error:
        expected = None
    try:
        rows: list[list[str]] | None = [row for _, row in read_csv_rows(io.StringIO(text, newline=""), "x.csv")]
    except FileFormatError as exc:
        if "byte-order mark" in str(exc):  # a BOM starting a later row: refused here, a cell's start for csv
            return
        rows = None
    assert rows == expected, (text, rows, expected)


def test_csv_errors_name_the_line() -> None:
    cases = {
        'a,b\n"c"d,e\n': r"x\.csv, line 2: malformed CSV \(',' expected after '\"', at column 4\)",
        'a,b\nc,"never\nends\n': r"x\.csv, line 2: malformed CSV \(a quoted cell that never ends\)",
        'a,b\nc\rd,e\n': None,  # a lone carriage return ends a line, as in the csv module
        "a,b\n\ufeffc,d\n": r"x\.csv, line 2: a byte-order mark \(U\+FEFF\) at column 1",
    }
    for text, message in cases.items():
        if message is None:
            assert [row for _, row in read_csv_rows(io.StringIO(text, newline=""), "x.csv")] == [["a", "b"], ["c"], ["d", "e"]]
            continue
        with pytest.raises(FileFormatError, match=message):
            list(read_csv_rows(io.StringIO(text, newline=""), "x.csv"))


# ----------------------------------------------------------------------------- messages


def test_a_bom_in_the_middle_of_a_file_is_named(tmp_path: Path) -> None:
    lines = (EXAMPLES / "responses_a.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    joined = tmp_path / "joined.jsonl"
    joined.write_text("\ufeff" + lines[0] + "\ufeff" + "".join(lines[1:]), encoding="utf-8")  # two files cat-ed
    with pytest.raises(FileFormatError, match=r"joined\.jsonl, line 2: a byte-order mark \(U\+FEFF\) at column 1, where "
                                              r"only the file's start may hold one \(were files joined\?\)$"):
        Responses.read_jsonl(joined)
    document = tmp_path / "doc.json"
    document.write_text('{\n "a": 1,\n\ufeff "b": 2}', encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"doc\.json, line 3: a byte-order mark \(U\+FEFF\) at column 1"):
        read_json(document)


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"x": 1}, r"header field 'policy' must be a string or null, got object \{'x': 1\}"),
        ([1, 2], r"header field 'policy' must be a string or null, got array \[1, 2\]"),
        (7, r"header field 'policy' must be a string or null, got number 7"),
        (True, r"header field 'policy' must be a string or null, got boolean True"),
    ],
)
def test_a_responses_header_policy_is_a_string_or_null(tmp_path: Path, policy: object, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"format": "simscore-responses", "version": 1, "policy": policy}) + "\n"
                    + json.dumps({"context_id": "c1", "text": "hi"}) + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"r\.jsonl, line 1: " + message):
        Responses.read_jsonl(path)


def test_a_null_policy_is_no_name(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"format": "simscore-responses", "version": 1, "policy": null}\n{"context_id": "c1", "text": "hi"}\n')
    assert Responses.read_jsonl(path).policy == ""  # was the string 'None'


def test_an_echoed_input_is_cut_in_every_message(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    act = "inform(" + "x" * 100_000
    path.write_text('{"format": "simscore-responses", "version": 1}\n' + json.dumps({"context_id": "c1", "action": act}) + "\n")
    with pytest.raises(FileFormatError) as info:
        Responses.read_jsonl(path)
    message = str(info.value)
    assert len(message) < 400, len(message)  # was 100,082 characters
    assert "cannot parse act 'inform(xxx" in message and "... (100,007 characters): unbalanced parentheses" in message
    # the backstop: a reason built without excerpt() is cut in its middle, keeping both ends
    error = FileFormatError("f.json", "start " + "y" * 10_000 + " end", line=3)
    assert len(str(error)) < 1100 and str(error).startswith("f.json, line 3: start yyy") and str(error).endswith("yyy end")
    assert " ... [9,060 characters left out] ... " in str(error)


def test_every_format_constant_is_known() -> None:
    """Every ``*_FORMAT`` of the three packages has a description in FILE_FORMATS (a new format fails here)."""
    import importlib
    import pkgutil

    import contexts
    import policies
    import simscore

    found = {}
    for package in (simscore, contexts, policies):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            try:
                module = importlib.import_module(info.name)
            except ImportError:
                continue  # an optional extra
            for name, value in vars(module).items():
                if name.endswith("FORMAT") and isinstance(value, str) and value.startswith("simscore"):
                    found[f"{info.name}.{name}"] = value
    assert len(set(found.values())) >= 13
    assert {name: value for name, value in found.items() if value not in FILE_FORMATS} == {}


def test_a_lone_surrogate_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    # JSON lets "\ud800" stand alone; no UTF-8 file can hold it, so writing the contexts failed later
    # with a bare UnicodeEncodeError naming no file or line
    assert parse_json(r'{"a": "\ud83d\ude00", "b": "\\ud800"}', "x.json") == {"a": "\U0001f600", "b": "\\ud800"}
    with pytest.raises(FileFormatError, match=r"^x.jsonl, line 4: a lone surrogate \(\\ud800\) in a string: half of a "
                                              r"UTF-16 pair, not a character$"):
        parse_json(r'{"m": [{"content": "hi \ud800"}]}', "x.jsonl", line=4)
    with pytest.raises(FileFormatError, match=r"^x.json, line 3: a lone surrogate \(\\udc00\)"):
        parse_json('{\n"a":\n "\\udc00"}', "x.json")
    chats = tmp_path / "chats.jsonl"
    chats.write_text('{"id": "s", "messages": [{"role": "user", "content": "hi \\ud800"}, '
                     '{"role": "assistant", "content": "ok"}]}\n', encoding="utf-8")
    from contexts.transcripts import read_chat_transcripts

    with pytest.raises(FileFormatError, match=r"chats.jsonl, line 1: a lone surrogate \(\\ud800\)"):
        read_chat_transcripts(chats)
