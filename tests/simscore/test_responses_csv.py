"""The CSV form of simscore's responses files (simscore.responses_csv): reading, writing, errors."""

from __future__ import annotations

import pytest

from simscore import Act, Response, Responses
from simscore.errors import FileFormatError, InvalidResponseError
from simscore.responses_csv import (
    CSV_COLUMNS,
    read_responses,
    read_responses_csv,
    response_file_format,
    write_responses_csv,
)

LOGGED = Responses(
    {
        "c0": Response(Act.parse("request(food)"), "What kind of food would you like?"),
        "c1": Response(Act.parse("confirm(food=thai)")),
        "c2": Response(Act.parse('inform(name="bangkok house",phone="01223 000000")'), 'Bangkok House, "01223 000000",\nenjoy — café!'),
    },
    policy="system-b",
)


def test_csv_round_trip_and_format_detection(tmp_path):
    path = tmp_path / "system_b.csv"
    write_responses_csv(path, LOGGED)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[:3] == ["context_id,action,text", "c0,request(food),What kind of food would you like?", "c1,confirm(food=thai),"]
    assert dict(read_responses_csv(path)) == dict(LOGGED) and read_responses_csv(path).policy == "system_b"
    assert dict(read_responses(path)) == dict(LOGGED)
    jsonl = tmp_path / "responses.log"
    LOGGED.to_jsonl(jsonl)
    assert response_file_format(jsonl) == "jsonl" and read_responses(jsonl).policy == "system-b"
    other = tmp_path / "responses.txt"
    write_responses_csv(other, LOGGED)
    assert response_file_format(other) == "csv" and response_file_format(other, "jsonl") == "jsonl"
    with pytest.raises(ValueError, match="format must be 'auto', 'jsonl' or 'csv', got 'tsv'"):
        response_file_format(other, "tsv")
    with pytest.raises(FileFormatError, match="file not found"):
        read_responses(tmp_path / "missing.log")


def test_csv_file_problems(tmp_path):
    with pytest.raises(FileFormatError, match="file not found"):
        read_responses_csv(tmp_path / "missing.csv")
    with pytest.raises(FileFormatError, match="is a directory"):
        read_responses_csv(tmp_path)
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("context_id,text\nc0,caf\xe9\n".encode("latin-1"))
    with pytest.raises(FileFormatError, match="not UTF-8 text"):
        read_responses_csv(latin1)


def test_hand_written_csv(tmp_path):
    # column order free, a byte-order mark, Windows line ends, blank lines, quoted multi-line text
    path = tmp_path / "export.csv"
    path.write_bytes(
        "\ufefftext,context_id,action\r\n"
        "\r\n"
        'What food?,c0,request(food)\r\n'
        '"Two\r\nlines",c1,\r\n'
        ',c2,"inform(name=""bangkok house"")"\r\n'.encode("utf-8")
    )
    responses = read_responses_csv(path, policy="exported")
    assert responses.policy == "exported" and responses.provenance == {}
    assert dict(responses) == {
        "c0": Response(Act.parse("request(food)"), "What food?"),
        "c1": Response(text="Two\r\nlines"),
        "c2": Response(Act("inform", [("name", "bangkok house")])),
    }


def test_csv_with_only_a_text_column(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text("context_id,text\nc0,Hello!\nc1,Bye.\n")
    assert dict(read_responses_csv(path)) == {"c0": Response(text="Hello!"), "c1": Response(text="Bye.")}


@pytest.mark.parametrize(
    ("content", "line", "fragment"),
    [
        ("", 1, "empty file, expected a header row"),
        ("\n\n", 1, "empty file"),
        ("context_id,acton,text\nc0,hello(),Hi\n", 1, "unknown column(s) 'acton'"),
        ("id,action\nc0,hello()\n", 1, "unknown column(s) 'id'"),
        ("action,text\nhello(),Hi\n", 1, "lacks the column 'context_id'"),
        ("context_id\nc0\n", 1, "needs a column 'action', 'text' or both"),
        ("context_id,text,text\nc0,a,b\n", 1, "'text' appear more than once"),
        ("context_id,action,text\nc0,hello(),Hi\nc1,hello()\n", 3, "expected 3 cells (context_id, action, text), found 2"),
        ("context_id,action,text\nc0,hello(),Hi,extra\n", 2, "found 4"),
        ("context_id,action,text\n,hello(),Hi\n", 2, "empty 'context_id'"),
        ("context_id,action,text\nc0,hello(),Hi\n\nc0,bye(),Bye\n", 4, "'c0' appears more than once (first on line 2)"),
        ("context_id,action,text\nc0,request(food,What food?\n", 2, "column 'action': cannot parse act 'request(food'"),
        ('context_id,action,text\nc0,hello(),"two\nlines"\nc1,inform(name="x),\n', 4, "column 'action'"),
        ("context_id,action,text\nc0,hello(),Hi\nc1,,\n", 3, "context 'c1' has neither an action nor a text"),
        ('context_id,action,text\nc0,hello(),"Hi"there\n', 2, "malformed CSV"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path, content, line, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read_responses(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert str(info.value).startswith(f"{path}, line {line}: ")
    assert fragment in str(info.value)


def test_write_csv_rejects_an_empty_text(tmp_path):
    path = tmp_path / "out.csv"
    with pytest.raises(InvalidResponseError, match="context 'c3': an empty text cannot be written to CSV"):
        write_responses_csv(path, {"c0": Response(text="Hi"), "c3": Response(Act("hello"), "")})
    assert not path.exists()  # nothing half-written
    with pytest.raises(InvalidResponseError, match="context 'c0' must be a Response, got str"):
        write_responses_csv(path, {"c0": "hello()"})
    assert CSV_COLUMNS == ("context_id", "action", "text")


