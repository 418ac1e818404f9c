"""Policy adapters: plain callables, logged responses (JSON Lines / CSV), ConvLab-style policies."""

from __future__ import annotations

import hashlib
import random
from types import SimpleNamespace

import pytest

from contexts import BeliefState, default_domain
from contexts.context import Context
from policies.adapters import EMPTY_ACT, CallablePolicy, ConvLabPolicy, LoggedPolicy, to_convlab_state
from simscore import Act, Response, Responses
from simscore.errors import (
    ContextMismatchError,
    FileFormatError,
    InvalidContextError,
    InvalidResponseError,
)
from simscore.policy import Policy, run_policy
from simscore.responses_csv import read_responses_csv, write_responses_csv
from tests.policies.fake_convlab import FlatRuleBot, RuleBot, TemplateNLG

ONTOLOGY = default_domain().ontology
INITIAL = BeliefState.initial(ONTOLOGY)


def _belief(requested=None, **slots) -> BeliefState:
    """The initial belief with some slot distributions replaced."""
    dists = {slot: dict(INITIAL.slots[slot]) for slot in INITIAL.slots}
    dists.update(slots)
    return BeliefState(slots=dists, requested=requested or {})


#: Three hand-built contexts: turn 0; thai food likely and north somewhat likely; thai food
#: certain, price dontcare, the phone number requested (the address only weakly).
CONTEXTS = (
    Context("c0", INITIAL, {"source": "col", "dialogue_id": "d1", "turn_index": 0}),
    Context(
        "c1",
        _belief(food={"thai": 0.8}, area={"north": 0.6, "centre": 0.1}),
        {
            "source": "col",
            "dialogue_id": "d1",
            "turn_index": 1,
            "history": ("Hello, how may I help you?", "I want thai food in the north."),
        },
    ),
    Context(
        "c2",
        _belief(food={"thai": 1.0}, pricerange={"dontcare": 1.0}, requested={"phone": 0.9, "addr": 0.3}),
        {
            "source": "col",
            "dialogue_id": "d1",
            "turn_index": 2,
            "history": (
                "Hello, how may I help you?",
                "I want thai food in the north.",
                "Bangkok House serves thai food.",
                "Any price is fine. What is the phone number?",
            ),
            "user_action": [["request", "restaurant", "phone", ""], ["inform", "restaurant", "price range", "dontcare"]],
        },
    ),
)


# -- CallablePolicy ---------------------------------------------------------------------------

REQUEST_FOOD = Act.parse("request(food)")


@pytest.mark.parametrize(
    ("returned", "kind", "expected"),
    [
        (Response(REQUEST_FOOD, "What food?"), "auto", Response(REQUEST_FOOD, "What food?")),
        (REQUEST_FOOD, "auto", Response(REQUEST_FOOD)),
        ("request(food)", "auto", Response(REQUEST_FOOD)),
        ("  hello()  ", "auto", Response(Act("hello"))),
        ('inform(name="la mimosa",area=centre)', "auto", Response(Act("inform", [("area", "centre"), ("name", "la mimosa")]))),
        ("inform+request(food=thai,area)", "auto", Response(Act(["inform", "request"], [("food", "thai"), ("area",)]))),
        ("What kind of food would you like?", "auto", Response(text="What kind of food would you like?")),
        ("Sorry (I did not get that).", "auto", Response(text="Sorry (I did not get that).")),
        ("Thai food (in the north)", "auto", Response(text="Thai food (in the north)")),
        ("", "auto", Response(text="")),
        ("request(food)", "text", Response(text="request(food)")),
        ("request(food)", "action", Response(REQUEST_FOOD)),
        ("request (food)", "action", Response(REQUEST_FOOD)),
        (REQUEST_FOOD, "text", Response(REQUEST_FOOD)),
        (("request(food)", "What food?"), "text", Response(REQUEST_FOOD, "What food?")),
        ((REQUEST_FOOD, None), "auto", Response(REQUEST_FOOD)),
        ((None, "request(food)"), "auto", Response(text="request(food)")),
        ((None, ""), "auto", Response(text="")),
    ],
)
def test_callable_conversions(returned, kind, expected):
    policy = CallablePolicy(lambda context: returned, kind=kind)
    assert policy.respond(CONTEXTS[0]) == expected


def test_callable_policy_over_contexts():
    def rule(context):
        food, p = context.belief.top("food")
        if p == 0.0:
            return "request(food)"
        if context.belief.requested.get("phone", 0.0) > 0.5:
            return (f'inform(food="{food}",phone="01223 000000")', "The phone number is 01223 000000.")
        return f"How about {food} food?"

    policy = CallablePolicy(rule, provenance={"seed": 7})
    assert isinstance(policy, Policy)
    assert policy.name == "rule"
    assert policy.provenance == {
        "adapter": "callable",
        "function": f"{__name__}.test_callable_policy_over_contexts.<locals>.rule",
        "kind": "auto",
        "seed": 7,
    }
    responses = run_policy(policy, CONTEXTS)
    assert responses.policy == "rule"
    assert responses.provenance["seed"] == 7
    assert dict(responses) == {
        "c0": Response(Act("request", [("food",)])),
        "c1": Response(text="How about thai food?"),
        "c2": Response(Act("inform", [("food", "thai"), ("phone", "01223 000000")]), "The phone number is 01223 000000."),
    }


def test_callable_names():
    class Constant:
        def __call__(self, context):
            return "bye()"

    assert CallablePolicy(Constant()).name == "Constant"
    assert CallablePolicy(Constant(), name="always-bye").name == "always-bye"
    assert CallablePolicy(Constant()).provenance["function"].endswith("test_callable_names.<locals>.Constant")
    assert repr(CallablePolicy(Constant(), kind="text")) == "CallablePolicy(name='Constant', kind='text')"
    # the adapter's facts can be overridden
    assert CallablePolicy(Constant(), provenance={"kind": "custom"}).provenance["kind"] == "custom"


@pytest.mark.parametrize(
    ("returned", "kind", "fragments"),
    [
        (42, "auto", ["context 'c0'", "returned int", "expected a Response, an Act, a str"]),
        (None, "auto", ["context 'c0'", "returned NoneType"]),
        ({"action": "hello()"}, "auto", ["returned dict"]),
        ([["inform", "restaurant", "food", "thai"]], "auto", ["returned list", "use ConvLabPolicy"]),
        ('inform(name="x)', "auto", ["context 'c0'", "is not a valid act", "unterminated quoted value", "kind='text'"]),
        ("What food?", "action", ["'What food?' is not a valid act", "missing '('"]),
        (("request(food)", "What food?", "extra"), "auto", ["tuple of 3 elements", "(action, text)"]),
        ((None, None), "auto", ["(None, None)", "an action, a text, or both"]),
        ((3, "text"), "auto", ["action of the returned tuple is int"]),
        (("request(food)", 5), "auto", ["text of the returned tuple is int"]),
        (("request(food", "What food?"), "auto", ["action 'request(food' is not a valid act"]),
    ],
)
def test_callable_errors_name_the_problem(returned, kind, fragments):
    policy = CallablePolicy(lambda context: returned, kind=kind, name="broken")
    with pytest.raises(InvalidResponseError) as info:
        policy.respond(CONTEXTS[0])
    message = str(info.value)
    assert message.startswith("callable policy 'broken', context 'c0': ")
    for fragment in fragments:
        assert fragment in message


_STARTS = "; it starts like an act (intent and '('): return an act that parses, or use kind='text' for prose"


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("inform(", "returned string 'inform(' is not a valid act (unbalanced parentheses: missing ')' at position 7)"),
        ("  inform(food=thai", "returned string '  inform(food=thai' is not a valid act (unbalanced parentheses: "
                               "missing ')' at position 18)"),
        ("inform(food=thai) Sure!", "returned string 'inform(food=thai) Sure!' is not a valid act (unexpected text "
                                    "after ')': 'Sure!' at position 18)"),
        ("request+inform(food", "returned string 'request+inform(food' is not a valid act (unbalanced parentheses: "
                                "missing ')' at position 19)"),
        ("inform(" + "a" * 100_000, "returned string 'inform(" + "a" * 53 + "'... (100,007 characters) is not a valid "
                                   "act (unbalanced parentheses: missing ')' at position 100007)"),
    ],
)
def test_a_string_that_starts_like_an_act_but_does_not_parse_is_an_error(returned, message):
    """kind="auto": a broken act (cut off, or with words after it) is never saved as a text."""
    policy = CallablePolicy(lambda context: returned, name="broken")
    with pytest.raises(InvalidResponseError) as info:
        policy.respond(CONTEXTS[0])
    assert str(info.value) == f"callable policy 'broken', context 'c0': {message}{_STARTS}"
    # the same strings are texts when the policy says so, and prose stays prose
    assert CallablePolicy(lambda context: returned, kind="text").respond(CONTEXTS[0]) == Response(text=returned)
    for prose in ("hello (world", "Thanks (really)", "(inform(food=thai))", "Sure. inform(", "A food?"):
        assert CallablePolicy(lambda context, prose=prose: prose).respond(CONTEXTS[0]) == Response(text=prose)


def test_a_long_parse_reason_is_cut():
    policy = CallablePolicy(lambda context: "inform(x) " + "y" * 100_000, name="broken")
    with pytest.raises(InvalidResponseError) as info:
        policy.respond(CONTEXTS[0])
    assert len(str(info.value)) < 500


def test_callable_constructor_checks():
    with pytest.raises(TypeError, match="fn must be callable.*got str"):
        CallablePolicy("request(food)")
    with pytest.raises(ValueError, match="kind must be one of 'auto', 'action', 'text', got 'prompt'"):
        CallablePolicy(print, kind="prompt")
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        CallablePolicy(print, name="")
    with pytest.raises(InvalidResponseError, match="provenance must be JSON-serialisable"):
        CallablePolicy(print, provenance={"rng": object()})
    with pytest.raises(TypeError, match="provenance must be a mapping"):
        CallablePolicy(print, provenance=[("seed", 1)])


# -- LoggedPolicy ----------------------------------------------------------------------------

LOGGED = Responses(
    {
        "c0": Response(Act.parse("request(food)"), "What kind of food would you like?"),
        "c1": Response(Act.parse("confirm(food=thai)")),
        "c2": Response(
            Act.parse('inform(name="bangkok house",phone="01223 000000")'),
            'Bangkok House, phone "01223 000000",\nenjoy — café!',
        ),
    },
    policy="system-b",
    provenance={"checkpoint": 3000, "seed": 2},
)


def test_jsonl_log_round_trip(tmp_path):
    path = tmp_path / "system_b.jsonl"
    LOGGED.to_jsonl(path)
    policy = LoggedPolicy.from_file(path)
    assert isinstance(policy, Policy)
    assert policy.name == "system-b" and len(policy) == 3
    assert policy.provenance == {
        "checkpoint": 3000,
        "seed": 2,
        "log_file": str(path),
        "log_format": "jsonl",
        "log_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    replayed = run_policy(policy, CONTEXTS)
    assert dict(replayed) == dict(LOGGED)
    assert replayed.policy == "system-b" and replayed.provenance["checkpoint"] == 3000


def test_csv_log_round_trip(tmp_path):
    path = tmp_path / "system_b.csv"
    write_responses_csv(path, LOGGED)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "context_id,action,text"
    assert lines[1] == "c0,request(food),What kind of food would you like?"
    assert lines[2] == "c1,confirm(food=thai),"
    policy = LoggedPolicy.from_file(path, provenance={"note": "from a spreadsheet"})
    assert policy.name == "system_b"
    assert policy.provenance["log_format"] == "csv" and policy.provenance["note"] == "from a spreadsheet"
    assert dict(run_policy(policy, CONTEXTS)) == dict(LOGGED)
    assert dict(read_responses_csv(path)) == dict(LOGGED)


def test_format_detection(tmp_path):
    jsonl = tmp_path / "responses.log"
    LOGGED.to_jsonl(jsonl)
    assert LoggedPolicy.from_file(jsonl).provenance["log_format"] == "jsonl"
    csv_file = tmp_path / "responses.txt"
    write_responses_csv(csv_file, LOGGED)
    assert LoggedPolicy.from_file(csv_file).provenance["log_format"] == "csv"
    forced = tmp_path / "responses.dat"
    write_responses_csv(forced, LOGGED)
    assert dict(LoggedPolicy.from_file(forced, format="csv").responses) == dict(LOGGED)
    with pytest.raises(ValueError, match="format must be 'auto', 'jsonl' or 'csv', got 'tsv'"):
        LoggedPolicy.from_file(forced, format="tsv")


def test_csv_file_problems(tmp_path):
    # the file's own problems are simscore.responses_csv's (tests/simscore/test_responses_csv.py)
    with pytest.raises(FileFormatError, match="file not found"):
        LoggedPolicy.from_file(tmp_path / "missing.csv")
    with pytest.raises(FileFormatError, match="file not found"):
        LoggedPolicy.from_file(tmp_path / "missing.log")


def test_jsonl_log_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"format": "simscore-responses", "version": 1, "policy": "p", "provenance": {}}\n'
        '{"context_id": "c0", "action": "hello()", "text": null}\n'
        '{"context_id": "c1", "action": "request(food", "text": null}\n'
    )
    with pytest.raises(FileFormatError) as info:
        LoggedPolicy.from_file(path)
    assert info.value.line == 3 and "request(food" in str(info.value)


def test_context_not_in_log(tmp_path):
    path = tmp_path / "system_b.jsonl"
    LOGGED.to_jsonl(path)
    policy = LoggedPolicy.from_file(path)
    with pytest.raises(ContextMismatchError) as info:
        policy.respond(SimpleNamespace(id="c7"))
    assert isinstance(info.value, KeyError)
    assert str(info.value) == f"context 'c7' is not in the response log {path} (3 responses)"
    with pytest.raises(KeyError, match="closest id: 'c2'"):
        policy.respond(SimpleNamespace(id="c22"))
    with pytest.raises(ContextMismatchError, match="context 'c9' is not in the response log <in-memory responses>"):
        LoggedPolicy(LOGGED).respond(SimpleNamespace(id="c9"))
    more = (*CONTEXTS, Context("c9", INITIAL))
    assert policy.missing(more) == ("c9",)
    with pytest.raises(ContextMismatchError, match="'c9'"):
        run_policy(policy, more)
    with pytest.raises(InvalidContextError, match="needs a string 'id'"):
        policy.respond(SimpleNamespace(name="c0"))


def test_logged_policy_from_responses():
    policy = LoggedPolicy(LOGGED, name="replay", provenance={"seed": 5})
    assert policy.name == "replay"
    assert policy.provenance == {"checkpoint": 3000, "seed": 5}
    assert policy.respond(CONTEXTS[1]) == Response(Act.parse("confirm(food=thai)"))
    assert LoggedPolicy(Responses({"c0": Response(text="Hi")})).name == "logged"
    assert repr(policy) == "LoggedPolicy(name='replay', source='<in-memory responses>', n=3)"
    with pytest.raises(TypeError, match="responses must be simscore.Responses, got dict"):
        LoggedPolicy(dict(LOGGED))


# -- ConvLab --------------------------------------------------------------------------------


def test_convlab_state_is_built_by_policies_convlab():
    # the adapters module re-exports the state builder (layouts: tests/policies/test_convlab.py)
    from policies import convlab

    assert to_convlab_state is convlab.to_convlab_state
    state = to_convlab_state(CONTEXTS[2])
    assert state["user_action"] == [["request", "restaurant", "phone", ""], ["inform", "restaurant", "price range", "dontcare"]]
    assert state["belief_state"]["restaurant"] | {} == {
        "food": "thai", "price range": "dontcare", "name": "", "area": "",
        "book time": "", "book day": "", "book people": "",
    }
    assert state["request_state"] == {"restaurant": {"phone": 0}}
    assert state["history"][-1] == ["user", "Any price is fine. What is the phone number?"]
    assert to_convlab_state(CONTEXTS[2], state_format="convlab2")["user_action"] == [
        ["Request", "Restaurant", "Phone", "?"], ["Inform", "Restaurant", "Price", "dontcare"],
    ]


def test_convlab_state_errors():
    with pytest.raises(InvalidContextError, match="expected a BeliefState or a context.*got dict"):
        to_convlab_state({"belief_state": {}})
    with pytest.raises(InvalidContextError, match="got SimpleNamespace \\(belief: dict\\)"):
        to_convlab_state(SimpleNamespace(id="x", belief={"food": "thai"}))
    with pytest.raises(InvalidContextError, match="context 'x': metadata 'history' must be a sequence of strings, got str"):
        to_convlab_state(SimpleNamespace(id="x", belief=INITIAL, metadata={"history": "hello"}))
    with pytest.raises(InvalidContextError, match="context 'x': metadata 'history' item 1 is NoneType"):
        to_convlab_state(SimpleNamespace(id="x", belief=INITIAL, metadata={"history": ["hi", None]}))
    with pytest.raises(InvalidContextError, match="context 'x': metadata 'user_action' item 0 must be a list of 4 strings"):
        to_convlab_state(SimpleNamespace(id="x", belief=INITIAL, metadata={"user_action": [["inform", "food", "thai"]]}))
    with pytest.raises(InvalidContextError, match="metadata 'user_action' must be a list"):
        to_convlab_state(SimpleNamespace(id="x", belief=INITIAL, metadata={"user_action": "inform(food=thai)"}))
    with pytest.raises(InvalidContextError, match="context 'x': metadata must be a mapping, got list"):
        to_convlab_state(SimpleNamespace(id="x", belief=INITIAL, metadata=[]))
    with pytest.raises(ValueError, match="min_probability must be in \\[0, 1\\), got 1.0"):
        to_convlab_state(INITIAL, min_probability=1.0)
    with pytest.raises(TypeError, match="min_probability must be a number, got str '0.5'"):
        to_convlab_state(INITIAL, min_probability="0.5")
    with pytest.raises(TypeError, match="slot_names must map slot names"):
        to_convlab_state(INITIAL, slot_names={"pricerange": 3})
    with pytest.raises(TypeError, match="domain must be a non-empty string"):
        to_convlab_state(INITIAL, domain="")


#: The rule policy's tiny venue table: food -> (name, phone).
VENUES = {"thai": ("bangkok house", "01223 000000"), "italian": ("la mimosa", "01223 111111")}


class RulePolicy:
    """A small ConvLab-style rule policy: ask for the food until it is known, then offer a venue.

    It is stateful, like many ConvLab policies (it counts turns within a session).
    """

    def __init__(self):
        self.sessions = 0
        self.turn = 0

    def init_session(self):
        self.sessions += 1
        self.turn = 0

    def predict(self, state):
        self.turn += 1
        slots = state["belief_state"]["restaurant"]
        food = slots["food"]
        if food == "":
            greeting = [["greet", "general", "none", "none"]] if self.turn == 1 and not state["history"] else []
            return greeting + [["Request", "Restaurant", "Food", "?"]]
        name, phone = VENUES.get(food, VENUES["italian"])
        acts = [["Inform", "Restaurant", "Name", name], ["Inform", "Restaurant", "Food", food]]
        if "phone" in state["request_state"].get("restaurant", {}):
            acts.append(["Inform", "Restaurant", "Phone", phone])
        state["belief_state"]["restaurant"]["food"] = "mutated by the policy"
        return acts


def _nlg(acts):
    return "; ".join(f"{intent.lower()} {slot.lower()}={value}" for intent, _, slot, value in acts)


def test_convlab_rule_policy_over_contexts():
    rule = RulePolicy()
    policy = ConvLabPolicy(rule, provenance={"seed": 0})
    assert isinstance(policy, Policy)
    assert policy.name == "RulePolicy"
    assert policy.provenance == {
        "adapter": "convlab",
        "policy_class": f"{__name__}.RulePolicy",
        "state_format": "convlab3",
        "reseed": None,
        "domain": "restaurant",
        "nlg": None,
        "min_probability": 0.0,
        "slot_names": None,
        "seed": 0,
    }
    expected = {
        "c0": Response(Act.parse("greet+request(restaurant-food)")),
        "c1": Response(Act.parse('inform(restaurant-food=thai,restaurant-name="bangkok house")')),
        "c2": Response(
            Act.parse('inform(restaurant-food=thai,restaurant-name="bangkok house",restaurant-phone="01223 000000")')
        ),
    }
    responses = run_policy(policy, CONTEXTS)
    assert dict(responses) == expected
    assert responses.policy == "RulePolicy" and responses.provenance["seed"] == 0
    # a fresh session for every context: same answers in any order, however often
    assert rule.sessions == 3
    assert dict(run_policy(policy, CONTEXTS[::-1])) == expected
    assert policy.respond(CONTEXTS[0]) == expected["c0"]


def test_convlab_without_reset_sees_its_own_state():
    rule = RulePolicy()
    policy = ConvLabPolicy(rule, reset=False)
    assert policy.respond(CONTEXTS[0]) == Response(Act.parse("greet+request(restaurant-food)"))
    # second turn of the same "session": no greeting any more
    assert policy.respond(CONTEXTS[0]) == Response(Act.parse("request(restaurant-food)"))
    assert rule.sessions == 0


def test_convlab_nlg_threshold_and_names():
    policy = ConvLabPolicy(RulePolicy(), nlg=_nlg, min_probability=0.9, name="rules")
    assert policy.name == "rules"
    assert policy.provenance["nlg"] == f"{__name__}._nlg" and policy.provenance["min_probability"] == 0.9
    # thai has only 0.8 in c1: with the threshold the policy still asks
    assert policy.respond(CONTEXTS[1]) == Response(Act.parse("request(restaurant-food)"), "request food=?")
    assert policy.respond(CONTEXTS[2]).text == (
        "inform name=bangkok house; inform food=thai; inform phone=01223 000000"
    )
    assert policy.state(CONTEXTS[1])["belief_state"]["restaurant"]["food"] == ""
    assert repr(policy) == "ConvLabPolicy(name='rules', state_format='convlab3', domain='restaurant')"


class Fixed:
    """A ConvLab-style policy that always predicts the same thing."""

    def __init__(self, acts):
        self.acts = acts

    def predict(self, state):
        return self.acts


def test_convlab_empty_act_list():
    assert str(EMPTY_ACT) == "none()"
    assert ConvLabPolicy(Fixed([])).respond(CONTEXTS[0]) == Response(EMPTY_ACT)
    assert ConvLabPolicy(Fixed(()), nlg=lambda acts: "").respond(CONTEXTS[0]) == Response(Act("none"), "")


@pytest.mark.parametrize(
    ("acts", "fragment"),
    [
        (None, "predict returned NoneType, expected a list of [intent, domain, slot, value]"),
        ({"inform": ["food", "thai"]}, "predict returned dict"),
        ([["inform", "restaurant", "food"]], "each act must be a list of 4 strings [intent, domain, slot, value] (act 0)"),
        ([["inform", "restaurant", "food", "thai"], ["inform", "restaurant", "stars", 4]], "(act 1)"),
        ([["in form", "restaurant", "food", "thai"]], "intent must be a non-empty identifier"),
    ],
)
def test_convlab_bad_predictions(acts, fragment):
    policy = ConvLabPolicy(Fixed(acts), name="fixed")
    with pytest.raises(InvalidResponseError) as info:
        policy.respond(CONTEXTS[1])
    assert str(info.value).startswith("ConvLab policy 'fixed', context 'c1': ")
    assert fragment in str(info.value)


def test_convlab_bad_nlg_and_constructor():
    with pytest.raises(InvalidResponseError, match="context 'c0': nlg returned list, expected str"):
        ConvLabPolicy(Fixed([["bye", "general", "none", "none"]]), nlg=lambda acts: acts).respond(CONTEXTS[0])
    with pytest.raises(TypeError, match="policy must have a predict\\(state\\) method, got Response"):
        ConvLabPolicy(Response(text="x"))
    template = SimpleNamespace(generate=_nlg)
    with pytest.raises(TypeError, match="nlg must be callable.*pass its generate method"):
        ConvLabPolicy(Fixed([]), nlg=template)
    assert ConvLabPolicy(Fixed([["bye", "general", "none", "none"]]), nlg=template.generate).respond(
        CONTEXTS[0]
    ) == Response(Act("bye"), "bye none=none")
    with pytest.raises(TypeError, match="domain must be a non-empty string"):
        ConvLabPolicy(Fixed([]), domain=None)
    with pytest.raises(ValueError, match="min_probability must be >= 0.0, got -0.1"):
        ConvLabPolicy(Fixed([]), min_probability=-0.1)
    with pytest.raises(TypeError, match="slot_names must map"):
        ConvLabPolicy(Fixed([]), slot_names=["pricerange"])


@pytest.fixture()
def convlab_contexts(tmp_path, convlab_dialogues):
    """Contexts imported from ConvLab-3 unified data: they carry the user's acts."""
    import json
    import warnings

    from contexts import import_convlab

    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps(convlab_dialogues), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return import_convlab(path)


def test_a_convlab2_rule_bot_needs_the_convlab2_layout(convlab_contexts):
    context = convlab_contexts.contexts[0]
    with pytest.raises(InvalidResponseError) as info:
        ConvLabPolicy(RuleBot(), name="rule").respond(context)
    message = str(info.value)
    assert message.startswith(f"ConvLab policy 'rule', context {context.id!r}: predict failed with KeyError('semi')")
    assert "pass state_format='convlab2'" in message
    # without user acts the bot diffs the states and fails on 'book' instead
    bare = Context("bare", context.belief, {"source": "col"})
    with pytest.raises(InvalidResponseError, match="KeyError\\('book'\\)"):
        ConvLabPolicy(RuleBot()).respond(bare)
    response = ConvLabPolicy(RuleBot(), state_format="convlab2", seed=0).respond(context)
    assert "recommend" in response.action.intents


def test_reseeding_makes_a_stochastic_bot_deterministic(convlab_contexts):
    from simscore import compare

    contexts = list(convlab_contexts) * 8  # repeat the five contexts under new ids
    contexts = [Context(f"{c.id}#{i}", c.belief, c.metadata) for i, c in enumerate(contexts)]
    random.seed(1234)
    unseeded = ConvLabPolicy(RuleBot(), state_format="convlab2")
    a, b = run_policy(unseeded, contexts), run_policy(unseeded, contexts)
    assert compare(a, b, ["tmr"]).mean("tmr") < 1.0  # the bot against itself
    seeded = ConvLabPolicy(RuleBot(), state_format="convlab2", seed=7, name="rule")
    first = run_policy(seeded, contexts)
    assert compare(first, run_policy(seeded, contexts[::-1]), ["tmr", "dmr"]).mean("tmr") == 1.0
    assert dict(run_policy(ConvLabPolicy(RuleBot(), state_format="convlab2", seed=7), contexts)) == dict(first)
    # another seed, other answers; the seed is recorded
    other = run_policy(ConvLabPolicy(RuleBot(), state_format="convlab2", seed=8), contexts)
    assert dict(other) != dict(first)
    assert first.provenance["reseed"] == 7 and first.provenance["state_format"] == "convlab2"


def test_reseeding_leaves_the_callers_random_streams_alone(convlab_contexts):
    import numpy as np

    class NumpyBot(RuleBot):
        def predict(self, state):
            np.random.random(3)
            return super().predict(state)

    policy = ConvLabPolicy(NumpyBot(), state_format="convlab2", seed=3)
    random.seed(5)
    np.random.seed(5)
    expected = [random.random() for _ in range(4)], list(np.random.random(4))
    random.seed(5)
    np.random.seed(5)
    got_random, got_numpy = [], []
    for context in convlab_contexts.contexts[:4]:
        got_random.append(random.random())
        got_numpy.append(np.random.random())
        policy.respond(context)
    assert (got_random, got_numpy) == expected


def test_a_flat_rule_bot_reads_the_convlab3_layout(convlab_contexts):
    seeded = ConvLabPolicy(FlatRuleBot(), seed=1, nlg=TemplateNLG().generate, name="flat")
    responses = run_policy(seeded, convlab_contexts)
    assert responses["col/camrest/camrest-test-0/1"].action.intents == ("inform", "recommend")
    assert responses["col/camrest/camrest-test-0/3"].action == Act.parse("inform(restaurant-address=unknown)")
    assert dict(run_policy(seeded, list(convlab_contexts)[::-1])) == dict(responses)  # text included
    with pytest.raises(KeyError, match="price range"):  # ConvLab-2's layout has no flat slots: no hint for that
        ConvLabPolicy(FlatRuleBot(), state_format="convlab2").respond(convlab_contexts.contexts[0])


def test_seed_needs_a_context_id_and_an_int():
    with pytest.raises(TypeError, match="seed must be an int, got str '1'"):
        ConvLabPolicy(Fixed([]), seed="1")
    with pytest.raises(ValueError, match="state_format must be one of"):
        ConvLabPolicy(Fixed([]), state_format="ConvLab-3")
    anonymous = SimpleNamespace(belief=INITIAL, metadata={})
    with pytest.raises(InvalidContextError, match="reseeding per context needs a string context 'id'"):
        ConvLabPolicy(Fixed([]), seed=0).respond(anonymous)
    assert ConvLabPolicy(Fixed([])).respond(anonymous) == Response(EMPTY_ACT)


def test_tuple_ordered_predictions_are_refused():
    policy = ConvLabPolicy(Fixed([["Restaurant", "Inform", "Food", "thai"]]), name="tuples")
    with pytest.raises(InvalidResponseError) as info:
        policy.respond(CONTEXTS[1])
    message = str(info.value)
    assert "ConvLab policy 'tuples', context 'c1': predict returned an invalid act list" in message
    assert "is in (domain, intent, slot, value) order; expected [intent, domain, slot, value]" in message
    assert "e.g. ['Inform', 'Restaurant', 'Food', 'thai']" in message and "(act 0)" in message


def test_every_adapter_is_a_policy_with_name_and_provenance(tmp_path):
    path = tmp_path / "log.jsonl"
    LOGGED.to_jsonl(path)
    adapters = [CallablePolicy(lambda c: "bye()"), LoggedPolicy.from_file(path), ConvLabPolicy(Fixed([]))]
    for adapter in adapters:
        assert isinstance(adapter, Policy)
        assert isinstance(adapter.name, str) and adapter.name
        assert isinstance(adapter.provenance, dict)
        responses = run_policy(adapter, CONTEXTS)
        assert responses.ids == ("c0", "c1", "c2")
        assert responses.policy == adapter.name and responses.provenance == adapter.provenance
