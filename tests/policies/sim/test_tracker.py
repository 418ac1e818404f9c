"""The focus tracker against hand-computed numbers from the focus formula."""

from __future__ import annotations

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.sim.tracker import FocusTracker
from simscore.acts import Act
from simscore.errors import InvalidContextError

A = Act.parse
DOMAIN = default_domain()


@pytest.fixture
def tracker() -> FocusTracker:
    return FocusTracker(DOMAIN.ontology)


def slot(b: BeliefState, name: str) -> dict[str, float]:
    return {v: round(p, 10) for v, p in b.slots[name].items()}


def method(b: BeliefState) -> dict[str, float]:
    return {m: round(p, 10) for m, p in b.method.items() if p}


def test_turn_zero_is_all_none(tracker):
    b = tracker.belief
    assert b == BeliefState.initial(DOMAIN.ontology)
    assert b.top_method() == "none" and not b.offer_happened and b.last_offered is None


def test_focus_update_by_hand(tracker):
    # turn 1: food indian 0.6, chinese 0.2 (n-best), q = 0.2
    b = tracker.update(A("hello()"), [(A("inform(food=indian)"), 0.6), (A("inform(food=chinese)"), 0.2)])
    assert slot(b, "food") == {"indian": 0.6, "chinese": 0.2, "none": 0.2}
    # turn 2: chinese 0.5 -> q = 0.5: indian 0.5*0.6 = 0.3, chinese 0.5*0.2 + 0.5 = 0.6, none 0.1
    b = tracker.update(A("request(food)"), [(A("inform(food=chinese)"), 0.5)])
    assert slot(b, "food") == {"chinese": 0.6, "indian": 0.3, "none": 0.1}
    # turn 3: no food evidence -> unchanged
    b = tracker.update(A("request(area)"), A("inform(area=north)"))
    assert slot(b, "food") == {"chinese": 0.6, "indian": 0.3, "none": 0.1}
    assert slot(b, "area") == {"north": 1.0, "none": 0.0}


def test_renormalised_only_when_sum_exceeds_one(tracker):
    # a hypothesis informing two values of one slot: u sums to 1.3 -> q = 0, renormalise
    b = tracker.update(A("hello()"), [(A("inform(area=north,area=south)"), 0.65), (A("inform(area=south)"), 0.0)])
    assert slot(b, "area") == {"north": 0.5, "south": 0.5, "none": 0.0}
    b = tracker.update(A("hello()"), [(A("inform(area=east)"), 0.4)])  # q = 0.6: 0.3, 0.3, east 0.4
    assert slot(b, "area") == {"north": 0.3, "south": 0.3, "east": 0.4, "none": 0.0}


def test_method_update_by_hand(tracker):
    b = tracker.update(A("hello()"), A("inform(type=restaurant)"))
    assert method(b) == {"none": 1.0}  # PyDial drops an inform about the type only
    b = tracker.update(A("request(food)"), A("inform(food=thai)"))
    assert method(b) == {"byconstraints": 1.0}
    # after an offer: request 0.6 (-> byname), affirm 0.3 (-> none); turn none mass 0.4
    b = tracker.update(A('inform(name="the amber spoon",food=thai)'), [(A("request(phone)"), 0.6), (A("affirm()"), 0.3)])
    assert method(b) == {"byconstraints": 0.4, "byname": 0.6}
    # reqalts 0.5 -> byconstraints 0.2, byname 0.3, byalternatives 0.5
    b = tracker.update(A("reqmore()"), [(A("reqalts()"), 0.5)])
    assert method(b) == {"byconstraints": 0.2, "byname": 0.3, "byalternatives": 0.5}
    b = tracker.update(A("reqmore()"), A("bye()"))
    assert method(b) == {"finished": 1.0}
    assert b.discourse_act["bye"] == 1.0


def test_request_before_an_offer_is_method_none(tracker):
    tracker.update(A("hello()"), A("inform(food=thai)"))
    b = tracker.update(A("request(area)"), A("request(phone)"))
    assert method(b) == {"byconstraints": 1.0}  # turn method none keeps the old one
    assert b.requested == {"phone": 1.0}


def test_inform_naming_a_venue_is_byname(tracker):
    b = tracker.update(A("hello()"), A('inform(name="the amber spoon")'))
    assert method(b) == {"byname": 1.0} and b.top("name") == ("the amber spoon", 1.0)


def test_requested_slots_reset_when_informed_and_clipped(tracker):
    tracker.update(A("hello()"), A("inform(food=thai)"))
    b = tracker.update(A('inform(name="the amber spoon",food=thai)'), [(A("request(phone,addr)"), 0.7)])
    assert dict(b.requested) == {"addr": 0.7, "phone": 0.7}
    b = tracker.update(A('inform(name="the amber spoon",phone="01223")'), [(A("request(addr)"), 0.6)])
    assert {k: round(v, 10) for k, v in b.requested.items()} == {"addr": 1.0}  # 0.7 + 0.6 clipped, phone reset


def test_discourse_act_has_no_memory(tracker):
    b = tracker.update(A("hello()"), A("hello()"))
    assert b.discourse_act["hello"] == 1.0
    b = tracker.update(A("request(area)"), A("inform(area=north)"))
    assert b.discourse_act["none"] == 1.0 and b.top_discourse_act() == "none"


def test_history_flags(tracker):
    b = tracker.update(A("hello()"), A("inform(food=thai)"))
    assert (b.offer_happened, b.last_offered, b.last_informed_no_venue) == (False, None, False)
    b = tracker.update(A("inform(name=none,food=thai)"), A("inform(area=north)"))
    assert (b.offer_happened, b.last_offered, b.last_informed_no_venue) == (False, None, True)
    b = tracker.update(A('inform(name="the amber spoon",food=thai)'), A("request(phone)"))
    assert (b.offer_happened, b.last_offered, b.last_informed_no_venue) == (True, "the amber spoon", False)
    tracker.update(A('inform(name="the hidden thistle")'), A("reqalts()"))
    assert tracker.offered == ("the amber spoon", "the hidden thistle")
    b = tracker.update(A("inform(name=none,food=thai)"), A("reqalts(food=dontcare)"))
    assert tracker.offered == () and b.offer_happened and b.last_offered == "the hidden thistle"


def test_pydial_history_features(tracker):
    # PyDial's offerHappened is about the last system act only; informedVenueSinceNone lists the
    # venues offered since the last name=none (BeliefTracker._updateMactFeat).
    b = tracker.update(A("hello()"), A("inform(food=thai)"))
    assert (b.last_act_offered, b.offered_since_no_venue) == (False, ())
    b = tracker.update(A('inform(name="the amber spoon",food=thai)'), A("request(phone)"))
    assert (b.last_act_offered, b.offered_since_no_venue) == (True, ("the amber spoon",))
    b = tracker.update(A("request(area)"), A("inform(area=north)"))
    assert (b.last_act_offered, b.offered_since_no_venue, b.offer_happened) == (False, ("the amber spoon",), True)
    b = tracker.update(A('inform(name="the hidden thistle",phone="0123")'), A("thankyou()"))  # inform_byname offers too
    assert b.last_act_offered and b.offered_since_no_venue == ("the amber spoon", "the hidden thistle")
    b = tracker.update(A('inform(name=none,name!="the hidden thistle",food=thai)'), A("reqalts()"))
    assert (b.last_act_offered, b.offered_since_no_venue, b.last_informed_no_venue) == (False, (), True)
    assert b.offered_since_no_venue is tracker.offered


def test_affirm_and_negate_after_confirm(tracker):
    tracker.update(A("hello()"), [(A("inform(area=north)"), 0.6)])
    b = tracker.update(A("confirm(area=north)"), A("affirm()"))  # read as inform(area=north)
    assert slot(b, "area") == {"north": 1.0, "none": 0.0} and method(b) == {"byconstraints": 1.0}
    tracker.reset()
    tracker.update(A("hello()"), [(A("inform(area=north)"), 0.6)])
    b = tracker.update(A("confirm(area=north)"), A("negate()"))  # denials are no evidence (PyDial)
    assert slot(b, "area") == {"north": 0.6, "none": 0.4}
    b = tracker.update(A("confirm(area=north)"), A("deny(area!=north,area=south)"))
    assert slot(b, "area") == {"south": 1.0, "none": 0.0}
    b = tracker.update(A("confirm(area=south)"), A("affirm(food=thai)"))  # the items and the confirmed value
    assert b.top("food") == ("thai", 1.0) and b.top("area") == ("south", 1.0)


def test_user_confirm_requests_the_slot_and_after_an_offer_means_byname(tracker):
    tracker.update(A("hello()"), A("inform(food=thai)"))
    b = tracker.update(A("request(area)"), A("confirm(food=thai)"))
    assert b.requested == {"food": 1.0} and method(b) == {"byconstraints": 1.0}  # no offer yet
    b = tracker.update(A('inform(name="the amber spoon",area=centre)'), A("confirm(pricerange=cheap)"))
    assert b.requested["pricerange"] == 1.0 and method(b) == {"byname": 1.0}
    assert slot(b, "pricerange") == {"none": 1.0}  # a confirm asks, it does not inform


def test_request_naming_the_venue_informs_the_name(tracker):
    tracker.update(A('inform(name="the amber spoon",food=thai)'), A("inform(food=thai)"))
    b = tracker.update(A("request(area)"), A('request(name="the amber spoon",phone)'))
    assert b.top("name") == ("the amber spoon", 1.0) and method(b) == {"byname": 1.0}
    assert b.requested == {"phone": 1.0}


def test_slotless_dontcare_belongs_to_the_slot_asked_for(tracker):
    b = tracker.update(A("request(area)"), A("inform(this=dontcare)"))
    assert b.top("area") == ("dontcare", 1.0)
    b = tracker.update(A("select(food=thai,food=indian)"), A("inform(this=dontcare)"))
    assert b.top("food") == ("dontcare", 1.0)
    b = tracker.update(A("reqmore()"), A("inform(this=dontcare)"))  # nothing was asked: dropped
    assert method(b) == {"byconstraints": 1.0} and slot(b, "pricerange") == {"none": 1.0}


def test_only_the_information_part_of_an_offer_answers_requests(tracker):
    tracker.update(A("hello()"), A("request(name,phone,addr)"))
    b = tracker.update(A('inform(name="the amber spoon",phone="01223")'), A("thankyou()"))
    assert dict(b.requested) == {"name": 1.0, "addr": 1.0}  # the offer's name does not count
    b = tracker.update(A("inform(name=none,addr=x)"), A("thankyou()"))
    assert dict(b.requested) == {"name": 1.0, "addr": 1.0}  # "no venue" informs nothing


def test_unknown_slots_and_values_are_ignored(tracker):
    b = tracker.update(A("hello()"), A("inform(type=restaurant,colour=red,food=klingon)"))
    assert slot(b, "food") == {"none": 1.0} and method(b) == {"none": 1.0}


def test_restart_resets(tracker):
    tracker.update(A("hello()"), A("inform(food=thai)"))
    tracker.update(A('inform(name="the amber spoon")'), A("request(phone)"))
    b = tracker.update(A("restart()"), A("inform(area=north)"))
    assert slot(b, "food") == {"none": 1.0} and not b.offer_happened and b.requested == {}
    assert tracker.offered == ()


@pytest.mark.parametrize(
    "hypotheses, message",
    [
        ([(A("inform(food=thai)"), 0.7), (A("inform(food=indian)"), 0.4)], "sum to 1.1"),
        ([(A("inform(food=thai)"), -0.1)], "confidence must be in"),
        ([("inform(food=thai)", 1.0)], "must be an \\(Act, confidence\\) pair"),
    ],
)
def test_bad_hypotheses(tracker, hypotheses, message):
    with pytest.raises(ValueError, match=message):
        tracker.update(A("hello()"), hypotheses)


def test_silence(tracker):
    b = tracker.update(A("request(area)"), None)
    assert b.discourse_act["silence"] == 1.0 and method(b) == {"none": 1.0}


def test_unchanged_slots_reuse_the_last_beliefs_distributions():
    # The tracker hands BeliefState the canonical distributions of the slots a turn did not
    # change, and remembers readings, evidences and discourse distributions; the beliefs must
    # equal those built from the raw distributions, with nothing remembered, every turn.
    from policies.handcrafted import HandcraftedPolicy
    from policies.sim.simulation import DialogueSimulator

    class Uncached(FocusTracker):
        def _build(self, discourse):
            self._canonical = {}
            return super()._build(discourse)

    class Forgetful(FocusTracker):  # no memo at all: every reading, evidence and distribution anew
        def _build(self, discourse):
            self._canonical, self._readings, self._certain, self._discourse = {}, {}, {}, {}
            return super()._build(discourse)

    def beliefs(tracker_type):
        sim = DialogueSimulator()
        sim.tracker = tracker_type(DOMAIN.ontology)
        policy, seen = HandcraftedPolicy(), []
        for i in range(30):
            sim.reset(np.random.default_rng(i))
            seen.append(sim.belief)
            while not sim.done:
                sim.step(policy.choose(sim.belief, sim.mask))
                seen.append(sim.belief)
        return seen

    cached, uncached, forgetful = beliefs(FocusTracker), beliefs(Uncached), beliefs(Forgetful)
    assert len(cached) == len(uncached) == len(forgetful) > 150
    assert all(a == b == c for a, b, c in zip(cached, uncached, forgetful))
    assert sum(a.slots is b.slots for a, b in zip(cached, cached[1:])) > 20  # unchanged slots shared


def test_beliefs_are_what_the_validating_constructor_builds(tracker):
    # The tracker builds its beliefs from memoised canonical parts without validating them
    # again; each must be the BeliefState its raw fields give: equal, in the same order, with
    # the same types.
    from policies.handcrafted import RandomPolicy
    from policies.sim.simulation import DialogueSimulator

    def raw(belief):
        fields = dict(vars(belief))
        fields["slots"] = {slot: dict(dist) for slot, dist in belief.slots.items()}
        for name in ("method", "discourse_act", "requested"):
            fields[name] = dict(fields[name])
        return fields

    def same(a, b):
        assert list(vars(a)) == list(vars(b))
        for (name, x), y in zip(vars(a).items(), vars(b).values()):
            assert type(x) is type(y) and repr(x) == repr(y), name
        for slot, dist in a.slots.items():
            assert type(dist) is type(b.slots[slot]) and dist._slot == b.slots[slot]._slot

    sim, policy, n = DialogueSimulator(), RandomPolicy(seed=0), 0
    for i in range(40):
        sim.reset(np.random.default_rng(i))
        while not sim.done:
            same(sim.belief, BeliefState(**raw(sim.belief)))
            sim.step(policy.choose(sim.belief, sim.mask))
            n += 1
    assert n > 300
    b = tracker.update(A("request(area)"), [(A("inform(area=north)"), 0.6), (A("inform(area=south)"), 0.3)])
    same(b, BeliefState(**raw(b)))
    with pytest.raises(InvalidContextError, match="last_offered"):
        tracker.update(A('inform(name="")'), A("ack()"))
