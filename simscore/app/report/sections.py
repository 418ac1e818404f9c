"""The report's sections about the tables, with the paper's numbers beside ours (application layer).

:data:`SECTIONS` lists them in report order: one :class:`Section` per table of
:mod:`simscore.analysis` that the report presents (its heading, its figure's caption, and the
function that writes its text from the table and a :class:`ReportInput`). The paper's numbers
come from :mod:`simscore.app.report.paper` (rows marked "(paper)", columns named "paper").
:func:`simscore.app.report.document.build_report` puts the findings, the set-up, these sections and
the "Reproduce" section together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from simscore import analysis
from simscore.analysis.tables_io import markdown_table
from simscore.app.report import paper
from simscore.app.report._findings_rules import one_reward_model
from simscore.app.report.base import PAPER_MARK, ReportInput, Section, measure_label
from simscore.app.report.consequences import section_consequences
from simscore.app.report.flows import section_flow_strata
from simscore.app.report.maps import section_behaviour_map, section_plateau
from simscore.app.report.performance import section_performance
from simscore.app.report.power import reward_models_power_lines, seeds_power_lines

__all__ = ["SECTIONS", "TABLE_NAMES"]


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
    return wide.rename(columns={m: measure_label(m) for m in measures})


def _with_interval(mean: float, low: float, high: float, digits: int = 3) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "—"
    if any(v is None or math.isnan(v) for v in (low, high)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _drop_blank(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Leave out label columns that hold a single empty string (e.g. no context set name)."""
    blank = [c for c in columns if c in frame.columns and frame[c].astype(str).eq("").all()]
    return frame.drop(columns=blank)


_EPS = 1e-9


def _nearest(available: Sequence[int], k: int) -> int:
    """The checkpoint in ``available`` nearest to ``k`` (the smaller one on a tie)."""
    return min(available, key=lambda a: (abs(a - k), a))


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
    measures = [m for m in reference.columns if measure_label(m) in ours.columns and m in paper.MEASURES]
    final = int(reference["checkpoint"].max())

    def paper_row(reward: str, checkpoint: int) -> dict[str, Any] | None:
        match = reference[(reference["reward"] == reward) & (reference["checkpoint"] == checkpoint)]
        if match.empty:
            return None
        out: dict[str, Any] = {c: "" for c in ours.columns}
        out.update({"context_set": f"{paper.COLLECTED_SET} {PAPER_MARK}", "reward": reward,
                    "checkpoint": checkpoint, count_column: int(match[reference_count].iloc[0])})
        out.update({measure_label(m): float(match[m].iloc[0]) for m in measures})
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


def _section_convergence(table: pd.DataFrame, run: ReportInput) -> list[str]:
    threshold, config = run.thresholds.converged_tmr, run.config
    keys = ["context_set", "reward", "checkpoint"]
    runs = table.assign(runs=table.groupby(keys, sort=False)["run"].transform("nunique"))
    mean_over_runs = _wide(runs, keys, extra=("runs", "runs"))
    facts = paper.facts()
    shown, note = _paper_rows(mean_over_runs, paper.convergence_means(), count_column="runs",
                              reference_count="n_trials", what=f"Table 2 (mean over its {facts.trials} trials, on C_col)")
    every = config.training.every if config is not None else None
    if note and every is not None and every != facts.every:
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


def _sensitivity(run: ReportInput, which: str) -> list[str]:
    """One line: the final checkpoint's means without the contexts where the user has said bye."""
    table = run.table("sensitivity")
    if table is None:
        return []
    part = table[(table["analysis"] == which) & (table["measure"] == "tmr")]
    if part.empty:
        return []
    shown = "; ".join(
        f"{r['group']} {r['mean_without_bye']:.3f} over {int(r['contexts_without_bye']):,} contexts "
        f"(with them {r['mean_all']:.3f} over {int(r['contexts_all']):,})"
        for _, r in part.iterrows()
    )
    return [
        f"Sensitivity: at checkpoint {int(part['checkpoint'].iloc[0]):,}, without the C_col contexts in which the user "
        f"has just said bye (the simulator replaces the system's act there by bye(), so the policy's choice is "
        f"arbitrary), mean TMR per group: {shown}.",
        "",
    ]


def _units(run: ReportInput, context_set: str, part: str = "") -> str:
    """", N contexts (D distinct belief states, U dialogues)" of a context set (or its part), or ""."""
    table = run.table("contexts")
    if table is None:
        return ""
    row = table[(table["context_set"] == context_set) & (table["part"].astype(str) == part)]
    if row.empty:
        return ""
    r = row.iloc[0]
    dialogues = f", {int(r['dialogues']):,} dialogues" if int(r["dialogues"]) else ""
    return f"{int(r['contexts']):,} contexts ({int(r['distinct_states']):,} distinct belief states{dialogues})"


def _section_seeds(table: pd.DataFrame, run: ReportInput) -> list[str]:
    aggregate = analysis.seeds_aggregate(table, bootstrap=run.bootstrap)
    wide = _wide(aggregate, ["context_set", "reward", "checkpoint"], extra=("pairs", "n_pairs"))
    shown, note = _paper_rows(wide, paper.seeds_means(), count_column="pairs", reference_count="n_pairs",
                              what=f"Table 4 (mean over its {paper.facts().seed_pairs} trial pairs, on C_col)")
    parts = [f"{reward}: {units}" for reward in dict.fromkeys(table["reward"].astype(str))
             if (units := _units(run, paper.COLLECTED_SET, reward))]
    where = (" On C_col each reward model's runs are compared on the contexts collected from its own runs ("
             + "; ".join(parts) + "); intervals there resample dialogues.") if parts else ""
    return [
        "Every pair of runs of one reward model at the same checkpoint; mean over pairs." + where,
        "",
        markdown_table(_drop_blank(shown, ["context_set", "reward"])),
        "",
        *([note, ""] if note else []),
        *seeds_power_lines(table, run.table("convergence"), run.bootstrap.confidence),
        *_sensitivity(run, "seeds"),
    ]


def _section_reward_models(table: pd.DataFrame, run: ReportInput) -> list[str]:
    aggregate = analysis.reward_models_aggregate(table, bootstrap=run.bootstrap)
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
        extra.update({measure_label(m): f"{float(numbers[m]):.3f}" for m in paper.MEASURES if measure_label(m) in wide.columns})
        rows.append(extra)
        added = True
    shown = pd.DataFrame(rows, columns=list(wide.columns))
    lines = [
        "Within-reward pairs (e.g. ts-ts, iq-iq) beside cross-reward pairs (e.g. ts-iq): mean over pairs "
        f"[{run.bootstrap.confidence * 100:g}% bootstrap interval over pairs; a single pair shows its own interval "
        "over contexts].",
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
    union = _units(run, paper.COLLECTED_SET)
    if union:
        lines += [
            f"Every pair here is scored on the union of both collected sets ({union}), as the paper's Table 3; the "
            "seeds table scores each reward model's pairs on its own part of C_col only, so a within-reward pair "
            "(ts-ts, iq-iq) at the same checkpoint has other numbers there.",
            "",
        ]
    return [*lines, *reward_models_power_lines(table, run.bootstrap.confidence), *_sensitivity(run, "reward_models")]


def _absent_reward_models(run: ReportInput) -> list[str]:
    only = one_reward_model(run.table("convergence"))
    if only is None:
        return []
    return [f"Not assessed: one reward model in this run ({only}). Comparing reward models needs runs of two "
            "(`rewards = [\"ts\", \"iq\"]` under `[training]`).", ""]


def _section_per_turn(table: pd.DataFrame, run: ReportInput) -> list[str]:
    wide = _wide(table, ["group", "turn_index"], extra=("pairs", "count"))
    thin = sorted({int(t) for t, n in zip(table["turn_index"], table["count"], strict=True) if n < 10})
    return [
        "On C_col: scores pooled over the compared pairs (at the final checkpoint), grouped by the turn index of the "
        "context; \"pairs\" counts pairs × contexts of that turn, and intervals resample dialogues.",
        "",
        markdown_table(_drop_blank(wide, ["group"])),
        "",
        *([f"Turns {', '.join(map(str, thin))} rest on fewer than 10 pooled pairs of contexts: read them as "
           "anecdotes.", ""] if thin else []),
    ]


def _section_first_turn(table: pd.DataFrame, run: ReportInput) -> list[str]:
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


def _section_text(table: pd.DataFrame, run: ReportInput) -> list[str]:
    wide = _wide(table, ["context_set", "analysis", "reward"], extra=("pairs", "count"))
    table2 = paper.convergence()
    matching = table2[np.isclose(table2["tmr"], 1.0, rtol=0.0, atol=_EPS)]
    rows = wide.to_dict("records")
    measures = [m for m in paper.MEASURES if measure_label(m) in wide.columns]
    at = max((i for i, r in enumerate(rows) if r["context_set"] == paper.COLLECTED_SET
              and r["analysis"] == "convergence"), default=None)
    extra_rows = []
    for reward, part in matching.groupby("reward", sort=False):
        extra: dict[str, Any] = {c: None for c in wide.columns}
        extra.update({"context_set": f"{paper.COLLECTED_SET} {PAPER_MARK}", "analysis": "convergence",
                      "reward": str(reward)})
        extra.update({measure_label(m): float(part[m].mean()) for m in measures})
        extra_rows.append(extra)
    if at is not None and extra_rows and measures:
        rows[at + 1:at + 1] = extra_rows
    shown = _int_column(pd.DataFrame(rows, columns=list(wide.columns)), "pairs")
    for m in measures:
        shown[measure_label(m)] = shown[measure_label(m)].astype(np.float64)
    lines = [
        "Where two compared policies choose the same action (TMR = 1), the action measures say \"identical\"; "
        "the text measures say how differently that action was worded. Mean over the pooled context pairs with "
        "TMR = 1 (pairs: how many).",
        "",
        markdown_table(_drop_blank(shown, ["context_set"])),
        "",
        "Why the levels differ from the paper's: ours come from other text models than the paper's (which ones: the "
        "measure signatures at the end of this report) and from a template NLG that words each "
        "act with one of a few templates chosen per policy instance, while the paper's NLG models were trained per "
        "policy; so only the direction is comparable (the same act, other words — which our NLG guarantees by "
        "construction), not the values.",
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


def _section_correlation(table: pd.DataFrame, run: ReportInput) -> list[str]:
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
            shown = matrix.rename(index=measure_label, columns=measure_label).reset_index()
            lines += [f"{what}, {title} (up to {n} pairs; — where a measure is constant or undefined):", "",
                      markdown_table(shown), ""]
    return lines


def _section_chance(table: pd.DataFrame, run: ReportInput) -> list[str]:
    contrast = analysis.contrast(
        chance=table, convergence=run.table("convergence"), seeds=run.table("seeds"),
        reward_models=run.table("reward_models"), bootstrap=run.bootstrap,
    )
    wide = _wide(contrast, ["context_set", "comparison"], extra=("pairs", "n_pairs"))
    return [
        "A seeded random policy against trained policies shows what \"dissimilar\" looks like; "
        "beside it the trained comparisons at their final checkpoints (means over pairs).",
        "",
        markdown_table(_drop_blank(wide, ["context_set"])),
        "",
    ]



#: The report's sections about tables, in report order.
SECTIONS: tuple[Section, ...] = (
    Section("performance", "Absolute performance (paper's Table 1)", "Learning curves of absolute performance",
            section_performance),
    Section("convergence", "Convergence (paper's Table 2)", "Convergence curves", _section_convergence),
    Section("checkpoint_plateau", "Where training plateaus: the map of each run's checkpoints", None, section_plateau),
    Section("seeds", "Seeds (paper's Table 4 and Figure 3)", "Seed-pair similarity over checkpoints", _section_seeds),
    Section("reward_models", "Reward models (paper's Table 3 and Figure 5)", "Reward-model comparison",
            _section_reward_models, _absent_reward_models),
    Section("behaviour_map", "Who behaves like whom: the map of the final policies (beside finding 5)",
            "Who behaves like whom: the final policies' similarity, clustered, and their map", section_behaviour_map),
    Section("per_turn", "Per turn (paper's Figure 4)", "Similarity by dialogue turn", _section_per_turn),
    Section("first_turn", "First system turn per pair (paper's Figure 4)", None, _section_first_turn),
    Section("text_at_matching_actions", "Text measures where the actions match (paper's Table 2)", None,
            _section_text),
    Section("correlation", "Correlation between measures (paper's Figure 6)", "Correlation heatmaps",
            _section_correlation),
    Section("chance", "Chance level", "Chance level vs trained comparisons", _section_chance),
    Section("consequences", "Does the difference matter?", "Where the actions differ: does the dialogue end "
            "differently?", section_consequences),
    Section("flow_strata", "Seen and unseen conversation flows", "Similarity per flow stratum on the held-out users",
            section_flow_strata),
)

#: The tables the report analyses, in report order.
TABLE_NAMES: tuple[str, ...] = tuple(section.table for section in SECTIONS)
