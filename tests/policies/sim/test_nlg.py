"""Template NLG: clean texts for every act shape, determinism, wording drawn per (instance, context)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.sim.domain_cache import domain_cache
from policies.sim.nlg import SYSTEM_TEMPLATES, USER_TEMPLATES, TemplateNLG
from policies.sim.tracker import FocusTracker
from policies.sim.usersim import AgendaUser
from simscore.acts import Act

A = Act.parse
DOMAIN = default_domain()
VENUE = DOMAIN.venues[3]
OTHER = DOMAIN.venues[7]
INSTANCES = [f"gpsarsa-ts-seed{i % 3}-{1000 * i}" for i in range(300)]

SYSTEM_ACTS = [
    "hello()", "bye()", "reqmore()", "repeat()", "restart()",
    "request(area)", "request(food)", "request(pricerange)", "request(name)", "request(area,food)", "request()",
    "confirm(area=north)", "confirm(food=dontcare)", "confirm(pricerange=none)",
    'confirm(area=centre,food="modern european",pricerange=cheap)', f'confirm(name="{VENUE.name}")',
    "confirm(food)", "confirm()", "confirm(food!=thai)",
    "select(area=north,area=south)", "select(food=thai,food=indian)", "select(pricerange=cheap,pricerange=expensive)",
    "select(food=thai,food=none)", "select(area=dontcare,area=east)", "select(pricerange=cheap)",
    "select(food=thai,area=north)", "select(area=east,area=north,area=west)",
    f'inform(name="{VENUE.name}")',
    f'inform(name="{VENUE.name}",area={VENUE.area})',
    f'inform(name="{VENUE.name}",area={VENUE.area},food="{VENUE.food}",pricerange={VENUE.pricerange})',
    f'inform(name="{VENUE.name}",area=north,food=thai,pricerange=cheap,stars=4,parking=yes)',
    f'inform(name="{VENUE.name}",phone="{VENUE.phone}")',
    f'inform(name="{VENUE.name}",phone="{VENUE.phone}",addr="{VENUE.addr}",postcode="{VENUE.postcode}",'
    f'signature="{VENUE.signature}",description="{VENUE.description}")',
    f'inform(name="{VENUE.name}",description="{VENUE.description}")',
    f'inform(name="{VENUE.name}",food="{VENUE.food}",addr="{VENUE.addr}")',
    f'inform(name="{VENUE.name}",phone=none)',
    f'inform(name="{VENUE.name}",phone)',
    "inform(name=none,food=thai,area=north)",
    "inform(name=none,food=thai,area=dontcare)",
    "inform(name=none)",
    f'inform(name=none,food=thai,name!="{VENUE.name}")',
    f'inform(name=none,name!="{VENUE.name}")',
    f'inform(name=none,food=thai,pricerange=cheap,name!="{VENUE.name}",name!="{OTHER.name}",name!="a third place")',
    f'inform(phone="{VENUE.phone}")',
    "inform(food=thai,area=north)",
]
ODD_ACTS = [  # unknown intents, items without values, shapes no template covers
    "inform()", "inform(food)", "inform(name)", 'inform(name="a",name="b")', 'inform(name="a",name!="b")',
    "inform(name=none,food)", 'inform(name!="b",food=thai)', "request(food=thai)", "hello(food=thai)",
    "bye(area)", "confreq(area=north,food)", "welcomemsg()", "inform+request(food=thai,area)", "x_y(a=b)",
]
USER_ACTS = [
    "hello()", "inform(type=restaurant)", "inform(type=restaurant,food=thai)",
    "inform(type=restaurant,food=thai,area=north,pricerange=dontcare)", "inform(food=thai)",
    "inform(area=dontcare)", "inform(area=dontcare,food=dontcare)", "inform(dontcare)", 'inform(name="the x")',
    "affirm()", "affirm(food=thai)", "affirm(area=dontcare)", "negate()", "negate(food=thai)",
    "deny(food!=indian,food=thai)", "deny(food!=indian)", "deny(area!=north,area!=east,area=south)",
    "request(phone)", "request(phone,addr,postcode)", 'request(name="the x",phone)', 'request(name="the x",phone,addr)',
    "request(name)", "request()", "reqalts()", "reqalts(area=dontcare)", "reqalts(food=thai,area=north)",
    "confirm(food=thai)", "confirm(area=north,pricerange=cheap)", "thankyou()", "ack()", "bye()", "thankyou+bye()",
    "null()", "silence()", "repeat()", "affirm+inform(food=thai)", "hello+inform(type=restaurant,area=north)",
    "ack+thankyou()",
]
ODD_USER_ACTS = ["inform(food)", "foo()", "foo(bar=baz)", "affirm+negate(food=thai)", "inform+reqalts(food=thai)",
                 'request(name="a",name="b",phone)', 'request(name="the x")', "hello(food=thai)", "deny(food=thai)"]


def _values(act: Act) -> list[str]:
    """The values a text of ``act`` must say (unconstrained values are said in words)."""
    return [i.value.lower() for i in act.items if i.value is not None and i.value not in ("none", "dontcare")]


def _check_clean(text: str) -> None:
    assert text and text == text.strip(), repr(text)
    assert "{" not in text and "}" not in text, text
    assert text[0].isupper(), text
    assert text[-1] in ".?!", text
    assert "  " not in text and " ." not in text and " ," not in text and " ?" not in text, text
    assert "dontcare" not in text and "None" not in text, text


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{\w+\}", template)
    return re.compile("(?s)" + ".*".join(re.escape(p) for p in parts), re.IGNORECASE)


# -- every act renders cleanly -------------------------------------------------------------------


@pytest.mark.parametrize("act", SYSTEM_ACTS)
def test_every_system_act_has_a_clean_text_with_its_values(act):
    act = A(act)
    for instance in INSTANCES[:60]:
        text = TemplateNLG(instance).realise(act, context_key="ctx")
        _check_clean(text)
        for value in _values(act):
            assert value in text.lower(), (value, text)


@pytest.mark.parametrize("act", ODD_ACTS)
def test_acts_without_a_template_still_get_a_text(act):
    act = A(act)
    for instance in INSTANCES[:10]:
        text = TemplateNLG(instance).realise(act, context_key="ctx")
        assert text and text[0].isupper() and text[-1] in ".?!" and "{" not in text
        for value in _values(act):
            assert value in text.lower()


def test_every_system_template_is_used_and_filled():
    texts = {TemplateNLG(i).realise(A(act), context_key="ctx") for act in SYSTEM_ACTS for i in INSTANCES}
    for kind, templates in SYSTEM_TEMPLATES.items():
        assert 3 <= len(templates) == len(set(templates)), kind
        for template in templates:
            pattern = _template_regex(template)
            assert any(pattern.search(text) for text in texts), (kind, template)


def test_wordings_per_act_type():
    counts = {kind: len(templates) for kind, templates in SYSTEM_TEMPLATES.items()}
    for kind in ("hello", "bye", "reqmore", "repeat", "restart", "request_area", "request_food",
                 "request_pricerange", "request", "confirm", "offer_name", "details", "no_venue", "no_other_venue"):
        assert 4 <= counts[kind] <= 6, kind
    assert counts["offer"] == 6
    for kind in ("area", "food", "pricerange"):
        assert counts[f"select_{kind}"] == 5


def test_every_value_of_the_default_domain_renders_in_an_offer():
    ontology = DOMAIN.ontology
    nlg = [TemplateNLG(i) for i in INSTANCES[:4]]
    for slot, values in ontology.informable.items():
        for value in values:
            act = Act("inform", [("name", value)]) if slot == "name" else Act("inform", [("name", VENUE.name), (slot, value)])
            for n in nlg:
                text = n.realise(act, context_key=value)
                _check_clean(text)
                assert value in text.lower(), text
                assert slot == "name" or VENUE.name in text.lower(), text
    for venue in DOMAIN.venues:
        offer = Act("inform", [("name", venue.name), ("area", venue.area), ("food", venue.food),
                               ("pricerange", venue.pricerange)])
        details = Act("inform", [("name", venue.name)] + [(s, venue[s]) for s in
                                                         ("addr", "phone", "postcode", "signature", "description")])
        for act in (offer, details):
            text = nlg[venue.id % 4].realise(act, context_key="ctx")
            _check_clean(text)
            assert all(v in text.lower() for v in _values(act)), text


def test_master_actions_of_random_beliefs_render_cleanly():
    space = domain_cache(DOMAIN).space
    rng = np.random.default_rng(3)
    ontology = DOMAIN.ontology
    for n in range(40):
        slots = {}
        for slot in ("area", "pricerange", "food"):
            values = ontology.informable[slot] + ("dontcare",)
            a, b = rng.choice(len(values), size=2, replace=False)
            slots[slot] = {values[a]: 0.6, values[b]: 0.3} if rng.random() < 0.8 else {}
        venue = DOMAIN.venues[int(rng.integers(len(DOMAIN.venues)))]
        belief = BeliefState(
            slots=slots,
            method={("byconstraints", "byname", "byalternatives")[n % 3]: 1.0},
            requested={s: 1.0 for s in ("addr", "phone", "postcode", "signature", "description") if rng.random() < 0.5},
            last_offered=venue.name if n % 2 else None,
            offer_happened=bool(n % 2),
        )
        nlg = TemplateNLG(INSTANCES[n])
        for action in range(len(space)):
            act = space.master_action(action, belief)
            text = nlg.realise(act, belief)
            _check_clean(text)
            assert all(v in text.lower() for v in _values(act)), (str(act), text)


def test_user_acts_of_simulated_turns_render_cleanly():
    """The simulated user's answers to master actions (no dialogue simulator involved)."""
    space = domain_cache(DOMAIN).space
    user = AgendaUser(DOMAIN)
    tracker = FocusTracker(DOMAIN.ontology)
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(60):
        user.reset(rng)
        belief = tracker.reset()
        system_act = Act("hello")
        for _turn in range(12):
            user_act = user.respond(system_act)
            seen.add(user_act.intent)
            text = TemplateNLG.realise_user(user_act, TemplateNLG.context_key(belief))
            _check_clean(text)
            assert all(v in text.lower() for v in _values(user_act) if v != "restaurant"), (str(user_act), text)
            if "bye" in user_act.intents:
                break
            belief = tracker.update(system_act, user_act)
            mask = space.mask(belief)
            system_act = space.master_action(int(rng.choice(np.flatnonzero(mask))), belief)
    assert {"inform", "request", "bye"} <= seen


# -- user acts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("act", USER_ACTS)
def test_every_user_act_has_a_clean_text_with_its_values(act):
    act = A(act)
    for key in ("", "a", "b", "c", "d", "e"):
        text = TemplateNLG.realise_user(act, key)
        _check_clean(text)
        for value in _values(act):
            if value != "restaurant":
                assert value in text.lower(), (value, text)


@pytest.mark.parametrize("act", ODD_USER_ACTS)
def test_odd_user_acts_still_get_a_text(act):
    text = TemplateNLG.realise_user(A(act))
    assert text and text[0].isupper() and text[-1] in ".?!"


@pytest.mark.parametrize(
    "act, expected",
    [
        ("inform(type=restaurant,food=thai)", "thai"),
        ("inform(area=dontcare)", "area"),
        ("inform(pricerange=dontcare)", "price range"),
        ("request(phone,addr)", "address and phone number"),
        ('request(name="the x",phone)', "phone number"),
        ("affirm()", ""),
        ("negate(food=thai)", "No"),
        ("deny(food!=indian,food=thai)", "indian"),
        ("deny(area!=north,area!=east,area=south)", "east or north"),
        ("reqalts()", "else"),
        ("bye()", "bye"),
        ("thankyou()", "Thank"),
    ],
)
def test_user_texts_say_what_the_act_says(act, expected):
    for key in ("", "x", "y"):
        assert expected in TemplateNLG.realise_user(A(act), key)


def test_user_wording_depends_on_act_and_context_only():
    act = A("inform(food=thai,area=north)")
    assert TemplateNLG("p1").realise_user(act, "k") == TemplateNLG("p2").realise_user(act, "k")
    assert TemplateNLG.realise_user(act, "k") == TemplateNLG.realise_user(act, "k")
    assert len({TemplateNLG.realise_user(act, f"k{i}") for i in range(40)}) > 5


def test_every_user_template_is_used_and_filled():
    texts = {TemplateNLG.realise_user(A(act), f"k{i}") for act in USER_ACTS for i in range(40)}
    for kind, templates in USER_TEMPLATES.items():
        assert len(templates) >= 3, kind
        for template in templates:
            pattern = _template_regex(template)
            assert any(pattern.search(text) for text in texts), (kind, template)


# -- dontcare -----------------------------------------------------------------------------------


@pytest.mark.parametrize("slot, words", [("area", ("any", "anywhere", "whatever")),
                                         ("food", ("any",)), ("pricerange", ("any", "whatever"))])
def test_dontcare_is_said_in_words(slot, words):
    for act in (f"confirm({slot}=dontcare)", f"inform(name=none,{slot}=dontcare)"):
        for instance in INSTANCES[:30]:
            text = TemplateNLG(instance).realise(A(act), context_key="ctx").lower()
            assert "dontcare" not in text and any(word in text for word in words), text
    for key in ("a", "b", "c"):
        text = TemplateNLG.realise_user(A(f"inform({slot}=dontcare)"), key)
        assert "dontcare" not in text and ("care" in text or "any" in text.lower() or "matter" in text), text


# -- determinism and independence ---------------------------------------------------------------


def test_same_instance_context_and_act_give_the_same_text():
    act = A(f'inform(name="{VENUE.name}",food="{VENUE.food}",area={VENUE.area})')
    belief = BeliefState(slots={"food": {VENUE.food: 1.0}}, method={"byconstraints": 1.0})
    key = TemplateNLG.context_key(belief)
    text = TemplateNLG("p").realise(act, belief)
    assert text == TemplateNLG("p").realise(act, belief) == TemplateNLG("p").realise(act, context_key=key)
    assert TemplateNLG("p").realise(act) == TemplateNLG("p").realise(act, None, context_key="")
    assert key == TemplateNLG.context_key(BeliefState(slots={"food": {VENUE.food: 1.0}}, method={"byconstraints": 1.0}))


def test_context_key_separates_beliefs():
    beliefs = [
        BeliefState(),
        BeliefState(slots={"area": {"north": 1.0}}),
        BeliefState(slots={"area": {"north": 0.9}}),
        BeliefState(slots={"area": {"north": 0.9}}, method={"byname": 1.0}),
        BeliefState(slots={"area": {"north": 0.9}}, discourse_act={"ack": 1.0}),
        BeliefState(slots={"area": {"north": 0.9}}, requested={"phone": 0.5}),
        BeliefState(slots={"area": {"north": 0.9}}, last_offered=VENUE.name),
        BeliefState(slots={"area": {"north": 0.9}}, last_offered=VENUE.name, offer_happened=True),
        BeliefState(slots={"area": {"north": 0.9}}, last_informed_no_venue=True),
        BeliefState(slots={"food": {"north": 0.9}}),
    ]
    keys = [TemplateNLG.context_key(b) for b in beliefs]
    assert len(set(keys)) == len(keys) and "" not in keys
    assert TemplateNLG.context_key(None) == ""


def test_wording_is_stable_across_processes():
    belief = "BeliefState(slots={'food': {'thai': 0.7}}, requested={'phone': 1.0}, last_offered='x y')"
    code = (
        "from policies.sim.nlg import TemplateNLG; from simscore.acts import Act; "
        "from contexts.belief import BeliefState; "
        f"b = {belief}; k = TemplateNLG.context_key(b); "
        "print(k); print(TemplateNLG('seed7').realise(Act.parse('inform(name=\"x y\",food=thai,area=north)'), b)); "
        "print(TemplateNLG.realise_user(Act.parse('request(phone,addr)'), k))"
    )
    b = BeliefState(slots={"food": {"thai": 0.7}}, requested={"phone": 1.0}, last_offered="x y")
    key = TemplateNLG.context_key(b)
    expected = "\n".join([
        key,
        TemplateNLG("seed7").realise(A('inform(name="x y",food=thai,area=north)'), b),
        TemplateNLG.realise_user(A("request(phone,addr)"), key),
    ])
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        assert out.stdout.strip() == expected


@pytest.mark.parametrize("act, k", [("hello()", 5), ("request(food)", 5), ("reqmore()", 5),
                                    ("confirm(food=thai)", 25), ("inform(name=none,area=north)", 25)])
def test_wording_is_spread_evenly_over_instances_and_contexts(act, k):
    n = 100 * k  # each wording expected 100 times (standard deviation about 10)
    by_instance = Counter(TemplateNLG(f"policy-{i}").realise(A(act), context_key="ctx") for i in range(n))
    by_context = Counter(TemplateNLG("policy").realise(A(act), context_key=f"ctx-{i}") for i in range(n))
    for counts in (by_instance, by_context):
        assert len(counts) == k
        assert 55 <= min(counts.values()) and max(counts.values()) <= 145


def test_offer_wording_varies_in_template_phrases_and_order():
    act = A(f'inform(name="{VENUE.name}",area=north,food=thai)')
    texts = [TemplateNLG(f"policy-{i}").realise(act, context_key="ctx") for i in range(600)]
    assert len(set(texts)) > 150
    first = Counter(min(("thai", "north"), key=lambda v: t.find(v)) for t in texts)
    assert first["thai"] > 200 and first["north"] > 200  # the slot phrases come in either order
    templates = Counter(next(kind for kind, p in enumerate(_template_regex(t) for t in SYSTEM_TEMPLATES["offer"])
                             if p.fullmatch(text)) for text in texts)
    assert len(templates) == 6 and min(templates.values()) > 50


def test_two_instances_agree_about_one_time_in_k():
    """Instances choose independently: neighbouring names agree on 1/5 of the contexts."""
    contexts = [f"ctx-{i}" for i in range(2000)]
    act = A("hello()")
    for a, b in (("seed1", "seed2"), ("gpsarsa-ts-seed1-40000", "gpsarsa-ts-seed1-39000"), ("", "a")):
        same = sum(TemplateNLG(a).realise(act, context_key=c) == TemplateNLG(b).realise(act, context_key=c)
                   for c in contexts)
        assert 0.15 < same / len(contexts) < 0.25, (a, b, same)


# -- input --------------------------------------------------------------------------------------


def test_bad_input():
    with pytest.raises(TypeError, match="simscore.Act"):
        TemplateNLG().realise("request(food)")
    with pytest.raises(TypeError, match="simscore.Act"):
        TemplateNLG.realise_user("request(food)")
    with pytest.raises(TypeError, match="instance must be a str"):
        TemplateNLG(7)
    with pytest.raises(TypeError, match="context_key must be a str"):
        TemplateNLG().realise(A("hello()"), context_key=3)
    with pytest.raises(TypeError, match="context_key must be a str"):
        TemplateNLG.realise_user(A("hello()"), None)
    with pytest.raises(TypeError, match="belief must be a BeliefState"):
        TemplateNLG.context_key({"area": "north"})
    assert repr(TemplateNLG("p")) == "TemplateNLG('p')"
