"""The agenda-based user simulator: goals, agenda, reactions, patience."""

from __future__ import annotations

import numpy as np
import pytest

from contexts.domain import default_domain
from policies.usersim import AgendaUser, SimulationError, UserGoal, UserSimulatorConfig
from simscore.acts import Act

A = Act.parse
DOMAIN = default_domain()
GOAL = UserGoal({"area": "centre", "food": "thai", "pricerange": "cheap"}, ("name", "phone"))
THAI_CHEAP = DOMAIN.query({"food": "thai", "pricerange": "cheap"})


def user_with(goal: UserGoal = GOAL, seed: int = 0, **config: object) -> AgendaUser:
    user = AgendaUser(DOMAIN, config=UserSimulatorConfig(**config))
    user.reset(np.random.default_rng(seed), goal=goal)
    return user


def items(act: Act) -> set[tuple[str, str, str | None]]:
    return {(i.slot, i.op, i.value) for i in act.items}


def test_goals_have_two_or_three_matches_and_name_requests():
    user = AgendaUser(DOMAIN)
    rng = np.random.default_rng(1)
    extra_counts = set()
    for _ in range(300):
        goal = user.sample_goal(rng)
        assert set(goal.constraints) == {"area", "food", "pricerange"}
        assert 2 <= DOMAIN.count(goal.constraints) <= 3
        assert goal.requests[0] == "name" and len(set(goal.requests)) == len(goal.requests)
        assert set(goal.requests[1:]) <= {"addr", "phone", "postcode", "signature", "description"}
        extra_counts.add(len(goal.requests) - 1)
    assert extra_counts == {0, 1, 2}


def test_impossible_goal_matches_raise():
    user = AgendaUser(DOMAIN, config=UserSimulatorConfig(goal_matches=(500, 600), goal_attempts=20))
    with pytest.raises(SimulationError, match="no goal with 500-600 matching venues"):
        user.reset(np.random.default_rng(0))


def test_first_turn_pops_inform_type_and_maybe_more():
    lengths = set()
    for seed in range(40):
        user = user_with(seed=seed)
        act = user.respond(A("hello()"))
        assert act.intents == ("inform",) and ("type", "=", "restaurant") in items(act)
        assert items(act) - {("type", "=", "restaurant")} <= {
            ("area", "=", "centre"), ("food", "=", "thai"), ("pricerange", "=", "cheap")
        }
        lengths.add(len(act.items))
    assert lengths == {1, 2, 3, 4}  # merging happens, sometimes all the way


def test_request_answered_from_goal_or_dontcare():
    user = user_with(merge_prob=(0.0, 0.0))
    assert user.respond(A("request(food)")) == A("inform(food=thai)")
    dc = user_with(UserGoal({"area": "dontcare", "food": "thai", "pricerange": "cheap"}), merge_prob=(0.0, 0.0))
    assert dc.respond(A("request(area)")) == A("inform(area=dontcare)")
    # an answered constraint leaves the agenda
    user.respond(A("hello()"))  # inform(type=restaurant)
    later = [user.respond(A("reqmore()")) for _ in range(2)]
    assert all(("food", "=", "thai") not in items(act) for act in later)


def test_confirm_right_and_wrong():
    assert user_with().respond(A("confirm(food=thai)")) == A("affirm()")
    replies = set()
    for seed in range(30):
        reply = user_with(seed=seed).respond(A("confirm(food=indian)"))
        replies.add(reply.intent)
        assert ("food", "=", "thai") in items(reply)  # full patience: never hangs up
    assert replies == {"negate", "deny", "inform"}


def test_wrong_confirm_with_low_patience_may_hang_up():
    hung = 0
    for seed in range(200):
        user = user_with(seed=seed, patience=(4, 4))
        user.respond(A("request(area)"))
        user.respond(A("request(area)"))  # repeated: patience 3 of 4
        user.respond(A("request(area)"))  # patience 2: hang-up probability (1 - 2/4)^2 = 0.25
        reply = user.respond(A("confirm(food=indian)"))
        hung += reply == A("bye()")
    assert 25 <= hung <= 75  # about 50 of 200


def test_patience_runs_out_on_repeats():
    user = user_with(patience=(4, 4))
    replies = [user.respond(A("request(area)")) for _ in range(5)]  # 4 repeats: patience 4 -> 0
    assert replies[-1] == A("bye()") and user.counters.hung_up and user.finished
    assert all(r.intent == "inform" for r in replies[:-1])


def test_select_answers_goal_value():
    assert user_with(merge_prob=(0.0, 0.0)).respond(A("select(area=north,area=south)")) == A("inform(area=centre)")


def test_good_offer_then_requests_then_bye():
    venue = THAI_CHEAP[0]
    user = user_with(merge_prob=(1.0, 1.0), reqalts_good_offer_prob=(0.0, 0.0))
    reply = user.respond(Act("inform", [("name", venue.name), ("food", "thai")]))
    assert reply == A("request(phone)")
    assert not user.done
    reply = user.respond(Act("inform", [("name", venue.name), ("phone", venue.phone)]))
    assert reply == A("bye()") and user.done and user.finished


def test_bad_offer_rejected():
    bad = DOMAIN.query({"food": "indian"})[0]
    kinds = set()
    for seed in range(30):
        user = user_with(seed=seed, relax_bad_offer_prob=(0.0, 0.0))
        reply = user.respond(Act("inform", [("name", bad.name)]))
        kinds.add(reply.intent)
        if reply.intent == "inform":
            assert ("food", "=", "thai") in items(reply)
        assert user.counters.rejected_offers == 1
    assert kinds == {"reqalts", "inform"}


def test_no_venue_relax_or_bye():
    outcomes = set()
    for seed in range(30):
        user = user_with(seed=seed)
        reply = user.respond(A("inform(name=none,food=thai,pricerange=cheap,area=centre)"))
        if reply == A("bye()"):
            outcomes.add("bye")
        else:
            (item,) = reply.items
            assert item.value == "dontcare" and user.goal.constraints[item.slot] == "dontcare"
            outcomes.add("relax")
    assert outcomes == {"bye", "relax"}
    # wrong constraints in the system's act are corrected first
    assert user_with().respond(A("inform(name=none,food=indian)")) == A("inform(food=thai)")


def test_same_seed_same_behaviour():
    def run(seed: int) -> list[str]:
        user = AgendaUser(DOMAIN)
        user.reset(np.random.default_rng(seed))
        acts = ["hello()", "request(area)", "request(food)", "request(pricerange)", "reqmore()"]
        return [str(user.respond(A(a))) for a in acts] + [str(user.goal)]

    assert run(5) == run(5)
    assert len({tuple(run(s)) for s in range(10)}) > 5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"merge_prob": (0.5, 0.2)}, "merge_prob must satisfy"),
        ({"patience": (0, 3)}, "patience must satisfy"),
        ({"goal_dontcare_prob": 1.5}, "goal_dontcare_prob must be in"),
        ({"request_slots": ("phone", "colour")}, "'colour' is not a venue field"),
        ({"extra_requests": (0, 9)}, "extra_requests must satisfy"),
        ({"goal_matches": (2.0, 3)}, "goal_matches must hold integers"),
    ],
)
def test_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UserSimulatorConfig(**kwargs)
