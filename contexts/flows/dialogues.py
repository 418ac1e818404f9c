"""Dialogues as sequences of turn pairs: what conversation flows and complex patterns are made of.

Every dialogue simscore reads becomes a :class:`FlowDialogue`, a sequence of
:class:`FlowTurn`: the filled belief-state slots with their values after the user's turn,
the user's and the system's act items, and the user's text.

* simscore's dialogue logs (:mod:`contexts.dialogue_log`) and PyDial belief logs
  (:mod:`contexts.pydial`): every turn with ``turn_index >= 1`` is a turn pair (turn 0 is the
  system's opening in both formats); a slot is filled when its most probable value other
  than none is more probable than none (:func:`belief_slots`); slots are qualified by the
  log's domain name (``restaurants``);
* ConvLab-3 unified-format ``dialogues.json`` (e.g. MultiWOZ): the user turns before a
  system turn (or the end of the dialogue) form one turn pair, numbered as
  :func:`contexts.collect.read_convlab` numbers its turns (the count of user turns so far),
  with the last user turn's ``state`` of **every** domain (a slot is filled when its value
  is not ``""``, ``none`` or ``not mentioned``); a system opening is no turn pair.

Act items are ``(intent, slot, value)`` with the slot as ``(domain, name)`` (domain ``""``
for ConvLab's ``general``) or None, and the value None for a bare slot.

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.dialogue_log import Dialogue, DialogueTurn
>>> turns = (DialogueTurn(turn_index=0, belief=BeliefState(), system_act="hello()"),
...          DialogueTurn(turn_index=1, belief=BeliefState(slots={"food": {"thai": 1.0}}),
...                       user_act="inform(food=thai)", system_act="request(area)"))
>>> [flow] = flow_dialogues([Dialogue("d1", turns)], domain="restaurants", source_name="sim")
>>> flow.key, len(flow.turns), dict(flow.turns[0].state), flow.turns[0].user_items
(('sim', 'd1'), 1, {('restaurants', 'food'): 'thai'}, (('inform', ('restaurants', 'food'), 'thai'),))
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contexts._collect import _source_name
from contexts._convlab import _acts, _convlab_turns, _load_convlab_json
from contexts._frozen import FrozenDict
from contexts.belief import BeliefState
from contexts.dialogue_log import Dialogue, read_dialogue_log
from contexts.pydial import read_pydial_beliefs
from simscore.acts import Act
from simscore.checks import check_int
from simscore.errors import ActParseError, FileFormatError, InvalidContextError

__all__ = [
    "Slot",
    "ActItem",
    "FlowTurn",
    "FlowDialogue",
    "belief_slots",
    "flow_dialogues",
    "read_flow_dialogues",
]

#: A slot as (domain, slot name).
Slot = tuple[str, str]
#: One item of an act: (intent, slot or None, value or None); slots as :data:`Slot`.
ActItem = tuple[str, "Slot | None", "str | None"]

_EMPTY_VALUES = frozenset(("", "none", "not mentioned"))
_GENERAL_DOMAINS = frozenset(("", "none", "general"))
_KINDS = ("log", "pydial", "convlab")



@dataclass(frozen=True)
class FlowTurn:
    """One turn pair of a dialogue, as far as flows and complex patterns need it.

    Attributes
    ----------
    turn_index : int
        As in the dialogue's contexts (``col/<source>/<dialogue>/<turn_index>``).
    state : mapping of Slot to str
        The filled slots after the user's turn and their values (read-only).
    user_items, system_items : tuple of ActItem, or None
        The user's act this turn and the system's answer; None where the source does not say.
    user_text : str or None
    """

    turn_index: int
    state: Mapping[Slot, str]
    user_items: tuple[ActItem, ...] | None = None
    system_items: tuple[ActItem, ...] | None = None
    user_text: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", FrozenDict(self.state))


@dataclass(frozen=True)
class FlowDialogue:
    """A dialogue as a sequence of turn pairs.

    Attributes
    ----------
    dialogue_id : str
    source_name : str
        The source name its contexts carry (``source_name`` metadata).
    turns : tuple of FlowTurn
        In order; turn indices increase.
    origin : {"log", "pydial", "convlab"}
        What it was read from.
    """

    dialogue_id: str
    source_name: str
    turns: tuple[FlowTurn, ...]
    origin: str = "log"

    @property
    def key(self) -> tuple[str, str]:
        """(source name, dialogue id): how contexts find their dialogue."""
        return (self.source_name, self.dialogue_id)



def belief_slots(belief: BeliefState, domain: str) -> dict[Slot, str]:
    """The filled slots of a belief state: those whose top value beats P(none), with that value.

    >>> belief_slots(BeliefState(slots={"food": {"thai": 0.6}, "area": {"north": 0.4}}), "restaurants")
    {('restaurants', 'food'): 'thai'}
    """
    out: dict[Slot, str] = {}
    for slot in belief.slots:
        value, p = belief.top(slot)
        if value != "none" and p > belief.prob(slot, "none"):
            out[(domain, slot)] = value
    return out


def _qualified(domain: str, slot: str) -> Slot | None:
    slot = slot.strip().lower()
    if slot in ("", "none"):
        return None
    domain = domain.strip().lower()
    return ("" if domain in _GENERAL_DOMAINS else domain, slot)


def _act_items(act: Act, domain: str) -> tuple[ActItem, ...]:
    """Items of a PyDial-style act, its slots qualified by ``domain`` (one bare item per intent if none)."""
    intent = "+".join(act.intents)
    if not act.items:
        return tuple((name, None, None) for name in act.intents)
    return tuple((intent, (domain, item.slot), item.value) for item in act.items)


def _quad_items(quads: Any) -> tuple[ActItem, ...]:
    """Items of ConvLab ``[intent, domain, slot, value]`` lists."""
    out = []
    for quad in quads:
        intent, domain, slot, value = (str(part) for part in quad)
        out.append((intent.strip().lower(), _qualified(domain, slot), value.strip() or None))
    return tuple(out)


def _parsed(text: str | None, domain: str) -> tuple[ActItem, ...] | None:
    if text is None:
        return None
    try:
        return _act_items(Act.parse(text), domain)
    except ActParseError:
        return None


def _log_turn_user_items(turn: Any, domain: str) -> tuple[ActItem, ...] | None:
    quads = turn.metadata.get("user_action")
    if isinstance(quads, (list, tuple)) and all(isinstance(q, (list, tuple)) and len(q) == 4 for q in quads):
        return _quad_items(quads)
    if turn.user_act is not None:
        return _parsed(turn.user_act, domain)
    n_best = turn.metadata.get("user_acts")  # PyDial: [[act, probability], ...]
    if isinstance(n_best, (list, tuple)) and n_best:
        best = max(n_best, key=lambda entry: entry[1])
        return _parsed(best[0], domain)
    return None


def flow_dialogues(
    dialogues: Iterable[Dialogue], *, domain: str, source_name: str = "log", origin: str = "log"
) -> list[FlowDialogue]:
    """Flow dialogues from logged :class:`~contexts.dialogue_log.Dialogue` objects.

    Parameters
    ----------
    dialogues : iterable of Dialogue
    domain : str
        Qualifies the slots (``restaurants`` → ``restaurants-food``).
    source_name : str
        The source name the dialogues' contexts carry.
    origin : {"log", "pydial", "convlab"}
        Recorded on each :class:`FlowDialogue`.

    The user's act items come from a turn's ``user_action`` metadata (ConvLab acts), else its
    ``user_act``, else its ``user_acts`` metadata (PyDial's n-best list: the most probable);
    an act that does not parse counts as unknown (None).
    """
    out = []
    for dialogue in dialogues:
        if not isinstance(dialogue, Dialogue):
            raise InvalidContextError(f"expected Dialogue objects, got {type(dialogue).__name__}")
        turns = tuple(
            FlowTurn(
                turn_index=turn.turn_index,
                state=belief_slots(turn.belief, domain),
                user_items=_log_turn_user_items(turn, domain),
                system_items=_parsed(turn.system_act, domain),
                user_text=turn.user_text,
            )
            for turn in dialogue.turns
            if turn.turn_index >= 1
        )
        out.append(FlowDialogue(dialogue.dialogue_id, source_name, turns, origin))
    return out


def _convlab_state(state: Any, where: str) -> dict[Slot, str]:
    if state is None:
        return {}
    if not isinstance(state, Mapping):
        raise InvalidContextError(f"{where}: 'state' must be an object of domain -> slots")
    out: dict[Slot, str] = {}
    for domain, slots in state.items():
        if not isinstance(slots, Mapping):
            raise InvalidContextError(f"{where}: state[{domain!r}] must be an object of slot -> value")
        for slot, value in slots.items():
            if not isinstance(value, str):
                raise InvalidContextError(f"{where}: state[{domain!r}][{slot!r}] must be a string, got {value!r}")
            key = _qualified(str(domain), str(slot))
            if key is not None and value.strip().lower() not in _EMPTY_VALUES:
                out[key] = value.strip()
    return out


def _convlab_items(turn: Mapping[str, Any], where: str) -> tuple[ActItem, ...]:
    return _quad_items(_acts(turn, where))


def _convlab_flow_dialogue(raw: Any, position: int, source_name: str) -> FlowDialogue:
    dialogue_id, turns = _convlab_turns(raw, position)
    out: list[FlowTurn] = []
    user_items: list[ActItem] = []
    user_texts: list[str] = []
    state: dict[Slot, str] | None = None
    user_turns = 0

    def close(system_items: tuple[ActItem, ...] | None) -> None:
        out.append(FlowTurn(user_turns, state or {}, tuple(user_items), system_items,
                            " ".join(user_texts) if user_texts else None))

    for where, speaker, text, turn in turns:
        if speaker == "user":
            user_turns += 1
            user_items.extend(_convlab_items(turn, where))
            if text is not None:
                user_texts.append(text)
            state = _convlab_state(turn.get("state"), where)
        else:
            if state is not None:  # a system opening before any user turn is no turn pair
                close(_convlab_items(turn, where))
            user_items, user_texts, state = [], [], None
    if state is not None:  # the user spoke last: a turn pair without the system's answer
        close(None)
    return FlowDialogue(dialogue_id, source_name, tuple(out), "convlab")


def read_flow_dialogues(
    path: str | os.PathLike[str],
    *,
    kind: str = "log",
    split: str | None = None,
    source_name: str | None = None,
    max_dialogues: int | None = None,
) -> list[FlowDialogue]:
    """Read the dialogues of one file as flow dialogues (see the module docstring).

    Parameters
    ----------
    path : path-like
    kind : {"log", "pydial", "convlab"}
        A simscore dialogue log, a PyDial belief log or a ConvLab-3 ``dialogues.json``.
    split : str, optional
        ConvLab only: keep the dialogues whose ``data_split`` is this (``train``, ``test``).
    source_name : str, optional
        Default as when contexts are collected from the file (a log's ``source.name``, a
        ConvLab file's ``dataset``, else the file's stem), so labels find their contexts.
    max_dialogues : int, optional
        Read only the first N dialogues (after the split filter).

    Raises
    ------
    FileFormatError
        Naming the file and the line, or the dialogue and utterance, at fault.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    if split is not None and kind != "convlab":
        raise ValueError("split applies to ConvLab-3 files only (kind='convlab')")
    if max_dialogues is not None:
        max_dialogues = check_int("max_dialogues", max_dialogues, minimum=1, error=ValueError)
    p = Path(path)
    if kind == "convlab":
        data = _load_convlab_json(p)
        if source_name is None:
            dataset = data[0].get("dataset") if data and isinstance(data[0], Mapping) else None
            source_name = dataset if isinstance(dataset, str) and dataset else p.stem
        out: list[FlowDialogue] = []
        for position, raw in enumerate(data):
            if split is not None and isinstance(raw, Mapping) and raw.get("data_split") != split:
                continue
            if max_dialogues is not None and len(out) >= max_dialogues:
                break
            try:
                out.append(_convlab_flow_dialogue(raw, position, source_name))
            except InvalidContextError as exc:
                raise FileFormatError(p, str(exc)) from None
        return out
    if kind == "log":
        header, dialogues = read_dialogue_log(p)
        domain = header["domain"]
        name = source_name or _source_name(header, p, 0)
    else:
        from contexts.domain import default_domain

        header, dialogues = read_pydial_beliefs(p)
        named = header["source"].get("name")
        name = source_name or (named if isinstance(named, str) and named else p.stem)
        domain = default_domain().name
    if max_dialogues is not None:
        dialogues = dialogues[:max_dialogues]
    return flow_dialogues(dialogues, domain=domain, source_name=name, origin=kind)
