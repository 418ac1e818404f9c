"""simscore.analysis.performance: absolute performance with t intervals over runs."""

from __future__ import annotations

import math

import pytest

from simscore import analysis as an
from tests.simscore.synthetic import (
    PERFORMANCE_RECORDS,
    one_row,
)

# ----------------------------------------------------------------------------- performance


def test_performance_table_intervals():
    table = an.performance_table(PERFORMANCE_RECORDS)
    assert tuple(table.columns) == an.SCHEMAS["performance"]
    assert table["reward"].tolist() == ["ts"] * 3 + ["iq"] * 3
    assert table["checkpoint"].tolist() == [1, 2, 3] * 2
    row = one_row(table, reward="ts", checkpoint=3)
    assert row["n_runs"] == 2
    assert row["success_rate"] == pytest.approx((0.95 + 0.91) / 2)
    # two runs: t(0.975, 1) = 12.7062; half width = t * sd / sqrt(2) = 12.7062 * |0.95 - 0.91| / 2
    half = 12.706204736 * 0.04 / 2
    assert row["success_rate_low"] == pytest.approx(0.93 - half)
    assert row["success_rate_high"] == 1.0  # 0.93 + 0.254 clipped to the range of a rate
    assert row["avg_length"] == pytest.approx(5.2)
    single = an.performance_table([PERFORMANCE_RECORDS[0]])
    assert single["n_runs"].tolist() == [1] and math.isnan(single["avg_iq_low"].iloc[0])
    assert single["success_rate"].tolist() == [0.5]


def test_performance_table_validates_records():
    with pytest.raises(ValueError, match="records lack field"):
        an.performance_table([{"reward": "ts", "run": "a", "checkpoint": 1}])
    with pytest.raises(ValueError, match="checkpoint 1 twice"):
        an.performance_table([PERFORMANCE_RECORDS[0], PERFORMANCE_RECORDS[0]])


