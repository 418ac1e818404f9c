"""The Gymnasium environment: env checker, rewards equal to R_TS / R_IQ, masks, truncation."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from policies.handcrafted import HandcraftedPolicy  # noqa: E402
from policies.sim.env import RestaurantSearchEnv  # noqa: E402
from policies.sim.summary import SUMMARY_ACTIONS  # noqa: E402


@pytest.mark.parametrize("reward", ["task_success", "interaction_quality"])
def test_check_env(reward):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings count as failures
        warnings.filterwarnings("ignore", message=".*render modes.*")
        check_env(RestaurantSearchEnv(reward=reward, render_mode="ansi"))


def play(env: RestaurantSearchEnv, seed: int) -> tuple[float, dict, int]:
    policy = HandcraftedPolicy()
    obs, info = env.reset(seed=seed)
    assert env.observation_space.contains(obs)
    total, steps, done = 0.0, 0, False
    while not done:
        action = policy.choose(env.sim.belief, info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs)
        total += reward
        steps += 1
        done = terminated or truncated
    return total, info, steps


@pytest.mark.parametrize("reward, key", [("ts", "reward_ts"), ("iq", "reward_iq")])
def test_episode_return_equals_dialogue_reward(reward, key):
    env = RestaurantSearchEnv(reward=reward)
    for seed in range(10):
        total, info, steps = play(env, seed)
        assert total == pytest.approx(info["outcome"][key])
        assert info["outcome"]["turns"] == steps  # one decision per step, the greeting is not one


def test_mask_in_info_and_observation_layout():
    env = RestaurantSearchEnv()
    obs, info = env.reset(seed=3)
    assert info["action_mask"].dtype == bool and info["action_mask"].shape == (16,)
    assert [SUMMARY_ACTIONS[i] for i in np.flatnonzero(info["action_mask"])][:3] == [
        "request_area", "request_food", "request_pricerange"]
    assert not info["action_mask"][[13, 15]].any()  # repeat, restart
    assert obs.dtype == np.float64 and obs.shape == env.observation_space.shape
    assert info["system_act"] == "hello()" and info["user_act"].startswith("inform(")


def test_reset_with_seed_is_deterministic_and_renders():
    env = RestaurantSearchEnv(render_mode="ansi")
    a, info_a = env.reset(seed=11)
    b, info_b = env.reset(seed=11)
    assert np.array_equal(a, b) and info_a["user_act"] == info_b["user_act"]
    assert env.render().startswith("S: ")


def test_truncation_at_turn_limit():
    env = RestaurantSearchEnv(max_turns=5)
    env.reset(seed=0)
    results = [env.step(k % 2) for k in range(5)]  # alternate requests: the user never finishes
    *_, (obs, reward, terminated, truncated, info) = results
    assert truncated and not terminated and info["system_act"] in ("request(area)", "request(food)")
    assert info["outcome"]["ended_by"] == "turn_limit" and info["outcome"]["turns"] == 5
    assert sum(r[1] for r in results) == pytest.approx(-5.0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="reward must be one of"):
        RestaurantSearchEnv(reward="success")
    env = RestaurantSearchEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be an int in \\[0, 16\\)"):
        env.step(16)


def test_import_policies_does_not_import_gymnasium():
    code = ("import sys, policies.sim; print('gymnasium' in sys.modules); policies.sim.RestaurantSearchEnv; "
            "print('gymnasium' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_reset_with_fixed_goal():
    from policies.sim.usersim import UserGoal

    goal = UserGoal({"area": "centre", "food": "thai", "pricerange": "cheap"}, ("name", "addr"))
    env = RestaurantSearchEnv()
    total, info, _ = play_with_goal(env, goal)
    assert info["outcome"]["initial_goal"] == goal.to_json() and info["outcome"]["success"]
    with pytest.raises(ValueError, match="options\\['goal'\\] must be a UserGoal"):
        env.reset(seed=0, options={"goal": {"food": "thai"}})


def play_with_goal(env: RestaurantSearchEnv, goal) -> tuple[float, dict, int]:
    policy = HandcraftedPolicy()
    _, info = env.reset(seed=1, options={"goal": goal})
    total, steps, done = 0.0, 0, False
    while not done:
        _, reward, terminated, truncated, info = env.step(policy.choose(env.sim.belief, info["action_mask"]))
        total, steps, done = total + reward, steps + 1, terminated or truncated
    return total, info, steps


def test_action_masks_match_info_and_the_belief():
    env = RestaurantSearchEnv()
    with pytest.raises(RuntimeError, match="call reset"):
        env.action_masks()
    obs, info = env.reset(seed=5)
    for action in (1, 0, 2):
        mask = env.action_masks()
        assert mask.dtype == bool and np.array_equal(mask, info["action_mask"])
        assert np.array_equal(mask, env.sim.space.mask(env.belief))
        mask[:] = False  # a copy: the environment's own mask is untouched
        assert env.action_masks().any()
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break


def test_observation_is_a_function_of_the_belief():
    from contexts.context import Context
    from policies.sim.observation import observation_for

    env = RestaurantSearchEnv()
    obs, _ = env.reset(seed=2)
    for action in (0, 1, 2, 9):
        assert np.array_equal(obs, env.observation_for(env.belief))
        assert np.array_equal(obs, observation_for(Context("c", env.belief)))
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break


def test_info_carries_master_act_success_and_iq():
    env = RestaurantSearchEnv()
    total, info, steps = play(env, seed=4)
    assert info["success"] is info["is_success"] is info["outcome"]["success"]
    assert info["iq"] == info["outcome"]["iq"] and 1.0 <= info["iq"] <= 5.0
    assert info["summary_action"] in SUMMARY_ACTIONS and info["masked"] is False
    env.reset(seed=4)
    _, _, _, _, info = env.step(SUMMARY_ACTIONS.index("reqmore"))  # masked before any offer
    assert info["masked"] is True and info["system_act"] == "reqmore()" and "success" not in info


def test_enforced_masks_reject_masked_actions():
    env = RestaurantSearchEnv(enforce_masks=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action 14 \\(reqmore\\) is masked.*allowed: request_area"):
        env.step(14)
    env.step(0)  # an allowed action still works
    with pytest.raises(TypeError, match="enforce_masks must be a bool"):
        RestaurantSearchEnv(enforce_masks="yes")


def test_user_config_as_fields_or_instance():
    from policies.sim.usersim import UserSimulatorConfig

    env = RestaurantSearchEnv(user_config={"patience": [2, 3], "greeting": (0.0, 0.0)})
    assert env.sim.settings.user.patience == (2, 3) and env.sim.settings.user.greeting == (0.0, 0.0)
    easy = UserSimulatorConfig.easy()
    assert RestaurantSearchEnv(user_config=easy).sim.settings.user is easy
    with pytest.raises(ValueError, match="did you mean 'patience'"):
        RestaurantSearchEnv(user_config={"patiense": (2, 3)})


@pytest.mark.parametrize("action", [True, False, np.bool_(True), 1.0, "3", -1, 16, np.array([2])])
def test_step_refuses_what_is_not_an_action_index(action) -> None:
    env = RestaurantSearchEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 16\), got "):
        env.step(action)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"seed": 1.5}, ValueError, "seed must be an int, got float 1.5"),
        ({"seed": True}, ValueError, "seed must be an int, got bool True"),
        ({"seed": -1}, ValueError, "seed must be >= 0, got -1"),
        ({"options": "goal"}, TypeError, r"options must be a dict \(e.g. \{'goal': UserGoal\(...\)\}\) or None, got str"),
    ],
)
def test_reset_names_a_bad_seed_or_options(options, error, message) -> None:
    with pytest.raises(error, match=message):
        RestaurantSearchEnv().reset(**options)
