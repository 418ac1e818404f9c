"""Act-only policies get their words from the template NLG through run_policy(..., nlg=...)."""

from __future__ import annotations

from contexts import GridSpec, generate_grid
from policies import CallablePolicy, HandcraftedPolicy, SummaryPolicyAdapter, TemplateNLG
from simscore import run_policy


def test_template_words_for_act_only_responses_are_the_adapters_own():
    grid = generate_grid(GridSpec(levels=(0.0, 0.5, 1.0)))
    adapter = SummaryPolicyAdapter(HandcraftedPolicy())  # words its acts as instance "handcrafted"
    acts_only = CallablePolicy(lambda context: adapter.respond(context).action, name="acts-only")
    bare = run_policy(acts_only, grid)
    assert set(bare.texts()) == {None}
    worded = run_policy(acts_only, grid, nlg=TemplateNLG("handcrafted"))
    reference = run_policy(adapter, grid)
    assert worded.texts() == reference.texts() and worded.actions() == reference.actions()
    assert worded.provenance["nlg_texts"] == {"nlg": "TemplateNLG('handcrafted')", "count": len(grid)}
    # another instance words the same acts independently, as a separately trained NLG would
    other = run_policy(acts_only, grid, nlg=TemplateNLG("someone-else")).texts()
    assert 0 < sum(a == b for a, b in zip(other, reference.texts())) < len(grid)
