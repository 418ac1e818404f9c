"""simscore.score: plain lists of texts, act strings, ConvLab acts or Acts, built on compare()."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from simscore import MEASURES, Act, Response, Responses, compare, score
from simscore.errors import ActParseError, InvalidResponseError, MissingValueWarning
from simscore.measures import Bleu4, TotalMatchRate

ACTS_A = ["request(food)", "inform(name=x,food=thai)", "hello()", "bye()"]
ACTS_B = ["request(area)", "inform(food=thai,name=y)", "hello()", "reqmore()"]


def test_act_strings_match_compare_on_responses():
    result = score(ACTS_A, ACTS_B)
    a = Responses({str(i): Response(Act.parse(x)) for i, x in enumerate(ACTS_A)})
    b = Responses({str(i): Response(Act.parse(x)) for i, x in enumerate(ACTS_B)})
    expected = compare(a, b)
    assert result.kind == "act"
    assert list(result.measures) == ["tmr", "dmr", "cer", "cmr"]
    for name in result.measures:
        m = result[name]
        assert m.mean == pytest.approx(expected.mean(name))
        assert (m.ci_low, m.ci_high) == pytest.approx(tuple(expected.summary.loc[name, ["ci_low", "ci_high"]]))
        assert np.allclose(m.scores, expected.scores[name].to_numpy())
        assert m.count == 4 and m.missing == 0
        assert m.signature == MEASURES[name].signature()
    assert result["tmr"].scores.tolist() == [0.0, 0.0, 1.0, 0.0]


def test_acts_convlab_lists_and_strings_mix():
    a = [Act.parse("request(food)"), [["Inform", "Restaurant", "Food", "thai"]], "hello()"]
    b = ["request(food)", "inform(restaurant-food=thai)", [["greet", "general", "none", "none"]]]
    result = score(a, b, measures=["tmr", "dmr"])
    assert result.kind == "act"
    assert result["tmr"].scores.tolist() == [1.0, 1.0, 0.0]


def test_auto_reads_prose_as_text_and_defaults_to_text_measures():
    bleu = Bleu4()
    result = score(["Which area do you prefer?", "Goodbye."], ["Which area?", "Goodbye."], measures=[bleu])
    assert result.kind == "text"
    assert result["bleu4"].scores[1] == pytest.approx(1.0)
    # one item that is not an act makes the whole input text under auto
    assert score(["hello()", "Hi there"], ["hello()", "Hi"], measures="bleu4").kind == "text"


@pytest.mark.parametrize("kind", ["act", "action"])
def test_explicit_act_kind_rejects_prose_with_a_hint(kind):
    with pytest.raises(ActParseError, match=r"predictions\[1\].*kind='text'"):
        score(["hello()", "Hi there"], ["hello()", "bye()"], kind=kind)


def test_explicit_text_kind_never_parses():
    result = score(["hello()"], ["hello()"], measures="bleu4", kind="text")
    assert result.kind == "text" and result["bleu4"].mean == pytest.approx(1.0)


def test_missing_items_are_nan_and_left_out_like_compare():
    with pytest.warns(MissingValueWarning):
        result = score(["request(food)", None, "hello()"], ["request(food)", "bye()", "bye()"], measures="tmr")
    m = result["tmr"]
    assert np.isnan(m.scores[1]) and m.count == 2 and m.missing == 1 and m.mean == pytest.approx(0.5)


def test_result_is_frozen_and_scores_read_only():
    result = score(["hello()"], ["hello()"], measures="tmr")
    with pytest.raises(AttributeError):
        result.kind = "text"  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.measures["x"] = None  # type: ignore[index]
    with pytest.raises(ValueError):
        result["tmr"].scores[0] = 0.0
    assert len(result) == 1 and result.summary().loc["tmr", "mean"] == 1.0
    with pytest.raises(KeyError, match="no measure 'dmr'"):
        result["dmr"]


def test_measure_instances_are_reused_across_calls():
    tmr = TotalMatchRate()
    first = score(["hello()"], ["bye()"], measures=[tmr])
    second = score(["bye()"], ["bye()"], measures=[tmr])
    assert (first["tmr"].mean, second["tmr"].mean) == (0.0, 1.0)


def test_seeded_intervals_are_reproducible():
    a = ["request(food)"] * 30 + ["hello()"] * 20
    b = ["request(food)"] * 25 + ["bye()"] * 25
    r1, r2 = score(a, b, measures="tmr", seed=3), score(a, b, measures="tmr", seed=3)
    assert (r1["tmr"].ci_low, r1["tmr"].ci_high) == (r2["tmr"].ci_low, r2["tmr"].ci_high)
    assert r1["tmr"].ci_low < r1["tmr"].mean < r1["tmr"].ci_high


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "error", "message"),
    [
        (["hello()"], ["hello()", "bye()"], {}, InvalidResponseError, "same length, got 1 and 2"),
        ([], [], {}, InvalidResponseError, "empty"),
        ("hello()", "bye()", {}, TypeError, "sequence of items"),
        (["hello()"], ["bye()"], {"kind": "acts"}, ValueError, "kind must be"),
        (["hello()"], ["bye()"], {"measures": "bleu4"}, ValueError, "'bleu4' score texts, but the items were read as acts"),
        (["Hi"], ["Yo"], {"measures": "tmr"}, ValueError, "'tmr' score actions, but the items were read as texts"),
        ([3], ["bye()"], {"kind": "act"}, InvalidResponseError, r"predictions\[0\]: expected an Act"),
        ([3], ["bye"], {"kind": "text", "measures": "bleu4"}, InvalidResponseError, r"predictions\[0\]: a text must be a string"),
        (["hello()"], ["bye()"], {"measures": "tmrr"}, KeyError, "did you mean 'tmr'"),
    ],
)
def test_clear_errors(a, b, kwargs, error, message):
    with pytest.raises(error, match=message):
        score(a, b, **kwargs)


def test_numpy_arrays_and_tuples_are_accepted():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = score(np.array(["hello()", "bye()"]), ("hello()", "bye()"), measures="tmr")
    assert result["tmr"].mean == 1.0


def test_parameters_are_named_predictions_and_references():
    by_name = score(predictions=["request(food)"], references=["request(area)"], measures="dmr")
    assert by_name["dmr"].mean == 1.0


def test_the_old_parameter_names_are_gone():
    with pytest.raises(TypeError, match="unexpected keyword argument 'a'"):
        score(a=["request(food)"], references=["request(area)"], measures="tmr")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'references'"):
        score(["hello()"])


def test_an_unknown_measure_is_a_value_error_and_still_a_key_error():
    for caught in (ValueError, KeyError):
        with pytest.raises(caught, match=r"unknown measure 'tmrr'; did you mean 'tmr'\? \(known: tmr, dmr"):
            score(["hello()"], ["bye()"], measures="tmrr")


def test_several_references_score_the_best_match_per_item():
    predictions = ["request(food)", "inform(food=thai,name=x)", "bye()"]
    references = [
        ["request(area)", "request(food)"],               # the second matches
        ["inform(food=thai)", "inform(name=x)"],           # partial matches only
        "hello()",                                         # one reference, as before
    ]
    several = score(predictions, references, measures=["tmr", "cmr"])
    single = [score([p], [r], measures=["tmr", "cmr"]) for p, refs in zip(predictions, references)
              for r in (refs if isinstance(refs, list) else [refs])]
    best_tmr = [max(single[0]["tmr"].mean, single[1]["tmr"].mean), max(single[2]["tmr"].mean, single[3]["tmr"].mean),
                single[4]["tmr"].mean]
    best_cmr = [max(single[0]["cmr"].mean, single[1]["cmr"].mean), max(single[2]["cmr"].mean, single[3]["cmr"].mean),
                single[4]["cmr"].mean]
    assert several["tmr"].scores.tolist() == best_tmr == [1.0, 0.0, 0.0]
    assert several["cmr"].scores.tolist() == best_cmr
    assert len(several) == 3 and several["tmr"].count == 3 and several["tmr"].mean == pytest.approx(1 / 3)
    assert several["tmr"].ci_low <= several["tmr"].mean <= several["tmr"].ci_high


def test_several_text_references_and_what_is_refused():
    from simscore.measures import ConceptErrorRate

    assert ConceptErrorRate().higher_is_better  # every measure here is a similarity: the best is the largest
    convlab = [["Inform", "Restaurant", "Food", "thai"]]
    one_act = score(["inform(restaurant-food=thai)"], [convlab], measures="tmr")  # a ConvLab act is one reference
    assert one_act["tmr"].scores.tolist() == [1.0]
    two_acts = score(["inform(restaurant-food=thai)"], [[convlab, "bye()"]], measures="tmr")
    assert two_acts["tmr"].scores.tolist() == [1.0]
    with pytest.raises(ValueError, match="bleu4 takes one reference per item"):
        score(["Which area?"], [["Which part of town?", "Where?"]], measures="bleu4")
    with pytest.raises(InvalidResponseError, match=r"references\[0\]: an empty list of references"):
        score(["hello()"], [[]])


@pytest.mark.extra("text")
def test_several_text_references_take_the_most_similar():
    prediction, references = "What part of town?", ["Goodbye.", "Which area of town?"]
    several = score([prediction], [references], measures="use_cos")["use_cos"].scores[0]
    alone = [score([prediction], [r], measures="use_cos")["use_cos"].scores[0] for r in references]
    assert several == max(alone) and alone[1] > alone[0]


def test_one_item_has_no_interval():
    for references in (["request(area)"], [["request(area)", "request(food)"]]):  # one reference, or several
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = score(["request(food)"], references, measures=["tmr", "dmr"])
        assert [(w.category, str(w.message)) for w in caught] == [(
            MissingValueWarning,
            "tmr, dmr: a 95% interval from one item is undefined (NaN): one value says nothing about its spread",
        )]
        assert caught[0].filename == __file__
        assert np.isnan(result["dmr"].ci_low) and np.isnan(result["dmr"].ci_high)  # before: [1.0, 1.0]
        assert result["dmr"].mean == 1.0 and result["dmr"].count == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two items: an interval, no warning
        assert score(["hello()", "bye()"], ["hello()", "bye()"], measures="tmr")["tmr"].ci_low == 1.0


def test_a_result_prints_as_a_short_table():
    result = score(["request(food)", "hello()", None], ["request(area)", "hello()", "bye()"], measures=["tmr", "cmr"])
    assert str(result) == (
        "measure      mean  95% CI             unit       n\n"
        "tmr        0.5000  [0.0000, 1.0000]   items      2\n"
        "cmr        0.6000  [0.2000, 1.0000]   items      2"
    )
    assert repr(result) == ("ScoreResult(kind='act', items=3, means={'tmr': 0.5, 'cmr': 0.6}, confidence=0.95, "
                            "n_resamples=1000, seed=0)")
    assert repr(result["cmr"]) == "MeasureScore(name='cmr', mean=0.6, ci=(0.2, 1.0), count=2, missing=1)"
    no_intervals = score(["hello()", "bye()"], ["hello()", "hello()"], measures="tmr", n_resamples=0, confidence=0.9)
    assert str(no_intervals).splitlines() == [
        "measure      mean  90% CI             unit       n",
        "tmr        0.5000  none (0 resamples) items      2",
    ]
