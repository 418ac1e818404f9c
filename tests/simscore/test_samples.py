"""Sampled responses files: the version-2 format, its round trip, the version-1 form of one sample, errors."""

from __future__ import annotations

import pytest

from simscore import Act, Response, Responses
from simscore.errors import FileFormatError, InvalidResponseError
from simscore.responses_csv import read_sampled_responses, write_responses_csv
from simscore.samples import SampledResponses, sample_seed

HEADER = '{"format":"simscore-responses","version":2,"policy":"p","provenance":{},"samples":2}\n'


def test_round_trip_and_the_exact_lines(tmp_path):
    s = SampledResponses({"c1": [Response(Act.parse("hello()"), "Hi"), Response(text="Hello")],
                          "c2": [Response(Act.parse("bye()")), Response(Act.parse("bye()"))]},
                         policy="p", provenance={"seed": 3})
    path = tmp_path / "s.jsonl"
    s.to_jsonl(path)
    assert path.read_text().splitlines() == [
        '{"format":"simscore-responses","version":2,"policy":"p","provenance":{"seed":3},"samples":2}',
        '{"context_id":"c1","sample":0,"action":"hello()","text":"Hi"}',
        '{"context_id":"c1","sample":1,"action":null,"text":"Hello"}',
        '{"context_id":"c2","sample":0,"action":"bye()","text":null}',
        '{"context_id":"c2","sample":1,"action":"bye()","text":null}',
    ]
    back = SampledResponses.read_jsonl(path)
    assert dict(back) == dict(s) and back.policy == "p" and back.provenance == {"seed": 3} and back.n_samples == 2
    assert read_sampled_responses(path).n_samples == 2
    with pytest.raises(FileFormatError, match="a sampled responses file"):
        Responses.read_jsonl(path)


def test_one_sample_is_written_as_a_responses_file_byte_for_byte(tmp_path):
    r = Responses({"c1": Response(Act.parse("hello()"), "Hi")}, policy="p", provenance={"seed": 1})
    r.to_jsonl(tmp_path / "r.jsonl")
    SampledResponses.single(r).to_jsonl(tmp_path / "s.jsonl")
    assert (tmp_path / "s.jsonl").read_bytes() == (tmp_path / "r.jsonl").read_bytes()
    back = SampledResponses.read_jsonl(tmp_path / "r.jsonl")
    assert back.n_samples == 1 and dict(back.sample(0)) == dict(r)
    write_responses_csv(tmp_path / "r.csv", r)
    assert read_sampled_responses(tmp_path / "r.csv").sample(0)["c1"] == r["c1"]


def test_records_in_any_order(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER + '{"context_id":"c1","sample":1,"action":"bye()"}\n'
                    '{"context_id":"c1","sample":0,"action":"hello()"}\n')
    assert [str(r.action) for r in SampledResponses.read_jsonl(path)["c1"]] == ["hello()", "bye()"]


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ('{"context_id":"c1","sample":0,"action":"bye()"}\n', "line 2: .*context 'c1' lacks sample\\(s\\) 1 of the 2"),
        ('{"context_id":"c1","action":"bye()"}\n', "line 2: 'sample' must be an integer in 0..1 .*got null"),
        ('{"context_id":"c1","sample":2,"action":"bye()"}\n', "line 2: 'sample' must be an integer in 0..1"),
        ('{"context_id":"c1","sample":true,"action":"bye()"}\n', "'sample' must be an integer"),
        ('{"context_id":"c1","sample":0,"action":"bye()"}\n{"context_id":"c1","sample":0,"action":"bye()"}\n',
         "line 3: sample 0 of context 'c1' appears more than once"),
        ('{"context_id":"c1","sample":0,"action":"bye("}\n', "line 2: "),
    ],
)
def test_bad_records(tmp_path, records, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER + records)
    with pytest.raises(FileFormatError, match=message.replace("line 2: .*", "")):
        SampledResponses.read_jsonl(path)


@pytest.mark.parametrize("samples", ["0", "-1", '"2"', "null", "10001"])
def test_bad_sample_counts_in_the_header(tmp_path, samples):
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER.replace('"samples":2', f'"samples":{samples}'))
    with pytest.raises(FileFormatError, match="line 1: header field 'samples' must be an integer in 1..10000"):
        SampledResponses.read_jsonl(path)


def test_bad_objects():
    with pytest.raises(InvalidResponseError, match="'c1' has no samples"):
        SampledResponses({"c1": []})
    with pytest.raises(InvalidResponseError, match="same number of samples: 'c1' has 1, 'c2' has 2"):
        SampledResponses({"c1": [Response(text="a")], "c2": [Response(text="a")] * 2})
    with pytest.raises(InvalidResponseError, match="must be a sequence of Response"):
        SampledResponses({"c1": Response(text="a")})
    with pytest.raises(InvalidResponseError, match="sample 1 for context 'c1' must be a Response"):
        SampledResponses({"c1": [Response(text="a"), "b"]})
    r1 = Responses({"c1": Response(text="a")})
    with pytest.raises(InvalidResponseError, match="sample 1 covers other contexts"):
        SampledResponses.from_samples([r1, Responses({"c2": Response(text="a")})])
    with pytest.raises(ValueError, match="k must be <= 0"):
        SampledResponses.single(r1).sample(1)


def test_sample_seeds():
    assert sample_seed(5, 0) == 5
    seeds = [sample_seed(5, k) for k in range(1, 50)]
    assert len(set(seeds)) == 49 and all(0 <= s < 2**63 for s in seeds)
    assert sample_seed(5, 1) != sample_seed(6, 1)
