"""policies: the dialogue policies simscore compares, and the simulated world they are trained in.

Three rooms, each importing only the ones below it:

* **here, at the top** — what users bring and run: adapters for plain callables, response
  logs and ConvLab-style policies (:mod:`policies.adapters`), policies over the Gymnasium
  environment's observation (:mod:`policies.observation`, e.g. a trained network), the
  ConvLab bridge (:mod:`policies.convlab`: both state layouts, act conversion, reseeding, the
  states file for a separate ConvLab environment), a handcrafted and a random policy
  (:mod:`policies.handcrafted`) and degenerate reference policies
  (:mod:`policies.degenerate`), and local language models as policies
  (:mod:`policies.generative` with its prompts in :mod:`policies.prompts`; torch and
  transformers load only when a model does; tiny random models for tests in
  :mod:`policies.tiny_models`);
* :mod:`policies.gpsarsa` — the GP-SARSA learner, the policy built on it, its training runs
  with checkpoints and evaluations;
* :mod:`policies.sim` — the simulated restaurant-search world of PyDial's Environment 1:
  user simulator, focus tracker, summary actions and masks, belief features, template NLG,
  rewards, the dialogue simulator and runner, and a Gymnasium environment
  (:mod:`policies.sim.env`, imported lazily: ``import policies`` does not import gymnasium;
  registered as ``simscore/RestaurantSearch-v0`` by :mod:`simscore.integrations.gym`).

Every name below is importable from ``policies`` itself.

Examples
--------
>>> from policies import HandcraftedPolicy, run_dialogues
>>> run_dialogues(HandcraftedPolicy(), 10, seed=0).success_rate
1.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policies import _own  # noqa: F401  (checks that contexts is ours, before the modules that import it)
from policies.adapters import EMPTY_ACT, CallablePolicy, ConvLabPolicy, LoggedPolicy, to_convlab_state
from policies.convlab import context_seed, convlab_acts, read_convlab_states, reseeded, write_convlab_states
from policies.degenerate import ConstantPolicy, CyclicPolicy, EchoPolicy, UniformActPolicy, degenerate_policies
from policies.generative import Decoding, GenerativePolicy, model_folder_sha256
from policies.gpsarsa import (
    EvaluationRecord,
    GPSarsa,
    GPSarsaConfig,
    GPSarsaDiagnostics,
    GPSarsaPolicy,
    QEstimate,
    TrainingConfig,
    TrainingResult,
    evaluate_policy,
    list_checkpoints,
    load_checkpoint,
    train,
)
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.observation import ObservationPolicy
from policies.prompts import PromptTemplate, act_from_output, belief_text, dialogue_history
from policies.sim import (
    MAX_TURNS,
    REWARD_MODELS,
    SUMMARY_ACTIONS,
    AgendaUser,
    DialogueOutcome,
    DialogueSimulator,
    DialogueTrace,
    DomainCache,
    FocusTracker,
    InteractionStats,
    RewardModel,
    RuleBasedIQ,
    SimulationError,
    SimulationResult,
    SimulationSettings,
    SummaryActions,
    SummaryPolicy,
    SummaryPolicyAdapter,
    TemplateNLG,
    UserGoal,
    UserSimulatorConfig,
    action_mask,
    belief_features,
    domain_cache,
    feature_names,
    feature_size,
    iq_reward,
    master_action,
    reward_model,
    run_dialogues,
    simulated_contexts,
    task_success,
    task_success_reward,
)
from policies.sim.observation import action_mask_for, observation_for
from policies.tiny_models import TINY_ARCHITECTURES, write_tiny_model

if TYPE_CHECKING:
    from policies.sim.env import RestaurantSearchEnv

__simscore_distribution__ = "simscore-dialogue"  # checked by simscore.ownership (the name is shared on PyPI)
__all__ = [
    "ConstantPolicy",
    "EchoPolicy",
    "CyclicPolicy",
    "UniformActPolicy",
    "degenerate_policies",
    "SUMMARY_ACTIONS",
    "MAX_TURNS",
    "SummaryPolicy",
    "SummaryActions",
    "action_mask",
    "master_action",
    "belief_features",
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
    "DomainCache",
    "domain_cache",
    "SimulationSettings",
    "RuleBasedIQ",
    "task_success",
    "task_success_reward",
    "iq_reward",
    "HandcraftedPolicy",
    "RandomPolicy",
    "DialogueSimulator",
    "DialogueOutcome",
    "DialogueTrace",
    "SimulationResult",
    "run_dialogues",
    "simulated_contexts",
    "SummaryPolicyAdapter",
    "RestaurantSearchEnv",
    "GPSarsa",
    "GPSarsaConfig",
    "GPSarsaDiagnostics",
    "QEstimate",
    "GPSarsaPolicy",
    "TrainingConfig",
    "TrainingResult",
    "EvaluationRecord",
    "train",
    "evaluate_policy",
    "load_checkpoint",
    "list_checkpoints",
    "CallablePolicy",
    "LoggedPolicy",
    "ConvLabPolicy",
    "ObservationPolicy",
    "observation_for",
    "action_mask_for",
    "to_convlab_state",
    "convlab_acts",
    "context_seed",
    "reseeded",
    "write_convlab_states",
    "read_convlab_states",
    "EMPTY_ACT",
    "GenerativePolicy",
    "Decoding",
    "PromptTemplate",
    "belief_text",
    "dialogue_history",
    "act_from_output",
    "model_folder_sha256",
    "write_tiny_model",
    "TINY_ARCHITECTURES",
]


def __getattr__(name: str) -> Any:
    # The gymnasium environment is loaded on first use only.
    if name == "RestaurantSearchEnv":
        from policies.sim.env import RestaurantSearchEnv

        return RestaurantSearchEnv
    raise AttributeError(f"module 'policies' has no attribute {name!r}")
