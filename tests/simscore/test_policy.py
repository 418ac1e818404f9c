"""simscore.policy.run_policy: one respond per context, or one respond_batch for all of them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from simscore import Act, BatchPolicy, Policy, Response, run_policy
from simscore.errors import InvalidResponseError

CONTEXTS = [SimpleNamespace(id=f"c{i}") for i in range(4)]


class Batched:
    name = "batched"

    def __init__(self, n_out=None, kind=Response):
        self.calls = 0
        self.n_out = n_out
        self.kind = kind

    def respond(self, context):
        raise AssertionError("run_policy must use respond_batch")

    def respond_batch(self, contexts):
        self.calls += 1
        n = len(contexts) if self.n_out is None else self.n_out
        return [self.kind(Act("hello")) if self.kind is Response else "hello()" for _ in range(n)]


def test_batch_policy_is_called_once():
    policy = Batched()
    assert isinstance(policy, BatchPolicy) and isinstance(policy, Policy)
    responses = run_policy(policy, iter(CONTEXTS))
    assert policy.calls == 1 and responses.ids == ("c0", "c1", "c2", "c3") and responses.policy == "batched"


@pytest.mark.parametrize(("policy", "message"), [
    (Batched(n_out=3), "returned 3 responses for 4 contexts"),
    (Batched(kind=str), "returned str for context 'c0'"),
])
def test_bad_batches_are_errors(policy, message):
    with pytest.raises(InvalidResponseError, match=message):
        run_policy(policy, CONTEXTS)


class _Words:
    """A realiser that shows what it was given."""

    def realise(self, act, belief=None):
        return f"{act.intent} in {belief}"


def test_nlg_words_only_the_responses_without_a_text():
    contexts = [SimpleNamespace(id="c0", belief="b0"), SimpleNamespace(id="c1", belief="b1"), SimpleNamespace(id="c2")]

    def answer(context):
        return {"c0": Response(Act("hello")), "c1": Response(Act("bye"), "Goodbye!"), "c2": Response(Act("bye"))}[context.id]

    policy = SimpleNamespace(respond=answer, provenance={"seed": 3})
    plain = run_policy(policy, contexts)
    assert plain.texts() == [None, "Goodbye!", None] and "nlg_texts" not in plain.provenance
    worded = run_policy(policy, contexts, nlg=_Words())
    assert worded.texts() == ["hello in b0", "Goodbye!", "bye in None"]  # a context without a belief: None
    assert worded.actions() == plain.actions()
    assert worded.provenance["seed"] == 3 and worded.provenance["nlg_texts"]["count"] == 2
    assert worded.provenance["nlg_texts"]["nlg"].startswith("<tests.simscore.test_policy._Words object")
    # the batch path too
    batched = run_policy(Batched(), CONTEXTS, nlg=_Words())
    assert batched.texts() == ["hello in None"] * 4


def test_nlg_must_realise_and_return_text():
    with pytest.raises(TypeError, match="nlg must have a realise"):
        run_policy(Batched(), CONTEXTS, nlg=lambda act: "x")

    class Silent:
        def realise(self, act, belief=None):
            return None

    with pytest.raises(InvalidResponseError, match="context 'c0': nlg.realise returned NoneType, expected str"):
        run_policy(Batched(), CONTEXTS, nlg=Silent())
