"""Response / Responses types and their JSON Lines files."""

from __future__ import annotations

import json

import pytest

from simscore import Act, Response, Responses
from simscore.errors import FileFormatError, InvalidResponseError


def _responses() -> Responses:
    return Responses(
        {
            "c1": Response(Act.parse('inform(name="la mimosa",food=italian)'), "La mimosa serves italian food."),
            "c2": Response(Act.parse("request(area)")),
            "c3": Response(text=""),
        },
        policy="p",
        provenance={"seed": 3, "reward": "ts"},
    )


def test_round_trip(tmp_path):
    path = tmp_path / "r.jsonl"
    original = _responses()
    original.to_jsonl(path)
    loaded = Responses.read_jsonl(path)
    assert loaded.ids == original.ids
    assert dict(loaded) == dict(original)
    assert loaded.policy == "p" and loaded.provenance == {"seed": 3, "reward": "ts"}
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"format": "simscore-responses", "version": 1, "policy": "p", "provenance": {"seed": 3, "reward": "ts"}}
    assert json.loads(lines[2]) == {"context_id": "c2", "action": "request(area)", "text": None}


def test_response_validation():
    with pytest.raises(InvalidResponseError, match="neither"):
        Response()
    with pytest.raises(InvalidResponseError, match="Act.parse"):
        Response("hello()")  # type: ignore[arg-type]
    with pytest.raises(InvalidResponseError, match="text must be a str"):
        Response(text=3)  # type: ignore[arg-type]


def test_responses_validation():
    with pytest.raises(InvalidResponseError, match="more than once"):
        Responses([("c1", Response(text="a")), ("c1", Response(text="b"))])
    with pytest.raises(InvalidResponseError, match="non-empty string"):
        Responses({"": Response(text="a")})
    with pytest.raises(InvalidResponseError, match="must be a Response"):
        Responses({"c1": "a"})  # type: ignore[dict-item]


HEADER = '{"format": "simscore-responses", "version": 1, "policy": "p", "provenance": {}}\n'


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ('{"context_id": "c1", "action": "hello()", "text": "hi"}\n{"context_id": "c2", "action": "inform(a=", "text": null}\n', 3, "cannot parse act"),
        ('{"context_id": "c1", "action": "hello()"\n', 2, "invalid JSON"),
        ('{"context_id": "c1", "action": null, "text": null}\n', 2, "neither"),
        ('{"action": "hello()"}\n', 2, "context_id"),
        ('{"context_id": "c1", "text": "a"}\n{"context_id": "c1", "text": "b"}\n', 3, "more than once"),
        ('{"context_id": "c1", "text": 5}\n', 2, "'text' must be"),
        ('{"context_id": "c1", "action": 5}\n', 2, "'action' must be"),
        ('["c1"]\n', 2, "JSON object"),
        ('{"context_id": "c1", "text": NaN}\n', 2, "invalid JSON"),
    ],
)
def test_bad_lines_report_line_numbers(tmp_path, body, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + body)
    with pytest.raises(FileFormatError, match=message) as info:
        Responses.read_jsonl(path)
    assert info.value.line == line
    assert f"line {line}" in str(info.value) and "bad.jsonl" in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty file"),
        ('{"format": "other", "version": 1}\n', "expected 'simscore-responses'"),
        ('{"format": "simscore-responses", "version": 3}\n', "unsupported format version 3"),
        ('{"format": "simscore-responses", "version": 2, "samples": 3}\n', "a sampled responses file .*SampledResponses"),
    ],
)
def test_bad_headers(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(FileFormatError, match=message):
        Responses.read_jsonl(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileFormatError, match="file not found"):
        Responses.read_jsonl(tmp_path / "nope.jsonl")


def test_provenance_must_be_json():
    with pytest.raises(InvalidResponseError, match="JSON-serialisable"):
        Responses({"c1": Response(text="x")}, provenance={"bad": object()})


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    _responses().to_jsonl(path)
    before = path.read_bytes()
    calls = []

    def failing_to_json(self):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt  # an interruption half-way through the file
        return {"action": None, "text": self.text}

    monkeypatch.setattr(Response, "to_json", failing_to_json)
    with pytest.raises(KeyboardInterrupt):
        _responses().to_jsonl(path, overwrite=True)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]
