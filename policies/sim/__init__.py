"""policies.sim: the simulated restaurant-search world of PyDial's Environment 1.

The world a learning dialogue policy is trained and evaluated in: an agenda-based user
simulator (:mod:`~policies.sim.usersim`), a focus belief tracker
(:mod:`~policies.sim.tracker`), 16 summary actions with masks and master actions
(:mod:`~policies.sim.summary`), template NLG (:mod:`~policies.sim.nlg`), task-success and
interaction-quality rewards (:mod:`~policies.sim.rewards`), the dialogue simulator
(:mod:`~policies.sim.simulator`) and runner (:mod:`~policies.sim.simulation`), replays of a
collected dialogue from one of its contexts under common random numbers
(:mod:`~policies.sim.replay`), the belief feature vector that is the environment's
observation (:mod:`~policies.sim.features`, :mod:`~policies.sim.observation`), the objects
derived once per domain (:mod:`~policies.sim.domain_cache`) and a Gymnasium environment
(:mod:`~policies.sim.env`, imported only when used: ``import policies.sim`` does not import
gymnasium).

Nothing here imports the rest of :mod:`policies`: the GP-SARSA learner
(:mod:`policies.gpsarsa`) and the adapters build on this world, not the other way round
(``tests/test_layering.py``).

Examples
--------
>>> from policies.sim import run_dialogues
>>> from policies import HandcraftedPolicy
>>> run_dialogues(HandcraftedPolicy(), 5, seed=0).success_rate
1.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policies.sim.domain_cache import DomainCache, domain_cache, domain_fingerprint
from policies.sim.features import BeliefFeatures, belief_features, feature_names, feature_size
from policies.sim.nlg import TemplateNLG
from policies.sim.replay import Replays, replay
from policies.sim.rewards import (
    REWARD_MODELS,
    InteractionStats,
    RewardModel,
    RuleBasedIQ,
    iq_reward,
    reward_model,
    task_success,
    task_success_reward,
)
from policies.sim.simulation import (
    MAX_TURNS,
    DialogueOutcome,
    DialogueSimulator,
    DialogueTrace,
    SimulationResult,
    SimulationSettings,
    SummaryPolicyAdapter,
    run_dialogues,
    simulated_contexts,
)
from policies.sim.summary import SUMMARY_ACTIONS, SummaryActions, SummaryPolicy, action_mask, master_action
from policies.sim.tracker import FocusTracker
from policies.sim.usersim import AgendaUser, SimulationError, UserGoal, UserSimulatorConfig

if TYPE_CHECKING:
    from policies.sim.env import RestaurantSearchEnv

__all__ = [
    "SUMMARY_ACTIONS",
    "MAX_TURNS",
    "SummaryPolicy",
    "SummaryActions",
    "action_mask",
    "master_action",
    "belief_features",
    "BeliefFeatures",
    "feature_names",
    "feature_size",
    "FocusTracker",
    "AgendaUser",
    "UserGoal",
    "UserSimulatorConfig",
    "SimulationError",
    "TemplateNLG",
    "InteractionStats",
    "RewardModel",
    "REWARD_MODELS",
    "reward_model",
    "RuleBasedIQ",
    "task_success",
    "task_success_reward",
    "iq_reward",
    "DomainCache",
    "domain_cache",
    "domain_fingerprint",
    "SimulationSettings",
    "DialogueSimulator",
    "DialogueOutcome",
    "DialogueTrace",
    "SimulationResult",
    "run_dialogues",
    "simulated_contexts",
    "SummaryPolicyAdapter",
    "replay",
    "Replays",
    "RestaurantSearchEnv",
]


def __getattr__(name: str) -> Any:
    # The gymnasium environment is loaded on first use only.
    if name == "RestaurantSearchEnv":
        from policies.sim.env import RestaurantSearchEnv

        return RestaurantSearchEnv
    raise AttributeError(f"module 'policies.sim' has no attribute {name!r}")
