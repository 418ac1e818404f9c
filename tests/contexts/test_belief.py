"""Tests of contexts.belief.BeliefState: validation, canonical form, queries, JSON."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexts.belief import BeliefState
from contexts.domain import AREAS, DISCOURSE_ACTS, METHODS, default_domain
from simscore.errors import InvalidContextError

ONTOLOGY = default_domain().ontology


def test_defaults_and_initial() -> None:
    b = BeliefState()
    assert dict(b.slots) == {}
    assert dict(b.method) == {m: (1.0 if m == "none" else 0.0) for m in METHODS}
    assert list(b.discourse_act) == list(DISCOURSE_ACTS)
    assert b.discourse_act["none"] == 1.0
    assert dict(b.requested) == {}
    assert (b.last_offered, b.offer_happened, b.last_informed_no_venue) == (None, False, False)
    initial = BeliefState.initial(ONTOLOGY)
    assert {slot: dict(d) for slot, d in initial.slots.items()} == {s: {"none": 1.0} for s in ONTOLOGY.informable}
    initial.validate(ONTOLOGY)


def test_implied_none_and_zero_dropping() -> None:
    b = BeliefState(slots={"area": {"north": 0.25, "south": 0.5, "east": 0.0}})
    assert dict(b.slots["area"]) == {"north": 0.25, "south": 0.5, "none": 0.25}
    b = BeliefState(slots={"area": {"north": 0.5, "none": 0.5}})
    assert dict(b.slots["area"]) == {"north": 0.5, "none": 0.5}
    # Within tolerance above 1: the implied remainder is 0, not negative.
    b = BeliefState(slots={"area": {"north": 0.6, "south": 0.4 + 5e-7}})
    assert b.slots["area"]["none"] == 0.0


def test_canonical_order_and_equality() -> None:
    a = BeliefState(
        slots={"food": {"thai": 0.5, "indian": 0.5}, "area": {"west": 0.2, "centre": 0.3, "dontcare": 0.1}},
        requested={"phone": 1.0, "addr": 0.5, "postcode": 0.0},
    )
    b = BeliefState(
        slots={"area": {"dontcare": 0.1, "centre": 0.3, "west": 0.2, "none": 0.4}, "food": {"indian": 0.5, "thai": 0.5}},
        requested={"addr": 0.5, "phone": 1.0},
    )
    assert a == b and hash(a) == hash(b) and a.key() == b.key()
    assert list(a.slots) == ["area", "food"]
    assert list(a.slots["area"]) == ["centre", "west", "dontcare", "none"]  # ontology order, then dontcare, none
    assert list(a.slots["food"]) == ["indian", "thai", "none"] and a.slots["food"]["none"] == 0.0
    assert list(a.requested) == ["addr", "phone"]
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())


def test_mappings_are_read_only() -> None:
    b = BeliefState(slots={"area": {"north": 1.0}})
    with pytest.raises(TypeError):
        b.slots["area"]["north"] = 0.5  # type: ignore[index]
    with pytest.raises(TypeError):
        b.method["none"] = 0.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        b.last_offered = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slots": {"area": {"north": float("nan")}}}, "slot 'area' value 'north': probability is NaN"),
        ({"slots": {"area": {"north": -0.1}}}, "slot 'area' value 'north': probability -0.1 is negative"),
        ({"slots": {"area": {"north": 1.5}}}, "slot 'area' value 'north': probability 1.5 is greater than 1"),
        ({"slots": {"area": {"north": float("inf")}}}, "slot 'area' value 'north': probability is infinite"),
        ({"slots": {"area": {"north": "0.5"}}}, "slot 'area' value 'north': probability must be a number"),
        ({"slots": {"area": {"north": True}}}, "probability must be a number"),
        ({"slots": {"area": {"north": 0.7, "south": 0.4}}}, "slot 'area': probabilities sum to 1.1"),
        ({"slots": {"area": {"north": 0.5, "none": 0.4}}}, r"slot 'area': probabilities \(with 'none'\) sum to 0.9"),
        ({"slots": {"area": [0.5]}}, "slot 'area': expected a mapping"),
        ({"slots": {"": {"none": 1.0}}}, "slot name must be a non-empty string"),
        ({"method": {"byname": 0.5}}, "method: probabilities sum to 0.5"),
        ({"method": {"flying": 1.0}}, "method: unknown value 'flying'"),
        ({"method": {"byname": float("nan")}}, "method value 'byname': probability is NaN"),
        ({"discourse_act": {"hello": 0.5, "bye": 0.6}}, "discourse_act: probabilities sum to 1.1"),
        ({"discourse_act": {"shout": 1.0}}, "discourse_act: unknown value 'shout'"),
        ({"requested": {"phone": 2.0}}, "requested slot 'phone': probability 2.0 is greater than 1"),
        ({"requested": {"phone": -1}}, "requested slot 'phone': probability -1.0 is negative"),
        ({"offer_happened": 1}, "offer_happened must be a bool"),
        ({"last_offered": ""}, "last_offered must be a non-empty string"),
    ],
)
def test_invalid_beliefs(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidContextError, match=message):
        BeliefState(**kwargs)  # type: ignore[arg-type]


def test_numpy_numbers_accepted() -> None:
    b = BeliefState(slots={"area": {"north": np.float32(0.5)}}, offer_happened=np.bool_(True))
    assert type(b.slots["area"]["north"]) is float and b.offer_happened is True


def test_validate_against_ontology() -> None:
    BeliefState(slots={"food": {"thai": 0.5, "dontcare": 0.5}}, requested={"phone": 1.0}).validate(ONTOLOGY)
    with pytest.raises(InvalidContextError, match="unknown informable slot 'colour'"):
        BeliefState(slots={"colour": {"red": 1.0}}).validate(ONTOLOGY)
    with pytest.raises(InvalidContextError, match="slot 'food': unknown value 'pizza-ish'"):
        BeliefState(slots={"food": {"pizza-ish": 1.0}}).validate(ONTOLOGY)
    with pytest.raises(InvalidContextError, match="unknown requestable slot 'parking'"):
        BeliefState(requested={"parking": 1.0}).validate(ONTOLOGY)
    with pytest.raises(InvalidContextError, match="last_offered 'nowhere' is not a venue name"):
        BeliefState(last_offered="nowhere").validate(ONTOLOGY)
    BeliefState(last_offered=ONTOLOGY.informable["name"][0]).validate(ONTOLOGY)


def test_top_queries() -> None:
    b = BeliefState(
        slots={"area": {"north": 0.3, "south": 0.3, "dontcare": 0.35}, "food": {"thai": 0.1}},
        method={"byname": 0.4, "byconstraints": 0.4, "finished": 0.2},
        discourse_act={"thankyou": 0.7, "bye": 0.3},
    )
    assert b.top("area") == ("dontcare", 0.35)
    assert b.top_two("area") == (("dontcare", 0.35), ("north", 0.3))  # tie north/south: ontology order
    assert b.top("food") == ("thai", 0.1)
    assert b.top_two("food") == (("thai", 0.1), ("none", 0.0))
    assert b.top("pricerange") == ("none", 0.0)  # absent slot
    assert b.top_two("pricerange") == (("none", 0.0), ("none", 0.0))
    assert b.top_method() == "byconstraints"  # tie: METHODS order
    assert b.top_discourse_act() == "thankyou"
    assert b.prob("area", "north") == 0.3 and b.prob("area", "east") == 0.0
    assert b.prob("pricerange", "none") == 1.0 and b.prob("pricerange", "cheap") == 0.0
    tie = BeliefState(slots={"area": {a: 0.2 for a in AREAS}})
    assert tie.top("area") == ("centre", 0.2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5]), min_size=len(METHODS), max_size=len(METHODS)))
def test_top_method_is_remembered_and_right(weights: list[float]) -> None:
    # The method distribution remembers its top (asked several times a turn); the remembered
    # value is the first maximum in METHODS order, before and after copies and pickles.
    method = {m: w for m, w in zip(METHODS, weights) if m != "none" and w > 0.0}
    total = sum(method.values())
    if total > 1.0:
        method = {m: w / total for m, w in method.items()}
    method["none"] = max(0.0, 1.0 - sum(method.values()))
    b = BeliefState(method=method)
    expected = max(METHODS, key=lambda m: (b.method[m], -METHODS.index(m)))
    assert b.top_method() == expected and b.top_method() == expected
    for other in (copy.deepcopy(b), pickle.loads(pickle.dumps(b)), dataclasses.replace(b)):
        assert other == b and hash(other.method) == hash(b.method) and other.top_method() == expected


def test_json_round_trip_and_errors() -> None:
    b = BeliefState(
        slots={"area": {"north": 0.8}, "name": {ONTOLOGY.informable["name"][5]: 1.0}},
        method={"byname": 0.9, "none": 0.1},
        discourse_act={"ack": 1.0},
        requested={"phone": 0.7},
        last_offered=ONTOLOGY.informable["name"][5],
        offer_happened=True,
        last_informed_no_venue=True,
    )
    obj = json.loads(json.dumps(b.to_json()))
    assert obj["method"] == {"none": 0.1, "byname": 0.9}  # zeros left out
    assert BeliefState.from_json(obj, ONTOLOGY) == b
    with pytest.raises(InvalidContextError, match="unknown field.*'slot'"):
        BeliefState.from_json({"slot": {}})
    with pytest.raises(InvalidContextError, match="lacks the field 'slots'"):
        BeliefState.from_json({"method": {"none": 1.0}})
    with pytest.raises(InvalidContextError, match="must be a JSON object"):
        BeliefState.from_json([1, 2])
    with pytest.raises(InvalidContextError, match="unknown informable slot 'colour'"):
        BeliefState.from_json({"slots": {"colour": {"red": 1.0}}}, ONTOLOGY)


def test_copy_and_pickle_preserve_equality() -> None:
    b = BeliefState(slots={"area": {"north": 0.8}}, requested={"phone": 0.5})
    assert copy.deepcopy(b) == b
    restored = pickle.loads(pickle.dumps(b))  # process pools copy beliefs this way
    assert restored == b and hash(restored) == hash(b)


_values = st.sampled_from(AREAS + ("dontcare",))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_values, st.floats(0.0, 1.0), max_size=4), st.sampled_from(METHODS))
def test_property_round_trip(dist: dict[str, float], method: str) -> None:
    total = math.fsum(dist.values())
    if total > 1.0:
        dist = {k: v / total / (1 + 1e-9) for k, v in dist.items()}
    b = BeliefState(slots={"area": dist}, method={method: 1.0})
    assert abs(math.fsum(b.slots["area"].values()) - 1.0) <= 1e-6
    assert all(p > 0.0 for v, p in b.slots["area"].items() if v != "none")
    again = BeliefState.from_json(json.loads(json.dumps(b.to_json())))
    assert again == b and again.key() == b.key()
    assert b.top_method() == method


def test_reusing_parts_of_other_beliefs() -> None:
    b = BeliefState(slots={"area": {"north": 0.5}}, method={"byname": 1.0}, requested={"phone": 1.0})
    replaced = dataclasses.replace(b, offer_happened=True)
    assert replaced.slots == b.slots and replaced.method == b.method and replaced.offer_happened
    # A canonical distribution of one slot given for another slot is re-checked and re-ordered.
    moved = BeliefState(slots={"food": b.slots["area"]})
    assert dict(moved.slots["food"]) == {"north": 0.5, "none": 0.5}
    with pytest.raises(InvalidContextError, match="discourse_act: unknown value 'byconstraints'"):
        BeliefState(discourse_act=b.method)
    with pytest.raises(InvalidContextError, match="slot 'food': unknown value 'north'"):
        moved.validate(ONTOLOGY)


# -- PyDial belief dicts ----------------------------------------------------------------------

DOMAIN = default_domain()
VENUE = DOMAIN.query({"food": "thai"})[0].name


def _pydial(**features) -> dict:
    """A PyDial focus-tracker belief over the shipped ontology: every value listed, most at 0."""
    foods = {food: 0.0 for food in ONTOLOGY.informable["food"]}
    foods.update({"thai": 0.8, "dontcare": 0.0, "**NONE**": 0.2})
    return {
        "beliefs": {
            "area": {**{a: 0.0 for a in AREAS}, "centre": 0.9, "dontcare": 0.0, "**NONE**": 0.1},
            "food": foods,
            "pricerange": {"cheap": 0.0, "moderate": 0.0, "expensive": 0.0, "dontcare": 1.0, "**NONE**": 0.0},
            "name": {**{name: 0.0 for name in ONTOLOGY.informable["name"]}, "**NONE**": 1.0},
            "method": {"none": 0.0, "byconstraints": 0.7, "byname": 0.0, "finished": 0.0,
                       "byalternatives": 0.3, "restart": 0.0},
            "discourseAct": {"ack": 0.0, "hello": 0.0, "none": 0.0, "repeat": 0.0, "silence": 0.0,
                             "thankyou": 0.0, "bye": 1.0},
            "requested": {"addr": 0.0, "area": 0.0, "food": 0.0, "name": 0.0, "phone": 1, "pricerange": 0.0,
                          "postcode": 0.5, "signature": 0.0, "description": 0.0},
        },
        "features": {"lastInformedVenue": "", "informedVenueSinceNone": [], "lastActionInformNone": False,
                     "offerHappened": False, "inform_info": [False, True, False, False, False] * 5, **features},
        "userActs": [["inform(food=thai,area=centre)", 0.9], ["inform(food=thai)", 0.1]],
    }


def test_from_pydial_maps_every_part() -> None:
    b = BeliefState.from_pydial(_pydial(), ONTOLOGY)
    assert dict(b.slots["area"]) == {"centre": 0.9, "none": 0.1}
    assert dict(b.slots["food"]) == {"thai": 0.8, "none": 0.2}
    assert dict(b.slots["pricerange"]) == {"dontcare": 1.0, "none": 0.0}
    assert dict(b.slots["name"]) == {"none": 1.0}
    assert b.top_method() == "byconstraints" and b.method["byalternatives"] == 0.3
    assert b.top_discourse_act() == "bye"
    assert dict(b.requested) == {"phone": 1.0, "postcode": 0.5}
    assert (b.last_offered, b.offer_happened, b.last_informed_no_venue) == (None, False, False)
    # the bare 'beliefs' dict gives the same belief (without features: the defaults)
    assert BeliefState.from_pydial(_pydial()["beliefs"]) == b
    # the same belief written by hand
    assert b == BeliefState(
        slots={"area": {"centre": 0.9, "none": 0.1}, "food": {"thai": 0.8, "none": 0.2},
               "pricerange": {"dontcare": 1.0}, "name": {}},
        method={"byconstraints": 0.7, "byalternatives": 0.3},
        discourse_act={"bye": 1.0},
        requested={"phone": 1.0, "postcode": 0.5},
    )


def test_from_pydial_history_features() -> None:
    offered = BeliefState.from_pydial(_pydial(lastInformedVenue=VENUE, offerHappened=True), ONTOLOGY)
    assert (offered.last_offered, offered.offer_happened) == (VENUE, True)
    # PyDial's offerHappened is about the last act only; an earlier offer is in lastInformedVenue
    later = BeliefState.from_pydial(_pydial(lastInformedVenue=VENUE, offerHappened=False), ONTOLOGY)
    assert (later.last_offered, later.offer_happened) == (VENUE, True)
    none = BeliefState.from_pydial(_pydial(lastActionInformNone=True), ONTOLOGY)
    assert none.last_informed_no_venue is True and none.offer_happened is False


def test_from_pydial_plain_none_key() -> None:
    pydial = _pydial()["beliefs"]
    pydial["area"] = {"centre": 0.25, "none": 0.75}
    assert dict(BeliefState.from_pydial(pydial).slots["area"]) == {"centre": 0.25, "none": 0.75}
    pydial["area"] = {"centre": 0.25, "none": 0.5, "**NONE**": 0.25}
    with pytest.raises(InvalidContextError, match="slot 'area': has both"):
        BeliefState.from_pydial(pydial)


def test_from_pydial_unknown_names() -> None:
    pydial = _pydial(lastInformedVenue="pizza hut city centre")
    pydial["beliefs"]["food"]["martian"] = 0.1
    pydial["beliefs"]["food"]["**NONE**"] = 0.1
    with pytest.raises(InvalidContextError, match="slot 'food': unknown value 'martian' \\(pass skip_unknown_values"):
        BeliefState.from_pydial(pydial, ONTOLOGY)
    del pydial["beliefs"]["food"]["martian"]
    pydial["beliefs"]["food"]["**NONE**"] = 0.2
    with pytest.raises(InvalidContextError, match="lastInformedVenue 'pizza hut city centre' is not a venue name"):
        BeliefState.from_pydial(pydial, ONTOLOGY)
    # without an ontology nothing is checked
    assert BeliefState.from_pydial(pydial).last_offered == "pizza hut city centre"
    pydial["beliefs"]["food"].update({"martian": 0.1, "**NONE**": 0.1})
    pydial["beliefs"]["kind"] = {"restaurant": 1.0}
    pydial["beliefs"]["requested"]["ticket"] = 1
    skipped = BeliefState.from_pydial(pydial, ONTOLOGY, skip_unknown_values=True)
    assert dict(skipped.slots["food"]) == {"thai": 0.8, "none": pytest.approx(0.2)}
    assert "kind" not in skipped.slots and "ticket" not in skipped.requested
    assert (skipped.last_offered, skipped.offer_happened) == (None, True)
    for slot, match in (("kind", "unknown informable slot 'kind'"), ("ticket", "unknown requestable slot 'ticket'")):
        with pytest.raises(InvalidContextError, match=match):
            broken = _pydial()
            if slot == "kind":
                broken["beliefs"]["kind"] = {"restaurant": 1.0}
            else:
                broken["beliefs"]["requested"]["ticket"] = 1
            BeliefState.from_pydial(broken, ONTOLOGY)


@pytest.mark.parametrize(
    ("belief", "match"),
    [
        ([], "a PyDial belief must be a mapping, got list"),
        ({"beliefs": []}, "PyDial 'beliefs' must be a mapping"),
        ({"beliefs": {}, "features": None}, "PyDial 'features' must be a mapping"),
        ({"area": ["centre"]}, "slot 'area': expected a mapping"),
        ({"area": {"centre": 0.7, "**NONE**": 0.7}}, "slot 'area': probabilities \\(with 'none'\\) sum to 1.4"),
        ({"method": {"sideways": 1.0}}, "method: unknown value 'sideways'"),
        ({"requested": [1]}, "PyDial 'requested' must be a mapping"),
        ({"beliefs": {}, "features": {"offerHappened": 1}}, "PyDial feature 'offerHappened' must be a bool"),
        ({"beliefs": {}, "features": {"lastInformedVenue": 3}}, "'lastInformedVenue' must be a string"),
    ],
)
def test_from_pydial_errors(belief, match) -> None:
    with pytest.raises(InvalidContextError, match=match):
        BeliefState.from_pydial(belief)


# -- BeliefCanonicaliser: the tracker's fast path -----------------------------------------


def test_canonical_parts_are_what_belief_state_stores():
    from contexts.belief_canonical import BeliefCanonicaliser

    canon = BeliefCanonicaliser()
    raw = {"food": {"thai": 0.5, "indian": 0.25}, "area": {"north": 1.0}}
    slots = canon.slots({slot: canon.slot(slot, dist) for slot, dist in raw.items()})
    method = canon.method({"byconstraints": 0.75, "none": 0.25})
    discourse = canon.discourse_act({"ack": 1.0})
    requested = canon.requested({"phone": 0.5, "addr": 1.0})
    fast = BeliefState(slots=slots, method=method, discourse_act=discourse, requested=requested, last_offered="x")
    slow = BeliefState(slots=raw, method={"byconstraints": 0.75, "none": 0.25}, discourse_act={"ack": 1.0},
                       requested={"phone": 0.5, "addr": 1.0}, last_offered="x")
    assert fast == slow and fast.key() == slow.key()
    assert list(fast.slots) == list(slow.slots) == ["area", "food"]
    assert list(fast.requested) == list(slow.requested)
    # canonical parts are stored as they are (the fast path), and equal input gives the same part
    assert fast.slots is slots and fast.method is method and fast.requested is requested
    assert canon.slot("food", {"thai": 0.5, "indian": 0.25}) is slots["food"]
    assert canon.method({"byconstraints": 0.75, "none": 0.25}) is method
    # another canonicaliser shares nothing: equal parts, other objects
    assert BeliefCanonicaliser().slot("food", {"thai": 0.5, "indian": 0.25}) is not slots["food"]


def test_canonicaliser_validates_like_belief_state():
    from contexts.belief_canonical import BeliefCanonicaliser

    canon = BeliefCanonicaliser()
    with pytest.raises(InvalidContextError, match="slot 'food' value 'thai': probability 1.5 is greater than 1"):
        canon.slot("food", {"thai": 1.5})
    with pytest.raises(InvalidContextError, match="method: unknown value 'bynone'"):
        canon.method({"bynone": 1.0})
    with pytest.raises(InvalidContextError, match="discourse_act: probabilities sum to 0.5"):
        canon.discourse_act({"ack": 0.5})
    with pytest.raises(InvalidContextError, match="requested slot 'phone': probability -0.5 is negative"):
        canon.requested({"phone": -0.5})
    with pytest.raises(InvalidContextError, match="last_offered must be a non-empty string"):
        BeliefState(slots=canon.slots({}), last_offered="")  # the history is still checked


def test_canonicaliser_remembers_at_most_max_entries():
    from contexts.belief_canonical import BeliefCanonicaliser

    canon = BeliefCanonicaliser(max_entries=2)
    parts = [canon.slot("area", {"north": p}) for p in (0.1, 0.2, 0.3)]
    assert canon.slot("area", {"north": 0.2}) is parts[1]
    third = canon.slot("area", {"north": 0.3})
    assert third == parts[2] and third is not parts[2]  # computed again, not stored


def test_the_fast_constructor_equals_the_constructor_and_falls_back_to_it():
    from contexts.belief_canonical import BeliefCanonicaliser

    canon = BeliefCanonicaliser()
    parts = (canon.slots({"area": canon.slot("area", {"north": 0.5})}), canon.method({"byname": 1.0}),
             canon.discourse_act({"thankyou": 1.0}), canon.requested({"phone": 1.0}))
    history = {"last_offered": "x", "offer_happened": True, "last_informed_no_venue": False}
    fast = canon.belief(*parts, **history)
    slow = BeliefState(slots={"area": {"north": 0.5}}, method={"byname": 1.0}, discourse_act={"thankyou": 1.0},
                       requested={"phone": 1.0}, **history)
    assert fast == slow and hash(fast) == hash(slow) and fast.to_json() == slow.to_json()
    assert all(getattr(fast, f.name) is part for f, part in zip(dataclasses.fields(BeliefState), parts))
    # not canonical (a plain dict, a numpy bool): the constructor builds it, with its checks
    mixed = canon.belief({"area": {"north": 0.5}}, *parts[1:], last_offered="x", offer_happened=np.bool_(True))
    assert mixed == slow and mixed.offer_happened is True
    with pytest.raises(InvalidContextError, match="last_offered must be a non-empty string"):
        canon.belief(*parts, last_offered="")
    with pytest.raises(InvalidContextError, match="method: unknown value 'maybe'"):
        canon.belief(parts[0], {"maybe": 1.0}, *parts[2:])
