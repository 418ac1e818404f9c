"""simscore.analysis.comparisons on the synthetic experiment (similarities known by construction)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest

from simscore import analysis as an
from tests.simscore.synthetic import (
    BOOT,
    COL,
    N,
    codes,
    one_row,
    responses,
    tmr_of,
)

# ----------------------------------------------------------------------------- convergence


def test_convergence_scores_are_known_by_construction(results):
    table = results["convergence"].table
    assert tuple(table.columns) == an.SCHEMAS["convergence"]
    ts1 = table[(table["context_set"] == "col") & (table["run"] == "ts-1")]
    assert ts1["checkpoint"].tolist() == [2] * 4 + [3] * 4
    assert ts1["previous"].tolist() == [1] * 4 + [2] * 4
    got = ts1.set_index(["checkpoint", "measure"])["mean"]
    # k2 vs k1: contexts 0-3 changed value only (same intent); k3 vs k2: contexts 4, 5 changed intent
    assert got[(2, "tmr")] == pytest.approx(16 / 20)
    assert got[(3, "tmr")] == pytest.approx(18 / 20)
    assert got[(2, "dmr")] == pytest.approx(1.0)
    assert got[(3, "dmr")] == pytest.approx(18 / 20)
    assert got[(2, "cer")] == pytest.approx((16 + 4 * 0.75) / 20)  # CE = 3/4 for one token substituted
    assert got[(2, "cmr")] == pytest.approx((16 + 4 * 4 / 6) / 20)  # 3 shared of 5 concepts, + intent
    assert got[(3, "cer")] == pytest.approx(18 / 20)  # intent mismatch gates CER to 0
    for (reward, run), by_k in COL.items():
        for k in (2, 3):
            row = one_row(table, context_set="col", run=run, checkpoint=k, measure="tmr")
            assert row["mean"] == pytest.approx(tmr_of(by_k[k], by_k[k - 1]))
            assert row["reward"] == reward
    assert (table["count"] == N).all() and (table["missing"] == 0).all()
    assert (table["ci_low"] <= table["mean"] + 1e-12).all() and (table["mean"] <= table["ci_high"] + 1e-12).all()
    # C_gen differs from C_col by two contexts that change at every checkpoint
    gen = one_row(table, context_set="gen", run="iq-1", checkpoint=3, measure="tmr")
    assert gen["mean"] == pytest.approx(18 / 20)


def test_convergence_orders_mapping_and_labels_sequences():
    r = [responses(codes((0, i, 2))) for i in range(3)]
    by_map = an.convergence({30: r[2], 10: r[0], 20: r[1]}, ["tmr"]).table
    assert by_map["checkpoint"].tolist() == [20, 30] and by_map["previous"].tolist() == [10, 20]
    assert by_map["mean"].tolist() == pytest.approx([19 / 20, 19 / 20])
    by_seq = an.convergence(r, ["tmr"]).table
    assert by_seq["checkpoint"].tolist() == [2, 3]
    assert by_seq["checkpoint"].dtype == np.int64


def test_convergence_rejects_bad_input():
    r = responses(codes())
    with pytest.raises(ValueError, match="at least two checkpoints"):
        an.convergence([r], ["tmr"])
    with pytest.raises(TypeError, match="checkpoint label must be an int"):
        an.convergence({"a": r, "b": r}, ["tmr"])
    with pytest.raises(TypeError, match="checkpoint 2 must be simscore.Responses"):
        an.convergence([r, "x"], ["tmr"])


def test_result_select_and_combine(results):
    conv = results["convergence"]
    assert conv.key_columns == ("context_set", "reward", "run", "checkpoint", "previous")
    picked = conv.select(context_set="col", run="ts-2", checkpoint=3)
    assert len(picked) == 1 and picked[0].mean("tmr") == pytest.approx(1.0)
    assert len(conv.select(checkpoint=2)) == 8
    with pytest.raises(KeyError, match="keyed by"):
        conv.select(group="x")
    with pytest.raises(ValueError, match="more than one result"):
        an.combine([conv, conv])
    with pytest.raises(ValueError, match="different identity columns"):
        an.combine([conv, results["seeds"]])


# ----------------------------------------------------------------------------- stability


@pytest.mark.parametrize(
    ("values", "threshold", "expected"),
    [
        ([0.5, 0.95, 0.8, 0.92, 0.99], 0.9, 5),
        ([0.95, 0.96, 0.97], 0.9, 2),
        ([0.95, 0.5], 0.9, None),
        ([0.95, np.nan, 0.95], 0.9, 4),
        ([0.9, 0.9], 0.9, 2),  # at the threshold counts
    ],
)
def test_first_stable_checkpoint(values, threshold, expected):
    curve = pd.Series(values, index=range(2, 2 + len(values)))
    assert an.first_stable_checkpoint(curve, threshold) == expected


def test_first_stable_checkpoint_on_tables(results):
    table = results["convergence"].table
    one = table[(table["context_set"] == "col") & (table["run"] == "ts-1") & (table["measure"] == "tmr")]
    assert an.first_stable_checkpoint(one, 0.85) == 3
    assert an.first_stable_checkpoint(one, 0.75) == 2
    with pytest.raises(ValueError, match="several curves"):
        an.first_stable_checkpoint(table, 0.9)
    stability = an.stability_table(table, threshold=0.95)
    assert tuple(stability.columns) == an.SCHEMAS["stability"]
    row = one_row(stability, context_set="col", run="ts-1", measure="dmr")
    assert row["first_stable"] is pd.NA  # 1.0 then 0.9
    assert one_row(stability, context_set="col", run="ts-2", measure="tmr")["first_stable"] == 3
    assert one_row(stability, context_set="col", run="iq-1", measure="tmr")["first_stable"] == 2


# ----------------------------------------------------------------------------- seeds


def test_seed_pairs_and_aggregate(results):
    table = results["seeds"].table
    assert tuple(table.columns) == an.SCHEMAS["seeds"]
    ts = table[(table["context_set"] == "col") & (table["reward"] == "ts")]
    assert set(zip(ts["run_a"], ts["run_b"])) == {("ts-1", "ts-2")}
    tmr = ts[ts["measure"] == "tmr"].set_index("checkpoint")["mean"]
    dmr = ts[ts["measure"] == "dmr"].set_index("checkpoint")["mean"]
    assert tmr.to_dict() == pytest.approx({1: 0.5, 2: 0.3, 3: 0.2})
    assert dmr.to_dict() == pytest.approx({1: 1.0, 2: 0.9, 3: 0.8})
    for k in (1, 2, 3):
        assert tmr[k] == pytest.approx(tmr_of(COL[("ts", "ts-1")][k], COL[("ts", "ts-2")][k]))

    aggregate = an.seeds_aggregate(table, **BOOT)
    assert tuple(aggregate.columns) == an.SCHEMAS["seeds_aggregate"]
    one = one_row(aggregate, context_set="col", reward="iq", checkpoint=2, measure="tmr")
    pair = one_row(table, context_set="col", reward="iq", checkpoint=2, measure="tmr")
    assert one["mean"] == pytest.approx(0.25) and one["n_pairs"] == 1 and math.isnan(one["std"])
    assert (one["ci_low"], one["ci_high"]) == (pair["ci_low"], pair["ci_high"])  # one pair keeps its interval


def test_three_runs_give_three_pairs_per_checkpoint():
    runs = {
        "a": [responses(codes()), responses(codes())],
        "b": [responses(codes((0, 10, 1))), responses(codes((0, 10, 1)))],
        "c": {2: responses(codes((0, 5, 2)))},  # only checkpoint 2
    }
    result = an.seeds(runs, ["tmr"], reward="ts", **BOOT)
    t = result.table
    assert list(zip(t["checkpoint"], t["run_a"], t["run_b"])) == [
        (1, "a", "b"), (2, "a", "b"), (2, "a", "c"), (2, "b", "c"),
    ]
    assert t["mean"].tolist() == pytest.approx([0.5, 0.5, 0.75, 0.5])
    agg = an.seeds_aggregate(t, **BOOT)
    k2 = one_row(agg, checkpoint=2, measure="tmr")
    assert k2["n_pairs"] == 3
    assert k2["mean"] == pytest.approx(1.75 / 3)
    assert k2["std"] == pytest.approx(np.std([0.5, 0.75, 0.5], ddof=1))
    assert (k2["min"], k2["max"]) == (0.5, 0.75)
    assert 0.5 <= k2["ci_low"] <= k2["mean"] <= k2["ci_high"] <= 0.75
    with pytest.raises(ValueError, match="at least two run"):
        an.seeds({"a": runs["a"]}, ["tmr"])


# ----------------------------------------------------------------------------- reward models


def test_reward_models_groups(results):
    table = results["reward_models"].table
    assert tuple(table.columns) == an.SCHEMAS["reward_models"]
    col = table[(table["context_set"] == "col") & (table["measure"] == "tmr")]
    assert col.groupby("group", sort=False).size().to_dict() == {"ts-ts": 1, "iq-iq": 1, "ts-iq": 4}
    assert (col["checkpoint"] == 3).all()
    for _, row in col.iterrows():
        a = COL[(row["reward_a"], row["run_a"])][3]
        b = COL[(row["reward_b"], row["run_b"])][3]
        assert row["mean"] == pytest.approx(tmr_of(a, b))
    assert one_row(col, run_a="ts-1", run_b="iq-1")["mean"] == pytest.approx(0.75)
    within = one_row(col, group="ts-ts")
    seeds_k3 = one_row(results["seeds"].table, context_set="col", reward="ts", checkpoint=3, measure="tmr")
    assert within["mean"] == seeds_k3["mean"]

    aggregate = an.reward_models_aggregate(table, **BOOT)
    assert tuple(aggregate.columns) == an.SCHEMAS["reward_models_aggregate"]
    cross = one_row(aggregate, context_set="col", group="ts-iq", measure="tmr")
    expected = np.mean(
        [tmr_of(COL[("ts", a)][3], COL[("iq", b)][3]) for a in ("ts-1", "ts-2") for b in ("iq-1", "iq-2")]
    )
    assert cross["mean"] == pytest.approx(expected) and cross["n_pairs"] == 4


def test_reward_models_validates_input():
    r = responses(codes())
    with pytest.raises(ValueError, match="at least two reward"):
        an.reward_models({"ts": {"a": r}}, ["tmr"], checkpoint=1)
    with pytest.raises(TypeError, match=r"runs\['iq'\]\['b'\] must be simscore.Responses"):
        an.reward_models({"ts": {"a": r}, "iq": {"b": 3}}, ["tmr"], checkpoint=1)
    with pytest.raises(TypeError, match="checkpoint must be an int"):
        an.reward_models({"ts": {"a": r}, "iq": {"b": r}}, ["tmr"], checkpoint="final")


# ----------------------------------------------------------------------------- chance level


def test_chance_level_and_contrast(results):
    chance = results["chance"].table
    assert tuple(chance.columns) == an.SCHEMAS["chance"]
    row = one_row(chance, context_set="col", measure="tmr")
    assert row["mean"] == 0.0 and row["run"] == "ts-1" and row["checkpoint"] == 3
    assert one_row(chance, context_set="col", measure="cmr")["mean"] == 0.0  # bye() shares nothing
    contrast = an.contrast(
        chance=chance, convergence=results["convergence"].table, seeds=results["seeds"].table,
        reward_models=results["reward_models"].table, **BOOT,
    )
    assert tuple(contrast.columns) == an.SCHEMAS["contrast"]
    col = contrast[(contrast["context_set"] == "col") & (contrast["measure"] == "tmr")].set_index("comparison")
    assert list(col.index) == [
        "chance (random vs trained)", "convergence (final k vs k-1)", "seeds (final checkpoint)",
        "reward models ts-iq (checkpoint 3)",
    ]
    # final convergence TMR: ts-1 0.9, ts-2 1.0, iq-1 1.0, iq-2 1.0
    assert col.loc["convergence (final k vs k-1)", "mean"] == pytest.approx(3.9 / 4)
    assert col.loc["convergence (final k vs k-1)", "n_pairs"] == 4
    assert col.loc["seeds (final checkpoint)", "mean"] == pytest.approx((0.2 + 0.25) / 2)
    assert col.loc["chance (random vs trained)", "mean"] == 0.0




def test_bootstrap_settings_object_and_no_loose_settings():
    """``bootstrap=`` carries n_resamples/confidence/seed; the loose keywords are gone."""
    runs = {"a": [responses(codes()), responses(codes((0, 3, 2)))],
            "b": [responses(codes((0, 10, 1))), responses(codes((0, 10, 1)))],
            "c": [responses(codes((0, 5, 2))), responses(codes((4, 9, 3)))]}
    table = an.seeds(runs, ["tmr"], reward="ts", **BOOT).table  # three pairs per checkpoint
    settings = an.Bootstrap(n_resamples=150, confidence=0.9, seed=4)
    new = an.seeds_aggregate(table, bootstrap=settings)
    other = an.seeds_aggregate(table, bootstrap=an.Bootstrap(n_resamples=150, confidence=0.5, seed=4))
    assert (other["ci_high"] - other["ci_low"] < new["ci_high"] - new["ci_low"]).any()
    pd.testing.assert_frame_equal(an.seeds_aggregate(table), an.seeds_aggregate(table, bootstrap=an.Bootstrap()))
    for function in (an.convergence, an.seeds, an.reward_models, an.chance_level, an.per_turn, an.first_turn,
                     an.text_at_matching_actions, an.aggregate_pairs, an.seeds_aggregate,
                     an.reward_models_aggregate, an.contrast):
        parameters = inspect.signature(function).parameters
        assert "bootstrap" in parameters and not {"n_resamples", "confidence", "seed"} & set(parameters), function
        assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters.values()), function
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        an.seeds(runs, ["tmr"], bootstrap=settings, seed=1)
    with pytest.raises(TypeError, match="must be a simscore.stats.Bootstrap"):
        an.seeds(runs, ["tmr"], bootstrap={"n_resamples": 10})
    with pytest.raises(ValueError, match="confidence must be in"):
        an.Bootstrap(confidence=0.0)
    with pytest.raises(ValueError, match="n_resamples must be >= 0"):
        an.Bootstrap(n_resamples=-1)
