"""simscore.integrations.gym: registration, make kwargs, the env checker, SimilarityReward."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from policies import HandcraftedPolicy, RandomPolicy, SummaryPolicyAdapter  # noqa: E402
from policies.sim.env import RestaurantSearchEnv  # noqa: E402
from simscore.integrations.gym import ENV_ID, SimilarityReward, register_envs  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.split()


def test_make_with_the_documented_id_and_kwargs():
    env = gymnasium.make(ENV_ID, reward="iq", user_config={"patience": (2, 3)}, max_turns=10, enforce_masks=True)
    base = env.unwrapped
    assert isinstance(base, RestaurantSearchEnv)
    assert base.reward_model.name == "iq" and base.sim.max_turns == 10 and base.enforce_masks
    assert base.sim.settings.user.patience == (2, 3)
    assert env.spec.id == ENV_ID and env.spec.max_episode_steps is None
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and env.get_wrapper_attr("action_masks")().shape == (16,)


def test_make_without_import_and_import_without_side_effects():
    code = (
        "import sys, gymnasium\n"
        "env = gymnasium.make('simscore.integrations.gym:simscore/RestaurantSearch-v0', reward='ts')\n"
        "print(type(env.unwrapped).__name__, env.spec.id)\n"
    )
    assert _run(code) == ["RestaurantSearchEnv", ENV_ID]
    code = (
        "import sys, simscore.integrations.gym as g, gymnasium\n"
        "print(g.ENV_ID in gymnasium.registry, 'policies.sim.env' in sys.modules, 'torch' in sys.modules)\n"
    )
    assert _run(code) == ["True", "False", "False"]  # the string entry point loads the env at make


def test_registering_again_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_envs()
        register_envs()
    assert gymnasium.spec(ENV_ID).entry_point == "policies.sim.env:RestaurantSearchEnv"


@pytest.mark.parametrize("reward", ["task_success", "interaction_quality"])
def test_check_env_passes_on_the_made_env(reward):
    env = gymnasium.make(ENV_ID, reward=reward)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_sb3_env_checker_passes():
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_checker.check_env(gymnasium.make(ENV_ID).unwrapped)


def _episode(env, choose, seed):
    obs, info = env.reset(seed=seed)
    infos, rewards, done = [], [], False
    while not done:
        action = choose(env.unwrapped.belief, env.unwrapped.action_masks())
        obs, reward, terminated, truncated, info = env.step(action)
        infos.append(info)
        rewards.append(reward)
        done = terminated or truncated
    return rewards, infos


def test_similarity_reward_adds_weighted_similarity_to_a_reference():
    reference = SummaryPolicyAdapter(HandcraftedPolicy())
    env = SimilarityReward(gymnasium.make(ENV_ID), reference, measure="tmr", weight=0.5)
    plain = gymnasium.make(ENV_ID)
    handcrafted = HandcraftedPolicy().choose
    rewards, infos = _episode(env, handcrafted, seed=3)
    plain_rewards, _ = _episode(plain, handcrafted, seed=3)
    assert all(i["similarity"] == 1.0 and i["reference_act"] == i["system_act"] for i in infos)
    assert np.allclose(np.array(rewards) - np.array(plain_rewards), 0.5)
    random_policy = RandomPolicy(seed=2).choose
    rewards, infos = _episode(env, random_policy, seed=3)
    assert any(i["similarity"] == 0.0 for i in infos)
    assert all(i["similarity_reward"] == 0.5 * i["similarity"] for i in infos)


def test_similarity_reward_partial_credit_with_cmr():
    env = SimilarityReward(gymnasium.make(ENV_ID), SummaryPolicyAdapter(HandcraftedPolicy()), weight=1.0)
    env.reset(seed=0)
    _, _, _, _, info = env.step(1)  # request(food) where the handcrafted policy asks for the area
    assert info["reference_act"] == "request(area)" and info["similarity"] == pytest.approx(0.2)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"measure": "bleu4"}, ValueError, "action measure"),
        ({"weight": float("nan")}, ValueError, "weight must be a finite number, got nan"),
        ({"weight": True}, ValueError, "weight must be a number, got bool True"),
        ({"reference": object()}, TypeError, "respond\\(context\\)"),
    ],
)
def test_similarity_reward_errors(kwargs, error, message):
    arguments = {"reference": SummaryPolicyAdapter(HandcraftedPolicy())} | kwargs
    with pytest.raises(error, match=message):
        SimilarityReward(gymnasium.make(ENV_ID), **arguments)


def test_similarity_reward_needs_the_restaurant_env():
    with pytest.raises(TypeError, match="restaurant-search environment"):
        SimilarityReward(gymnasium.make("CartPole-v1"), SummaryPolicyAdapter(HandcraftedPolicy()))
