"""Shared test data of the contexts tests (a hand-written dialogue log and ConvLab-3 dialogues), and the
``slow`` mark of every test that takes a fixture costing more than a few seconds."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from contexts.domain import default_domain

DOMAIN = default_domain()
ONTOLOGY = DOMAIN.ontology
VENUE = DOMAIN.query({"food": "thai"})[0].name

# A hand-written log: two dialogues of source "sim-a" (the second repeats beliefs of the first).
B0 = {"slots": {"area": {"none": 1.0}, "food": {"none": 1.0}}}
B1 = {"slots": {"food": {"thai": 0.9}}, "method": {"byconstraints": 1.0}}
B2 = {
    "slots": {"food": {"thai": 0.9}, "area": {"centre": 1.0}},
    "method": {"byconstraints": 1.0},
    "discourse_act": {"ack": 1.0},
}
B3 = {
    "slots": {"food": {"thai": 0.9}, "area": {"centre": 1.0}},
    "method": {"byname": 1.0},
    "requested": {"phone": 1.0},
    "last_offered": VENUE,
    "offer_happened": True,
}
LOG_LINES: list[dict[str, Any]] = [
    {"format": "simscore-dialogue-log", "version": 1, "domain": "restaurants",
     "source": {"name": "sim-a", "policy": "handcrafted", "seed": 3}},
    {"dialogue_id": "d1", "outcome": {"success": True, "reward": 17},
     "turns": [
         {"turn_index": 0, "user_act": None, "user_text": None, "belief": B0,
          "system_act": "hello()", "system_text": "Welcome!"},
         {"turn_index": 1, "user_act": "inform(food=thai)", "user_text": "Thai food please.", "belief": B1,
          "system_act": "request(area)", "system_text": "Which area?"},
         {"turn_index": 2, "user_act": "inform(area=centre)", "user_text": None, "belief": B2,
          "system_act": f'inform(name="{VENUE}",food=thai,area=centre)', "system_text": f"{VENUE} is nice."},
         {"turn_index": 3, "user_act": "request(phone)", "user_text": "Phone number?", "belief": B3,
          "system_act": None, "system_text": "It is 01223 000000."},
     ]},
    {"dialogue_id": "d2", "outcome": {},
     "turns": [
         {"turn_index": 0, "belief": B0, "system_act": "hello()", "system_text": "Welcome!"},
         {"turn_index": 1, "user_act": "inform(food=thai)", "user_text": "Thai.", "belief": B1,
          "system_act": "request(area)", "system_text": None},
     ]},
]


def _acts(*acts: tuple[str, str, str, str]) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {"categorical": [], "non-categorical": [], "binary": []}
    for intent, domain, slot, value in acts:
        if intent == "request":
            out["binary"].append({"intent": intent, "domain": domain, "slot": slot})
        else:
            out["non-categorical"].append({"intent": intent, "domain": domain, "slot": slot, "value": value})
    return out


def _state(**slots: str) -> dict[str, dict[str, str]]:
    base = {"food": "", "area": "", "price range": "", "name": "", "book people": ""}
    base.update({k.replace("_", " "): v for k, v in slots.items()})
    return {"restaurant": base, "hotel": {"area": "north"}}


CONVLAB = [
    {
        "dataset": "camrest",
        "dialogue_id": "camrest-test-0",
        "domains": ["restaurant"],
        "turns": [
            {"speaker": "user", "utterance": "Cheap thai food please.", "utt_idx": 0,
             "dialogue_acts": _acts(("inform", "restaurant", "food", "thai"), ("inform", "restaurant", "price range", "cheap")),
             "state": _state(food="thai", price_range="cheap")},
            {"speaker": "system", "utterance": "Which part of town?", "utt_idx": 1,
             "dialogue_acts": _acts(("request", "restaurant", "area", ""))},
            {"speaker": "user", "utterance": "Any part, really.", "utt_idx": 2,
             "dialogue_acts": _acts(("inform", "restaurant", "area", "dontcare")),
             "state": _state(food="thai", price_range="cheap", area="dontcare")},
            {"speaker": "system", "utterance": f"{VENUE} serves thai food.", "utt_idx": 3,
             "dialogue_acts": _acts(("inform", "restaurant", "name", VENUE))},
            {"speaker": "user", "utterance": "What is the address? Thanks.", "utt_idx": 4,
             "dialogue_acts": _acts(("request", "restaurant", "address", ""), ("thank", "general", "none", "")),
             "state": _state(food="thai", price_range="cheap", area="dontcare")},
            {"speaker": "system", "utterance": "It is on mill lane.", "utt_idx": 5,
             "dialogue_acts": _acts(("inform", "restaurant", "address", "mill lane"))},
            {"speaker": "user", "utterance": "Bye.", "utt_idx": 6,
             "dialogue_acts": _acts(("bye", "general", "none", "")), "state": _state(food="thai")},
        ],
    },
    {"dataset": "camrest", "dialogue_id": "camrest-test-1", "domains": ["hotel"], "turns": []},
    {
        "dataset": "camrest",
        "dialogue_id": "camrest-test-2",
        "domains": ["restaurant"],
        "turns": [
            {"speaker": "system", "utterance": "Hello, how can I help?", "utt_idx": 0,
             "dialogue_acts": _acts(("greet", "general", "none", ""))},
            {"speaker": "user", "utterance": "Korean food in the east.", "utt_idx": 1,
             "dialogue_acts": _acts(("inform", "restaurant", "food", "korean")),
             "state": _state(food="Korean", area="east")},
            {"speaker": "system", "utterance": "There is none.", "utt_idx": 2,
             "dialogue_acts": _acts(("nooffer", "restaurant", "food", "korean"))},
            {"speaker": "user", "utterance": "Ok.", "utt_idx": 3, "dialogue_acts": _acts(),
             "state": _state(food="korean", area="east")},
            {"speaker": "system", "utterance": "Anything else?", "utt_idx": 4, "dialogue_acts": _acts(("reqmore", "general", "none", ""))},
        ],
    },
]




#: Fixtures that take more than a few seconds to build (a finished experiment, a server, a model written
#: and loaded): every test that takes one is marked ``slow`` (``pytest -m "not slow"`` leaves them out).
SLOW_FIXTURES = frozenset({
    "tiny_run", "held_run", "one_reward",  # tests/simscore/app: finished experiments
    "clean", "clean_text",  # tests/simscore/app/test_faults.py: a clean run in a subprocess
    "served", "saved_model",  # transformers serve; a TF SavedModel
})


@pytest.hookimpl(tryfirst=True)  # before pytest -m reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture()
def log_lines() -> list[dict[str, Any]]:
    """The hand-written dialogue log: header line, then dialogues d1 and d2 (a fresh copy)."""
    return copy.deepcopy(LOG_LINES)


@pytest.fixture()
def convlab_dialogues() -> list[dict[str, Any]]:
    """Three ConvLab-3 unified-format dialogues (one hotel-only) (a fresh copy)."""
    return copy.deepcopy(CONVLAB)


@pytest.fixture(autouse=True)
def _no_earlier_log_line():
    """Every test starts as a fresh process: no log line yet for the progress steps' shared minute."""
    from simscore.progress import LAST_LINE

    LAST_LINE.at = None


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_the_test_folder(tmp_path_factory):
    """stable-baselines3 makes a folder in the system's temporary folder for every model that learns
    without a logger of its own (``SB3-<date>``; ``SB3_LOGDIR`` says where): the tests' go under pytest's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield
