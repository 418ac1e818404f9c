"""Parsing, canonical form and round trip of simscore.Act."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simscore import NONE_VALUE, Act, Item
from simscore.errors import ActParseError


@pytest.mark.parametrize(
    ("text", "intents", "items"),
    [
        ("hello()", ("hello",), ()),
        ("request(food)", ("request",), (Item("food"),)),
        (
            'inform(name="la mimosa",area=centre)',
            ("inform",),
            (Item("area", "=", "centre"), Item("name", "=", "la mimosa")),
        ),
        (
            'inform(name=none,area="north")',
            ("inform",),
            (Item("area", "=", "north"), Item("name", "=", "none")),
        ),
        (
            'select(area="north",area="south")',
            ("select",),
            (Item("area", "=", "north"), Item("area", "=", "south")),
        ),
        (
            'inform(name!="x",food="thai")',
            ("inform",),
            (Item("food", "=", "thai"), Item("name", "!=", "x")),
        ),
        (
            r'inform(name="the \"golden\" house", addr = 12 main street )',
            ("inform",),
            (Item("addr", "=", "12 main street"), Item("name", "=", 'the "golden" house')),
        ),
        ("inform(name='nando\\'s')", ("inform",), (Item("name", "=", "nando's"),)),
        ("  bye ( )  ", ("bye",), ()),
        ('inform+request(food="thai",area)', ("inform", "request"), (Item("area"), Item("food", "=", "thai"))),
    ],
)
def test_parse_pydial_strings(text, intents, items):
    act = Act.parse(text)
    assert act.intents == intents
    assert act.items == items
    assert Act.parse(str(act)) == act


def test_item_order_does_not_matter_and_duplicates_collapse():
    assert Act.parse("inform(food=thai,area=north)") == Act.parse("inform(area=north,food=thai)")
    assert Act.parse("inform(area=north,area=north)") == Act.parse("inform(area=north)")
    assert hash(Act.parse("inform(food=thai,area=north)")) == hash(Act.parse("inform(area=north,food=thai)"))


def test_bare_slot_differs_from_string_none():
    bare, none = Act.parse("inform(name)"), Act.parse("inform(name=none)")
    assert bare != none
    assert bare.concept_tokens() == ("name", NONE_VALUE)
    assert none.concept_tokens() == ("name", "none")


def test_concepts():
    act = Act.parse('inform(area="centre",food="thai")')
    assert act.concept_tokens() == ("area", "centre", "food", "thai")
    assert act.concept_set() == {"area", "food", ("area", "=", "centre"), ("food", "=", "thai")}
    assert Act.parse("request(pricerange)").concept_set() == {"pricerange", ("pricerange", "=", NONE_VALUE)}


def test_from_convlab_multi_intent():
    act = Act.from_convlab(
        [["Inform", "Restaurant", "Food", "thai"], ["Request", "Restaurant", "Area", ""], ["bye", "general", "none", "none"]]
    )
    assert act.intents == ("bye", "inform", "request")
    assert act.items == (Item("restaurant-area"), Item("restaurant-food", "=", "thai"))
    assert Act.parse(str(act)) == act
    # order of the quadruples does not matter; "?" also marks a requested slot
    same = Act.from_convlab(
        [["bye", "general", "none", "none"], ["request", "restaurant", "area", "?"], ["inform", "restaurant", "food", "thai"]]
    )
    assert same == act


@pytest.mark.parametrize(
    ("bad", "position", "reason"),
    [
        ("inform(a=b", 10, "unbalanced parentheses"),
        ("inform", 6, "missing '('"),
        ("(a=b)", 0, "empty intent"),
        ("inform(a=\"b)", 9, "unterminated quoted value"),
        ("inform(a=b))", 11, "unexpected text after ')'"),
        ("inform(,)", 7, "empty item"),
        ("inform(a=)", 9, "missing value"),
        ("inform(a=b\"c)", 10, "unexpected '\"'"),
        ("inform(\"a\"=b)", 7, "stray quote"),
        ("inform(a=b,(c))", 11, "empty item"),
        ("inform(a!b)", 8, "expected '!='"),
        ("in form(a)", 0, "not an identifier"),
        ("inform(a=b c=d)", 12, "unexpected '='"),
    ],
)
def test_malformed_strings_name_text_and_position(bad, position, reason):
    with pytest.raises(ActParseError) as info:
        Act.parse(bad)
    assert info.value.position == position
    assert reason in info.value.reason
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [None, 3, b"hello()", ["hello"]])
def test_non_strings_raise_parse_error(bad):
    with pytest.raises(ActParseError, match="expected a string"):
        Act.parse(bad)


@pytest.mark.parametrize(
    "bad",
    [[], "inform", [["inform", "restaurant", "food"]], [["inform", "restaurant", "food", 3]], [["", "r", "food", "x"]]],
)
def test_bad_convlab_turns(bad):
    with pytest.raises(ActParseError):
        Act.from_convlab(bad)


_names = st.from_regex(r"[A-Za-z0-9_\-]{1,8}", fullmatch=True)
_slots = st.text(
    alphabet=st.characters(blacklist_characters='=!,()"\'\\+', blacklist_categories=("Cs",)), min_size=1, max_size=8
).filter(lambda s: s.strip() == s and s.strip())
_values = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10)
_items = st.one_of(
    st.builds(Item, _slots),
    st.builds(Item, _slots, st.sampled_from(["=", "!="]), _values),
)
_acts = st.builds(Act, st.lists(_names, min_size=1, max_size=3), st.lists(_items, max_size=5))


@settings(max_examples=300, deadline=None)
@given(_acts)
def test_round_trip_of_generated_acts(act):
    assert Act.parse(str(act)) == act


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='ab=!,()"\' \\+xy', max_size=20) | st.text(max_size=20))
def test_arbitrary_strings_parse_or_raise_parse_error(text):
    try:
        act = Act.parse(text)
    except ActParseError as exc:
        assert exc.text == text
        assert exc.position is not None and 0 <= exc.position <= len(text)
    else:
        assert Act.parse(str(act)) == act
