"""Replay from a context: the rebuilt dialogue, common random numbers, determinism, and refusals."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from contexts.collect import collect_contexts
from contexts.context import Context, ContextSet
from contexts.generate import generate_grid
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.sim.replay import ARMS, ArmOutcomes, BranchPoints, continuation_seed, locate, rebuild, replay
from policies.sim.simulation import SimulationSettings, run_dialogues, simulated_contexts
from policies.sim.usersim import UserSimulatorConfig
from simscore.errors import InvalidResponseError, MissingValueWarning, ReplayError
from simscore.outcomes.flips import FlipDecomposition
from simscore.stats import Bootstrap

HANDCRAFTED = HandcraftedPolicy()
SOURCES = {"handcrafted": HANDCRAFTED, "random": RandomPolicy(seed=1)}


@pytest.fixture(scope="module")
def collected() -> ContextSet:
    """C_col of two dialogues per policy (82 contexts; the random policy's dialogues are long)."""
    return simulated_contexts(SOURCES, 2, seed=0)


@pytest.fixture(scope="module")
def handful(collected) -> ContextSet:
    """Eight contexts: the first four of a handcrafted and of a random dialogue."""
    keep = {f"col/{s}/s0-000001/{t}" for s in SOURCES for t in (1, 2, 3, 4)}
    return collected.filter(lambda c: c.id in keep, name="handful")


def _columns(replays):
    out = {"differ": replays.differ, "turn_index": replays.turn_index, "continuation": replays.continuation}
    for arm in ARMS:
        outcomes = getattr(replays, arm)
        for field in dataclasses.fields(outcomes):
            out[f"{arm}.{field.name}"] = getattr(outcomes, field.name)
    return out


def test_handcrafted_against_random_end_to_end(handful):
    numpy_state, python_state = np.random.get_state(), random.getstate()
    first = replay(handful, HANDCRAFTED, RandomPolicy(seed=7), sources=SOURCES, continuations=2, seed=11)
    again = replay(handful, HANDCRAFTED, RandomPolicy(seed=7), sources=SOURCES, continuations=2, seed=11)
    assert len(first) == 16 and first.names == ("handcrafted", "random") and first.continuations == 2
    assert first.context_ids[:2] == ("col/handcrafted/s0-000001/1",) * 2 and first.continuation[:2].tolist() == [0, 1]
    # no global random state is read or written
    assert random.getstate() == python_state
    assert all(np.array_equal(x, y) for x, y in zip(np.random.get_state(), numpy_state))
    # deterministic: the same numbers bit for bit
    for name, column in _columns(first).items():
        other = _columns(again)[name]
        assert (np.array_equal(column, other) if isinstance(column, np.ndarray) else column == other), name
    # (c) takes A's action at the context: the act said there is (a)'s
    assert first.c.first_act == first.a.first_act
    assert first.c.first_action.tolist() == first.a.first_action.tolist()
    # turns count from the dialogue's start: at least the context's turn
    assert (first.a.turns >= first.turn_index).all() and (first.b.turns >= first.turn_index).all()
    assert first.a.success.all()  # the handcrafted policy serves every one of these users
    assert first.differ.sum() >= 8  # the random policy differs at most contexts
    # another base seed: other users after the branch
    assert not np.array_equal(
        replay(handful, HANDCRAFTED, RandomPolicy(seed=7), sources=SOURCES, continuations=2, seed=12).b.turns,
        first.b.turns)
    flips = first.flips(bootstrap=Bootstrap(n_resamples=100))
    assert isinstance(flips, FlipDecomposition)
    assert flips.total.differ.pairs == int(first.differ.sum()) and flips.total.unit == "dialogues"
    assert flips.total.differ.units == 2  # two dialogues
    # where A and B take the same action, (c) and (b) are the same dialogue: the action effect there is nil
    same = first.a.first_action == first.b.first_action
    assert np.array_equal(first.c.turns[same], first.b.turns[same]) and same.sum() == (~first.differ).sum()
    assert flips.action.agree.benign_churn_rate.value == 1.0
    frame = first.to_frame()
    assert len(frame) == 16 and {"a_success", "b_first_act", "c_reward_iq", "differ"} <= set(frame.columns)


def test_contexts_read_from_a_file_replay_alike(handful, tmp_path):
    path = tmp_path / "handful.jsonl"
    handful.to_jsonl(path)
    read = ContextSet.read_jsonl(path)
    here = replay(handful, HANDCRAFTED, RandomPolicy(seed=7), sources=SOURCES, continuations=1, seed=3)
    there = replay(read, HANDCRAFTED, RandomPolicy(seed=7), sources=SOURCES, continuations=1, seed=3)
    assert there.context_ids == here.context_ids
    assert np.array_equal(there.b.reward_iq, here.b.reward_iq) and there.b.first_act == here.b.first_act


def test_a_policy_against_itself_flips_nothing(handful):
    random = RandomPolicy(seed=3)
    same = replay(handful, random, random, sources=SOURCES, continuations=2, seed=5)
    assert not same.differ.any()
    for arm in ("b", "c"):  # common random numbers: the very same dialogues
        assert np.array_equal(getattr(same, arm).turns, same.a.turns)
        assert np.array_equal(getattr(same, arm).iq, same.a.iq)
        assert getattr(same, arm).ended_by == same.a.ended_by
    with pytest.warns(Warning, match="no pair in group 'differ'"):
        table = same.flips(bootstrap=Bootstrap(n_resamples=50)).total
    assert table.agree.negative_flip_rate.value == 0.0 and table.agree.positive_flip_rate.value == 0.0
    assert table.agree.benign_churn_rate.value == 1.0 and table.agree.mcnemar.p_value == 1.0


def test_continuations_share_the_users_randomness_across_arms(handful):
    # A and B both handcrafted but distinct objects: every arm must meet the same user draws
    other = HandcraftedPolicy()
    replays = replay(handful, HANDCRAFTED, other, sources=SOURCES, continuations=3, seed=2)
    assert np.array_equal(replays.a.turns, replays.b.turns) and np.array_equal(replays.b.iq, replays.c.iq)
    # ... while the K continuations of one context meet different users
    assert len({tuple(replays.a.turns[replays.continuation == k]) for k in range(3)}) == 3
    assert continuation_seed(2, "x", 0).generate_state(2).tolist() != continuation_seed(2, "x", 1).generate_state(
        2).tolist()


def test_the_rebuilt_dialogue_continues_as_recorded(collected):
    for source in SOURCES:
        dialogue = collected.where(source_name=source, dialogue_id="s0-000000")
        ids = dialogue.ids
        policy = SOURCES[source] if source == "handcrafted" else None
        for here, there in zip(ids[:-1], ids[1:]):
            sim = rebuild(collected[here], SOURCES[source])
            assert sim.belief.key() == collected[here].belief.key()
            assert sim.turn_index == locate(collected[here]).turn_index
            if policy is None:
                continue
            sim.step(policy.choose(sim.belief, sim.mask))  # the recorded policy's decision
            history = collected[there].metadata["history"]
            assert sim.belief.key() == collected[there].belief.key()  # the next turn, as recorded
            assert sim.system_text == history[-2]  # what the system said at the context's turn


def test_a_sampled_source_is_rebuilt_from_its_own_random_stream(collected):
    # the random policy's choices come from begin_dialogue's generator: every turn is rebuilt with
    # the seed that made it, and another seed's dialogue leaves the recorded one
    dialogue = collected.where(source_name="random", dialogue_id="s0-000001")
    refused = 0
    for context in dialogue.contexts:
        assert rebuild(context, RandomPolicy(seed=1)).belief.key() == context.belief.key()
        try:
            rebuild(context, RandomPolicy(seed=2))
        except ReplayError as exc:
            assert "not those that made it" in str(exc) or "before turn" in str(exc)
            refused += 1
    assert len(dialogue) > 10 and refused >= len(dialogue) // 2


def test_held_out_users_need_their_settings(tmp_path):
    users = dataclasses.replace(UserSimulatorConfig(), patience=(2, 2))
    settings = SimulationSettings(user=users)
    path = tmp_path / "held.jsonl"
    run_dialogues(HANDCRAFTED, 2, seed=4, stream=(9, 1), settings=settings, log_path=path,
                  log_source={"name": "held", "users": users.to_json()})
    contexts = collect_contexts([path]).filter(lambda c: c.metadata["turn_index"] > 0)
    with pytest.raises(ReplayError, match="source 'held' records users .*pass settings= with those users"):
        replay(contexts, HANDCRAFTED, HANDCRAFTED, sources={"held": HANDCRAFTED}, continuations=1)
    replays = replay(contexts, HANDCRAFTED, RandomPolicy(), sources={"held": HANDCRAFTED}, continuations=1,
                     settings=settings)
    assert len(replays) == len(contexts) and locate(contexts.contexts[0]).stream == (9, 1)


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"source": "gen"}, "does not name its dialogue .*only contexts collected from simulated dialogues"),
        ({"source_name": "x", "dialogue_id": "d0", "turn_index": 2},
         r"dialogue id 'd0' is not a simulated dialogue's \(s<seed>"),
        ({"source_name": "x", "dialogue_id": "s1-000002", "turn_index": 0}, "turn 0, the system's greeting"),
    ],
)
def test_contexts_that_cannot_be_replayed_are_named(metadata, message):
    context = Context("c1", generate_grid().contexts[0].belief, metadata)
    with pytest.raises(ReplayError, match=message):
        locate(context)


def test_a_context_set_without_dialogues_is_refused():
    with pytest.raises(ReplayError, match="context 'gen/"):
        replay(generate_grid().select(generate_grid().ids[:3]), HANDCRAFTED, HANDCRAFTED, sources=SOURCES)


def test_sources_and_policies_are_checked(handful):
    with pytest.raises(ReplayError, match=r"no policy for source\(s\) 'random' in sources \(given: 'handcrafted'\)"):
        replay(handful, HANDCRAFTED, HANDCRAFTED, sources={"handcrafted": HANDCRAFTED})
    with pytest.raises(ReplayError, match="reaches another belief state at turn 2"):
        replay(handful, HANDCRAFTED, HANDCRAFTED, sources={"handcrafted": RandomPolicy(seed=1), "random": HANDCRAFTED})

    class Learner:
        training = True
        name = "learner"

        def choose(self, belief, mask):
            return 0

    with pytest.raises(ValueError, match="policy_b 'learner' is training: a replay would teach it"):
        replay(handful, HANDCRAFTED, Learner(), sources=SOURCES)

    class Wild:
        name = "wild"

        def choose(self, belief, mask):
            return 99

    with pytest.raises(InvalidResponseError, match=r"policy 'wild' chose 99 in dialogue s0-000001 turn 1"):
        replay(handful, Wild(), HANDCRAFTED, sources=SOURCES, continuations=1)
    with pytest.raises(ValueError, match="continuations"):
        replay(handful, HANDCRAFTED, HANDCRAFTED, sources=SOURCES, continuations=0)


def test_branch_replaces_the_users_randomness_only():
    from policies.sim.simulator import DialogueSimulator

    def played(branch_seed):
        sim = DialogueSimulator()
        sim.reset(np.random.default_rng(4))
        sim.step(HANDCRAFTED.choose(sim.belief, sim.mask))
        goal, belief = sim.user.goal, sim.belief
        if branch_seed is not None:
            sim.branch(np.random.default_rng(branch_seed))
        assert sim.user.goal == goal and sim.belief is belief  # the dialogue so far stays
        while not sim.done:
            sim.step(HANDCRAFTED.choose(sim.belief, sim.mask))
        return sim.outcome()

    assert played(1) == played(1)
    assert len({(o.turns, o.iq) for o in (played(s) for s in range(6))}) > 1
    sim = DialogueSimulator()
    sim.reset(np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator, got int"):
        sim.branch(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="system_rng must be a numpy.random.Generator, got int"):
        sim.branch(np.random.default_rng(0), system_rng=3)  # type: ignore[arg-type]
    while not sim.done:
        sim.step(HANDCRAFTED.choose(sim.belief, sim.mask))
    with pytest.raises(RuntimeError, match="the dialogue has ended"):
        sim.branch(np.random.default_rng(0))


def test_a_sampling_gpsarsa_source_and_arm():
    """C_col as the experiment collects it: a GP-SARSA policy sampling with scale 1 (PyDial's evaluation)."""
    from policies.gpsarsa.policy import GPSarsaPolicy

    gp = GPSarsaPolicy(reward="ts", seed=3, training=True)
    run_dialogues(gp, 6, seed=3)  # a little learning: a dictionary to sample from
    gp.training, gp.sampling_scale = False, 1.0
    contexts = simulated_contexts({"gp": gp}, 2, seed=8)
    first = replay(contexts, gp, HANDCRAFTED, sources={"gp": gp}, continuations=2, seed=1)
    again = replay(contexts, gp, HANDCRAFTED, sources={"gp": gp}, continuations=2, seed=1)
    assert np.array_equal(first.a.turns, again.a.turns) and first.a.first_act == again.a.first_act
    same = replay(contexts, gp, gp, sources={"gp": gp}, continuations=2, seed=1)
    assert not same.differ.any() and np.array_equal(same.a.iq, same.c.iq)
    assert gp.sampling_scale == 1.0 and gp.dialogues_trained == 6  # replays teach nothing
    greedy = GPSarsaPolicy(reward="ts", seed=3, learner=gp.learner)  # not the sampling policy that made them
    with pytest.raises(ReplayError, match="reaches another belief state|before turn"):
        replay(contexts, gp, HANDCRAFTED, sources={"gp": greedy})


def _same(x, y):
    return np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y


def test_branch_points_play_each_policy_once_and_the_swap_only_where_the_actions_differ(handful):
    whole = replay(handful, HANDCRAFTED, RandomPolicy(seed=7), sources=SOURCES, continuations=2, seed=11)
    points = BranchPoints(handful, sources=SOURCES)
    rows = points.rows(2)
    assert rows[:3] == (("col/handcrafted/s0-000001/1", 0), ("col/handcrafted/s0-000001/1", 1),
                        ("col/handcrafted/s0-000001/2", 0))
    a = points.play(HANDCRAFTED, rows, seed=11)
    b = points.play(RandomPolicy(seed=7), rows, seed=11)
    # arm (c) played on every row is the swap, which plays only where the two took different actions
    full = points.play(RandomPolicy(seed=7), rows, seed=11, first=a.first_action.tolist())
    swap = points.swap(RandomPolicy(seed=7), rows, a, b, seed=11)
    differ = a.first_action != b.first_action
    assert 0 < differ.sum() < len(rows)
    for f in dataclasses.fields(ArmOutcomes):
        name = f.name
        assert _same(getattr(full, name), getattr(swap, name)), name
        assert _same(getattr(whole.c, name), getattr(swap, name)) and _same(getattr(whole.a, name), getattr(a, name))
    both = ArmOutcomes.concatenate([a, b])
    assert len(both) == 2 * len(rows) and both.turns.tolist() == [*a.turns.tolist(), *b.turns.tolist()]
    # a policy against itself: every action agrees, the swap plays nothing, nothing changes
    same = points.replays(rows, a, a, points.swap(HANDCRAFTED, rows, a, a, seed=11), names=("h", "h"), seed=11,
                          continuations=2)
    with pytest.warns(MissingValueWarning, match="no pair in group 'differ'"):
        itself = same.flips(bootstrap=Bootstrap(n_resamples=0))
    assert itself.total.differ.pairs == 0 and itself.total.agree.pairs == len(rows)
    assert itself.total.agree.benign_churn_rate.value == 1.0 and itself.action.agree.negative_flip_rate.value == 0.0
    with pytest.raises(ReplayError, match="not among these branch points"):
        points.rows(1, ["col/gen/x"])
    with pytest.raises(ValueError, match="first has 1 actions for 16 rows"):
        points.play(HANDCRAFTED, rows, seed=11, first=[0])
