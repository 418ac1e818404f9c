"""The Markdown report of an experiment, and the ``simscore report DIR`` command (application layer).

The experiment pipeline (:mod:`simscore.app.experiment`) produces the tables of
:mod:`simscore.analysis`, saves them with :func:`simscore.tables_io.save_tables` and calls
:func:`write_report`; ``simscore report DIR`` (:func:`rebuild_report`) later rebuilds figures
and report from the saved tables alone.

Directory layout
----------------
::

    DIR/<name>.csv       each table as CSV (header row, no index)
    DIR/<name>.json      {"format": "simscore-table", "version": 1, "name", "columns",
                          "dtypes", "meta", "records"} — the file load_tables reads
    DIR/tables.json      {"format": "simscore-tables", "version": 1, "tables": [names], "meta"}
    DIR/figures/*.png    one per figure (simscore.plots.make_figures)
    DIR/report.md        the report, linking the figures and tables relatively

Table names the report knows (schemas in :mod:`simscore.analysis`): ``performance``,
``convergence``, ``seeds``, ``reward_models``, ``per_turn``, ``first_turn``,
``text_at_matching_actions``, ``correlation``, ``chance``. Other names are saved, loaded and
linked, but not analysed.

What the report holds: a table of the paper's findings graded on this run
(:mod:`simscore.app.findings`), this run's set-up beside the paper's, one section per table
with the paper's published numbers beside ours where the paper has them
(:mod:`simscore.app.paper`: rows marked "(paper)" or columns named "paper"), a note when
absolute performance is saturated (:data:`SATURATED_SUCCESS`), the measures' signatures and a
"Reproduce" section (command, date, run log, configuration, package versions, citation).

What the tables were made with comes as a :class:`~simscore.app.record.RunRecord` (title,
signatures, configuration, versions, seeds, bootstrap settings, finding thresholds, date,
command), or as its saved form, the ``meta`` object of ``tables.json``.

Everything in the report derives from the tables and the record (no clock, no host names; the
only look at the folder is whether it holds ``run.log`` and ``explain/``, to link them), so
rebuilding from saved tables gives the same text.

A pipeline, in outline (``ck[cs][reward][run]`` maps checkpoint → Responses, ``K`` is the
final checkpoint, ``ctx[cs]`` the context set or its metadata frame)::

    from simscore import analysis as an, tables_io
    from simscore.app import report

    conv = an.combine(an.convergence(ck[cs][rw][run], measures, run=run, reward=rw, context_set=cs,
                                     metadata=ctx[cs]) for cs in ck for rw in ck[cs] for run in ck[cs][rw])
    seeds = an.combine(an.seeds(ck[cs][rw], measures, reward=rw, context_set=cs, metadata=ctx[cs])
                       for cs in ck for rw in ck[cs])
    rm = an.combine(an.reward_models({rw: {run: c[K] for run, c in runs.items()}
                                      for rw, runs in ck[cs].items()},
                                     measures, checkpoint=K, context_set=cs, metadata=ctx[cs]) for cs in ck)
    chance = an.chance_level(random_responses, ck["col"]["ts"]["ts-1"][K], measures,
                             checkpoint=K, reward="ts", run="ts-1", context_set="col")
    cross = {key: c for key, c in rm.comparisons.items() if key.reward_a != key.reward_b}
    col_pairs = {k: c for k, c in [*seeds.comparisons.items(), *cross.items()] if k.context_set == "col"}
    tables = {
        "performance": an.performance_table(evaluation_records),
        "convergence": conv.table, "seeds": seeds.table, "reward_models": rm.table,
        "per_turn": an.per_turn(seeds.select(context_set="col", checkpoint=K), group="seed pairs"),
        "first_turn": an.first_turn(col_pairs),
        "text_at_matching_actions": an.text_at_matching_actions(
            {"convergence": conv, "seeds": seeds, "reward_models": cross}),
        "correlation": an.correlation_table([*conv.comparisons.values(), *seeds.comparisons.values(),
                                             *cross.values()]),
        "chance": chance.table,
    }
    record = RunRecord(signatures=conv.select()[0].signatures, config=config, seeds=seeds_used,
                       versions=tables_io.collect_versions(), bootstrap=Bootstrap(n_resamples=1000),
                       findings=Thresholds(converged_tmr=0.9), date="2020-07-01",
                       command="simscore run my.toml --out DIR", command_recorded=True)
    tables_io.save_tables(out_dir, tables, record.to_meta())
    report.write_report(out_dir, tables, record)   # figures/*.png and report.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simscore import analysis
from simscore._version import __version__
from simscore.app import paper
from simscore.app.findings import Finding, Thresholds, findings, format_quantities
from simscore.app.folder import ExperimentFolder
from simscore.app.record import RunRecord
from simscore.errors import FileFormatError
from simscore.io import atomic_write_text
from simscore.stats import Bootstrap
from simscore.tables_io import TABLES_VERSION, load_tables, markdown_table

__all__ = [
    "TABLE_NAMES",
    "SATURATED_SUCCESS",
    "PAPER_MARK",
    "build_report",
    "write_report",
    "rebuild_report",
    "add_subcommands",
]

#: The tables the report analyses, in report order.
TABLE_NAMES: tuple[str, ...] = (
    "performance", "convergence", "seeds", "reward_models", "per_turn", "first_turn", "text_at_matching_actions",
    "correlation", "chance",
)


def _label(measure: str) -> str:
    from simscore.plots import MEASURE_LABELS

    return MEASURE_LABELS.get(measure, measure)


def _wide(
    table: pd.DataFrame,
    index: list[str],
    value: str = "mean",
    *,
    agg: str = "mean",
    extra: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """Measures as columns (first-appearance order) beside the ``index`` columns (rows in table order).

    ``agg`` combines repeated cells (``"mean"`` over runs, ``"first"`` for text cells);
    ``extra = (title, column)`` adds the per-row maximum of ``column`` after the index columns.
    """
    keys = table[index].drop_duplicates()
    order = pd.MultiIndex.from_frame(keys) if len(index) > 1 else pd.Index(keys[index[0]], name=index[0])
    measures = list(dict.fromkeys(table["measure"]))
    cells = table.groupby([*index, "measure"], sort=False)[value].agg(agg)
    wide = cells.unstack("measure").reindex(index=order, columns=measures)
    if extra is not None:
        title, column = extra
        wide.insert(0, title, table.groupby(index, sort=False)[column].max().reindex(order).to_numpy())
    wide = wide.reset_index()
    wide.columns.name = None
    return wide.rename(columns={m: _label(m) for m in measures})


def _with_interval(mean: float, low: float, high: float, digits: int = 3) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "—"
    if any(v is None or math.isnan(v) for v in (low, high)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _figure(figures: Mapping[str, Path], name: str, folder: ExperimentFolder | None, caption: str) -> list[str]:
    path = figures.get(name)
    if path is None:
        return []
    link = Path(os.path.relpath(Path(path), folder.root)) if folder is not None else Path(path)
    return [f"![{caption}]({link.as_posix()})", ""]


def _drop_blank(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Leave out label columns that hold a single empty string (e.g. no context set name)."""
    blank = [c for c in columns if c in frame.columns and frame[c].astype(str).eq("").all()]
    return frame.drop(columns=blank)


#: Task success at or above this at every checkpoint of a reward model counts as saturated:
#: absolute performance can no longer tell its runs apart (the paper's argument for similarity).
SATURATED_SUCCESS = 0.99

#: What marks the paper's rows in a table (the context set column reads e.g. "col (paper)").
PAPER_MARK = "(paper)"

_EPS = 1e-9


def _thousands(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else str(value)


def _nearest(available: Sequence[int], k: int) -> int:
    """The checkpoint in ``available`` nearest to ``k`` (the smaller one on a tie)."""
    return min(available, key=lambda a: (abs(a - k), a))


def _config_value(config: Mapping[str, Any], section: str, key: str) -> Any:
    part = config.get(section)
    return part.get(key) if isinstance(part, Mapping) else None


# ----------------------------------------------------------------------------- findings


def _findings_section(results: Sequence[Finding], thresholds: Thresholds, ignored: Sequence[str]) -> list[str]:
    rows = []
    for finding in results:
        label = f"({finding.number}) {finding.title}"
        if not finding.checks:
            rows.append((label, "—", f"not assessed: {finding.reason}", "—", "—", "—"))
            continue
        for i, check in enumerate(finding.checks):
            verdict = check.verdict if check.verdict != "not assessed" else f"not assessed: {check.note}"
            paper_text = format_quantities(check.paper) if check.paper else (check.paper_says or "—")
            rows.append((label, check.scope, verdict, format_quantities(check.ours) or "—", paper_text,
                         check.rule if i == 0 else "(as above)"))
    table = pd.DataFrame(rows, columns=["finding", "scope", "verdict", "ours", "paper", "threshold"])
    changed = thresholds.changed()
    lines = [
        "Each finding the paper states, checked on this run per context set and reward model (the scope), "
        "beside the paper's number where it gives one. Verdicts: holds, partly (the direction is right but "
        "the size falls short, or it holds in one scope and not another), does not hold, not assessed.",
        "",
        markdown_table(table),
        "",
        "The thresholds are simscore's own choice, not the paper's (the paper states its findings in words); "
        "defaults are documented in `simscore.app.findings.Thresholds` and can be set in the `[findings]` "
        "section of the experiment configuration. "
        + ("This run changed " + ", ".join(f"`{k} = {v:g}`" for k, v in changed.items()) + "."
           if changed else "This run uses the defaults."),
        "",
    ]
    if ignored:
        lines += [f"Unknown thresholds in the saved settings, ignored: {', '.join(ignored)}.", ""]
    lines += ["Details:", ""]
    for finding in results:
        text = f"- **({finding.number}) {finding.verdict.capitalize()}.** {finding.claim}"
        if not finding.checks:
            text += f" Not assessed: {finding.reason}."
        else:
            noted = [c for c in finding.checks if c.note and c.verdict != "not assessed"]
            if len({c.note for c in noted}) == 1 and len(noted) > 1:
                text += f" {noted[0].note.capitalize()} (every scope)."
            elif noted:
                text += " " + "; ".join(f"{c.scope}: {c.note}" for c in noted) + "."
        lines.append(text)
    lines.append("")
    return lines


# ----------------------------------------------------------------------------- set-up


def _contexts(tables: Mapping[str, pd.DataFrame], context_set: str, by: str | None = None) -> dict[str, int]:
    """Contexts per comparison (scored + missing) on ``context_set``, per value of ``by`` (or ``""``)."""
    for name in ("seeds", "convergence", "reward_models", "chance") if by else ("reward_models", "chance"):
        table = tables.get(name)
        if table is None or table.empty or (by and by not in table.columns):
            continue
        part = table[table["context_set"] == context_set]
        if part.empty:
            continue
        sizes = (part["count"] + part["missing"]).groupby(part[by] if by else [""] * len(part), sort=False).max()
        return {str(k): int(v) for k, v in sizes.items()}
    return {}


def _section_setup(tables: Mapping[str, pd.DataFrame], config: Mapping[str, Any]) -> list[str]:
    facts = paper.facts()
    rows: list[tuple[str, str, str]] = []
    differs: list[str] = []

    def row(aspect: str, ours: Any, theirs: Any, compare: bool = True) -> None:
        if ours is None:
            return
        rows.append((aspect, _thousands(ours), _thousands(theirs)))
        if compare and ours != theirs:
            differs.append(f"{aspect} ({_thousands(ours)} vs {_thousands(theirs)})")

    seeds = _config_value(config, "training", "seeds")
    rewards = _config_value(config, "training", "rewards")
    collect = _config_value(config, "contexts", "collect_dialogues")
    row("training dialogues per run", _config_value(config, "training", "dialogues"), facts.dialogues)
    row("a checkpoint every (dialogues)", _config_value(config, "training", "every"), facts.every)
    row("reward models", ", ".join(rewards) if isinstance(rewards, list) else None, ", ".join(facts.col_contexts))
    row("runs (seeds) per reward model", len(seeds) if isinstance(seeds, list) else None, facts.trials)
    row("evaluation dialogues per checkpoint", _config_value(config, "training", "eval_dialogues"),
        facts.eval_dialogues)
    row("C_col: dialogues collected per run", collect, facts.collect_dialogues)
    collected = _contexts(tables, paper.COLLECTED_SET, "reward")
    if collected:
        row("C_col contexts per reward model", ", ".join(f"{r} {n:,}" for r, n in collected.items()),
            ", ".join(f"{r} {n:,}" for r, n in facts.col_contexts.items()), compare=False)
        if isinstance(collect, int) and isinstance(seeds, list) and seeds:
            dialogues = collect * len(seeds)
            row("C_col contexts per collected dialogue",
                ", ".join(f"{r} {n / dialogues:.1f}" for r, n in collected.items()),
                ", ".join(f"{r} {facts.contexts_per_dialogue(r):.1f}" for r in facts.col_contexts), compare=False)
    union = _contexts(tables, paper.COLLECTED_SET)
    if union:
        row("C_col contexts, both reward models", union[""], "—", compare=False)
    generated = _contexts(tables, "gen")
    if generated:
        row("C_gen contexts", generated[""], facts.gen_contexts)
    if not rows:
        return []
    lines = [
        markdown_table(pd.DataFrame(rows, columns=["aspect", "this run", "paper"])),
        "",
    ]
    if differs:
        lines += [
            "This run differs from the paper's set-up in: " + "; ".join(differs) + ". The paper's numbers "
            "stand beside ours for orientation; they are not expected to agree to the digit.",
            "",
        ]
    return lines


# ----------------------------------------------------------------------------- paper rows in tables


def _paper_rows(
    ours: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    count_column: str,
    reference_count: str,
    what: str,
) -> tuple[pd.DataFrame, str]:
    """Insert the paper's rows (``reference``: reward, checkpoint, count, measures) into a wide table.

    ``ours`` has ``context_set``, ``reward``, ``checkpoint``, ``count_column`` and measure
    labels. Where the collected set's checkpoints include the paper's, a paper row follows each
    matching row of ours; otherwise the paper's final row follows our last row of each reward.
    Returns the table and a sentence saying which.
    """
    collected = ours["context_set"] == paper.COLLECTED_SET
    shared = set(ours.loc[collected, "checkpoint"]) & set(reference["checkpoint"])
    measures = [m for m in reference.columns if _label(m) in ours.columns and m in paper.MEASURES]
    final = int(reference["checkpoint"].max())

    def paper_row(reward: str, checkpoint: int) -> dict[str, Any] | None:
        match = reference[(reference["reward"] == reward) & (reference["checkpoint"] == checkpoint)]
        if match.empty:
            return None
        out: dict[str, Any] = {c: "" for c in ours.columns}
        out.update({"context_set": f"{paper.COLLECTED_SET} {PAPER_MARK}", "reward": reward,
                    "checkpoint": checkpoint, count_column: int(match[reference_count].iloc[0])})
        out.update({_label(m): float(match[m].iloc[0]) for m in measures})
        return out

    rows: list[dict[str, Any]] = []
    records = ours.to_dict("records")
    for i, record in enumerate(records):
        rows.append(record)
        if record["context_set"] != paper.COLLECTED_SET:
            continue
        if shared:
            extra = paper_row(str(record["reward"]), int(record["checkpoint"])) if record["checkpoint"] in shared \
                else None
        else:
            following = records[i + 1] if i + 1 < len(records) else None
            last = following is None or (following["context_set"], following["reward"]) != (
                record["context_set"], record["reward"])
            extra = paper_row(str(record["reward"]), final) if last else None
        if extra is not None:
            rows.append(extra)
    table = pd.DataFrame(rows, columns=list(ours.columns))
    for column in ours.columns:
        if pd.api.types.is_float_dtype(ours[column]):
            table[column] = table[column].astype(np.float64)
    if len(table) == len(ours):
        return table, ""
    label = f"\"{paper.COLLECTED_SET} {PAPER_MARK}\""
    if shared:
        note = f"Rows {label}: the paper's {what} at the same checkpoint."
    else:
        note = (f"Rows {label}: the paper's {what} at its final checkpoint ({final:,} dialogues), since this "
                "run's checkpoints are not the paper's.")
    return table, note


def _int_column(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Counts as nullable integers, so paper rows without a count print as — and the rest as integers."""
    if column in frame.columns:
        frame[column] = pd.array(
            [pd.NA if v is None or (isinstance(v, float) and math.isnan(v)) else int(v) for v in frame[column]],
            dtype="Int64",
        )
    return frame


# ----------------------------------------------------------------------------- sections


def _section_performance(table: pd.DataFrame, config: Mapping[str, Any]) -> list[str]:
    reference = paper.performance()
    facts = paper.facts()
    shown = pd.DataFrame({
        "reward": table["reward"],
        "checkpoint": table["checkpoint"],
        "runs": table["n_runs"],
        **{
            title: [
                _with_interval(m, lo, hi)
                for m, lo, hi in zip(table[c], table[f"{c}_low"], table[f"{c}_high"], strict=True)
            ]
            for c, title in (
                ("success_rate", "task success rate"), ("avg_iq", "average IQ (1–5)"),
                ("avg_length", "average length (turns)"),
            )
        },
    })
    at: list[str] = []
    values: dict[str, list[float]] = {c: [] for c in ("success_rate", "avg_iq", "avg_length")}
    nearest_used = False
    for reward, k in zip(table["reward"].astype(str), table["checkpoint"].astype(int)):
        rows = reference[reference["reward"] == reward]
        if rows.empty:
            at.append("—")
            for c in values:
                values[c].append(math.nan)
            continue
        target = _nearest(rows["checkpoint"].tolist(), k)
        match = rows[rows["checkpoint"] == target].iloc[0]
        at.append(f"{target}" if target == k else f"{target} (nearest)")
        nearest_used |= target != k
        for c in values:
            values[c].append(float(match[c]))
    shown["paper at"] = at
    shown["paper success"] = values["success_rate"]
    shown["paper IQ"] = values["avg_iq"]
    shown["paper length"] = values["avg_length"]

    lines = []
    saturated = [
        str(reward) for reward, part in table.groupby("reward", sort=False)
        if (part["success_rate"] >= SATURATED_SUCCESS - _EPS).all()
    ]
    if saturated:
        lines += [
            f"**Absolute performance is saturated:** task success is at least {SATURATED_SUCCESS:g} at every "
            f"checkpoint of {', '.join(saturated)}, so these numbers cannot tell the runs apart — the paper's "
            f"point (its Table 1 stays between {facts.success_range[0]:.2f} and {facts.success_range[1]:.2f}). "
            "The similarity measures below can.",
            "",
        ]
    lines += [
        "Mean over runs per reward model and checkpoint, with a 95% Student-t interval over runs "
        "(— with a single run).",
        "",
        markdown_table(_drop_blank(shown, ["reward"])),
        "",
    ]
    note = (f"Paper columns: its Table 1 (mean of {facts.trials} trials, {facts.eval_dialogues} evaluation "
            "dialogues each) at the same number of training dialogues")
    ks = facts.performance_checkpoints
    note += (f", or at the nearest checkpoint it has (\"nearest\"; it has {', '.join(f'{k:,}' for k in ks[:3])}, …, "
             f"{ks[-1]:,})." if nearest_used else ".")
    evaluation = _config_value(config, "training", "eval_dialogues")
    if isinstance(evaluation, int) and evaluation != facts.eval_dialogues:
        note += (f" This run evaluates each checkpoint on {evaluation:,} dialogues per run (the paper on "
                 f"{facts.eval_dialogues:,}).")
    note += (" The paper's IQ comes from its BiLSTM estimator, ours from the simulated environment's "
             "estimator: compare IQ trends, not values.")
    return [*lines, note, ""]


def _section_convergence(table: pd.DataFrame, threshold: float, config: Mapping[str, Any]) -> list[str]:
    keys = ["context_set", "reward", "checkpoint"]
    runs = table.assign(runs=table.groupby(keys, sort=False)["run"].transform("nunique"))
    mean_over_runs = _wide(runs, keys, extra=("runs", "runs"))
    facts = paper.facts()
    shown, note = _paper_rows(mean_over_runs, paper.convergence_means(), count_column="runs",
                              reference_count="n_trials", what=f"Table 2 (mean over its {facts.trials} trials, on C_col)")
    every = _config_value(config, "training", "every")
    if note and isinstance(every, int) and every != facts.every:
        note += f" The paper compares k with k − {facts.every:,}; this run with k − {every:,}."
    stability = analysis.stability_table(table, threshold=threshold)
    stability = stability.assign(
        first=["never" if v is pd.NA else str(int(v)) for v in stability["first_stable"]]
    )
    stable = _wide(stability, ["context_set", "reward", "run"], "first", agg="first")
    return [
        "Checkpoint k compared with checkpoint k − 1 of the same run; mean over runs per reward model.",
        "",
        markdown_table(_drop_blank(shown, ["context_set", "reward"])),
        "",
        *([note, ""] if note else []),
        f"First checkpoint from which each measure stays ≥ {threshold:g} (\"never\": the last value is below):",
        "",
        markdown_table(_drop_blank(stable, ["context_set", "reward"])),
        "",
    ]


def _section_seeds(table: pd.DataFrame, bootstrap: Bootstrap) -> list[str]:
    aggregate = analysis.seeds_aggregate(table, bootstrap=bootstrap)
    wide = _wide(aggregate, ["context_set", "reward", "checkpoint"], extra=("pairs", "n_pairs"))
    shown, note = _paper_rows(wide, paper.seeds_means(), count_column="pairs", reference_count="n_pairs",
                              what=f"Table 4 (mean over its {paper.facts().seed_pairs} trial pairs, on C_col)")
    return [
        "Every pair of runs of one reward model at the same checkpoint; mean over pairs.",
        "",
        markdown_table(_drop_blank(shown, ["context_set", "reward"])),
        "",
        *([note, ""] if note else []),
    ]


def _section_reward_models(table: pd.DataFrame, bootstrap: Bootstrap) -> list[str]:
    aggregate = analysis.reward_models_aggregate(table, bootstrap=bootstrap)
    aggregate = aggregate.assign(
        value=[_with_interval(m, lo, hi) for m, lo, hi in
               zip(aggregate["mean"], aggregate["ci_low"], aggregate["ci_high"], strict=True)]
    )
    keys = ["context_set", "checkpoint", "group"]
    wide = _wide(aggregate, keys, "value", agg="first", extra=("pairs", "n_pairs"))
    facts = paper.facts()
    within = paper.seeds_means()
    within = within[within["checkpoint"] == facts.final_checkpoint].set_index("reward")
    cross = paper.reward_models_means()
    rows: list[dict[str, Any]] = []
    added = False
    for record in wide.to_dict("records"):
        rows.append(record)
        if record["context_set"] != paper.COLLECTED_SET:
            continue
        group = str(record["group"])
        if group == "ts-iq":
            numbers, pairs = cross, facts.cross_pairs
        elif group in ("ts-ts", "iq-iq") and group[:2] in within.index:
            numbers, pairs = within.loc[group[:2]], int(within.loc[group[:2], "n_pairs"])
        else:
            continue
        extra: dict[str, Any] = {c: "" for c in wide.columns}
        extra.update({"context_set": f"{paper.COLLECTED_SET} {PAPER_MARK}", "checkpoint": facts.final_checkpoint,
                      "group": group, "pairs": pairs})
        extra.update({_label(m): f"{float(numbers[m]):.3f}" for m in paper.MEASURES if _label(m) in wide.columns})
        rows.append(extra)
        added = True
    shown = pd.DataFrame(rows, columns=list(wide.columns))
    lines = [
        "Within-reward pairs (e.g. ts-ts, iq-iq) beside cross-reward pairs (e.g. ts-iq): mean over pairs "
        "[95% bootstrap interval over pairs; a single pair shows its own interval over contexts].",
        "",
        markdown_table(_drop_blank(shown, ["context_set"])),
        "",
    ]
    if added:
        lines += [
            f"Rows \"{paper.COLLECTED_SET} {PAPER_MARK}\": the paper after {facts.final_checkpoint:,} dialogues — "
            f"ts-iq from its Table 3 (mean over its {facts.cross_pairs} pairs, on the union of both collected sets), "
            f"ts-ts and iq-iq from its Table 4 (mean over {facts.seed_pairs} trial pairs, on the collected set of "
            "that reward model).",
            "",
        ]
    return lines


def _section_per_turn(table: pd.DataFrame) -> list[str]:
    wide = _wide(table, ["group", "turn_index"], extra=("pairs", "count"))
    return [
        "Scores pooled over the compared pairs, grouped by the turn index of the context.",
        "",
        markdown_table(_drop_blank(wide, ["group"])),
        "",
    ]


def _section_first_turn(table: pd.DataFrame) -> list[str]:
    keys = ["context_set", "group"]
    last = table.groupby(keys, sort=False)["checkpoint"].transform("max")
    final = table[table["checkpoint"] == last]
    shown_measures = [m for m in ("tmr", "dmr") if m in set(final["measure"])] or list(dict.fromkeys(final["measure"]))
    final = final[final["measure"].isin(shown_measures)]
    wide = _wide(final, ["context_set", "checkpoint", "group", "run_a", "run_b", "turn_index"],
                 extra=("contexts", "count"))
    turns = sorted(set(int(t) for t in final["turn_index"]))
    return [
        f"Each compared pair at turn {', '.join(map(str, turns))} (the first system turn), at the last checkpoint "
        "of each group; every checkpoint is in the CSV. The paper (its Figure 4): for every seed pair TMR is 0 or 1 "
        "— the pair agrees on all first turns or on none — and DMR is 1.",
        "",
        markdown_table(_drop_blank(wide, ["context_set"])),
        "",
    ]


def _section_text(table: pd.DataFrame) -> list[str]:
    wide = _wide(table, ["context_set", "analysis", "reward"], extra=("pairs", "count"))
    table2 = paper.convergence()
    matching = table2[np.isclose(table2["tmr"], 1.0, rtol=0.0, atol=_EPS)]
    rows = wide.to_dict("records")
    measures = [m for m in paper.MEASURES if _label(m) in wide.columns]
    at = max((i for i, r in enumerate(rows) if r["context_set"] == paper.COLLECTED_SET
              and r["analysis"] == "convergence"), default=None)
    extra_rows = []
    for reward, part in matching.groupby("reward", sort=False):
        extra: dict[str, Any] = {c: None for c in wide.columns}
        extra.update({"context_set": f"{paper.COLLECTED_SET} {PAPER_MARK}", "analysis": "convergence",
                      "reward": str(reward)})
        extra.update({_label(m): float(part[m].mean()) for m in measures})
        extra_rows.append(extra)
    if at is not None and extra_rows and measures:
        rows[at + 1:at + 1] = extra_rows
    shown = _int_column(pd.DataFrame(rows, columns=list(wide.columns)), "pairs")
    for m in measures:
        shown[_label(m)] = shown[_label(m)].astype(np.float64)
    lines = [
        "Where two compared policies choose the same action (TMR = 1), the action measures say \"identical\"; "
        "the text measures say how differently that action was worded. Mean over the pooled context pairs with "
        "TMR = 1 (pairs: how many).",
        "",
        markdown_table(_drop_blank(shown, ["context_set"])),
        "",
    ]
    if at is not None and extra_rows and measures:
        count = len(matching)
        lines += [
            f"Rows \"{paper.COLLECTED_SET} {PAPER_MARK}\": the paper's Table 2 rows with TMR 1.000 ({count} "
            f"checkpoint pair{'s' if count != 1 else ''}; the paper gives means per comparison, not pair counts).",
            "",
        ]
    return lines


def _section_correlation(table: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    facts = paper.facts()
    subsets = list(dict.fromkeys(table["subset"]))
    if {"all", "nonmatching"} <= set(subsets):
        def n_of(subset: str) -> int:
            row = table[(table["subset"] == subset) & (table["measure_a"] == "tmr") & (table["measure_b"] == "tmr")]
            return int(row["n"].iloc[0]) if len(row) else 0

        n_all, n_non = n_of("all"), n_of("nonmatching")
        cell = table[(table["subset"] == "nonmatching") & (table["measure_a"] == "cer") & (table["measure_b"] == "cmr")]
        parts = []
        if n_all:
            parts.append(f"overall TMR of the pooled pairs {1 - n_non / n_all:.3f} (paper {facts.correlation_tmr:.3f})")
        if len(cell):
            r = float(cell["r"].iloc[0])
            parts.append(f"CER–CMR r on the non-matching pairs {'—' if math.isnan(r) else f'{r:.3f}'} "
                         f"(paper {facts.nonmatching_cer_cmr_r:.3f})")
        if parts:
            lines += ["Beside the paper: " + "; ".join(parts) + ".", ""]
    for subset in subsets:
        matrices = analysis.correlation_matrices(table, subset)
        n = int(np.diag(matrices.n.to_numpy()).max()) if len(matrices.n) else 0
        what = {"all": "All pairs", "nonmatching": "Non-matching pairs (TMR = 0)"}.get(subset, subset)
        for title, matrix in (("Pearson r", matrices.r), ("mean squared error", matrices.mse)):
            shown = matrix.rename(index=_label, columns=_label).reset_index()
            lines += [f"{what}, {title} (up to {n} pairs; — where a measure is constant or undefined):", "",
                      markdown_table(shown), ""]
    return lines


def _section_chance(tables: Mapping[str, pd.DataFrame], bootstrap: Bootstrap) -> list[str]:
    def get(name: str) -> pd.DataFrame | None:
        table = tables.get(name)
        return table if table is not None and not table.empty else None

    contrast = analysis.contrast(
        chance=tables["chance"], convergence=get("convergence"), seeds=get("seeds"),
        reward_models=get("reward_models"), bootstrap=bootstrap,
    )
    wide = _wide(contrast, ["context_set", "comparison"], extra=("pairs", "n_pairs"))
    return [
        "A seeded random policy against trained policies shows what \"dissimilar\" looks like; "
        "beside it the trained comparisons at their final checkpoints (means over pairs).",
        "",
        markdown_table(_drop_blank(wide, ["context_set"])),
        "",
    ]


def _toml_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    return None


def _toml(config: Mapping[str, Any], prefix: str = "") -> str | None:
    """The configuration as TOML (a table's values, then its sub-tables); None if a value has no TOML form."""
    values, tables = [], []
    for key, value in config.items():
        if isinstance(value, Mapping):
            name = f"{prefix}.{key}" if prefix else str(key)
            body = _toml(value, name)
            if body is None:
                return None
            tables.append(f"[{name}]\n{body}".rstrip())
        else:
            text = _toml_value(value)
            if text is None:
                return None
            values.append(f"{key} = {text}")
    return "\n\n".join(part for part in ["\n".join(values), *tables] if part)


def _section_reproduce(record: RunRecord, folder: ExperimentFolder | None) -> list[str]:
    lines = ["## Reproduce", ""]
    config = record.config
    toml = _toml(config) if config is not None else None
    if record.command:
        lines += ["The command that produced this run:", "", "```sh", record.command, "```", ""]
    elif record.command_recorded:
        lines += [
            "This run was started from Python (`simscore.app.experiment.run_experiment`). The same from the command "
            "line: save the configuration below as `experiment.toml` and run",
            "",
            "```sh",
            "simscore run experiment.toml --out DIR",
            "```",
            "",
        ]
    else:
        lines += ["The command that produced these tables was not recorded.", ""]
    versions = record.versions
    made = f" with simscore {versions['simscore']}" if versions.get("simscore") else ""
    text = f"Scored on {record.date} (UTC){made}." if record.date else (f"Made{made}." if made else "")
    if folder is not None and folder.run_log.is_file():
        log = folder.link(folder.run_log)
        text += (" " if text else "") + f"Log of the run: [{log}]({log})."
    if text:
        lines += [text, ""]
    if config is not None:
        if toml is not None:
            lines += ["Configuration (TOML, as `simscore run` reads it):", "", "```toml", toml, "```", ""]
        else:
            lines += ["Configuration:", "", "```json", json.dumps(config, ensure_ascii=False, indent=2), "```", ""]
    if versions:
        lines += ["Package versions:", "", markdown_table(pd.DataFrame(
            {"package": list(versions), "version": [str(v) for v in versions.values()]})), ""]
    saved = record.to_meta()
    block: dict[str, Any] = {key: saved[key] for key in ("seeds", "bootstrap", "findings") if key in saved}
    block["simscore_report_format"] = TABLES_VERSION
    lines += [
        "Seeds, bootstrap and finding thresholds:",
        "",
        "```json",
        json.dumps(block, ensure_ascii=False, indent=2, sort_keys=False, allow_nan=False),
        "```",
        "",
        "Everything above is computed from the saved tables and this section's settings; "
        "`simscore report DIR` rebuilds the figures and this report from them.",
        "",
        f"Please cite the paper whose method and findings this report follows: {paper.CITATION}",
        "",
        "```bibtex",
        paper.BIBTEX,
        "```",
        "",
    ]
    return lines


#: Table name → (section heading, figure caption or None when the section has no figure).
_SECTIONS: dict[str, tuple[str, str | None]] = {
    "performance": ("Absolute performance (paper's Table 1)", "Learning curves of absolute performance"),
    "convergence": ("Convergence (paper's Table 2)", "Convergence curves"),
    "seeds": ("Seeds (paper's Table 4 and Figure 3)", "Seed-pair similarity over checkpoints"),
    "reward_models": ("Reward models (paper's Table 3 and Figure 5)", "Reward-model comparison"),
    "per_turn": ("Per turn (paper's Figure 4)", "Similarity by dialogue turn"),
    "first_turn": ("First system turn per pair (paper's Figure 4)", None),
    "text_at_matching_actions": ("Text measures where the actions match (paper's Table 2)", None),
    "correlation": ("Correlation between measures (paper's Figure 6)", "Correlation heatmaps"),
    "chance": ("Chance level", "Chance level vs trained comparisons"),
}


def _present(tables: Mapping[str, pd.DataFrame], name: str) -> bool:
    table = tables.get(name)
    return table is not None and not table.empty


def build_report(
    tables: Mapping[str, pd.DataFrame],
    record: RunRecord | Mapping[str, Any] | None = None,
    *,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
    base: str | os.PathLike[str] | None = None,
) -> str:
    """The Markdown report of an experiment, with the paper's numbers beside ours.

    Parameters
    ----------
    tables : mapping name → DataFrame
        Tables by schema name (:data:`TABLE_NAMES`); missing or empty ones are skipped.
    record : RunRecord or mapping, optional
        What the tables were made with (:class:`simscore.app.record.RunRecord`, or its saved
        form, the ``meta`` of ``tables.json``).
    figures : mapping figure name → path, optional
        Figures to embed (:func:`simscore.plots.make_figures`).
    base : path-like, optional
        Directory the report is written to: figure, table and log links are relative to it.

    Returns
    -------
    str
        The report text (ends with a newline).

    Examples
    --------
    >>> text = build_report({}, {"title": "Nothing yet"})
    >>> text.splitlines()[0], "## Findings" in text, "## Reproduce" in text
    ('# Nothing yet', True, True)
    """
    record = record if isinstance(record, RunRecord) else RunRecord.from_meta(record)
    figure_paths = {k: Path(v) for k, v in (figures or {}).items()}
    folder = ExperimentFolder(base) if base is not None else None
    bootstrap = record.bootstrap_settings
    config: Mapping[str, Any] = record.config or {}
    thresholds = record.thresholds
    ignored = record.ignored_thresholds
    known = [n for n in TABLE_NAMES if _present(tables, n)]
    for name in known:
        analysis.check_table(tables[name], name, f"tables[{name!r}]")

    title = record.title or "simscore report: similarity of dialogue behaviour"
    lines = [f"# {title}", ""]
    sets: list[str] = []
    measures: list[str] = []
    for name in known:
        table = tables[name]
        if "context_set" in table.columns:
            sets += [s for s in table["context_set"].astype(str) if s]
        if "measure" in table.columns:
            measures += list(table["measure"])
    intro = (
        f"Policies compared with simscore {record.versions.get('simscore', __version__)} "
        "(Ultes & Maier, SIGDIAL 2020)."
    )
    if sets:
        intro += f" Context sets: {', '.join(dict.fromkeys(sets))}."
    if measures:
        intro += f" Measures: {', '.join(_label(m) for m in dict.fromkeys(measures))}."
    intro += (f" The paper's published numbers (its Tables 1–4, shipped with simscore) stand beside ours, "
              f"in rows marked \"{PAPER_MARK}\" or columns named \"paper\".")
    lines += [intro, ""]
    linked = {n: folder.link(folder.table(n)) for n in tables if folder is not None and folder.table(n).is_file()}
    if linked:
        lines += ["Tables: " + ", ".join(f"[{n}]({link})" for n, link in linked.items()) + " (CSV; JSON beside each).",
                  ""]

    lines += ["## Findings", ""]
    results = findings(**{name: tables[name] for name in _FINDING_TABLES if name in known}, thresholds=thresholds)
    lines += _findings_section(results, thresholds, ignored)

    if folder is not None:
        from simscore.app.explain import summary_paragraph

        explained = summary_paragraph(folder.root)
        if explained is not None:
            lines += ["## Explained: agreement beyond chance, where and why", "", explained, ""]

    setup = _section_setup(tables, config)
    if setup:
        lines += ["## Set-up beside the paper's", "", *setup]

    threshold = thresholds.converged_tmr
    for name in known:
        heading, caption = _SECTIONS[name]
        lines += [f"## {heading}", ""]
        if caption is not None:
            lines += _figure(figure_paths, name, folder, caption)
        table = tables[name]
        if name == "performance":
            lines += _section_performance(table, config)
        elif name == "convergence":
            lines += _section_convergence(table, threshold, config)
        elif name == "seeds":
            lines += _section_seeds(table, bootstrap)
        elif name == "reward_models":
            lines += _section_reward_models(table, bootstrap)
        elif name == "per_turn":
            lines += _section_per_turn(table)
        elif name == "first_turn":
            lines += _section_first_turn(table)
        elif name == "text_at_matching_actions":
            lines += _section_text(table)
        elif name == "correlation":
            lines += _section_correlation(table)
        elif name == "chance":
            lines += _section_chance(tables, bootstrap)

    signatures = record.signatures
    lines += ["## Measure signatures", ""]
    if signatures:
        lines += [markdown_table(pd.DataFrame(
            {"measure": list(signatures), "signature": [f"`{s}`" for s in signatures.values()]}
        )), ""]
    else:
        lines += ["No signatures were recorded.", ""]

    lines += _section_reproduce(record, folder)
    return "\n".join(lines)


#: The tables :func:`~simscore.app.findings.findings` reads.
_FINDING_TABLES = ("convergence", "seeds", "reward_models", "correlation", "first_turn", "text_at_matching_actions")


def write_report(
    directory: str | os.PathLike[str],
    tables: Mapping[str, pd.DataFrame],
    record: RunRecord | Mapping[str, Any] | None = None,
    *,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
) -> Path:
    """Write ``DIR/report.md`` atomically; draws the figures into ``DIR/figures`` unless given.

    Parameters
    ----------
    directory : path-like
        The experiment's output folder.
    tables, record
        As for :func:`build_report`.
    figures : mapping figure name → path, optional
        Already drawn figures; default: :func:`simscore.plots.make_figures` into
        ``DIR/figures`` with the record's bootstrap settings.

    Returns
    -------
    Path
        The report file.
    """
    from simscore.plots import make_figures

    folder = ExperimentFolder(directory)
    record = record if isinstance(record, RunRecord) else RunRecord.from_meta(record)
    if figures is None:
        figures = make_figures(folder.figures, tables, bootstrap=record.bootstrap_settings)
    else:
        missing = [str(p) for p in figures.values() if not Path(p).is_file()]
        if missing:
            raise FileNotFoundError(f"figures: no such file(s): {', '.join(missing)}")
    text = build_report(tables, record, figures=figures, base=folder.root)
    path = folder.report
    atomic_write_text(path, text)
    return path


def rebuild_report(directory: str | os.PathLike[str]) -> Path:
    """Redraw the figures and rewrite ``report.md`` from the tables saved in ``directory``.

    Returns
    -------
    Path
        The report file.
    """
    folder = ExperimentFolder(directory)
    saved = load_tables(folder.root)
    try:
        record = RunRecord.from_meta(saved.meta)
    except ValueError as exc:
        raise FileFormatError(folder.tables_index, str(exc)) from None
    return write_report(folder.root, saved.tables, record)


def _cmd_report(args: argparse.Namespace) -> int:
    path = rebuild_report(args.directory)
    print(f"wrote {path}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore report DIR`` on the CLI's sub-command parsers."""
    p = subparsers.add_parser("report", help="rebuild figures and report.md from the tables saved in DIR")
    p.add_argument("directory", help="an experiment's output folder (with tables.json)")
    p.set_defaults(func=_cmd_report)
