"""The agenda-based user of PyDial's Environment 1: goals, agenda, every behaviour, patience.

Behaviours are checked with their probabilities fixed at 0 or 1 (``(p, p)`` ranges), so each
test sees one branch of PyDial's rules; frequency tests use the default ranges.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from contexts.domain import default_domain
from policies.sim.usersim import BEHAVIOURS, AgendaUser, SimulationError, UserGoal, UserSimulatorConfig
from simscore.acts import Act

A = Act.parse
DOMAIN = default_domain()
GOAL = UserGoal({"area": "centre", "food": "thai", "pricerange": "cheap"}, ("name", "phone"))
THAI_CHEAP = DOMAIN.query({"food": "thai", "pricerange": "cheap"})
OFF = (0.0, 0.0)
ON = (1.0, 1.0)
#: Every optional behaviour off: a plain, cooperative user (each test switches on what it checks).
QUIET = {name: OFF for name in BEHAVIOURS}


def user_with(goal: UserGoal | None = GOAL, seed: int = 0, **config: object) -> AgendaUser:
    user = AgendaUser(DOMAIN, config=UserSimulatorConfig(**{**QUIET, **config}))
    user.reset(np.random.default_rng(seed), goal=goal)
    return user


def items(act: Act) -> set[tuple[str, str, str | None]]:
    return {(i.slot, i.op, i.value) for i in act.items}


def offer(venue, *slots: str) -> Act:
    return Act("inform", [("name", venue.name), *((s, venue[s]) for s in slots)])


# ----------------------------------------------------------------------------- goals


def test_goals_are_uniform_over_combinations_two_or_three_venues_match():
    user = AgendaUser(DOMAIN)
    rng = np.random.default_rng(1)
    seen = collections.Counter()
    extra = collections.Counter()
    for _ in range(3000):
        goal = user.sample_goal(rng)
        assert set(goal.constraints) == {"area", "food", "pricerange"}
        assert 2 <= DOMAIN.count(goal.constraints) <= 3
        assert goal.requests[0] == "name" and len(set(goal.requests)) == len(goal.requests)
        assert set(goal.requests[1:]) <= {"addr", "phone", "postcode", "signature", "description"}
        seen[tuple(sorted(goal.constraints.items()))] += 1
        extra[len(goal.requests) - 1] += 1
    valid = user._uniform_goals()
    assert len(seen) == len(valid)  # every valid combination occurs, nothing else
    expected = 3000 / len(valid)
    assert max(seen.values()) < 2 * expected and min(seen.values()) > expected / 3
    # n in {0, 1, 2} drawn from 6 slots that include name: P(0 extra) = 1/3 + 1/3 * 1/6 + ... = 7/18
    assert extra[0] / 3000 == pytest.approx(7 / 18, abs=0.04)
    assert extra[2] / 3000 == pytest.approx(4 / 18, abs=0.04)


def test_goals_from_a_venue_and_impossible_goals():
    user = AgendaUser(DOMAIN, config=UserSimulatorConfig(goal_sampling="venue"))
    goal = user.sample_goal(np.random.default_rng(0))
    assert 2 <= DOMAIN.count(goal.constraints) <= 3
    for sampling in ("uniform", "venue"):
        user = AgendaUser(DOMAIN, config=UserSimulatorConfig(goal_matches=(500, 600), goal_attempts=20,
                                                             goal_sampling=sampling))
        with pytest.raises(SimulationError, match="500-600 matching venues"):
            user.reset(np.random.default_rng(0))


# ----------------------------------------------------------------------------- the first turn


def test_greeting_and_informs_merged_into_the_first_turn():
    assert user_with(greeting=ON).respond(A("hello()")) == A("hello()")
    plain = user_with().respond(A("hello()"))
    assert plain == A("inform(type=restaurant)")
    merged = user_with(inform_combination=ON).respond(A("hello()"))
    assert items(merged) == {("type", "=", "restaurant"), ("area", "=", "centre"), ("food", "=", "thai"),
                             ("pricerange", "=", "cheap")}
    with_hello = user_with(greeting=ON, inform_combination=ON).respond(A("hello()"))
    assert with_hello.intents == ("hello",) and len(with_hello.items) == 4


def test_default_user_merges_sometimes():
    lengths = collections.Counter()
    for seed in range(200):
        user = AgendaUser(DOMAIN)
        user.reset(np.random.default_rng(seed), goal=GOAL)
        lengths[len(user.respond(A("hello()")).items)] += 1
    assert set(lengths) == {0, 1, 2, 3, 4}  # hello() alone ... everything at once


# ----------------------------------------------------------------------------- requests, select, confirm


def test_request_is_answered_from_the_goal_and_the_answer_leaves_the_agenda():
    user = user_with()
    assert user.respond(A("request(food)")) == A("inform(food=thai)")
    assert user.respond(A("request(area)")) == A("inform(area=centre)")
    rest = [user.respond(A("hello()")) for _ in range(3)]
    assert rest == [A("inform(type=restaurant)"), A("inform(pricerange=cheap)"), A("bye()")]


def test_dontcare_answer_may_drop_its_slot():
    goal = UserGoal({"area": "dontcare", "food": "thai", "pricerange": "cheap"}, ("name",))
    assert user_with(goal).respond(A("request(area)")) == A("inform(area=dontcare)")
    assert user_with(goal, no_slot_with_dontcare=ON).respond(A("request(area)")) == A("inform(this=dontcare)")
    assert user_with(goal, no_slot_with_dontcare=ON).respond(A("select(area=north,area=south)")) == A(
        "inform(this=dontcare)"
    )


def test_select_answers_the_goal_value():
    assert user_with().respond(A("select(area=north,area=south)")) == A("inform(area=centre)")


def test_confirm_right_dontcare_and_affirm_combination():
    assert user_with().respond(A("confirm(food=thai)")) == A("affirm()")
    dontcare = UserGoal({"area": "dontcare", "food": "thai", "pricerange": "cheap"}, ("name",))
    assert user_with(dontcare).respond(A("confirm(area=north)")) == A("affirm()")
    user = user_with(affirm_combination=ON)
    user.respond(A("hello()"))  # inform(type=restaurant) leaves the agenda
    combined = user.respond(A("confirm(food=thai)"))
    assert combined.intents == ("affirm",) and len(combined.items) == 1


@pytest.mark.parametrize(
    ("negate", "deny", "expected"),
    [(ON, OFF, "negate(food=thai)"), (OFF, ON, "deny(food!=indian,food=thai)"), (OFF, OFF, "inform(food=thai)")],
)
def test_wrong_confirm_is_corrected(negate, deny, expected):
    user = user_with(correcting_act_negate=negate, correcting_act_deny=deny)
    assert user.respond(A("confirm(food=indian)")) == A(expected)
    assert user.counters.corrections == 1


def test_wrong_confirm_with_low_patience_may_hang_up():
    hung = 0
    for seed in range(300):
        user = user_with(seed=seed, patience=(4, 4))
        for _ in range(3):
            user.respond(A("request(area)"))  # two repeats: patience 2 of 4
        reply = user.respond(A("confirm(food=indian)"))  # hang-up probability (1 - 2/4)^2 = 0.25
        hung += reply == A("bye()") and user.counters.hung_up
    assert 45 <= hung <= 105  # about 75 of 300


def test_patience_runs_out_on_repeats():
    user = user_with(patience=(4, 4))
    replies = [user.respond(A("request(area)")) for _ in range(5)]  # repeats 2..5: patience 4 -> 0
    assert replies[-1] == A("bye()") and user.counters.hung_up and user.finished
    assert all(r.intent == "inform" for r in replies[:-1])


# ----------------------------------------------------------------------------- offers


def test_good_offer_is_accepted_open_slots_requested_then_pending_items_then_bye():
    venue = THAI_CHEAP[0]
    user = user_with()
    assert user.respond(offer(venue, "food")) == A("request(phone)")
    assert user.goal.name == venue.name and user.accepted == venue.name and not user.done
    # answered: the user still says what is left on its agenda, then bye
    replies = [user.respond(Act("inform", [("name", venue.name), ("phone", venue.phone)]))]
    assert user.done
    while replies[-1] != A("bye()"):
        replies.append(user.respond(A("reqmore()")))
    assert A("inform(type=restaurant)") in replies


def test_accepted_venue_makes_the_user_ask_instead_of_answering():
    venue = THAI_CHEAP[0]
    user = user_with()
    user.respond(offer(venue, "food"))
    assert user.respond(A("request(area)")) == Act("request", [("name", venue.name), ("phone",)])
    named = user_with(add_venue_name_to_request=ON, add_slot_to_request=ON,
                      goal=UserGoal(GOAL.constraints, ("name", "phone", "addr")))
    assert named.respond(offer(venue, "food")) == A("request(addr,phone)")


def test_only_mentioned_slots_are_checked():
    venue = next(v for v in DOMAIN.venues if v.food == "thai" and v.pricerange != "cheap")  # wrong price
    careless = user_with()
    assert careless.respond(offer(venue, "food")).intents == ("request",)  # price not mentioned: accepted
    assert careless.accepted == venue.name and not careless.done  # ... and the task fails
    mentioned = user_with(correcting_act_negate=ON)
    assert mentioned.respond(offer(venue, "food", "pricerange")) == A("negate(pricerange=cheap)")
    assert mentioned.filled == {"name": None, "phone": None}
    omniscient = user_with(check_unmentioned_constraints=True, correcting_act_negate=ON)
    assert omniscient.respond(offer(venue, "food")) == A("negate(pricerange=cheap)")


def test_reqalts_after_the_first_offer_rejects_the_venue_for_good():
    venue = THAI_CHEAP[0]
    user = user_with(reqalts_after_first_offer=ON)
    assert user.respond(offer(venue, "food")) == A("reqalts()")
    assert user.goal.excluded == (venue.name,) and user.counters.rejected_offers == 1
    # offered again later: rejected again (a name != correction is said as reqalts)
    assert user.respond(offer(venue, "food")) == A("reqalts()")
    other = THAI_CHEAP[1] if len(THAI_CHEAP) > 1 else None
    if other is not None:
        assert user.respond(offer(other, "food")).intents == ("request",)


def test_goal_change_after_the_first_offer():
    venue = THAI_CHEAP[0]
    told = user_with(change_goal_after_first_offer=ON, constraint_relax=ON, tell_about_change=ON)
    reply = told.respond(offer(venue, "food", "pricerange"))
    assert reply.intents == ("reqalts",) and len(reply.items) == 1
    slot = reply.items[0].slot
    assert slot in ("food", "pricerange") and told.goal.constraints[slot] == "dontcare"
    assert told.counters.goal_changes == 1
    silent = user_with(change_goal_after_first_offer=ON, constraint_relax=OFF, tell_about_change=OFF)
    assert silent.respond(offer(venue, "food")) == A("reqalts()")
    new_food = silent.goal.constraints["food"]
    assert new_food not in ("thai", "dontcare") and "food" in silent.goal.requests  # asks for it later


def test_no_venue_always_changes_the_goal_and_asks_for_alternatives():
    for seed in range(20):
        user = user_with(seed=seed, constraint_relax=(0.5, 0.5))
        reply = user.respond(A("inform(name=none,food=thai,area=centre)"))
        assert reply.intents == ("reqalts",) and len(reply.items) == 1
        assert reply.items[0].slot in ("food", "area")
        assert user.goal.constraints[reply.items[0].slot] == reply.items[0].value
    old = user_with(new_goal_scenarios=False, bye_or_start_over=ON)
    assert old.respond(A("inform(name=none,food=thai)")) == A("bye()")


def test_listed_venues_the_user_picks_one_that_fits():
    venue = THAI_CHEAP[0]
    user = user_with(reqalts_after_first_offer=ON)
    user.respond(offer(venue, "food"))  # rejected: name != venue
    listed = Act("inform", [("name", "none"), ("food", "thai"), ("pricerange", "cheap"), ("name", "!=", venue.name)])
    reply = user.respond(listed)
    assert user.accepted == venue.name and user.goal.excluded == ()  # the exclusion is dropped
    assert reply == Act("request", [("name", venue.name), ("phone",)])


def test_thanks_acks_pending_items_and_confirms_after_an_accepted_inform():
    venue = THAI_CHEAP[0]
    assert user_with(thank=ON).respond(offer(venue, "food")) == A("thankyou()")
    assert user_with(ack=ON).respond(offer(venue, "food")) == A("ack()")
    pending = user_with(deal_with_pending=ON)
    assert pending.respond(offer(venue, "food")) == A("inform(type=restaurant)")
    confirming = user_with(inform_to_confirm=ON, deal_with_pending=ON)
    confirming.respond(A("hello()"))
    reply = confirming.respond(offer(venue, "food"))
    assert reply.intents == ("confirm",)
    random_confirm = user_with(confirm_random_constraint=ON)
    reply = random_confirm.respond(offer(venue, "food"))
    assert reply.intents == ("confirm",) and reply.items[0].slot in ("area", "pricerange")


def test_overrule_correction_confirms_something_else():
    venue = next(v for v in DOMAIN.venues if v.food == "indian")
    user = user_with(overrule_correction=ON)
    reply = user.respond(offer(venue, "food"))
    assert reply.intents == ("confirm",) and reply.items[0].slot != "food"


# ----------------------------------------------------------------------------- reqmore


def test_reqmore():
    venue = THAI_CHEAP[0]

    def informed_and_answered(**config: object) -> AgendaUser:
        user = user_with(goal=UserGoal(GOAL.constraints, ("name",)), **config)
        for _ in range(4):
            user.respond(A("hello()"))  # type and the three constraints, one per turn
        user.respond(offer(venue, "area", "food", "pricerange"))
        assert user.done
        return user

    assert informed_and_answered(no_after_reqmore=ON).respond(A("reqmore()")) == A("negate()")
    assert informed_and_answered().respond(A("reqmore()")) == A("bye()")
    pending = user_with()
    assert pending.respond(A("reqmore()")) == A("inform(type=restaurant)")  # carries on with the agenda
    nothing = user_with(yes_after_reqmore=ON)
    for _ in range(4):
        nothing.respond(A("hello()"))  # everything said, no venue yet
    assert nothing.respond(A("reqmore()")) == A("affirm()")
    restate = user_with()
    for _ in range(4):
        restate.respond(A("hello()"))
    assert items(restate.respond(A("reqmore()"))) == {
        ("type", "=", "restaurant"), ("area", "=", "centre"), ("food", "=", "thai"), ("pricerange", "=", "cheap")
    }


# ----------------------------------------------------------------------------- determinism, config


def test_same_seed_same_behaviour():
    def transcript(seed: int) -> list[str]:
        user = AgendaUser(DOMAIN)
        user.reset(np.random.default_rng(seed))
        acts = [A("hello()"), A("request(food)"), A("request(area)"), A("request(pricerange)"), A("confirm(food=thai)")]
        return [str(user.respond(act)) for act in acts] + [str(user.goal.to_json())]

    assert transcript(3) == transcript(3)
    assert transcript(3) != transcript(4)


def test_easy_preset_is_a_plain_user():
    easy = UserSimulatorConfig.easy()
    assert easy.goal_sampling == "venue" and easy.check_unmentioned_constraints
    assert easy.greeting == OFF and easy.reqalts_after_first_offer == OFF and easy.thank == OFF


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"inform_combination": (0.5, 0.2)}, "inform_combination must satisfy"),
        ({"greeting": (0.0, 1.5)}, "greeting must satisfy"),
        ({"patience": (0, 3)}, "patience must satisfy"),
        ({"request_pool": ("colour",)}, "'colour' is not a venue field"),
        ({"goal_sampling": "random"}, "goal_sampling must be 'uniform' or 'venue'"),
        ({"thank": (0.6, 0.6), "ack": (0.6, 0.6)}, "thank and ack are alternatives"),
        ({"check_unmentioned_constraints": "yes"}, "must be True or False"),
    ],
)
def test_config_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UserSimulatorConfig(**kwargs)


@pytest.mark.parametrize("config", [UserSimulatorConfig(), UserSimulatorConfig.easy()])
def test_behaviour_probabilities_are_numpys_uniform_draws(config):
    # reset draws them as low + (high - low) * rng.random(), element by element: exactly
    # what rng.uniform(lows, highs) gives, from the same stream position.
    user = AgendaUser(default_domain(), config=config)
    goal = UserGoal({"food": "thai"}, ("name",))
    lows = np.array([getattr(config, name)[0] for name in BEHAVIOURS])
    highs = np.array([getattr(config, name)[1] for name in BEHAVIOURS])
    for seed in range(200):
        user.reset(np.random.default_rng(seed), goal=goal)
        expected = np.random.default_rng(seed)
        assert list(user.p.values()) == expected.uniform(lows, highs).tolist()
        assert user.max_patience == int(expected.integers(config.patience[0], config.patience[1] + 1))
