"""Answer the paper's questions with chance-corrected and paired statistics: ``simscore explain DIR``.

Reads an experiment output folder (``contexts/<set>.jsonl`` and
``responses/<set>/<reward>-<seed>/ckpt-NNNNNN.jsonl``; the final policy of a run is its
highest checkpoint) and writes ``DIR/explain/``: ``explain.md``, CSV tables and PNG figures.

1. *Agreement*: for every pair of final policies on each context set, TMR and DMR beside
   Cohen's κ and Gwet's AC1 on the full act (TMR) and the intents (DMR), summarised per
   group (seeds within one reward model, across reward models).
2. *Churn floor*: mean ``1 - TMR`` between consecutive checkpoints over the last third of
   each run, beside the seed-vs-seed and reward-vs-reward disagreement.
3. *Seeds vs reward models*: per context, mean TMR over within-reward seed pairs against
   mean TMR over across-reward pairs, with a paired permutation test.
4. *Where*: disagreement of across-reward pairs per context group, and the contexts that
   separate the reward models (agree within, disagree across), with responses side by side.
5. *Why*: a shallow tree predicting from context features whether a TS and an IQ final
   policy disagree, and a classifier two-sample test between them.

Only reads the folder and writes ``DIR/explain`` (atomically), so it is safe to rerun.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from simscore.app.experiment.folder import ExperimentFolder, RunFiles
from simscore.app.experiment.provenance import remaking
from simscore.checks import check_int, check_seed
from simscore.errors import SimscoreError
from simscore.io import atomic_open, atomic_write_text
from simscore.io.untrusted import markdown_text
from simscore.progress import Progress
from simscore.responses import Responses
from simscore.stats import MAX_RESAMPLES, Bootstrap
from simscore.stats.clusters import cluster_codes, dialogue_clusters, unit_name

__all__ = ["explain", "load_runs", "RunFiles"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

_WITHIN = "seeds within {}"
_ACROSS = "across reward models"


def load_runs(directory: str | Path, context_set: str) -> list[RunFiles]:
    """The runs with saved checkpoints under ``responses/<context_set>``, sorted by reward then seed.

    Folders that are not ``<reward>-<seed>`` (such as ``random``) or hold no checkpoint are
    skipped (:meth:`simscore.app.experiment.folder.ExperimentFolder.run_responses`).
    """
    return ExperimentFolder(directory).run_responses(context_set)


def _label(response: Any, level: str) -> str:
    act = None if response is None else response.action
    if act is None:
        return "(none)"
    return str(act) if level == "act" else "+".join(act.intents)


def _tmr(a: Responses, b: Responses, ids: list[str]) -> pd.Series:
    """Per-context TMR (1 if the two actions are equal), as :func:`simscore.comparison.compare` scores it."""
    from simscore.comparison import compare

    return compare(a.subset(ids), b.subset(ids), ["tmr"], bootstrap=Bootstrap(n_resamples=1)).scores["tmr"]


def _scores(a: Responses, b: Responses, ids: list[str]) -> pd.DataFrame:
    from simscore.comparison import compare

    return compare(a.subset(ids), b.subset(ids), ["tmr", "dmr"], bootstrap=Bootstrap(n_resamples=1)).scores[["tmr", "dmr"]]


def _group(reward_a: str, reward_b: str) -> str:
    return _WITHIN.format(reward_a) if reward_a == reward_b else _ACROSS


class _SetData:
    """Final responses, pair scores and context set of one context set."""

    def __init__(self, folder: ExperimentFolder, name: str, runs: list[RunFiles]) -> None:
        from contexts import ContextSet

        self.name = name
        self.runs = runs
        self.finals = {r.run: Responses.read_jsonl(r.checkpoints[-1][1]) for r in runs}
        path = folder.contexts(name)
        self.contexts = ContextSet.read_jsonl(path) if path.is_file() else None
        common = set.intersection(*(set(f.ids) for f in self.finals.values()))
        order = self.contexts.ids if self.contexts is not None else self.finals[runs[0].run].ids
        self.ids = [i for i in order if i in common]
        self.pairs: dict[tuple[str, str], pd.DataFrame] = {}
        for a, b in itertools.combinations(runs, 2):
            self.pairs[(a.run, b.run)] = _scores(self.finals[a.run], self.finals[b.run], self.ids)
        self.reward = {r.run: r.reward for r in runs}
        # the statistical unit, as in compare and the report: the dialogues of collected contexts
        meta = None if self.contexts is None else self.contexts.metadata_frame().reindex(self.ids)
        columns = dialogue_clusters(meta) or ()
        self.unit = unit_name(columns)
        self.units = cluster_codes(meta, columns)

    def group_pairs(self, within: bool) -> list[pd.DataFrame]:
        return [s for (a, b), s in self.pairs.items() if (self.reward[a] == self.reward[b]) == within]

    def first_of(self, reward: str) -> str | None:
        return next((r.run for r in self.runs if r.reward == reward), None)


# ----------------------------------------------------------------------------- 1. agreement


def agreement_table(data: _SetData) -> pd.DataFrame:
    """One row per pair of final policies: TMR, DMR, κ and AC1 on acts and intents."""
    from simscore.stats import cohen_kappa, gwet_ac1

    rows = []
    for (a, b), scores in data.pairs.items():
        ra, rb = data.finals[a], data.finals[b]
        row: dict[str, Any] = {"context_set": data.name, "run_a": a, "run_b": b,
                               "group": _group(data.reward[a], data.reward[b]), "n": len(data.ids),
                               "tmr": float(scores["tmr"].mean()), "dmr": float(scores["dmr"].mean())}
        for level in ("act", "intent"):
            la = [_label(ra[i], level) for i in data.ids]
            lb = [_label(rb[i], level) for i in data.ids]
            row[f"kappa_{level}"] = cohen_kappa(la, lb)
            row[f"ac1_{level}"] = gwet_ac1(la, lb)
        rows.append(row)
    return pd.DataFrame(rows)


def summarise_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Mean of every agreement column per context set and group, with the number of pairs."""
    columns = ["tmr", "dmr", "kappa_act", "ac1_act", "kappa_intent", "ac1_intent"]
    grouped = table.groupby(["context_set", "group"], sort=False)
    out = grouped[columns].mean()
    out.insert(0, "pairs", grouped.size())
    return out.reset_index()


# ----------------------------------------------------------------------------- 2. churn


def churn_table(data: _SetData) -> pd.DataFrame:
    """Per run: mean ``1 - TMR`` between consecutive checkpoints of the last third of the run.

    The last third is the last ``max(2, ceil(n / 3))`` of the run's ``n`` checkpoints (so at
    least one consecutive pair when a run has two or more checkpoints); NaN with one checkpoint.
    """
    rows = []
    for run in data.runs:
        ckpts = run.checkpoints[-max(2, math.ceil(len(run.checkpoints) / 3)):]
        loaded = [Responses.read_jsonl(p) for _, p in ckpts]
        values = [1.0 - float(_tmr(x, y, data.ids).mean()) for x, y in itertools.pairwise(loaded)]
        rows.append({"context_set": data.name, "run": run.run, "reward": run.reward, "seed": run.seed,
                     "from_checkpoint": ckpts[0][0], "to_checkpoint": ckpts[-1][0], "steps": len(values),
                     "churn": float(np.mean(values)) if values else math.nan})
    return pd.DataFrame(rows)


def floor_table(churn: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Churn per reward model beside the seed and reward-model disagreement (``1 - TMR``)."""
    rows = []
    for cs, part in churn.groupby("context_set", sort=False):
        for reward, runs in part.groupby("reward", sort=True):
            rows.append({"context_set": cs, "what": f"churn within {reward} runs (last third)",
                         "disagreement": float(runs["churn"].mean())})
        for _, row in summary[summary["context_set"] == cs].iterrows():
            rows.append({"context_set": cs, "what": row["group"], "disagreement": 1.0 - float(row["tmr"])})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- 3. paired test


def seed_vs_reward(data: _SetData, *, n_permutations: int, seed: int) -> dict[str, Any] | None:
    """Per context mean TMR within reward models vs across them; :func:`simscore.stats.paired_test`."""
    from simscore.stats import paired_test

    within, across = data.group_pairs(True), data.group_pairs(False)
    if not within or not across:
        return None
    x = pd.concat([s["tmr"] for s in within], axis=1).mean(axis=1).reindex(data.ids).to_numpy()
    y = pd.concat([s["tmr"] for s in across], axis=1).mean(axis=1).reindex(data.ids).to_numpy()
    test = paired_test(x, y, n_permutations=n_permutations, seed=seed, clusters=data.units)
    return {"context_set": data.name, "within_tmr": float(np.nanmean(x)), "across_tmr": float(np.nanmean(y)),
            "difference": test.mean_difference, "ci_low": test.ci_low, "ci_high": test.ci_high,
            "p_value": test.p_value, "n_permutations": n_permutations, "n": test.n, "units": test.units,
            "unit": data.unit, "within_pairs": len(within), "across_pairs": len(across)}


# ----------------------------------------------------------------------------- 4. where, 5. why


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    out = pd.concat(frames)
    out.index.name = "context_id"
    return out


def where(data: _SetData, top: int, rewards: tuple[str, str]) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Disagreement per context group (across pairs) and the top separating contexts with responses."""
    from contexts.features import context_groups
    from simscore.analysis.disagreement import disagreement_by, separating_contexts

    within, across = data.group_pairs(True), data.group_pairs(False)
    if not within or not across:
        return None, None
    by = None
    if data.contexts is not None:
        groups = context_groups(data.contexts.select(data.ids))
        by = disagreement_by(_stack(across), groups, "tmr")
        by.insert(0, "context_set", data.name)
    sep = separating_contexts(_stack(within), _stack(across), measure="tmr", top=top)
    a, b = (data.first_of(r) for r in rewards)
    for run in (a, b):
        if run is not None:
            resp = data.finals[run]
            sep[f"{run}_act"] = [_label(resp[i], "act") for i in sep.index]
            sep[f"{run}_text"] = [resp[i].text for i in sep.index]
    sep = sep.reset_index()
    sep.insert(0, "context_set", data.name)
    return by, sep


def why(data: _SetData, rewards: tuple[str, str], *, seed: int, n_permutations: int,
        top: int, n_jobs: int | None = 1) -> tuple[dict[str, Any], pd.DataFrame | None, pd.DataFrame | None]:
    """Disagreement probe and two-sample test between the first run of each of ``rewards``
    (the test's permutations on ``n_jobs`` threads, None: one per core; the numbers do not
    depend on it)."""
    from contexts.features import context_features
    from simscore.analysis.disagreement import disagreement_probe, disagrees, two_sample_test

    a, b = (data.first_of(r) for r in rewards)
    info: dict[str, Any] = {"context_set": data.name, "run_a": a, "run_b": b}
    if a is None or b is None or data.contexts is None:
        info["note"] = "needs a run of each reward model and the context set"
        return info, None, None
    features = context_features(data.contexts.select(data.ids))
    tmr = _tmr(data.finals[a], data.finals[b], data.ids)
    importances = contexts = None
    try:
        probe = disagreement_probe(features, disagrees(tmr, "tmr"), seed)
        info.update(probe_accuracy=probe.accuracy, probe_baseline=probe.baseline,
                    disagreement_rate=probe.disagreement_rate, probe_n_test=probe.n_test)
        importances = probe.importances.head(top).reset_index()
        importances.insert(0, "context_set", data.name)
    except ValueError as exc:
        info["probe_note"] = str(exc)
    try:
        n_units = len(data.ids) if data.units is None else int(data.units.max(initial=-1)) + 1
        test = two_sample_test(features, data.finals[a].subset(data.ids), data.finals[b].subset(data.ids), seed,
                               n_permutations, n_splits=min(5, n_units), n_jobs=-1 if n_jobs is None else n_jobs,
                               clusters=data.units)
        info.update(two_sample_accuracy=test.accuracy, two_sample_p=test.p_value, two_sample_units=test.n_units,
                    two_sample_unit=data.unit)
        contexts = test.contexts.head(top).reset_index()
        contexts.insert(0, "context_set", data.name)
    except ValueError as exc:
        info["two_sample_note"] = str(exc)
    return info, importances, contexts


# ----------------------------------------------------------------------------- output


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    with atomic_open(path, "w") as handle:
        frame.to_csv(handle, index=False, lineterminator="\n")


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return markdown_text(str(value))  # ids, acts and texts come from files: no tag, link or line break


def _md(frame: pd.DataFrame) -> str:
    if frame is None or frame.empty:
        return "_(nothing to show)_\n"
    head = "| " + " | ".join(markdown_text(str(c)) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body]) + "\n"


def _readable_groups(by_group: pd.DataFrame) -> pd.DataFrame:
    """The groupings worth a row in the Markdown: not one group per context, not a single group."""
    if by_group.empty:
        return by_group
    sizes = by_group.groupby(["context_set", "grouping"])["group"].transform("size")
    return by_group[(by_group["grouping"] != "grid_cell") & (sizes > 1)]


def _plot_floor(floor: pd.DataFrame, path: Path) -> None:
    from matplotlib.patches import Patch

    from simscore.plots import PALETTE, figure_style, new_figure, save_figure

    sets = list(dict.fromkeys(floor["context_set"]))
    colours = {True: PALETTE[1], False: PALETTE[0]}
    with figure_style():
        figure = new_figure(7.0, 0.9 + 0.32 * max(len(floor[floor["context_set"] == cs]) for cs in sets))
        axes = figure.subplots(1, len(sets), squeeze=False, sharex=True)[0]  # one x scale for every panel
        for ax, cs in zip(axes, sets, strict=True):
            part = floor[floor["context_set"] == cs]
            ax.barh(range(len(part)), part["disagreement"],
                    color=[colours[str(w).startswith("churn")] for w in part["what"]])
            ax.set_yticks(range(len(part)), list(part["what"]), fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel("disagreement (1 − TMR)")
            ax.set_title(cs)
        axes[0].set_xlim(0.0, max(0.05, float(floor["disagreement"].max()) * 1.1))
        figure.legend([Patch(color=colours[True]), Patch(color=colours[False])],
                      ["churn: consecutive checkpoints of one run (the floor)", "between runs (seeds, reward models)"],
                      loc="outside lower center", ncols=2, frameon=False, fontsize=7)
        figure.suptitle("Do runs differ more than a run differs from itself?", fontsize=10, fontweight="bold")
        save_figure(figure, path, overwrite=True)  # explain/ is this command's own folder, remade each run


def explain(directory: str | Path, *, seed: int = 0, n_permutations: int = 200, top: int = 5,
            n_jobs: int | None = 1, context_sets: Sequence[str] | None = None, progress: bool = False,
            as_run: bool = False) -> Path:
    """Write ``DIR/explain/`` (``explain.md``, CSV tables, a PNG) for an experiment output folder.

    Parameters
    ----------
    directory : path-like
        An experiment output folder (``contexts/``, ``responses/``).
    seed : int
        Seeds the paired test, the probe and the two-sample test (results are deterministic).
    n_permutations : int
        Permutations of the paired test and the two-sample test.
    top : int
        Rows of the separating contexts, importances and distinguishing contexts.
    n_jobs : int or None
        Threads for the two-sample test's permutations (None: one per core). The
        permutations are drawn up front, so the numbers do not depend on it.
    context_sets : sequence of str, optional
        The context sets to explain (default: every one with responses under ``responses/``).
    progress : bool
        Show the progress of its steps (:mod:`simscore.progress`).
    as_run : bool
        Made by an experiment run, which forgets and records the piece in the folder's
        ``cache/pieces.json`` itself (maybe while this runs in another process): leave that
        file alone. Otherwise (the default) the record of ``explain/`` is dropped first, so a
        later run makes it again with its own settings.

    Returns
    -------
    Path
        The path of ``explain.md``.

    Raises
    ------
    SimscoreError
        The folder has no saved run responses.
    ValueError, TypeError
        A bad ``seed``, ``n_permutations``, ``top`` or ``n_jobs`` (checked before any work).
    """
    seed = check_seed("seed", seed)
    n_permutations = check_int("n_permutations", n_permutations, minimum=1, maximum=MAX_RESAMPLES)
    top = check_int("top", top, minimum=1)
    if n_jobs is not None:
        n_jobs = check_int("n_jobs", n_jobs, minimum=1)
    folder = ExperimentFolder(directory)
    names = folder.response_sets() if context_sets is None else sorted(context_sets)
    data = [_SetData(folder, cs, runs) for cs in names if len(runs := folder.run_responses(cs)) >= 2]
    if not data:
        raise SimscoreError(f"{folder.root}: no context set with responses of two or more runs under responses/")
    out = folder.explain
    if not as_run:
        remaking(folder, "explain")  # other settings than a run's, maybe: a run makes it again
    out.mkdir(exist_ok=True)
    rewards_all = sorted({r.reward for d in data for r in d.runs})
    pair = ("ts", "iq") if {"ts", "iq"} <= set(rewards_all) else tuple((rewards_all + [""])[:2])

    probed = [d for d in data if d.name in ("gen", "col") and len(rewards_all) >= 2]
    with Progress(3 * len(data) + len(probed), "explain", unit="steps", enabled=progress) as bar:
        agreement = pd.concat([_counted(bar, agreement_table(d)) for d in data], ignore_index=True)
        summary = summarise_agreement(agreement)
        churn = pd.concat([_counted(bar, churn_table(d)) for d in data], ignore_index=True)
        floor = floor_table(churn, summary)
        paired = pd.DataFrame([t for d in data
                               if (t := _counted(bar, seed_vs_reward(d, n_permutations=n_permutations, seed=seed)))])
        by_parts, sep_parts, infos, imp_parts, ctx_parts = [], [], [], [], []
        for d in probed:
            by, sep = where(d, top, pair)  # type: ignore[arg-type]
            by_parts += [by] if by is not None else []
            sep_parts += [sep] if sep is not None else []
            info, imp, ctx = why(d, pair, seed=seed, n_permutations=n_permutations, top=top,  # type: ignore[arg-type]
                                 n_jobs=n_jobs)
            infos.append(info)
            imp_parts += [imp] if imp is not None else []
            ctx_parts += [ctx] if ctx is not None else []
            bar.update()
    by_group = pd.concat(by_parts, ignore_index=True) if by_parts else pd.DataFrame()
    probe = pd.DataFrame(infos)
    importances = pd.concat(imp_parts, ignore_index=True) if imp_parts else pd.DataFrame()
    distinguishing = pd.concat(ctx_parts, ignore_index=True) if ctx_parts else pd.DataFrame()

    tables = {"agreement": agreement, "agreement_summary": summary, "churn": churn, "churn_floor": floor,
              "seed_vs_reward": paired, "disagreement_by_group": by_group, "probe": probe,
              "probe_importances": importances, "two_sample_contexts": distinguishing}
    for name, frame in tables.items():
        _write_csv(frame, out / f"{name}.csv")
    _plot_floor(floor, out / "churn_floor.png")

    lines = [f"# Explain: {markdown_text(folder.root.name)}", "",
             f"Final policy of a run = its highest checkpoint. Seed {seed}, {n_permutations} permutations.", "",
             "## 1. Chance-corrected agreement", "",
             "TMR/DMR beside Cohen's κ and Gwet's AC1 on the full act (TMR) and the intents (DMR), "
             "mean over the pairs of each group (all pairs: `agreement.csv`).", "", _md(summary),
             "## 2. Churn floor", "",
             "Mean 1 − TMR between consecutive checkpoints over the last third of each run, beside the "
             "disagreement between seeds and between reward models: seeds that differ no more than a run "
             "differs from itself are indistinguishable from training noise.", "", _md(floor),
             "![churn floor](churn_floor.png)", ""]
    if len(rewards_all) < 2:  # sections 3-5 compare reward models
        absent = f"Not assessed: one reward model in this run ({', '.join(rewards_all)})."
        lines += ["## 3. Is the seed difference smaller than the reward-model difference?", "", absent, "",
                  "## 4. Where do the reward models differ?", "", absent, "", "## 5. Why?", "", absent, ""]
        return _write_explain(folder, lines)
    lines += ["## 3. Is the seed difference smaller than the reward-model difference?", "",
             "Per context: mean TMR over within-reward seed pairs (x) vs over across-reward pairs (y); "
             "paired permutation test of x − y and a bootstrap interval (units: the dialogues of collected "
             "contexts, as in the report, else contexts; p to the precision its permutations allow).",
             "", _md(paired.assign(p=[_p(v, k) for v, k in zip(paired["p_value"], paired["n_permutations"],
                                                                 strict=True)]).drop(columns="p_value")
                     if not paired.empty else paired),
             "## 4. Where do the reward models differ?", "",
             f"Disagreement (1 − TMR) of the {pair[0]}-vs-{pair[1]} pairs per context group (per grid cell: "
             "`disagreement_by_group.csv`):", "", _md(_readable_groups(by_group)),
             f"Top {top} separating contexts (agree within reward models, disagree across), with the responses of "
             f"one {pair[0]} and one {pair[1]} run:", ""]
    for sep in sep_parts:
        lines += [f"**{markdown_text(str(sep['context_set'].iloc[0]))}**", "", _md(sep.drop(columns="context_set"))]
    lines += ["## 5. Why?", "",
              f"Decision-tree probe (context features → do a {pair[0]} and an {pair[1]} final policy disagree?), "
              "held-out accuracy vs the majority baseline; classifier two-sample test between the same two "
              "policies (accuracy 0.5 = indistinguishable; folds and permutations move whole dialogues of "
              "collected contexts; its p to the precision of its permutations).", "",
              _md(probe.assign(two_sample_p=[_p(v, n_permutations) for v in probe["two_sample_p"]])
                  if "two_sample_p" in probe.columns else probe),
              "Top importances:", "", _md(importances), "Most distinguishing contexts:", "", _md(distinguishing)]
    return _write_explain(folder, lines)


def _write_explain(folder: ExperimentFolder, lines: list[str]) -> Path:
    path = folder.explain_report
    atomic_write_text(path, "\n".join(lines))
    logger.info("explain: wrote %s", path)
    return path


def _counted(bar: Progress, result: T) -> T:
    """``result``, with one more step of ``bar`` done."""
    bar.update()
    return result


def _p(p_value: float, n_permutations: int) -> str:
    """The permutation test's p-value to the precision its permutations allow (Monte Carlo: the
    smallest p it can give is 2 / (n + 1), written as an upper bound)."""
    from simscore.stats.strata import format_p_value

    if not n_permutations:  # a table saved before the count was recorded: three digits, as then
        return f"p = {p_value:.3g}"
    return format_p_value(p_value, exact=False, n_permutations=int(n_permutations))


def summary_paragraph(directory: str | Path) -> str | None:
    """A one-paragraph summary of ``DIR/explain`` for the report (None if it is missing)."""
    folder = ExperimentFolder(directory)
    path = folder.explain / "seed_vs_reward.csv"
    if not path.is_file():
        return None
    try:
        paired = pd.read_csv(path)
    except pd.errors.EmptyDataError:  # no row and no column: there was no paired test (one reward model)
        paired = pd.DataFrame()
    except (ValueError, OSError):  # damaged (pandas' parser errors are ValueErrors): no summary
        return None
    parts = [f"on {r.context_set} seed pairs agree on {r.within_tmr:.1%} of contexts and reward-model pairs "
             f"on {r.across_tmr:.1%} (difference {r.difference:+.3f}, paired "
             f"{_p(r.p_value, getattr(r, 'n_permutations', 0))})"
             for r in paired.itertuples()]
    text = "; ".join(parts) if parts else "no paired test (one reward model only)"
    link = folder.link(folder.explain_report)
    return (f"Chance-corrected agreement, churn floor, where and why the policies differ: "
            f"[{link}]({link}). In short, {text}.")
