"""Tool calls as acts: the three shapes agents log, their bounds and named errors, turns of several
calls in the action measures' four ``calls`` modes (golden values by hand, properties), replies
with text and calls, and the responses file of several calls."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simscore import Act
from simscore.acts import ActSequence
from simscore.comparison import compare
from simscore.errors import ActParseError, InvalidResponseError, MeasureOptionError, ToolCallError
from simscore.measures import ConceptErrorRate, ConceptMatchRate, DialogueActMatchRate, TotalMatchRate
from simscore.measures.calls import CALL_MODES, scores
from simscore.responses import Response, Responses
from simscore.tool_arguments import MAX_ARGUMENT_VALUES, MAX_ARGUMENTS_DEPTH, MAX_ARGUMENTS_LENGTH, MAX_CALLS

P = Act.parse


def chat(name: str, arguments: str, call_id: str = "c1") -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# -- reading calls -----------------------------------------------------------------------------


def test_the_three_shapes_give_one_act() -> None:
    arguments = {"origin": "SFO", "passengers": [{"name": "Ann", "age": 31}], "flexible": True, "max_price": 250.0}
    text = json.dumps(arguments)
    shapes = [
        chat("find_flight", text),
        {"type": "function_call", "name": "find_flight", "arguments": text, "call_id": "fc_1"},
        {"name": "find_flight", "arguments": arguments},
        {"name": "find_flight", "arguments": text},
        {"id": "x", "name": "find_flight", "arguments": arguments, "requestor": "assistant"},  # τ²-bench
    ]
    expected = P('find_flight(flexible=true,max_price=250,origin=SFO,passengers[0].age=31,passengers[0].name=Ann)')
    assert [Act.from_tool_calls(shape) for shape in shapes] == [expected] * len(shapes)
    assert Act.from_tool_calls([shapes[0]]) == expected


@pytest.mark.parametrize(
    ("arguments", "lists", "expected"),
    [
        ('{}', "ordered", "pay()"),
        ("", "ordered", "pay()"),  # some servers send no arguments at all
        ('{"a": null, "b": false, "c": 1.5, "d": 10000000000000000000000}', "ordered",
         "pay(a=null,b=false,c=1.5,d=10000000000000000000000)"),
        ('{"a": 1.0, "b": -0.0, "c": 1e300}', "ordered", f"pay(a=1,b=0,c={int(1e300)})"),  # integral: its digits
        ('{"a": {}, "b": [], "c": {"d": []}}', "ordered", 'pay(a="{}",b="[]",c.d="[]")'),
        ('{"seats": ["2B", "1A", "2B"]}', "ordered", "pay(seats[0]=2B,seats[1]=1A,seats[2]=2B)"),
        ('{"seats": ["2B", "1A", "2B"]}', "set", "pay(seats[]=1A,seats[]=2B)"),
        ('{"rows": [[1, 2], [3]]}', "ordered", "pay(rows[0][0]=1,rows[0][1]=2,rows[1][0]=3)"),
        ('{"rows": [[1, 2], [3]]}', "set", r'pay(rows[]="[\"1\",\"2\"]",rows[]="[\"3\"]")'),  # a set of sets
        ('{"rows": [[2, 1, 2], [3]]}', "set", r'pay(rows[]="[\"1\",\"2\"]",rows[]="[\"3\"]")'),
        ('{"p": [{"n": "Ann", "a": 3}, {"n": "Bo", "a": 4}]}', "set",
         r'pay(p[]="{\"a\":\"3\",\"n\":\"Ann\"}",p[]="{\"a\":\"4\",\"n\":\"Bo\"}")'),
        ('{"a.b": 1, "a": {"b": 2}, "c%2E": [], "d[0]": {}}', "ordered", 'pay(a%2Eb=1,a.b=2,c%252E="[]",d%5B0%5D="{}")'),
        ('{"a": ["x"], "b": {"0": "x"}, "c": [[]], "d": [{}]}', "ordered", 'pay(a[0]=x,b.0=x,c[0]="[]",d[0]="{}")'),
        ('{"a": ["x"], "b": "x", "c": [], "d": [[]]}', "set", 'pay(a[]=x,b=x,c="[]",d[]="[]")'),
        ('{"note": "a \\"quoted\\", (odd) value"}', "ordered", 'pay(note="a \\"quoted\\", (odd) value")'),
    ],
)
def test_arguments_become_items(arguments: str, lists: str, expected: str) -> None:
    act = Act.from_tool_calls(chat("pay", arguments), lists=lists)  # type: ignore[arg-type]
    assert str(act) == expected
    assert P(str(act)) == act


def test_list_order_counts_only_when_ordered() -> None:
    first, second = chat("book", '{"seats": ["1A", "1B"]}'), chat("book", '{"seats": ["1B", "1A"]}')
    assert Act.from_tool_calls(first) != Act.from_tool_calls(second)
    assert Act.from_tool_calls(first, lists="set") == Act.from_tool_calls(second, lists="set")


DEEP = "[" * (MAX_ARGUMENTS_DEPTH + 1) + "]" * (MAX_ARGUMENTS_DEPTH + 1)
MALFORMED = [
    (chat("get_user", "{'id': 7}"), "the arguments of 'get_user' are not JSON (Expecting property name enclosed in double quotes)"),
    (chat("get_user", '{"id": NaN}'), "the arguments of 'get_user' are not JSON (non-standard JSON number NaN)"),
    (chat("get_user", "[7]"), "the arguments of 'get_user' must be a JSON object, got an array"),
    ({"name": "get_user", "arguments": "7"}, "the arguments of 'get_user' must be a JSON object, got a number"),
    ({"type": "function", "function": {"arguments": "{}"}}, "no tool name (expected 'name', or 'function': {'name': ...})"),
    ({"arguments": {}}, "no tool name (expected 'name', or 'function': {'name': ...})"),
    ({"type": "function", "function": "get_user"}, "'function' must be an object with 'name' and 'arguments', got a string"),
    ({"name": "get user", "arguments": {}}, "the tool name is not an identifier [A-Za-z0-9_.-]"),
    ("get_user()", "expected a tool call (an object) or a list of them, got a string"),
    (["get_user()"], "a tool call must be an object, got a string"),
    (chat("get_user", '{"x": ' + DEEP + "}"),
     "the arguments of 'get_user' nest deeper than 16 levels (simscore.tool_arguments.MAX_ARGUMENTS_DEPTH)"),
    (chat("get_user", "[" * 100_000 + "]" * 100_000),
     "the arguments of 'get_user' nest deeper than 16 levels (simscore.tool_arguments.MAX_ARGUMENTS_DEPTH)"),
    (chat("get_user", '{"a": "' + "x" * MAX_ARGUMENTS_LENGTH + '"}'),
     "the arguments of 'get_user' are 1,048,585 characters long, more than 1,048,576 "
     "(simscore.tool_arguments.MAX_ARGUMENTS_LENGTH)"),
    (chat("get_user", json.dumps({"a": list(range(MAX_ARGUMENT_VALUES + 1))})),
     "the arguments of 'get_user' hold more than 10,000 values (simscore.tool_arguments.MAX_ARGUMENT_VALUES)"),
    (chat("get_user", '{"user id": 1, "a=b": 2}'),
     "argument name 'a=b' of 'get_user' cannot be a slot (empty, surrounding spaces, or one of = ! , ( ) \" ' \\ +)"),
    (chat("get_user", '{"": 1}'),
     "argument name '' of 'get_user' cannot be a slot (empty, surrounding spaces, or one of = ! , ( ) \" ' \\ +)"),
    ([], "no tool call in the list (a turn without calls has no act)"),
    ([chat("a", "{}")] * (MAX_CALLS + 1), "257 calls in one turn, more than 256 (simscore.tool_arguments.MAX_CALLS)"),
    (7, "expected a tool call (an object) or a list of them, got a number"),
]


@pytest.mark.parametrize(("call", "reason"), MALFORMED)
def test_malformed_calls_are_named_errors(call: object, reason: str) -> None:
    with pytest.raises(ToolCallError) as info:
        Act.from_tool_calls(call)
    assert info.value.reason == reason
    assert str(info.value).startswith("cannot read tool call ")
    assert str(info.value).endswith(": " + reason)
    assert len(str(info.value)) < 600  # the call is quoted through excerpt, whatever its size
    assert isinstance(info.value, (ActParseError, ValueError))


def test_a_huge_call_costs_a_line_of_message() -> None:
    with pytest.raises(ToolCallError) as info:
        Act.from_tool_calls(chat("get_user", "{" + "x" * 5_000_000))
    assert len(str(info.value)) < 500 and "characters as written" in str(info.value)


# -- sequences and their string form ----------------------------------------------------------


def test_a_turn_of_several_calls_is_a_sequence_written_with_semicolons() -> None:
    act = Act.from_tool_calls([chat("get_user", '{"id": "u7"}'), chat("get_reservation", '{"id": "R1"}', "c2")])
    assert isinstance(act, ActSequence)
    assert str(act) == "get_user(id=u7);get_reservation(id=R1)"
    assert act.intents == ("get_reservation", "get_user")  # the union view of a multi-intent turn
    assert [str(c) for c in act.calls] == ["get_user(id=u7)", "get_reservation(id=R1)"]
    assert P(" get_user(id=u7) ; get_reservation(id=R1) ") == act
    assert P("get_user(id=u7)").calls == (P("get_user(id=u7)"),)
    # a sequence never equals a single act, nor the same acts in another order
    assert act != Act(["get_reservation", "get_user"], [("id", "u7"), ("id", "R1")])
    assert act != P("get_reservation(id=R1);get_user(id=u7)")
    assert len({act, P(str(act))}) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a(x=1);", "missing '(' after the intent at position 7"),
        ("a(x=1);;;b()", "intent ';b' is not an identifier [A-Za-z0-9_.-] at position 8"),  # ";;" opens a message
        ("a(x=1);;", "missing '(' after the intent at position 8"),
        ("a(x=1) b()", "unexpected text after ')': 'b()' at position 7"),
    ],
)
def test_bad_sequences_are_named(text: str, message: str) -> None:
    with pytest.raises(ActParseError) as info:
        P(text)
    assert str(info.value) == f"cannot parse act {text!r}: {message}"


def test_a_sequence_needs_two_single_acts() -> None:
    with pytest.raises(ActParseError, match="needs at least two acts"):
        ActSequence([P("a()")])
    with pytest.raises(ActParseError, match="must be a single Act, got ActSequence"):
        ActSequence([P("a()"), P("b();c()")])


def test_responses_files_keep_several_calls(tmp_path) -> None:
    act = P("get_user(id=u7);pay(amount=5)")
    responses = Responses({"c1": Response(act, "One moment."), "c2": Response(P("reply()"), "Bye")}, policy="agent")
    responses.to_jsonl(tmp_path / "r.jsonl")
    line = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()[1]
    assert json.loads(line) == {"context_id": "c1", "action": "get_user(id=u7);pay(amount=5)", "text": "One moment."}
    again = Responses.read_jsonl(tmp_path / "r.jsonl")
    assert again["c1"] == responses["c1"] and isinstance(again["c1"].action, ActSequence)


# -- replies ----------------------------------------------------------------------------------


def test_a_reply_keeps_its_text_and_its_calls() -> None:
    message = {"role": "assistant", "content": "Checking both.", "tool_calls": [
        chat("get_user", '{"id": "u7"}'), chat("get_order", '{"id": 9}', "c2")]}
    response = Response.from_message(message)
    assert (str(response.action), response.text) == ("get_user(id=u7);get_order(id=9)", "Checking both.")
    assert Response.from_message({"role": "assistant", "content": None, "tool_calls": [chat("a", "{}")]}).text is None
    assert Response.from_message({"role": "assistant", "content": "", "tool_calls": [chat("a", "{}")]}).text is None
    words = Response.from_message({"role": "assistant", "content": [{"type": "text", "text": "Hi"},
                                                                    {"type": "text", "text": "there"}]})
    assert (words.action, words.text) == (None, "Hi\nthere")
    output = [{"type": "reasoning", "summary": []},
              {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Paying."}]},
              {"type": "function_call", "name": "pay", "arguments": '{"amount": 5}', "call_id": "fc_1"}]
    responses_api = Response.from_message(output)
    assert (str(responses_api.action), responses_api.text) == ("pay(amount=5)", "Paying.")


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"role": "assistant", "content": None}, "a reply with neither text nor tool calls"),
        ({"role": "assistant", "content": 7}, "a message's content must be text, null or a list of text parts, got 7"),
        ({"role": "assistant", "content": [{"type": "image"}]}, "a content part must be an object with a 'text' string"),
        ("hello", "a reply must be a message (an object) or a list of output items, got str"),
    ],
)
def test_bad_replies_are_named(message: object, error: str) -> None:
    with pytest.raises(InvalidResponseError, match=error.replace("(", r"\(").replace(")", r"\)")):
        Response.from_message(message)


# -- the calls modes: golden values by hand ---------------------------------------------------

SWAPPED = (P("search(city=Paris);book(id=7)"), P("book(id=7);search(city=Paris)"))
EXTRA_CALL = (P("find(x=1,y=2);pay(amount=5)"), P("find(x=1,y=3)"))
TWICE = (P("f(x=1);f(x=1)"), P("f(x=1)"))
OTHER_INTENT = (P("inform(food=thai)"), P("request(food)"))

# (pair, mode, tmr, dmr, cer, cmr); the arithmetic in the comment
GOLDEN = [
    # strict pairs search/book and book/search: no intent matches; concepts qualified by pair: none shared of 8
    (SWAPPED, "strict", 0, 0, 0, 0 / 9),
    (SWAPPED, "unordered", 1, 1, 1, 1),
    (SWAPPED, "subset", 1, 1, 1, 1),
    (SWAPPED, "superset", 1, 1, 1, 1),
    # strict/unordered/subset: (find, find) + (pay, -): not all paired; S_a 6, S_b 4, shared x,(x=1),y -> (0+3)/(1+7)
    (EXTRA_CALL, "strict", 0, 0, 0, 3 / 8),
    (EXTRA_CALL, "unordered", 0, 0, 0, 3 / 8),
    (EXTRA_CALL, "subset", 0, 0, 0, 3 / 8),
    # superset: pay is a's extra call, left out; tokens [x,1,y,2] vs [x,1,y,3]: CE 3/4; CM (1+3)/(1+5)
    (EXTRA_CALL, "superset", 0, 1, 0.75, 4 / 6),
    # f twice against f once: (f, f) + (f, -) in strict/unordered/subset; S_a 4, S_b 2, shared 2 -> 2/5
    (TWICE, "strict", 0, 0, 0, 2 / 5),
    (TWICE, "unordered", 0, 0, 0, 2 / 5),
    (TWICE, "subset", 0, 0, 0, 2 / 5),
    (TWICE, "superset", 1, 1, 1, 1),
    # single acts of two intents: strict is the metrics reference (one pair, shared slot: (0+1)/(1+3)) ...
    (OTHER_INTENT, "strict", 0, 0, 0, 1 / 4),
    # ... the other modes pair calls of one tool only: two unpaired calls, nothing shared: 0/(1+4)
    (OTHER_INTENT, "unordered", 0, 0, 0, 0),
    (OTHER_INTENT, "subset", 0, 0, 0, 0),
]
MEASURES = (TotalMatchRate, DialogueActMatchRate, ConceptErrorRate, ConceptMatchRate)


@pytest.mark.parametrize(("pair", "mode", "tmr", "dmr", "cer", "cmr"), GOLDEN)
def test_golden_values_of_the_calls_modes(pair: tuple[Act, Act], mode: str, tmr: float, dmr: float, cer: float,
                                          cmr: float) -> None:
    got = [cls(calls=mode).score_pairs([pair[0]], [pair[1]])[0] for cls in MEASURES]
    np.testing.assert_allclose(got, [tmr, dmr, cer, cmr], rtol=0, atol=1e-12)
    assert tuple(scores(pair[0], pair[1], mode)) == pytest.approx((tmr, dmr, cer, cmr), abs=1e-12)


def test_the_mode_is_in_the_signature_and_checked() -> None:
    assert TotalMatchRate().signature() == "tmr|canonical-act-equality"  # strict: the definition, unchanged
    assert TotalMatchRate(calls="subset").signature() == "tmr|canonical-act-equality|calls:subset"
    assert ConceptErrorRate(clip=True, calls="unordered").signature().endswith("|clip:yes|calls:unordered")
    assert not TotalMatchRate(calls="superset").symmetric and TotalMatchRate(calls="unordered").symmetric
    with pytest.raises(MeasureOptionError, match="did you mean 'superset'"):
        DialogueActMatchRate(calls="supreset")


def test_compare_uses_the_mode() -> None:
    a = Responses({"c1": Response(SWAPPED[0]), "c2": Response(EXTRA_CALL[0])}, policy="a")
    b = Responses({"c1": Response(SWAPPED[1]), "c2": Response(EXTRA_CALL[1])}, policy="b")
    strict = compare(a, b, measures=["tmr", "dmr"], progress=False)
    unordered = compare(a, b, measures=[TotalMatchRate(calls="unordered"), DialogueActMatchRate(calls="superset")],
                        progress=False)
    assert strict.scores["tmr"].tolist() == [0.0, 0.0] and strict.scores["dmr"].tolist() == [0.0, 0.0]
    assert unordered.scores["tmr"].tolist() == [1.0, 0.0] and unordered.scores["dmr"].tolist() == [1.0, 1.0]


# -- properties -------------------------------------------------------------------------------

_names = st.sampled_from(["search", "book", "pay", "inform"])
_items = st.lists(st.tuples(st.sampled_from(["x", "y", "city"]), st.sampled_from(["1", "2", "Paris"])), max_size=3)
_calls = st.builds(lambda name, items: Act(name, items), _names, _items)
_turns = st.lists(_calls, min_size=1, max_size=4).map(lambda acts: acts[0] if len(acts) == 1 else ActSequence(acts))


def _all(a: Act, b: Act, mode: str) -> tuple[float, ...]:
    return tuple(scores(a, b, mode))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(a=_turns, b=_turns, data=st.data())
def test_properties_of_the_modes(a: Act, b: Act, data: st.DataObject) -> None:
    for mode in ("strict", "unordered"):
        assert _all(a, b, mode) == pytest.approx(_all(b, a, mode), abs=1e-12)
    assert _all(a, b, "subset") == _all(b, a, "superset")
    for mode in CALL_MODES:
        assert _all(a, a, mode) == (1.0, 1.0, 1.0, 1.0)
        values = _all(a, b, mode)
        assert all(0.0 <= v <= 1.0 for v in (values[0], values[1], values[3])) and values[2] <= 1.0
        assert values[0] <= values[1]  # equal calls have equal tools
    count_a, count_b = Counter(a.calls), Counter(b.calls)
    assert _all(a, b, "unordered")[0] == float(count_a == count_b)
    assert _all(a, b, "subset")[0] == float(not count_a - count_b)
    assert _all(a, b, "strict")[0] == float(a == b)
    shuffled = data.draw(st.permutations(a.calls))
    again = shuffled[0] if len(shuffled) == 1 else ActSequence(shuffled)
    assert _all(again, b, "unordered") == pytest.approx(_all(a, b, "unordered"), abs=1e-12)
    assert P(str(a)) == a


@settings(max_examples=200, deadline=None, derandomize=True)
@given(a=_calls, b=_calls)
def test_strict_on_single_acts_is_the_metrics_reference(a: Act, b: Act) -> None:
    for cls in MEASURES:
        plain = cls().score_pairs([a], [b])[0]
        assert cls(calls="strict")._turn_score(a, b) == pytest.approx(plain, abs=1e-12)


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text("ab c", max_size=4))
_json_args = st.dictionaries(
    st.sampled_from(["a", "b", "c"]),
    st.recursive(_json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["d", "e"]), inner, max_size=2), max_leaves=5),
    max_size=3,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(arguments=_json_args)
def test_arguments_as_text_or_object_give_one_act(arguments: dict[str, object]) -> None:
    for lists in ("ordered", "set"):
        as_object = Act.from_tool_calls({"name": "f", "arguments": arguments}, lists=lists)  # type: ignore[arg-type]
        as_text = Act.from_tool_calls(chat("f", json.dumps(arguments)), lists=lists)  # type: ignore[arg-type]
        assert as_object == as_text and P(str(as_text)) == as_text


def test_an_integral_number_is_one_value_however_large_and_however_written() -> None:
    # 1e20 gave "1e+20" and 100000000000000000000 gave its digits: two values of one number
    from simscore.tool_arguments import read_tool_call

    def items(arguments: str) -> tuple[tuple[str, str], ...]:
        return read_tool_call({"name": "f", "arguments": arguments}).items

    assert items('{"n": 1e20}') == items('{"n": 100000000000000000000}') == (("n", "100000000000000000000"),)
    assert items('{"n": 2.5e20}') == items('{"n": 250000000000000000000}')
    assert items('{"n": -1E3}') == items('{"n": -1000}') == (("n", "-1000"),)
    assert items('{"n": 1.5}') == (("n", "1.5"),) and items('{"n": 1e-7}') == (("n", "1e-07"),)
    assert len(items('{"n": 1e308}')[0][1]) == 309


# -- one-to-one: different arguments never give one act ------------------------------------------

# few names and values, so that equal and nearly equal arguments are drawn often: keys that
# look like paths, numbers written two ways, strings that spell numbers and literals
_keys = st.sampled_from(["a", "b", "a.b", "0", "[0]", "%2E", "a%2Eb", "a[]", "b]"])
_values = st.sampled_from([1, 1.0, 2, 2.5, "1", "2.5", "x", "", True, "true", None, "null", {}, []])
_arguments = st.dictionaries(
    _keys,
    st.recursive(_values, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=2),
                 max_leaves=6),
    max_size=3,
)


def _text(value: object) -> str:
    """The documented text of a value that is not a non-empty container (the act's values are strings)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "{}" if isinstance(value, dict) else "[]" if isinstance(value, list) else repr(value)


def _same(x: object, y: object, lists: str) -> bool:
    """Equal JSON up to the documented equalities: a string and the value it spells, 1 and 1.0, and
    with ``lists="set"`` lists as sets."""
    if isinstance(x, dict) and x and isinstance(y, dict) and y:
        return x.keys() == y.keys() and all(_same(x[k], y[k], lists) for k in x)
    if isinstance(x, list) and x and isinstance(y, list) and y:
        if lists == "ordered":
            return len(x) == len(y) and all(_same(u, v, lists) for u, v in zip(x, y))
        return all(any(_same(u, v, lists) for v in y) for u in x) and all(any(_same(u, v, lists) for u in x) for v in y)
    if any(isinstance(v, (dict, list)) and v for v in (x, y)):
        return False
    return _text(x) == _text(y)


@settings(max_examples=800, deadline=None, derandomize=True)
@given(x=_arguments, y=_arguments, lists=st.sampled_from(["ordered", "set"]))
def test_two_arguments_give_one_act_iff_they_are_equal_json(x: dict[str, object], y: dict[str, object],
                                                              lists: str) -> None:
    act_x = Act.from_tool_calls({"name": "f", "arguments": x}, lists=lists)  # type: ignore[arg-type]
    act_y = Act.from_tool_calls({"name": "f", "arguments": y}, lists=lists)  # type: ignore[arg-type]
    assert (act_x == act_y) == _same(x, y, lists)
    assert P(str(act_x)) == act_x


@pytest.mark.parametrize(
    ("x", "y", "lists"),
    [
        ({"a.b": 1}, {"a": {"b": 1}}, "ordered"),  # one act before: a.b=1
        ({"a": ["x"]}, {"a": {"0": "x"}}, "ordered"),  # one act before: a.0=x
        ({"a": ["x"]}, {"a": "x"}, "set"),  # one act before: a=x
        ({"a": [[1], [2]]}, {"a": [[1, 2]]}, "set"),  # one act before: a=1,a=2
        ({"p": [{"n": 1, "m": 2}, {"n": 3, "m": 4}]}, {"p": [{"n": 1, "m": 4}, {"n": 3, "m": 2}]}, "set"),
        ({"a%2Eb": 1}, {"a.b": 1}, "ordered"),
        ({"a": []}, {"a": {}}, "ordered"),
    ],
)
def test_arguments_that_were_one_act_are_two(x: dict[str, object], y: dict[str, object], lists: str) -> None:
    acts = [Act.from_tool_calls({"name": "f", "arguments": v}, lists=lists) for v in (x, y)]  # type: ignore[arg-type]
    assert acts[0] != acts[1]


# -- messages, per_message, and the arguments' modes -------------------------------------------------

from simscore.measures import resolve_measures  # noqa: E402
from simscore.measures.calls import ARGS_MODES, ArgumentMatch  # noqa: E402

MESSAGES = (P("search(city=Paris);;book(id=7);pay(amount=5)"), P("search(city=Paris);;pay(amount=5);book(id=7)"))
SPLIT = (P("f(x=1);;g()"), P("f(x=1);g()"))
FEWER_ARGS = (P("f(a=1)"), P("f(a=1,b=2)"))

# (pair, calls, args, tmr, dmr, cer, cmr); the arithmetic in the comment
GOLDEN_ARGS = [
    # messages in order, calls within one in any order: all three pairs equal
    (MESSAGES, "per_message", "exact", 1, 1, 1, 1),
    # strict: (search, search), (book, pay), (pay, book): 2 concepts shared of 10 -> 2/11
    (MESSAGES, "strict", "exact", 0, 0, 0, 2 / 11),
    # one message against two: (f, f) + (-, g) for the first, (g, -) for the second; g has no concepts: 2/(1+2)
    (SPLIT, "per_message", "exact", 0, 0, 0, 2 / 3),
    (SPLIT, "strict", "exact", 1, 1, 1, 1),  # strict and unordered: the calls, whatever the messages
    (SPLIT, "unordered", "exact", 1, 1, 1, 1),
    # exact: tokens [a,1] vs [a,1,b,2]: CE 2/4 and 0/2 -> 0.25; CM (1+2)/(1+4)
    (FEWER_ARGS, "strict", "exact", 0, 1, 0.25, 3 / 5),
    (FEWER_ARGS, "unordered", "subset", 1, 1, 1, 1),  # of b's arguments those a has: f(a=1)
    (FEWER_ARGS, "strict", "superset", 0, 1, 0.25, 3 / 5),  # of a's those b has: all, b has more
    (FEWER_ARGS[::-1], "strict", "superset", 1, 1, 1, 1),
    (FEWER_ARGS, "unordered", "ignore", 1, 1, 1, 1),  # f() against f()
    ((P("f(a=1)"), P("g(a=1)")), "unordered", "ignore", 0, 0, 0, 0),
]


@pytest.mark.parametrize(("pair", "calls", "args", "tmr", "dmr", "cer", "cmr"), GOLDEN_ARGS)
def test_golden_values_of_messages_and_arguments(pair: tuple[Act, Act], calls: str, args: str, tmr: float,
                                                 dmr: float, cer: float, cmr: float) -> None:
    got = [cls(calls=calls, args=args).score_pairs([pair[0]], [pair[1]])[0] for cls in MEASURES]
    np.testing.assert_allclose(got, [tmr, dmr, cer, cmr], rtol=0, atol=1e-12)


def test_a_sequence_keeps_its_messages() -> None:
    a, b = SPLIT
    assert [len(m) for m in a.messages] == [1, 1] and [len(m) for m in b.messages] == [2]
    assert a != b and a.calls == b.calls and P(str(a)) == a and len({a, P(str(a))}) == 1
    assert ActSequence(b.calls, message_sizes=[2]) == b and P("f()").messages == ((P("f()"),),)
    for sizes in ([1], [2, 1], [0, 2], [1.0, 1]):
        with pytest.raises(ActParseError, match="message_sizes must be positive integers summing to the 2 calls"):
            ActSequence(b.calls, message_sizes=sizes)  # type: ignore[arg-type]
    # TMR in strict mode compares the calls in order, whatever the messages (numbers as before)
    assert TotalMatchRate().score_pairs([a, a], [b, a]).tolist() == [1.0, 1.0]
    assert TotalMatchRate(calls="per_message").score_pairs([a, a], [b, a]).tolist() == [0.0, 1.0]


def test_the_arguments_modes_are_checked_named_and_signed() -> None:
    measure = TotalMatchRate(calls="per_message", args="subset", args_for={"book": "ignore", "pay": "exact"})
    assert measure.signature() == "tmr|canonical-act-equality|calls:per_message|args:subset|args_for:book=ignore,pay=exact"
    assert not measure.symmetric and TotalMatchRate(calls="per_message", args="ignore").symmetric
    assert TotalMatchRate(args="exact", args_for={"f": "exact"}).signature() == "tmr|canonical-act-equality"
    assert ConceptErrorRate(args="ignore").signature().endswith("|clip:no|args:ignore")
    bad = [
        ({"args": "subsett"}, "args must be one of 'exact', 'ignore', 'subset', 'superset', got 'subsett'; "
                              "did you mean 'subset'?"),
        ({"args_for": {"book": "exakt"}}, "args_for['book'] must be one of 'exact', 'ignore', 'subset', 'superset', "
                                          "got 'exakt'; did you mean 'exact'?"),
        ({"args_for": "book"}, "args_for: expected TOOL=MODE entries separated by commas "
                               "(e.g. search=ignore,book=subset), got 'book'"),
        ({"args_for": "a=ignore,a=exact"}, "args_for: tool 'a' is given twice"),
        ({"args_for": ["a"]}, "args_for: expected a mapping of tool names to modes, got list"),
        ({"args_for": {"": "exact"}}, "args_for: tool names must be non-empty strings, got ''"),
        ({"calls": "per_messages"}, "calls must be one of 'strict', 'unordered', 'subset', 'superset', 'per_message', "
                                    "got 'per_messages'; did you mean 'per_message'?"),
    ]
    for options, message in bad:
        with pytest.raises(MeasureOptionError) as info:
            DialogueActMatchRate(**options)
        assert str(info.value) == message
        with pytest.raises(MeasureOptionError, match="^cmr: " + re.escape(message) + "$"):
            resolve_measures(["cmr"], options={"cmr": options})


def test_the_arguments_modes_from_the_command_line() -> None:
    from simscore.measures import options_from_assignments

    options = options_from_assignments(["tmr.calls=per_message", "tmr.args=subset", "tmr.args_for=book=ignore,pay=exact"])
    assert options == {"tmr": {"calls": "per_message", "args": "subset", "args_for": "book=ignore,pay=exact"}}
    measure = resolve_measures(["tmr"], options=options)[0]
    assert measure.signature().endswith("|calls:per_message|args:subset|args_for:book=ignore,pay=exact")


def _split(acts: list[Act], cuts: list[int]) -> Act:
    if len(acts) == 1:
        return acts[0]
    sizes, start = [], 0
    for cut in sorted({c for c in cuts if 0 < c < len(acts)}) + [len(acts)]:
        sizes.append(cut - start)
        start = cut
    return ActSequence(acts, message_sizes=sizes)


_trajectories = st.builds(_split, st.lists(_calls, min_size=1, max_size=4), st.lists(st.integers(1, 3), max_size=2))
_matches = st.builds(ArgumentMatch.of, st.sampled_from(ARGS_MODES),
                     st.dictionaries(_names, st.sampled_from(ARGS_MODES), max_size=2))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(a=_trajectories, b=_trajectories, args=_matches)
def test_properties_of_messages_and_arguments(a: Act, b: Act, args: ArgumentMatch) -> None:
    def all_of(x: Act, y: Act, mode: str, match: ArgumentMatch) -> tuple[float, ...]:
        return tuple(scores(x, y, mode, args=match))

    assert all_of(a, b, "subset", args) == pytest.approx(all_of(b, a, "superset", args.flipped()), abs=1e-12)
    for mode in CALL_MODES:
        assert all_of(a, a, mode, args) == (1.0, 1.0, 1.0, 1.0)
        values = all_of(a, b, mode, args)
        assert values[0] <= values[1] and 0.0 <= values[3] <= 1.0 and values[2] <= 1.0
        if args.symmetric and mode in ("strict", "unordered", "per_message"):
            assert values == pytest.approx(all_of(b, a, mode, args), abs=1e-12)
        # ignoring the arguments, or comparing fewer of them, never matches less than exact
        assert all_of(a, b, mode, ArgumentMatch("ignore"))[0] >= all_of(a, b, mode, ArgumentMatch())[0]
    # per_message: TMR 1 iff as many messages, each the same calls in any order
    same = len(a.messages) == len(b.messages) and all(Counter(x) == Counter(y) for x, y in zip(a.messages, b.messages))
    assert all_of(a, b, "per_message", ArgumentMatch())[0] == float(same)
    one = a.calls[0] if len(a.calls) == 1 else ActSequence(a.calls)
    assert all_of(one, b.calls[0], "per_message", args) == all_of(one, b.calls[0], "unordered", args)
    assert P(str(a)) == a
