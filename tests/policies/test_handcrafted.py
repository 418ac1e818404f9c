"""Handcrafted rules on hand-built beliefs, its task success, and the random baseline."""

from __future__ import annotations

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.sim.simulation import run_dialogues
from policies.sim.summary import SUMMARY_ACTIONS, SummaryActions

DOMAIN = default_domain()
SPACE = SummaryActions(DOMAIN)
POLICY = HandcraftedPolicy()
OFFER = DOMAIN.query({"food": "thai", "pricerange": "cheap"})[0].name


def decide(**belief: object) -> str:
    b = BeliefState(**belief)
    return SUMMARY_ACTIONS[POLICY.choose(b, SPACE.mask(b))]


@pytest.mark.parametrize(
    "belief, expected",
    [
        ({}, "request_area"),
        ({"slots": {"area": {"north": 1.0}}, "method": {"byconstraints": 1.0}}, "request_food"),
        ({"slots": {"area": {"dontcare": 1.0}, "food": {"thai": 1.0}}, "method": {"byconstraints": 1.0}},
         "request_pricerange"),
        ({"slots": {"food": {"thai": 1.0}, "pricerange": {"cheap": 1.0}}, "method": {"byconstraints": 1.0}},
         "inform"),  # area unknown but the two matches are both in the centre
        ({"slots": {"food": {"thai": 0.7}}, "method": {"byconstraints": 1.0}}, "confirm_food"),
        ({"slots": {"pricerange": {"cheap": 0.34, "moderate": 0.33}}, "method": {"byconstraints": 1.0}},
         "select_pricerange"),
        ({"slots": {"food": {"thai": 1.0}}, "method": {"byname": 1.0}, "requested": {"phone": 1.0},
          "last_offered": OFFER, "offer_happened": True}, "inform_byname"),
        ({"slots": {"food": {"thai": 1.0}}, "method": {"byalternatives": 1.0}, "last_offered": OFFER,
          "offer_happened": True}, "inform_alternatives"),
        ({"method": {"finished": 0.9, "byname": 0.1}, "last_offered": OFFER, "offer_happened": True}, "bye"),
        ({"slots": {"area": {"centre": 1.0}, "food": {"thai": 1.0}, "pricerange": {"cheap": 1.0}},
          "method": {"none": 1.0}, "offer_happened": True, "last_offered": OFFER}, "inform"),  # none: byconstraints
        ({"slots": {"area": {"centre": 1.0}, "food": {"thai": 1.0}, "pricerange": {"cheap": 1.0}},
          "method": {"byname": 1.0}, "offer_happened": True}, "reqmore"),  # no venue to inform about by name
    ],
)
def test_rules(belief, expected):
    assert decide(**belief) == expected


def test_masked_actions_are_avoided():
    # a rule whose action is masked falls through: byname without a known venue
    assert decide(slots={"food": {"thai": 1.0}}, method={"byname": 1.0}) == "request_area"


def test_parameters_validated():
    with pytest.raises(ValueError, match="confirm_below must be <= 1.0, got 1.5"):
        HandcraftedPolicy(confirm_below=1.5)


def test_handcrafted_success_and_length():
    # PyDial's handcrafted policy in Environment 1 (measured): 100 % at 5.87-5.99 turns.
    # Ours, measured: 0.998 at 5.96 turns on 3,000 dialogues.
    result = run_dialogues(HandcraftedPolicy(), 300, seed=123)
    assert result.success_rate >= 0.95
    assert 5.4 <= result.mean_turns <= 6.5
    assert result.turns.max() <= 20


def test_random_policy_is_far_below():
    hand = run_dialogues(HandcraftedPolicy(), 200, seed=5)
    rand = run_dialogues(RandomPolicy(seed=0), 200, seed=5)
    assert rand.success_rate < hand.success_rate - 0.3
    assert rand.mean_reward_ts < hand.mean_reward_ts - 15
    assert rand.mean_turns > 2 * hand.mean_turns


def test_random_policy_respects_mask_and_is_seeded():
    b = BeliefState(slots={"food": {"thai": 0.7}}, method={"byconstraints": 1.0})
    mask = SPACE.mask(b)
    chosen = set()
    for seed in range(60):
        a = RandomPolicy(seed=seed).choose(b, mask)
        assert mask[a]
        chosen.add(a)
    assert chosen == set(np.flatnonzero(mask).tolist())
    # in dialogue mode, draws come from the given generator mixed with the seed
    p, q = RandomPolicy(seed=1), RandomPolicy(seed=1)
    p.begin_dialogue(np.random.default_rng(9))
    q.begin_dialogue(np.random.default_rng(9))
    assert [p.choose(b, mask) for _ in range(20)] == [q.choose(b, mask) for _ in range(20)]
    unmasked = RandomPolicy(seed=2, respect_mask=False)
    assert {unmasked.choose(BeliefState(requested={"phone": k / 100}), mask) for k in range(100)} == set(range(16))


def test_random_seed_changes_dialogues():
    a = run_dialogues(RandomPolicy(seed=0), 30, seed=1)
    b = run_dialogues(RandomPolicy(seed=1), 30, seed=1)
    assert a.turns.tolist() != b.turns.tolist()
