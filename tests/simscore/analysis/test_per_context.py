"""simscore.analysis.per_context: pooled and per-turn scores, first turn per pair, text at matching actions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simscore import Act, Response, Responses
from simscore import analysis as an
from simscore.measures import PairwiseMeasure
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




# ----------------------------------------------------------------------------- first turn


def test_first_turn_per_seed_pair(results):
    col = {k: c for k, c in results["seeds"].comparisons.items() if k.context_set == "col"}
    table = an.first_turn(col, measures=["tmr", "dmr"], **BOOT)
    assert tuple(table.columns) == an.SCHEMAS["first_turn"]
    assert len(table) == 2 * 3 * 2  # 2 rewards x 3 checkpoints x 2 measures, one pair each
    assert (table["turn_index"] == 1).all() and (table["count"] == 4).all()  # contexts c00..c03
    ts = table[table["reward_a"] == "ts"].pivot(index="checkpoint", columns="measure", values="mean")
    # ts-1 turn 1: 0000 | 1111 | 1111; ts-2 turn 1: 0000 | 2200 | 2200 (2 = request, another intent)
    assert ts["tmr"].to_dict() == {1: 1.0, 2: 0.0, 3: 0.0}
    assert ts["dmr"].to_dict() == {1: 1.0, 2: 0.5, 3: 0.5}
    iq = table[table["reward_a"] == "iq"]
    assert (iq["mean"] == 1.0).all()  # both iq runs: 2222 at turn 1
    first = table.iloc[0]
    assert (first["context_set"], first["group"], first["run_a"], first["run_b"], first["reward_b"]) == (
        "col", "ts-ts", "ts-1", "ts-2", "ts"
    )


def test_first_turn_of_reward_model_pairs_and_other_turns(results):
    cross = {k: c for k, c in results["reward_models"].comparisons.items()
             if k.context_set == "col" and k.reward_a != k.reward_b}
    result = an.AnalysisResult(table=results["reward_models"].table, comparisons=cross,
                               key_columns=an.RewardModelsKey._fields)
    table = an.first_turn(result, measures=["tmr"], **BOOT)  # an AnalysisResult or its mapping
    assert table["group"].unique().tolist() == ["ts-iq"]
    # turn 1 at k = 3: ts-1 1111, ts-2 2200; iq-1 2222, iq-2 2222
    assert table.set_index(["run_a", "run_b"])["mean"].to_dict() == {
        ("ts-1", "iq-1"): 0.0, ("ts-1", "iq-2"): 0.0, ("ts-2", "iq-1"): 0.5, ("ts-2", "iq-2"): 0.5,
    }
    third = an.first_turn(cross, measures=["tmr"], turn=3, **BOOT)
    # turn 3 (c08..c11): ts-1 0000, ts-2 0011, iq-1 0000, iq-2 1111
    assert third["mean"].tolist() == [1.0, 0.0, 0.5, 0.5]
    none = an.first_turn(cross, measures=["tmr"], turn=9, **BOOT)
    assert none["count"].tolist() == [0] * 4 and none["mean"].isna().all()


def test_first_turn_errors(results):
    gen = {k: c for k, c in results["seeds"].comparisons.items() if k.context_set == "gen"}
    with pytest.raises(ValueError, match="has no 'turn_index' column; compare with metadata="):
        an.first_turn(gen)
    conv = results["convergence"]
    with pytest.raises(TypeError, match="neither a SeedsKey nor a RewardModelsKey"):
        an.first_turn(conv)
    col = {k: c for k, c in results["seeds"].comparisons.items() if k.context_set == "col"}
    with pytest.raises(ValueError, match="has no 'bleu4' scores"):
        an.first_turn(col, measures=["bleu4"])
    with pytest.raises(TypeError, match="must be an AnalysisResult or a mapping"):
        an.first_turn([1, 2])


# ----------------------------------------------------------------------------- text at matching actions


class WordShare(PairwiseMeasure):
    """A text measure for tests: shared words / all words of the two texts (Jaccard)."""

    name = "word_share"
    level = "text"
    _missing_what = "text"

    def signature(self) -> str:
        return "word_share|test"

    def _score_distinct(self, left, right):
        return np.array([len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split()))
                         for a, b in zip(left, right)])


def _responses(pairs):
    return Responses({f"c{i}": Response(Act.parse(act), text) for i, (act, text) in enumerate(pairs)})


# checkpoint 1 and 2 of one run: c0, c2, c3 keep their action, c1 changes it
K1 = _responses([("hello()", "hello there"), ("request(food)", "what food"), ("bye()", "bye now"),
                 ("inform(food=x)", "x serves food")])
K2 = _responses([("hello()", "hello you"), ("request(area)", "which area"), ("bye()", "bye now"),
                 ("inform(food=x)", "x has food")])


def test_text_at_matching_actions_pools_the_matching_pairs():
    measures = ["tmr", WordShare()]
    conv = an.convergence({1: K1, 2: K2}, measures, run="ts-1", reward="ts", context_set="col")
    other = an.convergence({1: K1, 2: K1}, measures, run="ts-2", reward="ts", context_set="col")
    apart = an.seeds({"iq-1": {5: K1}, "iq-2": {5: K2}}, measures, reward="iq", context_set="gen")
    table = an.text_at_matching_actions(
        {"convergence": {**conv.comparisons, **other.comparisons}, "seeds": apart},
        measures=["word_share"], **BOOT,
    )
    assert tuple(table.columns) == an.SCHEMAS["text_at_matching_actions"]
    rows = table.set_index(["analysis", "context_set", "reward"])
    # ts-1: c0 1/3 ({hello} of {hello, there, you}), c2 1, c3 2/4; ts-2 compares K1 with itself: 4 x 1
    assert rows.loc[("convergence", "col", "ts"), "mean"] == pytest.approx((1 / 3 + 1 + 0.5 + 4) / 7)
    assert rows.loc[("convergence", "col", "ts"), "count"] == 7
    assert rows.loc[("seeds", "gen", "iq"), "mean"] == pytest.approx((1 / 3 + 1 + 0.5) / 3)
    assert rows.loc[("seeds", "gen", "iq"), "measure"] == "word_share"


def test_text_at_matching_actions_without_matches_and_errors():
    changed = _responses([("bye()", "hello there"), ("bye()", "what food"), ("hello()", "bye now"),
                          ("bye()", "x serves food")])
    seeds = an.seeds({"a": [K1], "b": [changed]}, ["tmr", WordShare()], reward="ts", context_set="col")
    table = an.text_at_matching_actions({"seeds": seeds}, measures=["word_share"], **BOOT)
    assert table["count"].tolist() == [0] and table["mean"].isna().all()
    with pytest.raises(ValueError, match="have no text measure"):
        an.text_at_matching_actions({"seeds": seeds})  # word_share is not a registered text measure
    with pytest.raises(ValueError, match=r"analyses\['seeds'\].* has no 'bleu4' scores"):
        an.text_at_matching_actions({"seeds": seeds}, measures=["bleu4"])
    with pytest.raises(ValueError, match="non-empty mapping"):
        an.text_at_matching_actions({})
    no_tmr = an.seeds({"a": [K1], "b": [changed]}, [WordShare()], reward="ts", context_set="col")
    with pytest.raises(ValueError, match="has no 'tmr' scores"):
        an.text_at_matching_actions({"seeds": no_tmr}, measures=["word_share"])


def test_text_at_matching_actions_defaults_to_the_text_measures():
    seeds = an.seeds({"a": [K1], "b": [K2]}, ["tmr", "dmr", "bleu4"], reward="ts", context_set="col")
    table = an.text_at_matching_actions({"seeds": seeds}, **BOOT)
    assert table["measure"].tolist() == ["bleu4"]
    assert table["count"].tolist() == [3]
    assert table["mean"].iloc[0] < 1.0  # c0 and c3 are worded differently


def test_per_turn_first_turn_and_text_resample_the_comparisons_dialogues():
    from simscore import Act, Response, Responses, compare
    from simscore.analysis import SeedsKey, first_turn, per_turn
    from simscore.stats import bootstrap_ci

    n = 60  # 20 dialogues of 3 turns
    meta = pd.DataFrame({"source_name": "x", "dialogue_id": [f"d{i // 3}" for i in range(n)],
                         "turn_index": [i % 3 + 1 for i in range(n)]}, index=[f"c{i}" for i in range(n)])
    same = [(i // 3) % 3 != 0 for i in range(n)]
    a = Responses({f"c{i}": Response(Act.parse("request(food)"), "Food?") for i in range(n)})
    b = Responses({f"c{i}": Response(Act.parse("request(food)" if same[i] else "request(area)"), "Food?")
                   for i in range(n)})
    pair = compare(a, b, ["tmr", "bleu4"], metadata=meta, clusters=("source_name", "dialogue_id"))
    table = per_turn([pair, pair], measures=["tmr"])
    row = table[table["turn_index"] == 1].iloc[0]
    pooled = pd.concat([pair.scores, pair.scores])
    at_one = pooled[pooled["turn_index"] == 1]
    codes = at_one["dialogue_id"].str[1:].astype(int).to_numpy()  # the same dialogue in both pairs: one unit
    expected = bootstrap_ci(at_one["tmr"].to_numpy(), rng=0, clusters=codes)
    assert (row["ci_low"], row["ci_high"]) == expected
    first = first_turn({SeedsKey("col", "ts", 1, "a", "b"): pair}, measures=["tmr"]).iloc[0]
    assert first["count"] == 20 and first["mean"] == pytest.approx(13 / 20)
    unclustered = compare(a, b, ["tmr"], metadata=meta, clusters=None)
    with pytest.raises(ValueError, match="different clusters"):
        per_turn([pair, unclustered], measures=["tmr"])


def test_text_at_matching_actions_resamples_each_context_sets_own_units():
    # C_col comparisons resample dialogues, C_gen ones contexts: pooled per context set, never mixed
    from simscore import Act, Response, Responses, compare
    from simscore.analysis import SeedsKey, text_at_matching_actions

    n = 12
    meta = pd.DataFrame({"source_name": "x", "dialogue_id": [f"d{i // 3}" for i in range(n)]},
                        index=[f"c{i}" for i in range(n)])
    a = Responses({f"c{i}": Response(Act.parse("request(food)"), "Food?") for i in range(n)})
    b = Responses({f"c{i}": Response(Act.parse("request(food)"), "What food?" if i % 2 else "Food?") for i in range(n)})
    col = compare(a, b, ["tmr", "bleu4"], metadata=meta, clusters=("source_name", "dialogue_id"))
    gen = compare(a, b, ["tmr", "bleu4"])
    table = text_at_matching_actions({"seeds": {SeedsKey("col", "ts", 1, "a", "b"): col,
                                                SeedsKey("gen", "ts", 1, "a", "b"): gen}})
    assert table["context_set"].tolist() == ["col", "gen"] and table["count"].tolist() == [12, 12]
