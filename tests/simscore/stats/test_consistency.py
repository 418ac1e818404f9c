"""Self-consistency of sampled policies: hand-computed goldens, the permutation test's properties, errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from simscore import Act, Response, Responses, compare, score
from simscore.errors import ContextMismatchError, SampleCountError, SharedSeedWarning
from simscore.samples import SampledResponses, run_samples
from simscore.stats import Bootstrap
from simscore.stats.consistency import TABLE_COLUMNS, self_consistency


def sampled(rows: dict[str, list[str]], policy: str = "") -> SampledResponses:
    return SampledResponses({c: [Response(Act.parse(x)) for x in acts] for c, acts in rows.items()}, policy=policy)


# 2 contexts x 3 samples, worked out by hand below
A = sampled({"c1": ["hello()", "hello()", "bye()"], "c2": ["request(food)", "request(area)", "request(food)"]}, "A")
B = sampled({"c1": ["bye()", "bye()", "hello()"], "c2": ["request(food)", "request(food)", "request(food)"]}, "B")
CHANCE = sampled({"c1": ["hello()"], "c2": ["bye()"]}, "random")
H23 = -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)  # entropy of a 2:1 split, bits


def test_hand_computed_goldens():
    # tmr, c1: within A = mean(1, 0, 0) = 1/3, within B = 1/3, between = (h-h: 2 + b-b: 2) / 9 = 4/9
    #      c2: within A = mean(0, 1, 0) = 1/3, within B = 1, between = 6/9
    # dmr, c1 as tmr; c2: every act is a request: 1, 1, 1
    result = self_consistency(A, B, ["tmr", "dmr"], chance=CHANCE, n_permutations=99)
    table = result.table
    assert list(table.columns) == list(TABLE_COLUMNS)
    expected = {
        "tmr": {"within_a": 1 / 3, "within_b": 2 / 3, "between": 5 / 9, "normalised": (5 / 9) / (1 / 2),
                "gap": 1 / 2 - 5 / 9, "chance": (3 / 6 + 0) / 2},
        "dmr": {"within_a": 2 / 3, "within_b": 2 / 3, "between": 13 / 18, "normalised": (13 / 18) / (2 / 3),
                "gap": 2 / 3 - 13 / 18, "chance": (3 / 6 + 0) / 2},
    }
    for measure, values in expected.items():
        for column, value in values.items():
            assert table.loc[measure, column] == pytest.approx(value), (measure, column)
    assert result.per_context.loc["c1", "tmr_between"] == pytest.approx(4 / 9)
    assert result.per_context.loc["c2", "tmr_within_b"] == pytest.approx(1.0)
    assert result.per_context.loc["c2", "dmr_gap"] == pytest.approx(0.0)
    assert table.loc["tmr", "contexts"] == 2 and table.loc["tmr", "tested"] == 2
    diversity = result.diversity
    assert diversity.loc["a", "distinct_actions"] == 2.0 and diversity.loc["b", "distinct_actions"] == 1.5
    assert diversity.loc["a", "act_entropy"] == pytest.approx(H23)
    assert diversity.loc["b", "act_entropy"] == pytest.approx(H23 / 2)
    assert np.isnan(diversity.loc["a", "text_entropy"])  # act-only: no texts to count
    assert result.samples == 3 and (result.a, result.b) == ("A", "B")


def test_compare_and_score_carry_it():
    comparison = compare(A, B, ["tmr"], n_permutations=99)
    assert comparison.mean("tmr") == pytest.approx(5 / 9)  # the per-context score is the cross-pair mean
    assert comparison.scores["tmr"].tolist() == pytest.approx([4 / 9, 6 / 9])
    assert comparison.consistency is not None and comparison.info.samples == 3
    assert comparison.summary.loc["tmr", "ci_low"] == comparison.consistency.table.loc["tmr", "between_low"]
    document = comparison.to_json_dict()
    assert document["consistency"]["table"]["tmr"]["within_a"] == pytest.approx(1 / 3)
    assert document["consistency"]["diversity"]["a"]["distinct_actions"] == 2.0
    assert document["consistency"]["table"]["tmr"]["contexts"] == 2 and document["consistency"]["samples"] == 3
    assert "consistency" not in compare(A.sample(0), B.sample(0), ["tmr"]).to_json_dict()  # single: as before
    result = score([list(map(str, A[c])) for c in A], [list(map(str, B[c])) for c in B], measures="tmr",
                   samples=True, n_permutations=99)
    assert result["tmr"].mean == pytest.approx(5 / 9)
    assert result.consistency is not None
    assert result.consistency.table.loc["tmr", "within_b"] == pytest.approx(2 / 3)
    assert score(["hello()"], ["hello()"], measures="tmr").consistency is None


def test_one_sample_per_context_is_compared_as_ever():
    one_a, one_b = A.sample(0), B.sample(0)
    ever = compare(one_a, one_b, ["tmr", "dmr"])
    again = compare(SampledResponses.single(one_a), SampledResponses.single(one_b), ["tmr", "dmr"])
    assert again.consistency is None
    assert again.summary.equals(ever.summary) and again.info == ever.info


def test_identical_samples_are_not_called_different():
    # B holds exactly A's samples: between is above within, the gap is negative, p is large
    result = self_consistency(A, A, ["tmr"], n_permutations=999)
    assert result.table.loc["tmr", "gap"] < 0 and result.table.loc["tmr", "p_value"] > 0.5
    assert result.table.loc["tmr", "normalised"] > 1


def test_same_distribution_gives_no_small_p():
    rng = np.random.default_rng(11)
    acts = ["hello()", "bye()", "request(food)", "request(area)"]

    def draw(name):
        return sampled({f"c{i}": list(rng.choice(acts, size=4, p=[0.4, 0.3, 0.2, 0.1])) for i in range(40)}, name)

    result = self_consistency(draw("a"), draw("b"), ["tmr", "dmr"], n_permutations=999)
    assert (result.table["p_value"] > 0.05).all()
    assert (result.table["gap"].abs() < 0.1).all()


def test_disjoint_policies_give_the_smallest_p():
    a = sampled({f"c{i}": ["hello()"] * 3 for i in range(6)})
    b = sampled({f"c{i}": ["bye()"] * 3 for i in range(6)})
    for n in (99, 999):
        p = self_consistency(a, b, ["tmr"], n_permutations=n).table.loc["tmr", "p_value"]
        assert p == pytest.approx(1 / (n + 1))
    row = self_consistency(a, b, ["tmr"], n_permutations=99).table.loc["tmr"]
    assert (row["within_a"], row["within_b"], row["between"], row["normalised"], row["gap"]) == (1.0, 1.0, 0.0, 0.0, 1.0)


def test_seeded_and_independent_of_the_other_measures():
    one = self_consistency(A, B, ["tmr"], n_permutations=199, bootstrap=Bootstrap(seed=3)).table.loc["tmr"]
    both = self_consistency(A, B, ["dmr", "tmr"], n_permutations=199, bootstrap=Bootstrap(seed=3)).table.loc["tmr"]
    assert one.equals(both)
    other = self_consistency(A, B, ["tmr"], n_permutations=199, bootstrap=Bootstrap(seed=4)).table.loc["tmr"]
    assert other["between"] == one["between"] and 0 < other["p_value"] <= 1


def test_intervals_resample_dialogues_on_collected_contexts():
    rows = {f"c{i}": ["hello()", "bye()"] if i % 2 else ["hello()", "hello()"] for i in range(8)}
    a, b = sampled(rows), sampled({c: ["hello()", "hello()"] for c in rows})
    metadata = {f"c{i}": {"source_name": "sim", "dialogue_id": f"d{i // 4}"} for i in range(8)}
    comparison = compare(a, b, ["tmr"], metadata=metadata, n_permutations=99)
    assert comparison.info.unit == "dialogues" and comparison.info.units == 2
    assert comparison.consistency.info["units"] == 2
    table = comparison.consistency.table.loc["tmr"]
    assert table["within_a_low"] <= table["within_a"] <= table["within_a_high"]
    no_intervals = compare(a, b, ["tmr"], bootstrap=Bootstrap(n_resamples=0), n_permutations=99).consistency.table.loc["tmr"]
    assert np.isnan(no_intervals["between_low"]) and not np.isnan(no_intervals["p_value"])


def test_text_measures_and_missing_texts():
    a = SampledResponses({"c1": [Response(text="Which area?"), Response(text="Which area?")],
                          "c2": [Response(text="Goodbye."), Response(Act.parse("bye()"))]})
    b = SampledResponses({"c1": [Response(text="Which area?"), Response(text="What food?")],
                          "c2": [Response(text="Goodbye."), Response(text="Goodbye.")]})
    with pytest.warns(UserWarning, match="no text"):
        result = self_consistency(a, b, ["bleu4"], n_permutations=99)
    row = result.table.loc["bleu4"]
    assert row["within_a"] == pytest.approx(1.0)  # c1: 1; c2: its one pair lacks a text (left out)
    assert row["tested"] == 1  # c2 has an unscored pair: left out of the test
    assert result.diversity.loc["a", "distinct_texts"] == 1.0


def test_bad_inputs():
    three = sampled({"c1": ["hello()"] * 3})
    two = sampled({"c1": ["hello()"] * 2})
    with pytest.raises(SampleCountError, match="has 3, .* has 2"):
        compare(three, two, ["tmr"])
    with pytest.raises(SampleCountError, match="has 3, .* has 2"):
        self_consistency(three, two, ["tmr"])
    with pytest.raises(SampleCountError, match="at least 2 samples"):
        self_consistency(sampled({"c1": ["hello()"]}), sampled({"c1": ["bye()"]}), ["tmr"])
    with pytest.raises(SampleCountError, match="has 3"):  # one response per context against three
        compare(Responses({"c1": Response(Act.parse("bye()"))}), three, ["tmr"])
    with pytest.raises(ContextMismatchError, match="different contexts"):
        self_consistency(three, sampled({"c2": ["hello()"] * 3}), ["tmr"])
    with pytest.raises(ValueError, match="n_permutations"):
        self_consistency(three, three, ["tmr"], n_permutations=0)
    with pytest.raises(ValueError, match="chance= applies to sampled responses"):
        compare(A.sample(0), B.sample(0), ["tmr"], chance=CHANCE)
    with pytest.raises(SampleCountError, match="predictions\\[1\\] has 2 samples"):
        score([["hello()"] * 3, ["hello()"] * 2], [["hello()"] * 3] * 2, samples=True)
    with pytest.raises(SampleCountError, match="at least 2 samples"):
        score([["hello()"]], [["hello()"]], samples=True)


def test_a_shared_seed_is_named():
    class Coin:  # a policy drawing from its seed and the context's id
        def __init__(self, seed):
            self.seed = seed

        def respond(self, context):
            rng = np.random.default_rng([self.seed, int(context.id[1:])])
            return Response(Act.parse(str(rng.choice(["hello()", "bye()"]))))

    from types import SimpleNamespace

    items = [SimpleNamespace(id=f"c{i}") for i in range(6)]
    same = [run_samples(Coin, items, samples=3, seed=4, name=name) for name in ("x", "y")]
    with pytest.warns(SharedSeedWarning, match="'x' and 'y' were both drawn with seed 4"):
        shared = compare(*same, ["tmr"], n_permutations=99).consistency
    assert shared.table.loc["tmr", "between"] > shared.table.loc["tmr", "within_a"]  # the k-th samples coincide
    other = run_samples(Coin, items, samples=3, seed=5, name="z")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SharedSeedWarning)
        compare(same[0], other, ["tmr"], n_permutations=99)
