"""ObservationPolicy: policies over the Gymnasium environment's observation (and its mask)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from contexts import BeliefState, generate_grid
from contexts.generate import GridSpec
from policies.observation import ObservationPolicy
from policies.sim.observation import action_mask_for, observation_for
from policies.sim.simulation import SummaryPolicyAdapter, run_dialogues
from simscore.errors import InvalidContextError, InvalidResponseError
from simscore.policy import run_policy


def _grid():
    return generate_grid(GridSpec(levels=(0.0, 0.5, 1.0)))  # 3**3 * 6 = 162 contexts


class FirstAllowed:
    """A summary policy: the first unmasked action (to compare the adapters)."""

    name = "first"

    def choose(self, belief, mask):
        return int(mask.argmax())


def test_observation_policy_answers_like_the_summary_adapter():

    grid = _grid()
    calls = []

    def first_allowed(observations, masks):
        calls.append(observations.shape)
        if len(observations) == len(grid):
            assert np.array_equal(observations[7], observation_for(grid[grid.ids[7]]))
        return masks.argmax(axis=1)

    policy = ObservationPolicy(first_allowed, batched=True, use_masks=True, nlg_instance="first")
    reference = run_policy(SummaryPolicyAdapter(FirstAllowed()), grid)
    responses = run_policy(policy, grid)
    assert calls == [(162, 302)]  # one call for the whole set
    assert dict(responses) == dict(reference)  # same acts and, with the same NLG instance, same texts
    assert responses.provenance["adapter"] == "observation" and responses.provenance["nlg_instance"] == "first"
    context = grid[grid.ids[40]]
    assert policy.respond(context) == responses[context.id] and calls[-1] == (1, 302)
    again = run_policy(policy, grid)
    assert all(again[i] is responses[i] for i in grid.ids)  # cached responses are reused


def test_observation_policy_single_observations_and_summary_protocol():

    seen = []

    def always_request_area(observation):
        seen.append(observation.shape)
        return 0

    policy = ObservationPolicy(always_request_area, text=False)
    responses = run_policy(policy, _grid())
    assert set(seen) == {(302,)} and {str(r.action) for r in responses.values()} == {"request(area)"}
    assert all(r.text is None for r in responses.values())
    result = run_dialogues(policy, 3, seed=0)  # also a SummaryPolicy
    assert len(result) == 3


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda obs: obs[:, :2].astype(int), "returned shape"),
        (lambda obs: obs[:, 0] + 0.5, "integer action indices"),
        (lambda obs: [16] * len(obs), "chose 16; expected a summary action index in \\[0, 16\\)"),
        (lambda obs: [-1] * len(obs), "chose -1"),
    ],
)
def test_observation_policy_rejects_bad_actions(fn, message):

    with pytest.raises(InvalidResponseError, match=message):
        run_policy(ObservationPolicy(fn, batched=True, name="bad"), _grid())


def test_observation_for_needs_a_belief():
    with pytest.raises(InvalidContextError, match="BeliefState"):
        observation_for(SimpleNamespace(id="x"))
    assert action_mask_for(BeliefState()).shape == (16,)
    with pytest.raises(TypeError, match="fn must be callable"):

        ObservationPolicy("not callable")
