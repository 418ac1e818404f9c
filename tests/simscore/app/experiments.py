"""The app tests' experiment configurations (their finished runs: ``conftest.py``)."""

from __future__ import annotations

import dataclasses

from policies.gpsarsa.training import TrainingConfig
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.sections import HeldOutConfig

#: Two reward models x two seeds, 60 dialogues, the action measures.
TINY = ExperimentConfig(
    name="tiny",
    seeds=(1, 2),
    training=TrainingConfig(dialogues=60, every=30, eval_dialogues=10),
    collect_dialogues=2,
    measures=("tmr", "dmr", "cer", "cmr"),
    n_resamples=100,
)

#: :data:`TINY` with held-out users (its trainings, C_col and responses are TINY's).
HELD = dataclasses.replace(TINY, held_out=HeldOutConfig(dialogues=2, graph_dialogues=4, n_permutations=200))
