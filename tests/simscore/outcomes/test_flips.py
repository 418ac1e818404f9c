"""Outcome flips: golden values by hand, McNemar's exact p by hand, properties, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simscore.errors import MissingValueWarning
from simscore.outcomes.flips import Outcomes, flip_decomposition, mcnemar_exact, outcome_flips
from simscore.stats import Bootstrap

# ten pairs: six where the actions differ, four where they agree (see the hand computation below)
BASE_SUCCESS = [1, 1, 1, 1, 0, 0, 1, 1, 0, 1]
CAND_SUCCESS = [0, 0, 1, 1, 1, 0, 1, 0, 0, 1]
BASE_TURNS = [5, 6, 4, 5, 25, 8, 5, 6, 25, 4]
CAND_TURNS = [9, 10, 4, 7, 6, 8, 5, 12, 25, 4]
BASE_IQ = [4, 4, 5, 4, 1, 2, 4, 4, 1, 5]
CAND_IQ = [2, 2, 5, 4, 4, 2, 4, 2, 1, 4]
DIFFER = [True] * 6 + [False] * 4


def _arm(success, turns, iq):
    return Outcomes(success=success, reward=[20 * s - t for s, t in zip(success, turns)], turns=turns, iq=iq)


BASE = _arm(BASE_SUCCESS, BASE_TURNS, BASE_IQ)
CAND = _arm(CAND_SUCCESS, CAND_TURNS, CAND_IQ)


def test_golden_table_computed_by_hand():
    table = outcome_flips(BASE, CAND, differ=DIFFER, bootstrap=Bootstrap(n_resamples=0), names=("old", "new"))
    d, a = table.differ, table.agree
    # differ: pairs 0, 1 pass -> fail; pair 4 fail -> pass; pairs 2 and 5 identical, pair 3 two turns longer
    assert (d.pairs, d.units, a.pairs, a.units) == (6, 6, 4, 4)
    assert d.negative_flip_rate.value == pytest.approx(2 / 6)
    assert d.positive_flip_rate.value == pytest.approx(1 / 6)
    assert d.benign_churn_rate.value == pytest.approx(2 / 6)
    # rewards 15 14 16 15 -25 -8 -> -9 -10 16 13 14 -8: differences -24 -24 0 -2 39 0
    assert d.reward_difference.value == pytest.approx(-11 / 6)
    assert d.turns_difference.value == pytest.approx(-9 / 6)
    assert d.iq_difference.value == pytest.approx(-1 / 6)
    # McNemar 2:1 -> 2 * P(X <= 1 | 3, 1/2) = 2 * 4 / 8 = 1
    assert (d.mcnemar.negative, d.mcnemar.positive, d.mcnemar.p_value) == (2, 1, 1.0)
    # agree: pair 7 pass -> fail (26 reward, 6 turns, 2 IQ worse), pair 9 one IQ point lower
    assert a.negative_flip_rate.value == 0.25 and a.positive_flip_rate.value == 0.0
    assert a.benign_churn_rate.value == 0.5
    assert (a.reward_difference.value, a.turns_difference.value, a.iq_difference.value) == (-6.5, 1.5, -0.75)
    assert (a.mcnemar.negative, a.mcnemar.positive, a.mcnemar.p_value) == (1, 0, 1.0)
    # no resamples: no interval
    assert math.isnan(d.negative_flip_rate.low) and math.isnan(d.negative_flip_rate.high)
    rows = table.to_records()
    assert [r["group"] for r in rows] == ["differ", "agree"]
    assert rows[0]["baseline"] == "old" and rows[0]["unit"] == "pairs" and rows[0]["mcnemar_negative"] == 2
    assert list(table.to_frame().columns[:6]) == ["baseline", "candidate", "unit", "group", "pairs", "units"]


@pytest.mark.parametrize(
    ("negative", "positive", "p"),
    [
        (3, 1, 2 * (1 + 4) / 16),
        (7, 1, 2 * (1 + 8) / 256),
        (10, 3, 2 * (1 + 13 + 78 + 286) / 8192),
        (5, 0, 2 / 32),
        (0, 5, 2 / 32),
        (2, 2, 1.0),
        (0, 0, 1.0),
    ],
)
def test_mcnemar_exact_p_values_by_hand(negative, positive, p):
    test = mcnemar_exact(negative, positive)
    assert (test.negative, test.positive) == (negative, positive)
    assert test.p_value == pytest.approx(p, rel=1e-12)


def test_intervals_resample_clusters():
    # dialogues 0 and 1 (actions differ) each hold one negative flip in four pairs; 2 and 3 agree
    base = _arm([1] * 12, [5] * 12, [4] * 12)
    cand = _arm([0, 1, 1, 1] * 2 + [1] * 4, [5] * 12, [4] * 12)
    clusters = [0] * 4 + [1] * 4 + [2] * 2 + [3] * 2
    differ = [True] * 8 + [False] * 4
    table = outcome_flips(base, cand, differ=differ, clusters=clusters, bootstrap=Bootstrap(n_resamples=300, seed=2),
                          unit="dialogues")
    flat = outcome_flips(base, cand, differ=differ, bootstrap=Bootstrap(n_resamples=300, seed=2))
    assert table.unit == "dialogues" and table.differ.units == 2 and table.agree.units == 2
    assert flat.unit == "pairs" and flat.differ.units == 8
    # every resample of dialogues holds a quarter of flips; resampling pairs moves the share
    assert (table.differ.negative_flip_rate.low, table.differ.negative_flip_rate.high) == (0.25, 0.25)
    assert flat.differ.negative_flip_rate.low < 0.25 < flat.differ.negative_flip_rate.high
    assert (table.agree.negative_flip_rate.low, table.agree.negative_flip_rate.high) == (0.0, 0.0)


def test_one_unit_and_an_empty_group_warn():
    arm = _arm([1, 0], [5, 25], [4, 1])
    with pytest.warns(MissingValueWarning) as caught:
        table = outcome_flips(arm, arm, differ=[True, True], clusters=[0, 0], bootstrap=Bootstrap(n_resamples=10))
    assert [str(w.message) for w in caught] == [
        "baseline -> candidate: no pair in group 'agree'; its rates are NaN",
        "baseline -> candidate, differ: a 95% interval from one cluster is undefined (NaN): one value says nothing "
        "about its spread",
    ]
    assert math.isnan(table.agree.negative_flip_rate.value) and table.agree.pairs == 0
    # the differ group rests on one dialogue: its intervals are undefined, never zero-width
    assert math.isnan(table.differ.reward_difference.low)


def test_decomposition_uses_the_three_replays():
    a = _arm([1, 1, 1, 1], [5, 5, 4, 6], [4, 4, 5, 4])
    b = _arm([0, 0, 1, 1], [9, 9, 4, 6], [2, 2, 5, 4])
    c = _arm([1, 0, 1, 1], [6, 9, 4, 6], [4, 2, 5, 4])
    d = flip_decomposition(a, b, c, differ=[True, True, True, False], bootstrap=Bootstrap(n_resamples=0),
                           names=("hc", "rnd"))
    assert d.total.differ.negative_flip_rate.value == pytest.approx(2 / 3)  # A -> B
    assert d.action.differ.negative_flip_rate.value == pytest.approx(1 / 3)  # A's action then B -> B
    assert d.after.differ.negative_flip_rate.value == pytest.approx(1 / 3)  # A -> A's action then B
    assert (d.action.baseline, d.action.candidate, d.after.candidate) == ("hc then rnd", "rnd", "hc then rnd")
    assert [r["comparison"] for r in d.to_records()] == ["total"] * 2 + ["action"] * 2 + ["after"] * 2
    assert len(d.to_frame()) == 6


arms = st.integers(min_value=2, max_value=30).flatmap(
    lambda n: st.tuples(
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.integers(1, 25), min_size=n, max_size=n),
        st.lists(st.integers(1, 25), min_size=n, max_size=n),
        st.lists(st.integers(1, 5), min_size=n, max_size=n),
        st.lists(st.integers(1, 5), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
    )
)


@settings(max_examples=40, deadline=None)
@given(arms)
def test_properties(data):
    s1, s2, t1, t2, q1, q2, differ, clusters = data
    x, y = _arm(s1, t1, q1), _arm(s2, t2, q2)
    boot = Bootstrap(n_resamples=20, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValueWarning)
        forward = outcome_flips(x, y, differ=differ, clusters=clusters, bootstrap=boot)
        backward = outcome_flips(y, x, differ=differ, clusters=clusters, bootstrap=boot)
        same = outcome_flips(x, x, differ=differ, clusters=clusters, bootstrap=boot)
        order = np.random.default_rng(0).permutation(len(s1))
        shuffled = outcome_flips(*(_arm(*(np.asarray(v)[order] for v in arm)) for arm in ((s1, t1, q1), (s2, t2, q2))),
                                 differ=np.asarray(differ)[order], clusters=np.asarray(clusters)[order], bootstrap=boot)
    for group in ("differ", "agree"):
        f, b, s, p = (getattr(t, group) for t in (forward, backward, same, shuffled))
        if not f.pairs:
            continue
        # swapping the arms swaps the flips and negates the differences
        assert f.negative_flip_rate.value == b.positive_flip_rate.value
        assert f.positive_flip_rate.value == b.negative_flip_rate.value
        assert f.benign_churn_rate.value == b.benign_churn_rate.value
        assert f.reward_difference.value == -b.reward_difference.value
        assert f.mcnemar.p_value == pytest.approx(b.mcnemar.p_value)
        # flips and unchanged outcomes are disjoint shares
        assert f.negative_flip_rate.value + f.positive_flip_rate.value + f.benign_churn_rate.value <= 1 + 1e-12
        assert 0.0 <= f.mcnemar.p_value <= 1.0
        # an arm against itself: nothing flips, nothing changes
        assert (s.negative_flip_rate.value, s.positive_flip_rate.value, s.benign_churn_rate.value) == (0, 0, 1)
        assert s.mcnemar.p_value == 1.0 and s.turns_difference.value == 0.0
        # the order of the pairs does not matter
        assert p.to_dict() == pytest.approx(f.to_dict(), nan_ok=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"success": [1, 0], "reward": [1.0], "turns": [1, 2]}, "reward has 1 values, success 2"),
        ({"success": [1, 2], "reward": [1, 2], "turns": [1, 2]}, "success must hold booleans"),
        ({"success": [1, 0], "reward": [1, float("nan")], "turns": [1, 2]}, "reward holds NaN at pair 1"),
        ({"success": [1, 0], "reward": [1, 2], "turns": [1, float("inf")]}, "turns holds an infinite value"),
        ({"success": [[1, 0]], "reward": [1, 2], "turns": [1, 2]}, "success must be one-dimensional"),
    ],
)
def test_bad_outcomes_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Outcomes(**kwargs)


def test_bad_pairing_is_named():
    with pytest.raises(ValueError, match="baseline has 10 pairs, candidate 2"):
        outcome_flips(BASE, _arm([1, 0], [5, 6], [4, 4]), differ=DIFFER)
    with pytest.raises(ValueError, match="differ has 3 values for 10 pairs"):
        outcome_flips(BASE, CAND, differ=[True] * 3)
    with pytest.raises(ValueError, match=r"clusters must be one integer code per pair \(10\)"):
        outcome_flips(BASE, CAND, differ=DIFFER, clusters=[0.5] * 10)
    with pytest.raises(TypeError, match="must be Outcomes"):
        outcome_flips(BASE, {"success": [1]}, differ=DIFFER)  # type: ignore[arg-type]


def test_iq_defaults_to_nan_and_is_left_out():
    x = Outcomes(success=[1, 0, 1], reward=[15, -25, 16], turns=[5, 25, 4])
    table = outcome_flips(x, x, differ=[True, True, False], bootstrap=Bootstrap(n_resamples=0))
    assert math.isnan(table.differ.iq_difference.value)
    assert table.differ.benign_churn_rate.value == 1.0
