"""Template NLG: coverage of every system act, determinism, variety across NLG seeds."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.handcrafted import RandomPolicy
from policies.nlg import SYSTEM_TEMPLATES, TemplateNLG
from policies.simulation import run_dialogues
from simscore.acts import Act

A = Act.parse
DOMAIN = default_domain()
VENUE = DOMAIN.venues[3]

SYSTEM_ACTS = [
    "hello()", "bye()", "reqmore()", "repeat()", "restart()",
    "request(area)", "request(food)", "request(pricerange)",
    "confirm(area=north)", "confirm(food=dontcare)", "confirm(pricerange=none)",
    "select(area=north,area=south)", "select(food=thai,food=none)", "select(pricerange=cheap)",
    f'inform(name="{VENUE.name}",area={VENUE.area},food="{VENUE.food}",pricerange={VENUE.pricerange})',
    f'inform(name="{VENUE.name}",phone="{VENUE.phone}",addr="{VENUE.addr}",postcode="{VENUE.postcode}",'
    f'signature="{VENUE.signature}",description="{VENUE.description}")',
    f'inform(name="{VENUE.name}")',
    "inform(name=none,food=thai,area=north)",
    "inform(name=none)",
    'inform(name=none,food=thai,name!="a place",name!="b place")',
]


@pytest.mark.parametrize("act", SYSTEM_ACTS)
def test_every_system_act_has_a_clean_text(act):
    for seed in range(6):
        text = TemplateNLG(nlg_seed=seed).realise(A(act))
        assert text and "{" not in text and "}" not in text and text[0].isupper()
        for item in A(act).items:
            if item.value not in (None, "none", "dontcare"):
                assert item.value.lower() in text.lower()  # every value is said


def test_texts_of_simulated_dialogues_are_clean():
    result = run_dialogues(RandomPolicy(3, respect_mask=False), 150, seed=2, keep_dialogues=True)
    seen = set()
    for dialogue in result.dialogues:
        for turn in dialogue.turns:
            seen.add(turn.system_action.intent)
            for text in (turn.system_text, turn.user_text):
                assert text is None or (text and "{" not in text and "None" not in text)
    assert seen == {"hello", "request", "confirm", "select", "inform", "bye", "repeat", "reqmore", "restart"}


def test_deterministic_for_act_context_and_seed():
    act = A(f'inform(name="{VENUE.name}",food="{VENUE.food}")')
    belief = BeliefState(method={"byconstraints": 1.0})
    assert TemplateNLG(nlg_seed=4).realise(act, belief) == TemplateNLG(nlg_seed=4).realise(act, belief)
    key = TemplateNLG.context_key(belief)
    assert key == "byconstraints/"
    assert TemplateNLG(nlg_seed=4).realise(act, context_key=key) == TemplateNLG(nlg_seed=4).realise(act, belief)


def test_variety_across_seeds_and_contexts():
    act = A(f'inform(name="{VENUE.name}",area={VENUE.area},food="{VENUE.food}")')
    texts = {TemplateNLG(nlg_seed=s).realise(act) for s in range(30)}
    assert len(texts) >= 5
    for name in ("hello", "bye", "request_food", "reqmore"):
        act_text = {"request_food": "request(food)"}.get(name, f"{name}()")
        texts = {TemplateNLG(nlg_seed=s).realise(A(act_text)) for s in range(30)}
        assert texts == set(SYSTEM_TEMPLATES[name])  # every wording is used
    beliefs = [BeliefState(method={m: 1.0}) for m in ("byconstraints", "byname", "none")]
    texts = {TemplateNLG(nlg_seed=0).realise(act, b) for b in beliefs for act in [A("request(area)")]}
    assert len(texts) >= 2  # the context takes part in the choice


def test_wording_is_stable_across_processes():
    code = (
        "from policies.nlg import TemplateNLG; from simscore.acts import Act; "
        "print(TemplateNLG(nlg_seed=7).realise(Act.parse('request(food)')))"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        outputs.add(out.stdout.strip())
    assert outputs == {TemplateNLG(nlg_seed=7).realise(A("request(food)"))}


@pytest.mark.parametrize(
    "act, expected_any",
    [
        ("inform(type=restaurant,food=thai)", "thai food"),
        ("inform(area=dontcare)", "area"),
        ("request(phone,addr)", "address and phone number"),
        ("affirm()", "es"),
        ("negate(food=thai)", "No"),
        ("deny(food!=indian,food=thai)", "not indian"),
        ("reqalts()", "else"),
        ("bye()", "bye"),
    ],
)
def test_user_texts(act, expected_any):
    text = TemplateNLG().realise_user(A(act))
    assert expected_any in text and text[0].isupper()


def test_bad_input():
    with pytest.raises(TypeError, match="simscore.Act"):
        TemplateNLG().realise("request(food)")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nlg_seed must be an int"):
        TemplateNLG(nlg_seed="1")  # type: ignore[arg-type]
