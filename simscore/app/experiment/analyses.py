"""Step 4 of the experiment: every analysis of the paper on the saved responses (application layer).

:func:`score_experiment` runs named steps with typed results in between:

1. :func:`read_responses` reads every responses file of the folder once into
   :class:`SetResponses` (one per context set: each run's :class:`RunResponses` and the random
   policy's);
2. :func:`prepare_text_measures` embeds every text the analyses will score, once;
3. :func:`score_set` runs the analyses of :mod:`simscore.analysis` on one context set
   (:class:`SetScores`: convergence, seeds, reward models, chance level, and on C_col the
   per-turn and first-turn tables); on a set whose contexts name their dialogue (C_col), every
   interval resamples dialogues, not contexts (:func:`simscore.stats.clusters.dialogue_clusters`);
4. :func:`assemble_tables` combines the context sets into the experiment's tables (adding
   absolute performance, correlation and the text measures where the actions match).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from simscore import analysis as an
from simscore.analysis import AnalysisResult, RewardModelsKey
from simscore.app.experiment.context_facts import context_metadata, context_sets_table, sensitivity_table
from simscore.app.experiment.folder import COLLECTED, ExperimentFolder, RunId
from simscore.app.experiment.notes import undefined_values_logged
from simscore.comparison import Comparison
from simscore.measures import Measure
from simscore.progress import Progress, show_progress
from simscore.responses import Responses
from simscore.stats import Bootstrap
from simscore.stats.clusters import dialogue_clusters

if TYPE_CHECKING:
    from simscore.app.experiment.steps import ScoringSettings

__all__ = [
    "RunResponses",
    "SetResponses",
    "ExperimentResponses",
    "SetScores",
    "read_responses",
    "prepare_text_measures",
    "score_set",
    "assemble_tables",
    "score_experiment",
]

logger = logging.getLogger("simscore.app.experiment")


@dataclass(frozen=True)
class RunResponses:
    """One run's responses on one context set.

    Attributes
    ----------
    run : RunId
    checkpoints : dict of int to Responses
        Every checkpoint, ascending; on C_col only the contexts collected with the run's reward.
    final : Responses
        The experiment's final checkpoint on the whole context set.
    """

    run: RunId
    checkpoints: Mapping[int, Responses]
    final: Responses


@dataclass(frozen=True)
class SetResponses:
    """Everything scored on one context set, read once.

    Attributes
    ----------
    name : str
        ``col`` or ``gen``.
    metadata : DataFrame
        The contexts' metadata (turn index, ...), joined onto every comparison.
    runs : tuple of RunResponses
        In the configuration's order (rewards, then seeds).
    random : Responses
        The random policy's responses.
    """

    name: str
    metadata: pd.DataFrame
    runs: tuple[RunResponses, ...]
    random: Responses

    def checkpoints_by_reward(self) -> dict[str, dict[str, Mapping[int, Responses]]]:
        """Reward → run name → checkpoint → responses (what convergence and seeds compare)."""
        out: dict[str, dict[str, Mapping[int, Responses]]] = {}
        for r in self.runs:
            out.setdefault(r.run.reward, {})[r.run.name] = r.checkpoints
        return out

    def finals_by_reward(self) -> dict[str, dict[str, Responses]]:
        """Reward → run name → final responses (what reward models and chance level compare)."""
        out: dict[str, dict[str, Responses]] = {}
        for r in self.runs:
            out.setdefault(r.run.reward, {})[r.run.name] = r.final
        return out

    def all_responses(self) -> Iterator[Responses]:
        """Every responses object of the set (checkpoints, finals, the random policy)."""
        for r in self.runs:
            yield from r.checkpoints.values()
        for r in self.runs:
            yield r.final
        yield self.random


@dataclass(frozen=True)
class ExperimentResponses:
    """The responses of every context set, and the checkpoint all runs reached (``final``)."""

    sets: tuple[SetResponses, ...]
    final: int


@dataclass(frozen=True)
class SetScores:
    """The analyses of one context set.

    Attributes
    ----------
    convergence : tuple of AnalysisResult
        One per run.
    seeds : tuple of AnalysisResult
        One per reward model with two or more runs.
    reward_models : AnalysisResult or None
        Every pair of final runs, within and across reward models; None in a run of one reward
        model (the comparison needs two).
    chance : tuple of AnalysisResult
        The random policy against each final run.
    per_turn : tuple of DataFrame
        On C_col: the seed pairs and the cross-reward pairs at the final checkpoint, by turn.
    first_turn : DataFrame or None
        On C_col: each seed and cross-reward pair at the first system turn.
    """

    convergence: tuple[AnalysisResult[Any], ...]
    seeds: tuple[AnalysisResult[Any], ...]
    reward_models: AnalysisResult[Any] | None
    chance: tuple[AnalysisResult[Any], ...]
    per_turn: tuple[pd.DataFrame, ...] = ()
    first_turn: pd.DataFrame | None = None


def _cross(result: AnalysisResult[Any] | None) -> dict[RewardModelsKey, Comparison]:
    """The reward-model comparisons across reward models (not within one); none in a run of one reward model."""
    if result is None:
        return {}
    return {key: c for key, c in result.comparisons.items() if key.reward_a != key.reward_b}


def read_responses(settings: ScoringSettings, folder: ExperimentFolder, context_sets: Sequence[str]
                   ) -> ExperimentResponses:
    """Read every responses file once: each run's checkpoints and final checkpoint, and the random policy's."""
    from contexts import ContextSet
    from policies.gpsarsa.training import list_checkpoints

    reward_ids = {reward: set(ContextSet.read_jsonl(folder.collected(reward)).ids) for reward in settings.rewards}
    checkpoints = {run: [c.dialogues for c in list_checkpoints(folder.run_dir(run))] for run in settings.runs}
    final = min(ks[-1] for ks in checkpoints.values())
    sets = []
    for name in context_sets:
        runs = []
        for run in settings.runs:
            whole = {k: Responses.read_jsonl(folder.responses(name, run, k)) for k in checkpoints[run]}
            ids = reward_ids[run.reward] if name == COLLECTED else None
            own = {k: r if ids is None else r.subset([i for i in r.ids if i in ids]) for k, r in whole.items()}
            runs.append(RunResponses(run, own, whole[final]))
        metadata = context_metadata(ContextSet.read_jsonl(folder.contexts(name)))
        sets.append(SetResponses(name, metadata, tuple(runs), Responses.read_jsonl(folder.random_responses(name))))
    return ExperimentResponses(tuple(sets), final)


def prepare_text_measures(measures: Sequence[Measure], responses: ExperimentResponses, bar: Progress,
                          also: Sequence[Responses] = ()) -> None:
    """Embed every text the analyses will score (``also``: responses scored beside the saved ones), once, in
    full batches (the models' best case), or read the embeddings from the measures' cache folder."""
    text_measures = [m for m in measures if m.level == "text" and hasattr(m, "prepare")]
    if not text_measures:
        return
    t0 = time.perf_counter()
    bar.set_postfix_str("embedding the texts")
    texts = {t for s in responses.sets for r in (*s.all_responses(), *also) for t in r.texts() if t is not None}
    with show_progress(bar.enabled):
        for measure in text_measures:
            measure.prepare(texts)
    bar.set_postfix_str("")
    logger.info("text measures: %d distinct texts embedded up front, %.1f s", len(texts), time.perf_counter() - t0)


def score_set(data: SetResponses, measures: Sequence[Measure], *, final: int, bootstrap: Bootstrap,
              bar: Progress) -> SetScores:
    """Every analysis of one context set (``bar`` advances once per analysis)."""
    common: dict[str, Any] = {"context_set": data.name, "metadata": data.metadata, "bootstrap": bootstrap,
                              "clusters": dialogue_clusters(data.metadata)}
    convergence, seeds = [], []
    for reward, runs in data.checkpoints_by_reward().items():
        for run, checkpoints in runs.items():
            convergence.append(an.convergence(checkpoints, measures, run=run, reward=reward, **common))
            bar.update()
        if len(runs) > 1:
            seeds.append(an.seeds(runs, measures, reward=reward, **common))
        bar.update()
    finals = data.finals_by_reward()
    # the reward-model comparison needs two reward models; a run of one has none (the report says so)
    reward_models = an.reward_models(finals, measures, checkpoint=final, **common) if len(finals) > 1 else None
    bar.update()
    chance = []
    for reward, runs_final in finals.items():
        for run, trained in runs_final.items():
            chance.append(an.chance_level(data.random, trained, measures, checkpoint=final, reward=reward, run=run,
                                          **common))
            bar.update()
    scores = SetScores(tuple(convergence), tuple(seeds), reward_models, tuple(chance))
    if data.name == COLLECTED:
        scores = _turns(scores, final, bootstrap)
    logger.info("scored context set %r", data.name)
    return scores


def _turns(scores: SetScores, final: int, bootstrap: Bootstrap) -> SetScores:
    """The per-turn and first-turn tables of a set's seed pairs and cross-reward pairs."""
    per_turn = []
    cross = _cross(scores.reward_models)
    seed_pairs = [c for r in scores.seeds for c in r.select(checkpoint=final)]
    # the last turns rest on few dialogues: their undefined intervals are said in the log (the report names them)
    for group, comparisons in (("seed pairs", seed_pairs), ("reward models", list(cross.values()))):
        if comparisons:
            with undefined_values_logged(f"per turn, {group} (final checkpoint)"):
                per_turn.append(an.per_turn(comparisons, group=f"{group} (final checkpoint)", bootstrap=bootstrap))
    pairs: dict[Any, Comparison] = {k: c for r in scores.seeds for k, c in r.comparisons.items()}
    pairs.update(cross)
    with undefined_values_logged("first turn"):
        first = an.first_turn(pairs, bootstrap=bootstrap)
    return SetScores(scores.convergence, scores.seeds, scores.reward_models, scores.chance, tuple(per_turn), first)


def assemble_tables(scored: Sequence[SetScores], measures: Sequence[Measure], performance: pd.DataFrame,
                    bootstrap: Bootstrap) -> dict[str, pd.DataFrame]:
    """The experiment's tables from every context set's analyses (in the order they are saved)."""
    convergence = an.combine([r for s in scored for r in s.convergence])
    reward_results = [s.reward_models for s in scored if s.reward_models is not None]
    reward_models = an.combine(reward_results) if reward_results else None
    chance = an.combine([r for s in scored for r in s.chance])
    seed_results = [r for s in scored for r in s.seeds]
    seeds = an.combine(seed_results) if seed_results else None
    cross = _cross(reward_models)
    pooled = [*convergence.comparisons.values(), *cross.values()]
    if seeds is not None:
        pooled.extend(seeds.comparisons.values())
    tables: dict[str, pd.DataFrame] = {"performance": an.performance_table(performance),
                                       "convergence": convergence.table}
    if reward_models is not None:
        tables["reward_models"] = reward_models.table
    tables.update({"correlation": an.correlation_table(pooled), "chance": chance.table})
    if seeds is not None:
        tables["seeds"] = seeds.table
    per_turn = [t for s in scored for t in s.per_turn]
    if per_turn:
        tables["per_turn"] = pd.concat(per_turn, ignore_index=True)
    first_turn = [s.first_turn for s in scored if s.first_turn is not None]
    if first_turn:
        tables["first_turn"] = pd.concat(first_turn, ignore_index=True)
    text = [m.name for m in measures if m.level == "text"]
    if text:
        analyses: dict[str, Mapping[Any, Comparison]] = {"convergence": convergence.comparisons}
        if seeds is not None:
            analyses["seeds"] = seeds.comparisons
        analyses["reward_models"] = cross
        tables["text_at_matching_actions"] = an.text_at_matching_actions(analyses, measures=text,
                                                                         bootstrap=bootstrap)
    return tables


def score_experiment(settings: ScoringSettings, measures: Sequence[Measure], folder: ExperimentFolder,
                     context_sets: Sequence[str], performance: pd.DataFrame, progress: bool,
                     embedded: Callable[[], object] | None = None) -> dict[str, pd.DataFrame]:
    """Steps 1-4 above: the experiment's tables from the responses saved in ``folder`` (``embedded``: called
    once the texts are embedded, when what is left keeps about one core busy)."""
    from contexts import ContextSet

    responses = read_responses(settings, folder, context_sets)
    handcrafted: dict[str, Responses] = {}
    if settings.maps.enabled:  # the map's handcrafted policy: its texts are embedded with the others
        from simscore.app.experiment.maps import handcrafted_responses

        handcrafted = {name: handcrafted_responses(name, folder) for name in context_sets}
    steps = len(context_sets) * (2 * len(settings.runs) + len(settings.rewards) + 1)
    with Progress(steps, "scoring", unit="analyses", enabled=progress) as bar:
        prepare_text_measures(measures, responses, bar, also=list(handcrafted.values()))
        if embedded is not None:
            embedded()
        scored = [score_set(data, measures, final=responses.final, bootstrap=settings.bootstrap, bar=bar)
                  for data in responses.sets]
    tables = assemble_tables(scored, measures, performance, settings.bootstrap)
    # what the counts stand for: distinct belief states, dialogues, user-bye contexts
    parts = ({COLLECTED: {r: ContextSet.read_jsonl(folder.collected(r)).ids for r in settings.rewards}}
             if COLLECTED in context_sets else {})
    if settings.maps.enabled:  # who behaves like whom: the final policies, and each run's checkpoints
        from simscore.app.experiment.maps import map_tables

        tables.update(map_tables(measures, responses.sets, handcrafted, bootstrap=settings.bootstrap,
                                 checkpoints=settings.maps.checkpoints))
    tables["contexts"] = context_sets_table({s.name: s.metadata for s in responses.sets}, parts)
    for data, scores in zip(responses.sets, scored, strict=True):
        if data.name == COLLECTED:
            at_final = {"seeds": {k: c for r in scores.seeds for k, c in r.comparisons.items()
                                  if k.checkpoint == responses.final},
                        "reward_models": {} if scores.reward_models is None else dict(scores.reward_models.comparisons)}
            tables["sensitivity"] = sensitivity_table(data.name, responses.final, at_final)
    return tables
