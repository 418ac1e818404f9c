"""Seeds and reward models per conversation-flow stratum on the held-out set (application layer).

With ``[held_out]`` (:mod:`simscore.app.experiment.held_out`) every run's final checkpoint has answered the
flow-labelled context set ``held``. :func:`flow_strata_tables` compares them, as the main
analyses do at the final checkpoint:

* **seeds**: every pair of runs of one reward model, on the held contexts collected from that
  reward model's runs (as the seeds table on C_col);
* **reward models**: every run of one reward model against every run of another, on the
  whole set (as the reward-models table);
* **chance**: the random policy against each final run, on the whole set (the floor);

and stratifies each comparison by ``flow_prefix`` and ``flow`` (seen or unseen) and by every
complex-pattern tag (:data:`STRATA`) with :meth:`simscore.comparison.Comparison.by_stratum`; the
rows ``pair = "pooled"`` stratify the pairs of one group together
(:func:`simscore.stats.strata.stratify` of their per-context scores). Every interval resamples whole
dialogues, and every test moves whole dialogues (``cluster = "dialogue_id"``: the held-out
dialogue ids name their run's stream, so they are distinct across runs, and the pairs of one
group that score the same dialogue stay in one unit). A stratification whose column has a single
value on the set (e.g. no dialogue left the graph) is left out.

Tables (:data:`STRATA_COLUMNS`, :data:`TESTS_COLUMNS`, :data:`GRAPH_COLUMNS`):
``flow_strata`` (mean, interval, contexts and dialogues per stratum), ``flow_strata_tests``
(difference between two strata, its interval and the two-sided permutation test, the p-value
also as text to the precision the test allows: :func:`simscore.stats.strata.format_p_value`) and
``flow_graph`` (one row: the graph and the held-out set's shares of unseen flows and patterns).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from simscore.analysis import SCHEMAS
from simscore.app.experiment.folder import HELD_OUT, ExperimentFolder, RunId
from simscore.app.experiment.notes import undefined_values_logged
from simscore.comparison import Comparison, compare
from simscore.measures import Measure
from simscore.progress import Progress
from simscore.responses import Responses
from simscore.stats import Bootstrap
from simscore.stats.strata import MAX_STRATA, StratifiedComparison, format_p_value, stratify

if TYPE_CHECKING:
    from simscore.app.experiment.steps import HeldOutSettings

__all__ = ["STRATA", "STRATA_COLUMNS", "TESTS_COLUMNS", "GRAPH_COLUMNS", "PairGroup", "held_out_comparisons",
           "held_out_responses", "prepare_texts", "flow_strata_tables"]

logger = logging.getLogger("simscore.app.experiment")

#: The metadata columns each comparison is stratified by, in table order.
STRATA: tuple[str, ...] = ("flow_prefix", "flow", "pattern_multi_slot", "pattern_repeat", "pattern_clarify",
                           "pattern_goal_change")
#: The unit of every interval and test: a held-out dialogue.
CLUSTER = "dialogue_id"
#: Columns of the ``flow_strata`` table (``dialogues``: dialogues with a scored context in the stratum).
STRATA_COLUMNS: tuple[str, ...] = SCHEMAS["flow_strata"]
#: Columns of the ``flow_strata_tests`` table (``difference`` = mean of ``a`` − mean of ``b``).
TESTS_COLUMNS: tuple[str, ...] = SCHEMAS["flow_strata_tests"]
#: Columns of the ``flow_graph`` table, and ``pattern_<name>`` / ``pattern_<name>_unseen`` per pattern.
GRAPH_COLUMNS: tuple[str, ...] = (
    "abstraction", "nodes", "edges", "graph_dialogues", "graph_turn_pairs", "dialogues", "unseen_dialogues",
    "unseen_dialogue_share", "contexts", "unseen_contexts", "unseen_context_share", "unseen_prefix_contexts",
    "unseen_prefix_share",
)


@dataclass(frozen=True)
class PairGroup:
    """The compared pairs of one group at the final checkpoint.

    Attributes
    ----------
    comparison : str
        ``seeds``, ``reward models`` or ``chance``.
    group : str
        The reward model (seeds, chance) or the two (``ts-iq``).
    pairs : tuple of (str, str, Comparison)
        Each pair's run names and its comparison (made with the held set's metadata).
    """

    comparison: str
    group: str
    pairs: tuple[tuple[str, str, Comparison], ...]


def prepare_texts(measures: Sequence[Measure], responses: Sequence[Responses]) -> None:
    """Embed the held-out responses' texts once (as the main scoring does for its sets), by themselves: the
    texts not embedded yet make their own batches, whose rounding USE's embeddings depend on (on some BLAS
    kernels, by up to about 1e-7)."""
    texts = {t for r in responses for t in r.texts() if t is not None}
    for measure in measures:
        if measure.level == "text" and hasattr(measure, "prepare"):
            measure.prepare(texts)


def held_out_responses(settings: HeldOutSettings, folder: ExperimentFolder) -> tuple[dict[RunId, Responses], Responses]:
    """The held set's responses: each run's final checkpoint's, and the random policy's."""
    from simscore.app.experiment.held_out import final_checkpoints

    finals = final_checkpoints(folder, settings.runs)
    answers = {run: Responses.read_jsonl(folder.responses(HELD_OUT, run, finals[run])) for run in settings.runs}
    return answers, Responses.read_jsonl(folder.random_responses(HELD_OUT))


def held_out_comparisons(settings: HeldOutSettings, measures: Sequence[Measure], folder: ExperimentFolder
                         ) -> tuple[list[PairGroup], pd.DataFrame]:
    """Every compared pair on the held set (see the module docstring) and the set's metadata frame."""
    from contexts import ContextSet

    metadata = ContextSet.read_jsonl(folder.contexts(HELD_OUT)).metadata_frame()
    answers, random = held_out_responses(settings, folder)
    prepare_texts(measures, [*answers.values(), random])

    def pair(a: Responses, b: Responses, ids: Sequence[str] | None = None) -> Comparison:
        if ids is not None:
            a, b = a.subset(ids), b.subset(ids)
        return compare(a, b, list(measures), metadata=metadata, bootstrap=Bootstrap(n_resamples=0), progress=False)

    by_reward: dict[str, list[RunId]] = {}
    for run in settings.runs:
        by_reward.setdefault(run.reward, []).append(run)
    groups = []
    for reward, runs in by_reward.items():
        if len(runs) < 2:
            continue
        names = {run.name for run in runs}
        ids = [i for i, source in zip(metadata.index, metadata["source_name"], strict=True) if source in names]
        groups.append(PairGroup("seeds", reward, tuple((a.name, b.name, pair(answers[a], answers[b], ids))
                                                       for a, b in itertools.combinations(runs, 2))))
    for reward_a, reward_b in itertools.combinations(by_reward, 2):
        groups.append(PairGroup("reward models", f"{reward_a}-{reward_b}", tuple(
            (a.name, b.name, pair(answers[a], answers[b])) for a in by_reward[reward_a] for b in by_reward[reward_b])))
    for reward, runs in by_reward.items():
        groups.append(PairGroup("chance", reward, tuple(("random", run.name, pair(random, answers[run]))
                                                        for run in runs)))
    return groups, metadata


def _stratified(scores: Comparison | pd.DataFrame, by: str, measures: Sequence[str], settings: HeldOutSettings
                ) -> StratifiedComparison:
    bootstrap = settings.bootstrap
    options: dict[str, Any] = {"cluster": CLUSTER, "n_resamples": bootstrap.n_resamples,
                               "confidence": bootstrap.confidence, "n_permutations": settings.held_out.n_permutations,
                               "seed": bootstrap.seed}
    if isinstance(scores, Comparison):
        return scores.by_stratum(by, **options)
    return stratify(scores, by, measures=list(measures), **options)


def _rows(result: StratifiedComparison, keys: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    strata = [{**keys, "stratum": stratum, "measure": measure, "mean": row["mean"], "ci_low": row["ci_low"],
               "ci_high": row["ci_high"], "count": int(row["count"]), "missing": int(row["missing"]),
               "dialogues": int(row["units"])}
              for (measure, stratum), row in result.table.iterrows()]
    tests = [{**keys, "a": a, "b": b, "measure": measure, "difference": row["difference"],
              "difference_low": row["ci_low"], "difference_high": row["ci_high"], "p_value": row["p_value"],
              "exact": bool(row["exact"]),
              "n_permutations": int(row["n_permutations"]),
              "p": format_p_value(float(row["p_value"]), exact=bool(row["exact"]),
                                  n_permutations=int(row["n_permutations"])),
              "n_a": int(row["n_a"]), "n_b": int(row["n_b"])}
             for (measure, a, b), row in result.tests.iterrows()]
    return strata, tests


def _graph_row(folder: ExperimentFolder) -> dict[str, Any]:
    from contexts import ContextSet
    from contexts.flows import FlowGraph
    from contexts.flows.labels import flow_summary

    graph = FlowGraph.load(folder.flow_graph)
    summary = flow_summary(ContextSet.read_jsonl(folder.contexts(HELD_OUT)), graph)
    row: dict[str, Any] = {
        "abstraction": graph.abstraction, "nodes": graph.n_nodes, "edges": graph.n_edges,
        "graph_dialogues": graph.dialogues, "graph_turn_pairs": graph.turn_pairs, "dialogues": summary.dialogues,
        "unseen_dialogues": summary.unseen_dialogues, "unseen_dialogue_share": summary.unseen_dialogue_share,
        "contexts": summary.contexts, "unseen_contexts": summary.unseen_contexts,
        "unseen_context_share": summary.unseen_context_share,
        "unseen_prefix_contexts": summary.unseen_prefix_contexts, "unseen_prefix_share": summary.unseen_prefix_share,
    }
    for name, counts in summary.patterns.items():
        row[f"pattern_{name}"] = counts["contexts"]
        row[f"pattern_{name}_unseen"] = counts["unseen"]
    return row


def flow_strata_tables(settings: HeldOutSettings, measures: Sequence[Measure], folder: ExperimentFolder,
                       progress: bool = False) -> dict[str, pd.DataFrame]:
    """The tables ``flow_strata``, ``flow_strata_tests`` and ``flow_graph`` (see the module docstring).

    ``progress``: show how many stratified comparisons are done (:mod:`simscore.progress`; each
    runs its permutation tests).
    """
    from simscore.app.experiment.held_out import final_checkpoints

    groups, metadata = held_out_comparisons(settings, measures, folder)
    checkpoint = min(final_checkpoints(folder, settings.runs).values())
    names = [m.name for m in measures]
    usable = [by for by in STRATA if 2 <= metadata[by].dropna().astype(str).nunique() <= MAX_STRATA]
    skipped = [by for by in STRATA if by not in usable]
    if skipped:
        logger.info("held out: not stratified by %s (a single value on the held set)", ", ".join(skipped))
    strata_rows: list[dict[str, Any]] = []
    test_rows: list[dict[str, Any]] = []
    total = sum(len(g.pairs) + 1 for g in groups) * len(usable)  # each pair and the pooled pairs, per stratum
    with undefined_values_logged("held out strata"), \
            Progress(total, "held out: stratifying", unit="comparisons", enabled=progress) as bar:
        # a flow seen in one dialogue gives NaN intervals, said in the log
        for group in groups:
            pooled = pd.concat([c.scores for _, _, c in group.pairs])
            for by in usable:
                parts: list[tuple[str, int, Comparison | pd.DataFrame]] = [
                    (f"{a} vs {b}", 1, c) for a, b, c in group.pairs]
                parts.append(("pooled", len(group.pairs), pooled))
                for pair, pairs, scores in parts:
                    keys = {"context_set": HELD_OUT, "checkpoint": checkpoint, "comparison": group.comparison,
                            "group": group.group, "pair": pair, "pairs": pairs, "by": by}
                    strata, tests = _rows(_stratified(scores, by, names, settings), keys)
                    strata_rows += strata
                    test_rows += tests
                    bar.update()
    logger.info("held out: %d comparisons stratified by %s", sum(len(g.pairs) for g in groups), ", ".join(usable))
    return {
        "flow_strata": pd.DataFrame(strata_rows, columns=list(STRATA_COLUMNS)),
        "flow_strata_tests": pd.DataFrame(test_rows, columns=list(TESTS_COLUMNS)),
        "flow_graph": pd.DataFrame([_graph_row(folder)]),
    }
