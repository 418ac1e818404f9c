"""simscore.analysis.correlation: Pearson r and MSE between measures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from simscore import analysis as an

# ----------------------------------------------------------------------------- correlation


def test_correlation_matches_numpy(results):
    comparisons = [*results["convergence"].comparisons.values(), *results["seeds"].comparisons.values()]
    pooled = pd.concat([c.scores for c in comparisons])
    assert len(an.pooled_scores(comparisons)) == len(pooled) == 20 * len(comparisons)
    corr = an.correlation(comparisons)
    for a, b in (("tmr", "dmr"), ("cer", "cmr"), ("tmr", "cmr")):
        x, y = pooled[a].to_numpy(), pooled[b].to_numpy()
        assert corr.r.loc[a, b] == pytest.approx(np.corrcoef(x, y)[0, 1])
        assert corr.r.loc[b, a] == corr.r.loc[a, b]
        assert corr.mse.loc[a, b] == pytest.approx(np.mean((x - y) ** 2))
        assert corr.n.loc[a, b] == len(pooled)
    assert corr.r.loc["cer", "cer"] == pytest.approx(1.0) and corr.mse.loc["cer", "cer"] == 0.0

    nonmatching = an.correlation(comparisons, subset="nonmatching")
    rows = pooled[pooled["tmr"] == 0]
    assert nonmatching.n.loc["dmr", "cmr"] == len(rows) > 0
    assert math.isnan(nonmatching.r.loc["tmr", "cmr"])  # TMR is constant (0) there
    assert nonmatching.mse.loc["tmr", "cmr"] == pytest.approx(np.mean(rows["cmr"] ** 2))
    assert nonmatching.r.loc["cer", "cmr"] == pytest.approx(np.corrcoef(rows["cer"], rows["cmr"])[0, 1])


def test_correlation_is_nan_safe():
    frame = pd.DataFrame({
        "tmr": [1.0, 0.0, 0.0, 0.0, 1.0],
        "cer": [1.0, 0.5, np.nan, 0.2, 0.9],
        "cmr": [0.7, 0.7, 0.7, 0.7, 0.7],
    })
    corr = an.correlation(frame)
    keep = frame["cer"].notna()
    expected = np.corrcoef(frame.loc[keep, "tmr"], frame.loc[keep, "cer"])[0, 1]
    assert corr.r.loc["tmr", "cer"] == pytest.approx(expected)
    assert corr.n.loc["tmr", "cer"] == 4 and corr.n.loc["tmr", "cmr"] == 5
    assert math.isnan(corr.r.loc["cer", "cmr"])  # constant column
    assert corr.mse.loc["cer", "cmr"] == pytest.approx(np.mean((np.array([1.0, 0.5, 0.2, 0.9]) - 0.7) ** 2))
    assert not corr.r.isna().all().all()
    with pytest.raises(ValueError, match="subset must be"):
        an.correlation(frame, subset="some")
    with pytest.raises(ValueError, match="needs the 'tmr' scores"):
        an.correlation(frame[["cer", "cmr"]], subset="nonmatching")


def test_correlation_table_round_trips_to_matrices(results):
    comparisons = list(results["seeds"].comparisons.values())
    table = an.correlation_table(comparisons)
    assert tuple(table.columns) == an.SCHEMAS["correlation"]
    assert table["subset"].unique().tolist() == ["all", "nonmatching"]
    assert len(table) == 2 * 4 * 4
    for subset in ("all", "nonmatching"):
        direct = an.correlation(comparisons, subset=subset)
        back = an.correlation_matrices(table, subset)
        pd.testing.assert_frame_equal(back.r, direct.r)
        pd.testing.assert_frame_equal(back.mse, direct.mse)
        pd.testing.assert_frame_equal(back.n, direct.n)
    with pytest.raises(ValueError, match="subset 'x' is not in the table"):
        an.correlation_matrices(table, "x")


