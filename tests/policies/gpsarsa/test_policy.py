"""Tests of policies.gpsarsa.policy: greedy decisions, responses, learning hooks, checkpoints."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.collect import collect_contexts
from contexts.context import Context
from contexts.domain import Domain, default_domain
from contexts.generate import generate_grid
from policies.gpsarsa.learner import GPSarsa
from policies.gpsarsa.policy import (
    POLICY_FORMAT,
    POLICY_VERSION,
    GPSarsaPolicy,
    domain_fingerprint,
)
from policies.gpsarsa.values import GPSarsaConfig
from policies.handcrafted import HandcraftedPolicy
from policies.sim.features import belief_features, feature_size
from policies.sim.simulation import DialogueTrace, run_dialogues
from policies.sim.summary import SUMMARY_ACTIONS, SummaryActions, master_action
from simscore.acts import Act
from simscore.errors import CheckpointError
from simscore.policy import Policy, run_policy
from simscore.responses import Response

DOMAIN = default_domain()
SPACE = SummaryActions(DOMAIN)
C_GEN = generate_grid()


@pytest.fixture(scope="module")
def trained() -> GPSarsaPolicy:
    policy = GPSarsaPolicy(reward="ts", seed=5, training=True)
    run_dialogues(policy, 200, seed=5)
    policy.training = False
    return policy


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("log") / "hdc.jsonl"
    run_dialogues(HandcraftedPolicy(), 12, seed=3, log_path=path, log_source={"name": "hdc"})
    return collect_contexts([path], domain=DOMAIN)


def _mask(*allowed: int) -> np.ndarray:
    mask = np.zeros(len(SUMMARY_ACTIONS), dtype=bool)
    mask[list(allowed)] = True
    return mask


# ----------------------------------------------------------------------------- construction


def test_defaults_name_provenance_and_protocols() -> None:
    policy = GPSarsaPolicy(reward="iq", seed=4)
    assert isinstance(policy, Policy)
    assert policy.learner.config == GPSarsaConfig(feature_dim=feature_size(DOMAIN), n_actions=16)
    assert policy.training is False and policy.dialogues_trained == 0
    assert policy.name == "gpsarsa-iq-seed4-0"
    assert policy.nlg_instance == policy.name  # the checkpoint words its acts as itself
    prov = policy.provenance
    assert prov["reward"] == "iq" and prov["seed"] == 4 and prov["checkpoint"] == 0
    assert prov["nlg_instance"] == "gpsarsa-iq-seed4-0" and prov["dictionary_size"] == 0
    assert prov["gp"] == {"gamma": 1.0, "sigma": 5.0, "nu": 0.001, "scale": 3.0}
    assert GPSarsaPolicy(seed=4, name="mine").name == "mine" == GPSarsaPolicy(seed=4, name="mine").nlg_instance


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"reward": "success"}, ValueError, "reward must be one of"),
        ({"seed": -1}, ValueError, "seed must be >= 0, got -1"),
        ({"gp_config": GPSarsaConfig(feature_dim=10)}, ValueError, "needs feature_dim=302"),
        ({"learner": GPSarsa(GPSarsaConfig(feature_dim=302, n_actions=3))}, ValueError, "n_actions=16"),
        ({"learner": "x"}, TypeError, "learner must be a GPSarsa"),
        ({"name": ""}, ValueError, "name must be a non-empty string"),
    ],
)
def test_bad_arguments(kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        GPSarsaPolicy(**kwargs)




# ----------------------------------------------------------------------------- greedy decisions


def test_untrained_ties_go_to_the_lowest_unmasked_index() -> None:
    policy = GPSarsaPolicy()
    belief = BeliefState.initial(DOMAIN.ontology)
    assert policy.greedy_action(belief, _mask(0, 1, 2)) == 0
    assert policy.greedy_action(belief, _mask(2, 5, 9)) == 2
    assert policy.greedy_action(belief, _mask(15)) == 15
    assert policy.choose(belief, _mask(7, 3)) == 3  # greedy mode


def test_greedy_takes_the_largest_mean_among_unmasked_actions() -> None:
    policy = GPSarsaPolicy()
    belief = BeliefState(slots={"food": {"indian": 1.0}}, method={"byconstraints": 1.0})
    x = belief_features(belief, DOMAIN)
    # Teach Q(b, 4) = high, Q(b, 9) = middle, Q(b, 1) = low.
    for action, reward in ((4, 30.0), (9, 10.0), (1, -10.0)):
        policy.learner.learn_episode(x[None, :], [action], [reward])
    means = policy.q_values(belief).mean
    assert means[4] > means[9] > 0.0 > means[1]
    assert policy.greedy_action(belief, np.ones(16, dtype=bool)) == 4
    assert policy.greedy_action(belief, _mask(1, 9, 12)) == 9
    assert policy.greedy_action(belief, _mask(0, 1)) == 0  # Q(b, 0) = 0 > Q(b, 1)
    q = policy.q_values(belief, _mask(1, 9))
    assert np.isnan(q.mean[4]) and q.mean[9] == means[9]


def test_greedy_is_deterministic_and_ignores_training_mode(trained: GPSarsaPolicy) -> None:
    contexts = list(C_GEN)[::7]
    first = [trained.respond(c) for c in contexts]
    trained.training = True
    try:
        assert [trained.respond(c) for c in contexts] == first
    finally:
        trained.training = False
    assert [trained.respond(c) for c in contexts] == first
    for c in contexts[:40]:
        mask = SPACE.mask(c.belief)
        mean = trained.q_values(c.belief, mask).mean
        chosen = trained.greedy_action(c.belief, mask)
        assert mask[chosen] and chosen == int(np.flatnonzero(mean == np.nanmax(mean))[0])


def test_training_mode_samples_from_the_given_generator(trained: GPSarsaPolicy) -> None:
    belief = list(C_GEN)[100].belief
    mask = SPACE.mask(belief)
    trained.training = True
    try:
        picks = []
        for _ in range(2):
            trained.begin_dialogue(np.random.default_rng(42))
            picks.append([trained.choose(belief, mask) for _ in range(30)])
        assert picks[0] == picks[1]
        assert len(set(picks[0])) > 1  # scale 3 explores
        assert all(mask[a] for a in picks[0])
        owned = GPSarsaPolicy(seed=9, learner=trained.learner, training=True)
        again = GPSarsaPolicy(seed=9, learner=trained.learner, training=True)
        assert [owned.choose(belief, mask) for _ in range(20)] == [again.choose(belief, mask) for _ in range(20)]
        with pytest.raises(TypeError, match="Generator"):
            trained.begin_dialogue(42)  # type: ignore[arg-type]
    finally:
        trained.training = False


def test_choose_fast_path_equals_the_learners_public_method(trained: GPSarsaPolicy) -> None:
    # choose() skips the learner's validation of features and mask; same decisions, same draws
    contexts = list(C_GEN)[::50]
    trained.training = True
    try:
        for seed, c in enumerate(contexts):
            mask = SPACE.mask(c.belief)
            trained.begin_dialogue(np.random.default_rng(seed))
            rng = np.random.default_rng(seed)
            x = belief_features(c.belief, DOMAIN)
            for _ in range(3):
                assert trained.choose(c.belief, mask) == trained.learner.select_action(x, mask, rng=rng)
            with pytest.raises(ValueError, match="mask excludes every action"):
                trained.choose(c.belief, np.zeros(len(SUMMARY_ACTIONS), dtype=bool))
            assert trained.choose(c.belief, mask.astype(int)) in np.flatnonzero(mask)
    finally:
        trained.training = False


# ----------------------------------------------------------------------------- learning hooks


def test_learns_only_in_training_mode() -> None:
    policy = GPSarsaPolicy(seed=1)
    run_dialogues(policy, 5, seed=1)
    assert policy.dialogues_trained == 0 and policy.learner.n_episodes == 0
    policy.training = True
    result = run_dialogues(policy, 5, seed=1)
    assert policy.dialogues_trained == 5 and policy.learner.n_episodes == 5
    # one transition per decision; the greeting is none, the decision after the user's bye is one
    assert policy.learner.n_transitions == int(result.turns.sum())


@pytest.mark.parametrize(("reward", "assignment"), [("ts", "terminal"), ("iq", "terminal"), ("ts", "per_turn")])
def test_episode_matches_a_hand_fed_learner(reward: str, assignment: str) -> None:
    traces: list[DialogueTrace] = []

    class Recorder(GPSarsaPolicy):
        def end_dialogue(self, trace: DialogueTrace) -> None:
            traces.append(trace)
            super().end_dialogue(trace)

    policy = Recorder(reward=reward, seed=2, training=True, reward_assignment=assignment)
    run_dialogues(policy, 6, seed=2)
    twin = GPSarsa(policy.learner.config)
    name = {"ts": "task_success", "iq": "interaction_quality"}[reward]
    for trace in traces:
        rewards = trace.rewards(name, assignment=assignment)
        if assignment == "terminal":  # PyDial: 0 until the end, the whole return at the end
            assert (rewards[:-1] == 0).all() and rewards[-1] == pytest.approx(trace.outcome.reward_ts
                                                                              if reward == "ts"
                                                                              else trace.outcome.reward_iq)
        twin.learn_episode(trace.features(DOMAIN), np.array(trace.actions), rewards)
    assert len(traces) == 6
    for key, value in policy.learner.arrays().items():
        assert np.array_equal(value, twin.arrays()[key]), key


def test_reward_assignment_is_validated_and_saved(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reward_assignment must be one of"):
        GPSarsaPolicy(reward_assignment="spread")
    policy = GPSarsaPolicy(seed=1, reward_assignment="per_turn")
    policy.save(tmp_path / "p")
    assert GPSarsaPolicy.load(tmp_path / "p").reward_assignment == "per_turn"


def test_end_dialogue_learns_like_the_learners_public_method() -> None:
    # end_dialogue feeds the learner through its unchecked fast path: same arrays, bit for bit
    traces: list[DialogueTrace] = []

    class Recorder(GPSarsaPolicy):
        def end_dialogue(self, trace: DialogueTrace) -> None:
            traces.append(trace)
            super().end_dialogue(trace)

    policy = Recorder(reward="ts", seed=4, training=True)
    run_dialogues(policy, 40, seed=4)
    twin = GPSarsa(policy.learner.config)
    for trace in traces:
        rewards = trace.rewards("task_success", assignment=policy.reward_assignment)
        twin.learn_episode(trace.features(DOMAIN), np.array(trace.actions), rewards)
    assert twin.n_episodes == 40 and twin.dictionary_size > 20
    for key, value in policy.learner.arrays().items():
        assert np.array_equal(value, twin.arrays()[key]), key
    bad = DialogueTrace(traces[0].dialogue_index, traces[0].beliefs, traces[0].masks, (99,) * len(traces[0].actions),
                        traces[0].outcome)
    with pytest.raises(ValueError, match=r"actions must be in \[0, 15\], got 99"):
        policy.end_dialogue(bad)


def test_sampling_scale_samples_inside_dialogues_only() -> None:
    policy = GPSarsaPolicy(seed=3, training=True)
    run_dialogues(policy, 30, seed=3)
    policy.training = False
    greedy = run_dialogues(policy, 40, seed=9)
    assert run_dialogues(policy, 40, seed=9).turns.tolist() == greedy.turns.tolist()
    policy.sampling_scale = 1.0
    sampled = run_dialogues(policy, 40, seed=9)
    assert sampled.turns.tolist() == run_dialogues(policy, 40, seed=9).turns.tolist()  # seeded
    assert sampled.turns.tolist() != greedy.turns.tolist()
    assert policy.dialogues_trained == 30  # nothing learnt while evaluating
    context = C_GEN["gen/area=1.0/pricerange=1.0/food=1.0/method=byconstraints"]
    assert policy.respond(context) == policy.respond(context)  # responses stay greedy


def test_posterior_variance_of_visited_decisions_shrinks() -> None:
    traces: list[DialogueTrace] = []

    class Recorder(GPSarsaPolicy):
        def end_dialogue(self, trace: DialogueTrace) -> None:
            traces.append(trace)
            super().end_dialogue(trace)

    policy = Recorder(seed=7, training=True)
    run_dialogues(policy, 30, seed=7)
    trace = traces[-1]
    x = trace.features(DOMAIN)
    before = np.array([policy.learner.q_values(b).std[a] for b, a in zip(x, trace.actions)])
    prior = np.sqrt(np.einsum("ij,ij->i", x, x))
    assert np.all(before < prior)
    size = policy.learner.dictionary_size
    policy.end_dialogue(trace)  # the same dialogue once more: no new dictionary point, more evidence
    assert policy.learner.dictionary_size == size
    after = np.array([policy.learner.q_values(b).std[a] for b, a in zip(x, trace.actions)])
    assert np.all(after < before)


# ----------------------------------------------------------------------------- responses


def test_respond_on_all_c_gen_contexts(trained: GPSarsaPolicy) -> None:
    responses = run_policy(trained, C_GEN)
    assert len(responses) == 1296
    assert responses.policy == "gpsarsa-ts-seed5-200"
    assert responses.provenance["checkpoint"] == 200 and responses.provenance["seed"] == 5
    for context in C_GEN:
        response = responses[context.id]
        assert isinstance(response, Response) and isinstance(response.action, Act) and response.text
        mask = SPACE.mask(context.belief)
        expected = master_action(trained.greedy_action(context.belief, mask), context.belief, DOMAIN)
        assert response.action == expected
        # no history in C_gen: nothing was offered, so there is nothing to repeat or add to
        assert response.action.intents[0] not in ("repeat", "restart", "reqmore")
    intents = {responses[c.id].action.intents[0] for c in C_GEN}
    assert {"request", "inform"} <= intents


def test_untrained_policy_responses_golden() -> None:
    policy = GPSarsaPolicy(seed=0)
    context = C_GEN["gen/area=1.0/pricerange=1.0/food=1.0/method=byconstraints"]
    # every mean is 0 before training: the lowest unmasked index, request_area
    assert str(policy.respond(context).action) == "request(area)"


def test_another_checkpoint_changes_words_not_actions(trained: GPSarsaPolicy) -> None:
    other = GPSarsaPolicy(seed=5, learner=trained.learner, dialogues_trained=trained.dialogues_trained + 1)
    a = run_policy(trained, C_GEN)
    b = run_policy(other, C_GEN)
    assert all(a[i].action == b[i].action for i in C_GEN.ids)
    assert sum(a[i].text != b[i].text for i in C_GEN.ids) > 100


def test_respond_on_collected_contexts(trained: GPSarsaPolicy, collected) -> None:
    assert len(collected) > 40
    assert any(c.belief.offer_happened for c in collected)
    responses = run_policy(trained, collected)
    assert responses.ids == collected.ids
    offered = [c for c in collected if c.belief.offer_happened]
    for context in collected:
        mask = SPACE.mask(context.belief)
        action = trained.greedy_action(context.belief, mask)
        assert responses[context.id].action == master_action(action, context.belief, DOMAIN, rng=trained.seed)
    again = run_policy(trained, collected)
    assert all(again[c.id] == responses[c.id] for c in collected)
    assert offered and any(SPACE.mask(c.belief)[SPACE.REQMORE] for c in offered)


def test_respond_rejects_a_context_without_belief() -> None:
    with pytest.raises(TypeError, match="context 'c' has no BeliefState"):
        GPSarsaPolicy().respond(SimpleNamespace(id="c", belief={"area": {"north": 1.0}}))
    assert GPSarsaPolicy().respond(Context("c", BeliefState())).action == Act.parse("request(area)")


# ----------------------------------------------------------------------------- checkpoints


def test_save_load_gives_equal_responses_on_c_gen(trained: GPSarsaPolicy, tmp_path: Path) -> None:
    stem = tmp_path / "policy"
    trained.save(stem)
    loaded = GPSarsaPolicy.load(stem)
    assert loaded.training is False and GPSarsaPolicy.load(stem, training=True).training is True
    assert (loaded.reward, loaded.seed, loaded.nlg_instance, loaded.dialogues_trained) == (
        "ts", 5, trained.nlg_instance, 200
    )
    assert loaded.provenance == trained.provenance and loaded.name == trained.name
    before, after = run_policy(trained, C_GEN), run_policy(loaded, C_GEN)
    assert all(before[i] == after[i] for i in C_GEN.ids)
    for context in list(C_GEN)[::50]:
        q1, q2 = trained.q_values(context.belief), loaded.q_values(context.belief)
        assert np.array_equal(q1.mean, q2.mean) and np.array_equal(q1.std, q2.std)
    header = json.loads((tmp_path / "policy.json").read_text())
    meta = header["metadata"]
    assert meta["format"] == POLICY_FORMAT and meta["version"] == POLICY_VERSION
    assert meta["domain"]["fingerprint"] == domain_fingerprint(DOMAIN)
    assert meta["domain"]["summary_actions"] == list(SUMMARY_ACTIONS)
    # the same state gives the same bytes
    trained.save(tmp_path / "again")
    assert (tmp_path / "again.npz").read_bytes() == (tmp_path / "policy.npz").read_bytes()
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["arrays"].pop("file") == "again.npz" and header["arrays"].pop("file") == "policy.npz"
    assert again == header


def _edit_json(path: Path, edit) -> None:
    header = json.loads(path.read_text())
    edit(header)
    path.write_text(json.dumps(header))


def _damage_in_place(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda stem: _damage_in_place(stem.with_suffix(".npz")), "checksum mismatch"),
        (lambda stem: stem.with_suffix(".npz").write_bytes(b"PK\x03\x04 broken"), "11 bytes, but policy.json records"),
        (lambda stem: stem.with_suffix(".json").write_text("{not json"), "invalid JSON"),
        (lambda stem: stem.with_suffix(".json").unlink(), "cannot read the checkpoint header"),
        (lambda stem: stem.with_suffix(".npz").unlink(), "cannot read the checkpoint arrays"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h.update(version=2)),
         "unsupported format version 2"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"].update(version=7)),
         "unsupported policy metadata format version 7"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"].update(version=2)),
         r"unsupported policy metadata format version 2 \(this simscore reads version 3\): version 2 was trained "
         r"with belief features that are not PyDial's .* Train a new run"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"].update(format="x")),
         "policy metadata format is 'x'"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h.pop("metadata")),
         "no policy metadata"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"].pop("reward_assignment")),
         r"lacks the field\(s\) \['reward_assignment'\]"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"].update(reward="bleu")),
         "invalid policy metadata .reward must be one of"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"]["domain"].update(fingerprint="0")),
         "trained in domain 'restaurants'"),
        (lambda stem: _edit_json(stem.with_suffix(".json"), lambda h: h["metadata"]["domain"]["summary_actions"].reverse()),
         r"summary_actions differ from this code's summary actions \(first difference at action 0: "),
    ],
    ids=["npz-bytes", "npz-size", "json-syntax", "json-missing", "npz-missing", "learner-version", "policy-version",
         "old-policy-version", "policy-format", "no-metadata", "missing-field", "bad-reward", "other-domain",
         "action-order"],
)
def test_corrupt_or_wrong_version_checkpoint_is_a_clear_error(trained, tmp_path: Path, damage, message) -> None:
    stem = tmp_path / "policy"
    trained.save(stem)
    damage(stem)
    with pytest.raises(CheckpointError, match=message):
        GPSarsaPolicy.load(stem)


def test_checkpoint_of_another_domain(trained: GPSarsaPolicy, tmp_path: Path) -> None:
    smaller = Domain(name="restaurants", ontology=DOMAIN.ontology, venues=DOMAIN.venues[:60])
    assert feature_size(smaller) == feature_size(DOMAIN)
    trained.save(tmp_path / "p")
    with pytest.raises(CheckpointError, match="fingerprint"):
        GPSarsaPolicy.load(tmp_path / "p", domain=smaller)
    small = GPSarsaPolicy(smaller, seed=1)
    small.save(tmp_path / "small")
    assert GPSarsaPolicy.load(tmp_path / "small", domain=smaller).domain is smaller


def test_plain_learner_checkpoint_is_not_a_policy(tmp_path: Path) -> None:
    GPSarsa(GPSarsaConfig(feature_dim=302)).save(tmp_path / "learner")
    with pytest.raises(CheckpointError, match="no policy metadata"):
        GPSarsaPolicy.load(tmp_path / "learner")
