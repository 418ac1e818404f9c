"""policies.degenerate: deterministic, order-independent trivial policies with valid acts."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.context import Context
from contexts.dialogue_log import Dialogue, DialogueTurn, dialogue_contexts
from contexts.generate import GridSpec, generate_grid
from policies.degenerate import (
    DEFAULT_CYCLE,
    DEFAULT_UNIFORM_ACTS,
    ConstantPolicy,
    CyclicPolicy,
    EchoPolicy,
    UniformActPolicy,
    degenerate_policies,
)
from simscore.acts import Act
from simscore.policy import run_policy
from simscore.responses import Response

GRID = generate_grid(GridSpec(levels=(0.0, 0.5, 1.0)))


def _collected() -> list[Context]:
    turns = (
        DialogueTurn(turn_index=0, belief=BeliefState(), system_act="hello()", system_text="Hello."),
        DialogueTurn(turn_index=1, user_act="inform(food=thai)", user_text="Thai food, please.",
                     belief=BeliefState(slots={"food": {"thai": 0.9}}, method={"byconstraints": 1.0}),
                     system_act="request(area)", system_text="Which part of town?"),
        DialogueTurn(turn_index=2, user_act="inform(area=north)", user_text="In the north.",
                     belief=BeliefState(slots={"food": {"thai": 0.9}, "area": {"north": 0.7}},
                                        method={"byconstraints": 1.0}),
                     system_act="confirm(area=north)", system_text="North?"),
    )
    return dialogue_contexts(Dialogue("d0", turns), "sim")


@pytest.mark.parametrize("name", ["constant", "echo", "cyclic", "uniform"])
def test_same_inputs_same_responses_in_any_order(name: str) -> None:
    policy = degenerate_policies(seed=7)[name]
    first = run_policy(policy, GRID)
    again = run_policy(degenerate_policies(seed=7)[name], GRID)
    shuffled = list(GRID)
    random.Random(3).shuffle(shuffled)
    reordered = run_policy(policy, shuffled)
    assert dict(first) == dict(again) == {cid: reordered[cid] for cid in first}
    assert all(isinstance(r.action, Act) and isinstance(r.text, str) and r.text.strip() for r in first.values())


def test_no_global_random_state_is_touched() -> None:
    np.random.seed(1)
    before = np.random.get_state()[1].copy()
    state = random.getstate()
    run_policy(UniformActPolicy(seed=2), GRID)
    assert np.array_equal(np.random.get_state()[1], before) and random.getstate() == state


def test_constant_policy_says_one_thing() -> None:
    responses = run_policy(ConstantPolicy(), GRID)
    assert set(responses.values()) == {Response(Act.parse("request(food)"), ConstantPolicy().text)}
    assert "food" in ConstantPolicy().text.lower() or "cuisine" in ConstantPolicy().text.lower()
    custom = ConstantPolicy("bye()", text="Goodbye.")
    assert custom.respond(GRID.contexts[0]) == Response(Act.parse("bye()"), "Goodbye.")


def test_echo_confirms_the_top_values_of_a_generated_belief() -> None:
    policy = EchoPolicy()
    for context in GRID:
        expected = {(slot, context.belief.top(slot)[0]) for slot in context.belief.slots
                    if context.belief.top(slot)[1] > 0}
        act = policy.respond(context).action
        if expected:
            assert act.intent == "confirm" and {(i.slot, i.value) for i in act.items} == expected
        else:
            assert act == Act.parse("repeat()")
    high = EchoPolicy(min_prob=0.6).respond(GRID["gen/area=0.5/pricerange=1.0/food=0.5/method=byconstraints"])
    assert str(high.action) == "confirm(pricerange=expensive)"


def test_echo_repeats_the_last_text_of_a_collected_context() -> None:
    contexts = _collected()
    responses = [EchoPolicy().respond(c) for c in contexts]
    assert responses[1].text == "Thai food, please." and responses[2].text == "In the north."
    assert str(responses[2].action) == "confirm(area=north,food=thai)"
    assert responses[0].action == Act.parse("repeat()") and responses[0].text  # empty history: the NLG
    assert EchoPolicy(echo_text=False).respond(contexts[1]).text != "Thai food, please."


def test_cyclic_period_by_turn_and_by_hash() -> None:
    policy = CyclicPolicy(by="turn")
    acts = [Act.parse(a) for a in DEFAULT_CYCLE]
    contexts = [Context(f"c{t}", BeliefState(), {"source": "col", "turn_index": t}) for t in range(9)]
    assert [policy.respond(c).action for c in contexts] == [acts[t % 4] for t in range(9)]
    assert policy.period == 4
    auto = run_policy(CyclicPolicy(), GRID)  # no turn index: a stable hash of the id
    assert set(auto.actions()) == set(acts)
    by_hash = [CyclicPolicy(by="hash").index(c) for c in GRID]
    assert by_hash == [CyclicPolicy(by="hash", name="other").index(c) for c in GRID]
    assert set(by_hash) == {0, 1, 2, 3}
    assert auto.actions() == run_policy(CyclicPolicy(by="hash"), GRID).actions()
    with pytest.raises(ValueError, match="turn_index"):
        policy.respond(GRID.contexts[0])


def test_uniform_draws_only_valid_acts_and_all_of_them() -> None:
    responses = run_policy(UniformActPolicy(seed=0), GRID)
    valid = {Act.parse(a) for a in DEFAULT_UNIFORM_ACTS}
    assert set(responses.actions()) == valid
    counts = np.array([responses.actions().count(a) for a in valid])
    assert counts.min() > len(GRID) / len(valid) / 3  # roughly uniform over 162 contexts
    other = run_policy(UniformActPolicy(seed=1), GRID)
    assert responses.actions() != other.actions()
    from_generator = UniformActPolicy(seed=np.random.default_rng(5))
    assert from_generator.seed == UniformActPolicy(seed=np.random.default_rng(5)).seed


@pytest.mark.parametrize(
    ("build", "error", "match"),
    [
        (lambda: ConstantPolicy("request(food"), ValueError, "act"),
        (lambda: ConstantPolicy(3), TypeError, "act"),
        (lambda: ConstantPolicy(text=5), TypeError, "text"),
        (lambda: EchoPolicy(min_prob=1.5), ValueError, "min_prob"),
        (lambda: CyclicPolicy([]), ValueError, "empty"),
        (lambda: CyclicPolicy("hello()"), TypeError, "sequence"),
        (lambda: CyclicPolicy(by="turns"), ValueError, "by"),
        (lambda: UniformActPolicy(["bye()", "bye()"]), ValueError, "twice"),
        (lambda: UniformActPolicy(seed=-1), ValueError, "seed"),
        (lambda: UniformActPolicy(seed=True), ValueError, "seed"),
    ],
)
def test_bad_arguments_are_errors(build, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        build()


def test_contexts_without_id_or_belief_are_errors() -> None:
    with pytest.raises(TypeError, match="id"):
        ConstantPolicy().respond(object())
    with pytest.raises(TypeError, match="BeliefState"):
        EchoPolicy().respond(SimpleNamespace(id="x", belief=None))
