"""simscore.app.findings: the paper's findings judged on synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simscore.app.findings import Finding, findings
from tests.simscore.synthetic import synthetic_results


@pytest.fixture(scope="module")
def results():
    return synthetic_results()


def _conv_rows(context_set: str, reward: str, curve: dict[int, float], measure: str = "tmr"):
    return [
        {"context_set": context_set, "reward": reward, "run": f"{reward}-1", "checkpoint": k, "previous": k - 1,
         "measure": measure, "mean": v, "ci_low": v, "ci_high": v, "count": 20, "missing": 0}
        for k, v in curve.items()
    ]


def _seed_rows(context_set: str, reward: str, values: dict[str, float], checkpoint: int = 10):
    return [
        {"context_set": context_set, "reward": reward, "checkpoint": checkpoint, "run_a": "a", "run_b": "b",
         "measure": m, "mean": v, "ci_low": v, "ci_high": v, "count": 20, "missing": 0}
        for m, v in values.items()
    ]


def _by_name(findings) -> dict[str, Finding]:
    return {f.name: f for f in findings}


def test_findings_hold_on_a_paper_like_run():
    conv = pd.DataFrame(
        _conv_rows("col", "ts", {2: 0.7, 3: 0.95, 4: 0.96, 5: 0.97})
        + _conv_rows("col", "iq", {2: 0.6, 3: 0.94, 4: 0.95, 5: 0.95})
        + _conv_rows("gen", "ts", {2: 0.5, 3: 0.92, 4: 0.93, 5: 0.94})
        + _conv_rows("gen", "iq", {2: 0.4, 3: 0.91, 4: 0.92, 5: 0.92})
    )
    seeds_table = pd.DataFrame(
        _seed_rows("col", "ts", {"tmr": 0.55, "dmr": 0.9}) + _seed_rows("col", "iq", {"tmr": 0.5, "dmr": 0.85})
        + _seed_rows("gen", "ts", {"tmr": 0.4, "dmr": 0.8}) + _seed_rows("gen", "iq", {"tmr": 0.35, "dmr": 0.7})
        + _seed_rows("col", "ts", {"tmr": 0.9, "dmr": 0.2}, checkpoint=5)  # not the final checkpoint
    )
    corr = pd.DataFrame(
        [{"subset": "all", "measure_a": "cer", "measure_b": "cmr", "r": 0.97, "mse": 0.004, "n": 500},
         {"subset": "nonmatching", "measure_a": "cer", "measure_b": "cmr", "r": 0.9, "mse": 0.02, "n": 100}]
    )
    result = _by_name(findings(convergence=conv, seeds=seeds_table, correlation=corr))
    assert [f.name for f in findings()] == [
        "converge", "seeds_differ", "dmr_above_tmr", "cer_cmr_agree", "gen_below_col",
    ]
    assert all(f.holds is True for f in result.values()), result
    assert "0.970 (col/ts, k=5" in result["converge"].evidence and "≥ 0.9" in result["converge"].evidence
    assert "0.550 vs 0.970 (col/ts)" in result["seeds_differ"].evidence
    assert "DMR 0.900 vs TMR 0.550 (col/ts)" in result["dmr_above_tmr"].evidence
    assert "r = 0.970, MSE = 0.004 (n = 500)" in result["cer_cmr_agree"].evidence
    assert "tmr: gen" in result["gen_below_col"].evidence
    assert all(f.claim for f in result.values())


def test_findings_fail_where_they_should():
    falling = pd.DataFrame(_conv_rows("col", "ts", {2: 0.99, 3: 0.99, 4: 0.99, 5: 0.91}))
    low = pd.DataFrame(_conv_rows("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}))
    assert _by_name(findings(convergence=falling))["converge"].holds is False  # drop of 0.08 > 0.05
    assert _by_name(findings(convergence=falling, stable_tolerance=0.1))["converge"].holds is True
    assert _by_name(findings(convergence=low))["converge"].holds is False
    assert _by_name(findings(convergence=low, converged_tmr=0.65))["converge"].holds is True

    conv = pd.DataFrame(_conv_rows("col", "ts", {2: 0.95, 3: 0.96}))
    close = pd.DataFrame(_seed_rows("col", "ts", {"tmr": 0.9, "dmr": 0.95}))
    found = _by_name(findings(convergence=conv, seeds=close))
    assert found["seeds_differ"].holds is False  # 0.9 is not 0.1 below 0.96
    assert found["dmr_above_tmr"].holds is False  # 0.05 < 0.2
    assert _by_name(findings(convergence=conv, seeds=close, dmr_margin=0.05))["dmr_above_tmr"].holds is True

    disagree = pd.DataFrame(
        [{"subset": "all", "measure_a": "cer", "measure_b": "cmr", "r": 0.95, "mse": 0.05, "n": 10}]
    )
    assert _by_name(findings(correlation=disagree))["cer_cmr_agree"].holds is False
    constant = disagree.assign(r=np.nan, mse=0.0)
    assert _by_name(findings(correlation=constant))["cer_cmr_agree"].holds is False

    gen_higher = pd.DataFrame(
        _conv_rows("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}) + _conv_rows("gen", "ts", {2: 0.6, 3: 0.7, 4: 0.8})
    )
    assert _by_name(findings(convergence=gen_higher))["gen_below_col"].holds is False
    opposite = pd.DataFrame(
        _conv_rows("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}) + _conv_rows("gen", "ts", {2: 0.4, 3: 0.3, 4: 0.2})
    )
    found = _by_name(findings(convergence=opposite))["gen_below_col"]
    assert found.holds is False and "r = -1.000" in found.evidence


def test_findings_not_assessed_without_tables():
    found = findings()
    assert all(f.holds is None for f in found)
    only_col = pd.DataFrame(_conv_rows("col", "ts", {2: 0.95, 3: 0.96}))
    assert _by_name(findings(convergence=only_col))["gen_below_col"].holds is None
    with pytest.raises(ValueError, match="seeds lacks column"):
        findings(seeds=pd.DataFrame({"measure": []}))


def test_findings_on_the_synthetic_experiment(results):
    tables = {name: r.table for name, r in results.items()}
    found = _by_name(findings(convergence=tables["convergence"], seeds=tables["seeds"]))
    # final convergence TMR on col: ts 0.95 (runs 0.9, 1.0), iq 1.0; on gen 0.1 lower: ts 0.85
    assert found["converge"].holds is False
    assert "0.950 (col/ts, k=3" in found["converge"].evidence
    assert "0.850 (gen/ts, k=3" in found["converge"].evidence
    found = _by_name(
        findings(convergence=tables["convergence"], seeds=tables["seeds"], converged_tmr=0.85)
    )
    assert found["converge"].holds is True
    # seed pairs at k = 3: ts 0.2, iq 0.25
    assert found["seeds_differ"].holds is True
    assert found["dmr_above_tmr"].holds is True  # DMR 0.8 vs TMR 0.2 (ts), 1.0 vs 0.25 (iq)
    # C_gen changes only inform(...) values: its DMR equals C_col's, so "lower on every measure" fails
    assert found["gen_below_col"].holds is False
    # DMR over 8 convergence rows (1, .9, .9, 1, 1, 1, 1, 1) and 6 seed rows (1, .9, .8, 1, 1, 1): 13.5 / 14
    assert "dmr: gen 0.964 vs col 0.964" in found["gen_below_col"].evidence
    assert "matched comparisons (56 rows)" in found["gen_below_col"].evidence
    assert "col/ts" in found["seeds_differ"].evidence


