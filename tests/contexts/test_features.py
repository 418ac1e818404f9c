"""Interpretable context features and grouping columns (contexts.features)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from contexts.domain import DISCOURSE_ACTS, METHODS
from contexts.features import context_features, context_groups, grid_cell
from contexts.generate import GridSpec, generate_grid


@pytest.fixture
def small() -> ContextSet:
    return ContextSet(
        [
            Context(
                "c0",
                BeliefState(
                    slots={"area": {"north": 0.5, "south": 0.25}, "food": {"thai": 1.0}},
                    method={"byconstraints": 0.7, "byname": 0.3},
                    discourse_act={"thankyou": 1.0},
                    requested={"phone": 0.9, "addr": 0.5},
                    offer_happened=True,
                ),
                {"source": "col", "dialogue_id": "d", "turn_index": 0},
            ),
            Context("c1", BeliefState(), {"source": "col", "dialogue_id": "d", "turn_index": 7}),
            Context("c2", BeliefState(slots={"food": {"thai": 0.6}}), {"source": "custom"}),
        ],
        name="small",
    )


def test_features_golden_numbers(small):
    f = context_features(small)
    assert list(f.index) == ["c0", "c1", "c2"]
    assert f.index.name == "context_id"
    c0 = f.loc["c0"]
    # area: north 0.5, south 0.25, none 0.25 -> entropy 0.5*1 + 0.25*2 + 0.25*2 = 1.5 bits
    assert c0["area_top_p"] == 0.5
    assert c0["area_entropy"] == pytest.approx(1.5, abs=1e-12)
    assert not c0["area_above_half"]  # 0.5 is not above one half
    assert c0["food_top_p"] == 1.0 and c0["food_entropy"] == 0.0 and c0["food_above_half"]
    assert c0["n_requested"] == 1  # phone 0.9 counts, addr 0.5 does not
    assert c0["offer_happened"] and not c0["last_informed_no_venue"]
    assert c0["method=byconstraints"] == 1 and c0["method=byname"] == 0
    assert c0["discourse_act=thankyou"] == 1
    assert c0["turn_index"] == 0.0 and c0["source"] == "col" and c0["grid_cell"] is None
    # c2: thai 0.6, none 0.4 -> -(0.6 log2 0.6 + 0.4 log2 0.4)
    assert f.loc["c2", "food_entropy"] == pytest.approx(-(0.6 * math.log2(0.6) + 0.4 * math.log2(0.4)))
    assert math.isnan(f.loc["c2", "turn_index"])
    # an absent slot: all mass on none
    assert f.loc["c1", "area_top_p"] == 0.0 and f.loc["c1", "area_entropy"] == 0.0


def test_one_hot_columns_have_exactly_one_one(small):
    f = context_features(small)
    methods = f[[f"method={m}" for m in METHODS]]
    acts = f[[f"discourse_act={d}" for d in DISCOURSE_ACTS]]
    assert (methods.sum(axis=1) == 1).all() and (acts.sum(axis=1) == 1).all()
    assert f.loc["c1", "method=none"] == 1 and f.loc["c1", "discourse_act=none"] == 1


def test_grid_features_and_cells():
    grid = generate_grid(GridSpec(slots=("area", "food"), levels=(0.0, 0.6), methods=("byname", "none")))
    f = context_features(grid)
    assert "turn_index" not in f.columns  # no context has one
    cell = "area=0.6/food=0.0/method=byname"
    assert f.loc[f"gen/{cell}", "grid_cell"] == cell
    assert f.loc[f"gen/{cell}", "area_top_p"] == 0.6 and f.loc[f"gen/{cell}", "area_above_half"]
    assert f["grid_cell"].is_unique
    g = context_groups(grid)
    assert g.loc[f"gen/{cell}"].tolist() == ["n/a", "byname", "none", "area", cell, "gen"]
    assert g.loc["gen/area=0.0/food=0.0/method=none", "slots_above_half"] == "none"
    assert g.loc["gen/area=0.6/food=0.6/method=none", "slots_above_half"] == "area+food"
    # ordered categories: fewer slots first, methods in METHODS order
    assert list(g["slots_above_half"].cat.categories) == ["none", "area", "food", "area+food"]
    assert list(g["method"].cat.categories) == ["none", "byname"]


def test_grid_cell_needs_grid_metadata():
    assert grid_cell(Context("gen/x", BeliefState(), {"source": "gen"})) is None
    assert grid_cell(Context("gen/x", BeliefState(), {"source": "gen", "level_area": 0.2})) == "x"


def test_groups_turn_buckets(small):
    turns = [0, 1, 2, 3, 4, 5, 9, 10, 42, None]
    cs = ContextSet([Context(f"t{i}", BeliefState(), {"turn_index": t}) for i, t in enumerate(turns)], name="t")
    g = context_groups(cs)
    assert g["turn"].astype(str).tolist() == ["0", "1", "2", "3-4", "3-4", "5-9", "5-9", "10+", "10+", "n/a"]
    assert g["turn"].cat.ordered
    groups = context_groups(small)
    assert groups.loc["c0"].tolist() == ["0", "byconstraints", "thankyou", "food", "n/a", "col"]
    assert groups.loc["c2", "slots_above_half"] == "food"
    assert groups.loc["c2", "turn"] == "n/a"


def test_empty_set_and_bad_input():
    f = context_features(ContextSet([], name="e"))
    assert len(f) == 0 and "n_requested" in f.columns
    assert len(context_groups(ContextSet([], name="e"))) == 0
    with pytest.raises(TypeError, match="contexts must be a ContextSet, got list"):
        context_features([])
    with pytest.raises(TypeError, match="contexts must be a ContextSet, got dict"):
        context_groups({})


def test_features_are_deterministic_and_numeric():
    grid = generate_grid(GridSpec(levels=(0.0, 0.5, 1.0), methods=("byname",)))
    a, b = context_features(grid), context_features(grid)
    pd.testing.assert_frame_equal(a, b)
    numeric = a.drop(columns=["source", "grid_cell"]).astype(float)
    assert np.isfinite(numeric.to_numpy()).all()
    assert (numeric.filter(like="_top_p") <= 1.0).all().all()
    assert (numeric.filter(like="_entropy") >= 0.0).all().all()
