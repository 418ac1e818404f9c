"""The ConvLab bridge: the dialogue states ConvLab policies read, their act formats, determinism.

ConvLab policies take a dialogue-state dict and return ``[[intent, domain, slot, value], ...]``.
Two state layouts are in use (facts from ConvLab's ``util/multiwoz/state.py``):

* ``"convlab3"`` — ConvLab-3's ``default_state()``: keys ``user_action, system_action,
  belief_state, booked, request_state, terminated, history``; ``belief_state`` is flat,
  ``{domain: {slot: value}}``, with the unified slot names (``"price range"``, ``"book
  time"``, ...), for the domains attraction, hotel, restaurant, taxi, train and hospital;
  ``booked`` is ``{domain: [entities]}``. ConvLab-3's acts are lower-case with the unified
  slot names: ``["inform", "restaurant", "price range", "cheap"]``.
* ``"convlab2"`` — ConvLab-2's ``default_state()`` (also ConvLab-3's ``default_state_old()``):
  keys ``user_action, system_action, belief_state, request_state, terminated, history``;
  ``belief_state[domain]`` is ``{"semi": {slot: value}, "book": {"booked": [], ...}}`` for the
  seven domains police, hotel, attraction, restaurant, hospital, taxi and train, with
  ConvLab-2's slot names (``"pricerange"``, ``"leaveAt"``). ConvLab-2's acts are capitalised
  with abbreviated slots: ``["Inform", "Restaurant", "Price", "cheap"]``, general acts
  ``["bye", "general", "none", "none"]``, requests valued ``"?"``. **ConvLab-3's own
  rule-based MultiWOZ policy still reads this layout** (``belief_state[domain]["semi"]``);
  given a ConvLab-3 state it fails with ``KeyError: 'semi'`` (or ``'book'`` when
  ``user_action`` is empty and it diffs the states instead).

Both start from the full default state (every domain, every slot ``""``), so a policy that
looks at another domain finds it empty rather than missing. :func:`to_convlab_state` fills in
one domain from a context, and :func:`convlab_acts` converts acts between the two formats.

ConvLab's rule-based policies draw from the global ``random`` module (and other ConvLab
policies from numpy's and torch's global generators), so they answer one state differently
from call to call. :func:`policies.seeding.reseeded` seeds those global generators for one call and restores
their states afterwards; :func:`policies.seeding.context_seed` derives the seed of one context
from a run seed.
:class:`policies.adapters.ConvLabPolicy` uses both.

Policies that cannot be installed next to simscore (the ``convlab`` package pins
``torch<=1.13``) run in their own environment, through files: :func:`write_convlab_states`
writes one state per context (``simscore contexts export --format convlab3|convlab2``), the
script ``examples/convlab_answer_states.py`` answers them in the ConvLab environment and writes
simscore's responses format, which :meth:`simscore.Responses.read_jsonl` (or
:class:`policies.adapters.LoggedPolicy`) reads back.

States file format (``simscore-convlab-states``, version 1): a header line
``{"format": "simscore-convlab-states", "version": 1, "state_format": "convlab2", "domain":
"restaurant", "contexts": {"name": ..., "content_hash": ...}, "count": N}``, then one line per
context ``{"context_id": ..., "state": {...}}``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from contexts.belief import BeliefState
from simscore.acts import convlab_order_problem
from simscore.checks import check_number
from simscore.errors import FileFormatError, InvalidContextError
from simscore.io import prepare_output, read_jsonl, write_jsonl

__all__ = [
    "STATE_FORMATS",
    "StateFormat",
    "check_state_format",
    "CONVLAB_DOMAINS",
    "SLOT_NAMES",
    "STATES_FORMAT",
    "STATES_VERSION",
    "to_convlab_state",
    "convlab_acts",
    "write_convlab_states",
    "read_convlab_states",
]

StateFormat = Literal["convlab3", "convlab2"]
#: The state layouts :func:`to_convlab_state` builds.
STATE_FORMATS: tuple[str, ...] = ("convlab3", "convlab2")

#: The ``format`` field of a states file header.
STATES_FORMAT = "simscore-convlab-states"
#: The current (and only) version of the states file format.
STATES_VERSION = 1

#: Per state format: simscore's slot name -> the name in ``belief_state`` and
#: ``request_state`` (other slots keep their names).
SLOT_NAMES: dict[str, dict[str, str]] = {
    "convlab3": {"pricerange": "price range", "addr": "address"},
    "convlab2": {"addr": "address"},
}

# ConvLab-3's default_state(), with the hotel's stray defaults ('4', 'yes', 'hotel') left
# empty as ConvLab-3's rule DST does (it starts from the ontology's all-empty state).
_CONVLAB3_BELIEF: dict[str, dict[str, str]] = {
    "attraction": dict.fromkeys(("type", "name", "area"), ""),
    "hotel": dict.fromkeys(
        ("name", "area", "parking", "price range", "stars", "internet", "type", "book stay", "book day", "book people"),
        "",
    ),
    "restaurant": dict.fromkeys(("food", "price range", "name", "area", "book time", "book day", "book people"), ""),
    "taxi": dict.fromkeys(("leave at", "destination", "departure", "arrive by"), ""),
    "train": dict.fromkeys(("leave at", "destination", "day", "arrive by", "departure", "book people"), ""),
    "hospital": dict.fromkeys(("department",), ""),
}
# ConvLab-2's default_state(): per domain the booking slots and the informable ("semi") slots.
_CONVLAB2_BELIEF: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "police": ((), ()),
    "hotel": (("people", "day", "stay"), ("name", "area", "parking", "pricerange", "stars", "internet", "type")),
    "attraction": ((), ("type", "name", "area")),
    "restaurant": (("people", "day", "time"), ("food", "pricerange", "name", "area")),
    "hospital": ((), ("department",)),
    "taxi": ((), ("leaveAt", "destination", "departure", "arriveBy")),
    "train": (("people",), ("leaveAt", "destination", "day", "arriveBy", "departure")),
}

#: The domains of both default states (MultiWOZ's seven; ConvLab-3's state has no slots for
#: ``police``, so there it is added when chosen). :func:`to_convlab_state` adds any other domain
#: it is given (a policy of another dataset); the command line accepts these only, so that a
#: misspelt domain is an error rather than an empty state.
CONVLAB_DOMAINS: tuple[str, ...] = tuple(sorted(_CONVLAB2_BELIEF))

# Act slot names: ConvLab-2 (lower-cased) -> unified; per domain first, then for every domain
# (the data's slot_name_map of ConvLab-3's MultiWOZ 2.1 preprocessing).
_TO_UNIFIED_SLOT = {
    "addr": "address", "post": "postcode", "pricerange": "price range", "arrive": "arrive by",
    "arriveby": "arrive by", "leave": "leave at", "leaveat": "leave at", "depart": "departure",
    "dest": "destination", "fee": "entrance fee", "open": "open hours", "car": "type", "car type": "type",
    "ticket": "price", "trainid": "train id", "id": "train id", "people": "book people", "stay": "book stay",
    "none": "",
}
_TO_UNIFIED_SLOT_IN = {
    "attraction": {"price": "entrance fee"},
    "hotel": {"day": "book day", "price": "price range"},
    "restaurant": {"day": "book day", "time": "book time", "price": "price range"},
    "train": {"time": "duration"},
}
# unified -> ConvLab-2 (reverse_da_slot_name_map); anything else is capitalised.
_TO_CONVLAB2_SLOT = {
    "address": "Addr", "postcode": "Post", "price range": "Price", "arrive by": "Arrive", "leave at": "Leave",
    "departure": "Depart", "destination": "Dest", "entrance fee": "Fee", "open hours": "Open", "price": "Ticket",
    "train id": "Id", "book people": "People", "book stay": "Stay", "book day": "Day", "book time": "Time",
    "duration": "Time",
}
_TO_CONVLAB2_SLOT_IN = {"taxi": {"type": "Car", "phone": "Phone"}}
_TO_CONVLAB2_INTENT = {"nooffer": "NoOffer", "nobook": "NoBook", "offerbook": "OfferBook", "offerbooked": "OfferBooked"}


def _label(context: Any) -> str:
    context_id = getattr(context, "id", None)
    return repr(context_id) if isinstance(context_id, str) else repr(context)


def check_state_format(state_format: Any) -> StateFormat:
    """``state_format`` if it is one of :data:`STATE_FORMATS`, else a ValueError naming them."""
    if state_format not in STATE_FORMATS:
        raise ValueError(f"state_format must be one of {', '.join(map(repr, STATE_FORMATS))}, got {state_format!r}")
    return state_format


def _check_slot_names(slot_names: Any) -> dict[str, str] | None:
    if slot_names is None:
        return None
    if not isinstance(slot_names, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in slot_names.items()
    ):
        raise TypeError(f"slot_names must map slot names to non-empty slot names (str -> str), got {slot_names!r}")
    return dict(slot_names)


def _history(history: Any, label: str) -> list[list[str]]:
    """``[[speaker, text], ...]``: the last text is the user's, speakers alternate backwards."""
    if isinstance(history, str) or not isinstance(history, Sequence):
        raise InvalidContextError(
            f"context {label}: metadata 'history' must be a sequence of strings, got {type(history).__name__}"
        )
    out: list[list[str]] = []
    last = len(history) - 1
    for position, text in enumerate(history):
        if not isinstance(text, str):
            raise InvalidContextError(
                f"context {label}: metadata 'history' item {position} is {type(text).__name__}, expected str"
            )
        out.append(["user" if (last - position) % 2 == 0 else "sys", text])
    return out


def _metadata_acts(value: Any, key: str, label: str) -> list[list[str]]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidContextError(
            f"context {label}: metadata {key!r} must be a list of [intent, domain, slot, value], "
            f"got {type(value).__name__}"
        )
    out = []
    for position, act in enumerate(value):
        if isinstance(act, str) or not isinstance(act, Sequence) or len(act) != 4 or not all(
            isinstance(part, str) for part in act
        ):
            raise InvalidContextError(
                f"context {label}: metadata {key!r} item {position} must be a list of 4 strings "
                f"[intent, domain, slot, value], got {act!r}"
            )
        problem = convlab_order_problem(act)
        if problem is not None:
            raise InvalidContextError(f"context {label}: metadata {key!r} item {position}: {problem}")
        out.append(list(act))
    return out


def _unified(act: Sequence[str]) -> list[str]:
    intent, domain, slot, value = (part.strip() for part in act)
    domain = domain.lower()
    slot = slot.lower()
    slot = _TO_UNIFIED_SLOT_IN.get(domain, {}).get(slot, _TO_UNIFIED_SLOT.get(slot, slot))
    if value in ("?", "none", "not mentioned"):
        value = ""
    return [intent.lower(), domain, slot, value]


def _convlab2(act: Sequence[str]) -> list[str]:
    intent, domain, slot, value = _unified(act)
    if domain == "general":
        return [intent, domain, slot or "none", value or "none"]
    name = _TO_CONVLAB2_SLOT_IN.get(domain, {}).get(slot) or _TO_CONVLAB2_SLOT.get(slot) or slot.capitalize()
    return [
        _TO_CONVLAB2_INTENT.get(intent, intent.capitalize()),
        domain.capitalize(),
        name or "none",
        value or ("?" if intent == "request" else "none"),
    ]


def convlab_acts(acts: Iterable[Sequence[str]], state_format: StateFormat) -> list[list[str]]:
    """ConvLab acts ``[intent, domain, slot, value]`` in either format, in ``state_format``'s.

    Acts are first normalised to the unified (ConvLab-3) format — lower-case intent, domain
    and slot, ConvLab-2's abbreviated slots mapped through the data's slot-name map
    (``Price`` -> ``price range`` in the restaurant and hotel domains, ``Addr`` -> ``address``,
    ``People`` -> ``book people``, ...), the values ``"?"``, ``"none"`` and ``"not
    mentioned"`` -> ``""`` — and then, for ``"convlab2"``, written as ConvLab-2 writes them:
    capitalised intent (``NoOffer``, ``NoBook``, ``OfferBook``, ``OfferBooked``) and domain,
    abbreviated capitalised slot, ``"?"`` for the empty value of a request and ``"none"`` for
    other empty values and slots; ``general`` acts stay lower-case. ConvLab-2's ``Booking``
    pseudo-domain is not recreated (the unified format moved booking acts to their domains).

    Examples
    --------
    >>> convlab_acts([["inform", "restaurant", "price range", "cheap"], ["request", "restaurant", "address", ""],
    ...               ["thank", "general", "none", ""]], "convlab2")
    [['Inform', 'Restaurant', 'Price', 'cheap'], ['Request', 'Restaurant', 'Addr', '?'], ['thank', 'general', 'none', 'none']]
    >>> convlab_acts([["Inform", "Restaurant", "Price", "cheap"], ["bye", "general", "none", "none"]], "convlab3")
    [['inform', 'restaurant', 'price range', 'cheap'], ['bye', 'general', '', '']]
    """
    check_state_format(state_format)
    convert = _convlab2 if state_format == "convlab2" else _unified
    return [convert(act) for act in acts]


def _convlab3_state() -> dict[str, Any]:
    return {
        "user_action": [],
        "system_action": [],
        "belief_state": copy.deepcopy(_CONVLAB3_BELIEF),
        "booked": {},
        "request_state": {},
        "terminated": False,
        "history": [],
    }


def _convlab2_state() -> dict[str, Any]:
    belief = {
        domain: {"book": {"booked": [], **dict.fromkeys(book, "")}, "semi": dict.fromkeys(semi, "")}
        for domain, (book, semi) in _CONVLAB2_BELIEF.items()
    }
    return {
        "user_action": [],
        "system_action": [],
        "belief_state": belief,
        "request_state": {},
        "terminated": False,
        "history": [],
    }


def to_convlab_state(
    context_or_belief: Any,
    *,
    state_format: StateFormat = "convlab3",
    domain: str = "restaurant",
    slot_names: Mapping[str, str] | None = None,
    min_probability: float = 0.0,
) -> dict[str, Any]:
    """The ConvLab dialogue state of a context (or of a bare belief state).

    The state starts from the format's full default state (see the module docstring: every
    domain, every slot ``""``) and is filled in from the context:

    * ``belief_state`` — in ``domain`` (``belief_state[domain]`` for ``"convlab3"``,
      ``belief_state[domain]["semi"]`` for ``"convlab2"``), for every informable slot of the
      belief: its most probable value other than ``"none"``
      (:meth:`BeliefState.top <contexts.belief.BeliefState.top>`; ``"dontcare"`` is kept)
      if its probability exceeds ``min_probability``, otherwise ``""``. Slots are named as
      the format names them (:data:`SLOT_NAMES`: ``pricerange`` is ``"price range"`` in
      ConvLab-3); booking slots stay ``""`` (a belief has none);
    * ``request_state`` — ``{domain: {slot: 0}}`` for the requested slots with probability
      above 0.5 (``addr`` is ``"address"``), or ``{}`` if there are none;
    * ``user_action`` and ``system_action`` — the context's ``metadata["user_action"]`` and
      ``metadata["system_action"]`` (ConvLab acts ``[[intent, domain, slot, value], ...]`` in
      either format, as :func:`contexts.collect.import_convlab` stores them) converted to the
      format's acts by :func:`convlab_acts`, else ``[]``. A belief state does not record the
      user's last act, so contexts from elsewhere (C_gen, simulator logs) give ``[]``; policies
      that need it (ConvLab's rule policy infers it by diffing states when it is empty) are
      best run on contexts imported from ConvLab data;
    * ``history`` — the context's ``metadata["history"]`` texts as ``[[speaker, text], ...]``
      with speakers ``"user"`` / ``"sys"`` alternating and the last text the user's (the
      system decides after the user spoke); ``[]`` for a bare belief or no history;
    * ``terminated`` ``False``; ``booked`` (ConvLab-3 only) ``{}``.

    Keys are in the order of the format's ``default_state()``. Every call builds new dicts
    and lists, so a policy may change the state it is given (ConvLab's rule policy writes
    ``system_action`` into it).

    Parameters
    ----------
    context_or_belief : Context, BeliefState, or object with ``belief`` (and ``metadata``)
    state_format : {"convlab3", "convlab2"}, default "convlab3"
        The layout (module docstring). ConvLab-3's rule-based MultiWOZ policy needs
        ``"convlab2"``.
    domain : str, default "restaurant"
        The ConvLab domain the belief's slots belong to (added if it is not a MultiWOZ one).
    slot_names : mapping, optional
        Our slot name -> the policy's slot name, for ``belief_state`` and ``request_state``;
        added to (and overriding) the format's :data:`SLOT_NAMES`.
    min_probability : float in [0, 1), default 0.0
        A top value is written only if its probability is above this; the default writes
        any value with non-zero probability, ``0.5`` only values more likely than not.

    Raises
    ------
    InvalidContextError
        For an object without a :class:`~contexts.belief.BeliefState`, or malformed
        ``history`` / ``user_action`` / ``system_action`` metadata, including acts in the
        wrong order (naming the context id).
    ValueError
        For an unknown ``state_format``.

    Examples
    --------
    >>> belief = BeliefState(slots={"area": {"north": 0.7}, "pricerange": {"dontcare": 1.0}},
    ...                      requested={"phone": 0.9, "addr": 0.2})
    >>> state = to_convlab_state(belief)
    >>> state["belief_state"]["restaurant"], state["request_state"]
    ({'food': '', 'price range': 'dontcare', 'name': '', 'area': 'north', 'book time': '', 'book day': '',
      'book people': ''}, {'restaurant': {'phone': 0}})
    >>> old = to_convlab_state(belief, state_format="convlab2")
    >>> old["belief_state"]["restaurant"]
    {'book': {'booked': [], 'people': '', 'day': '', 'time': ''}, 'semi': {'food': '', 'pricerange': 'dontcare',
     'name': '', 'area': 'north'}}
    >>> from types import SimpleNamespace
    >>> context = SimpleNamespace(id="c1", belief=belief, metadata={
    ...     "history": ["Hello.", "Somewhere north, please."],
    ...     "user_action": [["inform", "restaurant", "area", "north"]]})
    >>> to_convlab_state(context, state_format="convlab2")["user_action"]
    [['Inform', 'Restaurant', 'Area', 'north']]
    >>> to_convlab_state(context, min_probability=0.8)["belief_state"]["restaurant"]["area"]
    ''
    >>> to_convlab_state(context)["history"]
    [['sys', 'Hello.'], ['user', 'Somewhere north, please.']]
    """
    check_state_format(state_format)
    if not isinstance(domain, str) or not domain:
        raise TypeError(f"domain must be a non-empty string, got {domain!r}")
    names = {**SLOT_NAMES[state_format], **(_check_slot_names(slot_names) or {})}
    threshold = check_number("min_probability", min_probability, minimum=0.0)
    if threshold >= 1.0:  # no probability exceeds 1: every slot would be empty
        raise ValueError(f"min_probability must be in [0, 1), got {min_probability!r}")
    metadata: Any
    if isinstance(context_or_belief, BeliefState):
        belief, metadata, label = context_or_belief, {}, "<belief>"
    else:
        found = getattr(context_or_belief, "belief", None)
        label = _label(context_or_belief)
        if not isinstance(found, BeliefState):
            raise InvalidContextError(
                f"expected a BeliefState or a context with a BeliefState 'belief', got "
                f"{type(context_or_belief).__name__} (belief: {type(found).__name__})"
            )
        belief = found
        metadata = getattr(context_or_belief, "metadata", None)
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, Mapping):
            raise InvalidContextError(f"context {label}: metadata must be a mapping, got {type(metadata).__name__}")
    if state_format == "convlab2":
        state = _convlab2_state()
        slots = state["belief_state"].setdefault(domain, {"book": {"booked": []}, "semi": {}})["semi"]
    else:
        state = _convlab3_state()
        slots = state["belief_state"].setdefault(domain, {})
    for slot in belief.slots:
        value, p = belief.top(slot)
        slots[names.get(slot, slot)] = value if value != "none" and p > threshold else ""
    requested = {names.get(slot, slot): 0 for slot, p in belief.requested.items() if p > 0.5}
    if requested:
        state["request_state"] = {domain: requested}
    for key in ("user_action", "system_action"):
        acts = metadata.get(key)
        if acts is not None:
            state[key] = convlab_acts(_metadata_acts(acts, key, label), state_format)
    state["history"] = _history(metadata.get("history", ()), label)
    return state


def write_convlab_states(
    contexts: Iterable[Any],
    path: str | os.PathLike[str],
    *,
    state_format: StateFormat = "convlab3",
    domain: str = "restaurant",
    slot_names: Mapping[str, str] | None = None,
    min_probability: float = 0.0,
    overwrite: bool = False,
) -> int:
    """Write one ConvLab state per context to a states file (module docstring), atomically.

    The ConvLab side of the two-environment workflow reads it (see
    ``examples/convlab_answer_states.py``). Options as in :func:`to_convlab_state`; an existing
    file is replaced only with ``overwrite=True``.

    Returns
    -------
    int
        The number of states written.

    Raises
    ------
    InvalidContextError
        For a context without a string id or with bad metadata (nothing is written then).
    simscore.errors.OutputExistsError
        ``path`` exists and ``overwrite`` is false (checked before any work).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from contexts import generate_grid
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "states.jsonl"
    >>> write_convlab_states(generate_grid(), path, state_format="convlab2")
    1296
    >>> header, states = read_convlab_states(path)
    >>> header["state_format"], states[0][0], states[0][1]["belief_state"]["restaurant"]["semi"]["area"]
    ('convlab2', 'gen/area=0.0/pricerange=0.0/food=0.0/method=none', '')
    """
    check_state_format(state_format)
    prepare_output(path, overwrite=overwrite)
    items = list(contexts)
    states = []
    for context in items:
        context_id = getattr(context, "id", None)
        if not isinstance(context_id, str) or not context_id:
            raise InvalidContextError(f"a context needs a non-empty string 'id', got {context!r}")
        state = to_convlab_state(
            context, state_format=state_format, domain=domain, slot_names=slot_names, min_probability=min_probability
        )
        states.append({"context_id": context_id, "state": state})
    header = {
        "format": STATES_FORMAT,
        "version": STATES_VERSION,
        "state_format": state_format,
        "domain": domain,
        "contexts": {
            "name": getattr(contexts, "name", None),
            "content_hash": getattr(contexts, "content_hash", None),
        },
        "count": len(states),
    }
    write_jsonl(path, header, states)
    return len(states)


def read_convlab_states(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """Read a states file: its header and ``(context_id, state)`` pairs in file order.

    Raises
    ------
    FileFormatError
        Naming the file and line: a bad header, a line without a string ``context_id`` or
        an object ``state``, a repeated id, or a ``count`` that does not match.
    """
    header, records = read_jsonl(path, format_name=STATES_FORMAT, versions=(STATES_VERSION,))
    if header.get("state_format") not in STATE_FORMATS:
        raise FileFormatError(path, f"header field 'state_format' is {header.get('state_format')!r}", line=1)
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for number, record in records:
        context_id, state = record.get("context_id"), record.get("state")
        if not isinstance(context_id, str) or not context_id:
            raise FileFormatError(path, "missing or empty 'context_id'", line=number)
        if not isinstance(state, dict):
            raise FileFormatError(path, "'state' must be an object", line=number)
        if context_id in seen:
            raise FileFormatError(path, f"context id {context_id!r} appears more than once", line=number)
        seen.add(context_id)
        out.append((context_id, state))
    count = header.get("count")
    if count is not None and count != len(out):
        raise FileFormatError(path, f"the header says {count} states, the file has {len(out)} (truncated?)")
    return header, out
