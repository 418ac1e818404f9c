"""Success rule, reward formulas and the interaction-quality estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from contexts.domain import default_domain
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.sim.rewards import (
    InteractionStats,
    RuleBasedIQ,
    checked_iq,
    iq_reward,
    task_success,
    task_success_reward,
)
from policies.sim.simulation import SimulationSettings, run_dialogues
from policies.sim.usersim import UserGoal

DOMAIN = default_domain()
VENUE = DOMAIN.query({"food": "thai", "pricerange": "cheap"})[0]
GOAL = UserGoal({"food": "thai", "pricerange": "cheap", "area": "dontcare"}, ("name", "phone", "addr"))
ALL = {"name": VENUE.name, "phone": VENUE.phone, "addr": VENUE.addr}


@pytest.mark.parametrize(
    "goal, venue, informed, expected",
    [
        (GOAL, VENUE, ALL, True),
        (GOAL, VENUE, {**ALL, "postcode": VENUE.postcode}, True),  # extra information is fine
        (GOAL, None, ALL, False),  # nothing offered
        (GOAL, VENUE, {"name": VENUE.name, "phone": VENUE.phone}, False),  # addr missing
        (GOAL, VENUE, {**ALL, "addr": None}, False),  # addr never answered
        (UserGoal({"food": "indian"}, ("name",)), VENUE, ALL, False),  # venue breaks the goal
        (GOAL.excluding(VENUE.name), VENUE, ALL, False),  # the user rejected this venue
        (GOAL.with_name("another place"), VENUE, ALL, False),  # the user accepted another venue
        (UserGoal({"food": "dontcare", "area": "dontcare"}, ("name",)), VENUE, {"name": VENUE.name}, True),
    ],
)
def test_success_rule(goal, venue, informed, expected):
    assert task_success(goal, venue, informed) is expected


def test_reward_formulas():
    assert task_success_reward(True, 5) == 15.0 and task_success_reward(False, 5) == -5.0
    assert iq_reward(5, 4) == 16.0 and iq_reward(1, 4) == -4.0 and iq_reward(3.5, 2) == 10.5


@pytest.mark.parametrize(
    "stats, score, iq",
    [
        # decisions beyond 3 cost 0.25 each
        (InteractionStats(turns=3), 5.0, 5),
        (InteractionStats(turns=5), 4.5, 5),  # rounds half up
        (InteractionStats(turns=6), 4.25, 4),
        (InteractionStats(turns=4, system_repeats=2), 2.75, 3),  # 1.0 per repeat
        (InteractionStats(turns=3, reasked_slots=1, confirmations=2), 4.0, 4),  # 0.5 + 2 * 0.25
        (InteractionStats(turns=5, rejected_offers=1, no_venue_informs=1), 3.75, 4),
        (InteractionStats(turns=3, user_corrections=1, goal_changes=1, user_confirms=2), 3.75, 4),
        (InteractionStats(turns=6, repeated_user_requests=2, unanswered_requests=1), 2.75, 3),  # 0.5 each
        (InteractionStats(turns=3, no_venue_offered=True), 4.0, 4),
        (InteractionStats(turns=9, user_hung_up=True, no_venue_offered=True), 1.5, 2),
        (InteractionStats(turns=25, hit_turn_limit=True, no_venue_offered=True, unanswered_requests=1), -3.0, 1),
    ],
)
def test_iq_rules(stats, score, iq):
    rules = RuleBasedIQ()
    assert rules.score(stats) == pytest.approx(score)
    assert rules(stats) == iq


def test_iq_weights_are_configurable_and_validated():
    assert RuleBasedIQ(no_offer=4.0)(InteractionStats(turns=3, no_venue_offered=True)) == 1
    with pytest.raises(TypeError):
        RuleBasedIQ(failure=2.0)  # type: ignore[call-arg]  # the goal-based term is gone
    with pytest.raises(TypeError):
        InteractionStats(turns=3, success=True)  # type: ignore[call-arg]  # the estimator never sees success
    with pytest.raises(ValueError, match="RuleBasedIQ.per_repeat must be >= 0.0, got -1.0"):
        RuleBasedIQ(per_repeat=-1.0)


@pytest.mark.parametrize("value", [0.5, 5.5, math.nan, "5", None, True])
def test_custom_estimator_output_is_checked(value):
    with pytest.raises(ValueError, match="expected a number in \\[1, 5\\]"):
        checked_iq(lambda stats: value, InteractionStats(turns=3))


def test_custom_estimator_accepts_numpy_and_floats():
    assert checked_iq(lambda s: np.float64(2.5), InteractionStats(turns=3)) == 2.5


def test_iq_varies_with_how_the_dialogue_went():
    good = run_dialogues(HandcraftedPolicy(), 200, seed=11)
    bad = run_dialogues(RandomPolicy(2), 200, seed=11)
    iq = np.concatenate([good.iq, bad.iq])
    success = np.concatenate([good.success, bad.success])
    turns = np.concatenate([good.turns, bad.turns])
    assert len(set(iq.tolist())) == 5  # every level occurs
    # not just success: IQ differs among successful dialogues, and longer ones score lower
    won = iq[success]
    assert len(set(won.tolist())) >= 3
    assert np.corrcoef(turns[success], won)[0, 1] < -0.5
    # calibrated: a policy as good as the paper's converged ones averages about 3.8
    assert 3.5 < good.mean_iq < 4.2 and bad.mean_iq < 1.6


def test_custom_estimator_in_simulation():
    result = run_dialogues(HandcraftedPolicy(), 5, seed=0, settings=SimulationSettings(iq_estimator=lambda s: 1 + (s.turns % 5)))
    assert result.iq.tolist() == [1 + (t % 5) for t in result.turns.tolist()]
    assert np.allclose(result.reward_iq, 5 * (result.iq - 1) - result.turns)
    with pytest.raises(ValueError, match="expected a number in \\[1, 5\\]"):
        run_dialogues(HandcraftedPolicy(), 1, seed=0, settings=SimulationSettings(iq_estimator=lambda s: 0))
