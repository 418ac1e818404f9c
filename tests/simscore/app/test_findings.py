"""simscore.app.report.findings: the paper's eleven findings graded on hand-built and synthetic tables."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pandas as pd
import pytest

from simscore import analysis as an
from simscore.app.report.findings import VERDICTS, Check, Finding, Thresholds, findings, format_quantities
from tests.simscore.synthetic import BOOT, synthetic_results, synthetic_tables

NAMES = [
    "converge", "small_changes", "seeds_differ", "dmr_above_tmr", "reward_models_like_seeds", "first_turn",
    "cer_cmr_agree", "dmr_bleu_weak", "cer_use_agree", "text_below_one", "gen_below_col",
]


def _stats(v: float) -> dict:
    return {"mean": v, "ci_low": v, "ci_high": v, "count": 20, "missing": 0}


def _conv(context_set: str, reward: str, curve: dict[int, float], run: str = "", measure: str = "tmr"):
    return [
        {"context_set": context_set, "reward": reward, "run": run or f"{reward}-1", "checkpoint": k,
         "previous": k - 1, "measure": measure, **_stats(v)}
        for k, v in curve.items()
    ]


def _seed(context_set: str, reward: str, values: dict[str, float], checkpoint: int = 10, pair=("a", "b")):
    return [
        {"context_set": context_set, "reward": reward, "checkpoint": checkpoint, "run_a": pair[0], "run_b": pair[1],
         "measure": m, **_stats(v)}
        for m, v in values.items()
    ]


def _rm(context_set: str, reward_a: str, reward_b: str, tmr: float, run_a: str = "a", run_b: str = "b", k: int = 10):
    return [{"context_set": context_set, "checkpoint": k, "group": f"{reward_a}-{reward_b}", "reward_a": reward_a,
             "run_a": run_a, "reward_b": reward_b, "run_b": run_b, "measure": "tmr", **_stats(tmr)}]


def _corr(cells: dict[tuple[str, str, str], tuple[float, float]]):
    rows = []
    for (subset, a, b), (r, mse) in cells.items():
        rows += [{"subset": subset, "measure_a": a, "measure_b": b, "r": r, "mse": mse, "n": 100},
                 {"subset": subset, "measure_a": b, "measure_b": a, "r": r, "mse": mse, "n": 100}]
    return pd.DataFrame(rows)


def _first(reward: str, pairs: list[tuple[float, float]], checkpoint: int = 10, context_set: str = "col"):
    return [
        {"context_set": context_set, "checkpoint": checkpoint, "group": f"{reward}-{reward}", "reward_a": reward,
         "run_a": f"r{i}", "reward_b": reward, "run_b": f"s{i}", "turn_index": 1, "measure": m, "mean": v,
         "ci_low": v, "ci_high": v, "count": 10}
        for i, (tmr, dmr) in enumerate(pairs) for m, v in (("tmr", tmr), ("dmr", dmr))
    ]


def _text(context_set: str, reward: str, values: dict[str, float], analysis: str = "convergence"):
    return [{"context_set": context_set, "analysis": analysis, "reward": reward, "measure": m, "mean": v,
             "ci_low": v, "ci_high": v, "count": 40} for m, v in values.items()]


def _by_name(found) -> dict[str, Finding]:
    return {f.name: f for f in found}


def _scopes(finding: Finding) -> dict[str, Check]:
    return {c.scope: c for c in finding.checks}


# ----------------------------------------------------------------------------- thresholds


def test_findings_take_one_thresholds_object_and_no_loose_thresholds():
    parameters = inspect.signature(findings).parameters
    tables = {"convergence", "seeds", "reward_models", "correlation", "first_turn", "text_at_matching_actions"}
    assert set(parameters) == tables | {"contexts", "collected_set", "generated_set", "thresholds"}
    conv = pd.DataFrame(_conv("col", "ts", {1: 0.5, 2: 0.85, 3: 0.85, 4: 0.85}))
    new = findings(convergence=conv, thresholds=Thresholds(converged_tmr=0.85, late_fraction=0.5))
    assert new[0].verdict == "holds" and findings(convergence=conv)[0].verdict != "holds"
    with pytest.raises(TypeError, match="unexpected keyword argument 'converged_tmr'"):
        findings(convergence=conv, converged_tmr=0.85)
    with pytest.raises(TypeError, match="thresholds must be a simscore.app.experiment.sections.Thresholds, got dict"):
        findings(thresholds={"weak_r": 0.3})


def test_thresholds_round_trip_and_errors():
    t = Thresholds.from_mapping({"converged_tmr": 0.95, "first_turn_share": 1})
    assert t.converged_tmr == 0.95 and t.first_turn_share == 1.0
    assert Thresholds.from_mapping(t.to_dict()) == t
    assert Thresholds().to_dict()["weak_r"] == 0.5
    with pytest.raises(ValueError, match="unknown key 'dmr_margn'; did you mean 'dmr_margin'"):
        Thresholds.from_mapping({"dmr_margn": 0.3})
    with pytest.raises(ValueError, match=re.escape("late_fraction must be in (0, 1] (a share of the training), got 0.0")):
        Thresholds(late_fraction=0)
    with pytest.raises(ValueError, match=re.escape("seeds_margin must be in [0, 1] (a difference of two TMRs), got -0.1")):
        Thresholds(seeds_margin=-0.1)
    with pytest.raises(ValueError, match="weak_r must be a number, got bool True"):
        Thresholds(weak_r=True)
    with pytest.raises(ValueError, match="converged_tmr_partly \\(0.95\\) must not exceed converged_tmr \\(0.9\\)"):
        Thresholds(converged_tmr_partly=0.95)


def test_verdicts_combine_over_scopes():
    def finding(*verdicts):
        return Finding(1, "x", "x", "claim", tuple(Check(str(i), v) for i, v in enumerate(verdicts)))

    assert finding("holds", "holds", "not assessed").verdict == "holds"
    assert finding("does not hold", "does not hold").verdict == "does not hold"
    assert finding("holds", "does not hold").verdict == "partly"
    assert finding("partly").verdict == "partly"
    assert finding("not assessed").verdict == "not assessed" and finding().verdict == "not assessed"
    assert finding("holds").holds is True and finding("partly").holds is False and finding().holds is None
    assert format_quantities({"r": 0.4666, "pairs": 3, "x": float("nan")}) == "r 0.467, pairs 3, x —"
    assert set(VERDICTS) == {"holds", "partly", "does not hold", "not assessed"}


# ----------------------------------------------------------------------------- a paper-like run


@pytest.fixture(scope="module")
def paper_like():
    conv = pd.DataFrame(
        _conv("col", "ts", {10: 0.9, 20: 0.95, 30: 0.99, 40: 1.0}, "ts-1")
        + _conv("col", "ts", {10: 0.92, 20: 0.96, 30: 0.98, 40: 0.97}, "ts-2")
        + _conv("col", "iq", {10: 0.9, 20: 0.96, 30: 0.97, 40: 0.99})
        + _conv("gen", "ts", {10: 0.8, 20: 0.9, 30: 0.93, 40: 0.95})
        + _conv("gen", "iq", {10: 0.8, 20: 0.88, 30: 0.94, 40: 0.92})
    )
    seeds = pd.DataFrame(
        _seed("col", "ts", {"tmr": 0.6, "dmr": 0.85}, 30) + _seed("col", "ts", {"tmr": 0.64, "dmr": 0.87}, 40)
        + _seed("col", "iq", {"tmr": 0.5, "dmr": 0.8}, 40)
        + _seed("gen", "ts", {"tmr": 0.4, "dmr": 0.72}, 30) + _seed("gen", "ts", {"tmr": 0.44, "dmr": 0.75}, 40)
        + _seed("gen", "iq", {"tmr": 0.3, "dmr": 0.65}, 40)
        + _seed("col", "ts", {"tmr": 0.99, "dmr": 0.99}, 10)  # an early checkpoint: not late
    )
    rm = pd.DataFrame(
        _rm("col", "ts", "ts", 0.6) + _rm("col", "iq", "iq", 0.5) + _rm("col", "ts", "iq", 0.45)
        + _rm("col", "ts", "iq", 0.5, run_a="c") + _rm("col", "ts", "iq", 0.9, k=5)  # not the last checkpoint
    )
    corr = _corr({
        ("all", "cer", "cmr"): (0.97, 0.004), ("all", "cer", "dmr"): (0.4, 0.1), ("all", "cmr", "dmr"): (0.3, 0.1),
        ("all", "cer", "use_cos"): (0.85, 0.03), ("all", "cmr", "use_cos"): (0.9, 0.02),
        ("all", "dmr", "use_cos"): (0.2, 0.2), ("nonmatching", "cer", "cmr"): (0.5, 0.03),
    })
    first = pd.DataFrame(_first("ts", [(1.0, 1.0), (0.0, 1.0), (1.0, 1.0)]) + _first("iq", [(0.0, 1.0)] * 3)
                         + _first("ts", [(0.5, 0.5)] * 3, checkpoint=5))  # not the final checkpoint
    text = pd.DataFrame(_text("col", "ts", {"use_ang": 0.87, "bleu4": 0.5, "bertscore": 0.92})
                        + _text("col", "iq", {"use_ang": 0.85, "bleu4": 0.45, "bertscore": 0.9})
                        + _text("col", "ts", {"use_ang": 1.0}, analysis="seeds"))  # only convergence counts
    return {"convergence": conv, "seeds": seeds, "reward_models": rm, "correlation": corr, "first_turn": first,
            "text_at_matching_actions": text}


def test_findings_hold_on_a_paper_like_run(paper_like):
    found = findings(**paper_like)
    assert [f.name for f in found] == NAMES and [f.number for f in found] == list(range(1, 12))
    result = _by_name(found)
    assert {name: f.verdict for name, f in result.items()} == dict.fromkeys(NAMES, "holds")
    assert all(f.claim and f.title for f in found)

    converge = _scopes(result["converge"])
    assert list(converge) == ["col/ts", "col/iq", "gen/ts", "gen/iq"]
    # late = k >= 0.75 * 40 = 30: ts runs (0.99, 1.0, 0.98, 0.97) -> 0.985
    assert converge["col/ts"].ours == {"late TMR": pytest.approx(0.985)}
    assert converge["col/ts"].paper == {"late TMR": pytest.approx(0.9865)}  # paper's Table 2 at 30k and 40k
    assert converge["gen/ts"].paper == {} and converge["col/ts"].note == "late checkpoints 30–40"
    assert converge["col/ts"].rule == "late TMR ≥ 0.9 (partly ≥ 0.8)"
    assert result["converge"].evidence.startswith(
        "col/ts: holds, ours late TMR 0.985, paper late TMR 0.986 (late checkpoints 30–40); col/iq: holds")
    assert result["converge"].evidence.endswith(". Threshold: late TMR ≥ 0.9 (partly ≥ 0.8)")

    small = _scopes(result["small_changes"])["col/ts"]
    assert small.ours == {"share changed": 0.75, "lowest TMR": 0.97}
    assert small.paper == {"share changed": pytest.approx(5 / 6), "lowest TMR": 0.978}

    seeds = _scopes(result["seeds_differ"])["col/ts"]
    assert seeds.ours == {"seed-pair TMR": pytest.approx(0.62), "convergence TMR": pytest.approx(0.985)}
    assert seeds.paper["seed-pair TMR"] == pytest.approx(3.836 / 6)

    dmr = _scopes(result["dmr_above_tmr"])["col/iq"]
    assert dmr.ours == {"DMR": 0.8, "TMR": 0.5} and dmr.paper["TMR"] == pytest.approx(0.455)

    rm = result["reward_models_like_seeds"].checks
    assert [c.scope for c in rm] == ["col/ts-iq"]
    assert rm[0].ours == {"cross TMR": pytest.approx(0.475), "within TMR": pytest.approx(0.55)}
    assert rm[0].paper == {"cross TMR": pytest.approx(0.40711, abs=1e-5), "within TMR": pytest.approx(3.316 / 6)}
    assert rm[0].note == "checkpoint 10, 2 cross and 2 within-reward pairs"

    first = _scopes(result["first_turn"])
    assert first["col/ts"].ours == {"share TMR 0 or 1": 1.0, "share DMR = 1": 1.0, "pairs": 3}
    assert first["col/ts"].paper == {"share TMR 0 or 1": 1.0, "share DMR = 1": 1.0}

    cer = _scopes(result["cer_cmr_agree"])
    assert cer["all pairs"].ours == {"r": 0.97, "MSE": 0.004} and cer["all pairs"].paper_says
    assert cer["non-matching pairs"].ours == {"r": 0.5, "r (all pairs)": 0.97}
    assert cer["non-matching pairs"].paper == {"r": 0.466}

    weak = _scopes(result["dmr_bleu_weak"])
    assert list(weak) == ["DMR"]  # no BLEU-4 in this table
    # DMR with CER, CMR, USE cos: 0.4, 0.3, 0.2; among those three: 0.97, 0.85, 0.9
    assert weak["DMR"].ours == pytest.approx({"mean r with others": 0.3, "mean r among others": 2.72 / 3})
    assert _scopes(result["cer_use_agree"])["all pairs"].ours == {"r": 0.85, "MSE": 0.03}

    text = _scopes(result["text_below_one"])
    assert list(text) == ["col/ts", "col/iq"]
    assert text["col/ts"].ours == {"use_ang": 0.87, "bleu4": 0.5, "bertscore": 0.92}
    assert text["col/ts"].paper == {"use_ang": 0.871, "bleu4": 0.493, "bertscore": 0.918}

    gen = _scopes(result["gen_below_col"])
    assert list(gen) == ["ts", "iq"]
    assert gen["ts"].ours["measures passing"] == 2 and gen["ts"].ours["measures"] == 2


# ----------------------------------------------------------------------------- partly / does not hold


def test_convergence_findings_grade_by_threshold():
    low = pd.DataFrame(_conv("col", "ts", {1: 0.5, 2: 0.6, 3: 0.85, 4: 0.85}))
    assert _by_name(findings(convergence=low))["converge"].verdict == "partly"  # 0.85 in [0.8, 0.9)
    assert _by_name(findings(convergence=low, thresholds=Thresholds(converged_tmr_partly=0.86)))["converge"].verdict == "does not hold"
    assert _by_name(findings(convergence=low, thresholds=Thresholds(converged_tmr=0.85)))["converge"].verdict == "holds"
    # late_fraction 1.0: every checkpoint counts
    assert _scopes(_by_name(findings(convergence=low, thresholds=Thresholds(late_fraction=1.0)))["converge"])["col/ts"].ours == {
        "late TMR": pytest.approx(0.7)
    }

    frozen = pd.DataFrame(_conv("col", "ts", {1: 0.5, 2: 1.0, 3: 1.0, 4: 1.0}))
    assert _by_name(findings(convergence=frozen))["small_changes"].verdict == "does not hold"
    jumpy = pd.DataFrame(_conv("col", "ts", {1: 0.5, 2: 1.0, 3: 1.0, 4: 0.85}))
    small = _by_name(findings(convergence=jumpy))["small_changes"]
    assert small.verdict == "partly" and small.checks[0].ours == {"share changed": 0.5, "lowest TMR": 0.85}
    assert _by_name(findings(convergence=jumpy, thresholds=Thresholds(small_change_max=0.15)))["small_changes"].verdict == "holds"


def test_seed_and_reward_model_findings_grade_by_margin():
    conv = pd.DataFrame(_conv("col", "ts", {10: 0.95}))
    close = pd.DataFrame(_seed("col", "ts", {"tmr": 0.9, "dmr": 0.95}))
    found = _by_name(findings(convergence=conv, seeds=close))
    # "partly" needs at least half the paper's margin: TS seed pairs 0.986 - 0.639 = 0.347 below
    # convergence (half: 0.174), DMR 0.852 - 0.639 = 0.212 above TMR (half: 0.106)
    assert found["seeds_differ"].verdict == "does not hold"  # below by 0.05 < 0.174
    assert found["dmr_above_tmr"].verdict == "does not hold"  # above by 0.05 < 0.106
    assert _scopes(found["dmr_above_tmr"])["col/ts"].rule == (
        "DMR − TMR (seed pairs, late checkpoints) ≥ 0.2 (partly: ≥ 0.106, half the paper's margin)")
    some = pd.DataFrame(_seed("col", "ts", {"tmr": 0.7, "dmr": 0.85}))
    assert _by_name(findings(convergence=conv, seeds=some))["dmr_above_tmr"].verdict == "partly"  # 0.15 in [0.106, 0.2)
    assert _by_name(findings(convergence=conv, seeds=close, thresholds=Thresholds(dmr_margin=0.05)))["dmr_above_tmr"].verdict == "holds"
    above = pd.DataFrame(_seed("col", "ts", {"tmr": 0.97, "dmr": 0.97}))
    found = _by_name(findings(convergence=conv, seeds=above))
    assert found["seeds_differ"].verdict == "does not hold" and found["dmr_above_tmr"].verdict == "does not hold"

    def rm(within: float, cross: float, **kw):
        table = pd.DataFrame(_rm("col", "ts", "ts", within) + _rm("col", "ts", "iq", cross))
        return _by_name(findings(reward_models=table, thresholds=Thresholds(**kw)))["reward_models_like_seeds"].verdict

    assert rm(0.6, 0.5) == "holds"            # a little lower
    assert rm(0.5, 0.55) == "partly"          # a little higher: by at most half the paper's gap (0.146 / 2)
    assert rm(0.5, 0.6) == "does not hold"    # higher by more
    assert rm(0.9, 0.5) == "does not hold"    # far lower
    assert rm(0.9, 0.5, reward_model_margin=0.4) == "holds"
    assert rm(0.2, 0.5) == "does not hold"    # far higher


def test_first_turn_grades_all_or_nothing_and_dmr():
    def verdict(pairs, **kw):
        return _by_name(findings(first_turn=pd.DataFrame(_first("ts", pairs)), thresholds=Thresholds(**kw)))["first_turn"]

    assert verdict([(1.0, 1.0), (0.0, 1.0)]).verdict == "holds"
    mixed = verdict([(0.5, 1.0), (0.0, 1.0)])
    assert mixed.verdict == "partly" and mixed.checks[0].ours["share TMR 0 or 1"] == 0.5
    assert verdict([(0.5, 1.0), (0.0, 1.0)], first_turn_share=0.5).verdict == "holds"
    assert verdict([(0.5, 0.5), (0.25, 0.0)]).verdict == "does not hold"
    empty = pd.DataFrame(_first("ts", [(1.0, 1.0)])).assign(count=0, mean=np.nan)
    assert _by_name(findings(first_turn=empty))["first_turn"].checks[0].verdict == "not assessed"


def test_correlation_findings():
    def found(cells, **kw):
        return _by_name(findings(correlation=_corr(cells), thresholds=Thresholds(**kw)))

    result = found({("all", "cer", "cmr"): (0.95, 0.05), ("nonmatching", "cer", "cmr"): (0.9, 0.06),
                    ("all", "cer", "use_cos"): (0.7, 0.1)})
    cer = _scopes(result["cer_cmr_agree"])
    assert cer["all pairs"].verdict == "partly"  # r high, MSE too large
    assert cer["non-matching pairs"].verdict == "does not hold"  # lower by 0.05 < half the threshold's 0.2
    lower = found({("all", "cer", "cmr"): (0.95, 0.05), ("nonmatching", "cer", "cmr"): (0.8, 0.06)})
    assert _scopes(lower["cer_cmr_agree"])["non-matching pairs"].verdict == "partly"  # 0.15 in [0.1, 0.2)
    assert result["cer_use_agree"].verdict == "does not hold"
    constant = found({("all", "cer", "cmr"): (np.nan, 0.0)})
    assert _scopes(constant["cer_cmr_agree"])["all pairs"].verdict == "partly"  # MSE ok, r undefined
    assert _scopes(constant["cer_cmr_agree"])["non-matching pairs"].verdict == "not assessed"

    strong = found({("all", "dmr", "tmr"): (0.9, 0.0), ("all", "dmr", "cer"): (0.8, 0.0),
                    ("all", "tmr", "cer"): (0.7, 0.0), ("all", "bleu4", "tmr"): (0.6, 0.0),
                    ("all", "bleu4", "cer"): (0.6, 0.0), ("all", "bleu4", "dmr"): (0.6, 0.0)})
    weak = _scopes(strong["dmr_bleu_weak"])
    # DMR: mean r with others (0.9, 0.8, 0.6) = 0.767 >= mean among the others (0.7, 0.6, 0.6) = 0.633
    assert weak["DMR"].verdict == "does not hold"
    # BLEU-4: 0.6 > 0.5 but below the mean among the others (0.9, 0.8, 0.7) = 0.8
    assert weak["BLEU-4"].verdict == "partly"
    assert _scopes(found({("all", "bleu4", "tmr"): (0.6, 0.0), ("all", "tmr", "cer"): (0.9, 0.0),
                          ("all", "bleu4", "cer"): (0.6, 0.0)}, weak_r=0.6)["dmr_bleu_weak"])["BLEU-4"].verdict == "holds"


def test_text_and_context_set_findings():
    text = pd.DataFrame(_text("col", "ts", {"use_ang": 0.99, "bleu4": 0.5}) + _text("gen", "ts", {"use_ang": 1.0}))
    result = _scopes(_by_name(findings(text_at_matching_actions=text))["text_below_one"])
    assert result["col/ts"].verdict == "partly" and result["gen/ts"].verdict == "does not hold"
    assert result["gen/ts"].paper == {}  # the paper has no C_gen numbers
    none = pd.DataFrame(_text("col", "ts", {"use_ang": np.nan})).assign(count=0)
    assert _by_name(findings(text_at_matching_actions=none))["text_below_one"].verdict == "not assessed"

    gen_higher = pd.DataFrame(_conv("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}) + _conv("gen", "ts", {2: 0.6, 3: 0.7, 4: 0.8}))
    assert _by_name(findings(convergence=gen_higher))["gen_below_col"].verdict == "does not hold"
    opposite = pd.DataFrame(_conv("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}) + _conv("gen", "ts", {2: 0.4, 3: 0.3, 4: 0.2}))
    check = _by_name(findings(convergence=opposite))["gen_below_col"].checks[0]
    assert check.verdict == "does not hold" and check.ours["r"] == pytest.approx(-1.0)
    renamed = pd.DataFrame(_conv("C", "ts", {2: 0.5, 3: 0.6}) + _conv("G", "ts", {2: 0.4, 3: 0.5}))
    assert _by_name(findings(convergence=renamed, collected_set="C", generated_set="G"))["gen_below_col"].verdict == "holds"


# ----------------------------------------------------------------------------- not assessed


def test_findings_not_assessed_without_tables():
    found = findings()
    assert all(f.verdict == "not assessed" and f.holds is None and not f.checks for f in found)
    reasons = {f.name: f.reason for f in found}
    assert reasons["converge"] == "no convergence table with TMR"
    assert reasons["first_turn"] == "no first_turn table"
    assert reasons["text_below_one"] == "no text_at_matching_actions table"
    assert found[0].evidence == "not assessed: no convergence table with TMR"
    only_col = pd.DataFrame(_conv("col", "ts", {2: 0.95, 3: 0.96}))
    assert _by_name(findings(convergence=only_col))["gen_below_col"].verdict == "not assessed"
    no_cross = pd.DataFrame(_rm("col", "ts", "ts", 0.5))
    assert "no pairs across reward models" in _by_name(findings(reward_models=no_cross))["reward_models_like_seeds"].reason
    with pytest.raises(ValueError, match="seeds lacks column"):
        findings(seeds=pd.DataFrame({"measure": []}))
    with pytest.raises(ValueError, match="first_turn lacks column"):
        findings(first_turn=pd.DataFrame({"measure": []}))


# ----------------------------------------------------------------------------- the synthetic experiment


def test_findings_on_the_synthetic_experiment():
    results = synthetic_results()
    tables = synthetic_tables()
    col_seeds = {k: c for k, c in results["seeds"].comparisons.items() if k.context_set == "col"}
    first = an.first_turn(col_seeds, **BOOT)
    found = _by_name(findings(convergence=tables["convergence"], seeds=tables["seeds"],
                              reward_models=tables["reward_models"], correlation=tables["correlation"],
                              first_turn=first))
    # convergence at the last checkpoint (late = k >= 2.25: k = 3): col ts 0.9 and 1.0, iq 1.0;
    # C_gen changes contexts 18 and 19 at every checkpoint: 0.1 lower
    converge = _scopes(found["converge"])
    assert {s: c.ours["late TMR"] for s, c in converge.items()} == pytest.approx(
        {"col/ts": 0.95, "col/iq": 1.0, "gen/ts": 0.85, "gen/iq": 0.9})
    assert {s: c.verdict for s, c in converge.items()} == {
        "col/ts": "holds", "col/iq": "holds", "gen/ts": "partly", "gen/iq": "holds"}
    assert found["converge"].verdict == "partly"
    small = _scopes(found["small_changes"])
    assert {s: c.verdict for s, c in small.items()} == {
        "col/ts": "holds", "col/iq": "does not hold", "gen/ts": "partly", "gen/iq": "holds"}
    assert small["gen/ts"].ours == pytest.approx({"share changed": 1.0, "lowest TMR": 0.8})
    # seed pairs at k = 3: ts 0.2 (DMR 0.8), iq 0.25 (DMR 1.0), the same on C_gen
    seeds = _scopes(found["seeds_differ"])
    assert seeds["col/ts"].ours == pytest.approx({"seed-pair TMR": 0.2, "convergence TMR": 0.95})
    assert found["seeds_differ"].verdict == "holds" and found["dmr_above_tmr"].verdict == "holds"
    assert _scopes(found["dmr_above_tmr"])["gen/iq"].ours == pytest.approx({"DMR": 1.0, "TMR": 0.25})
    # reward models at k = 3: within (0.2 + 0.25) / 2 = 0.225; cross col (0.75 + 0.05 + 0.35 + 0.6) / 4 = 0.4375,
    # gen (0.65 + 0.05 + 0.35 + 0.5) / 4 = 0.3875 (contexts 18, 19 no longer match ts-1/iq-1 and ts-2/iq-2)
    rm = _scopes(found["reward_models_like_seeds"])
    assert rm["col/ts-iq"].ours == pytest.approx({"cross TMR": 0.4375, "within TMR": 0.225})
    assert rm["gen/ts-iq"].ours == pytest.approx({"cross TMR": 0.3875, "within TMR": 0.225})
    # cross above within by 0.21 and 0.16: more than half the paper's gap (0.073) and the threshold's (0.1)
    assert (rm["col/ts-iq"].verdict, rm["gen/ts-iq"].verdict) == ("does not hold", "does not hold")
    # first turn (c00..c03) at k = 3: ts pair TMR 0, DMR 0.5; iq pair TMR 1, DMR 1
    turn = _scopes(found["first_turn"])
    assert turn["col/ts"].ours == {"share TMR 0 or 1": 1.0, "share DMR = 1": 0.0, "pairs": 1}
    assert (turn["col/ts"].verdict, turn["col/iq"].verdict) == ("partly", "holds")
    # correlation of the four action measures: CER/CMR agree; no USE, no text table
    cell = tables["correlation"].query("subset == 'all' and measure_a == 'cer' and measure_b == 'cmr'").iloc[0]
    assert _scopes(found["cer_cmr_agree"])["all pairs"].ours == {"r": cell["r"], "MSE": cell["mse"]}
    assert [c.scope for c in found["dmr_bleu_weak"].checks] == ["DMR"]
    assert found["cer_use_agree"].reason == "the correlation table lacks CER or USE cosine"
    assert found["text_below_one"].verdict == "not assessed"
    # C_gen vs C_col, matched convergence (4) and seed (3) rows per reward: TMR lower, DMR equal
    gen = _scopes(found["gen_below_col"])
    assert gen["ts"].ours["TMR gen"] == pytest.approx(4.2 / 7) and gen["ts"].ours["TMR col"] == pytest.approx(4.6 / 7)
    assert gen["iq"].ours["TMR gen"] == pytest.approx(4.35 / 7)
    assert gen["ts"].ours["measures passing"] == 3 and gen["ts"].ours["measures"] == 4
    # DMR: convergence 1.0, 0.9, 0.9, 1.0 and seeds 1.0, 0.9, 0.8 on both sets
    assert "dmr 0.929 vs 0.929, r 1.000" in gen["ts"].note
    assert found["gen_below_col"].verdict == "partly"
