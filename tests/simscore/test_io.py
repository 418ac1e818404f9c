"""Tests of simscore.io: bad bytes, too long lines, endless input and deep nesting are FileFormatErrors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

import simscore.io
from contexts.context import ContextSet
from contexts.domain import load_domain
from simscore.errors import FileFormatError
from simscore.io import format_problem, parse_json, prepare_output, read_bytes, read_json, read_jsonl, read_text
from simscore.responses import Responses
from simscore.tables_io import load_tables


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
    monkeypatch.setattr(simscore.io, "MAX_LINE_LENGTH", 100)
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"format": "x", "version": 1}\n' + b'{"a": "' + b"y" * 200 + b'"}\n{"a": 1}\n')
    header, records = read_jsonl(path, format_name="x", versions=(1,))
    with pytest.raises(FileFormatError, match=r"r\.jsonl, line 2: line longer than 100 bytes \(simscore\.io\.MAX_LINE_LENGTH\)"):
        list(records)
    path.write_bytes(b'{"format": "x", "version": 1}\n' + b'{"a": "' + b"y" * 91 + b'"}\n')  # exactly 100 bytes
    assert [record for _, record in read_jsonl(path, format_name="x", versions=(1,))[1]] == [{"a": "y" * 91}]


def test_endless_input_costs_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simscore.io, "MAX_FILE_BYTES", 2**20)
    with pytest.raises(FileFormatError, match=r"/dev/zero: larger than 1,048,576 bytes \(simscore\.io\.MAX_FILE_BYTES\)"):
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


@pytest.mark.parametrize("version", [True, 1.0, "1", None])
def test_a_version_is_an_integer_not_something_equal_to_one(version: object) -> None:
    assert format_problem({"format": "x", "version": version}, "x", (1,)) == (
        f"unsupported format version {version!r} (this simscore reads version 1)"
    )


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
