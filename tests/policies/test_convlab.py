"""The ConvLab bridge: both state layouts against ConvLab's documented formats, act conversion,
reseeding the global generators, and the states file of the two-environment workflow."""

from __future__ import annotations

import copy
import json
import random
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from contexts import BeliefState, Context, ContextSet, default_domain
from policies.convlab import (
    SLOT_NAMES,
    STATE_FORMATS,
    convlab_acts,
    read_convlab_states,
    to_convlab_state,
    write_convlab_states,
)
from policies.seeding import context_seed, reseeded
from simscore.errors import FileFormatError, InvalidContextError, OutputExistsError

ONTOLOGY = default_domain().ontology

# ConvLab's default states, written out by hand from ConvLab-2's and ConvLab-3's
# util/multiwoz/state.py (research notes A1): every domain, every slot empty.
CONVLAB2_EMPTY_BELIEF = {
    "police": {"book": {"booked": []}, "semi": {}},
    "hotel": {
        "book": {"booked": [], "people": "", "day": "", "stay": ""},
        "semi": {"name": "", "area": "", "parking": "", "pricerange": "", "stars": "", "internet": "", "type": ""},
    },
    "attraction": {"book": {"booked": []}, "semi": {"type": "", "name": "", "area": ""}},
    "restaurant": {
        "book": {"booked": [], "people": "", "day": "", "time": ""},
        "semi": {"food": "", "pricerange": "", "name": "", "area": ""},
    },
    "hospital": {"book": {"booked": []}, "semi": {"department": ""}},
    "taxi": {"book": {"booked": []}, "semi": {"leaveAt": "", "destination": "", "departure": "", "arriveBy": ""}},
    "train": {
        "book": {"booked": [], "people": ""},
        "semi": {"leaveAt": "", "destination": "", "day": "", "arriveBy": "", "departure": ""},
    },
}
CONVLAB3_EMPTY_BELIEF = {
    "attraction": {"type": "", "name": "", "area": ""},
    # ConvLab-3's default_state() has stars '4', internet 'yes', type 'hotel' here; its rule
    # DST starts from the ontology's all-empty state instead, and so does simscore
    "hotel": {"name": "", "area": "", "parking": "", "price range": "", "stars": "", "internet": "", "type": "",
              "book stay": "", "book day": "", "book people": ""},
    "restaurant": {"food": "", "price range": "", "name": "", "area": "", "book time": "", "book day": "",
                   "book people": ""},
    "taxi": {"leave at": "", "destination": "", "departure": "", "arrive by": ""},
    "train": {"leave at": "", "destination": "", "day": "", "arrive by": "", "departure": "", "book people": ""},
    "hospital": {"department": ""},
}

#: The notes' minimal example (thai food in the centre), as a context imported from unified data.
THAI_CENTRE = Context(
    "col/mw/d1/1",
    BeliefState(slots={"area": {"centre": 1.0}, "pricerange": {}, "food": {"thai": 1.0}, "name": {}},
                method={"byconstraints": 1.0}),
    {
        "source": "col",
        "history": ["I want thai food in the centre"],
        "user_action": [["inform", "restaurant", "food", "thai"], ["inform", "restaurant", "area", "centre"]],
        "system_action": [],
    },
)


def _with(belief: dict, domain: str, **slots: str) -> dict:
    out = copy.deepcopy(belief)
    target = out[domain]["semi"] if "semi" in out[domain] else out[domain]
    target.update(slots)
    return out


def test_convlab2_layout_is_convlab2s_documented_state():
    # the notes' ConvLab-2 example, completed to the full default_state() as advised there
    expected = {
        "user_action": [["Inform", "Restaurant", "Food", "thai"], ["Inform", "Restaurant", "Area", "centre"]],
        "system_action": [],
        "belief_state": _with(CONVLAB2_EMPTY_BELIEF, "restaurant", food="thai", area="centre"),
        "request_state": {},
        "terminated": False,
        "history": [["user", "I want thai food in the centre"]],
    }
    state = to_convlab_state(THAI_CENTRE, state_format="convlab2")
    assert state == expected
    assert list(state) == list(expected)  # default_state()'s key order; no 'booked' in ConvLab-2
    assert json.loads(json.dumps(state)) == state


def test_convlab3_layout_is_convlab3s_documented_state():
    expected = {
        "user_action": [["inform", "restaurant", "food", "thai"], ["inform", "restaurant", "area", "centre"]],
        "system_action": [],
        "belief_state": _with(CONVLAB3_EMPTY_BELIEF, "restaurant", food="thai", area="centre"),
        "booked": {},
        "request_state": {},
        "terminated": False,
        "history": [["user", "I want thai food in the centre"]],
    }
    state = to_convlab_state(THAI_CENTRE)
    assert state == expected == to_convlab_state(THAI_CENTRE, state_format="convlab3")
    assert list(state) == list(expected)
    assert list(state["belief_state"]["restaurant"])[:4] == ["food", "price range", "name", "area"]


def test_requests_dontcare_and_thresholds():
    belief = BeliefState(
        slots={"area": {"north": 0.6, "centre": 0.1}, "pricerange": {"dontcare": 1.0}, "food": {"thai": 0.8}},
        requested={"phone": 0.9, "addr": 0.7, "postcode": 0.5},
    )
    new = to_convlab_state(belief)
    assert new["belief_state"]["restaurant"] | {} == {
        **CONVLAB3_EMPTY_BELIEF["restaurant"], "area": "north", "price range": "dontcare", "food": "thai",
    }
    # ConvLab's request_state: {domain: {slot: 0}}; exactly 0.5 is not "requested"
    assert new["request_state"] == {"restaurant": {"phone": 0, "address": 0}}
    old = to_convlab_state(belief, state_format="convlab2")
    assert old["belief_state"]["restaurant"]["semi"] == {"food": "thai", "pricerange": "dontcare", "name": "",
                                                         "area": "north"}
    assert old["request_state"] == {"restaurant": {"phone": 0, "address": 0}}
    assert to_convlab_state(belief, min_probability=0.6)["belief_state"]["restaurant"]["area"] == ""
    assert to_convlab_state(belief, min_probability=0.5)["belief_state"]["restaurant"]["area"] == "north"
    # slot names: the format's defaults, overridden or extended by the caller's
    assert SLOT_NAMES["convlab3"] == {"pricerange": "price range", "addr": "address"}
    renamed = to_convlab_state(belief, slot_names={"pricerange": "price", "phone": "phone number"})
    assert renamed["belief_state"]["restaurant"]["price"] == "dontcare"
    assert renamed["request_state"] == {"restaurant": {"phone number": 0, "address": 0}}


def test_other_domains_are_present_and_empty_and_a_new_domain_is_added():
    state = to_convlab_state(THAI_CENTRE, state_format="convlab2", domain="food-ordering")
    assert state["belief_state"]["restaurant"] == CONVLAB2_EMPTY_BELIEF["restaurant"]
    assert state["belief_state"]["food-ordering"] == {
        "book": {"booked": []}, "semi": {"area": "centre", "pricerange": "", "food": "thai", "name": ""},
    }
    flat = to_convlab_state(THAI_CENTRE, domain="hotel")
    assert flat["belief_state"]["hotel"]["food"] == "thai" and flat["belief_state"]["hotel"]["stars"] == ""
    assert flat["belief_state"]["restaurant"] == CONVLAB3_EMPTY_BELIEF["restaurant"]


def test_a_fresh_state_every_call():
    first = to_convlab_state(THAI_CENTRE, state_format="convlab2")
    first["belief_state"]["restaurant"]["semi"]["food"] = "changed"
    first["belief_state"]["taxi"]["book"]["booked"].append("x")
    first["user_action"][0][3] = "changed"
    first["history"].clear()
    again = to_convlab_state(THAI_CENTRE, state_format="convlab2")
    assert again == to_convlab_state(copy.deepcopy(THAI_CENTRE), state_format="convlab2")
    assert again["belief_state"]["restaurant"]["semi"]["food"] == "thai"
    assert again["belief_state"]["taxi"]["book"]["booked"] == []
    assert THAI_CENTRE.metadata["user_action"][0][3] == "thai"


def test_bare_belief_and_history_speakers():
    state = to_convlab_state(BeliefState.initial(ONTOLOGY), state_format="convlab2")
    assert (state["user_action"], state["system_action"], state["history"]) == ([], [], [])
    context = SimpleNamespace(id="x", belief=BeliefState(), metadata={"history": ("Hello.", "Thai food.", "Where?", "North.")})
    assert to_convlab_state(context)["history"] == [["sys", "Hello."], ["user", "Thai food."], ["sys", "Where?"],
                                                    ["user", "North."]]


@pytest.mark.parametrize(
    ("acts", "convlab2", "convlab3"),
    [
        (["inform", "restaurant", "price range", "cheap"], ["Inform", "Restaurant", "Price", "cheap"], None),
        (["request", "restaurant", "address", ""], ["Request", "Restaurant", "Addr", "?"], None),
        (["request", "restaurant", "postcode", ""], ["Request", "Restaurant", "Post", "?"], None),
        (["inform", "restaurant", "book people", "4"], ["Inform", "Restaurant", "People", "4"], None),
        (["inform", "restaurant", "book time", "18:00"], ["Inform", "Restaurant", "Time", "18:00"], None),
        (["inform", "restaurant", "book day", "monday"], ["Inform", "Restaurant", "Day", "monday"], None),
        (["inform", "train", "leave at", "10:00"], ["Inform", "Train", "Leave", "10:00"], None),
        (["inform", "train", "duration", "60 minutes"], ["Inform", "Train", "Time", "60 minutes"], None),
        (["inform", "train", "price", "10 pounds"], ["Inform", "Train", "Ticket", "10 pounds"], None),
        (["inform", "taxi", "type", "toyota"], ["Inform", "Taxi", "Car", "toyota"], None),
        (["nooffer", "restaurant", "food", "korean"], ["NoOffer", "Restaurant", "Food", "korean"], None),
        (["offerbooked", "train", "", ""], ["OfferBooked", "Train", "none", "none"], None),
        (["thank", "general", "", ""], ["thank", "general", "none", "none"], None),
        (["bye", "general", "none", "none"], ["bye", "general", "none", "none"], ["bye", "general", "", ""]),
        (["Inform", "Restaurant", "Price", "cheap"], None, ["inform", "restaurant", "price range", "cheap"]),
        (["Inform", "Attraction", "Price", "free"], None, ["inform", "attraction", "entrance fee", "free"]),
        (["Request", "Restaurant", "Phone", "?"], None, ["request", "restaurant", "phone", ""]),
        (["Inform", "Taxi", "Car", "toyota"], None, ["inform", "taxi", "type", "toyota"]),
    ],
)
def test_act_conversion(acts, convlab2, convlab3):
    unified = convlab3 if convlab3 is not None else acts
    old = convlab2 if convlab2 is not None else acts
    assert convlab_acts([acts], "convlab3") == [unified]
    if convlab2 is not None:
        assert convlab_acts([acts], "convlab2") == [old]
    # converting is idempotent, and a ConvLab-2 act comes back from the unified one
    assert convlab_acts(convlab_acts([acts], "convlab3"), "convlab3") == [unified]
    assert convlab_acts(convlab_acts([acts], "convlab2"), "convlab2") == convlab_acts([acts], "convlab2")


def test_metadata_errors_name_the_context():
    def context(**metadata):
        return SimpleNamespace(id="x", belief=BeliefState(), metadata=metadata)

    with pytest.raises(InvalidContextError, match="context 'x': metadata 'user_action' item 0 must be a list of 4"):
        to_convlab_state(context(user_action=[["inform", "food", "thai"]]))
    with pytest.raises(InvalidContextError, match="metadata 'system_action' must be a list"):
        to_convlab_state(context(system_action="request(area)"))
    with pytest.raises(InvalidContextError, match="metadata 'user_action' item 1: act .* is in \\(domain, intent"):
        to_convlab_state(context(user_action=[["inform", "restaurant", "food", "thai"],
                                              ["Restaurant", "Inform", "Area", "north"]]))
    with pytest.raises(InvalidContextError, match="context 'x': metadata 'history' must be a sequence of strings"):
        to_convlab_state(context(history="hello"))
    with pytest.raises(InvalidContextError, match="got SimpleNamespace \\(belief: dict\\)"):
        to_convlab_state(SimpleNamespace(id="x", belief={"food": "thai"}))
    with pytest.raises(ValueError, match="state_format must be one of 'convlab3', 'convlab2', got 'convlab1'"):
        to_convlab_state(BeliefState(), state_format="convlab1")
    with pytest.raises(ValueError, match="min_probability must be in"):
        to_convlab_state(BeliefState(), min_probability=1.0)
    with pytest.raises(TypeError, match="slot_names must map"):
        to_convlab_state(BeliefState(), slot_names={"pricerange": 3})
    assert STATE_FORMATS == ("convlab3", "convlab2")


# -- reseeding --------------------------------------------------------------------------------


def test_context_seed_is_a_fixed_documented_function():
    import hashlib

    assert context_seed(0, "c1") == int.from_bytes(hashlib.sha256(b"0:c1").digest()[:4], "big")
    assert context_seed(0, "c1") == 3401534932  # golden: the ConvLab-side script must agree
    assert len({context_seed(s, c) for s in range(3) for c in ("a", "b", "c")}) == 9
    with pytest.raises(TypeError, match="seed must be an int"):
        context_seed("0", "c1")
    with pytest.raises(TypeError, match="context_id must be a str"):
        context_seed(0, 1)


def test_reseeded_leaves_the_callers_streams_alone():
    random.seed(11)
    np.random.seed(11)
    expected = [random.random() for _ in range(3)], np.random.random(3)
    random.seed(11)
    np.random.seed(11)
    got_random, got_numpy = [random.random()], [np.random.random()]
    with reseeded(5):
        inside = random.random(), np.random.random()
    with pytest.raises(RuntimeError):
        with reseeded(6):
            random.random()
            raise RuntimeError("the policy failed")
    got_random += [random.random(), random.random()]
    got_numpy += list(np.random.random(2))
    assert got_random == expected[0]
    assert got_numpy == list(expected[1])
    assert inside == (random.Random(5).random(), np.random.RandomState(5).random_sample())
    with pytest.raises(ValueError, match="seed must be <= 4,294,967,295, got 4,294,967,296"):
        with reseeded(2**32):
            pass


def test_reseeded_seeds_and_restores_torch_when_it_is_imported():
    torch = pytest.importorskip("torch")
    assert sys.modules["torch"] is torch
    torch.manual_seed(3)
    expected = torch.rand(3)
    torch.manual_seed(3)
    first = torch.rand(1)
    with reseeded(9):
        inside = torch.rand(2)
    rest = torch.rand(2)
    assert torch.equal(torch.cat([first, rest]), expected)
    assert torch.equal(inside, torch.rand(2, generator=torch.Generator().manual_seed(9)))


# -- the states file --------------------------------------------------------------------------


def test_states_file_round_trip(tmp_path):
    contexts = ContextSet([THAI_CENTRE, Context("c2", BeliefState())], name="two")
    path = tmp_path / "states.jsonl"
    assert write_convlab_states(contexts, path, state_format="convlab2") == 2
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header == {"format": "simscore-convlab-states", "version": 1, "state_format": "convlab2",
                      "domain": "restaurant", "contexts": {"name": "two", "content_hash": contexts.content_hash},
                      "count": 2}
    assert json.loads(lines[1]) == {"context_id": THAI_CENTRE.id,
                                    "state": to_convlab_state(THAI_CENTRE, state_format="convlab2")}
    read_header, states = read_convlab_states(path)
    assert read_header == header
    assert [cid for cid, _ in states] == [THAI_CENTRE.id, "c2"]
    assert states[1][1] == to_convlab_state(BeliefState(), state_format="convlab2")
    # a plain list of contexts has no name or hash
    with pytest.raises(OutputExistsError, match="exists; use --force"):
        write_convlab_states([THAI_CENTRE], path)
    write_convlab_states([THAI_CENTRE], path, overwrite=True)
    assert read_convlab_states(path)[0]["contexts"] == {"name": None, "content_hash": None}


def test_states_file_errors(tmp_path):
    path = tmp_path / "states.jsonl"
    with pytest.raises(InvalidContextError, match="a context needs a non-empty string 'id'"):
        write_convlab_states([SimpleNamespace(belief=BeliefState())], path)
    assert not path.exists()
    header = {"format": "simscore-convlab-states", "version": 1, "state_format": "convlab2", "count": 2}
    bad = [
        ([header, {"context_id": "a", "state": {}}], "the header says 2 states, the file has 1"),
        ([{**header, "state_format": "convlab9"}], "line 1: header field 'state_format' is 'convlab9'"),
        ([header, {"context_id": "a", "state": []}], "line 2: 'state' must be an object"),
        ([header, {"state": {}}], "line 2: missing or empty 'context_id'"),
        ([header, {"context_id": "a", "state": {}}, {"context_id": "a", "state": {}}], "line 3: context id 'a' appears"),
    ]
    for lines, message in bad:
        path.write_text("\n".join(map(json.dumps, lines)) + "\n")
        with pytest.raises(FileFormatError, match=message):
            read_convlab_states(path)
