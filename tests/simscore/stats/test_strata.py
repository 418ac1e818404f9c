"""Per-stratum rates and the permutation test between strata (golden values by hand and by scipy)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test

from simscore import Act, Response, Responses, compare
from simscore.errors import MetadataColumnError
from simscore.stats import strata
from simscore.stats.strata import format_p_value, permutation_test_strata, stratify


def _scipy_p(x: list[float], y: list[float], **options) -> float:
    def statistic(a, b, axis):
        return np.mean(a, axis=axis) - np.mean(b, axis=axis)

    return float(permutation_test((np.array(x), np.array(y)), statistic, permutation_type="independent",
                                  vectorized=True, **options).pvalue)


@pytest.mark.parametrize(
    ("x", "y", "p"),
    [
        # 4 of 5 against 1 of 5: P(k >= 4) = (C(5,4)C(5,1) + 1) / C(10,5) = 26/252, doubled
        ([1, 1, 1, 1, 0], [1, 0, 0, 0, 0], Fraction(13, 63)),
        # all ones against all zeros, 3 and 3: one split of C(6,3) = 20 as extreme, doubled
        ([1, 1, 1], [0, 0, 0], Fraction(2, 20)),
        # no difference at all
        ([1, 0], [0, 1], Fraction(1)),
    ],
)
def test_exact_p_values_by_hand(x, y, p):
    ones_x, ones_y = np.ones(len(x)), np.ones(len(y))
    difference, p_value, exact, drawn = permutation_test_strata(np.array(x, float), ones_x, np.array(y, float), ones_y)
    assert exact and drawn == 0
    assert difference == pytest.approx(np.mean(x) - np.mean(y))
    assert p_value == pytest.approx(float(p), abs=1e-12)


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([0.2, 0.5, 0.5, 0.9, 1.0], [0.0, 0.1, 0.5, 0.2]),
        ([0.25, 0.75, 0.75, 0.5, 1.0, 1.0], [0.5, 0.5, 0.25, 0.0, 0.75]),
        ([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]),
    ],
)
def test_exact_test_equals_scipys_exact_permutation_test(x, y):
    """Enumerating compositions of distinct values = scipy enumerating every split."""
    _, p_value, exact, _ = permutation_test_strata(np.array(x), np.ones(len(x)), np.array(y), np.ones(len(y)))
    assert exact
    assert p_value == pytest.approx(_scipy_p(x, y, n_resamples=np.inf), abs=1e-12)


def test_monte_carlo_test_agrees_with_the_exact_one(monkeypatch):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 5, size=40) / 4.0
    y = rng.integers(0, 4, size=30) / 4.0
    ones_x, ones_y = np.ones(40), np.ones(30)
    _, exact_p, exact, _ = permutation_test_strata(x, ones_x, y, ones_y)
    assert exact
    monkeypatch.setattr(strata, "EXACT_LIMIT", 0)
    _, mc_p, exact, drawn = permutation_test_strata(x, ones_x, y, ones_y, n_permutations=20_000, rng=1)
    assert not exact and drawn == 20_000
    assert abs(mc_p - exact_p) < 4 * math.sqrt(exact_p * (1 - exact_p) / 20_000) + 1e-4
    again = permutation_test_strata(x, ones_x, y, ones_y, n_permutations=20_000, rng=1)
    assert again[1] == mc_p  # seeded: bit for bit
    # the floor of a Monte Carlo p-value is 2 / (n + 1): nothing as extreme as all-ones vs all-zeros
    _, floor_p, _, _ = permutation_test_strata(np.ones(30), np.ones(30), np.zeros(30), np.ones(30),
                                               n_permutations=999, rng=0)
    assert floor_p == pytest.approx(2 / 1000)


def test_cluster_units_by_hand():
    """Units d1 (2 of 2), d2 (1 of 2) in a; d3 (0 of 2), d4 (1 of 4) in b: 6 equally likely splits.

    Differences of the splits: ±7/12, ±1/6, ±1/4; only the observed 7/12 is as large, so the
    one-sided p is 1/6 and the two-sided 1/3.
    """
    difference, p_value, exact, _ = permutation_test_strata(
        np.array([2.0, 1.0]), np.array([2.0, 2.0]), np.array([0.0, 1.0]), np.array([2.0, 4.0])
    )
    assert exact
    assert difference == pytest.approx(3 / 4 - 1 / 6)
    assert p_value == pytest.approx(1 / 3)


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "tmr": [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            "cer": [0.0, 0.0, 0.5, 1.0, 0.0, 1.0, np.nan, 1.0, 0.0],
            "flow": ["seen"] * 4 + ["unseen"] * 4 + [None],
            "dialogue_id": ["d1", "d1", "d2", "d2", "d3", "d3", "d4", "d4", "d5"],
        },
        index=pd.Index([f"c{i}" for i in range(9)], name="context_id"),
    )


def test_stratify_table_and_tests():
    result = stratify(_frame(), "flow", measures=["tmr", "cer"], seed=3)
    assert result.strata == ("seen", "unseen")
    assert result.info["unlabelled"] == 1
    table = result.table
    assert table.loc[("tmr", "seen"), "mean"] == 0.75
    assert table.loc[("tmr", "unseen"), "mean"] == 0.25
    assert table.loc[("cer", "unseen"), "mean"] == pytest.approx(2 / 3)
    assert table.loc[("cer", "unseen"), ["count", "missing", "units"]].tolist() == [3, 1, 3]
    for (_, _), row in table.iterrows():
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    test = result.test("tmr")
    assert test.difference == 0.5 and test.exact
    assert test.p_value == pytest.approx(_scipy_p([1, 1, 1, 0], [1, 0, 0, 0], n_resamples=np.inf))
    assert test.ci_low <= 0.5 <= test.ci_high
    reverse = result.test("tmr", "unseen", "seen")
    assert reverse.difference == -0.5 and reverse.ci_low == -test.ci_high and reverse.n_a == test.n_b
    assert "tmr: 0.750 on flow=seen (n=4) vs 0.250 on flow=unseen (n=4); difference +0.500" in result.sentence("tmr")
    assert "p = 0.486 (exact)" in result.sentence("tmr")
    text = result.format()
    assert "1 contexts without a label left out" in text and "seen" in text
    as_json = result.to_json_dict()
    assert as_json["tests"][0]["measure"] == "tmr" and as_json["tests"][0]["exact"] is True
    # the same seed, the same numbers
    assert stratify(_frame(), "flow", measures=["tmr", "cer"], seed=3).table.equals(table)


def test_stratify_with_clusters():
    result = stratify(_frame(), "flow", measures=["tmr"], cluster="dialogue_id")
    assert result.table.loc[("tmr", "seen"), "units"] == 2
    assert result.table.loc[("tmr", "seen"), "mean"] == 0.75  # still the mean over contexts
    # units d1 (2 of 2), d2 (1 of 2) vs d3 (1 of 2), d4 (0 of 2), i.e. means 1, .5 vs .5, 0:
    # of the 6 splits two give +1/2 (the observed), two 0 and two -1/2: p = 2 * 2/6
    test = result.test("tmr")
    assert test.p_value == pytest.approx(2 / 3)
    assert test.n_a == 2 and test.n_b == 2


def test_a_constant_stratum_has_a_point_interval():
    frame = pd.DataFrame({"tmr": [1.0] * 5 + [0.0, 1.0] * 5, "g": ["a"] * 5 + ["b"] * 10})
    result = stratify(frame, "g")
    assert result.table.loc[("tmr", "a"), ["ci_low", "ci_high"]].tolist() == [1.0, 1.0]


def test_stratify_errors():
    with pytest.raises(MetadataColumnError) as caught:
        stratify(_frame(), "pattern")
    assert str(caught.value) == (
        "by 'pattern': the comparison's scores has no such column (it has: tmr, cer, flow, dialogue_id); "
        "compare with the contexts' metadata (compare(..., metadata=contexts), or --contexts)"
    )
    assert isinstance(caught.value, KeyError)
    with pytest.raises(ValueError, match="has 1 distinct value"):
        stratify(_frame().assign(flow="seen"), "flow")
    with pytest.raises(ValueError, match="needs 2 to 12"):
        stratify(pd.DataFrame({"tmr": np.ones(13), "turn": [f"t{i}" for i in range(13)]}), "turn")
    with pytest.raises(KeyError, match="'bleu4'"):
        stratify(_frame(), "flow", measures=["bleu4"])
    with pytest.raises(ValueError, match="n_permutations"):
        stratify(_frame(), "flow", n_permutations=0)


def test_comparison_by_stratum():
    a = Responses({f"c{i}": Response(Act.parse("request(food)")) for i in range(6)})
    b = Responses({f"c{i}": Response(Act.parse("request(food)" if i < 3 else "request(area)")) for i in range(6)})
    metadata = {f"c{i}": {"flow": "seen" if i < 3 else "unseen", "dialogue_id": f"d{i // 2}"} for i in range(6)}
    comparison = compare(a, b, metadata=metadata)
    result = comparison.by_stratum("flow", seed=2)
    assert result.measures == comparison.measures
    assert result.table.loc[("tmr", "seen"), "mean"] == 1.0
    assert result.table.loc[("tmr", "unseen"), "mean"] == 0.0
    assert result.test("tmr").p_value == pytest.approx(2 / 20)  # one split of C(6,3), doubled
    with pytest.raises(KeyError, match="compare with the contexts' metadata"):
        compare(a, b).by_stratum("flow")


@pytest.mark.parametrize(
    ("p", "exact", "n", "text"),
    [
        (0.5, True, 0, "p = 0.5 (exact)"),
        (1.234e-7, True, 0, "p = 1.23e-07 (exact)"),
        (2 / 1001, False, 1000, "p ≤ 0.002 (1,000 permutations)"),
        (0.04396, False, 10_000, "p = 0.0440 (10,000 permutations)"),
        (float("nan"), True, 0, "p = n/a"),
    ],
)
def test_format_p_value(p, exact, n, text):
    assert format_p_value(p, exact=exact, n_permutations=n) == text
