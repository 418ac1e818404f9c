"""simscore.app.experiment.context_facts: distinct belief states, dialogues, user-bye contexts, sensitivity."""

from __future__ import annotations

import pandas as pd
import pytest

from contexts import collect_contexts
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.sim.simulation import SummaryPolicyAdapter, run_dialogues
from simscore import analysis as an
from simscore.app.experiment.context_facts import context_metadata, context_sets_table, sensitivity_table
from simscore.policy import run_policy


@pytest.fixture(scope="module")
def collected():
    logs = []
    for name, seed in (("a", 1), ("b", 2)):
        result = run_dialogues(HandcraftedPolicy(), 6, seed=seed, keep_dialogues=True)
        logs.append(({"source": {"name": name}, "domain": "restaurants"}, result.dialogues))
    contexts = collect_contexts(logs, name="C_col")
    return contexts.filter(lambda c: (c.metadata.get("turn_index") or 0) > 0, name="C_col")


def test_context_metadata_and_table(collected):
    frame = context_metadata(collected)
    # every dialogue ends with the user's bye, which the handcrafted policy answers
    assert frame["user_bye"].sum() == 12 and frame["state"].nunique() < len(frame)
    keys = {c.belief.key() for c in collected}
    first = {c.belief.key() for c in collected if c.metadata["turn_index"] == 1}
    table = context_sets_table({"col": frame}, {"col": {"a": [i for i in frame.index if "/a/" in i]}})
    row, part = table.iloc[0], table.iloc[1]
    assert (row["contexts"], row["distinct_states"], row["dialogues"], row["user_bye"]) == (
        len(collected), len(keys), 12, 12)
    assert (row["first_turn"], row["first_turn_states"]) == (12, len(first))
    assert part["part"] == "a" and part["dialogues"] == 6


def test_sensitivity_without_the_user_bye_contexts(collected):
    frame = context_metadata(collected)
    hdc = run_policy(SummaryPolicyAdapter(HandcraftedPolicy()), collected)
    rnd = run_policy(SummaryPolicyAdapter(RandomPolicy(seed=1)), collected)
    result = an.seeds({"h": [hdc], "r": [rnd]}, ["tmr"], reward="ts", context_set="col", metadata=frame)
    table = sensitivity_table("col", 1, {"seeds": result.comparisons})
    row = table.iloc[0]
    scores = next(iter(result.comparisons.values())).scores
    kept = scores[~scores["user_bye"]]
    assert row["mean_all"] == pytest.approx(scores["tmr"].mean())
    assert row["mean_without_bye"] == pytest.approx(kept["tmr"].mean())
    assert (row["contexts_all"], row["contexts_without_bye"]) == (len(scores), len(kept))
    assert isinstance(table, pd.DataFrame) and row["group"] == "ts-ts"
