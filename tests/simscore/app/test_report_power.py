"""simscore.app.report.power: whether a comparison had enough contexts, in the report."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from simscore.app.report.power import (
    design_effect_from_interval,
    enough_contexts,
    reward_models_power_lines,
    seeds_power_lines,
)
from simscore.stats.power import contexts_needed, detectable_difference


def test_design_effect_from_the_interval():
    # an interval as wide as n independent 0/1 values give: no clustering
    n, p, z = 400, 0.5, 1.959963984540054
    half = z * math.sqrt(p * (1 - p) / n)
    assert design_effect_from_interval(p, p - half, p + half, n, 0.95) == pytest.approx(1.0)
    # twice as wide: four times the variance
    assert design_effect_from_interval(p, p - 2 * half, p + 2 * half, n, 0.95) == pytest.approx(4.0)
    # narrower than independence, a missing bound, a mean of 1: 1
    assert design_effect_from_interval(p, p - half / 2, p + half / 2, n, 0.95) == 1.0
    assert design_effect_from_interval(p, math.nan, 0.6, n, 0.95) == 1.0
    assert design_effect_from_interval(1.0, 1.0, 1.0, n, 0.95) == 1.0


def test_the_three_answers():
    d = detectable_difference(200, 0.9)
    assert f"detect a TMR difference of {d:.3f} below 0.900" in enough_contexts("x", 0.9, 0.5, 400, 2.0)
    assert enough_contexts("x", 0.9, 0.5, 400, 2.0).endswith("is larger: these contexts have the power to detect it.")
    assert "(about 200 independent ones: design effect 2.00 by dialogue)" in enough_contexts("x", 0.9, 0.5, 400, 2.0)
    small = enough_contexts("x", 0.62, 0.57, 376, 1.0)
    assert small.endswith(f"(a gap of that size needs about {contexts_needed(0.05, 0.62):,}).")
    assert "goes the other way" in enough_contexts("x", 0.5, 0.6, 376, 1.0)
    assert "detect no TMR difference below 0.500" in enough_contexts("x", 0.5, 0.1, 1, 1.0)


def _rows(kind: str, reward_pairs, mean: float, count: int) -> list[dict]:
    rows = []
    for reward_a, reward_b in reward_pairs:
        row = {"context_set": "col", "checkpoint": 500, "measure": "tmr", "mean": mean, "ci_low": mean - 0.05,
               "ci_high": mean + 0.05, "count": count}
        row.update({"reward": reward_a} if kind == "seeds" else {"reward_a": reward_a, "reward_b": reward_b})
        rows.append(row)
    return rows


def test_lines_from_the_tables():
    seeds = pd.DataFrame(_rows("seeds", [("ts", "ts")] * 3, 0.6, 300))
    convergence = pd.DataFrame(_rows("seeds", [("ts", "ts")] * 3, 0.95, 300))
    [line, blank] = seeds_power_lines(seeds, convergence, 0.95)
    assert blank == "" and line.startswith("Enough contexts? C_col/ts at checkpoint 500, seed pairs (TMR 0.600) "
                                           "against the runs' last convergence step (0.950): 300 contexts")
    assert "the gap seen, 0.350, is larger" in line
    assert seeds_power_lines(seeds, None, 0.95) == []
    models = pd.DataFrame(_rows("rm", [("ts", "ts"), ("iq", "iq")], 0.62, 376)
                          + _rows("rm", [("ts", "iq")] * 4, 0.57, 376))
    [line, _] = reward_models_power_lines(models, 0.95)
    assert "cross-reward pairs (TMR 0.570) against within-reward pairs (0.620): 376 contexts" in line
    assert "is smaller: too few contexts" in line
    assert reward_models_power_lines(models[models["reward_a"] == models["reward_b"]], 0.95) == []
