"""The report's section on absolute performance, the paper's Table 1 (application layer).

It shows, at the checkpoints the paper reports (all checkpoints are in ``performance.csv``),
task success, interaction quality and length with intervals over the evaluation users and the
spread of the runs, the paper's numbers beside them, the length in PyDial's count beside
PyDial3's own reference (:data:`simscore.app.report.paper.PYDIAL3_LENGTHS`), and — from the
``policies`` table (:mod:`simscore.app.experiment.reference`) — what the IQ estimator makes of the
final, the handcrafted and the random policies.
"""

from __future__ import annotations

import math

import pandas as pd

from simscore.analysis.tables_io import markdown_table
from simscore.app.report import paper
from simscore.app.report.base import ReportInput

__all__ = ["SATURATED_SUCCESS", "section_performance"]

#: Task success at or above this at every checkpoint of a reward model counts as saturated:
#: task success can no longer tell its runs apart (the paper's argument for similarity).
SATURATED_SUCCESS = 0.99
_EPS = 1e-9


def _interval(mean: float, low: float, high: float, digits: int) -> str:
    if math.isnan(mean):
        return "—"
    if math.isnan(low) or math.isnan(high):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _span(low: float, high: float, digits: int) -> str:
    return f"{low:.{digits}f}" if abs(high - low) < 10 ** -(digits + 1) else f"{low:.{digits}f}–{high:.{digits}f}"


def _shown_rows(table: pd.DataFrame, checkpoints: tuple[int, ...]) -> pd.DataFrame:
    """The rows at the paper's checkpoints (and the last of each reward), or all when none match."""
    keep = table["checkpoint"].isin(checkpoints)
    last = table.groupby("reward", sort=False)["checkpoint"].transform("max") == table["checkpoint"]
    chosen = table[keep | (last & keep.any())]
    return chosen if not chosen.empty else table


def _table1(table: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    reference = paper.performance()
    facts = paper.facts()
    rows = []
    exact = True
    for _, r in _shown_rows(table, facts.performance_checkpoints).iterrows():
        theirs = reference[(reference["reward"] == r["reward"]) & (reference["checkpoint"] == r["checkpoint"])]
        exact &= not theirs.empty
        p = theirs.iloc[0] if not theirs.empty else None
        rows.append({
            "reward": r["reward"], "checkpoint": int(r["checkpoint"]),
            "runs × users": f"{int(r['n_runs'])} × {int(r['n_dialogues']) // max(int(r['n_runs']), 1):,}",
            "task success": _interval(r["success_rate"], r["success_rate_low"], r["success_rate_high"], 3),
            "IQ (1–5)": _interval(r["avg_iq"], r["avg_iq_low"], r["avg_iq_high"], 2),
            "length (turns)": _interval(r["avg_length"], r["avg_length_low"], r["avg_length_high"], 2),
            "run means: length": _span(r["avg_length_run_min"], r["avg_length_run_max"], 2),
            "paper success": "—" if p is None else f"{p['success_rate']:.2f}",
            "paper IQ": "—" if p is None else f"{p['avg_iq']:.2f}",
            "paper length": "—" if p is None else f"{p['avg_length']:.2f}",
        })
    return pd.DataFrame(rows), exact


def _policies(policies: pd.DataFrame) -> list[str]:
    shown = pd.DataFrame({
        "policy": [f"{p} (final)" if r else p for p, r in zip(policies["policy"], policies["reward"], strict=True)],
        "users": policies["n"].astype(int),
        "task success": policies["success_rate"].map(lambda v: f"{v:.3f}"),
        "mean IQ": policies["avg_iq"].map(lambda v: f"{v:.2f}"),
        **{f"IQ {k}": policies[f"iq_{k}"].map(lambda v: f"{100 * v:.0f} %") for k in range(1, 6)},
        "length (turns)": policies["avg_length"].map(lambda v: f"{v:.2f}"),
    })
    return [
        "What the IQ estimate makes of the final policies, the handcrafted policy and the random one, on the users "
        "of every run's final evaluation (each final policy on its own run's, the handcrafted and random ones on all "
        "of them): the share of dialogues in each IQ class.",
        "",
        markdown_table(shown),
        "",
    ]


def section_performance(table: pd.DataFrame, run: ReportInput) -> list[str]:
    """Render the ``performance`` table (see the module docstring)."""
    facts = paper.facts()
    ref = paper.PYDIAL3_LENGTHS
    lines: list[str] = []
    saturated = [str(reward) for reward, part in table.groupby("reward", sort=False)
                 if (part["success_rate"] >= SATURATED_SUCCESS - _EPS).all()]
    if saturated:
        lines += [
            f"**Task success is saturated** for {', '.join(saturated)}: at least {SATURATED_SUCCESS:g} at every "
            f"checkpoint, so it cannot tell these runs apart — the paper's point (its Table 1 stays between "
            f"{facts.success_range[0]:.2f} and {facts.success_range[1]:.2f}). Length and IQ still move a little; "
            "the similarity measures below tell the runs apart.",
            "",
        ]
    shown, exact = _table1(table)
    lines += [
        "Mean over the evaluation dialogues of the runs at each checkpoint (every run meets its own fresh users at "
        "every checkpoint), with a 95% interval **over the evaluation users, the trained runs held fixed** (Wilson "
        "for success, Student-t for IQ and length); how much the runs themselves differ is the range of their "
        "means (\"run means\"), which that interval leaves out. "
        + ("Rows at the checkpoints of the paper's Table 1; every checkpoint is in [performance.csv](performance.csv)."
           if exact else "Every checkpoint of this run."),
        "",
        markdown_table(shown),
        "",
    ]
    evaluation = run.config.training.eval_dialogues if run.config is not None else None
    note = (f"Paper columns: its Table 1 (mean of {facts.trials} trials, {facts.eval_dialogues} evaluation "
            "dialogues each).")
    if evaluation is not None and evaluation != facts.eval_dialogues:
        note += f" This run evaluates each checkpoint on {evaluation:,} dialogues per run."
    lines += [note, ""]
    lines += [
        "**Length** is counted as PyDial counts turns: the system's decisions, the greeting not counted, the exchange "
        f"in which the user says bye counted. In this count PyDial3's own Environment 1 gives {ref.handcrafted:g} turns "
        f"for its handcrafted policy, {ref.gp_low:g}–{ref.gp_high:g} for GP-SARSA after "
        f"{ref.gp_dialogues[0]:,}–{ref.gp_dialogues[1]:,} training dialogues and {ref.random:g} for an untrained "
        "(random) one. The paper's 4.2–4.8 turns cannot be this count for Environment 1, and they conflict with its "
        f"own C_col, which holds {facts.col_contexts['ts'] / facts.col_dialogues:.1f} decisions per collected "
        "dialogue; the simulated world is not tuned towards them.",
        "",
        "**IQ**: the paper's comes from a BiLSTM estimator trained on annotated real calls, ours from a transparent "
        "rule-based estimator over interaction parameters (`policies.sim.rewards.RuleBasedIQ`: length, repetitions, "
        "re-asked slots, confirmations, rejected offers, the user's repeated or unanswered requests, no venue offered, "
        "hang-up, turn limit). Like the paper's, it does not see the user's goal, so it does not know whether the "
        "offered venue was the right one. Compare trends, not values.",
        "",
    ]
    policies = run.table("policies")
    if policies is not None:
        lines += _policies(policies)
    return lines
