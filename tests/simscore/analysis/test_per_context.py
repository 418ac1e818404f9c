"""simscore.analysis.per_context: pooled and per-turn scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simscore import analysis as an
from tests.simscore.synthetic import (
    BOOT,
)

# ----------------------------------------------------------------------------- per turn


def test_per_turn_counts_and_means(results):
    one = results["seeds"].select(context_set="col", reward="ts", checkpoint=3)
    table = an.per_turn(one, measures=["tmr", "dmr"], group="ts k3", **BOOT)
    assert tuple(table.columns) == an.SCHEMAS["per_turn"]
    tmr = table[table["measure"] == "tmr"].set_index("turn_index")
    # ts-1 k3 = 1111 2200 0000 0000 0000, ts-2 k3 = 2200 0000 0011 1111 1111
    assert tmr["mean"].to_dict() == pytest.approx({1: 0.0, 2: 0.5, 3: 0.5, 4: 0.0, 5: 0.0})
    assert tmr["count"].tolist() == [4] * 5
    assert (table["group"] == "ts k3").all()
    pooled = an.per_turn(results["seeds"].select(context_set="col"), **BOOT)
    assert set(pooled["measure"]) == {"tmr", "dmr", "cer", "cmr"}
    assert pooled[pooled["measure"] == "tmr"]["count"].tolist() == [4 * 6] * 5  # 6 comparisons


def test_per_turn_and_correlation_accept_generators_and_results(results):
    seeds_result = results["seeds"]
    from_result = an.per_turn(seeds_result, measures=["tmr"], **BOOT)
    from_generator = an.per_turn((c for c in seeds_result.comparisons.values()), measures=["tmr"], **BOOT)
    pd.testing.assert_frame_equal(from_result, from_generator)
    # C_gen comparisons carry no turn index: only the 6 C_col comparisons count
    assert from_result["count"].tolist() == [4 * 6] * 5
    corr = an.correlation(c for c in seeds_result.comparisons.values())
    assert list(corr.r.index) == ["tmr", "dmr", "cer", "cmr"]
    with pytest.raises(TypeError, match=r"scores\[1\] must be a simscore Comparison"):
        an.correlation([next(iter(seeds_result.comparisons.values())), "x"])
    with pytest.raises(TypeError, match="scores must be a Comparison"):
        an.per_turn(3)


def test_aggregate_pairs_keeps_other_label_columns():
    t = pd.DataFrame({"label": ["x", "x", "y"], "measure": ["tmr"] * 3, "mean": [0.1, 0.3, 0.5],
                      "ci_low": [0.0, 0.2, 0.4], "ci_high": [0.2, 0.4, 0.6]})
    agg = an.aggregate_pairs(t, ["label"], **BOOT)
    assert agg["label"].tolist() == ["x", "y"] and agg["n_pairs"].tolist() == [2, 1]
    assert agg["mean"].tolist() == pytest.approx([0.2, 0.5])
    assert agg["ci_low"].iloc[1] == 0.4
    with pytest.raises(ValueError, match="lacks column"):
        an.aggregate_pairs(t, ["other"])


def test_per_turn_skips_contexts_without_turn_and_needs_the_column():
    frame = pd.DataFrame({"tmr": [1.0, 0.0, np.nan, 1.0], "turn_index": [1, 1, 1, None]})
    table = an.per_turn(frame, measures=["tmr"])
    assert table["turn_index"].tolist() == [1] and table["count"].tolist() == [2]
    assert table["mean"].tolist() == [0.5]
    with pytest.raises(ValueError, match="no 'turn_index' column"):
        an.per_turn(pd.DataFrame({"tmr": [1.0]}), measures=["tmr"])
    with pytest.raises(ValueError, match="no score column for 'bleu4'"):
        an.per_turn(frame, measures=["bleu4"])


