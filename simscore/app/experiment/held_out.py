"""Held-out users: the experiment's final policies on dialogues whose flows they may never have met.

Optional ``[held_out]`` table of an experiment (:class:`HeldOutConfig`); when it is set, the
experiment (:func:`simscore.app.runner.run_experiment`) also

1. simulates ``graph_dialogues`` dialogues of each run's final policy with the **training**
   users (``held_out/graph/<run>.jsonl``) and builds one conversation-flow graph from all runs'
   dialogues (``held_out/flow_graph.json``, :class:`contexts.flows.FlowGraph`): the flows the
   policies meet with the users they were trained on;
2. simulates ``dialogues`` dialogues of each final policy with the **held-out** users
   (``held_out/users/<run>.jsonl``): the training users' configuration with the
   ``[held_out.user]`` overrides (:class:`~policies.sim.userconfig.UserSimulatorConfig` fields);
3. collects their decision contexts as the context set ``held`` (``contexts/held.jsonl``), each
   labelled against the graph (:func:`contexts.flows.labels.label_contexts`: ``flow`` and
   ``flow_prefix`` seen or unseen, the complex-pattern tags);
4. has the final checkpoint of every run, and the random policy, answer them
   (``responses/held/``), and scores seeds and reward models per flow stratum
   (:mod:`simscore.app.experiment.flow_strata`).

Both simulations sample the policies as C_col's dialogues do (``[contexts] collect_scale``) and
draw their users from streams of their own: run ``<reward>-<seed>`` meets the users
``(seed, CRC-32 of <reward>, 0)`` (graph) and ``(…, 1)`` (held-out) of its training seed
(:func:`held_out_stream`); three keys, so no training, evaluation or C_col user
(two keys or none) is met again.

Every piece is written atomically, each on its own, and records what made it; a piece made
with other settings stops the run, naming the setting (:func:`check_piece`).

**The default held-out population** (:data:`HELD_OUT_USERS`) was chosen once, before any run,
by one argument: FRAPI's unseen flows share "complex patterns" (several slots in one turn, goal
changes, repetition, clarification), and PyDial's Environment 1 users already show each of them
with some probability; the held-out users show the same behaviours *more often*. Combined
informs (``inform_combination``: several slots in one turn) from 0.2-0.7 to 0.6-0.9; goal
changes after the first offer (``change_goal_after_first_offer``) from 0.01-0.3 to 0.3-0.5;
confirmation questions (``inform_to_confirm``, ``confirm_random_constraint``) from 0.01-0.2 and
0.01-0.3 to 0.3-0.5 each. Everything else is the training users'. The values were not tuned
to make any result come out one way.
"""

from __future__ import annotations

import dataclasses
import logging
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from simscore.app.experiment.folder import HELD_OUT, ExperimentFolder, RunId
from simscore.app.experiment.provenance import check_piece
from simscore.app.experiment.sections import held_out_users

if TYPE_CHECKING:
    from contexts import ContextSet
    from contexts.flows import FlowGraph
    from simscore.app.experiment.steps import HeldOutSettings

__all__ = ["held_out_stream", "build_held_out"]

logger = logging.getLogger("simscore.app.experiment")

#: The last key of the user streams: the graph's dialogues (training users) and the held-out users'.
GRAPH_STREAM, USERS_STREAM = 0, 1


def held_out_stream(seed: int, reward: str, which: int) -> tuple[int, int, int]:
    """The user stream of a run's flow-graph (``which=0``) or held-out (``which=1``) dialogues.

    >>> held_out_stream(3_000_017, "ts", 1)
    (3000017, 3280375435, 1)
    """
    return (seed, zlib.crc32(reward.encode("utf-8")), which)


# ----------------------------------------------------------------------------- collection


def _table(value: Any) -> Mapping[str, Any]:
    """A recorded table, or an empty one where a file holds something else (its check then fails, naming it)."""
    return value if isinstance(value, Mapping) else {}


def _simulate(step: HeldOutSettings, folder: ExperimentFolder, run: RunId, *, which: int) -> None:
    """Write (or check) one run's graph or held-out dialogue log."""
    from policies import run_dialogues
    from policies.gpsarsa.training import list_checkpoints, load_checkpoint

    held = step.held_out
    graph = which == GRAPH_STREAM
    path = folder.graph_log(run) if graph else folder.held_out_log(run)
    n = held.graph_dialogues if graph else held.dialogues
    settings = step.simulation
    if not graph:
        settings = dataclasses.replace(settings, user=held_out_users(held, settings.user))
    checkpoint = list_checkpoints(folder.run_dir(run))[-1].dialogues
    count = "[held_out] graph_dialogues" if graph else "[held_out] dialogues"
    wanted = {count: n, "[held_out] seed": held.seed, "the run's own users (seed)": run.seed,
              "[contexts] collect_scale": step.scale, "checkpoint": checkpoint,
              "[held_out.user] (the users)" if not graph else "[training.user] (the users)": settings.user.to_json()}
    if path.exists():
        from contexts.dialogue_log import read_dialogue_log

        header, dialogues = read_dialogue_log(path)
        source = _table(header.get("source"))
        made_by = _table(source.get("policy_provenance"))
        recorded = dict(zip(wanted, (len(dialogues), source.get("held_out_seed"), source.get("seed"),
                                     source.get("sampling_scale"), made_by.get("checkpoint"), source.get("users"))))
        check_piece(folder, path, recorded, wanted)
        return
    policy = load_checkpoint(folder.run_dir(run))
    policy.sampling_scale = step.scale
    run_dialogues(policy, n, seed=run.seed, stream=held_out_stream(held.seed, run.reward, which), log_path=path,
                  settings=settings, log_source={
                      "name": run.name, "reward": run.reward,
                      "purpose": "flow graph (training users)" if graph else "held-out users",
                      "held_out_seed": held.seed, "sampling_scale": step.scale,
                      "users": settings.user.to_json()})
    logger.info("held out: %s (%d dialogues)", folder.link(path), n)


def _graph(step: HeldOutSettings, folder: ExperimentFolder) -> FlowGraph:
    """The flow graph of all runs' graph dialogues, built once and checked when reused."""
    from contexts.flows import FlowGraph
    from contexts.flows.dialogues import read_flow_dialogues

    held = step.held_out
    wanted = {"runs": [run.name for run in step.runs], "dialogues_per_run": held.graph_dialogues,
              "held_out_seed": held.seed, "sampling_scale": step.scale,
              "domain_agnostic": held.domain_agnostic}
    path = folder.flow_graph
    if path.exists():
        graph = FlowGraph.load(path)
        recorded = {**graph.built, "domain_agnostic": graph.domain_agnostic}
        check_piece(folder, path, {key: recorded.get(key) for key in wanted}, wanted)
        return graph
    dialogues = [d for run in step.runs for d in read_flow_dialogues(folder.graph_log(run))]
    graph = FlowGraph.from_dialogues(dialogues, domain_agnostic=held.domain_agnostic,
                                     built={k: v for k, v in wanted.items() if k != "domain_agnostic"})
    graph.save(path)
    logger.info("held out: flow graph %s (%d nodes, %d edges, %d dialogues)", folder.link(path), graph.n_nodes,
                graph.n_edges, graph.dialogues)
    return graph


def _held_set(step: HeldOutSettings, folder: ExperimentFolder, graph: FlowGraph,
              decisions: Callable[[ContextSet], ContextSet]) -> None:
    """The context set ``held``: the held-out dialogues' decision contexts, labelled against ``graph``."""
    from contexts import ContextSet, collect_contexts
    from contexts.flows.dialogues import read_flow_dialogues
    from contexts.flows.labels import label_contexts

    held = step.held_out
    path = folder.contexts(HELD_OUT)
    wanted = {"sources": [[run.name, held.seed, step.scale, held.dialogues] for run in step.runs],
              "graph": [graph.n_nodes, graph.n_edges, graph.dialogues, graph.abstraction]}
    if path.exists():
        built = ContextSet.read_jsonl(path, verify_hash=False).built
        sources = [[s.get("name"), (s.get("provenance") or {}).get("held_out_seed"),
                    (s.get("provenance") or {}).get("sampling_scale"), s.get("dialogues_used")]
                   for s in built.get("sources") or () if isinstance(s, Mapping)]
        labels = _table(built.get("flow_labels"))
        facts = [labels.get(k) for k in ("nodes", "edges", "training_dialogues", "abstraction")]
        check_piece(folder, path, {"sources": sources, "graph": facts}, wanted)
        return
    logs = [folder.held_out_log(run) for run in step.runs]
    contexts = decisions(collect_contexts(logs, name="C_held"))
    dialogues = [d for log in logs for d in read_flow_dialogues(log)]
    label_contexts(contexts, graph, dialogues).to_jsonl(path)
    logger.info("held out: %s", folder.link(path))


def build_held_out(step: HeldOutSettings, folder: ExperimentFolder,
                   decisions: Callable[[ContextSet], ContextSet]) -> None:
    """Make (or check) every held-out piece in order (see the module docstring); ``decisions`` keeps C_col's
    decision points of a collected set (it drops the fixed greeting)."""
    for run in step.runs:
        _simulate(step, folder, run, which=GRAPH_STREAM)
    graph = _graph(step, folder)
    for run in step.runs:
        _simulate(step, folder, run, which=USERS_STREAM)
    _held_set(step, folder, graph, decisions)


def final_checkpoints(folder: ExperimentFolder, runs: Sequence[RunId]) -> dict[RunId, int]:
    """Each run's final checkpoint (the only one that answers the held-out set)."""
    from policies.gpsarsa.training import list_checkpoints

    return {run: list_checkpoints(folder.run_dir(run))[-1].dialogues for run in runs}
