"""Tests of contexts.context: Context, ContextSet and context-set files."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

import contexts.context as context_module
from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from contexts.domain import default_domain
from simscore.errors import FileFormatError, InvalidContextError, OutputExistsError, SkippedContextsWarning

ONTOLOGY = default_domain().ontology


def _ctx(i: int, *, source: str = "col", turn: int | None = None, dialogue: str | None = "d", **extra: Any) -> Context:
    belief = BeliefState(slots={"area": {"north": i / 10}}, method={"byconstraints": 1.0})
    metadata = {"source": source, "dialogue_id": dialogue, "turn_index": turn, "history": ("hi",) * (turn or 0)}
    metadata.update(extra)
    return Context(f"c{i}", belief, metadata)


@pytest.fixture()
def sample() -> ContextSet:
    contexts = [
        _ctx(0, source="gen", dialogue=None),
        _ctx(1, turn=0),
        _ctx(2, turn=1, dialogue="e"),
        _ctx(3, turn=1),
        _ctx(4, turn=2, note={"k": [1, 2]}),
    ]
    return ContextSet(contexts, name="sample", domain="restaurants", built={"by": "hand"})


# -- Context ------------------------------------------------------------------------------


def test_context_metadata_canonical() -> None:
    c = Context("x", BeliefState(), {"zeta": [1, {"a": None}], "history": ["u", "s"], "alpha": 1, "source": "col"})
    assert list(c.metadata) == ["source", "dialogue_id", "turn_index", "history", "alpha", "zeta"]
    assert c.metadata["history"] == ("u", "s")
    assert c.metadata["zeta"] == (1, {"a": None})
    assert Context.from_json(json.loads(json.dumps(c.to_json()))) == c
    assert pickle.loads(pickle.dumps(c)) == c
    with pytest.raises(TypeError):
        c.metadata["source"] = "gen"  # type: ignore[index]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("", BeliefState()), "context id must be a non-empty string"),
        (("x", {"slots": {}}), "context 'x': belief must be a BeliefState"),
        (("x", BeliefState(), {"turn_index": -1}), "'turn_index' must be >= 0, got -1"),
        (("x", BeliefState(), {"turn_index": "3"}), "'turn_index' must be an int, got str '3'"),
        (("x", BeliefState(), {"dialogue_id": 3}), "'dialogue_id' must be a string or null"),
        (("x", BeliefState(), {"history": "text"}), "'history' must be a list of strings"),
        (("x", BeliefState(), {"history": ["a", None]}), "'history' contains None"),
        (("x", BeliefState(), {"source": ""}), "'source' must be a non-empty string"),
        (("x", BeliefState(), {"extra": float("nan")}), "metadata 'extra': nan is not a finite number"),
        (("x", BeliefState(), {"extra": {1, 2}}), "cannot be stored as JSON"),
    ],
)
def test_context_invalid(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(InvalidContextError, match=message):
        Context(*args)


# -- ContextSet ---------------------------------------------------------------------------


def test_set_basics(sample: ContextSet) -> None:
    assert len(sample) == 5 and sample.name == "sample" and sample.domain == "restaurants"
    assert sample.ids == ("c0", "c1", "c2", "c3", "c4")
    assert [c.id for c in sample] == list(sample.ids)
    assert sample["c3"].metadata["turn_index"] == 1
    assert "c3" in sample and "zz" not in sample
    with pytest.raises(KeyError, match="no context 'zz' in context set 'sample'"):
        sample["zz"]


def test_duplicate_ids_rejected() -> None:
    with pytest.raises(InvalidContextError, match="context id 'c1' appears twice"):
        ContextSet([_ctx(1), _ctx(2), _ctx(1)], name="s")
    with pytest.raises(InvalidContextError, match="element 0 is a str"):
        ContextSet(["c1"], name="s")  # type: ignore[list-item]


def test_content_hash(sample: ContextSet) -> None:
    assert len(sample.content_hash) == 64
    renamed = ContextSet(sample, name="other", built={})
    assert renamed.content_hash == sample.content_hash  # name and build info are not content
    reordered = ContextSet(reversed(sample.contexts), name="sample")
    assert reordered.content_hash != sample.content_hash
    changed = ContextSet([*sample.contexts[:-1], _ctx(4, turn=3)], name="sample")
    assert changed.content_hash != sample.content_hash


def test_where_and_by_turn(sample: ContextSet) -> None:
    assert sample.where(source="col").ids == ("c1", "c2", "c3", "c4")
    assert sample.where(source="col", dialogue_id="d", turn_index=1).ids == ("c3",)
    assert sample.where(source="gen").name == "sample[source=gen]"
    assert len(sample.where(nonexistent_key=1)) == 0
    turns = sample.by_turn()
    assert list(turns) == [0, 1, 2]
    assert {t: s.ids for t, s in turns.items()} == {0: ("c1",), 1: ("c2", "c3"), 2: ("c4",)}
    assert turns[1].domain == "restaurants"
    assert sample.filter(lambda c: c.belief.prob("area", "north") > 0.25).ids == ("c3", "c4")
    assert sample.select(["c4", "c0"]).ids == ("c4", "c0")


def test_union(sample: ContextSet) -> None:
    other = ContextSet([_ctx(7), _ctx(8)], name="more")
    united = sample.union(other)
    assert united.name == "sample+more" and united.ids[-2:] == ("c7", "c8") and len(united) == 7
    assert sample.union(other, name="all").name == "all"
    with pytest.raises(InvalidContextError, match="context id 'c1' is in both 'sample' and 'dup'"):
        sample.union(ContextSet([_ctx(1)], name="dup"))
    with pytest.raises(InvalidContextError, match="domains 'restaurants' and 'hotels'"):
        sample.union(ContextSet([_ctx(9)], name="h", domain="hotels"))


def test_metadata_frame(sample: ContextSet) -> None:
    frame = sample.metadata_frame()
    assert frame.index.name == "context_id" and list(frame.index) == list(sample.ids)
    assert list(frame.columns) == ["source", "dialogue_id", "turn_index", "method", "history_length", "note"]
    assert frame.loc["c2", "turn_index"] == 1 and frame["turn_index"].isna().sum() == 1
    assert set(frame["method"]) == {"byconstraints"}
    assert frame.loc["c4", "history_length"] == 2


# -- files --------------------------------------------------------------------------------


def test_file_round_trip(tmp_path: Path, sample: ContextSet) -> None:
    path = tmp_path / "set.jsonl"
    sample.to_jsonl(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "simscore-contexts" and header["version"] == 2
    assert header["count"] == 5 and header["content_hash"] == sample.content_hash
    assert header["domain"] == "restaurants" and header["built"] == {"by": "hand"}
    assert len(lines) == 6
    again = ContextSet.read_jsonl(path, ontology=ONTOLOGY)
    assert again == sample and again.content_hash == sample.content_hash
    again.to_jsonl(tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == path.read_bytes()


def test_hand_written_file_without_count_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "hand.jsonl"
    rows = [
        {"format": "simscore-contexts", "version": 1, "name": "hand"},
        {"id": "a", "belief": {"slots": {"food": {"thai": 1.0}}}, "metadata": {"source": "col"}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    read = ContextSet.read_jsonl(path)
    assert read.ids == ("a",) and read.domain is None and read["a"].belief.top("food") == ("thai", 1.0)


def _write_lines(path: Path, header: dict[str, Any], records: list[Any]) -> Path:
    lines = [json.dumps(header)] + [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


HEADER = {"format": "simscore-contexts", "version": 1, "name": "bad"}


def _record(cid: str = "a", area: Any = 1.0, slot: str = "area") -> dict[str, Any]:
    return {"id": cid, "belief": {"slots": {slot: {"north": area}}}, "metadata": {"source": "col"}}


@pytest.mark.parametrize(
    ("header", "records", "line", "message"),
    [
        (HEADER, [_record(), '{"id": "b", "belief": {"slots": {"area": {"north": NaN}}}, "metadata": {}}'], 3,
         "invalid JSON.*NaN"),
        (HEADER, [_record(area=-0.5)], 2, "slot 'area' value 'north': probability -0.5 is negative"),
        (HEADER, [_record(area=1.2)], 2, "probability 1.2 is greater than 1"),
        (HEADER, [_record(), _record("b"), _record("a")], 4, "context id 'a' appears twice \\(first on line 2\\)"),
        (HEADER, [_record(), '{"id": "b", "belief": {"slo'], 3, "invalid JSON"),
        (dict(HEADER, version=3), [_record()], 1, "unsupported format version 3"),
        (dict(HEADER, format="simscore-responses"), [_record()], 1, "a responses file \\(format 'simscore-responses', JSON Lines\\) where a context set"),
        (dict(HEADER, count=3), [_record(), _record("b")], 3, "header says 3 contexts but the file has 2"),
        ({k: v for k, v in HEADER.items() if k != "name"}, [_record()], 1, "header field 'name'"),
        (HEADER, [{"id": "a", "belief": {"slots": {}}}], 2, "context lacks the field\\(s\\) 'metadata'"),
        (HEADER, [[1, 2]], 2, "expected a JSON object"),
    ],
)
def test_bad_files(tmp_path: Path, header: dict[str, Any], records: list[Any], line: int, message: str) -> None:
    path = _write_lines(tmp_path / "bad.jsonl", header, records)
    with pytest.raises(FileFormatError, match=message) as info:
        ContextSet.read_jsonl(path)
    assert info.value.line == line
    assert str(path) in str(info.value)


def test_unknown_slot_with_ontology(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "bad.jsonl", HEADER, [_record(), _record("b", slot="colour")])
    ContextSet.read_jsonl(path)  # without an ontology the names are not checked
    with pytest.raises(FileFormatError, match="line 3: context 'b': unknown informable slot 'colour'"):
        ContextSet.read_jsonl(path, ontology=ONTOLOGY)


def test_skip_invalid_leaves_out_foreign_contexts_with_one_warning(tmp_path: Path) -> None:
    records = [_record(), _record("b", slot="colour"), _record("c"), _record("d", slot="colour")]
    path = _write_lines(tmp_path / "mixed.jsonl", dict(HEADER, count=4), records)
    with pytest.warns(SkippedContextsWarning, match=r"skipped 2 context\(s\).*line 3 \(b\): unknown informable slot"):
        kept = ContextSet.read_jsonl(path, ontology=ONTOLOGY, skip_invalid=True)
    assert [c.id for c in kept] == ["a", "c"]
    with pytest.raises(FileFormatError, match="line 3"):
        ContextSet.read_jsonl(path, ontology=ONTOLOGY)


def test_edited_file_detected_by_hash(tmp_path: Path, sample: ContextSet) -> None:
    path = tmp_path / "set.jsonl"
    sample.to_jsonl(path)
    text = path.read_text(encoding="utf-8").replace('"history":["hi"]', '"history":["ho"]', 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 1: the contexts do not match the header's content_hash"):
        ContextSet.read_jsonl(path)
    assert ContextSet.read_jsonl(path, verify_hash=False)["c2"].metadata["history"] == ("ho",)


#: Two contexts as simscore 0.1.0 (commit 2ffcec8) wrote them: format version 1, whose content_hash is
#: of its own lines (without the belief fields version 2 added).
V1_LINES = [
    ('{"format":"simscore-contexts","version":1,"name":"v1","domain":"restaurants","count":2,'
     '"content_hash":"da716160969870ae34f93807b413f7e0b1741f3dfa017cc6d1e86b9543cec62c",'
     '"built":{"note":"written by simscore 0.1.0"}}'),
    ('{"id":"c1","belief":{"slots":{"food":{"thai":0.9,"none":0.09999999999999998}},'
     '"method":{"byconstraints":1.0},"discourse_act":{"none":1.0},"requested":{},"last_offered":null,'
     '"offer_happened":false,"last_informed_no_venue":false},"metadata":{"source":"col","dialogue_id":"d1",'
     '"turn_index":1,"history":["Hello.","Thai food."]}}'),
    ('{"id":"c2","belief":{"slots":{"area":{"north":1.0,"none":0.0}},"method":{"none":1.0},'
     '"discourse_act":{"none":1.0},"requested":{},"last_offered":"the jolly orchard","offer_happened":true,'
     '"last_informed_no_venue":true},"metadata":{"source":"gen","dialogue_id":null,"turn_index":null,'
     '"history":[]}}'),
]


def test_a_version_1_file_is_checked_by_the_rule_it_was_written_under(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_text("\n".join(V1_LINES) + "\n", encoding="utf-8")
    read = ContextSet.read_jsonl(path, ontology=ONTOLOGY)
    assert read.ids == ("c1", "c2") and read["c1"].metadata["history"] == ("Hello.", "Thai food.")
    belief = read["c2"].belief  # the fields version 2 added read at their defaults (no such history)
    assert belief.offer_happened and belief.last_informed_no_venue and belief.last_offered == "the jolly orchard"
    assert (belief.last_act_offered, belief.offered_since_no_venue, belief.alternatives_requested) == (False, (), False)
    assert read.content_hash != json.loads(V1_LINES[0])["content_hash"]  # today's lines hold those fields
    read.to_jsonl(tmp_path / "v2.jsonl")  # written again: version 2, hashed by today's rule
    header = json.loads((tmp_path / "v2.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["version"] == 2 and header["content_hash"] == read.content_hash
    assert ContextSet.read_jsonl(tmp_path / "v2.jsonl") == read
    # an edited version-1 file is still reported, and says which rule its hash was checked by
    path.write_text("\n".join(V1_LINES).replace('"Thai food."', '"Thai food!"') + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"line 1: the contexts do not match the header's content_hash, "
                       r"computed as format version 1 wrote it \(the file was edited"):
        ContextSet.read_jsonl(path)


def test_truncated_file_detected(tmp_path: Path, sample: ContextSet) -> None:
    path = tmp_path / "set.jsonl"
    sample.to_jsonl(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # cut inside the last line
    with pytest.raises(FileFormatError, match="line 6: invalid JSON"):
        ContextSet.read_jsonl(path)
    lines = data.decode("utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")  # cut at a line boundary
    with pytest.raises(FileFormatError, match="header says 5 contexts but the file has 4"):
        ContextSet.read_jsonl(path)


def test_failed_write_leaves_old_file(tmp_path: Path, sample: ContextSet, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "set.jsonl"
    sample.to_jsonl(path)
    before = path.read_bytes()
    calls = {"n": 0}
    real = context_module._encode
    with pytest.raises(OutputExistsError, match="exists"):
        sample.to_jsonl(path)

    def failing(obj: Any) -> str:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real(obj)

    monkeypatch.setattr(context_module, "_encode", failing)
    fresh = ContextSet(sample, name="sample2")
    with pytest.raises(OSError, match="disk full"):
        fresh.to_jsonl(path, overwrite=True)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.jsonl"]


def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="file not found"):
        ContextSet.read_jsonl(tmp_path / "nope.jsonl")
