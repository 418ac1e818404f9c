"""Summary actions: fixed order, Environment-1 masks and master actions on hand-built beliefs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.sim._database import DatabaseIndex
from policies.sim.summary import (
    SUMMARY_ACTIONS,
    SummaryActions,
    acceptance_threshold,
    action_mask,
    master_action,
)
from simscore.acts import Act

DOMAIN = default_domain()
SPACE = SummaryActions(DOMAIN)


def allowed(belief: BeliefState) -> list[str]:
    return [SUMMARY_ACTIONS[i] for i in np.flatnonzero(SPACE.mask(belief))]


def test_summary_action_order_is_fixed():
    assert SUMMARY_ACTIONS == (
        "request_area", "request_food", "request_pricerange",
        "confirm_area", "confirm_food", "confirm_pricerange",
        "select_area", "select_food", "select_pricerange",
        "inform", "inform_byname", "inform_alternatives",
        "bye", "repeat", "reqmore", "restart",
    )
    assert SPACE.names == SUMMARY_ACTIONS and len(SPACE) == 16
    assert (SPACE.INFORM, SPACE.INFORM_BYNAME, SPACE.INFORM_ALTERNATIVES, SPACE.BYE, SPACE.REPEAT,
            SPACE.REQMORE, SPACE.RESTART) == (9, 10, 11, 12, 13, 14, 15)


def test_index_of_validates():
    assert SPACE.index_of("reqmore") == 14 and SPACE.index_of(np.int64(3)) == 3
    with pytest.raises(ValueError, match="unknown summary action 'infrom'"):
        SPACE.index_of("infrom")
    for bad in (16, -1, True, 2.0):
        with pytest.raises(ValueError, match="index in"):
            SPACE.index_of(bad)


def test_acceptance_threshold():
    assert acceptance_threshold(5) == pytest.approx(1 / 4.9)
    # the value must also beat none (PyDial's getTopBeliefs takes the top value with **NONE**)
    b = BeliefState(slots={"area": {"north": 0.204, "south": 0.6}, "pricerange": {"cheap": 0.4, "moderate": 0.3}})
    assert SPACE.accepted(b) == [("area", "south", 0.6), ("pricerange", "cheap", 0.4)]
    b = BeliefState(slots={"area": {"north": 0.205, "south": 0.2, "east": 0.2, "west": 0.2, "centre": 0.195},
                           "pricerange": {"cheap": 0.34, "moderate": 0.33, "expensive": 0.33}})
    assert SPACE.accepted(b) == [("area", "north", 0.205)]  # 0.204 < 1/4.9 = 0.20408; 0.34 < 1/2.9 = 0.3448
    b = BeliefState(slots={"area": {"north": 0.4}, "food": {"thai": 0.5}})  # none 0.6 wins; a tie goes to the value
    assert SPACE.accepted(b) == [("food", "thai", 0.5)]
    # name is no system-requestable slot: never accepted (the inform_byname venue comes from its top value)
    b = BeliefState(slots={"name": {"the amber spoon": 1.0}}, method={"byname": 1.0})
    assert SPACE.accepted(b) == [] and SPACE.summarise(b).tops["name"][0] == "the amber spoon"


def test_accepted_sorted_by_probability_then_ontology_order():
    b = BeliefState(slots={"area": {"north": 0.9}, "food": {"thai": 1.0}, "pricerange": {"cheap": 0.9}})
    assert SPACE.accepted(b) == [("food", "thai", 1.0), ("area", "north", 0.9), ("pricerange", "cheap", 0.9)]


# -- masks ---------------------------------------------------------------------------------


def test_initial_belief_only_requests():
    b = BeliefState.initial(DOMAIN.ontology)
    assert allowed(b) == ["request_area", "request_food", "request_pricerange"]
    assert action_mask(b, DOMAIN).dtype == bool


def test_confirm_needs_top_value_select_needs_two():
    b = BeliefState(slots={"area": {"north": 0.5, "south": 0.1}, "food": {"thai": 0.05}})
    assert allowed(b) == ["request_area", "request_food", "request_pricerange",
                          "confirm_area", "confirm_food", "select_area"]


@pytest.mark.parametrize(
    "constraints, method, inform_allowed",
    [
        ({"food": "thai"}, "byconstraints", False),  # 3 venues, prices differ
        ({"food": "thai", "pricerange": "cheap"}, "byconstraints", True),  # 2 venues, both centre
        ({"area": "north", "pricerange": "cheap"}, "byconstraints", False),  # 4 venues, foods differ
        ({"food": "indian", "area": "north"}, "byconstraints", True),  # exactly one venue
        ({"food": "indian", "area": "centre", "pricerange": "cheap"}, "byconstraints", True),  # none
        ({"food": "thai", "pricerange": "cheap"}, "byname", False),  # wrong method
        ({"food": "thai", "pricerange": "cheap"}, "none", True),  # PyDial: method none counts as byconstraints
        ({"food": "thai", "pricerange": "dontcare", "area": "dontcare"}, "byconstraints", True),
    ],
)
def test_inform_mask(constraints, method, inform_allowed):
    b = BeliefState(slots={s: {v: 1.0} for s, v in constraints.items()}, method={method: 1.0})
    assert SPACE.mask(b)[SPACE.INFORM] == inform_allowed
    # cross-check the "told apart" rule with the domain's own query
    matches = DOMAIN.query({s: v for s, v in constraints.items()})
    unconstrained = [s for s in DOMAIN.ontology.system_requestable if s not in constraints]
    apart = len(matches) > 1 and any(len({v[s] for v in matches}) > 1 for s in unconstrained)
    assert inform_allowed == (method in ("byconstraints", "none") and not apart)


def test_history_masks():
    base = {"slots": {"food": {"thai": 1.0}}}
    byname = BeliefState(**base, method={"byname": 1.0})
    assert "inform_byname" not in allowed(byname)  # no known venue
    byname = BeliefState(**base, method={"byname": 1.0}, last_offered="the amber spoon", offer_happened=True)
    assert {"inform_byname", "reqmore"} <= set(allowed(byname))
    alts = BeliefState(**base, method={"byalternatives": 1.0})
    assert "inform_alternatives" not in allowed(alts)
    alts = BeliefState(**base, method={"byalternatives": 1.0}, offer_happened=True, last_offered="the amber spoon")
    assert "inform_alternatives" in allowed(alts)
    assert "bye" not in allowed(BeliefState(method={"finished": 0.5, "none": 0.5}))
    assert "bye" in allowed(BeliefState(method={"finished": 0.51, "none": 0.49}))
    # PyDial's sticky alternatives_requested: a later turn with another method keeps it allowed
    later = BeliefState(**base, method={"byconstraints": 1.0}, offer_happened=True, last_offered="the amber spoon")
    assert "inform_alternatives" not in allowed(later)
    assert "inform_alternatives" in allowed(BeliefState(**{**later.__dict__, "alternatives_requested": True}))
    thanks = BeliefState(**base, method={"byalternatives": 1.0}, discourse_act={"thankyou": 1.0},
                         offer_happened=True, last_offered="the amber spoon")
    assert "inform_alternatives" not in allowed(thanks)


def test_alternatives_requested_is_sticky_in_dialogues():
    # The tracker raises the flag after a decision whose belief asked for alternatives and
    # lowers it when the system answered with inform_alternatives (SummaryAction.py 170-171, 320).
    from policies.sim.tracker import FocusTracker
    from simscore.acts import Act

    tracker = FocusTracker(DOMAIN.ontology)
    a, c = DOMAIN.query({"food": "thai", "pricerange": "cheap"})
    tracker.update(Act("hello"), Act.parse("inform(food=thai,pricerange=cheap)"))
    b = tracker.update(Act.parse(f'inform(name="{a.name}",food=thai)'), Act("reqalts"))
    assert b.top_method() == "byalternatives" and not b.alternatives_requested  # this turn: the mask raises it
    assert "inform_alternatives" in allowed(b)
    b = tracker.update(Act.parse("request(area)"), Act.parse("inform(area=centre)"))  # the system did not answer
    assert b.top_method() == "byconstraints" and b.alternatives_requested
    assert "inform_alternatives" in allowed(b)
    b = tracker.update(Act.parse(f'inform(name="{c.name}",food=thai)'), Act("thankyou"), answered_alternatives=True)
    assert not b.alternatives_requested and "inform_alternatives" not in allowed(b)


def test_repeat_and_restart_always_masked():
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.dirichlet(np.ones(6))
        b = BeliefState(
            slots={"area": {"north": float(rng.random())}},
            method=dict(zip(DOMAIN.ontology.methods, p.tolist())),
            offer_happened=bool(rng.random() < 0.5),
            last_offered="the amber spoon",
        )
        m = SPACE.mask(b)
        assert not m[SPACE.REPEAT] and not m[SPACE.RESTART] and m[:3].all()


# -- master actions ------------------------------------------------------------------------


def test_slot_actions():
    b = BeliefState(slots={"area": {"north": 0.6, "south": 0.3}, "food": {"thai": 0.9}})
    assert master_action("request_pricerange", b, DOMAIN) == Act.parse("request(pricerange)")
    assert master_action("confirm_area", b, DOMAIN) == Act.parse("confirm(area=north)")
    assert master_action("select_area", b, DOMAIN) == Act.parse("select(area=north,area=south)")
    assert str(master_action(12, b, DOMAIN)) == "bye()"
    assert str(master_action("reqmore", b, DOMAIN)) == "reqmore()"
    # an action chosen against its mask is still mapped literally
    assert master_action("confirm_pricerange", b, DOMAIN) == Act.parse("confirm(pricerange=none)")


def test_inform_no_match_gives_name_none():
    b = BeliefState(
        slots={"food": {"indian": 1.0}, "area": {"centre": 1.0}, "pricerange": {"cheap": 1.0}},
        method={"byconstraints": 1.0},
    )
    assert master_action("inform", b, DOMAIN) == Act.parse(
        "inform(name=none,food=indian,area=centre,pricerange=cheap)"
    )


def test_inform_offers_first_match_with_accepted_slots():
    b = BeliefState(slots={"food": {"thai": 1.0}, "pricerange": {"cheap": 0.9}}, method={"byconstraints": 1.0})
    first = DOMAIN.query({"food": "thai", "pricerange": "cheap"})[0]
    act = master_action("inform", b, DOMAIN)
    assert act == Act("inform", [("name", first.name), ("food", "thai"), ("pricerange", "cheap")])


def test_inform_keeps_last_offered_venue_if_it_still_matches():
    matches = DOMAIN.query({"food": "thai", "pricerange": "cheap"})
    second = matches[1]
    b = BeliefState(
        slots={"food": {"thai": 1.0}, "pricerange": {"cheap": 1.0}},
        method={"byconstraints": 1.0},
        last_offered=second.name,
        offer_happened=True,
    )
    assert master_action("inform", b, DOMAIN).items[1].value == second.name
    other = DOMAIN.query({"food": "indian"})[0]
    b = BeliefState(slots={"food": {"thai": 1.0}}, last_offered=other.name, offer_happened=True)
    assert master_action("inform", b, DOMAIN).items[1].value == DOMAIN.query({"food": "thai"})[0].name


def test_inform_dontcare_dropped_from_query_but_venue_value_informed():
    b = BeliefState(slots={"food": {"indian": 1.0}, "area": {"dontcare": 1.0}}, method={"byconstraints": 1.0})
    venue = DOMAIN.query({"food": "indian"})[0]
    assert master_action("inform", b, DOMAIN) == Act(
        "inform", [("name", venue.name), ("food", "indian"), ("area", venue.area)]
    )


def test_inform_byname_gives_requested_slots():
    venue = DOMAIN.venues[5]
    b = BeliefState(
        method={"byname": 1.0},
        requested={"phone": 1.0, "addr": 0.9, "postcode": 0.4},
        last_offered=venue.name,
        offer_happened=True,
    )
    assert master_action("inform_byname", b, DOMAIN) == Act(
        "inform", [("name", venue.name), ("phone", venue.phone), ("addr", venue.addr)]
    )


def test_inform_byname_adds_a_random_slot_when_nothing_is_requested():
    # PyDial (SummaryUtils._getInformRequestedSlotsForEntity): one requestable slot other than
    # name, uniformly at random; here from the given generator, or from seed and belief.
    venue = DOMAIN.venues[5]
    b = BeliefState(method={"byname": 1.0}, requested={"postcode": 0.4}, last_offered=venue.name,
                    offer_happened=True)
    others = [s for s in DOMAIN.ontology.requestable if s != "name"]
    seen = {}
    for seed in range(200):
        act = master_action("inform_byname", b, DOMAIN, rng=seed)
        assert act == master_action("inform_byname", b, DOMAIN, rng=seed)  # a function of seed and belief
        (item,) = [i for i in act.items if i.slot != "name"]
        assert item.value == venue.get(item.slot)
        seen[item.slot] = seen.get(item.slot, 0) + 1
    assert sorted(seen) == sorted(others) and min(seen.values()) >= 10  # all 8, about 25 each
    draws = np.random.default_rng(4)
    expected = others[int(np.random.default_rng(4).integers(len(others)))]
    act = master_action("inform_byname", b, DOMAIN, rng=draws)
    assert {i.slot for i in act.items} == {"name", expected}
    named = BeliefState(method={"byname": 1.0}, requested={"name": 1.0}, last_offered=venue.name, offer_happened=True)
    assert master_action("inform_byname", named, DOMAIN) == Act("inform", [("name", venue.name)])  # name requested


def test_inform_alternatives_and_exhaustion():
    a, c = DOMAIN.query({"food": "thai", "pricerange": "cheap"})
    b = BeliefState(
        slots={"food": {"thai": 1.0}, "pricerange": {"cheap": 1.0}},
        method={"byalternatives": 1.0},
        last_offered=a.name,
        offer_happened=True,
        offered_since_no_venue=(a.name,),
    )
    act = master_action("inform_alternatives", b, DOMAIN)  # default: exclude the belief's offered_since_no_venue
    assert act == Act("inform", [("name", c.name), ("food", "thai"), ("pricerange", "cheap")])
    act = master_action("inform_alternatives", b, DOMAIN, offered=[a.name, c.name])
    assert act == Act(
        "inform",
        [("name", "none"), ("food", "thai"), ("pricerange", "cheap"), ("name", "!=", a.name), ("name", "!=", c.name)],
    )
    assert str(act) == f'inform(food=thai,name!="{a.name}",name!="{c.name}",name=none,pricerange=cheap)'


def test_database_index_agrees_with_domain_query():
    index = DatabaseIndex(DOMAIN)
    values = {s: DOMAIN.ontology.informable[s][:6] + ("dontcare",) for s in ("area", "pricerange")}
    foods = ("indian", "thai", "chinese", "afghan", "dontcare")
    for area, price, food in itertools.product(values["area"], values["pricerange"], foods):
        constraints = {"area": area, "pricerange": price, "food": food}
        expected = DOMAIN.query(constraints)
        mask = index.mask(constraints.items())
        assert index.matches(mask) == list(expected)
        assert index.count(constraints.items()) == len(expected)
        if expected:
            assert index.first(mask) is expected[0]
            excluded = DOMAIN.query(constraints, exclude={"name": [expected[0].name]})
            assert index.matches(index.mask(constraints.items(), [expected[0].name])) == list(excluded)
