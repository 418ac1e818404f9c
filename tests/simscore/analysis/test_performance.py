"""simscore.analysis.performance: absolute performance with intervals over the evaluation users."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import stdtrit

from simscore import analysis as an
from simscore.stats import wilson_interval
from tests.simscore.synthetic import (
    PERFORMANCE_RECORDS,
    one_row,
)

# ----------------------------------------------------------------------------- performance


def test_performance_table_intervals_over_the_users():
    table = an.performance_table(PERFORMANCE_RECORDS)
    assert tuple(table.columns) == an.SCHEMAS["performance"]
    assert table["reward"].tolist() == ["ts"] * 3 + ["iq"] * 3
    assert table["checkpoint"].tolist() == [1, 2, 3] * 2
    row = one_row(table, reward="ts", checkpoint=3)
    assert (row["n_runs"], row["n_dialogues"]) == (2, 200)
    # success: Wilson over the 95 + 91 successes of the 200 dialogues of the two runs
    assert row["success_rate"] == pytest.approx((0.95 + 0.91) / 2)
    assert (row["success_rate_low"], row["success_rate_high"]) == pytest.approx(wilson_interval(186, 200))
    # length: runs of 100 dialogues with sd 2 each: SE = sqrt(100 * 4 + 100 * 4) / 200, t with 198 df
    half = float(stdtrit(198, 0.975)) * math.sqrt(800) / 200
    assert row["avg_length"] == pytest.approx(5.2)
    assert (row["avg_length_low"], row["avg_length_high"]) == pytest.approx((5.2 - half, 5.2 + half))
    # the runs' spread beside it
    assert (row["avg_length_run_min"], row["avg_length_run_max"]) == pytest.approx((5.0, 5.4))
    assert (row["success_rate_run_min"], row["success_rate_run_max"]) == pytest.approx((0.91, 0.95))
    single = an.performance_table([PERFORMANCE_RECORDS[0]])
    assert single["n_runs"].tolist() == [1] and single["success_rate"].tolist() == [0.5]
    assert single["avg_iq_low"].iloc[0] == pytest.approx(2.5 - float(stdtrit(99, 0.975)) * 1.0 / 10)


def test_the_interval_narrows_with_more_users_not_with_agreeing_runs():
    def table(n, sd):
        records = [dict(r, eval_dialogues=n, avg_length_sd=sd) for r in PERFORMANCE_RECORDS]
        row = one_row(an.performance_table(records), reward="ts", checkpoint=3)
        return row["avg_length_high"] - row["avg_length_low"]

    assert table(400, 2.0) == pytest.approx(table(100, 2.0) / 2, rel=0.01)
    assert table(100, 0.0) == 0.0  # every dialogue of a run as long as the run's mean: no user error


def test_performance_table_validates_records():
    with pytest.raises(ValueError, match="records lack field"):
        an.performance_table([{"reward": "ts", "run": "a", "checkpoint": 1}])
    with pytest.raises(ValueError, match="checkpoint 1 twice"):
        an.performance_table([PERFORMANCE_RECORDS[0], PERFORMANCE_RECORDS[0]])
    with pytest.raises(ValueError, match="eval_dialogues must be >= 1"):
        an.performance_table([dict(PERFORMANCE_RECORDS[0], eval_dialogues=0)])
    assert np.isnan(an.performance_table([dict(PERFORMANCE_RECORDS[0], eval_dialogues=1)])["avg_iq_low"].iloc[0])
