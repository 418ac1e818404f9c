"""simscore.analysis on hand-built response sets whose similarities are known by construction.

The synthetic experiment: 20 contexts (turn index 1..5, four contexts per turn), two reward
models (ts, iq) with two runs each and three checkpoints. A policy is a vector of codes, one
per context: code 0 → ``inform(name=v<i>,area=centre)``, 1 → ``inform(name=w<i>,area=centre)``
(same intent, one concept differs), 2 → ``request(area)`` (another intent), c ≥ 3 →
``inform(food=f<c>)``. TMR between two policies is the fraction of equal codes.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest

from simscore import Act, Response, Responses
from simscore import analysis as an

N = 20
IDS = [f"c{i:02d}" for i in range(N)]
TURNS = {cid: {"turn_index": i // 4 + 1} for i, cid in enumerate(IDS)}
BOOT = {"n_resamples": 200, "seed": 0}


def _codes(*spans: tuple[int, int, int]) -> list[int]:
    """20 zeros, then ``code`` on ``range(start, stop)`` for each (start, stop, code)."""
    codes = [0] * N
    for start, stop, code in spans:
        codes[start:stop] = [code] * (stop - start)
    return codes


# codes[(reward, run)][checkpoint]
COL = {
    ("ts", "ts-1"): {1: _codes(), 2: _codes((0, 4, 1)), 3: _codes((0, 4, 1), (4, 6, 2))},
    ("ts", "ts-2"): {
        1: _codes((10, 20, 1)),
        2: _codes((10, 20, 1), (0, 2, 2)),
        3: _codes((10, 20, 1), (0, 2, 2)),
    },
    ("iq", "iq-1"): {k: _codes((0, 5, 2)) for k in (1, 2, 3)},
    ("iq", "iq-2"): {k: _codes((0, 5, 2), (5, 20, 1)) for k in (1, 2, 3)},
}


def _gen_codes(codes: list[int], run_index: int, k: int) -> list[int]:
    """C_gen: as C_col, but contexts 18 and 19 change at every checkpoint and differ between runs."""
    out = list(codes)
    out[18] = out[19] = 3 + 2 * run_index + 10 * k
    return out


GEN = {
    key: {k: _gen_codes(c, i, k) for k, c in ck.items()} for i, (key, ck) in enumerate(COL.items())
}


def act_for(code: int, i: int) -> Act:
    if code == 0:
        return Act.parse(f"inform(name=v{i},area=centre)")
    if code == 1:
        return Act.parse(f"inform(name=w{i},area=centre)")
    if code == 2:
        return Act.parse("request(area)")
    return Act.parse(f"inform(food=f{code})")


def responses(codes: list[int], policy: str = "") -> Responses:
    return Responses({cid: Response(act_for(c, i)) for i, (cid, c) in enumerate(zip(IDS, codes))}, policy=policy)


def tmr_of(a: list[int], b: list[int]) -> float:
    return float(np.mean(np.asarray(a) == np.asarray(b)))


def checkpoints(codes_by_run, reward: str, run: str) -> dict[int, Responses]:
    return {k: responses(c, f"{run}@{k}") for k, c in codes_by_run[(reward, run)].items()}


@functools.cache
def synthetic_results(measures=("tmr", "dmr", "cer", "cmr")):
    """Every analysis of the synthetic experiment on both context sets: name → AnalysisResult.

    Cached (the plots and report tests reuse it): callers must not modify the tables.
    """
    conv, seed_results, rm, chance = [], [], [], []
    for context_set, codes, metadata in (("col", COL, TURNS), ("gen", GEN, None)):
        opts = {"context_set": context_set, "metadata": metadata, **BOOT}
        for reward, run in codes:
            conv.append(an.convergence(checkpoints(codes, reward, run), measures, run=run, reward=reward, **opts))
        for reward in ("ts", "iq"):
            runs = {run: checkpoints(codes, r, run) for r, run in codes if r == reward}
            seed_results.append(an.seeds(runs, measures, reward=reward, **opts))
        final = {
            reward: {run: responses(codes[(r, run)][3], run) for r, run in codes if r == reward}
            for reward in ("ts", "iq")
        }
        rm.append(an.reward_models(final, measures, checkpoint=3, **opts))
        random = Responses({cid: Response(Act.parse("bye()")) for cid in IDS}, policy="random")
        chance.append(
            an.chance_level(random, final["ts"]["ts-1"], measures, checkpoint=3, reward="ts", run="ts-1", **opts)
        )
    return {
        "convergence": an.combine(conv),
        "seeds": an.combine(seed_results),
        "reward_models": an.combine(rm),
        "chance": an.combine(chance),
    }


PERFORMANCE_RECORDS = [
    {"reward": reward, "run": f"{reward}-{r}", "checkpoint": k, "success_rate": s, "avg_iq": q, "avg_length": n}
    for reward, base in (("ts", 0.0), ("iq", 0.05))
    for r, jitter in ((1, 0.0), (2, 0.04))
    for k, (s, q, n) in {
        1: (0.5, 2.5, 9.0), 2: (0.8, 3.5, 6.0), 3: (0.95, 4.0, 5.0)
    }.items()
    for s, q, n in [(s - base - jitter, q + jitter, n + 10 * jitter)]
]


@functools.cache
def _synthetic_tables() -> dict[str, pd.DataFrame]:
    return _build_tables()


def synthetic_tables() -> dict[str, pd.DataFrame]:
    """The tables a pipeline would save for the synthetic experiment (fresh copies)."""
    return {name: table.copy() for name, table in _synthetic_tables().items()}


def _build_tables() -> dict[str, pd.DataFrame]:
    results = synthetic_results()
    col_seeds = [c for key, c in results["seeds"].comparisons.items() if key[0] == "col"]
    col_rm = results["reward_models"]
    per_turn = pd.concat(
        [
            an.per_turn(col_seeds, group="seed pairs (col)", **BOOT),
            an.per_turn(
                [c for key, c in col_rm.comparisons.items() if key[0] == "col" and key[3] != key[5]],
                group="ts-iq pairs (col)",
                **BOOT,
            ),
        ],
        ignore_index=True,
    )
    everything = [*results["convergence"].comparisons.values(), *results["seeds"].comparisons.values()]
    return {
        "performance": an.performance_table(PERFORMANCE_RECORDS),
        "convergence": results["convergence"].table,
        "seeds": results["seeds"].table,
        "reward_models": results["reward_models"].table,
        "per_turn": per_turn,
        "correlation": an.correlation_table(everything),
        "chance": results["chance"].table,
    }


@pytest.fixture(scope="module")
def results():
    return synthetic_results()


def _row(table: pd.DataFrame, **labels) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for column, value in labels.items():
        mask &= (table[column] == value).to_numpy()
    rows = table[mask]
    assert len(rows) == 1, labels
    return rows.iloc[0]


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
            row = _row(table, context_set="col", run=run, checkpoint=k, measure="tmr")
            assert row["mean"] == pytest.approx(tmr_of(by_k[k], by_k[k - 1]))
            assert row["reward"] == reward
    assert (table["count"] == N).all() and (table["missing"] == 0).all()
    assert (table["ci_low"] <= table["mean"] + 1e-12).all() and (table["mean"] <= table["ci_high"] + 1e-12).all()
    # C_gen differs from C_col by two contexts that change at every checkpoint
    gen = _row(table, context_set="gen", run="iq-1", checkpoint=3, measure="tmr")
    assert gen["mean"] == pytest.approx(18 / 20)


def test_convergence_orders_mapping_and_labels_sequences():
    r = [responses(_codes((0, i, 2))) for i in range(3)]
    by_map = an.convergence({30: r[2], 10: r[0], 20: r[1]}, ["tmr"]).table
    assert by_map["checkpoint"].tolist() == [20, 30] and by_map["previous"].tolist() == [10, 20]
    assert by_map["mean"].tolist() == pytest.approx([19 / 20, 19 / 20])
    by_seq = an.convergence(r, ["tmr"]).table
    assert by_seq["checkpoint"].tolist() == [2, 3]
    assert by_seq["checkpoint"].dtype == np.int64


def test_convergence_rejects_bad_input():
    r = responses(_codes())
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
    row = _row(stability, context_set="col", run="ts-1", measure="dmr")
    assert row["first_stable"] is pd.NA  # 1.0 then 0.9
    assert _row(stability, context_set="col", run="ts-2", measure="tmr")["first_stable"] == 3
    assert _row(stability, context_set="col", run="iq-1", measure="tmr")["first_stable"] == 2


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
    one = _row(aggregate, context_set="col", reward="iq", checkpoint=2, measure="tmr")
    pair = _row(table, context_set="col", reward="iq", checkpoint=2, measure="tmr")
    assert one["mean"] == pytest.approx(0.25) and one["n_pairs"] == 1 and math.isnan(one["std"])
    assert (one["ci_low"], one["ci_high"]) == (pair["ci_low"], pair["ci_high"])  # one pair keeps its interval


def test_three_runs_give_three_pairs_per_checkpoint():
    runs = {
        "a": [responses(_codes()), responses(_codes())],
        "b": [responses(_codes((0, 10, 1))), responses(_codes((0, 10, 1)))],
        "c": {2: responses(_codes((0, 5, 2)))},  # only checkpoint 2
    }
    result = an.seeds(runs, ["tmr"], reward="ts", **BOOT)
    t = result.table
    assert list(zip(t["checkpoint"], t["run_a"], t["run_b"])) == [
        (1, "a", "b"), (2, "a", "b"), (2, "a", "c"), (2, "b", "c"),
    ]
    assert t["mean"].tolist() == pytest.approx([0.5, 0.5, 0.75, 0.5])
    agg = an.seeds_aggregate(t, **BOOT)
    k2 = _row(agg, checkpoint=2, measure="tmr")
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
    assert _row(col, run_a="ts-1", run_b="iq-1")["mean"] == pytest.approx(0.75)
    within = _row(col, group="ts-ts")
    seeds_k3 = _row(results["seeds"].table, context_set="col", reward="ts", checkpoint=3, measure="tmr")
    assert within["mean"] == seeds_k3["mean"]

    aggregate = an.reward_models_aggregate(table, **BOOT)
    assert tuple(aggregate.columns) == an.SCHEMAS["reward_models_aggregate"]
    cross = _row(aggregate, context_set="col", group="ts-iq", measure="tmr")
    expected = np.mean(
        [tmr_of(COL[("ts", a)][3], COL[("iq", b)][3]) for a in ("ts-1", "ts-2") for b in ("iq-1", "iq-2")]
    )
    assert cross["mean"] == pytest.approx(expected) and cross["n_pairs"] == 4


def test_reward_models_validates_input():
    r = responses(_codes())
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
    row = _row(chance, context_set="col", measure="tmr")
    assert row["mean"] == 0.0 and row["run"] == "ts-1" and row["checkpoint"] == 3
    assert _row(chance, context_set="col", measure="cmr")["mean"] == 0.0  # bye() shares nothing
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


# ----------------------------------------------------------------------------- performance


def test_performance_table_intervals():
    table = an.performance_table(PERFORMANCE_RECORDS)
    assert tuple(table.columns) == an.SCHEMAS["performance"]
    assert table["reward"].tolist() == ["ts"] * 3 + ["iq"] * 3
    assert table["checkpoint"].tolist() == [1, 2, 3] * 2
    row = _row(table, reward="ts", checkpoint=3)
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


# ----------------------------------------------------------------------------- findings


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


def _by_name(findings) -> dict[str, an.Finding]:
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
    result = _by_name(an.findings(convergence=conv, seeds=seeds_table, correlation=corr))
    assert [f.name for f in an.findings()] == [
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
    assert _by_name(an.findings(convergence=falling))["converge"].holds is False  # drop of 0.08 > 0.05
    assert _by_name(an.findings(convergence=falling, stable_tolerance=0.1))["converge"].holds is True
    assert _by_name(an.findings(convergence=low))["converge"].holds is False
    assert _by_name(an.findings(convergence=low, converged_tmr=0.65))["converge"].holds is True

    conv = pd.DataFrame(_conv_rows("col", "ts", {2: 0.95, 3: 0.96}))
    close = pd.DataFrame(_seed_rows("col", "ts", {"tmr": 0.9, "dmr": 0.95}))
    found = _by_name(an.findings(convergence=conv, seeds=close))
    assert found["seeds_differ"].holds is False  # 0.9 is not 0.1 below 0.96
    assert found["dmr_above_tmr"].holds is False  # 0.05 < 0.2
    assert _by_name(an.findings(convergence=conv, seeds=close, dmr_margin=0.05))["dmr_above_tmr"].holds is True

    disagree = pd.DataFrame(
        [{"subset": "all", "measure_a": "cer", "measure_b": "cmr", "r": 0.95, "mse": 0.05, "n": 10}]
    )
    assert _by_name(an.findings(correlation=disagree))["cer_cmr_agree"].holds is False
    constant = disagree.assign(r=np.nan, mse=0.0)
    assert _by_name(an.findings(correlation=constant))["cer_cmr_agree"].holds is False

    gen_higher = pd.DataFrame(
        _conv_rows("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}) + _conv_rows("gen", "ts", {2: 0.6, 3: 0.7, 4: 0.8})
    )
    assert _by_name(an.findings(convergence=gen_higher))["gen_below_col"].holds is False
    opposite = pd.DataFrame(
        _conv_rows("col", "ts", {2: 0.5, 3: 0.6, 4: 0.7}) + _conv_rows("gen", "ts", {2: 0.4, 3: 0.3, 4: 0.2})
    )
    found = _by_name(an.findings(convergence=opposite))["gen_below_col"]
    assert found.holds is False and "r = -1.000" in found.evidence


def test_findings_not_assessed_without_tables():
    found = an.findings()
    assert all(f.holds is None for f in found)
    only_col = pd.DataFrame(_conv_rows("col", "ts", {2: 0.95, 3: 0.96}))
    assert _by_name(an.findings(convergence=only_col))["gen_below_col"].holds is None
    with pytest.raises(ValueError, match="seeds lacks column"):
        an.findings(seeds=pd.DataFrame({"measure": []}))


def test_findings_on_the_synthetic_experiment(results):
    tables = {name: r.table for name, r in results.items()}
    found = _by_name(an.findings(convergence=tables["convergence"], seeds=tables["seeds"]))
    # final convergence TMR on col: ts 0.95 (runs 0.9, 1.0), iq 1.0; on gen 0.1 lower: ts 0.85
    assert found["converge"].holds is False
    assert "0.950 (col/ts, k=3" in found["converge"].evidence
    assert "0.850 (gen/ts, k=3" in found["converge"].evidence
    found = _by_name(
        an.findings(convergence=tables["convergence"], seeds=tables["seeds"], converged_tmr=0.85)
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


def col_only(tables, measures=("tmr", "dmr")):
    """A small version of the tables (one context set, two measures) that draws quickly."""
    out = {}
    for name, table in tables.items():
        if "context_set" in table.columns:
            table = table[table["context_set"] == "col"]
        if "measure" in table.columns:
            table = table[table["measure"].isin(measures)]
        if name == "correlation":
            table = table[table["measure_a"].isin(measures) & table["measure_b"].isin(measures)]
        out[name] = table.reset_index(drop=True)
    return out
