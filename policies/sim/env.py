"""A Gymnasium environment over the simulated restaurant-search dialogues.

``gymnasium.make("simscore/RestaurantSearch-v0", **kwargs)`` builds it once
:mod:`simscore.integrations.gym` is imported (or, with no import at all,
``gymnasium.make("simscore.integrations.gym:simscore/RestaurantSearch-v0")``); the keyword
arguments of :class:`RestaurantSearchEnv` are the ``make`` kwargs. This module registers
nothing itself.

Observation
-----------
The GP-SARSA belief feature vector :func:`policies.sim.features.belief_features` of the tracker's
belief state (float64 in [0, 1], length :func:`~policies.sim.features.feature_size`, 302 for the
default domain; layout and entry names in :mod:`policies.sim.features`). It is a function of the
belief state alone, so a context (whose belief state is all a policy sees) has exactly one
observation: :meth:`RestaurantSearchEnv.observation_for` (or
:func:`policies.sim.observation.observation_for`) maps a context or a belief to it, and a model trained
here answers a context as it would act on that belief inside a dialogue
(:class:`policies.observation.ObservationPolicy`). The map is not injective by design: value
*names* are dropped (how certain the belief is, not about which food), so beliefs that differ
only in names share an observation.

Actions and masks
-----------------
``Discrete(16)`` summary actions (index order of :data:`policies.sim.summary.SUMMARY_ACTIONS`),
mapped to master acts by :class:`~policies.sim.summary.SummaryActions`. :meth:`~RestaurantSearchEnv.action_masks`
(sb3-contrib's ``MaskablePPO`` convention) and ``info["action_mask"]`` give the
Environment-1 mask of the current observation (bool, True = allowed). By default
(``enforce_masks=False``) a masked action is carried out literally and the simulated user
reacts to it; with ``enforce_masks=True`` a masked action raises ``ValueError`` (for agents
that are supposed to mask: a check, not a learning signal).

Rewards
-------
Every decision costs -1 and the final step adds ``20 * success`` (``reward=
"task_success"``) or ``5 * (iq - 1)`` (``reward="interaction_quality"``), so an episode's
return equals R_TS or R_IQ of the dialogue. As in PyDial, the agent also decides after the
user's ``bye()`` (the observation then shows method ``finished``); that act is replaced by
``bye()`` and the episode ends (``terminated``), as it does when the agent says bye itself.
After the ``max_turns``-th decision (25) the episode is ``truncated`` (the environment counts
its own turns: no ``TimeLimit`` wrapper is needed).

Info
----
Every step: ``action_mask`` (of the new observation), ``turn``, ``summary_action`` (the name
of the action taken), ``masked`` (whether it was masked), ``system_act`` (the master act it
became, a PyDial act string; ``bye()`` after the user's bye), ``system_text``, ``user_act``,
``user_text``. ``reset`` gives the same keys but ``summary_action`` and ``masked``. The last
step adds ``success`` and ``is_success`` (the name stable-baselines3's ``EvalCallback`` reads),
``iq`` (interaction quality in [1, 5]) and ``outcome`` (the dialogue's outcome as JSON).

Importing this module imports gymnasium; ``import policies`` does not.

Examples
--------
>>> env = RestaurantSearchEnv()
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n), env.action_masks()[:3].tolist()
((302,), 16, [True, True, True])
>>> bool((env.observation_for(env.belief) == obs).all())
True
>>> obs, reward, terminated, truncated, info = env.step(1)
>>> info["summary_action"], info["system_act"], reward
('request_food', 'request(food)', -1.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from policies.sim.features import BeliefFeatures
from policies.sim.observation import observation_for
from policies.sim.rewards import IQEstimator, RewardModel, reward_model
from policies.sim.simulation import MAX_TURNS, DialogueSimulator, SimulationSettings
from policies.sim.usersim import UserGoal, UserSimulatorConfig
from simscore.checks import check_seed

if TYPE_CHECKING:
    from contexts.belief import BeliefState
    from contexts.domain import Domain

__all__ = ["RestaurantSearchEnv"]


class RestaurantSearchEnv(gym.Env):
    """Restaurant search with an agenda-based simulated user (PyDial "Environment 1" shape).

    Parameters
    ----------
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    reward : {"task_success", "interaction_quality"} or RewardModel
        The reward model (aliases ``"ts"``, ``"iq"``).
    user_config : UserSimulatorConfig or mapping, optional
        The simulated user: an instance, or its field values
        (:meth:`UserSimulatorConfig.from_mapping <policies.sim.usersim.UserSimulatorConfig.from_mapping>`,
        e.g. ``{"patience": (2, 3)}``); default PyDial's Environment 1.
    nlg_instance : str
        Who words the system's acts (texts appear in ``info`` and ``render``).
    iq_estimator : callable, optional
        ``InteractionStats -> [1, 5]``; default :class:`~policies.sim.rewards.RuleBasedIQ`.
    max_turns : int
        Decisions after which the episode is truncated.
    enforce_masks : bool
        Raise ``ValueError`` on a masked action instead of carrying it out.
    render_mode : {None, "ansi"}
        Other modes (stable-baselines3's ``make_vec_env`` asks for ``"rgb_array"``) are
        accepted and render nothing (``gymnasium.make`` warns about them).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        domain: Domain | None = None,
        *,
        reward: str | RewardModel = "task_success",
        user_config: UserSimulatorConfig | Mapping[str, Any] | None = None,
        nlg_instance: str = "agent",
        iq_estimator: IQEstimator | None = None,
        max_turns: int = MAX_TURNS,
        enforce_masks: bool = False,
        render_mode: str | None = None,
    ) -> None:
        # Other render modes are accepted and render nothing: stable-baselines3's make_vec_env
        # asks every environment for "rgb_array" (gymnasium.make warns about the mode).
        if not isinstance(enforce_masks, bool):
            raise TypeError(f"enforce_masks must be a bool, got {type(enforce_masks).__name__}")
        if isinstance(user_config, Mapping):
            user_config = UserSimulatorConfig.from_mapping(user_config)
        self.reward_model = reward_model(reward)
        self.render_mode = render_mode
        self.enforce_masks = enforce_masks
        settings = SimulationSettings(domain, user_config, iq_estimator, max_turns)  # type: ignore[arg-type]
        self.sim = DialogueSimulator(settings, nlg_instance=nlg_instance)
        self.domain = self.sim.domain
        self._features = BeliefFeatures(self.domain, space=self.sim.space)  # the environment's own memo
        self.observation_space = spaces.Box(low=0.0, high=1.0, shape=(self._features.size,), dtype=np.float64)
        self.action_space = spaces.Discrete(len(self.sim.space))
        self._episode = 0
        self._last_lines: list[str] = []

    def _observe(self) -> np.ndarray:
        return self._features(self.sim.belief)

    def _started(self) -> DialogueSimulator:
        if self._episode == 0:
            raise RuntimeError("no dialogue yet: call reset() first")
        return self.sim

    @property
    def belief(self) -> BeliefState:
        """The tracker's current belief state (the current observation is its feature vector)."""
        return self._started().belief

    def observation_for(self, context_or_belief: Any) -> np.ndarray:
        """The observation of a context's belief state (or of a belief state) in this environment.

        Equal to the observation the environment returns whenever its tracker holds that belief.
        """
        return observation_for(context_or_belief, self.domain)

    def action_masks(self) -> np.ndarray:
        """The Environment-1 mask of the current observation (bool, True = allowed; a copy).

        The method sb3-contrib's ``MaskablePPO`` looks for; through Gymnasium wrappers use
        ``env.get_wrapper_attr("action_masks")()`` or ``env.unwrapped.action_masks()``.
        """
        return self._started().mask.copy()

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
        if seed is not None:
            check_seed("seed", seed, error=ValueError)
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"options must be a dict (e.g. {{'goal': UserGoal(...)}}) or None, got {type(options).__name__}")
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
        # a bool is an int to Python and to gymnasium's Discrete space, never an action index
        if isinstance(action, (bool, np.bool_)) or not self.action_space.contains(action):
            raise ValueError(f"action must be an int in [0, {len(self.sim.space)}), got {action!r}")
        sim = self.sim
        if sim.done:
            raise RuntimeError("the episode has ended; call reset()")
        action = int(action)
        masked = not bool(sim.mask[action])
        if masked and self.enforce_masks:
            allowed = ", ".join(sim.space.names[i] for i in np.flatnonzero(sim.mask))
            raise ValueError(
                f"action {action} ({sim.space.names[action]}) is masked in this state (enforce_masks=True); "
                f"allowed: {allowed}"
            )
        reward = -1.0
        done = sim.step(action)
        info = self._info()
        info["summary_action"] = sim.space.names[action]
        info["masked"] = masked
        self._last_lines = [f"S: {sim.system_text}"]
        if not done:
            self._last_lines.append(f"U: {sim.user_text}")
        terminated = truncated = False
        if done:
            outcome = sim.outcome()
            reward += self.reward_model.bonus(success=outcome.success, iq=outcome.iq)
            info["success"] = info["is_success"] = outcome.success
            info["iq"] = outcome.iq
            info["outcome"] = outcome.to_json()
            truncated = outcome.ended_by == "turn_limit"
            terminated = not truncated
        return self._observe(), reward, terminated, truncated, info

    def render(self) -> str | None:
        """The last exchange as text (``render_mode="ansi"``)."""
        if self.render_mode == "ansi":
            return "\n".join(self._last_lines)
        return None
