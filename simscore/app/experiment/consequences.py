"""Does the difference matter? The experiment's ``consequences`` table (application layer).

The similarity tables say how often two policies act differently on C_col; this step says
whether those differences change how the dialogue ends. Every C_col context is a turn of a
simulated dialogue whose user can be rebuilt (:mod:`policies.sim.replay`), so it is continued
from that turn, over ``[consequences] continuations`` (K) user continuations with common random
numbers, (a) with the comparison's baseline A, (b) with its candidate B, and (c) with A's
action at that turn and B afterwards; :func:`simscore.outcomes.flips.flip_decomposition` then gives,
separately where the two acted differently at the context (``actions = "differ"``) and, as the
control, where they acted alike (``"agree"``), the share of continuations whose outcome changed
(``outcome_changed``: 1 − benign churn; success, turns, IQ or reward), the negative and positive
flip rates of task success, the mean differences of reward, turns and IQ, with intervals that
resample dialogues, and McNemar's exact test; for the whole difference (``effect = "total"``:
(a) → (b)), for the one differing action alone (``"action"``: (c) → (b)) and for what B does
afterwards (``"after"``: (a) → (c)).

**Which pairs** (baseline → candidate; the final checkpoint is the last one of a run):

- ``convergence``: per run, the previous checkpoint → the final one (the late convergence
  pair: the paper's Table 2 at its last row);
- ``seeds``: per reward model, every pair of runs at the final checkpoint (run ``i`` → run
  ``j``, ``i < j``);
- ``reward models``: every run of the first reward model → every run of the second, at the
  final checkpoint (the cross pairs of the paper's Table 3);
- ``random``: per run, its final policy → the seeded random policy (``[chance] random_seed``):
  the sanity end, where nearly every action differs and many outcomes must change.

**Which contexts**: C_col of the pair's reward model(s) — ``col-<reward>`` for a pair within one
reward model, ``col`` (both) for the cross pairs — each context rebuilt from the final policy that
collected it (with ``[contexts] collect_scale``, as it was collected). Every context of the set is
replayed: the ``differ`` rows answer the question, the ``agree`` rows are the control (what the
continuations change when the two policies did the same at the context). A row ``pooled`` per
comparison and group pools the pairs' continuations (intervals resample dialogues across them).

**Policies in the continuations** act greedily, as they do on the context sets the similarity
tables score (the random policy draws its actions from each continuation's own generator). The
reward difference is the pair's own reward model's return (R_TS or R_IQ); for the cross pairs it
is R_TS (task success, the yardstick both share; the IQ difference has its own column).

**Seeds**: continuation ``k`` of a context is a function of ``[consequences] seed``, the context's
id and ``k`` alone (:func:`policies.sim.replay.continuation_seed`); intervals use ``[scoring]``'s
bootstrap. No global random state is read or written.

**Cost**: a policy's continuation of a context does not depend on the policy it is compared
with, so each policy (the final and the previous checkpoint of every run, the random policy)
plays each context it meets once (:meth:`policies.sim.replay.BranchPoints.play`), and only arm
(c) is played per pair, only where the two acted differently
(:meth:`~policies.sim.replay.BranchPoints.swap`). The work is one job per run's C_col dialogues
(:func:`simscore.parallel.run_jobs`: local processes or a Dask cluster).

The runner (:func:`simscore.app.runner.run_experiment`) keeps the table in ``cache/consequences/``
and makes it again only when what it is made from changes (:func:`input_files`, the settings, the
package versions: :class:`~simscore.app.experiment.provenance.MadeFrom`); the table ``consequences``
is saved with the others and rebuilt into the report by ``simscore report``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore.analysis import SCHEMAS
from simscore.app.experiment.folder import COLLECTED, ExperimentFolder, RunId
from simscore.app.experiment.notes import undefined_values_logged

if TYPE_CHECKING:
    from contexts import ContextSet
    from policies.sim.replay import ArmOutcomes, Replays
    from simscore.app.experiment.steps import ConsequencesSettings
    from simscore.outcomes.flips import FlipDecomposition

__all__ = ["CONSEQUENCES_COLUMNS", "COMPARISONS", "POOLED", "Arm", "Pair", "comparison_pairs", "input_files",
           "consequences_table"]

logger = logging.getLogger("simscore.app.experiment")

#: Columns of the ``consequences`` table.
CONSEQUENCES_COLUMNS: tuple[str, ...] = SCHEMAS["consequences"]
#: The comparisons, in table order.
COMPARISONS = ("convergence", "seeds", "reward models", "random")
#: The value of ``pair`` in the rows that pool a comparison's pairs of one group.
POOLED = "pooled"


@dataclass(frozen=True, order=True)
class Arm:
    """One policy of a comparison: a run's checkpoint, or the random policy (``run`` None)."""

    run: RunId | None
    checkpoint: int | None

    @property
    def name(self) -> str:
        """``<run>@<checkpoint>`` (as the responses name it), or ``random``.

        >>> Arm(RunId("ts", 1), 40000).name, Arm(None, None).name
        ('ts-1@40000', 'random')
        """
        return "random" if self.run is None else f"{self.run.name}@{self.checkpoint}"


@dataclass(frozen=True)
class Pair:
    """One comparison: baseline → candidate on a context set.

    Attributes
    ----------
    comparison : str
        One of :data:`COMPARISONS`.
    group : str
        The reward model (``ts``), or both for the cross pairs (``ts-iq``).
    context_set : str
        ``col-<reward>`` or ``col``.
    reward : str
        Whose return the reward difference is: ``ts`` or ``iq``.
    baseline, candidate : Arm
    """

    comparison: str
    group: str
    context_set: str
    reward: str
    baseline: Arm
    candidate: Arm

    @property
    def label(self) -> str:
        """``<baseline> -> <candidate>``."""
        return f"{self.baseline.name} -> {self.candidate.name}"

    def covers(self, run: RunId) -> bool:
        """Whether the pair's context set holds the contexts collected by ``run``."""
        return self.context_set == COLLECTED or self.context_set == f"{COLLECTED}-{run.reward}"


def comparison_pairs(runs: Sequence[RunId], checkpoints: Mapping[RunId, Sequence[int]]) -> tuple[Pair, ...]:
    """Every pair of the table, in table order (see the module docstring).

    Parameters
    ----------
    runs : sequence of RunId
        Rewards first, as the experiment lists them.
    checkpoints : mapping of RunId to sequence of int
        Each run's checkpoints, ascending (a run with one has no convergence pair).

    Examples
    --------
    >>> runs = [RunId("ts", 1), RunId("ts", 2), RunId("iq", 1)]
    >>> pairs = comparison_pairs(runs, {run: (500, 1000) for run in runs})
    >>> [(p.comparison, p.label) for p in pairs][3:7]
    [('seeds', 'ts-1@1000 -> ts-2@1000'), ('reward models', 'ts-1@1000 -> iq-1@1000'), \
('reward models', 'ts-2@1000 -> iq-1@1000'), ('random', 'ts-1@1000 -> random')]
    """
    final = {run: Arm(run, checkpoints[run][-1]) for run in runs}
    rewards = list(dict.fromkeys(run.reward for run in runs))
    pairs: list[Pair] = []
    for run in runs:
        if len(checkpoints[run]) > 1:
            pairs.append(Pair("convergence", run.reward, f"{COLLECTED}-{run.reward}", run.reward,
                              Arm(run, checkpoints[run][-2]), final[run]))
    for reward in rewards:
        mine = [run for run in runs if run.reward == reward]
        pairs += [Pair("seeds", reward, f"{COLLECTED}-{reward}", reward, final[a], final[b])
                  for i, a in enumerate(mine) for b in mine[i + 1:]]
    for i, first in enumerate(rewards):
        for second in rewards[i + 1:]:
            pairs += [Pair("reward models", f"{first}-{second}", COLLECTED, "ts", final[a], final[b])
                      for a in runs if a.reward == first for b in runs if b.reward == second]
    pairs += [Pair("random", run.reward, f"{COLLECTED}-{run.reward}", run.reward, final[run], Arm(None, None))
              for run in runs]
    return tuple(pairs)


def _checkpoints(folder: ExperimentFolder, runs: Sequence[RunId]) -> dict[RunId, tuple[int, ...]]:
    from policies.gpsarsa.training import list_checkpoints

    return {run: tuple(c.dialogues for c in list_checkpoints(folder.run_dir(run))) for run in runs}


def input_files(settings: ConsequencesSettings, folder: ExperimentFolder) -> list[Path]:
    """The files the table is made from: C_col (``contexts/col*.jsonl``) and every checkpoint a pair plays."""
    from policies.gpsarsa.training import list_checkpoints
    from simscore.app.experiment.steps import rewards_of

    files = [folder.collected(), *(folder.collected(reward) for reward in rewards_of(settings.runs))]
    for run in settings.runs:
        for checkpoint in list_checkpoints(folder.run_dir(run))[-2:]:
            files += sorted(checkpoint.stem.parent.glob(checkpoint.stem.name + ".*"))
    return [path for path in files if path.is_file()]


# ----------------------------------------------------------------------------- the replays (in workers)


def _policy(folder: ExperimentFolder, arm: Arm, settings: ConsequencesSettings) -> Any:
    """The arm's policy, greedy (a run's checkpoint) or seeded (the random policy)."""
    if arm.run is None:
        from policies.handcrafted import RandomPolicy

        return RandomPolicy(seed=settings.random_seed)
    from policies.gpsarsa.training import load_checkpoint

    return load_checkpoint(folder.run_dir(arm.run), arm.checkpoint)


def _replay_job(folder: ExperimentFolder, settings: ConsequencesSettings, source: RunId,
                pairs: Sequence[Pair]) -> dict[str, Any]:
    """Every arm of ``pairs`` on the C_col contexts that ``source``'s final policy collected.

    Returns the rows (context id, k), each arm's outcomes by name, and each pair's arm (c) by its
    index in ``pairs``.
    """
    from contexts import ContextSet
    from policies.gpsarsa.training import load_checkpoint
    from policies.sim.replay import BranchPoints

    contexts = ContextSet.read_jsonl(folder.collected(), verify_hash=False)
    mine = contexts.filter(lambda c: c.metadata.get("source_name") == source.name, name=f"{COLLECTED}/{source.name}")
    collector = load_checkpoint(folder.run_dir(source))
    collector.sampling_scale = settings.collect_scale
    points = BranchPoints(mine, sources={source.name: collector}, settings=settings.simulation)
    rows = points.rows(settings.continuations)
    arms: dict[str, ArmOutcomes] = {}
    swaps: dict[int, ArmOutcomes] = {}
    for index, pair in enumerate(pairs):
        for arm in (pair.baseline, pair.candidate):
            if arm.name not in arms:
                arms[arm.name] = points.play(_policy(folder, arm, settings), rows, seed=settings.seed, name=arm.name)
        swaps[index] = points.swap(_policy(folder, pair.candidate, settings), rows, arms[pair.baseline.name],
                                   arms[pair.candidate.name], seed=settings.seed, name=pair.candidate.name)
    return {"rows": rows, "arms": arms, "swaps": swaps}


# ----------------------------------------------------------------------------- the table


def _replays(pair: Pair, parts: Sequence[tuple[dict[str, Any], ArmOutcomes]], contexts: ContextSet,
             continuations: int, seed: int) -> Replays:
    """The pair's replays from its sources' jobs (each: the job's result and the pair's arm (c) there), one
    source's rows after the other."""
    from policies.sim.replay import ArmOutcomes, Replays, locate

    rows = [row for part, _ in parts for row in part["rows"]]
    positions = {cid: locate(contexts[cid]) for cid in dict.fromkeys(cid for cid, _ in rows)}
    a = ArmOutcomes.concatenate([part["arms"][pair.baseline.name] for part, _ in parts])
    b = ArmOutcomes.concatenate([part["arms"][pair.candidate.name] for part, _ in parts])
    c = ArmOutcomes.concatenate([swap for _, swap in parts])
    return Replays(names=(pair.baseline.name, pair.candidate.name), seed=seed, continuations=continuations,
                   context_ids=tuple(cid for cid, _ in rows),
                   source_names=tuple(positions[cid].source_name for cid, _ in rows),
                   dialogue_ids=tuple(positions[cid].dialogue_id for cid, _ in rows),
                   turn_index=np.array([positions[cid].turn_index for cid, _ in rows], dtype=np.int64),
                   continuation=np.array([k for _, k in rows], dtype=np.int64), a=a, b=b, c=c)


def _pooled(replays: Sequence[Replays]) -> Replays:
    """The pairs' replays one after the other, as one set of pairs (dialogues are the resampling units)."""
    from policies.sim.replay import ArmOutcomes, Replays

    def joined(name: str) -> Any:
        values = [getattr(r, name) for r in replays]
        return tuple(v for value in values for v in value) if isinstance(values[0], tuple) else np.concatenate(values)

    return Replays(names=("baseline", "candidate"), seed=replays[0].seed, continuations=replays[0].continuations,
                   context_ids=joined("context_ids"), source_names=joined("source_names"),
                   dialogue_ids=joined("dialogue_ids"), turn_index=joined("turn_index"),
                   continuation=joined("continuation"),
                   **{arm: ArmOutcomes.concatenate([getattr(r, arm) for r in replays]) for arm in ("a", "b", "c")})


def _rows(decomposition: FlipDecomposition, replays: Replays, pair: Pair, label: str, n_pairs: int,
          baseline: str, candidate: str) -> list[dict[str, Any]]:
    """The table's rows of one pair (or pooled group): effect × actions."""
    differ = replays.differ
    ids = np.array(replays.context_ids, dtype=object)
    contexts = {"differ": len(set(ids[differ])), "agree": len(set(ids[~differ]))}
    out = []
    for record in decomposition.to_records():
        row: dict[str, Any] = {
            "context_set": pair.context_set, "comparison": pair.comparison, "group": pair.group, "pair": label,
            "n_pairs": n_pairs, "baseline": baseline, "candidate": candidate, "reward": pair.reward,
            "continuations": replays.continuations, "effect": record["comparison"], "actions": record["group"],
            "count": record["pairs"], "contexts": contexts[record["group"]], "dialogues": record["units"],
            "outcome_changed": 1.0 - record["benign_churn_rate"],
            "outcome_changed_low": 1.0 - record["benign_churn_rate_high"],
            "outcome_changed_high": 1.0 - record["benign_churn_rate_low"],
        }
        row.update({key: value for key, value in record.items() if key in CONSEQUENCES_COLUMNS and key not in row})
        out.append(row)
    return out


def consequences_table(settings: ConsequencesSettings, folder: ExperimentFolder, *, n_jobs: int | None = None,
                       scheduler: str | None = None, progress: bool = False) -> pd.DataFrame:
    """The ``consequences`` table (see the module docstring): one row per pair or pooled group, effect and actions.

    Parameters
    ----------
    settings : ConsequencesSettings
    folder : ExperimentFolder
        Holds the runs' checkpoints and C_col (``contexts/col*.jsonl``).
    n_jobs, scheduler
        Where the replays run (:func:`simscore.parallel.run_jobs`: one job per run's C_col dialogues).
    progress : bool
        Show how many runs' contexts are replayed, then how many comparisons are summarised.

    Returns
    -------
    pandas.DataFrame
        :data:`CONSEQUENCES_COLUMNS`; empty without a pair.
    """
    from contexts import ContextSet
    from simscore.parallel import run_jobs
    from simscore.progress import track

    pairs = comparison_pairs(settings.runs, _checkpoints(folder, settings.runs))
    contexts = ContextSet.read_jsonl(folder.collected(), verify_hash=False)
    sources = [run for run in settings.runs if any(pair.covers(run) for pair in pairs)]
    jobs = [(folder, settings, source, [pair for pair in pairs if pair.covers(source)]) for source in sources]
    results = run_jobs(_replay_job, jobs, n_jobs=n_jobs, scheduler=scheduler, desc="consequences: replaying",
                       unit="runs", progress=progress)
    # per source run: its job's result and, for each pair it covers, the index of that pair in the job's list
    parts = {source: (result, {pairs.index(pair): i for i, pair in enumerate(job[3])})
             for source, result, job in zip(sources, results, jobs, strict=True)}
    groups: dict[tuple[str, str], list[tuple[Pair, Replays, list[dict[str, Any]]]]] = {}
    # an empty group (no differing context in a convergence pair) or intervals on one dialogue: NaN in the
    # table, said in the log once per reason with the comparisons it concerns
    with undefined_values_logged("consequences"):
        for index, pair in enumerate(track(pairs, "consequences: flip rates", unit="comparisons", enabled=progress)):
            covered = [(parts[s][0], parts[s][0]["swaps"][parts[s][1][index]]) for s in sources if pair.covers(s)]
            replays = _replays(pair, covered, contexts, settings.continuations, settings.seed)
            decomposition = replays.flips(pair.reward, bootstrap=settings.bootstrap)
            rows = _rows(decomposition, replays, pair, pair.label, 1, pair.baseline.name, pair.candidate.name)
            groups.setdefault((pair.comparison, pair.group), []).append((pair, replays, rows))
        table: list[dict[str, Any]] = []
        for members in groups.values():  # each group's pairs, then their pooled rows
            table += [row for _, _, rows in members for row in rows]
            if len(members) > 1:
                pooled = _pooled([replays for _, replays, _ in members])
                first = members[0][0]
                table += _rows(pooled.flips(first.reward, bootstrap=settings.bootstrap), pooled, first, POOLED,
                               len(members), "", "")
    from simscore.analysis import typed_table

    return typed_table(pd.DataFrame(table, columns=list(CONSEQUENCES_COLUMNS)))
