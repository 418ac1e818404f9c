"""policies.gpsarsa: the GP-SARSA learner, the policy built on it, its training runs and checkpoints.

* :mod:`~policies.gpsarsa.learner` — online sparse GP-SARSA (kernels, GPTD, the compiled
  arithmetic of :mod:`policies.gpsarsa._gpkernels`), with the values it takes and returns in
  :mod:`~policies.gpsarsa.values` and its checkpoint files in :mod:`~policies.gpsarsa.checkpoint`;
* :mod:`~policies.gpsarsa.policy` — :class:`GPSarsaPolicy`, the learner wrapped for a domain
  of the simulated world (:mod:`policies.sim`), with the policy's checkpoint metadata;
* :mod:`~policies.gpsarsa.training` — training runs with checkpoints and evaluations.

This package builds on :mod:`policies.sim`; nothing in the simulated world imports it.

Examples
--------
>>> from policies.gpsarsa import GPSarsaPolicy
>>> from policies.sim import run_dialogues
>>> policy = GPSarsaPolicy(reward="ts", seed=0, training=True)
>>> _ = run_dialogues(policy, 5, seed=0)
>>> policy.dialogues_trained
5
"""

from __future__ import annotations

from policies.gpsarsa.checkpoint import CHECKPOINT_FORMAT, CHECKPOINT_VERSION
from policies.gpsarsa.learner import GPSarsa, compile_kernels
from policies.gpsarsa.policy import GPSarsaPolicy
from policies.gpsarsa.training import (
    EvaluationRecord,
    TrainingConfig,
    TrainingResult,
    evaluate_policy,
    list_checkpoints,
    load_checkpoint,
    read_evaluation,
    train,
)
from policies.gpsarsa.values import GPSarsaConfig, GPSarsaDiagnostics, QEstimate

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "GPSarsa",
    "GPSarsaConfig",
    "GPSarsaDiagnostics",
    "QEstimate",
    "compile_kernels",
    "GPSarsaPolicy",
    "TrainingConfig",
    "TrainingResult",
    "EvaluationRecord",
    "train",
    "evaluate_policy",
    "list_checkpoints",
    "load_checkpoint",
    "read_evaluation",
]
