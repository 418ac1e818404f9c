"""compare(): alignment, per-context scores, summary, bootstrap, metadata, scale."""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from simscore import Act, Response, Responses, compare
from simscore.errors import (
    ContextMismatchError,
    InvalidResponseError,
    MissingValueWarning,
    UnknownMeasureError,
)
from simscore.stats import Bootstrap

P = Act.parse


def _pair():
    a = Responses(
        {
            "c1": Response(P("request(food)"), "What food?"),
            "c2": Response(P('inform(name="x",food="thai")'), "X serves thai food."),
            "c3": Response(P("bye()"), "Goodbye."),
        },
        policy="A",
        provenance={"seed": 1},
    )
    b = Responses(
        {
            "c3": Response(P("bye()"), "Goodbye."),
            "c1": Response(P("request(area)"), "Which area?"),
            "c2": Response(P('inform(name="y",food="thai")'), "Y serves thai food."),
        },
        policy="B",
        provenance={"seed": 2},
    )
    return a, b


def test_scores_summary_and_signatures():
    a, b = _pair()
    c = compare(a, b)
    assert list(c.scores.index) == ["c1", "c2", "c3"]
    assert list(c.scores.columns) == ["tmr", "dmr", "cer", "cmr"]
    np.testing.assert_allclose(c.scores["tmr"], [0, 0, 1])
    np.testing.assert_allclose(c.scores["cmr"], [0.2, 4 / 6, 1])
    assert c.mean("tmr") == pytest.approx(1 / 3)
    assert c.summary.loc["dmr", "count"] == 3 and c.summary.loc["dmr", "missing"] == 0
    assert set(c.signatures) == {"tmr", "dmr", "cer", "cmr"}
    assert c.a == "A" and c.b == "B"
    assert c.info.a_provenance == {"seed": 1}


def test_mismatched_ids_are_listed():
    a, b = _pair()
    extra = Responses({**dict(b), **{f"z{i}": Response(text="x") for i in range(7)}})
    with pytest.raises(ContextMismatchError) as info:
        compare(a, extra)
    message = str(info.value)
    assert "7 context id(s) in b but not in a" in message
    assert "'z0'" in message and "and 2 more" in message


def test_unknown_measure_suggests():
    a, b = _pair()
    with pytest.raises(UnknownMeasureError, match="did you mean 'cmr'"):
        compare(a, b, measures=["cmrr"])


def test_text_only_responses_give_nan_with_warning():
    a = Responses({"c1": Response(text="hi"), "c2": Response(P("hello()"))})
    b = Responses({"c1": Response(P("hello()")), "c2": Response(P("hello()"))})
    with pytest.warns(MissingValueWarning, match="tmr: 1 pair"):
        c = compare(a, b, measures=["tmr"])
    assert np.isnan(c.scores.loc["c1", "tmr"])
    assert c.summary.loc["tmr", "count"] == 1 and c.summary.loc["tmr", "missing"] == 1
    assert c.mean("tmr") == 1.0


def test_metadata_is_joined():
    a, b = _pair()
    meta = pd.DataFrame({"turn_index": [0, 1, 2]}, index=["c1", "c2", "c3"])
    c = compare(a, b, metadata=meta)
    assert list(c.scores["turn_index"]) == [0, 1, 2]
    c2 = compare(a, b, metadata={"c1": {"turn_index": 5}, "c2": {"turn_index": 6}, "c3": {"turn_index": 7}})
    assert list(c2.scores["turn_index"]) == [5, 6, 7]
    with pytest.raises(ContextMismatchError, match="metadata lacks 1"):
        compare(a, b, metadata=meta.iloc[:2])


def test_metadata_of_every_plain_kind_is_kept_and_only_lists_and_objects_left_out():
    """Columns of numbers, booleans, times, strings and categories are joined whatever their cells; an object
    column is left out when one of its cells is a list, a tuple or a mapping, and kept otherwise."""
    a, b = _pair()
    ids = ["c1", "c2", "c3"]
    meta = pd.DataFrame({
        "turn_index": [0, 1, 2], "share": [0.5, None, 1.0], "trial": pd.array([1, None, 3], dtype="Int64"),
        "done": [True, False, True], "at": pd.to_datetime(["2026-01-01", "2026-01-02", "2026-01-03"]),
        "name": pd.array(["x", "y", None], dtype="string"), "kind": pd.Categorical(["u", "v", "u"]),
        "note": pd.Series([None, "n", None], index=ids, dtype=object), "messages": [None, [{"role": "user"}], None],
        "tools": pd.Series([(), None, None], index=ids, dtype=object), "state": [{"k": 1}, None, None],
    }, index=ids)
    scores = compare(a, b, measures=["tmr"], metadata=meta).scores
    kept = ["turn_index", "share", "trial", "done", "at", "name", "kind", "note"]
    assert [c for c in meta.columns if c in scores.columns] == kept
    pd.testing.assert_frame_equal(scores[kept], meta[kept], check_names=False)


def test_single_context_and_large_comparison():
    one = Responses({"only": Response(P("hello()"))})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = compare(one, one)
    # one context says nothing about the spread of its mean: undefined, not [1, 1] (as before)
    assert [str(w.message) for w in caught] == [
        "tmr, dmr, cer, cmr: a 95% interval from one context is undefined (NaN): one value says nothing about "
        "its spread"]
    assert caught[0].category is MissingValueWarning and caught[0].filename == __file__
    assert c.summary[["ci_low", "ci_high"]].isna().all().all() and c.mean("cer") == 1.0
    assert c.format_summary().splitlines()[1] == "tmr        1.0000  undefined             1        0"
    assert c.format_summary().splitlines()[-1] == "95% CI: percentile bootstrap, 1 context resampled"
    pool = [P("request(food)"), P("request(area)"), P('inform(name="x",food="thai")'), P("bye()")]
    rng = np.random.default_rng(0)
    n = 200_000
    ia, ib = rng.integers(0, 4, n), rng.integers(0, 4, n)
    a = Responses({f"c{i}": Response(pool[ia[i]]) for i in range(n)})
    b = Responses({f"c{i}": Response(pool[ib[i]]) for i in range(n)})
    c = compare(a, b)
    assert c.mean("tmr") == pytest.approx(np.mean(ia == ib))
    assert c.summary.loc["tmr", "ci_low"] < c.mean("tmr") < c.summary.loc["tmr", "ci_high"]


def test_save_csv_and_json(tmp_path):
    a, b = _pair()
    c = compare(a, b)
    c.save(tmp_path / "s.csv")
    frame = pd.read_csv(tmp_path / "s.csv", index_col="context_id")
    np.testing.assert_allclose(frame["cmr"], c.scores["cmr"])
    c.save(tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["summary"]["tmr"]["mean"] == pytest.approx(1 / 3)
    assert data["signatures"]["cer"].startswith("cer|")
    assert len(data["scores"]) == 3
    with pytest.raises(ValueError, match=".csv or .json"):
        c.save(tmp_path / "s.txt")


def test_shared_bootstrap_is_seeded_paired_and_skips_nan():
    rng = np.random.default_rng(5)
    pool = [P("request(food)"), P("request(area)"), P('inform(name="x",food="thai")'), P("bye()")]
    n = 400
    ia, ib = rng.integers(0, 4, n), rng.integers(0, 4, n)
    a = Responses({f"c{i}": Response(pool[ia[i]]) for i in range(n)})
    b = Responses({f"c{i}": Response(None if i % 10 == 0 else pool[ib[i]], "x") for i in range(n)})
    with pytest.warns(MissingValueWarning):
        first = compare(a, b, bootstrap=Bootstrap(seed=3))
    with pytest.warns(MissingValueWarning):
        again = compare(a, b, bootstrap=Bootstrap(seed=3))
    pd.testing.assert_frame_equal(first.summary, again.summary)
    with pytest.warns(MissingValueWarning):
        other = compare(a, b, bootstrap=Bootstrap(seed=4))
    assert not first.summary[["ci_low", "ci_high"]].equals(other.summary[["ci_low", "ci_high"]])
    for name in ("tmr", "dmr", "cer", "cmr"):
        row = first.summary.loc[name]
        assert row["count"] == 360 and row["missing"] == 40
        assert row["ci_low"] < row["mean"] < row["ci_high"]
        # the interval's width is what the binomial/normal approximation predicts
        sd = np.nanstd(first.scores[name]) / np.sqrt(360)
        assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * 1.96 * sd, rel=0.2)


def test_empty_comparison_is_an_error() -> None:
    empty = Responses([])
    with pytest.raises(InvalidResponseError, match="nothing to compare: both response sets are empty"):
        compare(empty, empty, measures=["tmr"])


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        ({"seed": 1.5}, TypeError, "seed must be an int, got float 1.5"),
        ({"seed": True}, TypeError, "seed must be an int, got bool True"),
        ({"seed": -1}, ValueError, "seed must be >= 0, got -1"),
        ({"seed": 2**70}, ValueError, "seed must be <= 9,223,372,036,854,775,807"),
        ({"confidence": "x"}, TypeError, "confidence must be a number, got str 'x'"),
        ({"confidence": 1}, ValueError, r"confidence must be in \(0, 1\), got 1"),
        ({"confidence": 0}, ValueError, r"confidence must be in \(0, 1\), got 0"),
        ({"n_resamples": 10**7}, ValueError, "n_resamples must be <= 1,000,000, got 10,000,000"),
    ],
)
def test_bad_bootstrap_settings_are_named_before_any_work(settings, error, message) -> None:
    with pytest.raises(error, match=message):
        Bootstrap(**settings)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"bootstrap": {"seed": 1}}, TypeError, "compare[(][)]: bootstrap must be a simscore.stats.Bootstrap, got dict"),
        ({"seed": 1}, TypeError, "unexpected keyword argument 'seed'"),  # one Bootstrap, no loose settings
        ({"measures": 5}, TypeError, "measures must be a name, a Measure or an iterable of them, got int"),
    ],
)
def test_bad_options_are_named(options, error, message) -> None:
    r = Responses({"c1": Response(Act.parse("hello()"))})
    options = {"measures": ["tmr"], **options}
    with pytest.raises(error, match=message):
        compare(r, r, **options)


def test_write_json_streams_the_bytes_of_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import io

    module = importlib.import_module("simscore.comparison.result")
    ids = [f"c{i}" for i in range(10)]
    a = Responses({i: Response(Act.parse("hello()" if k % 3 else "bye()"), "Hi.") for k, i in enumerate(ids)}, policy="a")
    b = Responses({i: Response(Act.parse("hello()")) for i in ids}, policy="b")
    comparison = compare(a, b, ["tmr", "cer"], metadata={i: {"turn_index": k, "note": None} for k, i in enumerate(ids)})
    expected = json.dumps({**comparison.to_json_dict(), "strata": {"x": [1]}}, indent=1, allow_nan=False) + "\n"
    for chunk in (3, 10, 10_000):  # chunk boundaries inside, at the end, beyond
        monkeypatch.setattr(module, "JSON_CHUNK", chunk)  # read where the records are made
        out = io.StringIO()
        comparison.write_json(out, extra={"strata": {"x": [1]}})
        assert out.getvalue() == expected


def test_missing_texts_give_one_warning_that_says_how_to_add_words():
    a = Responses({"c1": Response(P("hello()")), "c2": Response(P("bye()"))}, policy="acts-only")
    b = Responses({"c1": Response(P("hello()"), "Hi."), "c2": Response(P("bye()"), "Bye.")}, policy="worded")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = compare(a, b, measures=["tmr", "bleu4", "use_cos"])
    messages = [str(w.message) for w in caught if issubclass(w.category, MissingValueWarning)]
    assert messages == [
        "bleu4, use_cos: 2 pair(s) have no text on at least one side; scored NaN ('acts-only' has no text for 2 of 2 "
        "contexts). An act-only policy gets words from the template NLG: run_policy(policy, contexts, "
        "nlg=policies.TemplateNLG(name)) in Python, or `simscore respond POLICY CONTEXTS --out FILE --nlg template` "
        "on the command line"
    ]
    assert c.summary.loc["bleu4", "missing"] == 2 and c.summary.loc["tmr", "missing"] == 0


def test_an_interval_does_not_depend_on_the_other_measures_asked_for():
    # Once, adding a text measure changed TMR's interval: the resampling was drawn over the
    # distinct rows of the scores asked for. It is drawn over the distinct response pairs now.
    rng = np.random.default_rng(8)
    acts = [P("request(food)"), P("request(area)"), P('inform(name="x",food="thai")')]
    words = ["What food?", "Which area?", "Try x.", "Anything else?"]
    n = 200
    a = Responses({f"c{i}": Response(acts[rng.integers(3)], words[rng.integers(4)]) for i in range(n)})
    b = Responses({f"c{i}": Response(acts[rng.integers(3)], words[rng.integers(4)]) for i in range(n)})
    alone = compare(a, b, ["tmr"], bootstrap=Bootstrap(seed=1)).summary.loc["tmr"]
    for measures in (["tmr", "dmr"], ["tmr", "bleu4"], ["bleu4", "cer", "tmr"]):
        assert compare(a, b, measures, bootstrap=Bootstrap(seed=1)).summary.loc["tmr"].equals(alone), measures


def test_clusters_resample_dialogues():
    # 10 dialogues of 8 contexts; within a dialogue the two policies agree everywhere or nowhere
    n = 80
    dialogue = [f"d{i // 8}" for i in range(n)]
    agree = [i // 8 % 2 == 0 for i in range(n)]
    a = Responses({f"c{i}": Response(P("request(food)")) for i in range(n)})
    b = Responses({f"c{i}": Response(P("request(food)" if agree[i] else "request(area)")) for i in range(n)})
    meta = pd.DataFrame({"source_name": "x", "dialogue_id": dialogue}, index=[f"c{i}" for i in range(n)])
    contexts = compare(a, b, ["tmr"], metadata=meta, bootstrap=Bootstrap(seed=0), clusters=None)
    dialogues = compare(a, b, ["tmr"], metadata=meta, bootstrap=Bootstrap(seed=0), clusters=("source_name", "dialogue_id"))
    row, unclustered = dialogues.summary.loc["tmr"], contexts.summary.loc["tmr"]
    assert row["mean"] == unclustered["mean"] == 0.5
    # Resampling the 10 dialogues, the mean is Binomial(10, 1/2) / 10: its 2.5 % and 97.5 % points
    # are 2/10 and 8/10 (P(X <= 1) = 0.011, P(X <= 2) = 0.055). Resampling the 80 contexts it is
    # Binomial(80, 1/2) / 80, whose points are 32/80 and 48/80 (sd 0.056): about sqrt(8) narrower.
    assert (row["ci_low"], row["ci_high"]) == (0.2, 0.8)
    assert 0.375 <= unclustered["ci_low"] <= 0.4 and 0.6 <= unclustered["ci_high"] <= 0.625
    assert dialogues.info.clusters == ("source_name", "dialogue_id")
    assert (dialogues.info.unit, dialogues.info.units) == ("dialogues", 10)
    assert (contexts.info.clusters, contexts.info.unit, contexts.info.units) == ((), "contexts", 80)
    # the default: collected contexts (their metadata names each dialogue) resample dialogues
    default = compare(a, b, ["tmr"], metadata=meta, bootstrap=Bootstrap(seed=0))
    assert default.summary.equals(dialogues.summary) and default.info == dialogues.info
    assert compare(a, b, ["tmr"], metadata=meta, bootstrap=Bootstrap(seed=0), clusters=()).summary.equals(contexts.summary)
    assert default.format_summary().splitlines()[-1] == (
        "95% CI: percentile bootstrap, 10 dialogues resampled (by source_name, dialogue_id)")
    assert contexts.format_summary().splitlines()[-1] == "95% CI: percentile bootstrap, 80 contexts resampled"
    with pytest.raises(ValueError, match="need the contexts' metadata"):
        compare(a, b, ["tmr"], clusters="dialogue_id")
    with pytest.raises(ValueError, match=r"clusters .dialog.: the metadata has no such column"):
        compare(a, b, ["tmr"], metadata=meta, clusters="dialog")


def test_the_typed_info_saves_and_reads_back_as_it_was() -> None:
    from simscore.comparison import ComparisonInfo
    from simscore.samples import SampledResponses

    r = Responses({f"c{i}": Response(Act.parse("hello()" if i % 2 else "bye()")) for i in range(6)}, policy="p")
    single = compare(r, r, ["tmr"], bootstrap=Bootstrap(n_resamples=20, seed=5))
    assert list(single.info.to_dict()) == ["a_provenance", "b_provenance", "seed", "n_resamples", "confidence",
                                          "clusters", "unit", "units", "inputs"]  # the file's order
    assert ComparisonInfo.from_dict(single.info.to_dict()) == single.info
    assert single.to_json_dict()["info"] == single.info.to_dict()
    assert (single.info.bootstrap, single.info.unit, single.info.units) == (Bootstrap(20, 0.95, 5), "contexts", 6)
    sampled = SampledResponses({i: [r[i], r[i]] for i in r.ids}, policy="s")
    other = SampledResponses({i: [r[i], Response(Act.parse("hello()"))] for i in r.ids}, policy="t")
    drawn = compare(sampled, other, ["tmr"], bootstrap=Bootstrap(n_resamples=0), n_permutations=20)
    assert (drawn.info.samples, drawn.info.n_permutations) == (2, 20)
    assert [drawn.info.inputs[side]["samples"] for side in "ab"] == [2, 2]  # checked by simscore view
    assert ComparisonInfo.from_dict(drawn.info.to_dict()) == drawn.info
    old = ComparisonInfo.from_dict({"seed": 0})  # a file saved before the units: no units line
    assert (old.units, old.unit, old.confidence) == (None, None, 0.95)
    with pytest.raises(ValueError, match="info: bootstrap: n_resamples must be <= 1,000,000"):
        ComparisonInfo.from_dict({"n_resamples": 10**9})


def test_saved_scores_keep_every_digit(tmp_path) -> None:
    # compare --out X.csv wrote 10 significant digits (2/3 -> 0.6666666667) while the summary kept all
    from simscore.app.cli import main

    a = Responses({f"c{i}": Response(Act.parse("inform(food=thai,area=north,pricerange=cheap)")) for i in range(3)})
    b = Responses({f"c{i}": Response(Act.parse(["inform(food=thai,area=north)", "inform(food=thai)",
                                                "inform(area=south)"][i])) for i in range(3)})
    a.to_jsonl(tmp_path / "a.jsonl")
    b.to_jsonl(tmp_path / "b.jsonl")
    expected = compare(a, b, ["tmr", "cmr", "cer"]).scores
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr,cmr,cer",
                 "--out", str(tmp_path / "cli.csv")]) == 0
    compare(a, b, ["tmr", "cmr", "cer"]).save(tmp_path / "api.csv")
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr,cmr,cer",
                 "--out", str(tmp_path / "cli.json")]) == 0
    compare(a, b, ["tmr", "cmr", "cer"]).save(tmp_path / "api.json")
    for name in ("cli.csv", "api.csv"):  # read with Python's float(): exact whatever pandas' parser (older ones round)
        with open(tmp_path / name, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        assert [[float(r[m]) for m in ("tmr", "cmr", "cer")] for r in rows] == expected[["tmr", "cmr", "cer"]].to_numpy().tolist()
    for name in ("cli.json", "api.json"):  # pandas' to_json kept 10 digits here too
        records = json.loads((tmp_path / name).read_text())["scores"]
        assert [[r[m] for m in ("tmr", "cmr", "cer")] for r in records] == expected[["tmr", "cmr", "cer"]].to_numpy().tolist()
    assert "0.6666666666666666" in (tmp_path / "cli.csv").read_text()
    assert "0.6666666666666666" in (tmp_path / "cli.json").read_text()
