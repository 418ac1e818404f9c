"""The dialogue runner: determinism, logs, robustness, hooks, and the simscore adapter."""

from __future__ import annotations

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.collect import collect_contexts
from contexts.context import Context
from contexts.dialogue_log import read_dialogue_log
from contexts.domain import default_domain
from contexts.generate import generate_grid
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.sim.simulation import DialogueSimulator, SimulationSettings, SummaryPolicyAdapter, run_dialogues
from policies.sim.summary import SUMMARY_ACTIONS
from policies.sim.usersim import UserGoal
from simscore.acts import Act
from simscore.errors import InvalidContextError, InvalidResponseError
from simscore.policy import run_policy
from simscore.responses import Response

DOMAIN = default_domain()


def test_same_seed_same_dialogues_logs_and_rewards(tmp_path):
    runs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        result = run_dialogues(RandomPolicy(seed=4), 40, seed=9, log_path=path, log_source={"name": "x"})
        runs.append((result, path.read_bytes()))
    (r1, log1), (r2, log2) = runs
    assert log1 == log2
    for field in ("success", "iq", "turns", "reward_ts", "reward_iq"):
        assert np.array_equal(getattr(r1, field), getattr(r2, field))
    assert r1.ended_by == r2.ended_by and r1.dialogue_ids == r2.dialogue_ids
    r3 = run_dialogues(RandomPolicy(seed=4), 40, seed=10)
    assert not np.array_equal(r1.turns, r3.turns)


def test_dialogue_i_does_not_depend_on_n_or_start():
    whole = run_dialogues(RandomPolicy(seed=1), 12, seed=3, keep_dialogues=True)
    tail = run_dialogues(RandomPolicy(seed=1), 4, seed=3, start=8, keep_dialogues=True)
    assert whole.dialogues[8:] == tail.dialogues
    assert tail.dialogue_ids == ("s3-000008", "s3-000009", "s3-000010", "s3-000011")


def test_log_format_and_collection(tmp_path):
    path = tmp_path / "log.jsonl"
    result = run_dialogues(HandcraftedPolicy(), 25, seed=2, nlg_instance="hdc-3", log_path=path,
                           log_source={"name": "hdc"})
    header, dialogues = read_dialogue_log(path, ontology=DOMAIN.ontology)
    assert header["domain"] == DOMAIN.name
    assert header["source"]["name"] == "hdc" and header["source"]["policy"] == "handcrafted"
    assert header["source"]["seed"] == 2 and header["source"]["nlg_instance"] == "hdc-3"
    assert [d.dialogue_id for d in dialogues] == list(result.dialogue_ids)
    for d, turns, success in zip(dialogues, result.turns, result.success):
        first = d.turns[0]
        assert first.turn_index == 0 and first.user_act is None and first.user_text is None
        assert first.system_act == "hello()" and first.belief == BeliefState.initial(DOMAIN.ontology)
        # turn 0 (the greeting) and one turn per decision, the last after the user's bye
        assert [t.turn_index for t in d.turns] == list(range(turns + 1))
        assert all(t.user_act is not None and t.user_text for t in d.turns[1:])
        assert all(isinstance(t.system_action, Act) and t.system_text for t in d.turns)
        assert d.outcome["success"] == bool(success) and d.outcome["turns"] == turns
        last = d.turns[-1]
        assert last.user_act == "bye()" and last.system_act == "bye()"
        assert last.belief.top_method() == "finished" and last.belief.discourse_act["bye"] == 1.0
    contexts = collect_contexts([path], domain=DOMAIN)
    assert len(contexts) == int(result.turns.sum()) + len(dialogues)
    assert contexts.ids[1] == f"col/hdc/{result.dialogue_ids[0]}/1"


def test_turn_limit_forces_bye():
    class Alternate:
        """Never repeats its previous act, never offers: the user keeps answering."""

        def __init__(self) -> None:
            self.k = 0

        def choose(self, belief, mask):
            self.k += 1
            return self.k % 2

    result = run_dialogues(Alternate(), 3, seed=0, keep_dialogues=True)
    assert result.turns.tolist() == [25, 25, 25] and set(result.ended_by) == {"turn_limit"}
    assert not result.success.any() and (result.iq == 1).all()
    # 25 decisions; the user still answers the last one (kept in the outcome), nobody says bye
    assert all(d.turns[-1].turn_index == 25 and d.turns[-1].system_act != "bye()" for d in result.dialogues)
    assert all(d.outcome["final_user_act"] for d in result.dialogues)
    short = run_dialogues(Alternate(), 2, seed=0, settings=SimulationSettings(max_turns=6))
    assert short.turns.tolist() == [6, 6]


@pytest.mark.slow
def test_robustness_all_actions_masks_ignored(tmp_path):
    policy = RandomPolicy(seed=0, respect_mask=False)
    result = run_dialogues(policy, 10_000, seed=77)  # about 5 s on one core
    assert len(result) == 10_000 and result.turns.max() <= 25 and result.turns.min() >= 1
    assert set(result.ended_by) <= {"user", "user_hung_up", "system", "turn_limit"}
    assert np.isfinite(result.reward_iq).all() and ((result.iq >= 1) & (result.iq <= 5)).all()
    # the same kind of dialogues with logs: written, read back and collected without error
    path = tmp_path / "robust.jsonl"
    logged = run_dialogues(policy, 1_500, seed=78, log_path=path)
    _, dialogues = read_dialogue_log(path, ontology=DOMAIN.ontology)
    assert len(dialogues) == 1_500
    assert sum(len(d.turns) for d in dialogues) == int(logged.turns.sum()) + len(dialogues)
    assert len(collect_contexts([path], domain=DOMAIN)) == int(logged.turns.sum()) + len(dialogues)


def test_hooks_and_trace():
    class Learner(HandcraftedPolicy):
        def __init__(self) -> None:
            super().__init__()
            self.traces = []
            self.begun = 0

        def begin_dialogue(self, rng):
            assert isinstance(rng, np.random.Generator)
            self.begun += 1

        def end_dialogue(self, trace):
            self.traces.append(trace)

    learner = Learner()
    result = run_dialogues(learner, 20, seed=1)
    assert learner.begun == 20 and len(learner.traces) == 20
    for trace, turns, r_ts, r_iq in zip(learner.traces, result.turns, result.reward_ts, result.reward_iq):
        assert len(trace.actions) == len(trace.beliefs) == len(trace.masks) == turns
        assert all(mask[action] for mask, action in zip(trace.masks, trace.actions))
        assert trace.beliefs[-1].top_method() == "finished"  # the decision after the user's bye
        for assignment in ("per_turn", "terminal"):
            assert trace.rewards(assignment=assignment).sum() == pytest.approx(r_ts)
            assert trace.rewards("interaction_quality", assignment=assignment).sum() == pytest.approx(r_iq)
        assert (trace.rewards(assignment="terminal")[:-1] == 0).all()
        assert (trace.rewards()[:-1] == -1).all()
        assert trace.features(DOMAIN).shape == (turns, 302)
    with pytest.raises(ValueError, match="assignment must be"):
        learner.traces[0].rewards(assignment="spread")


def test_bad_policies_and_arguments():
    class Bad:
        def choose(self, belief, mask):
            return 16

    with pytest.raises(InvalidResponseError, match="chose 16 in dialogue s0-000000 turn 1"):
        run_dialogues(Bad(), 1, seed=0)
    with pytest.raises(TypeError, match="choose\\(belief, mask\\)"):
        run_dialogues(object(), 1, seed=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must be >= 0, got -1"):
        run_dialogues(HandcraftedPolicy(), -1, seed=0)
    with pytest.raises(ValueError, match="seed must be >= 0, got -3"):
        run_dialogues(HandcraftedPolicy(), 1, seed=-3)
    with pytest.raises(ValueError, match="max_turns must be >= 2, got 1"):
        SimulationSettings(max_turns=1)


def test_simulator_with_fixed_goal():
    sim = DialogueSimulator(record=True)
    goal = UserGoal({"area": "centre", "food": "thai", "pricerange": "cheap"}, ("name", "phone"))
    sim.reset(np.random.default_rng(0), goal=goal, dialogue_id="fixed")
    policy = HandcraftedPolicy()
    while not sim.done:
        sim.step(policy.choose(sim.belief, sim.mask))
    outcome = sim.outcome()
    assert outcome.success and outcome.initial_goal == goal and outcome.ended_by == "user"
    assert outcome.goal.name is not None  # the venue the user accepted (its goal may have changed)
    dialogue = sim.dialogue()
    offered = [t for t in dialogue.turns if t.system_act.startswith("inform(")]
    assert "food=thai" in offered[0].system_act and "pricerange=cheap" in offered[0].system_act
    with pytest.raises(RuntimeError, match="has ended"):
        sim.step(0)


def test_result_frame_and_summary():
    result = run_dialogues(HandcraftedPolicy(), 5, seed=0)
    frame = result.to_frame()
    assert list(frame.columns) == ["success", "iq", "turns", "reward_ts", "reward_iq", "ended_by"]
    assert frame.index.name == "dialogue_id" and len(frame) == 5
    assert result.summary()["success_rate"] == result.success_rate
    with pytest.raises(ValueError):
        result.turns[0] = 3  # read-only


# -- the simscore adapter -------------------------------------------------------------------


def test_adapter_responds_deterministically():
    belief = BeliefState(slots={"food": {"thai": 1.0}, "pricerange": {"cheap": 1.0}}, method={"byconstraints": 1.0})
    context = Context("c1", belief, {"source": "gen"})
    adapter = SummaryPolicyAdapter(HandcraftedPolicy(), nlg_instance="hdc-2")
    response = adapter.respond(context)
    venue = DOMAIN.query({"food": "thai", "pricerange": "cheap"})[0]
    assert isinstance(response, Response)
    assert response.action == Act("inform", [("name", venue.name), ("food", "thai"), ("pricerange", "cheap")])
    assert venue.name in response.text.lower()
    assert adapter.respond(context) == response
    assert adapter.provenance == {
        "policy": "handcrafted", "confirm_below": 0.8, "select_above": 0.3, "nlg_instance": "hdc-2"
    }
    texts = {SummaryPolicyAdapter(HandcraftedPolicy(), nlg_instance=f"hdc-{s}").respond(context).text
             for s in range(12)}
    assert len(texts) > 1
    assert SummaryPolicyAdapter(HandcraftedPolicy()).nlg.instance == "handcrafted"


def test_adapter_over_the_generated_grid():
    contexts = generate_grid(domain=DOMAIN)
    for policy in (HandcraftedPolicy(), RandomPolicy(seed=3)):
        responses = run_policy(SummaryPolicyAdapter(policy), contexts)
        assert len(responses) == len(contexts) == 1296
        again = run_policy(SummaryPolicyAdapter(policy), contexts)
        assert all(responses[i] == again[i] for i in contexts.ids)
    intents = {responses[i].action.intent for i in contexts.ids}
    assert {"request", "inform", "confirm"} <= intents


def test_adapter_errors():
    adapter = SummaryPolicyAdapter(HandcraftedPolicy())
    with pytest.raises(TypeError, match="has no BeliefState"):
        adapter.respond(object())

    class Bad:
        def choose(self, belief, mask):
            return "inform"

    message = "context 'c': the summary action index must be an int, got str 'inform'"
    with pytest.raises(InvalidResponseError, match=message):
        SummaryPolicyAdapter(Bad()).respond(Context("c", BeliefState(), {"source": "gen"}))

    class OutOfRange:
        def choose(self, belief, mask):
            return np.int64(16)

    with pytest.raises(InvalidResponseError, match="the summary action index must be <= 15, got 16"):
        SummaryPolicyAdapter(OutOfRange()).respond(Context("c", BeliefState(), {"source": "gen"}))
    foreign = Context("hotel-1", BeliefState(slots={"stars": {"4": 1.0}}), {"source": "gen"})
    with pytest.raises(InvalidContextError, match="context 'hotel-1' does not fit domain 'restaurants'.*'stars'"):
        adapter.respond(foreign)
    assert len(SUMMARY_ACTIONS) == 16


@pytest.mark.parametrize(
    ("seed", "stream", "start", "n"),
    [
        (0, (), 0, 5),  # fewer than FEW: numpy's own path
        (7, (), 3, 2 * 1024 + 40),  # three chunks, the last one short
        (2**40, (20200701, 1000), 123456, 40),  # a seed of two words, a stream of two keys
        (2**130 + 17, (), 0, 20),  # a seed of five words: one more word mixed in before the index
        (5, (0, 2**33), 2**32 - 20, 40),  # indices from 2**32 on take two words: numpy's path
    ],
)
def test_dialogue_generators_are_numpys_spawned_ones(seed, stream, start, n):
    from policies.sim._seeds import DialogueGenerators
    from policies.sim.simulation import dialogue_seed

    seeds = DialogueGenerators(seed, stream, start, start + n)
    for index in range(start, start + n):
        ours = seeds.generators(index)
        theirs = [np.random.default_rng(child) for child in dialogue_seed(seed, index, stream).spawn(3)]
        assert [g.bit_generator.state for g in ours] == [g.bit_generator.state for g in theirs], index
    assert ours[1].random(5).tolist() == theirs[1].random(5).tolist()


def test_a_dialogue_generator_behaves_as_numpys_in_every_other_way():
    import copy
    import json

    from policies.sim._seeds import DialogueGenerators

    ours = DialogueGenerators(3, (9,), 0, 100).generators(50)[2]
    theirs = np.random.default_rng(np.random.SeedSequence(3, spawn_key=(9, 50, 2)))
    sequence = ours.bit_generator.seed_seq
    assert (sequence.entropy, sequence.spawn_key, sequence.pool_size) == (3, (9, 50, 2), 4)
    assert repr(sequence) == repr(theirs.bit_generator.seed_seq)
    assert sequence.generate_state(3).tolist() == theirs.bit_generator.seed_seq.generate_state(3).tolist()
    assert [g.random() for g in ours.spawn(2)] == [g.random() for g in theirs.spawn(2)]
    assert ours.random(3).tolist() == theirs.random(3).tolist()
    state = ours.bit_generator.state  # plain numbers, as numpy's
    assert json.loads(json.dumps(state)) == state == theirs.bit_generator.state
    copied = copy.deepcopy(ours)  # a copy holds numpy's own seed sequence
    assert type(copied.bit_generator.seed_seq) is np.random.SeedSequence
    assert copied.random() == theirs.random()
