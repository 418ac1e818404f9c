"""Reference policies beside the trained ones: the ``policies`` table of an experiment (application layer).

Table 1 gives means; a reader also wants to know what the interaction-quality estimate makes
of good and bad dialogues, and how long they are in this world. :func:`reference_policies`
runs, on the users of every run's final evaluation (the same users as Table 1's last row,
:func:`policies.gpsarsa.evaluation.evaluation_stream`):

* each run's final policy, as evaluated (sampling with the evaluation scale);
* the handcrafted policy (:class:`policies.handcrafted.HandcraftedPolicy`);
* the random policy (:class:`policies.handcrafted.RandomPolicy`, seeded with ``[chance]
  random_seed``): the chance level,

and reports, per policy, the users met, task success, the mean IQ, the share of dialogues in
each IQ class 1–5, and the mean length (turns as PyDial counts them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from simscore.app.experiment.folder import ExperimentFolder
    from simscore.app.experiment.steps import ReferenceSettings

__all__ = ["POLICIES_COLUMNS", "reference_policies"]

#: Columns of the ``policies`` table.
POLICIES_COLUMNS: tuple[str, ...] = (
    "policy", "reward", "n", "success_rate", "avg_iq", "avg_length", "iq_1", "iq_2", "iq_3", "iq_4", "iq_5",
)


def _row(policy: str, reward: str, success: np.ndarray, iq: np.ndarray, turns: np.ndarray) -> dict[str, object]:
    classes = np.clip(np.floor(iq + 0.5), 1, 5).astype(int)
    row: dict[str, object] = {
        "policy": policy, "reward": reward, "n": int(len(iq)), "success_rate": float(success.mean()),
        "avg_iq": float(iq.mean()), "avg_length": float(turns.mean()),
    }
    for k in range(1, 6):
        row[f"iq_{k}"] = float((classes == k).mean())
    return row


def reference_policies(settings: ReferenceSettings, folder: ExperimentFolder, *, progress: bool = False
                       ) -> pd.DataFrame:
    """The ``policies`` table (see the module docstring): one row per run's final policy, then
    the handcrafted and the random policy on all those users together; ``progress`` shows how
    many runs' users are done (:mod:`simscore.progress`)."""
    from policies import run_dialogues
    from policies.gpsarsa.evaluation import evaluation_stream
    from policies.gpsarsa.training import list_checkpoints, load_checkpoint
    from policies.handcrafted import HandcraftedPolicy, RandomPolicy
    from simscore.progress import track

    world = settings.simulation
    rows = []
    fields = ("success", "iq", "turns")
    parts: dict[str, dict[str, list[np.ndarray]]] = {name: {f: [] for f in fields} for name in ("handcrafted", "random")}
    for run in track(settings.runs, "final, handcrafted and random policies", unit="runs", enabled=progress):
        last = list_checkpoints(folder.run_dir(run))[-1].dialogues
        stream = evaluation_stream(settings.eval_seed, last)
        policy = load_checkpoint(folder.run_dir(run))
        policy.sampling_scale = settings.eval_scale
        result = run_dialogues(policy, settings.eval_dialogues, seed=run.seed, stream=stream, settings=world)
        rows.append(_row(run.name, run.reward, result.success, result.iq, result.turns))
        for name, other in (("handcrafted", HandcraftedPolicy()), ("random", RandomPolicy(seed=settings.random_seed))):
            seen = run_dialogues(other, settings.eval_dialogues, seed=run.seed, stream=stream, settings=world)
            for field in fields:
                parts[name][field].append(getattr(seen, field))
    for name in parts:
        rows.append(_row(name, "", *(np.concatenate(parts[name][f]) for f in fields)))
    return pd.DataFrame(rows, columns=list(POLICIES_COLUMNS))
