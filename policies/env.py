"""A Gymnasium environment over the simulated restaurant-search dialogues.

Observation: the GP-SARSA belief feature vector (:func:`policies.features.belief_features`,
float64 in [0, 1]); actions: ``Discrete(16)`` summary actions (index order of
:data:`policies.summary.SUMMARY_ACTIONS`); ``info["action_mask"]`` holds the Environment-1
mask of the new observation (bool, True = allowed). The environment does not enforce the
mask: a masked action is carried out literally and the simulated user reacts to it.

Rewards: every decision costs -1 and the final step adds ``20 * success`` (``reward=
"task_success"``) or ``5 * (iq - 1)`` (``reward="interaction_quality"``), so an episode's
return equals R_TS or R_IQ of the dialogue. As in PyDial, the agent also decides after the
user's ``bye()`` (the observation then shows method ``finished``); that act is replaced by
``bye()`` and the episode ends (``terminated``), as it does when the agent says bye itself.
After the 25th decision the episode is ``truncated``. ``info["outcome"]`` at the last step
holds the dialogue's outcome.

Importing this module imports gymnasium; ``import policies`` does not.

Examples
--------
>>> env = RestaurantSearchEnv()
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n), info["action_mask"][:3].tolist()
((275,), 16, [True, True, True])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from policies.features import belief_features, feature_size
from policies.rewards import IQEstimator, reward_model
from policies.simulation import MAX_TURNS, DialogueSimulator, SimulationSettings
from policies.usersim import UserGoal, UserSimulatorConfig

if TYPE_CHECKING:
    from contexts.domain import Domain

__all__ = ["RestaurantSearchEnv"]


class RestaurantSearchEnv(gym.Env):
    """Restaurant search with an agenda-based simulated user (PyDial "Environment 1" shape).

    Parameters
    ----------
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    reward : {"task_success", "interaction_quality"}
        The reward model (aliases ``"ts"``, ``"iq"``).
    user_config : UserSimulatorConfig, optional
    nlg_instance : str
        Who words the system's acts (texts appear in ``info`` and ``render``).
    iq_estimator : callable, optional
        ``InteractionStats -> [1, 5]``; default :class:`~policies.rewards.RuleBasedIQ`.
    max_turns : int
    render_mode : {None, "ansi"}
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        domain: Domain | None = None,
        *,
        reward: str = "task_success",
        user_config: UserSimulatorConfig | None = None,
        nlg_instance: str = "agent",
        iq_estimator: IQEstimator | None = None,
        max_turns: int = MAX_TURNS,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.reward_model = reward_model(reward)
        self.render_mode = render_mode
        settings = SimulationSettings(domain, user_config, iq_estimator, max_turns)  # type: ignore[arg-type]
        self.sim = DialogueSimulator(settings, nlg_instance=nlg_instance)
        self.domain = self.sim.domain
        self.observation_space = spaces.Box(
            low=0.0, high=1.0, shape=(feature_size(self.domain),), dtype=np.float64
        )
        self.action_space = spaces.Discrete(len(self.sim.space))
        self._episode = 0
        self._last_lines: list[str] = []

    def _observe(self) -> np.ndarray:
        return belief_features(self.sim.belief, self.domain)

    def _info(self) -> dict[str, Any]:
        sim = self.sim
        return {
            "action_mask": sim.mask.copy(),
            "turn": sim.turn_index,
            "system_act": str(sim.system_act),
            "system_text": sim.system_text,
            "user_act": None if sim.user_act is None else str(sim.user_act),
            "user_text": sim.user_text,
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a dialogue (greeting and the user's first act); ``seed`` reseeds the user.

        ``options={"goal": UserGoal(...)}`` fixes the user's goal for this episode.
        """
        super().reset(seed=seed)
        goal = (options or {}).get("goal")
        if goal is not None and not isinstance(goal, UserGoal):
            raise ValueError(f"options['goal'] must be a UserGoal, got {type(goal).__name__}")
        self._episode += 1
        self.sim.reset(self.np_random, goal=goal, dialogue_id=f"episode-{self._episode}")
        self._last_lines = [f"S: {self.sim.system_text}", f"U: {self.sim.user_text}"]
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One system turn with summary action ``action``."""
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, {len(self.sim.space)}), got {action!r}")
        sim = self.sim
        if sim.done:
            raise RuntimeError("the episode has ended; call reset()")
        reward = -1.0
        done = sim.step(int(action))
        info = self._info()
        self._last_lines = [f"S: {sim.system_text}"]
        if not done:
            self._last_lines.append(f"U: {sim.user_text}")
        terminated = truncated = False
        if done:
            outcome = sim.outcome()
            reward += self.reward_model.bonus(success=outcome.success, iq=outcome.iq)
            info["outcome"] = outcome.to_json()
            truncated = outcome.ended_by == "turn_limit"
            terminated = not truncated
        return self._observe(), reward, terminated, truncated, info

    def render(self) -> str | None:
        """The last exchange as text (``render_mode="ansi"``)."""
        if self.render_mode == "ansi":
            return "\n".join(self._last_lines)
        return None
