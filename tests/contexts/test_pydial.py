"""Tests of contexts.pydial: PyDial belief dicts logged turn by turn, collected as contexts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contexts import BeliefState, default_domain, import_pydial
from contexts.pydial import read_pydial_beliefs
from simscore.errors import FileFormatError, NoContextsError

DOMAIN = default_domain()
VENUE = DOMAIN.query({"food": "thai"})[0].name
HEADER = {"format": "simscore-pydial-beliefs", "version": 1, "source": {"name": "camrest", "policy": "gp"}}


def _belief(food: float = 0.0, *, venue: str = "", offered: bool = False, user_acts=None) -> dict[str, Any]:
    """A PyDial belief dict (value lists shortened) with ``food=thai`` at probability ``food``."""
    return {
        "beliefs": {
            "area": {"centre": 0.0, "north": 0.0, "dontcare": 0.0, "**NONE**": 1.0},
            "food": {"thai": food, "chinese": 0.0, "dontcare": 0.0, "**NONE**": 1.0 - food},
            "pricerange": {"cheap": 0.0, "**NONE**": 1.0},
            "name": {"**NONE**": 1.0},
            "method": {"none": 1.0 - food, "byconstraints": food, "byname": 0.0, "finished": 0.0,
                       "byalternatives": 0.0, "restart": 0.0},
            "discourseAct": {"ack": 0.0, "hello": 0.0, "none": 1.0, "repeat": 0.0, "silence": 0.0, "thankyou": 0.0},
            "requested": {"phone": 1 if offered else 0, "addr": 0.0},
        },
        "features": {"lastInformedVenue": venue, "informedVenueSinceNone": [venue] if venue else [],
                     "lastActionInformNone": False, "offerHappened": offered, "inform_info": [False] * 25},
        "userActs": user_acts if user_acts is not None else [],
    }


LINES: list[dict[str, Any]] = [
    HEADER,
    {"dialogue_id": "d1", "turn_index": 0, "belief": _belief(), "system_act": "hello()",
     "system_text": "Hello, welcome!"},
    {"dialogue_id": "d2", "turn_index": 0, "belief": _belief(), "system_act": "hello()"},
    {"dialogue_id": "d1", "turn_index": 1, "user_text": "I want thai food.",
     "belief": _belief(0.9, user_acts=[["inform(food=\"thai\")", 0.9], ["inform(food=\"chinese\")", 0.1]]),
     "system_act": f'inform(name="{VENUE}",food="thai")', "system_text": f"{VENUE} serves thai food."},
    {"dialogue_id": "d1", "turn_index": 2, "user_text": "Phone number?",
     "belief": _belief(1.0, venue=VENUE, user_acts=[["request(phone)", 1.0]]),
     "system_act": f"inform(name=\"{VENUE}\",phone=\"01223 000000\")", "system_text": None},
    {"dialogue_id": "d1", "turn_index": 3, "belief": _belief(1.0, venue=VENUE)["beliefs"]},
]


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    return _write(tmp_path / "pydial_beliefs.jsonl", LINES)


def test_read_pydial_beliefs(log: Path) -> None:
    header, dialogues = read_pydial_beliefs(log, ontology=DOMAIN.ontology)
    assert header["source"] == {"name": "camrest", "policy": "gp"}
    assert [d.dialogue_id for d in dialogues] == ["d1", "d2"]  # interleaved lines, grouped by dialogue
    d1 = dialogues[0]
    assert [t.turn_index for t in d1.turns] == [0, 1, 2, 3]
    assert d1.turns[1].belief == BeliefState.from_pydial(LINES[3]["belief"])
    assert d1.turns[1].system_act == f'inform(name="{VENUE}",food="thai")'
    assert d1.turns[1].metadata == {"user_acts": (("inform(food=\"thai\")", 0.9), ("inform(food=\"chinese\")", 0.1))}
    assert d1.turns[3].metadata == {"user_acts": ()}  # a bare 'beliefs' dict has no userActs


def test_import_pydial(log: Path) -> None:
    cs = import_pydial(log)
    assert cs.ids == ("col/camrest/d1/0", "col/camrest/d1/1", "col/camrest/d1/2", "col/camrest/d1/3", "col/camrest/d2/0")
    assert cs.domain == DOMAIN.name and cs.built["importer"] == "contexts.import_pydial"
    assert cs.built["sources"][0]["provenance"] == {"name": "camrest", "policy": "gp"}
    c1, c2, c3 = cs["col/camrest/d1/1"], cs["col/camrest/d1/2"], cs["col/camrest/d1/3"]
    assert c1.belief.top("food") == ("thai", 0.9) and c1.belief.top_method() == "byconstraints"
    assert c1.metadata["history"] == ("Hello, welcome!", "I want thai food.")
    assert c1.metadata["user_acts"][0] == ("inform(food=\"thai\")", 0.9)
    assert (c2.belief.last_offered, c2.belief.offer_happened) == (VENUE, True)
    assert c2.metadata["history"][-1] == "Phone number?"
    # the bare beliefs dict: no features, so no history flags
    assert (c3.belief.last_offered, c3.belief.offer_happened) == (None, False)
    assert cs["col/camrest/d1/0"].metadata["turn_index"] == 0
    assert import_pydial(log, source_name="pd", dialogues_per_source=1).ids[0] == "col/pd/d1/0"
    assert len(import_pydial(log, dialogues_per_source=1)) == 4
    assert len(import_pydial(log, deduplicate=True)) == 4  # d2/0 repeats d1/0


def test_unknown_values_need_the_right_ontology_or_skipping(tmp_path: Path) -> None:
    lines = [HEADER, {"dialogue_id": "d", "turn_index": 1, "belief": _belief(1.0, venue="pizza hut city centre")}]
    path = _write(tmp_path / "b.jsonl", lines)
    with pytest.raises(FileFormatError, match="b.jsonl, line 2: lastInformedVenue 'pizza hut city centre' is not"):
        import_pydial(path)
    cs = import_pydial(path, skip_unknown_values=True)
    belief = cs.contexts[0].belief
    assert (belief.last_offered, belief.offer_happened) == (None, True)
    # without a source name, the file names the source
    del lines[0]["source"]
    assert import_pydial(_write(path, lines), skip_unknown_values=True).ids == ("col/b/d/1",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{", "line 2: invalid JSON"),
        ({"dialogue_id": "d", "belief": {}}, "line 2: missing field 'turn_index'"),
        ({"dialogue_id": "d", "turn_index": 0, "belief": {}, "user_act": "x"}, "line 2: unknown field(s) 'user_act'"),
        ({"dialogue_id": "", "turn_index": 0, "belief": {}}, "'dialogue_id' must be a non-empty string"),
        ({"dialogue_id": "d", "turn_index": -1, "belief": {}}, "turn_index must be >= 0, got -1"),
        ({"dialogue_id": "d", "turn_index": 0, "belief": {"area": {"north": 2}}}, "probability 2.0 is greater than 1"),
        ({"dialogue_id": "d", "turn_index": 0, "belief": {}, "system_act": "inform(food"}, "system_act: cannot parse"),
        ({"dialogue_id": "d", "turn_index": 0, "belief": {"beliefs": {}, "userActs": [["x", "y"]]}},
         "'userActs' item 0 must be [act string, probability]"),
        ({"dialogue_id": "d", "turn_index": 0, "belief": {"beliefs": {}, "userActs": "hello()"}},
         "'userActs' must be a list"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, line: Any, message: str) -> None:
    path = _write(tmp_path / "bad.jsonl", [HEADER, line])
    with pytest.raises(FileFormatError) as info:
        import_pydial(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_file_problems(tmp_path: Path) -> None:
    turns = [{"dialogue_id": "d", "turn_index": 2, "belief": {}}, {"dialogue_id": "e", "turn_index": 0, "belief": {}},
             {"dialogue_id": "d", "turn_index": 2, "belief": {}}]
    path = _write(tmp_path / "order.jsonl", [HEADER, *turns])
    with pytest.raises(FileFormatError, match="line 4: dialogue 'd': turn_index 2 follows 2 \\(line 2\\)"):
        read_pydial_beliefs(path)
    with pytest.raises(NoContextsError, match="no belief lines after the header"):
        import_pydial(_write(tmp_path / "empty.jsonl", [HEADER]))
    with pytest.raises(FileFormatError, match="a dialogue log \\(format 'simscore-dialogue-log', JSON Lines\\) where a PyDial belief log"):
        import_pydial(_write(tmp_path / "log.jsonl", [{"format": "simscore-dialogue-log", "version": 1}]))
    with pytest.raises(FileFormatError, match="header field 'source' must be an object"):
        import_pydial(_write(tmp_path / "src.jsonl", [{**HEADER, "source": "pydial"}, turns[0]]))
