"""The rules that grade the paper's eleven findings on an experiment's tables (application layer).

One function per finding (``_converge`` … ``_gen_col``) reads the tables it needs and returns a
:class:`~simscore.app.report.findings_types.Finding` with one :class:`~simscore.app.report.findings_types.Check`
per scope; :func:`simscore.app.report.findings.findings` calls them in the paper's order. What each
rule checks and its thresholds: :class:`~simscore.app.experiment.sections.Thresholds`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from simscore.analysis import SCHEMAS
from simscore.app.experiment.sections import Thresholds
from simscore.app.report import paper
from simscore.app.report.findings_types import Check, Finding, Verdict, format_number
from simscore.stats import pearson_mse

# thresholds are compared with this slack, so that 0.95 - 0.90 counts as a difference of 0.05
_EPS = 1e-9


def _nan(value: float) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _not_assessed(scope: str, note: str, rule: str = "", theirs: dict[str, float] | None = None) -> Check:
    return Check(scope, "not assessed", {}, dict(theirs or {}), rule, note)


# ----------------------------------------------------------------------------- helpers on tables


def _scopes(table: pd.DataFrame, by: Sequence[str]) -> list[tuple[str, ...]]:
    keys = table[list(by)].astype(str).drop_duplicates()
    return [tuple(row) for row in keys.itertuples(index=False, name=None)]


def _late_cut(checkpoints: pd.Series, late_fraction: float) -> float:
    """The first checkpoint counted as late: (1 − late_fraction)·K (K the last checkpoint)."""
    return (1.0 - late_fraction) * float(checkpoints.max())


def _late(table: pd.DataFrame, late_fraction: float) -> pd.DataFrame:
    """The rows at late checkpoints (the table holds one scope)."""
    if table.empty:
        return table
    return table[table["checkpoint"] >= _late_cut(table["checkpoint"], late_fraction) - _EPS]


def _part(table: pd.DataFrame, **labels: str) -> pd.DataFrame:
    mask = np.ones(len(table), dtype=bool)
    for column, value in labels.items():
        mask &= (table[column].astype(str) == value).to_numpy()
    return table[mask]


def _checkpoints_note(late: pd.DataFrame) -> str:
    ks = sorted(set(int(k) for k in late["checkpoint"]))
    if not ks:
        return ""
    return f"late checkpoints {ks[0]}" if len(ks) == 1 else f"late checkpoints {ks[0]}–{ks[-1]}"


class _Paper:
    """The paper's numbers per scope, loaded once per call of :func:`findings`."""

    def __init__(self, collected_set: str) -> None:
        self.collected_set = collected_set
        self.convergence = paper.convergence()
        self.seeds = paper.seeds()
        self.reward_models = paper.reward_models_means()
        self.facts = paper.facts()
        # the rewards of Table 2's rows with TMR 1.000, whose text measures the paper reports
        self.text_rewards = set(self.convergence.loc[np.isclose(self.convergence["tmr"], 1.0), "reward"])

    def has(self, context_set: str, reward: str) -> bool:
        return context_set == self.collected_set and reward in set(self.convergence["reward"])

    def late(self, table: pd.DataFrame, reward: str, late_fraction: float) -> pd.DataFrame:
        return _late(table[table["reward"] == reward], late_fraction)


def _grade(value: float, holds: float, partly: float) -> Verdict:
    """Holds at ≥ ``holds``, partly at ≥ ``partly``, else does not hold."""
    if _nan(value):
        return "not assessed"
    if value >= holds - _EPS:
        return "holds"
    if value >= partly - _EPS:
        return "partly"
    return "does not hold"


def _both(first: bool, second: bool) -> Verdict:
    return "holds" if first and second else "partly" if first or second else "does not hold"


# ----------------------------------------------------------------------------- the findings


_TITLES = {
    "converge": "convergence",
    "small_changes": "small changes remain",
    "seeds_differ": "seeds differ",
    "dmr_above_tmr": "DMR ≫ TMR",
    "reward_models_like_seeds": "reward models ≈ seeds",
    "first_turn": "first system turn",
    "cer_cmr_agree": "CER ≈ CMR",
    "dmr_bleu_weak": "DMR, BLEU-4 weak",
    "cer_use_agree": "CER ≈ USE cos",
    "text_below_one": "text < 1 at same action",
    "gen_below_col": "C_gen below C_col",
}

_CLAIMS = {
    "converge": "Policies converge: the checkpoint-to-checkpoint TMR of late checkpoints is high (Table 2).",
    "small_changes": (
        "Even late in training some checkpoints still change a little: convergence TMR is not always "
        "1.000 (Table 2)."
    ),
    "seeds_differ": (
        "Runs with different seeds do not converge to the same behaviour: seed-pair TMR is clearly below "
        "the convergence TMR (Tables 2 and 4)."
    ),
    "dmr_above_tmr": (
        "DMR is much higher than TMR: seed pairs agree on the dialogue act far more often than on the "
        "full action (Table 4)."
    ),
    "reward_models_like_seeds": (
        "Policies trained with different reward models differ about as much as a change of seed, a little "
        "more (Tables 3 and 4)."
    ),
    "first_turn": "At the first system turn, a seed pair's TMR is all-or-nothing (0 or 1) and its DMR is 1 (Figure 4).",
    "cer_cmr_agree": (
        "CER and CMR correlate very highly with a very low error over all pairs, much less on the "
        "non-matching pairs (the paper: r = {facts.nonmatching_cer_cmr_r:.3f} there; Figure 6)."
    ),
    "dmr_bleu_weak": "DMR and BLEU-4 correlate only weakly with the other measures (Figure 6).",
    "cer_use_agree": "CER and USE cosine correlate highly with a small error (Figure 6).",
    "text_below_one": (
        "Where the actions match, the text measures stay well below 1 (angular ≈ {text[use_ang]:.2f}, "
        "BLEU-4 ≈ {text[bleu4]:.1f}, BERTScore ≈ {text[bertscore]:.2f} at TMR 1.000 in Table 2): the same act, "
        "worded differently."
    ),
    "gen_below_col": "C_gen gives lower scores than C_col, with the same trends.",
}

_ORDER = tuple(_CLAIMS)

#: Why the numbers come out as they do (:attr:`Finding.mechanism`).
_MECHANISMS = {
    "first_turn": (
        "Mechanism: a policy's first decision is a function of the first-turn belief alone, so a pair agrees on "
        "all first-turn contexts that share a belief state or on none of them; TMR is all-or-nothing only when "
        "(nearly) every first-turn context has the same belief, and DMR is 1 when both policies ask (request) "
        "there, the only acts unmasked before anything is known."
    ),
}

#: What a verdict cannot show (:attr:`Finding.caveat`).
_CAVEATS = {
    "cer_use_agree": (
        "Depends on the text stack, not on the policies: the sentence encoder (simscore's USE is another build than "
        "the paper's) and the template wording decide how USE cosine follows CER."
    ),
    "text_below_one": (
        "Built in: the template NLG words an act with a template chosen per policy instance, so two policies that "
        "choose the same act get different texts by construction; the verdict tests the NLG, not the policies, and "
        "the levels depend on the templates and the text models (the paper's NLG models were trained per policy)."
    ),
}


def _finding(name: str, checks: Sequence[Check] = (), reason: str = "", caveat: str = "") -> Finding:
    """Finding ``name`` with its claim, the paper's numbers in it filled in from :func:`paper.facts`."""
    facts = paper.facts()
    claim = _CLAIMS[name].format(facts=facts, text=facts.text_at_tmr_one)
    return Finding(_ORDER.index(name) + 1, name, _TITLES[name], claim, tuple(checks), reason,
                   caveat or _CAVEATS.get(name, ""), _MECHANISMS.get(name, ""))


def _tmr_rows(table: pd.DataFrame | None, measure: str = "tmr") -> pd.DataFrame | None:
    if table is None or table.empty:
        return None
    rows = table[table["measure"] == measure]
    return rows if not rows.empty else None


def _converge(conv: pd.DataFrame | None, t: Thresholds, ref: _Paper) -> Finding:
    rows = _tmr_rows(conv)
    if rows is None:
        return _finding("converge", reason="no convergence table with TMR")
    rule = f"late TMR ≥ {t.converged_tmr:g} (partly ≥ {t.converged_tmr_partly:g})"
    checks = []
    for cs, reward in _scopes(rows, ["context_set", "reward"]):
        late = _late(_part(rows, context_set=cs, reward=reward), t.late_fraction)
        value = float(late["mean"].mean())
        theirs = {}
        if ref.has(cs, reward):
            theirs = {"late TMR": float(ref.late(ref.convergence, reward, t.late_fraction)["tmr"].mean())}
        checks.append(Check(f"{cs}/{reward}", _grade(value, t.converged_tmr, t.converged_tmr_partly),
                            {"late TMR": value}, theirs, rule, _checkpoints_note(late)))
    return _finding("converge", checks)


def _small_changes(conv: pd.DataFrame | None, t: Thresholds, ref: _Paper) -> Finding:
    rows = _tmr_rows(conv)
    if rows is None:
        return _finding("small_changes", reason="no convergence table with TMR")
    floor = 1.0 - t.small_change_max
    rule = f"some late comparison has TMR < 1, the lowest ≥ {floor:g} (partly: lower)"

    def numbers(values: np.ndarray) -> dict[str, float]:
        changed = values < 1.0 - _EPS
        return {"share changed": float(changed.mean()), "lowest TMR": float(values.min())}

    checks = []
    for cs, reward in _scopes(rows, ["context_set", "reward"]):
        late = _late(_part(rows, context_set=cs, reward=reward), t.late_fraction)
        values = late["mean"].dropna().to_numpy(dtype=np.float64)
        if not len(values):
            checks.append(_not_assessed(f"{cs}/{reward}", "no defined late TMR", rule))
            continue
        ours = numbers(values)
        if ours["share changed"] == 0.0:
            verdict: Verdict = "does not hold"
        else:
            verdict = "holds" if ours["lowest TMR"] >= floor - _EPS else "partly"
        theirs = {}
        if ref.has(cs, reward):
            theirs = numbers(ref.late(ref.convergence, reward, t.late_fraction)["tmr"].to_numpy(dtype=np.float64))
        note = f"{_checkpoints_note(late)}: {len(values)} comparisons of runs and checkpoints"
        checks.append(Check(f"{cs}/{reward}", verdict, ours, theirs, rule, note))
    return _finding("small_changes", checks)


def _partly_floor(margin: float, paper_gap: float | None) -> float:
    """The least gap that still counts as "partly": half the paper's own gap where the paper
    gives one for the scope, else half the threshold's margin (never a mere sign)."""
    return 0.5 * (paper_gap if paper_gap is not None and not _nan(paper_gap) else margin)


def _margin_grade(gap: float, margin: float, paper_gap: float | None = None) -> Verdict:
    """Holds at gap ≥ margin, partly at gap ≥ :func:`_partly_floor`, else does not hold."""
    if _nan(gap):
        return "not assessed"
    if gap >= margin - _EPS:
        return "holds"
    return "partly" if gap >= _partly_floor(margin, paper_gap) - _EPS else "does not hold"


def _margin_rule(what: str, margin: float, paper_gap: float | None) -> str:
    floor = _partly_floor(margin, paper_gap)
    source = "half the paper's" if paper_gap is not None and not _nan(paper_gap) else "half the threshold's"
    if floor >= margin - _EPS:  # the paper's own gap is more than twice the threshold
        return f"{what} ≥ {margin:g} (no partly: {source} margin, {floor:.3f}, is above it)"
    return f"{what} ≥ {margin:g} (partly: ≥ {floor:.3f}, {source} margin)"


def _seeds_differ(conv: pd.DataFrame | None, seed_table: pd.DataFrame | None, t: Thresholds, ref: _Paper) -> Finding:
    conv_rows, seed_rows = _tmr_rows(conv), _tmr_rows(seed_table)
    if conv_rows is None or seed_rows is None:
        return _finding("seeds_differ", reason="needs the convergence and the seeds tables with TMR")
    checks = []
    for cs, reward in _scopes(seed_rows, ["context_set", "reward"]):
        scope = f"{cs}/{reward}"
        seed_late = _late(_part(seed_rows, context_set=cs, reward=reward), t.late_fraction)
        conv_late = _late(_part(conv_rows, context_set=cs, reward=reward), t.late_fraction)
        if conv_late.empty:
            checks.append(_not_assessed(scope, "no convergence rows for this scope",
                                        _margin_rule("convergence TMR − seed-pair TMR", t.seeds_margin, None)))
            continue
        seed_value, conv_value = float(seed_late["mean"].mean()), float(conv_late["mean"].mean())
        theirs = {}
        if ref.has(cs, reward):
            theirs = {
                "seed-pair TMR": float(ref.late(ref.seeds, reward, t.late_fraction)["tmr"].mean()),
                "convergence TMR": float(ref.late(ref.convergence, reward, t.late_fraction)["tmr"].mean()),
            }
        paper_gap = theirs["convergence TMR"] - theirs["seed-pair TMR"] if theirs else None
        rule = _margin_rule("convergence TMR − seed-pair TMR (late checkpoints)", t.seeds_margin, paper_gap)
        checks.append(Check(scope, _margin_grade(conv_value - seed_value, t.seeds_margin, paper_gap),
                            {"seed-pair TMR": seed_value, "convergence TMR": conv_value}, theirs, rule,
                            _checkpoints_note(seed_late)))
    return _finding("seeds_differ", checks)


def _dmr_above_tmr(seed_table: pd.DataFrame | None, t: Thresholds, ref: _Paper) -> Finding:
    tmr, dmr = _tmr_rows(seed_table, "tmr"), _tmr_rows(seed_table, "dmr")
    if tmr is None or dmr is None:
        return _finding("dmr_above_tmr", reason="needs the seeds table with TMR and DMR")
    checks = []
    for cs, reward in _scopes(tmr, ["context_set", "reward"]):
        late_t = _late(_part(tmr, context_set=cs, reward=reward), t.late_fraction)
        late_d = _late(_part(dmr, context_set=cs, reward=reward), t.late_fraction)
        t_value, d_value = float(late_t["mean"].mean()), float(late_d["mean"].mean())
        theirs = {}
        if ref.has(cs, reward):
            late_paper = ref.late(ref.seeds, reward, t.late_fraction)
            theirs = {"DMR": float(late_paper["dmr"].mean()), "TMR": float(late_paper["tmr"].mean())}
        paper_gap = theirs["DMR"] - theirs["TMR"] if theirs else None
        rule = _margin_rule("DMR − TMR (seed pairs, late checkpoints)", t.dmr_margin, paper_gap)
        checks.append(Check(f"{cs}/{reward}", _margin_grade(d_value - t_value, t.dmr_margin, paper_gap),
                            {"DMR": d_value, "TMR": t_value}, theirs, rule, _checkpoints_note(late_t)))
    return _finding("dmr_above_tmr", checks)


def one_reward_model(*tables: pd.DataFrame | None) -> str | None:
    """The reward model of a run that has only one (read from tables with a ``reward`` column), else None."""
    rewards = {str(r) for table in tables if table is not None and "reward" in table.columns for r in table["reward"]}
    return next(iter(rewards)) if len(rewards) == 1 else None


def _reward_models(rm: pd.DataFrame | None, t: Thresholds, ref: _Paper, conv: pd.DataFrame | None = None) -> Finding:
    rows = _tmr_rows(rm)
    if rows is None:
        only = one_reward_model(conv) if rm is None else None
        reason = f"one reward model in this run ({only})" if only else "no reward_models table with TMR"
        return _finding("reward_models_like_seeds", reason=reason)
    checks = []
    for (cs,) in _scopes(rows, ["context_set"]):
        part = _part(rows, context_set=cs)
        part = part[part["checkpoint"] == part["checkpoint"].max()]
        k = int(part["checkpoint"].iloc[0])
        cross_groups = part[part["reward_a"] != part["reward_b"]]
        for (group,) in _scopes(cross_groups, ["group"]):
            cross = _part(cross_groups, group=group)
            rewards = {str(cross["reward_a"].iloc[0]), str(cross["reward_b"].iloc[0])}
            within = part[(part["reward_a"] == part["reward_b"]) & part["reward_a"].isin(rewards)]
            scope = f"{cs}/{group}"
            if within.empty:
                checks.append(_not_assessed(scope, f"no within-reward pairs at checkpoint {k}",
                                            f"within-reward TMR − cross TMR in [0, {t.reward_model_margin:g}]"))
                continue
            cross_value, within_value = float(cross["mean"].mean()), float(within["mean"].mean())
            gap = within_value - cross_value
            theirs = {}
            if cs == ref.collected_set and rewards <= {"ts", "iq"}:
                at_final = ref.seeds[ref.seeds["checkpoint"] == ref.facts.final_checkpoint]
                theirs = {"cross TMR": float(ref.reward_models["tmr"]), "within TMR": float(at_final["tmr"].mean())}
            # partly: the cross pairs agree a little *more* than the within pairs — by at most half
            # the paper's gap in the other direction (or half the threshold's margin)
            paper_gap = theirs["within TMR"] - theirs["cross TMR"] if theirs else None
            floor = _partly_floor(t.reward_model_margin, paper_gap)
            rule = (f"within-reward TMR − cross TMR in [0, {t.reward_model_margin:g}] (partly: cross above within "
                    f"by ≤ {floor:.3f}, {'half the paper' if theirs else 'half the threshold'}'s margin)")
            if _nan(gap):
                verdict: Verdict = "not assessed"
            elif -_EPS <= gap <= t.reward_model_margin + _EPS:
                verdict = "holds"
            elif -floor - _EPS <= gap < 0:
                verdict = "partly"
            else:
                verdict = "does not hold"
            note = f"checkpoint {k}, {len(cross)} cross and {len(within)} within-reward pairs"
            checks.append(Check(scope, verdict, {"cross TMR": cross_value, "within TMR": within_value}, theirs, rule,
                                note))
    if not checks:
        return _finding("reward_models_like_seeds", reason="the reward_models table has no pairs across reward models")
    return _finding("reward_models_like_seeds", checks)


def _first_turn_states(contexts: pd.DataFrame | None, context_set: str, reward: str) -> str:
    """", N first-turn contexts with D distinct belief states" from the ``contexts`` table, or ""."""
    if contexts is None or contexts.empty:
        return ""
    row = contexts[(contexts["context_set"] == context_set) & (contexts["part"] == reward)]
    if row.empty:
        row = contexts[(contexts["context_set"] == context_set) & (contexts["part"] == "")]
    if row.empty:
        return ""
    r = row.iloc[0]
    return f"; {int(r['first_turn'])} first-turn contexts with {int(r['first_turn_states'])} distinct belief states"


def _first_turn(table: pd.DataFrame | None, t: Thresholds, ref: _Paper, contexts: pd.DataFrame | None = None) -> Finding:
    if table is None or table.empty:
        return _finding("first_turn", reason="no first_turn table")
    seed_pairs = table[(table["reward_a"] == table["reward_b"]) & table["measure"].isin(["tmr", "dmr"])]
    if not {"tmr", "dmr"} <= set(seed_pairs["measure"]):
        return _finding("first_turn", reason="the first_turn table lacks seed pairs with TMR and DMR")
    share = t.first_turn_share
    rule = f"share of pairs with TMR 0 or 1 ≥ {share:g} and with DMR 1 ≥ {share:g} (partly: one of the two)"
    checks = []
    for cs, reward in _scopes(seed_pairs, ["context_set", "reward_a"]):
        part = _part(seed_pairs, context_set=cs, reward_a=reward)
        part = part[(part["checkpoint"] == part["checkpoint"].max()) & (part["count"] > 0)]
        scope = f"{cs}/{reward}"
        tmr = part[part["measure"] == "tmr"]["mean"].to_numpy(dtype=np.float64)
        dmr = part[part["measure"] == "dmr"]["mean"].to_numpy(dtype=np.float64)
        if not len(tmr) or not len(dmr):
            checks.append(_not_assessed(scope, "no seed pair has a context at that turn", rule))
            continue
        all_or_nothing = float(np.mean((np.abs(tmr) <= _EPS) | (np.abs(tmr - 1.0) <= _EPS)))
        dmr_one = float(np.mean(np.abs(dmr - 1.0) <= _EPS))
        ours = {"share TMR 0 or 1": all_or_nothing, "share DMR = 1": dmr_one, "pairs": len(tmr)}
        share_paper = ref.facts.first_turn_share
        theirs = {"share TMR 0 or 1": share_paper, "share DMR = 1": share_paper} if ref.has(cs, reward) else {}
        verdict = _both(all_or_nothing >= share - _EPS, dmr_one >= share - _EPS)
        note = (f"checkpoint {int(part['checkpoint'].max())}, turn {int(part['turn_index'].iloc[0])}; "
                f"pair TMR {', '.join(format_number(v) for v in tmr)}, DMR {', '.join(format_number(v) for v in dmr)}"
                + _first_turn_states(contexts, cs, reward))
        checks.append(Check(scope, verdict, ours, theirs, rule, note))
    return _finding("first_turn", checks)


def _cell(table: pd.DataFrame, subset: str, a: str, b: str) -> tuple[float, float, int] | None:
    row = table[(table["subset"] == subset) & (table["measure_a"] == a) & (table["measure_b"] == b)]
    if row.empty:
        return None
    return float(row["r"].iloc[0]), float(row["mse"].iloc[0]), int(row["n"].iloc[0])


def _cer_cmr(table: pd.DataFrame | None, t: Thresholds, ref: _Paper) -> Finding:
    if table is None or table.empty:
        return _finding("cer_cmr_agree", reason="no correlation table")
    everything = _cell(table, "all", "cer", "cmr")
    if everything is None:
        return _finding("cer_cmr_agree", reason="the correlation table lacks CER or CMR")
    r, mse, n = everything
    rule_all = f"r ≥ {t.agreement_r:g} and MSE ≤ {t.agreement_mse:g} (partly: one of the two)"
    r_ok = not _nan(r) and r >= t.agreement_r - _EPS
    mse_ok = not _nan(mse) and mse <= t.agreement_mse + _EPS
    checks = [Check("all pairs", _both(r_ok, mse_ok), {"r": r, "MSE": mse}, {}, rule_all, f"{n} pairs",
                    "very high r, very low MSE")]
    other = _cell(table, "nonmatching", "cer", "cmr")
    rule_nm = _margin_rule("r on all pairs − r on the non-matching pairs", t.nonmatching_drop, None)
    if other is None:
        checks.append(_not_assessed("non-matching pairs", "no non-matching subset (needs TMR)", rule_nm,
                                    {"r": ref.facts.nonmatching_cer_cmr_r}))
    else:
        checks.append(Check("non-matching pairs", _margin_grade(r - other[0], t.nonmatching_drop),
                            {"r": other[0], "r (all pairs)": r}, {"r": ref.facts.nonmatching_cer_cmr_r}, rule_nm,
                            f"{other[2]} pairs"))
    return _finding("cer_cmr_agree", checks)


def _weak(table: pd.DataFrame | None, t: Thresholds) -> Finding:
    if table is None or table.empty:
        return _finding("dmr_bleu_weak", reason="no correlation table")
    part = table[(table["subset"] == "all") & (table["measure_a"] != table["measure_b"])]
    names = list(dict.fromkeys(part["measure_a"]))
    rule = f"mean r with the other measures ≤ {t.weak_r:g} (partly: above, but below the mean r among the others)"
    checks = []
    for measure, label in (("dmr", "DMR"), ("bleu4", "BLEU-4")):
        if measure not in names:
            continue
        with_others = part[part["measure_a"] == measure]["r"]
        among = part[(part["measure_a"] != measure) & (part["measure_b"] != measure)]["r"]
        x, o = float(with_others.mean()), float(among.mean())
        if _nan(x) or _nan(o):
            checks.append(_not_assessed(label, "r undefined (constant measures)", rule))
            continue
        verdict: Verdict = "holds" if x <= t.weak_r + _EPS else "partly" if x < o - _EPS else "does not hold"
        checks.append(Check(label, verdict, {"mean r with others": x, "mean r among others": o}, {}, rule,
                            f"{len(names) - 1} other measures", "weak"))
    if not checks:
        return _finding("dmr_bleu_weak", reason="the correlation table has neither DMR nor BLEU-4")
    return _finding("dmr_bleu_weak", checks)


def _cer_use(table: pd.DataFrame | None, t: Thresholds) -> Finding:
    if table is None or table.empty:
        return _finding("cer_use_agree", reason="no correlation table")
    cell = _cell(table, "all", "cer", "use_cos")
    if cell is None:
        return _finding("cer_use_agree", reason="the correlation table lacks CER or USE cosine")
    r, mse, n = cell
    rule = f"r ≥ {t.high_r:g} and MSE ≤ {t.small_mse:g} (partly: one of the two)"
    verdict = _both(not _nan(r) and r >= t.high_r - _EPS, not _nan(mse) and mse <= t.small_mse + _EPS)
    return _finding("cer_use_agree", [Check("all pairs", verdict, {"r": r, "MSE": mse}, {}, rule, f"{n} pairs",
                                            "high r, small MSE")])


def _text(table: pd.DataFrame | None, t: Thresholds, ref: _Paper) -> Finding:
    if table is None or table.empty:
        return _finding("text_below_one", reason="no text_at_matching_actions table")
    rows = table[table["analysis"] == "convergence"]
    if rows.empty:
        return _finding("text_below_one", reason="the text_at_matching_actions table has no convergence rows")
    ceiling = 1.0 - t.text_gap
    rule = f"every text measure ≤ {ceiling:g} where TMR = 1 (convergence pairs; partly: some)"
    checks = []
    for cs, reward in _scopes(rows, ["context_set", "reward"]):
        part = _part(rows, context_set=cs, reward=reward)
        part = part[part["count"] > 0]
        scope = f"{cs}/{reward}"
        if part.empty:
            checks.append(_not_assessed(scope, "no pair with matching actions", rule))
            continue
        values = {str(m): float(v) for m, v in zip(part["measure"], part["mean"])}
        below = [v <= ceiling + _EPS for v in values.values()]
        verdict: Verdict = "holds" if all(below) else "partly" if any(below) else "does not hold"
        theirs = {}
        if ref.has(cs, reward) and reward in ref.text_rewards:  # Table 2's TMR 1.000 rows: TS only
            theirs = {m: ref.facts.text_at_tmr_one[m] for m in values if m in ref.facts.text_at_tmr_one}
        checks.append(Check(scope, verdict, values, theirs, rule, f"{int(part['count'].max())} pairs with TMR = 1"))
    return _finding("text_below_one", checks)


def _gen_col(tables: Mapping[str, pd.DataFrame | None], generated: str, collected: str, t: Thresholds) -> Finding:
    joined = []
    for name, table in tables.items():
        if table is None or table.empty:
            continue
        keys = [c for c in SCHEMAS[name][: SCHEMAS[name].index("measure") + 1] if c != "context_set"]
        gen = table[table["context_set"] == generated][[*keys, "mean"]]
        col = table[table["context_set"] == collected][[*keys, "mean"]]
        both = gen.merge(col, on=keys, suffixes=("_gen", "_col"))
        if not both.empty:
            joined.append(both[["reward", "measure", "mean_gen", "mean_col"]])
    if not joined:
        return _finding(
            "gen_below_col",
            reason=f"needs convergence or seeds rows on both context sets {generated!r} and {collected!r}",
        )
    pairs = pd.concat(joined, ignore_index=True).dropna()
    rule = (f"per measure: {generated} mean < {collected} mean and r ≥ {t.trend_r:g} across matched rows; "
            "all measures (partly: some)")
    checks = []
    for (reward,) in _scopes(pairs, ["reward"]):
        part = _part(pairs, reward=reward)
        passing, details, ours = 0, [], {}
        measures = list(dict.fromkeys(part["measure"]))
        for measure in measures:
            m = part[part["measure"] == measure]
            g, c = float(m["mean_gen"].mean()), float(m["mean_col"].mean())
            r, _, _ = pearson_mse(m["mean_gen"].to_numpy(), m["mean_col"].to_numpy())
            flat = m["mean_gen"].nunique() == 1 and m["mean_col"].nunique() == 1
            ok = g < c - _EPS and (flat or (not _nan(r) and r >= t.trend_r - _EPS))
            passing += ok
            details.append(f"{measure} {format_number(g)} vs {format_number(c)}, r {format_number(r)}")
            if measure == "tmr":
                ours = {f"TMR {generated}": g, f"TMR {collected}": c, "r": r}
        verdict: Verdict = "holds" if passing == len(measures) else "partly" if passing else "does not hold"
        ours["measures passing"] = passing
        ours["measures"] = len(measures)
        checks.append(Check(f"{reward}", verdict, ours, {}, rule,
                            f"{len(part)} matched rows; " + "; ".join(details),
                            "lower, same trends (its C_gen numbers are lost)"))
    return _finding("gen_below_col", checks)
