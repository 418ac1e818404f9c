"""The statistical unit of a context set: dialogue clusters, and missing cluster ids refused or counted."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from simscore import Act, Response, Responses, compare
from simscore.errors import MetadataColumnError, MissingValueWarning
from simscore.stats import Bootstrap, bootstrap_ci
from simscore.stats.clusters import DIALOGUE_COLUMNS, check_column, cluster_codes, dialogue_clusters
from simscore.stats.strata import stratify

P = Act.parse


def _pair(n: int = 10) -> tuple[Responses, Responses]:
    a = Responses({f"c{i}": Response(P("request(food)")) for i in range(n)}, policy="A")
    b = Responses({f"c{i}": Response(P("request(food)" if i % 3 else "request(area)")) for i in range(n)},
                  policy="B")
    return a, b


def test_dialogue_clusters_is_the_rule_of_collected_contexts():
    assert DIALOGUE_COLUMNS == ("source_name", "dialogue_id")
    collected = pd.DataFrame({"source": "col", "source_name": ["x", "x"], "dialogue_id": ["d0", "d1"]})
    assert dialogue_clusters(collected) == DIALOGUE_COLUMNS
    generated = pd.DataFrame({"source": "gen", "source_name": [None, None], "dialogue_id": [None, None]})
    assert dialogue_clusters(generated) is None
    assert dialogue_clusters(pd.DataFrame({"dialogue_id": ["d0"]})) is None  # no source_name: not C_col's metadata
    assert dialogue_clusters(None) is None


def test_all_missing_cluster_ids_are_refused():
    a, b = _pair()
    meta = pd.DataFrame({"dialogue_id": [None] * 10, "flow": ["seen", "unseen"] * 5},
                        index=[f"c{i}" for i in range(10)])
    message = ("clusters dialogue_id: none of the 10 contexts has a value, so all of them would be one unit "
               "(an interval of zero width and p = 1); give a column that names each context's dialogue, "
               "or no clusters (--no-cluster on the command line, None in Python)")
    with pytest.raises(MetadataColumnError) as caught:
        compare(a, b, ["tmr"], metadata=meta, clusters="dialogue_id")
    assert str(caught.value) == message
    scores = compare(a, b, ["tmr"], metadata=meta, clusters=None).scores
    with pytest.raises(MetadataColumnError) as caught:
        stratify(scores, "flow", cluster="dialogue_id")
    assert str(caught.value) == message
    # before, every context became one cluster: a zero-width interval
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, KeyError)


def test_some_missing_cluster_ids_are_units_of_their_own_with_a_warning():
    a, b = _pair()
    dialogues = ["d0", "d0", "d0", "d1", "d1", "d1", None, None, None, "d2"]
    meta = pd.DataFrame({"dialogue_id": dialogues}, index=[f"c{i}" for i in range(10)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comparison = compare(a, b, ["tmr"], metadata=meta, clusters="dialogue_id", bootstrap=Bootstrap(seed=3))
    messages = [str(w.message) for w in caught if w.category is MissingValueWarning]
    assert messages == ["clusters dialogue_id: 3 of 10 contexts have no value; each of them is a unit of its own"]
    assert caught[0].filename == __file__  # the warning points at the caller
    # d0, d1, then three contexts alone, then d2: six units
    assert cluster_codes(meta, ["dialogue_id"]).tolist() == [0, 0, 0, 1, 1, 1, 3, 4, 5, 2]
    tmr = comparison.scores["tmr"].to_numpy()
    expected = bootstrap_ci(tmr, rng=3, clusters=np.array([0, 0, 0, 1, 1, 1, 3, 4, 5, 2]))
    assert tuple(comparison.summary.loc["tmr", ["ci_low", "ci_high"]]) == expected


def test_a_missing_column_names_the_columns_there_are():
    frame = pd.DataFrame({"flow": ["seen"], "dialogue_id": ["d0"], "x" * 50: [1]})
    with pytest.raises(MetadataColumnError) as caught:
        check_column(frame, "flw", role="--by", where="the context set c.jsonl")
    assert str(caught.value) == (
        "--by 'flw': the context set c.jsonl has no such column (it has: flow, dialogue_id, "
        + "x" * 37 + "...)"
    )
    a, b = _pair(2)
    meta = pd.DataFrame({"dialogue_id": ["d0", "d1"]}, index=["c0", "c1"])
    with pytest.raises(MetadataColumnError, match=r"^clusters 'dialog': the metadata has no such column \(it has: "
                       r"dialogue_id\)$"):
        compare(a, b, ["tmr"], metadata=meta, clusters="dialog")


def _collected(n_dialogues: int = 6, turns: int = 4) -> tuple[Responses, Responses, pd.DataFrame]:
    """Collected contexts: B agrees with A in every turn of the even dialogues and in none of the odd."""
    ids = [f"col/sim/d{d}/{t}" for d in range(n_dialogues) for t in range(turns)]
    meta = pd.DataFrame({"source": "col", "source_name": "sim",
                         "dialogue_id": [f"d{d}" for d in range(n_dialogues) for _ in range(turns)],
                         "flow": ["seen", "unseen"] * (n_dialogues * turns // 2)}, index=ids)
    a = Responses({i: Response(P("request(food)")) for i in ids}, policy="A")
    b = Responses({i: Response(P("request(food)" if int(i.split("/")[2][1:]) % 2 == 0 else "bye()")) for i in ids},
                  policy="B")
    return a, b, meta


def test_strata_move_the_units_the_comparison_was_made_with():
    a, b, meta = _collected()
    comparison = compare(a, b, ["tmr"], metadata=meta)
    assert comparison.info.clusters == ("source_name", "dialogue_id")
    by_dialogue = comparison.by_stratum("flow")
    explicit = stratify(comparison.scores, "flow", cluster=["source_name", "dialogue_id"])
    assert by_dialogue.table.equals(explicit.table) and by_dialogue.tests.equals(explicit.tests)
    assert by_dialogue.info["cluster"] == ["source_name", "dialogue_id"]
    # 6 dialogues x 2 strata: 12 cells; within each, the contexts agree everywhere or nowhere
    assert by_dialogue.table["units"].tolist() == [6, 6]
    # the scores frame alone: the same rule finds the dialogues
    assert stratify(comparison.scores, "flow").table.equals(by_dialogue.table)
    contexts = compare(a, b, ["tmr"], metadata=meta, clusters=None).by_stratum("flow")
    assert contexts.info["cluster"] is None and contexts.table["units"].tolist() == [12, 12]
    assert comparison.by_stratum("flow", cluster=None).table.equals(contexts.table)
    assert "units: contexts" in contexts.format().splitlines()[0]
    assert "units: dialogue cells of one stratum (by source_name, dialogue_id)" in by_dialogue.format().splitlines()[0]
    # each stratum's mean is 1/2 either way; resampling 6 dialogue cells its interval is wider
    width = {name: float((r.table["ci_high"] - r.table["ci_low"]).iloc[0])
             for name, r in (("dialogues", by_dialogue), ("contexts", contexts))}
    assert width["dialogues"] > width["contexts"]


def test_compare_resamples_the_dialogues_of_a_collected_context_set():
    from contexts.belief import BeliefState
    from contexts.collect import collect_contexts
    from contexts.dialogue_log import Dialogue, DialogueTurn

    dialogues = [Dialogue(f"d{d}", tuple(DialogueTurn(turn_index=t, belief=BeliefState()) for t in range(4)))
                 for d in range(6)]
    contexts = collect_contexts([({"domain": "restaurants", "source": {"name": "sim"}}, dialogues)])
    a, b, _ = _collected()
    comparison = compare(a, b, ["tmr"], metadata=contexts, bootstrap=Bootstrap(seed=1))
    assert (comparison.info.unit, comparison.info.units) == ("dialogues", 6)
    # Binomial(6, 1/2) / 6 resampling dialogues: 2.5 % and 97.5 % points 1/6 and 5/6 (P(X <= 0) = 0.016)
    low, high = comparison.summary.loc["tmr", ["ci_low", "ci_high"]]
    assert (low, high) == pytest.approx((1 / 6, 5 / 6))
    unclustered = compare(a, b, ["tmr"], metadata=contexts, bootstrap=Bootstrap(seed=1), clusters=None).summary.loc["tmr"]
    # resampling 24 contexts: Binomial(24, 1/2) / 24, about sqrt(24 / 6) = 2 times narrower
    assert high - low > 1.5 * (unclustered["ci_high"] - unclustered["ci_low"])
    # generated contexts (no dialogue id) and no metadata: contexts are the units
    assert compare(a, b, ["tmr"], bootstrap=Bootstrap(seed=1)).info.units == 24


def test_a_stratum_or_a_turn_of_one_dialogue_has_no_interval():
    from simscore.analysis import per_turn

    a, b, meta = _collected(n_dialogues=3)
    meta = meta.assign(flow=["rare" if d == "d2" else "common" for d in meta["dialogue_id"]],
                       turn_index=[int(i.rsplit("/", 1)[1]) for i in meta.index])
    comparison = compare(a, b, ["tmr"], metadata=meta)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        strata = comparison.by_stratum("flow")
    assert [str(w.message) for w in caught] == [
        "tmr at flow=rare: a 95% interval from one dialogue cell is undefined (NaN): one value says nothing "
        "about its spread"]
    rare = strata.table.loc[("tmr", "rare")]
    assert (rare["count"], rare["units"]) == (4, 1) and np.isnan(rare["ci_low"])  # 4 contexts, 1 dialogue
    assert np.isnan(strata.test("tmr").ci_low)  # nor has the difference
    assert "tmr       rare     1.0000  undefined             4" in strata.format()
    assert "[95% CI undefined]" in strata.sentence("tmr")
    # the per-turn table: dialogues 0 and 2 reach turn 4 only in this set
    short = meta[~((meta["dialogue_id"] == "d1") & (meta["turn_index"] == 3))]
    pair = compare(a.subset(short.index), b.subset(short.index), ["tmr"], metadata=short)
    sole = meta[meta["dialogue_id"] == "d0"]
    alone = compare(a.subset(sole.index), b.subset(sole.index), ["tmr"], metadata=sole, bootstrap=Bootstrap(n_resamples=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = per_turn([alone], measures=["tmr"])
    assert table["ci_low"].isna().all() and table["count"].tolist() == [1, 1, 1, 1]
    assert str(caught[0].message) == ("turn 0 tmr, turn 1 tmr, turn 2 tmr, turn 3 tmr: a 95% interval from one "
                                      "dialogue is undefined (NaN): one value says nothing about its spread")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not per_turn([pair], measures=["tmr"])["ci_low"].isna().any()  # two dialogues at every turn
