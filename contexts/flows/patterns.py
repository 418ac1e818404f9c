"""Complex-pattern tags of turn pairs: what unseen conversation flows tend to share.

FRAPI found that the test dialogues that leave the training flow graph share "complex
patterns". Each turn pair of a :class:`~contexts.flows.dialogues.FlowDialogue` gets four tags,
each True, False or None (cannot tell: the source does not record what the tag needs).
``S_t`` is the turn pair's filled slots with their values (``S_0`` = nothing filled, before
the first turn pair), ``U_t`` the user's act items of the turn pair and ``A_{t-1}`` the
system's act items of the turn pair before (the turn the user answers; none before the first).

``multi_slot`` — several slots in one user turn
    At least two slots are newly filled or get a new value in this turn pair:
    ``|{s in S_t : S_t[s] != S_{t-1}.get(s)}| >= 2``. Read from the states only.
``goal_change`` — the user changes its goal
    A slot filled before gets another value or is emptied:
    ``exists s in S_{t-1} : S_t.get(s) != S_{t-1}[s]`` (a relaxation to ``dontcare`` counts).
    Read from the states only.
``repeat`` — the user repeats itself
    An item ``(intent, slot, value)`` of ``U_t`` with a slot occurred in the user's items of
    an earlier turn pair (informing the same value again, requesting the same slot again).
    Without the user's acts of this and every earlier turn pair: the user's text equals
    (case and spacing aside) an earlier non-empty user text of the dialogue; None if the
    source has neither.
``clarify`` — clarification or confirmation
    The user confirms, affirms, negates, denies or asks for a repeat (an intent of ``U_t``
    in :data:`CLARIFY_USER_INTENTS`), or the system's previous act asked for one (an intent
    of ``A_{t-1}`` in :data:`CLARIFY_SYSTEM_INTENTS`) or requested a slot the user had
    already filled (``request`` of a slot in ``S_{t-1}``: asking again). None when a side
    whose act is unknown could still make it True.

The tags are per turn pair; :func:`turn_patterns` returns them for a whole dialogue.

Examples
--------
>>> from contexts.flows.dialogues import FlowDialogue, FlowTurn
>>> food, area = ("restaurants", "food"), ("restaurants", "area")
>>> turns = (
...     FlowTurn(1, {food: "thai", area: "north"}, (("inform", food, "thai"), ("inform", area, "north")),
...              system_items=(("confirm", food, "thai"),)),
...     FlowTurn(2, {food: "thai", area: "north"}, (("affirm", None, None),),
...              system_items=(("request", ("restaurants", "pricerange"), None),)),
...     FlowTurn(3, {food: "thai", area: "south"}, (("inform", area, "south"),)),
... )
>>> for tags in turn_patterns(FlowDialogue("d1", "sim", turns)):
...     print(sorted(name for name, on in tags.items() if on))
['multi_slot']
['clarify']
['goal_change']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contexts.flows.dialogues import ActItem, FlowDialogue, FlowTurn, Slot

__all__ = ["PATTERNS", "CLARIFY_USER_INTENTS", "CLARIFY_SYSTEM_INTENTS", "turn_patterns"]

#: The pattern names, in the order they are reported.
PATTERNS: tuple[str, ...] = ("multi_slot", "repeat", "clarify", "goal_change")
#: User intents that confirm, correct or ask again (PyDial's and ConvLab's names).
CLARIFY_USER_INTENTS = frozenset(("confirm", "affirm", "negate", "deny", "repeat"))
#: System intents that ask the user to confirm or choose (PyDial's and ConvLab's names).
CLARIFY_SYSTEM_INTENTS = frozenset(("confirm", "select", "repeat", "expl-conf", "impl-conf", "confreq"))


def _intents(items: tuple[ActItem, ...]) -> set[str]:
    return {part for intent, _, _ in items for part in intent.split("+")}


def _changed(state: Mapping[Slot, str], before: Mapping[Slot, str]) -> tuple[int, bool]:
    """(slots newly filled or given a new value, whether a filled slot changed or was emptied)."""
    new = sum(1 for slot, value in state.items() if before.get(slot) != value)
    changed = any(state.get(slot) != value for slot, value in before.items())
    return new, changed


def _normalised(text: str | None) -> str:
    return " ".join((text or "").lower().split())


def _repeat(turn: FlowTurn, said: set[ActItem], texts: set[str], unknown_before: bool) -> bool | None:
    if turn.user_items is not None and not unknown_before:
        return any(item in said for item in turn.user_items if item[1] is not None)
    text = _normalised(turn.user_text)
    if turn.user_text is None:
        return None
    return bool(text) and text in texts


def _clarify(turn: FlowTurn, asked: tuple[ActItem, ...] | None, before: Mapping[Slot, str], first: bool) -> bool | None:
    user = None if turn.user_items is None else bool(_intents(turn.user_items) & CLARIFY_USER_INTENTS)
    if first:
        system: bool | None = False
    elif asked is None:
        system = None
    else:
        system = bool(_intents(asked) & CLARIFY_SYSTEM_INTENTS) or any(
            intent.split("+")[0] == "request" and slot in before for intent, slot, _ in asked
        )
    if user or system:
        return True
    if user is None or system is None:
        return None
    return False


def turn_patterns(dialogue: FlowDialogue) -> list[dict[str, bool | None]]:
    """The four pattern tags of every turn pair of ``dialogue`` (see the module docstring).

    Returns
    -------
    list of dict
        One dict per turn pair, in order: pattern name → True, False or None.
    """
    out: list[dict[str, Any]] = []
    before: Mapping[Slot, str] = {}
    said: set[ActItem] = set()
    texts: set[str] = set()
    unknown_before = False  # an earlier turn pair's user act is unknown: a repeat cannot be ruled out
    asked: tuple[ActItem, ...] | None = None
    for position, turn in enumerate(dialogue.turns):
        new, changed = _changed(turn.state, before)
        out.append(
            {
                "multi_slot": new >= 2,
                "repeat": _repeat(turn, said, texts, unknown_before),
                "clarify": _clarify(turn, asked, before, position == 0),
                "goal_change": changed,
            }
        )
        if turn.user_items is None:
            unknown_before = True
        else:
            said.update(turn.user_items)
        if turn.user_text:
            texts.add(_normalised(turn.user_text))
        before = turn.state
        asked = turn.system_items
    return out
