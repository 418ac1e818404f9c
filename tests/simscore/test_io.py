"""Tests of simscore.io: bytes that are not UTF-8 are a FileFormatError naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from contexts.context import ContextSet
from contexts.domain import load_domain
from simscore.errors import FileFormatError
from simscore.io import read_jsonl, read_text
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
