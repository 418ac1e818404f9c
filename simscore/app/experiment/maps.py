"""Who behaves like whom: the experiment's behaviour maps (``[map]``, application layer).

:func:`map_tables` makes, from the responses :mod:`simscore.app.experiment.analyses` read,

* on each context set the **map of the final policies**: every run of every reward model at
  the final checkpoint, the handcrafted policy (answering the same contexts here, greedy and
  deterministic) and the random one, with every measure scored; the named groups asked about
  are each reward model's seeds and all trained runs, so the report can say whether the seeds
  of one reward model form a cluster apart from the other's (the paper's finding 5: reward
  models differ about as much as seeds do), with the bootstrap support of each;
* on C_col the **map of each run's checkpoints** (the action measures; at most the last
  :data:`~simscore.analysis.behaviour_map.MAX_POLICIES`) and, from it, where the run's
  **plateau** starts: of the clusters of the checkpoints' clustering that hold the final
  checkpoint and only the checkpoints from some k to the final one, the one that lives longest
  in the dendrogram (:func:`plateau`), with its support.

Every interval resamples the dialogues on C_col (as the experiment's other tables) and the
contexts on C_gen. The maps are saved as the long tables of
:func:`simscore.analysis.behaviour_map.long_tables`, with the columns ``context_set`` and
``map`` (``"final policies"``, or ``"checkpoints of <run>"``) first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from simscore.analysis.behaviour_map import LONG_TABLES, MAX_POLICIES, BehaviourMap, behaviour_map, long_tables
from simscore.app.experiment.folder import COLLECTED, ExperimentFolder
from simscore.measures import Measure
from simscore.responses import Responses
from simscore.stats import Bootstrap
from simscore.stats.clusters import dialogue_clusters

__all__ = ["FINAL_MAP", "PLATEAU_COLUMNS", "map_tables", "plateau", "final_policies", "handcrafted_responses"]

logger = logging.getLogger("simscore.app.experiment")

#: The ``map`` label of the final policies' map.
FINAL_MAP = "final policies"

#: Columns of the ``checkpoint_plateau`` table.
PLATEAU_COLUMNS = ("context_set", "reward", "run", "measure", "checkpoints", "first", "last", "start", "size",
                   "height", "support")


class SetResponses(Protocol):
    """What a map reads of one context set (:class:`simscore.app.experiment.analyses.SetResponses`,
    which imports this module: named here by its shape)."""

    @property
    def name(self) -> str: ...
    @property
    def metadata(self) -> pd.DataFrame: ...
    @property
    def runs(self) -> tuple[Any, ...]: ...  # RunResponses: .run (RunId), .checkpoints (int -> Responses), .final
    @property
    def random(self) -> Responses: ...

    def finals_by_reward(self) -> dict[str, dict[str, Responses]]: ...


def handcrafted_responses(name: str, folder: ExperimentFolder) -> Responses:
    """The handcrafted policy's responses to context set ``name`` (greedy and deterministic: made, not saved)."""
    from contexts import ContextSet
    from policies import HandcraftedPolicy, SummaryPolicyAdapter
    from simscore.policy import run_policy

    contexts = ContextSet.read_jsonl(folder.contexts(name))
    return run_policy(SummaryPolicyAdapter(HandcraftedPolicy(), name="handcrafted"), contexts, name="handcrafted")


def final_policies(data: SetResponses, handcrafted: Responses) -> dict[str, Responses]:
    """The final checkpoint of every run, the handcrafted policy and the random one on ``data``'s context set."""
    return {**{r.run.name: r.final for r in data.runs}, "handcrafted": handcrafted, "random": data.random}


def _units(data: SetResponses, ids: Sequence[str]) -> tuple[list[Any] | None, str]:
    """Each shared context's dialogue (C_col), or None where each context is a unit of its own (C_gen)."""
    columns = dialogue_clusters(data.metadata)
    if columns is None:
        return None, "contexts"
    return ([tuple(row) for row in data.metadata.loc[list(ids), list(columns)].itertuples(index=False, name=None)],
            "dialogues")


def _shared(responses: Mapping[str, Responses]) -> list[str]:
    sides = list(responses.values())
    return [i for i in sides[0].ids if all(i in side for side in sides[1:])]


def _map(responses: Mapping[str, Responses], measures: Sequence[Measure], data: SetResponses, bootstrap: Bootstrap,
         groups: Mapping[str, Sequence[str]] | None = None) -> BehaviourMap:
    clusters, unit = _units(data, _shared(responses))
    return behaviour_map(responses, list(measures), clusters=clusters, unit=unit, bootstrap=bootstrap, groups=groups)


def _groups(data: SetResponses) -> dict[str, list[str]]:
    """The groups the report asks about: each reward model's seeds (two or more) and all trained runs."""
    by_reward = {reward: list(runs) for reward, runs in data.finals_by_reward().items()}
    groups = {f"{reward} seeds": names for reward, names in by_reward.items() if len(names) > 1}
    trained = [name for names in by_reward.values() for name in names]
    if len(by_reward) > 1:
        groups["trained runs"] = trained
    return groups


def plateau(bmap: BehaviourMap, measure: str) -> dict[str, Any]:
    """Where a run's plateau starts, from the map of its checkpoints (policies named by checkpoint, in order).

    The candidates are the clusters of the checkpoints' clustering that hold exactly the
    checkpoints from some ``start`` to the final one (the final checkpoint alone among them),
    short of all of them; the plateau is the one that lives longest in the dendrogram: the
    largest gap between the height at which it forms and the height at which it joins the next
    checkpoint or cluster (ties: the larger). No threshold is involved. ``size``: its
    checkpoints; ``height``: the average distance at which it forms; ``support``: the share of
    resamples whose clustering has it (NaN for the final checkpoint alone).
    """
    names = list(bmap.policies)
    n = len(names)
    tree = bmap.linkage[measure]
    members: list[frozenset[int]] = [frozenset([k]) for k in range(n)]
    formed = [0.0] * n  # the height at which each node forms (a checkpoint: 0)
    joined = [float("nan")] * (2 * n - 1)  # the height at which each node joins its parent
    for left, right, height, _size in tree.tolist():
        members.append(members[int(left)] | members[int(right)])
        formed.append(float(height))
        joined[int(left)] = joined[int(right)] = float(height)
    support = bmap.clusters[measure]["support"].to_numpy()
    best: tuple[float, int, int] | None = None  # lifetime, size, node
    for node, group in enumerate(members[:-1]):  # the root is no candidate
        if group == frozenset(range(n - len(group), n)):
            key = (joined[node] - formed[node], len(group), node)
            best = key if best is None or key[:2] > best[:2] else best
    assert best is not None  # the final checkpoint alone is always a candidate
    _, size, node = best
    return {"checkpoints": n, "first": int(names[0]), "last": int(names[-1]), "start": int(names[n - size]),
            "size": size, "height": formed[node], "support": float(support[node - n]) if node >= n else float("nan")}


def map_tables(measures: Sequence[Measure], sets: Sequence[SetResponses], handcrafted: Mapping[str, Responses], *,
               bootstrap: Bootstrap, checkpoints: bool = True) -> dict[str, pd.DataFrame]:
    """The maps' tables (:data:`~simscore.analysis.behaviour_map.LONG_TABLES` and ``checkpoint_plateau``) of
    every context set's responses, with the handcrafted policy's (:func:`handcrafted_responses`, by set)."""
    t0 = time.perf_counter()
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in LONG_TABLES}
    rows = []
    action = [m for m in measures if m.level == "action"]
    for data in sets:
        finals = final_policies(data, handcrafted[data.name])
        bmap = _map(finals, measures, data, bootstrap, _groups(data))
        for name, table in long_tables(bmap, context_set=data.name, map=FINAL_MAP).items():
            parts[name].append(table)
        if not (checkpoints and data.name == COLLECTED and action):
            continue
        for run in data.runs:
            kept = list(run.checkpoints)[-MAX_POLICIES:]
            if len(kept) < 3:  # a map needs three policies
                continue
            by_checkpoint = {str(k): run.checkpoints[k] for k in kept}
            steps = _map(by_checkpoint, action, data, bootstrap)
            for name, table in long_tables(steps, context_set=data.name, map=f"checkpoints of {run.run.name}").items():
                parts[name].append(table)
            rows += [{"context_set": data.name, "reward": run.run.reward, "run": run.run.name, "measure": m.name,
                      **plateau(steps, m.name)} for m in action]
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items() if frames}
    tables["checkpoint_plateau"] = pd.DataFrame(rows, columns=list(PLATEAU_COLUMNS)).astype(
        {"support": np.float64, "height": np.float64})
    logger.info("behaviour maps (%d context sets%s): %.1f s", len(sets),
                ", each run's checkpoints on C_col" if rows else "", time.perf_counter() - t0)
    return tables
