"""Tests of contexts.dialogue_log and contexts.collect (C_col, ConvLab-3 import)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contexts.belief import BeliefState
from contexts.collect import collect_contexts, import_convlab, read_convlab
from contexts.dialogue_log import (
    Dialogue,
    DialogueTurn,
    read_dialogue_log,
    write_dialogue_log,
)
from contexts.domain import default_domain
from simscore.errors import FileFormatError, InvalidContextError, NoContextsError, SkippedDialoguesWarning

DOMAIN = default_domain()
ONTOLOGY = DOMAIN.ontology
VENUE = DOMAIN.query({"food": "thai"})[0].name

def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def log_file(tmp_path: Path, log_lines: list[dict[str, Any]]) -> Path:
    return _write(tmp_path / "sim_log.jsonl", log_lines)


# -- dialogue log format --------------------------------------------------------------------


def test_read_dialogue_log(log_file: Path) -> None:
    header, dialogues = read_dialogue_log(log_file, ontology=ONTOLOGY)
    assert header["source"] == {"name": "sim-a", "policy": "handcrafted", "seed": 3}
    assert [d.dialogue_id for d in dialogues] == ["d1", "d2"]
    d1 = dialogues[0]
    assert [t.turn_index for t in d1.turns] == [0, 1, 2, 3]
    assert d1.turns[0].user_act is None and d1.turns[0].system_action is not None
    assert d1.turns[0].system_action.intent == "hello"
    assert d1.turns[2].user_action is not None and d1.turns[2].user_action.items[0].value == "centre"
    assert d1.turns[3].belief.last_offered == VENUE
    assert d1.outcome == {"success": True, "reward": 17}


def test_dialogue_log_round_trip(tmp_path: Path, log_file: Path) -> None:
    header, dialogues = read_dialogue_log(log_file)
    out = tmp_path / "copy.jsonl"
    write_dialogue_log(out, dialogues, domain=DOMAIN, source=header["source"])
    header2, dialogues2 = read_dialogue_log(out)
    # a version-1 log (the fixture) reads with no last_act_offered / offered_since_no_venue
    # history and is written back as version 2
    assert dialogues2 == dialogues and header2 == {**header, "version": 2} and header["version"] == 1
    assert all(not t.belief.last_act_offered and t.belief.offered_since_no_venue == ()
               for d in dialogues for t in d.turns)


@pytest.mark.parametrize(
    ("mutate", "line", "message"),
    [
        (lambda d: d["turns"][1].update(user_act="inform(food=thai"), 2, r"user_act: cannot parse act"),
        (lambda d: d["turns"][1]["belief"]["slots"]["food"].update(thai=float("inf")), 2, "invalid JSON"),
        (lambda d: d["turns"][1]["belief"]["slots"]["food"].update(thai=1.7), 2,
         "dialogue 'd1', turn 1: slot 'food' value 'thai': probability 1.7 is greater than 1"),
        (lambda d: d["turns"][2].update(turn_index=1), 2, "turn_index 1 follows 1"),
        (lambda d: d["turns"][0].pop("belief"), 2, "turn lacks the field 'belief'"),
        (lambda d: d.update(dialogue_id="d2"), 3, "dialogue_id 'd2' appears twice \\(first on line 2\\)"),
        (lambda d: d.update(extra=1), 2, "unknown field\\(s\\) 'extra'"),
        (lambda d: d["turns"][1]["belief"]["slots"].update(colour={"red": 1.0}), 2, "unknown informable slot 'colour'"),
    ],
)
def test_bad_dialogue_logs(
    tmp_path: Path, log_lines: list[dict[str, Any]], mutate: Any, line: int, message: str
) -> None:
    lines = log_lines
    mutate(lines[1])
    path = _write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(FileFormatError, match=message) as info:
        read_dialogue_log(path, ontology=ONTOLOGY)
    assert info.value.line == line and str(path) in str(info.value)


def test_bad_log_header(tmp_path: Path, log_lines: list[dict[str, Any]]) -> None:
    path = _write(tmp_path / "v3.jsonl", [dict(log_lines[0], version=3), *log_lines[1:]])
    with pytest.raises(FileFormatError, match=r"line 1: unsupported format version 3 \(this simscore reads version 1, 2\)"):
        read_dialogue_log(path)
    path = _write(tmp_path / "nodomain.jsonl", [{"format": "simscore-dialogue-log", "version": 1}])
    with pytest.raises(FileFormatError, match="header field 'domain'"):
        read_dialogue_log(path)


def test_write_dialogue_log_duplicate_leaves_no_file(tmp_path: Path) -> None:
    turn = DialogueTurn(turn_index=0, belief=BeliefState())
    path = tmp_path / "log.jsonl"
    with pytest.raises(InvalidContextError, match="dialogue_id 'x' appears twice"):
        write_dialogue_log(path, [Dialogue("x", (turn,)), Dialogue("x", (turn,))], domain="restaurants")
    assert list(tmp_path.iterdir()) == []


# -- collection ------------------------------------------------------------------------------


def test_collect_from_hand_written_log(log_file: Path, log_lines: list[dict[str, Any]]) -> None:
    cs = collect_contexts([log_file], domain=DOMAIN)
    assert cs.name == "C_col" and cs.domain == "restaurants"
    assert cs.ids == (
        "col/sim-a/d1/0", "col/sim-a/d1/1", "col/sim-a/d1/2", "col/sim-a/d1/3",
        "col/sim-a/d2/0", "col/sim-a/d2/1",
    )
    histories = {c.id: c.metadata["history"] for c in cs}
    assert histories["col/sim-a/d1/0"] == ()
    assert histories["col/sim-a/d1/1"] == ("Welcome!", "Thai food please.")
    assert histories["col/sim-a/d1/2"] == ("Welcome!", "Thai food please.", "Which area?")  # null user text skipped
    assert histories["col/sim-a/d1/3"] == (
        "Welcome!", "Thai food please.", "Which area?", f"{VENUE} is nice.", "Phone number?",
    )
    assert histories["col/sim-a/d2/1"] == ("Welcome!", "Thai.")
    c = cs["col/sim-a/d1/3"]
    assert dict(c.metadata) | {"history": ()} == {
        "source": "col", "dialogue_id": "d1", "turn_index": 3, "history": (), "source_name": "sim-a",
    }
    assert c.belief == BeliefState.from_json(log_lines[1]["turns"][3]["belief"])
    assert c.belief.last_offered == VENUE and c.belief.top_method() == "byname"
    assert [t for t in cs.by_turn()] == [0, 1, 2, 3]
    assert cs.by_turn()[1].ids == ("col/sim-a/d1/1", "col/sim-a/d2/1")
    assert cs.built["sources"][0]["dialogues_used"] == 2
    assert cs.built["sources"][0]["provenance"]["policy"] == "handcrafted"


def test_turn_metadata_reaches_the_contexts(tmp_path: Path, log_lines: list[dict[str, Any]]) -> None:
    log_lines[1]["turns"][1]["metadata"] = {"user_acts": [["inform(food=thai)", 0.9]], "asr": {"n": 1}}
    path = _write(tmp_path / "log.jsonl", log_lines)
    header, dialogues = read_dialogue_log(path)
    turn = dialogues[0].turns[1]
    assert turn.metadata == {"user_acts": (("inform(food=thai)", 0.9),), "asr": {"n": 1}}
    assert DialogueTurn.from_json(json.loads(json.dumps(turn.to_json()))) == turn
    assert "metadata" not in dialogues[0].turns[0].to_json()  # only written when there is some
    cs = collect_contexts([path])
    assert cs["col/sim-a/d1/1"].metadata["user_acts"] == (("inform(food=thai)", 0.9),)
    assert "user_acts" not in cs["col/sim-a/d1/2"].metadata
    with pytest.raises(InvalidContextError, match="metadata key\\(s\\) 'history', 'source' are set by collection"):
        DialogueTurn(turn_index=0, belief=BeliefState(), metadata={"source": "x", "history": []})
    with pytest.raises(InvalidContextError, match="metadata must be an object, got list"):
        DialogueTurn(turn_index=0, belief=BeliefState(), metadata=[])  # type: ignore[arg-type]
    with pytest.raises(InvalidContextError, match="metadata.x: nan is not a finite number"):
        DialogueTurn(turn_index=0, belief=BeliefState(), metadata={"x": float("nan")})


def test_collect_keeps_repeats_or_deduplicates(log_file: Path) -> None:
    kept = collect_contexts([log_file])
    assert len(kept) == 6 and len({c.belief.key() for c in kept}) == 4
    deduplicated = collect_contexts([log_file], deduplicate=True)
    assert deduplicated.ids == ("col/sim-a/d1/0", "col/sim-a/d1/1", "col/sim-a/d1/2", "col/sim-a/d1/3")
    assert deduplicated.built["duplicates_dropped"] == 2


def test_collect_dialogues_per_source(tmp_path: Path, log_file: Path, log_lines: list[dict[str, Any]]) -> None:
    other = log_lines
    del other[0]["source"]  # no name: the file stem names the source
    other_file = _write(tmp_path / "other_run.jsonl", other)
    cs = collect_contexts([log_file, other_file], dialogues_per_source=1, name="mixed")
    assert cs.name == "mixed"
    assert [c.id for c in cs if c.metadata["turn_index"] == 0] == ["col/sim-a/d1/0", "col/other_run/d1/0"]
    assert len(cs) == 8
    assert set(cs.metadata_frame()["source_name"]) == {"sim-a", "other_run"}


def test_collect_from_objects_and_errors(log_file: Path) -> None:
    header, dialogues = read_dialogue_log(log_file)
    cs = collect_contexts([(header, dialogues)])
    assert cs.ids[0] == "col/sim-a/d1/0"
    with pytest.raises(InvalidContextError, match="context id 'col/sim-a/d1/0' appears twice"):
        collect_contexts([log_file, log_file])
    with pytest.raises(InvalidContextError, match="dialogues_per_source must be >= 1, got 0"):
        collect_contexts([log_file], dialogues_per_source=0)
    with pytest.raises(InvalidContextError, match="log 0: expected a path or a"):
        collect_contexts([42])  # type: ignore[list-item]
    hotel = ({"domain": "hotels", "source": {"name": "h"}}, dialogues)
    with pytest.raises(InvalidContextError, match="different domains"):
        collect_contexts([log_file, hotel])
    with pytest.raises(InvalidContextError, match="is of domain 'hotels', expected 'restaurants'"):
        collect_contexts([hotel], domain=DOMAIN)


# -- ConvLab-3 unified format ----------------------------------------------------------------


@pytest.fixture()
def convlab_file(tmp_path: Path, convlab_dialogues: list[dict[str, Any]]) -> Path:
    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    return path


def test_import_convlab(convlab_file: Path) -> None:
    with pytest.warns(SkippedDialoguesWarning, match="skipped 1 of 3 dialogues"):
        cs = import_convlab(convlab_file)
    assert cs.ids == (
        "col/camrest/camrest-test-0/1", "col/camrest/camrest-test-0/2", "col/camrest/camrest-test-0/3",
        "col/camrest/camrest-test-2/1", "col/camrest/camrest-test-2/2",
    )
    c1, c2, c3, k1, k2 = cs.contexts
    assert dict(c1.belief.slots["food"]) == {"thai": 1.0, "none": 0.0}
    assert dict(c1.belief.slots["pricerange"]) == {"cheap": 1.0, "none": 0.0}
    assert dict(c1.belief.slots["area"]) == {"none": 1.0} and dict(c1.belief.slots["name"]) == {"none": 1.0}
    assert c1.belief.top_method() == "byconstraints" and c1.belief.top_discourse_act() == "none"
    assert c1.metadata["history"] == ("Cheap thai food please.",)
    assert dict(c2.belief.slots["area"]) == {"dontcare": 1.0, "none": 0.0}
    assert c2.belief.offer_happened is False
    assert c2.metadata["history"] == ("Cheap thai food please.", "Which part of town?", "Any part, really.")
    assert dict(c3.belief.requested) == {"addr": 1.0}
    assert c3.belief.top_discourse_act() == "thankyou"
    assert (c3.belief.offer_happened, c3.belief.last_offered) == (True, VENUE)
    assert c3.metadata["turn_index"] == 3 and len(c3.metadata["history"]) == 5
    # System opening: no context, but history; the state's "Korean" is lower-cased.
    assert k1.metadata["history"] == ("Hello, how can I help?", "Korean food in the east.")
    assert dict(k1.belief.slots["food"]) == {"korean": 1.0, "none": 0.0}
    assert k1.belief.last_informed_no_venue is False and k2.belief.last_informed_no_venue is True
    for context in cs:
        context.belief.validate(ONTOLOGY)
        assert context.metadata["source"] == "col"
    assert cs.built["importer"] == "contexts.import_convlab"


def test_import_convlab_keeps_the_acts_a_convlab_policy_reads(convlab_file: Path) -> None:
    with pytest.warns(SkippedDialoguesWarning):
        cs = import_convlab(convlab_file)
    c1, c2, c3, k1, k2 = cs.contexts
    # the unified format, as ConvLab-3's flatten_acts gives it ("" for the value of a binary act)
    assert c1.metadata["user_action"] == (
        ("inform", "restaurant", "food", "thai"), ("inform", "restaurant", "price range", "cheap"),
    )
    assert c1.metadata["system_action"] == ()
    assert c2.metadata["user_action"] == (("inform", "restaurant", "area", "dontcare"),)
    assert c2.metadata["system_action"] == (("request", "restaurant", "area", ""),)
    # in flatten_acts' order: categorical, non-categorical, binary
    assert c3.metadata["user_action"] == (("thank", "general", "none", ""), ("request", "restaurant", "address", ""))
    assert c3.metadata["system_action"] == (("inform", "restaurant", "name", VENUE),)
    # after a system opening, its acts are the system's previous action
    assert k1.metadata["system_action"] == (("greet", "general", "none", ""),)
    assert k2.metadata["user_action"] == ()  # the user said "Ok." with no act
    # they survive the context-set file
    assert all(type(c.metadata["user_action"]) is tuple for c in cs)


def test_convlab_dataset_without_the_domain(tmp_path: Path, convlab_dialogues: list[dict[str, Any]]) -> None:
    hotel_turn = {"speaker": "user", "utterance": "A hotel.", "utt_idx": 0, "dialogue_acts": {}, "state": {}}
    data = [
        {"dataset": "mw", "dialogue_id": f"mw-{i}", "domains": domains, "turns": [hotel_turn] * 2}
        for i, domains in enumerate((["hotel"], ["hotel", "taxi"], ["train"]))
    ]
    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(NoContextsError) as info:
        import_convlab(path)
    message = str(info.value)
    assert str(path) in message
    assert "no dialogue of domain 'restaurant': all 3 dialogues (6 turns) were skipped" in message
    assert "domains they have: hotel (2), taxi (1), train (1)" in message
    assert "--convlab-domain" in message
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(NoContextsError, match="no dialogues"):
        import_convlab(path)
    # some left: a warning with the counts (as attributes too)
    path.write_text(json.dumps(convlab_dialogues + data), encoding="utf-8")
    with pytest.warns(SkippedDialoguesWarning) as record:
        cs = import_convlab(path)
    assert len(cs) == 5
    [warning] = [w.message for w in record if isinstance(w.message, SkippedDialoguesWarning)]
    assert (warning.skipped_dialogues, warning.skipped_turns, warning.kept_dialogues) == (4, 6, 2)
    assert "skipped 4 of 6 dialogues (6 turns): their 'domains' list lacks 'restaurant'" in str(warning)


def test_convlab_dialogue_structure(convlab_file: Path) -> None:
    with pytest.warns(SkippedDialoguesWarning):
        dialogues = read_convlab(convlab_file)
    assert [d.dialogue_id for d in dialogues] == ["camrest-test-0", "camrest-test-2"]  # hotel-only skipped
    first = dialogues[0]
    assert [t.turn_index for t in first.turns] == [1, 2, 3]  # the final user "Bye." has no system turn
    assert first.turns[0].user_act == "inform(restaurant-food=thai,restaurant-price range=cheap)"
    assert first.turns[0].system_act == "request(restaurant-area)"
    assert dialogues[1].turns[0].turn_index == 0 and dialogues[1].turns[0].user_text is None


@pytest.mark.filterwarnings("ignore::simscore.errors.SkippedDialoguesWarning")
def test_convlab_options(convlab_file: Path) -> None:
    assert len(import_convlab(convlab_file, dialogues_per_source=1)) == 3
    assert import_convlab(convlab_file, source_name="cr").ids[0] == "col/cr/camrest-test-0/1"
    assert len(import_convlab(convlab_file, deduplicate=True)) == 5


@pytest.mark.filterwarnings("ignore::simscore.errors.SkippedDialoguesWarning")
def test_convlab_unknown_value(tmp_path: Path, convlab_dialogues: list[dict[str, Any]]) -> None:
    data = convlab_dialogues
    data[0]["turns"][2]["state"]["restaurant"]["food"] = "martian"
    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"dialogue 'camrest-test-0', utt_idx 3: value 'martian' of slot 'food'"):
        import_convlab(path)
    cs = import_convlab(path, skip_unknown_values=True)
    assert dict(cs["col/camrest/camrest-test-0/2"].belief.slots["food"]) == {"none": 1.0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}", "expected a JSON list of dialogues"),
        ("[{\"dialogue_id\": \"x\", \"turns\": [{\"speaker\": \"bot\", \"utterance\": \"hi\"}]}]", "'speaker' must be"),
        ("[{\"turns\": []}]", "'dialogue_id' must be a non-empty string"),
        ("[1", "invalid JSON"),
    ],
)
def test_convlab_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "dialogues.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FileFormatError, match=message):
        import_convlab(path)
