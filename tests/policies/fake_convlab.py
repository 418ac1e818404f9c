"""A stand-in for the ``convlab`` package in tests: rule policies and an NLG shaped like ConvLab's.

Standard library only (it is also loaded by ``examples/convlab_answer_states.py`` in a
subprocess that cannot import simscore).

* :class:`RuleBot` is shaped like ConvLab's rule-based MultiWOZ policy (ConvLab-2's
  ``RuleBasedMultiwozBot``, ConvLab-3's ``RulePolicy``): it groups ``user_action`` by
  ``"Domain-Intent"`` keys (ConvLab-2 acts), reads the constraints from
  ``belief_state[domain]["semi"]`` (and, with no user action, diffs ``["book"]`` against its
  last state as the real bot does), writes its answer into the state it is given, and draws
  from the global ``random`` module: which venue to recommend, how many and which of its
  properties to inform, whether to add a ``reqmore``.
* :class:`FlatRuleBot` does the same on ConvLab-3's flat layout and unified acts.
* :class:`TemplateNLG` picks one of several templates per act with ``random``, as ConvLab's
  template NLG does.
"""

from __future__ import annotations

import copy
import random

VENUES = [
    {"name": "bangkok city", "food": "thai", "area": "centre", "pricerange": "expensive", "phone": "01223 354382"},
    {"name": "sala thong", "food": "thai", "area": "west", "pricerange": "expensive", "phone": "01223 323178"},
    {"name": "thai garden", "food": "thai", "area": "north", "pricerange": "cheap", "phone": "01223 000001"},
    {"name": "thai corner", "food": "thai", "area": "east", "pricerange": "cheap", "phone": "01223 000002"},
    {"name": "the missing sock", "food": "international", "area": "east", "pricerange": "cheap", "phone": "01223 812660"},
]
_SLOTS = ("food", "area", "pricerange")


def _matches(constraints: dict) -> list[dict]:
    return [v for v in VENUES if all(constraints.get(s, "") in ("", "dontcare", v[s]) for s in _SLOTS)]


def _answer(domain: str, intent: str, slots: list, found: list[dict]) -> list[list[str]]:
    if intent == "Request":
        return [["Inform", domain, slot, found[0].get(slot.lower(), "unknown") if found else "none"] for slot, _ in slots]
    if not found:
        return [["NoOffer", domain, "none", "none"]]
    venue = found[random.randint(0, 999999) % len(found)]
    props = ["food", "area", "pricerange", "phone"]
    random.shuffle(props)
    acts = [["Recommend", domain, "Name", venue["name"]]]
    return acts + [["Inform", domain, prop.capitalize(), venue[prop]] for prop in props[: random.randint(1, 4)]]


class RuleBot:
    """ConvLab-2 layout and acts (see the module docstring)."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.last_state: dict = {}

    def init_session(self):
        self.last_state = {}

    def predict(self, state):
        user_action: dict[str, list] = {}
        for intent, domain, slot, value in state["user_action"]:
            user_action.setdefault(f"{domain}-{intent}", []).append([slot, value])
        if not user_action:  # the real bot's check_diff compares semi and book with its last state
            for parts in state["belief_state"].values():
                parts["book"], parts["semi"]  # noqa: B018 - a KeyError on a ConvLab-3 state, as in ConvLab
        self.last_state = copy.deepcopy(state)
        acts: list[list[str]] = []
        for key, slots in user_action.items():
            domain, intent = key.split("-")
            if domain == "general":
                acts.append(["welcome" if intent == "thank" else "bye", "general", "none", "none"])
                continue
            acts += _answer(domain, intent, slots, _matches(state["belief_state"][domain.lower()]["semi"]))
        if random.random() < 0.5:
            acts.append(["reqmore", "general", "none", "none"])
        state["system_action"] = acts
        return acts


class FlatRuleBot:
    """ConvLab-3's flat layout and unified (lower-case) acts."""

    def predict(self, state):
        found = _matches({"pricerange": state["belief_state"]["restaurant"]["price range"],
                          **{s: state["belief_state"]["restaurant"][s] for s in ("food", "area")}})
        acts: list[list[str]] = []
        for intent, domain, slot, _ in state["user_action"]:
            if domain == "restaurant" and intent == "inform" and not acts:
                acts = [[i.lower(), d.lower(), s.lower(), v] for i, d, s, v in _answer("Restaurant", "Inform", [], found)]
            elif domain == "restaurant" and intent == "request":
                acts.append(["inform", "restaurant", slot, found[0].get(slot, "unknown") if found else ""])
        return acts


class TemplateNLG:
    """A template NLG that picks its wording with ``random``."""

    TEMPLATES = ("{intent} {slot} {value}.", "Well: {intent} {slot} is {value}.", "{value} ({slot}).")

    def __init__(self, is_user: bool = False):
        self.is_user = is_user

    def generate(self, acts):
        return " ".join(random.choice(self.TEMPLATES).format(intent=i, slot=s, value=v) for i, _, s, v in acts)
