"""The report's section on seen and unseen conversation flows (application layer).

Present only when the experiment had a ``[held_out]`` table (:mod:`simscore.app.experiment.held_out`): it
says which users the policies were trained on and which they met in the held-out set, what the
flow graph of the training users' dialogues holds and how much of the held-out set leaves it,
and how similar seeds, reward models and the random policy are on each flow stratum
(:mod:`simscore.app.experiment.flow_strata`: the ``flow_strata``, ``flow_strata_tests`` and ``flow_graph``
tables), one plain sentence per comparison, whatever it shows. The paper has no such experiment.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from simscore.analysis.tables_io import markdown_table
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.report.base import ReportInput, format_estimate, measure_label

__all__ = ["section_flow_strata"]

#: What each stratification means, for the sentences.
_STRATA_WORDS = {
    "flow_prefix": ("before their dialogue left the training users' flow graph", "after it left the graph"),
    "flow": ("on dialogues whose whole flow is in the graph (seen)", "on dialogues whose flow is not (unseen)"),
}
_MAIN = ("flow_prefix", "flow")


def _who(comparison: str, group: str) -> str:
    if comparison == "seeds":
        return f"Seeds ({group})"
    if comparison == "reward models":
        return f"Reward models ({group})"
    return f"The random policy against the {group} runs"


def _populations(config: ExperimentConfig | None) -> list[str]:
    held = config.held_out if config is not None else None
    changes = []
    if config is not None and held is not None:
        for key, value in held.user.items():
            changes.append(f"`{key}` {_range(getattr(config.training.user, key))} → {_range(value)}")
    lines = ["The policies were trained with the users of [training.user]; the held-out users change "
             + (", ".join(changes) if changes else "nothing recorded") + " and keep everything else. "
             f"Each run's final policy met {held.dialogues if held else '?'} held-out dialogues (the context set held) and "
             f"{held.graph_dialogues if held else '?'} dialogues with the training users, from which, for all runs together, "
             "the flow graph was built (a node per turn pair: which slots are filled; FRAPI's construction). A context "
             "lies on a seen flow prefix when its dialogue is still in the graph at its turn."]
    return lines


def _range(value: Any) -> str:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"{value[0]:g}–{value[1]:g}" if all(isinstance(v, (int, float)) for v in value) else str(list(value))
    return str(value)


def _graph_facts(graph: pd.DataFrame | None) -> list[str]:
    if graph is None:
        return []
    g = graph.iloc[0]
    lines = [
        f"Flow graph: {int(g['nodes'])} nodes, {int(g['edges'])} edges ({g['abstraction']}), from "
        f"{int(g['graph_dialogues']):,} dialogues ({int(g['graph_turn_pairs']):,} turn pairs). Held-out set: "
        f"{int(g['dialogues'])} dialogues, {int(g['unseen_dialogues'])} of them ({g['unseen_dialogue_share']:.1%}) on "
        f"unseen flows; {int(g['contexts']):,} contexts, {g['unseen_context_share']:.1%} on unseen flows and "
        f"{g['unseen_prefix_share']:.1%} after their dialogue left the graph.",
        "",
    ]
    patterns = [c[len("pattern_"):] for c in graph.columns if c.startswith("pattern_") and not c.endswith("_unseen")]
    if patterns:
        rows = [{"pattern": p, "contexts": int(g[f"pattern_{p}"]), "of them on unseen flows": int(g[f"pattern_{p}_unseen"])}
                for p in patterns]
        lines += ["Complex patterns of the held-out contexts (FRAPI's: several slots in one turn, repetition, "
                  "clarification or confirmation, goal change):", "", markdown_table(pd.DataFrame(rows)), ""]
    return lines


def _words(by: str) -> tuple[str, str, str, str]:
    """The two strata of ``by`` (as the table labels them) and what they mean."""
    if by in _STRATA_WORDS:
        return ("seen", "unseen", *_STRATA_WORDS[by])
    pattern = by.removeprefix("pattern_").replace("_", " ")
    return ("False", "True", f"on contexts without the pattern {pattern}", "on those with it")


def _sentence(strata: pd.DataFrame, tests: pd.DataFrame | None, measure: str, by: str) -> str | None:
    rows = strata[(strata["by"] == by) & (strata["measure"] == measure)]
    rows = rows.set_index(rows["stratum"].astype(str))
    a, b, *words = _words(by)
    if not {a, b} <= set(rows.index):
        return None
    seen, unseen = rows.loc[a], rows.loc[b]
    first = _who(str(seen["comparison"]), str(seen["group"]))
    text = (f"{first}: {measure_label(measure)} {seen['mean']:.3f} [{seen['ci_low']:.3f}, {seen['ci_high']:.3f}] "
            f"{words[0]} ({int(seen['count'])} contexts, {int(seen['dialogues'])} dialogues) and "
            f"{unseen['mean']:.3f} [{unseen['ci_low']:.3f}, {unseen['ci_high']:.3f}] {words[1]} "
            f"({int(unseen['count'])} contexts, {int(unseen['dialogues'])} dialogues)")
    if tests is not None:
        test = tests[(tests["by"] == by) & (tests["measure"] == measure)]
        if len(test):
            t = test.iloc[0]
            shown = format_estimate(t["difference"], t["difference_low"], t["difference_high"], signed=True)
            text += f"; difference {a} − {b} {shown}, {t['p']}"
    return text + "."


def _pooled(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["pair"] == "pooled"]


def section_flow_strata(table: pd.DataFrame, run: ReportInput) -> list[str]:
    """The section "Seen and unseen conversation flows" (see the module docstring)."""
    strata = _pooled(table)
    tests_table = run.table("flow_strata_tests")
    tests = _pooled(tests_table) if tests_table is not None else None
    measures = list(dict.fromkeys(strata["measure"]))
    lead = "tmr" if "tmr" in measures else measures[0]
    lines = [*_populations(run.config), "", *_graph_facts(run.table("flow_graph"))]
    lines += [f"What it shows ({measure_label(lead)}; intervals resample whole dialogues, {run.bootstrap.confidence:.0%}; "
              "two-sided permutation tests that move whole dialogues; pooled over the pairs of each group, at the final "
              "checkpoint; every pair and measure is in flow_strata.csv and flow_strata_tests.csv):", ""]
    present = list(dict.fromkeys(strata["by"]))
    missing = [by for by in _MAIN if by not in present]
    # where every held-out context has one flow label, the sentences speak of the complex patterns
    said = [by for by in _MAIN if by in present] or [by for by in present if by.startswith("pattern_")]
    if missing:
        lines += [f"Not stratified by {', '.join(missing)}: every held-out context has the same label there (the "
                  "shares above say which), so the held-out users did not lead the policies off the training users' "
                  "flows" + (" and the comparisons below are per complex pattern." if not set(_MAIN) & set(present)
                             else "."), ""]
    groups = list(dict.fromkeys(zip(strata["comparison"], strata["group"], strict=True)))
    for comparison, group in groups:
        mine = strata[(strata["comparison"] == comparison) & (strata["group"] == group)]
        theirs = None if tests is None else tests[(tests["comparison"] == comparison) & (tests["group"] == group)]
        for by in said:
            sentence = _sentence(mine, theirs, lead, by)
            if sentence is not None:
                lines.append(f"- {sentence}")
    rewards = {str(g) for c, g in groups if c != "reward models"}
    if len(rewards) == 1 and all(c != "reward models" for c, _ in groups):
        lines.append(f"- Reward models: not assessed: one reward model in this run ({rewards.pop()}).")
    lines.append("")
    main = strata[strata["by"].isin(said)].copy()
    main["value"] = [format_estimate(m, lo, hi) for m, lo, hi in zip(main["mean"], main["ci_low"], main["ci_high"],
                                                                strict=True)]
    keys = ["comparison", "group", "pairs", "by", "stratum"]
    wide = main.pivot_table(index=keys, columns="measure", values="value", aggfunc="first", sort=False)
    counts = main.groupby(keys, sort=False)[["count", "dialogues"]].max()
    shown = counts.rename(columns={"count": "contexts"}).join(wide[measures]).reset_index()
    shown = shown.rename(columns={m: measure_label(m) for m in measures})
    lines += ["Per stratum, pooled over the pairs of each group (mean [interval]):", "", markdown_table(shown), ""]
    if tests is not None and len(tests):
        t = tests.copy()
        t["value"] = [f"{d:+.3f} ({p})" for d, p in zip(t["difference"], t["p"], strict=True)]
        diff = t.pivot_table(index=["comparison", "group", "by", "a", "b"], columns="measure", values="value",
                             aggfunc="first", sort=False)
        diff = diff[[m for m in measures if m in diff.columns]].reset_index()
        lines += ["Difference a − b between the strata of each stratification (flow, flow prefix and each complex "
                  "pattern: False − True), with the permutation test's p-value:", "",
                  markdown_table(diff.rename(columns={m: measure_label(m) for m in measures})), ""]
    lines += ["The paper has no such experiment: there is no paper column here.", ""]
    return lines
