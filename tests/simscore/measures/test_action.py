"""Hand-computed golden values for the four action measures (metrics reference, action level)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from simscore import Act
from simscore.errors import ActParseError, InvalidResponseError, MissingValueWarning
from simscore.measures import (
    ConceptErrorRate,
    ConceptMatchRate,
    DialogueActMatchRate,
    TotalMatchRate,
)

P = Act.parse
C = Act.from_convlab

# (a, b, tmr, dmr, cer, cmr); the arithmetic is in the comment of each row.
GOLDEN = [
    # identical: everything 1
    (P('inform(name="x",food="thai")'), P('inform(food="thai",name="x")'), 1, 1, 1, 1),
    # same intent, different slots: tokens [food,⊥] vs [area,⊥], dist 1, CE 1/2; CM (1+0)/(1+4)
    (P("request(food)"), P("request(area)"), 0, 1, 0.5, 0.2),
    # different intents: CER gated to 0; CM shares the slot "food": (0+1)/(1+3)
    (P("request(food)"), P('confirm(food="thai")'), 0, 0, 0, 0.25),
    # bare slot vs value: tokens [food,⊥] vs [food,thai], CE 1/2; CM (1+1)/(1+3)
    (P("inform(food)"), P('inform(food="thai")'), 0, 1, 0.5, 0.5),
    # != item: tokens ignore the operator (CE 1); the triples differ: CM (1+3)/(1+5)
    (P('inform(name!="x",food="thai")'), P('inform(name="x",food="thai")'), 0, 1, 1, 4 / 6),
    # select with two values: [area,north,area,south] vs [area,north,area,west], CE 3/4; CM (1+2)/(1+4)
    (P('select(area="north",area="south")'), P('select(area="north",area="west")'), 0, 1, 0.75, 0.6),
    # empty hello(): |r| = |h| = 0 -> CE 1; CM (1+0)/(1+0)
    (P("hello()"), P("hello()"), 1, 1, 1, 1),
    # hello() vs bye(): nothing shared
    (P("hello()"), P("bye()"), 0, 0, 0, 0),
    # empty vs non-empty, same intent: CE(h=∅, r=2 tokens) = 0, CE(h=2, r=∅) = 0; CM (1+0)/(1+2)
    (P("inform()"), P('inform(food="thai")'), 0, 1, 0, 1 / 3),
    # multi-intent ConvLab turn vs single intent: intents differ; CM (0+2)/(1+4)
    (
        C([["Inform", "Restaurant", "Food", "thai"], ["Request", "Restaurant", "Area", ""]]),
        C([["Inform", "Restaurant", "Food", "thai"]]),
        0, 0, 0, 0.4,
    ),
    # the same multi-intent turn in another order: equal
    (
        C([["Request", "Restaurant", "Area", "?"], ["Inform", "Restaurant", "Food", "thai"]]),
        C([["Inform", "Restaurant", "Food", "thai"], ["Request", "Restaurant", "Area", ""]]),
        1, 1, 1, 1,
    ),
    # CE goes negative: CE(6 tokens | ref 2) = (2-4)/2 = -1, CE(2 | ref 6) = (6-4)/6; mean -1/3; CM (1+2)/(1+6)
    (P("inform(a=1,b=2,c=3)"), P("inform(a=1)"), 0, 1, -1 / 3, 3 / 7),
    # one value changed: [food,thai,name,x] vs [food,thai,name,y], CE 3/4; CM (1+3)/(1+5)
    (P('inform(name="x",food="thai")'), P('inform(name="y",food="thai")'), 0, 1, 0.75, 4 / 6),
    # extra item: CE(2 | ref 4) = (4-2)/4, CE(4 | ref 2) = (2-2)/2; mean 1/4; CM (1+2)/(1+4)
    (P('inform(food="thai")'), P('inform(food="thai",area="north")'), 0, 1, 0.25, 0.6),
]

MEASURES = {"tmr": TotalMatchRate(), "dmr": DialogueActMatchRate(), "cer": ConceptErrorRate(), "cmr": ConceptMatchRate()}


@pytest.mark.parametrize("column", [2, 3, 4, 5], ids=["tmr", "dmr", "cer", "cmr"])
def test_golden_values(column):
    name = ["tmr", "dmr", "cer", "cmr"][column - 2]
    a = [row[0] for row in GOLDEN]
    b = [row[1] for row in GOLDEN]
    expected = np.array([row[column] for row in GOLDEN], dtype=float)
    np.testing.assert_allclose(MEASURES[name].score_pairs(a, b), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(MEASURES[name].score_pairs(b, a), expected, rtol=0, atol=1e-12)


def test_clipped_cer():
    a, b = P("inform(a=1,b=2,c=3)"), P("inform(a=1)")
    assert ConceptErrorRate(clip=True).score_pairs([a], [b])[0] == 0.0
    assert ConceptErrorRate(clip=True).score_pairs([b], [b])[0] == 1.0
    assert "clip:yes" in ConceptErrorRate(clip=True).signature()
    assert "clip:no" in ConceptErrorRate().signature()


def test_missing_action_is_nan_with_warning():
    with pytest.warns(MissingValueWarning, match="tmr: 2 pair"):
        scores = TotalMatchRate().score_pairs([None, P("hello()"), P("bye()")], [P("hello()"), None, P("bye()")])
    assert np.isnan(scores[:2]).all() and scores[2] == 1.0


def test_no_warning_without_missing_actions():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TotalMatchRate().score_pairs([P("hello()")], [P("hello()")])


def test_wrong_types_and_lengths_are_errors():
    with pytest.raises(InvalidResponseError, match="expected simscore.Act"):
        TotalMatchRate().score_pairs([3], [P("hello()")])
    with pytest.raises(ActParseError, match="cannot parse act 'Hello there'"):
        TotalMatchRate().score_pairs(["Hello there"], [P("hello()")])
    with pytest.raises(InvalidResponseError, match="same length, got 1 and 2"):
        TotalMatchRate().score_pairs([P("hello()")], [P("hello()"), P("bye()")])


def test_many_pairs_broadcast_from_distinct_pairs():
    rng = np.random.default_rng(0)
    pool = [row[0] for row in GOLDEN] + [row[1] for row in GOLDEN]
    ia = rng.integers(0, len(pool), 5000)
    ib = rng.integers(0, len(pool), 5000)
    a = [pool[i] for i in ia]
    b = [pool[i] for i in ib]
    for measure in MEASURES.values():
        fast = measure.score_pairs(a, b)
        slow = np.array([measure._pair_score(x, y) for x, y in zip(a, b)])
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("measure", ["tmr", "dmr", "cer", "cmr"])
def test_plain_data_is_converted_at_the_boundary(measure):
    m = MEASURES[measure]
    acts_a = [P("request(food)"), P("inform(area=north,food=thai)"), P("inform+request(restaurant-food=thai)")]
    acts_b = [P("request(area)"), P("inform(food=thai)"), P("inform(restaurant-food=thai)")]
    strings_a = ["request(food)", "inform(food=thai,area=north)", "inform+request(restaurant-food=thai)"]
    convlab_b = [[["Request", "general", "area", "?"]], "inform(food=thai)", [["Inform", "Restaurant", "Food", "thai"]]]
    expected = m.score_pairs(acts_a, acts_b)
    assert np.array_equal(m.score_pairs(strings_a, convlab_b), expected)


def test_strings_that_parse_to_equal_acts_match():
    # canonical item order: two spellings of one act are one act (TMR works on indices)
    assert TotalMatchRate().score_pairs(["inform(a=1,b=2)", "hello()"], ["inform(b=2,a=1)", "hello( )"]).tolist() == [1.0, 1.0]
    assert MEASURES["tmr"].score_pairs(["request(food)"], ["request(area)"]).tolist() == [0.0]
