"""policies: dialogue policies and the simulated restaurant-search domain they are trained in.

The simulated environment (PyDial's Cambridge Restaurants "Environment 1" shape): an
agenda-based user simulator (:mod:`policies.usersim`), a focus belief tracker
(:mod:`policies.tracker`), 16 summary actions with masks and master actions
(:mod:`policies.summary`), GP-SARSA belief features (:mod:`policies.features`), template
NLG (:mod:`policies.nlg`), task-success and interaction-quality rewards
(:mod:`policies.rewards`), a handcrafted and a random policy (:mod:`policies.handcrafted`),
the dialogue runner and the simscore policy adapter (:mod:`policies.simulation`), the
GP-SARSA policy (:mod:`policies.gpsarsa_policy`) and its training runs with checkpoints and
evaluations (:mod:`policies.training`), adapters for other kinds of policies
(:mod:`policies.adapters`, among them :class:`ObservationPolicy` for agents trained on the
environment's observation), the ConvLab bridge (:mod:`policies.convlab`: both state layouts,
act conversion, reseeding, the states file for a separate ConvLab environment) and a Gymnasium
environment (:mod:`policies.env`, imported lazily: ``import policies`` does not import
gymnasium; registered as ``simscore/RestaurantSearch-v0`` by :mod:`simscore.integrations.gym`),
and local language models as policies (:mod:`policies.generative` with its prompts in
:mod:`policies.prompts`; torch and transformers load only when a model does; tiny random
models for tests in :mod:`policies.tiny_models`).

Examples
--------
>>> from policies import HandcraftedPolicy, run_dialogues
>>> run_dialogues(HandcraftedPolicy(), 10, seed=0).success_rate
1.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policies.adapters import (
    CSV_COLUMNS,
    EMPTY_ACT,
    CallablePolicy,
    ConvLabPolicy,
    LoggedPolicy,
    ObservationPolicy,
    action_mask_for,
    observation_for,
    read_responses,
    read_responses_csv,
    to_convlab_state,
    write_responses_csv,
)
from policies.convlab import context_seed, convlab_acts, read_convlab_states, reseeded, write_convlab_states
from policies.degenerate import ConstantPolicy, CyclicPolicy, EchoPolicy, UniformActPolicy, degenerate_policies
from policies.domain_cache import DomainCache, domain_cache
from policies.features import belief_features, feature_names, feature_size
from policies.generative import Decoding, GenerativePolicy, model_folder_sha256
from policies.gpsarsa import GPSarsa, GPSarsaConfig, GPSarsaDiagnostics, QEstimate
from policies.gpsarsa_policy import GPSarsaPolicy
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.nlg import TemplateNLG
from policies.prompts import PromptTemplate, act_from_output, belief_text, dialogue_history
from policies.rewards import (
    REWARD_MODELS,
    InteractionStats,
    RewardModel,
    RuleBasedIQ,
    iq_reward,
    reward_model,
    task_success,
    task_success_reward,
)
from policies.simulation import (
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
from policies.summary import SUMMARY_ACTIONS, SummaryActions, SummaryPolicy, action_mask, master_action
from policies.tiny_models import TINY_ARCHITECTURES, write_tiny_model
from policies.tracker import FocusTracker
from policies.training import (
    EvaluationRecord,
    TrainingConfig,
    TrainingResult,
    evaluate_policy,
    list_checkpoints,
    load_checkpoint,
    train,
)
from policies.usersim import AgendaUser, SimulationError, UserGoal, UserSimulatorConfig

if TYPE_CHECKING:
    from policies.env import RestaurantSearchEnv

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
    "read_responses",
    "read_responses_csv",
    "write_responses_csv",
    "EMPTY_ACT",
    "CSV_COLUMNS",
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
        from policies.env import RestaurantSearchEnv

        return RestaurantSearchEnv
    raise AttributeError(f"module 'policies' has no attribute {name!r}")
