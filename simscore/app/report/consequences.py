"""The report's section "Does the difference matter?" (application layer).

Present when the experiment made the ``consequences`` table (``[consequences]``, on by default;
:mod:`simscore.app.experiment.consequences`): for the late convergence pairs, the seed pairs of
each reward model, the reward-model pairs and each final policy against the random policy, it
says how often the two policies act differently at a C_col context and, where they do, how
often that changes how the dialogue ends (with the agreeing contexts as the control), how often
task success flips each way, and how much of it the one differing action causes. One plain
sentence per comparison, whatever it shows, then the numbers of every group and pair. The paper
has no such experiment.
"""

from __future__ import annotations

import pandas as pd

from simscore.analysis.tables_io import markdown_table
from simscore.app.report.base import ReportInput, format_estimate
from simscore.plots.figures import consequences_groups

__all__ = ["section_consequences"]

#: How the comparisons read in a sentence.
_WHO = {"convergence": "Late convergence ({group}: previous → final checkpoint)",
        "seeds": "Seeds ({group})", "reward models": "Reward models ({group})",
        "random": "Trained ({group}) → random, the sanity end"}


def _cell(row: pd.Series, name: str, signed: bool = False) -> str:
    return format_estimate(float(row[name]), float(row[f"{name}_low"]), float(row[f"{name}_high"]), signed)


def _row(rows: pd.DataFrame, effect: str, actions: str) -> pd.Series | None:
    found = rows[(rows["effect"] == effect) & (rows["actions"] == actions)]
    return found.iloc[0] if len(found) else None


def _count(n: int, noun: str) -> str:
    """``1 context``, ``2 contexts``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _sentence(rows: pd.DataFrame) -> str:
    differ, agree = _row(rows, "total", "differ"), _row(rows, "total", "agree")
    alone = _row(rows, "action", "differ")
    first = rows.iloc[0]
    who = _WHO.get(str(first["comparison"]), "{group}").format(group=first["group"])
    if differ is None or agree is None:
        return f"{who}: the table lacks its rows of the whole difference."
    pairs = int(differ["n_pairs"])
    n_differ, n_all = int(differ["count"]), int(differ["count"]) + int(agree["count"])
    text = (f"{who}, {pairs} pair{'s' if pairs != 1 else ''}: the actions differ in {n_differ:,} of {n_all:,} "
            f"continuations ({n_differ / n_all:.1%}; {_count(int(differ['contexts']), 'context')})" if n_all
            else f"{who}: none")
    if not n_differ:
        return text + "; nothing to assess where they differ."
    text += (f"; there the outcome changed in {_cell(differ, 'outcome_changed')} (where they agree: "
             f"{_cell(agree, 'outcome_changed')}), task success got worse in {_cell(differ, 'negative_flip_rate')} "
             f"and better in {_cell(differ, 'positive_flip_rate')} (McNemar {int(differ['mcnemar_negative'])}:"
             f"{int(differ['mcnemar_positive'])}, p = {float(differ['mcnemar_p']):.3g})")
    if alone is not None:
        text += f", and the one differing action alone changed it in {_cell(alone, 'outcome_changed')}"
    return text + "."


def _groups_table(groups: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (comparison, group), part in groups.groupby(["comparison", "group"], sort=False):
        differ, agree = _row(part, "total", "differ"), _row(part, "total", "agree")
        alone = _row(part, "action", "differ")
        if differ is None or agree is None:
            continue
        rows.append({
            "comparison": comparison, "group": group, "pairs": int(differ["n_pairs"]),
            "differ (contexts)": f"{int(differ['count']):,} ({int(differ['contexts']):,})",
            "outcome changed": _cell(differ, "outcome_changed"),
            "control: agree": _cell(agree, "outcome_changed"),
            "success worse": _cell(differ, "negative_flip_rate"),
            "success better": _cell(differ, "positive_flip_rate"),
            "reward B − A": _cell(differ, "reward_difference", signed=True),
            "turns B − A": _cell(differ, "turns_difference", signed=True),
            "action alone": "—" if alone is None else _cell(alone, "outcome_changed"),
        })
    return pd.DataFrame(rows)


def _pairs_table(table: pd.DataFrame) -> pd.DataFrame:
    pairs = table[(table["pair"] != "pooled") & (table["effect"] == "total")]
    rows = []
    for (_comparison, label), part in pairs.groupby(["comparison", "pair"], sort=False):
        differ, agree = _row(part, "total", "differ"), _row(part, "total", "agree")
        if differ is None or agree is None:
            continue
        rows.append({"comparison": differ["comparison"], "pair (A → B)": label.replace("->", "→"),
                     "context set": differ["context_set"], "differ": int(differ["count"]),
                     "outcome changed": _cell(differ, "outcome_changed"),
                     "control: agree": _cell(agree, "outcome_changed"),
                     "success worse": _cell(differ, "negative_flip_rate"),
                     "success better": _cell(differ, "positive_flip_rate")})
    return pd.DataFrame(rows)


def section_consequences(table: pd.DataFrame, run: ReportInput) -> list[str]:
    """The section "Does the difference matter?" (see the module docstring)."""
    continuations = int(table["continuations"].iloc[0])
    lines = [
        "Each C_col context is a turn of a simulated dialogue whose user can be rebuilt, so the dialogue was continued "
        f"from that turn over {continuations} user continuation{'s' if continuations != 1 else ''} with common random "
        "numbers: with the baseline A, with the candidate B, and with A's action at that turn and B afterwards "
        "(\"action alone\": the effect of the one differing action). Where A and B said different acts at the context "
        "(\"differ\") and, as the control, where they said the same: the share of continuations whose outcome changed "
        "(task success, turns, IQ or reward), how often task success got worse (a negative flip: A's continuation "
        "succeeds, B's fails) or better, and the mean reward and turn differences, with "
        f"{run.bootstrap.confidence:.0%} intervals that resample dialogues and McNemar's exact test of the success "
        "pairs. The reward is the pair's own reward model's return (R_TS for the cross pairs). The policies act "
        "greedily, as on the context sets above; the random policy draws from each continuation's randomness. "
        "Every effect (total, action alone, after) and group is in [consequences.csv](consequences.csv).",
        "",
    ]
    groups = consequences_groups(table)
    for _, part in groups.groupby(["comparison", "group"], sort=False):
        lines.append(f"- {_sentence(part)}")
    lines += ["", "Per comparison (pooled over its pairs where it has several; rates where the actions differ, "
              "mean [interval]):", "", markdown_table(_groups_table(groups)), "",
              "Every pair (the whole difference, A throughout against B throughout):", "",
              markdown_table(_pairs_table(table)), "",
              "The paper has no such experiment: there is no paper column here.", ""]
    return lines
