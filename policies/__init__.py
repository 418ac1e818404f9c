"""policies: the dialogue policies simscore compares, and the simulated world they are trained in.

Three rooms, each importing only the ones below it:

* **here, at the top** — what users bring and run: adapters for plain callables, response
  logs and ConvLab-style policies (:mod:`policies.adapters`), policies over the Gymnasium
  environment's observation (:mod:`policies.observation`, e.g. a trained network), the
  ConvLab bridge (:mod:`policies.convlab`: both state layouts, act conversion, reseeding, the
  states file for a separate ConvLab environment), a handcrafted and a random policy
  (:mod:`policies.handcrafted`) and degenerate reference policies
  (:mod:`policies.degenerate`), and local language models as policies
  (:mod:`policies.lm.generative` with its prompts in :mod:`policies.lm.prompts`; torch and
  transformers load only when a model does; tiny random models for tests in
  ``examples/tiny_models.py``), and any OpenAI-compatible chat-completions endpoint (vLLM,
  llama.cpp's server, Ollama, ``transformers serve``, a hosted API) as a policy
  (:mod:`policies.lm.openai_endpoint`; the standard library's HTTP client);
* :mod:`policies.gpsarsa` — the GP-SARSA learner, the policy built on it, its training runs
  with checkpoints and evaluations;
* :mod:`policies.sim` — the simulated restaurant-search world of PyDial's Environment 1:
  user simulator, focus tracker, summary actions and masks, belief features, template NLG,
  rewards, the dialogue simulator and runner, and a Gymnasium environment
  (:mod:`policies.sim.env`, imported lazily: ``import policies`` does not import gymnasium;
  registered as ``simscore/RestaurantSearch-v0`` by :mod:`simscore.integrations.gym`).

The names below are what a user starts from: the adapters, the reference and generative
policies, the GP-SARSA policy with its training, and the simulated dialogues to run a policy
in. The rest is imported from its room or module (``from policies.sim import FocusTracker``,
``from policies.gpsarsa import GPSarsa``, ``from policies.seeding import reseeded``). The
GP-SARSA names load :mod:`policies.gpsarsa` on first use: its compiled loops import numba,
which ``import policies`` does not need.

Examples
--------
>>> from policies import HandcraftedPolicy, run_dialogues
>>> run_dialogues(HandcraftedPolicy(), 10, seed=0).success_rate
1.0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from policies import _own  # noqa: F401  (checks that contexts is ours, before the modules that import it)
from policies.adapters import CallablePolicy, ConvLabPolicy, LoggedPolicy
from policies.degenerate import degenerate_policies
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.lm.generative import Decoding, GenerativePolicy
from policies.lm.openai_endpoint import OpenAIEndpointPolicy
from policies.lm.prompts import PromptTemplate
from policies.observation import ObservationPolicy
from policies.sim import (
    SimulationSettings,
    SummaryPolicyAdapter,
    TemplateNLG,
    UserSimulatorConfig,
    run_dialogues,
    simulated_contexts,
)

if TYPE_CHECKING:
    from policies.gpsarsa import GPSarsaPolicy, TrainingConfig, TrainingResult, list_checkpoints, load_checkpoint, train

__simscore_distribution__ = "simscore-dialogue"  # checked by simscore.ownership (the name is shared on PyPI)
__all__ = [
    # adapters: what users bring
    "CallablePolicy",
    "LoggedPolicy",
    "ConvLabPolicy",
    "ObservationPolicy",
    # reference policies
    "HandcraftedPolicy",
    "RandomPolicy",
    "degenerate_policies",
    # language models as policies
    "GenerativePolicy",
    "Decoding",
    "PromptTemplate",
    "OpenAIEndpointPolicy",
    # GP-SARSA (policies.gpsarsa, loaded on first use)
    "GPSarsaPolicy",
    "TrainingConfig",
    "TrainingResult",
    "train",
    "load_checkpoint",
    "list_checkpoints",
    # the simulated world a policy runs in (policies.sim)
    "run_dialogues",
    "simulated_contexts",
    "SimulationSettings",
    "SummaryPolicyAdapter",
    "UserSimulatorConfig",
    "TemplateNLG",
]

#: The names of the face that live in policies.gpsarsa, loaded when one is first used.
_GPSARSA = frozenset(("GPSarsaPolicy", "TrainingConfig", "TrainingResult", "train", "load_checkpoint", "list_checkpoints"))


def __getattr__(name: str) -> Any:
    if name in _GPSARSA:
        return getattr(importlib.import_module("policies.gpsarsa"), name)
    raise AttributeError(f"module 'policies' has no attribute {name!r}")
