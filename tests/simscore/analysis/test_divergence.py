"""simscore.analysis.divergence: the first turn at which two agents' actions differ, per dialogue or task."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from simscore import Act, Response, Responses, compare
from simscore.analysis.divergence import first_divergence
from simscore.comparison import Comparison
from simscore.errors import MetadataColumnError
from simscore.stats import Bootstrap

TAU2 = Path(__file__).resolve().parents[2] / "data" / "tau2" / "airline_whissle_4_simulations.json"


def _comparison(rows: list[tuple[str, str, int, float]]) -> Comparison:
    scores = pd.DataFrame({"tmr": [r[3] for r in rows], "source_name": ["s"] * len(rows),
                           "dialogue_id": [r[1] for r in rows], "turn_index": [r[2] for r in rows]},
                          index=pd.Index([r[0] for r in rows], name="context_id"))
    return Comparison(scores, pd.DataFrame(), {"tmr": "tmr"})


def test_the_first_differing_turn_and_its_distribution_by_hand():
    rows = [("a/2", "a", 2, 0.0), ("a/0", "a", 0, 1.0), ("a/1", "a", 1, 0.0),  # out of order: turn 1 is first
            ("b/0", "b", 0, 0.0), ("b/1", "b", 1, 1.0),
            ("c/0", "c", 0, 1.0), ("c/1", "c", 1, float("nan")),  # not scored: left out
            ("d/0", "d", 0, 1.0), ("d/1", "d", 1, 0.0)]
    result = first_divergence(_comparison(rows))
    assert result.table["dialogue_id"].tolist() == ["a", "b", "c", "d"]
    assert result.table["turns"].tolist() == [3, 2, 1, 2]
    assert result.table["first"].tolist()[:2] == [1.0, 0.0] and pd.isna(result.table["first"][2])
    assert result.table["context_id"].tolist()[:2] == ["a/1", "b/0"] and result.table["context_id"][3] == "d/1"
    dist = result.distribution
    assert dist["turn"].tolist() == [0, 1, "never"]
    assert dist["dialogues"].tolist() == [1, 2, 1]
    assert dist["share"].tolist() == [0.25, 0.5, 0.25] and dist["cumulative"].tolist() == [0.25, 0.75, 1.0]


def test_two_agents_on_the_real_tau2_transcripts_part_where_one_was_changed():
    from contexts.transcripts import read_tau2_results

    logged = read_tau2_results(TAU2)
    other = dict(logged.responses.items())
    other["28/0/3"] = Response(Act.parse("get_reservation_details(reservation_id=ZZ0000)"))  # task 28, turn 3
    other["13/0/0"] = Response(Act.parse("get_user_details(user_id=someone)"))  # task 13, turn 0
    b = Responses(other, policy="edited")
    comparison = compare(logged.responses, b, ("tmr", "dmr"), metadata=logged.contexts, bootstrap=Bootstrap(n_resamples=0))
    result = first_divergence(comparison, by=("task_id", "trial"))
    firsts = dict(zip(result.table["task_id"], result.table["first"]))
    assert firsts["28"] == 3.0 and firsts["13"] == 0.0 and pd.isna(firsts["11"]) and pd.isna(firsts["46"])
    assert result.distribution["dialogues"].tolist() == [1, 1, 2]
    # by intents only (DMR), task 28's turn 3 keeps its tool: the arguments differ, the intent does not
    assert dict(zip(result.table["task_id"], first_divergence(comparison, measure="dmr",
                                                              by=("task_id", "trial")).table["first"]))["13"] == 0.0
    assert pd.isna(dict(zip(result.table["task_id"], first_divergence(comparison, measure="dmr",
                                                                      by=("task_id", "trial")).table["first"]))["28"])


def test_named_errors():
    comparison = _comparison([("a/0", "a", 0, 1.0)])
    with pytest.raises(MetadataColumnError, match=r"no column 'task_id' \(they have tmr, source_name, dialogue_id, "
                                                  r"turn_index\); compare with the contexts' metadata"):
        first_divergence(comparison, by=("task_id",))
    with pytest.raises(MetadataColumnError, match="the comparison has no measure 'cmr' \\(it has tmr\\)"):
        first_divergence(comparison, measure="cmr")
    bad = comparison.scores.assign(turn_index=["first"])
    with pytest.raises(MetadataColumnError, match="column 'turn_index' holds values that are not turn numbers"):
        first_divergence(Comparison(bad, pd.DataFrame(), {"tmr": "tmr"}))


def test_an_agent_that_goes_on_alone_parts_at_its_first_turn_alone() -> None:
    # paired turns agree in d1 and d2; in d1 agent b made 5 turns to a's 3, in d2 both made 2;
    # in d3 they differ at turn 1, before a stops at turn 2
    rows = [("d1", 0, 1.0, 3, 5), ("d1", 1, 1.0, 3, 5), ("d1", 2, 1.0, 3, 5), ("d2", 0, 1.0, 2, 2), ("d2", 1, 1.0, 2, 2),
            ("d3", 0, 1.0, 2, 4), ("d3", 1, 0.0, 2, 4)]
    scores = pd.DataFrame({"tmr": [r[2] for r in rows], "source_name": "s", "dialogue_id": [r[0] for r in rows],
                           "turn_index": [r[1] for r in rows], "turns_a": [r[3] for r in rows],
                           "turns_b": [r[4] for r in rows]},
                          index=pd.Index([f"{r[0]}/{r[1]}" for r in rows], name="context_id"))
    result = first_divergence(Comparison(scores, pd.DataFrame(), {"tmr": "tmr"}))
    table = result.table.set_index("dialogue_id")
    assert table["first"].fillna(-1).to_dict() == {"d1": 3.0, "d2": -1, "d3": 1.0}
    assert table["alone"].fillna("-").to_dict() == {"d1": "b", "d2": "-", "d3": "-"}
    assert table["context_id"].fillna("-").to_dict() == {"d1": "-", "d2": "-", "d3": "d3/1"}
    assert result.distribution["turn"].tolist() == [1, 3, "never"]
