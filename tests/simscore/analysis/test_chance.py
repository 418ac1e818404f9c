"""The chance level where nothing can be paired: said in words, never printed as ``nan``."""

from __future__ import annotations

import math

from simscore import Act, Response, Responses, compare
from simscore.analysis.chance import ChanceLevel, shuffled_chance
from simscore.stats import Bootstrap


def test_one_context_has_no_chance_level_and_says_why() -> None:
    a = Responses({"c1": Response(Act.parse("inform(food=thai)"))}, policy="a")
    b = Responses({"c1": Response(Act.parse("inform(food=thai)"))}, policy="b")
    comparison = compare(a, b, ["tmr", "cmr"], bootstrap=Bootstrap(n_resamples=0), progress=False)
    chance = shuffled_chance(comparison, a, b, ["tmr", "cmr"])
    assert (chance.pairs, chance.possible) == (0, 0)
    assert all(math.isnan(value) for value in chance.means.values())
    assert chance.format() == ("chance level: undefined, no pair to score (there is one context; it needs two "
                               "contexts that differ)")


def test_one_cluster_and_a_measure_defined_on_no_pair_are_named() -> None:
    clustered = ChanceLevel({"tmr": math.nan}, 0, 0, ("task_id",))
    assert clustered.format() == ("chance level: undefined, no pair to score (all the contexts share one task_id; it "
                                  "needs two contexts that differ)")
    partly = ChanceLevel({"tmr": 0.25, "bleu4": math.nan}, 12, 12, ())
    assert partly.format().splitlines() == [
        "chance level: A's response vs B's response to another context (12 pairs)",
        "tmr       0.2500",
        "bleu4     undefined (on no pair)",
    ]
