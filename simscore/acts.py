"""Canonical semantic system actions (dialogue acts) and their parser.

An :class:`Act` is a dialogue-act identity (one intent, or the sorted distinct intents of a
multi-intent ConvLab turn) plus items ``(slot, op, value)`` kept in canonical order, so two
actions that differ only in item order are equal. :meth:`Act.parse` reads PyDial strings
(everything PyDial's own act parser reads meaningfully, see there; ``strict=True`` keeps the
strict grammar ``str(act)`` writes), ``str(act)`` writes them back, and
:meth:`Act.from_convlab` reads ConvLab-style lists of ``[intent, domain, slot, value]`` and
refuses acts in ConvLab-2's internal ``(domain, intent, slot, value)`` order.
:meth:`Act.from_tool_calls` reads the tool calls of language-model agents (the tool's name is
the intent, its arguments the items; :mod:`simscore.tool_arguments`), and a turn of several
calls is an :class:`ActSequence`, written as its acts joined by ``;``. Definitions follow the
metrics reference of the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from simscore.errors import ActParseError, ToolCallError, excerpt
from simscore.tool_arguments import MAX_CALLS, ListMode, read_tool_call, tool_call_list

__all__ = ["Act", "ActSequence", "Item", "NONE_VALUE", "CONVLAB_DOMAINS", "KNOWN_INTENTS", "convlab_order_problem"]

#: Characters an intent may contain (PyDial and ConvLab intents are identifiers; a tool's name may
#: hold dots, as a namespaced tool's ``server.tool``: none of them ends an intent in the act syntax).
_INTENT_RE = re.compile(r"[A-Za-z0-9_.\-]+\Z")
#: Characters that would make a slot ambiguous in the string form.
_SLOT_FORBIDDEN = set('=!,()"\'\\+')
#: A value written without quotes must match this; anything else is quoted.
_BARE_VALUE_RE = re.compile(r"[A-Za-z0-9_\-.:/&]+\Z")

#: Domain names of ConvLab's MultiWOZ data (ConvLab-2 and the unified format), lower-cased:
#: one of them in the intent position of a ConvLab act means the act is in the wrong order.
CONVLAB_DOMAINS = frozenset(
    ("attraction", "booking", "general", "hospital", "hotel", "police", "restaurant", "taxi", "train")
)
#: Intents of ConvLab's MultiWOZ acts (system and user) and of PyDial, lower-cased: one of
#: them in the domain position of a ConvLab act means the act is in the wrong order.
KNOWN_INTENTS = frozenset(
    (
        "inform", "request", "recommend", "nooffer", "select", "book", "nobook", "offerbook",
        "offerbooked", "reqmore", "bye", "greet", "thank", "welcome",
        "hello", "confirm", "confreq", "affirm", "negate", "deny", "reqalts", "repeat", "ack",
        "thankyou", "null", "canthelp", "silence", "restart",
    )
)


class _NoneToken:
    """The value of a bare slot (``request(food)``): distinct from the string ``"none"``."""

    _instance: _NoneToken | None = None

    def __new__(cls) -> _NoneToken:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NONE_VALUE"

    def __reduce__(self) -> str:
        return "NONE_VALUE"


#: Token standing for the absent value of a bare slot in concept sequences and sets.
NONE_VALUE = _NoneToken()


@dataclass(frozen=True, order=False, slots=True)
class Item:
    """One item of an action: ``slot=value``, ``slot!=value`` or a bare ``slot``.

    Attributes
    ----------
    slot : str
        Slot name, e.g. ``"food"`` or, for ConvLab acts, ``"restaurant-food"``.
    op : str
        ``"="`` or ``"!="`` (``"="`` for a bare slot).
    value : str or None
        The value; None for a bare slot.
    """

    slot: str
    op: str = "="
    value: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.slot, str) or not self.slot.strip():
            raise ActParseError(self.slot, None, "slot must be a non-empty string")
        if self.slot != self.slot.strip() or _SLOT_FORBIDDEN.intersection(self.slot):
            raise ActParseError(
                self.slot, None, "slot has surrounding spaces or one of = ! , ( ) \" ' \\ +"
            )
        if self.op not in ("=", "!="):
            raise ActParseError(self.op, None, "op must be '=' or '!='")
        if self.value is None and self.op != "=":
            raise ActParseError(self.slot, None, "a bare slot cannot use '!='")
        if self.value is not None and not isinstance(self.value, str):
            raise ActParseError(self.value, None, "value must be a string or None")

    def sort_key(self) -> tuple[str, str, int, str]:
        """Canonical order: slot, then operator, then value (a bare slot first)."""
        return (self.slot, self.op, 0 if self.value is None else 1, self.value or "")

    def __str__(self) -> str:
        if self.value is None:
            return self.slot
        return f"{self.slot}{self.op}{_quote(self.value)}"


def _quote(value: str) -> str:
    if _BARE_VALUE_RE.match(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


class Act:
    """A canonical semantic action.

    Parameters
    ----------
    intents : str or sequence of str
        The intent, or several (a multi-intent turn); stored sorted and de-duplicated.
    items : iterable of Item or tuple
        Items as :class:`Item` or ``(slot,)``, ``(slot, value)``, ``(slot, op, value)``;
        stored in canonical order with duplicates removed.

    Examples
    --------
    >>> a = Act.parse('inform(name="la mimosa",area=centre)')
    >>> a.intents, [str(i) for i in a.items]
    (('inform',), ['area=centre', 'name="la mimosa"'])
    >>> str(a)
    'inform(area=centre,name="la mimosa")'
    >>> Act.parse(str(a)) == a
    True
    >>> Act("request", [("food",)]) == Act.parse("request(food)")
    True
    """

    __slots__ = ("_intents", "_items", "_hash", "_tokens", "_concepts")

    def __init__(self, intents: str | Sequence[str], items: Iterable[Item | tuple[Any, ...]] = ()):
        names = (intents,) if isinstance(intents, str) else tuple(intents)
        if not names:
            raise ActParseError(intents, None, "an act needs at least one intent")
        for name in names:
            if not isinstance(name, str) or not _INTENT_RE.match(name):
                raise ActParseError(name, None, "intent must be a non-empty identifier [A-Za-z0-9_.-]")
        built = {self._as_item(item) for item in items}
        self._intents: tuple[str, ...] = tuple(sorted(set(names)))
        self._items: tuple[Item, ...] = tuple(sorted(built, key=Item.sort_key))
        self._hash = hash((self._intents, self._items))
        self._tokens: tuple[object, ...] | None = None
        self._concepts: frozenset[object] | None = None

    @staticmethod
    def _as_item(item: Item | tuple[Any, ...]) -> Item:
        if isinstance(item, Item):
            return item
        if isinstance(item, tuple):
            if len(item) == 1:
                return Item(item[0])
            if len(item) == 2:
                return Item(item[0], "=", item[1])
            if len(item) == 3:
                return Item(item[0], item[1], item[2])
        raise ActParseError(item, None, "an item must be an Item or a tuple of 1-3 elements")

    @property
    def intents(self) -> tuple[str, ...]:
        """The dialogue-act identity: sorted distinct intents."""
        return self._intents

    @property
    def intent(self) -> str:
        """The intents joined by ``+`` (a single intent for PyDial acts)."""
        return "+".join(self._intents)

    @property
    def items(self) -> tuple[Item, ...]:
        """Items in canonical order (slot, op, value; bare slot first)."""
        return self._items

    def concept_tokens(self) -> tuple[object, ...]:
        """Slot then value per item, in canonical order (:data:`NONE_VALUE` for a bare slot).

        >>> Act.parse('inform(food="thai",area="centre")').concept_tokens()
        ('area', 'centre', 'food', 'thai')
        """
        if self._tokens is None:
            out: list[object] = []
            for item in self._items:
                out.append(item.slot)
                out.append(NONE_VALUE if item.value is None else item.value)
            self._tokens = tuple(out)
        return self._tokens

    def concept_set(self) -> frozenset[object]:
        """The set of slots united with the set of ``(slot, op, value)`` triples.

        >>> sorted(map(str, Act.parse("request(pricerange)").concept_set()))
        ["('pricerange', '=', NONE_VALUE)", 'pricerange']
        """
        if self._concepts is None:
            out: set[object] = set()
            for item in self._items:
                out.add(item.slot)
                out.add((item.slot, item.op, NONE_VALUE if item.value is None else item.value))
            self._concepts = frozenset(out)
        return self._concepts

    @property
    def calls(self) -> tuple[Act, ...]:
        """The acts of this turn in order: ``(self,)`` for one act (:class:`ActSequence` has several)."""
        return (self,)

    @property
    def messages(self) -> tuple[tuple[Act, ...], ...]:
        """The acts message by message: ``((self,),)`` for one act (an :class:`ActSequence` may hold several)."""
        return ((self,),)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Act:
            return NotImplemented if not isinstance(other, Act) else False
        return self._intents == other._intents and self._items == other._items

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"{self.intent}({','.join(map(str, self._items))})"

    def __repr__(self) -> str:
        return f"Act.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: object, *, strict: bool = False) -> Act:
        r"""Parse a PyDial action string ``intent(item,item,...)``.

        Items are ``slot``, ``slot=value`` and ``slot!=value``; intents of multi-intent turns
        are joined by ``+``; spaces around tokens are ignored. Values are normalised by
        stripping their quotes and surrounding spaces, nothing else.

        By default the parser accepts every form PyDial's own act parser
        (``utils/dact.py``) reads meaningfully:

        * bare values with spaces, apostrophes and other punctuation, as PyDial's regex SemI
          writes them: ``inform(name=christ's college)``;
        * double- or single-quoted values; a single quote closes a value only where a
          ``,`` or ``)`` follows it, so ``'christ's'`` is ``christ's``;
        * parentheses and ``=`` inside values, quoted or bare: ``inform(name=a (b))``,
          ``inform(food=a=b)``;
        * an empty value: ``inform(food=)`` and ``inform(food="")`` are the value ``""``;
        * ``!=`` with a bare value (``inform(food!=thai)``), which PyDial itself misreads as
          the slot ``food!``.

        Differences from PyDial, on purpose:

        * values keep their case (PyDial lower-cases a value unless it starts with
          punctuation); values compare as strings after the normalisation above;
        * a quoted value keeps its inner spaces, and a bare value its apostrophes (PyDial
          strips ``'`` and spaces at both ends of every value);
        * inside quotes a backslash escapes the next character (PyDial has no escapes;
          ``str(act)`` escapes ``"`` and ``\`` so that every act round-trips);
        * a comma ends a bare value only outside parentheses;
        * strings PyDial silently turns into junk are errors: no parentheses (PyDial: the act
          ``null``), text after the closing parenthesis (including PyDial's ``|`` between
          alternative acts: parse each act on its own), unbalanced quotes or parentheses,
          empty items, and PyDial's unnamed slot (``inform(=dontcare)``).

        ``strict=True`` keeps the strict grammar that ``str(act)`` writes (for round-trip
        checks): a bare value is one run of characters other than ``"'\=!,()`` (spaces
        inside allowed), every other value quoted with ``"`` or ``'``, no empty bare value.
        Every string the strict grammar accepts parses to the same act in both modes.

        Raises
        ------
        ActParseError
            For anything else, naming the text and the 0-based position of the problem.

        Examples
        --------
        >>> Act.parse("inform(name=christ's college)")
        Act.parse('inform(name="christ\'s college")')
        >>> Act.parse("inform(name='christ's',area=centre)").items[1].value
        "christ's"
        >>> Act.parse('inform(name=none,name!="bangkok city",food=thai)')
        Act.parse('inform(food=thai,name!="bangkok city",name=none)')
        >>> Act.parse("inform(food!=thai)")
        Act.parse('inform(food!=thai)')
        >>> Act.parse("inform(name=a (b),food=a=b)")
        Act.parse('inform(food="a=b",name="a (b)")')
        >>> Act.parse(' inform ( food = thai ) ') == Act.parse("inform(food=thai)")
        True
        >>> Act.parse('request(name="la mimosa",phone)')
        Act.parse('request(name="la mimosa",phone)')
        >>> Act.parse("inform(name=The Place)").items[0].value  # no lower-casing
        'The Place'
        >>> Act.parse("inform(food=)").items[0].value
        ''
        >>> Act.parse("inform(name=christ's college)", strict=True)
        Traceback (most recent call last):
        ...
        simscore.errors.ActParseError: cannot parse act ...: unexpected "'" in an unquoted value ... at position 18
        >>> Act.parse("inform(food=thai)|inform(food=thai,area=north)")
        Traceback (most recent call last):
        ...
        simscore.errors.ActParseError: cannot parse act ...: unexpected text after ')': ...
        (PyDial joins alternative acts with '|': parse each act on its own) at position 17
        """
        if not isinstance(text, str):
            raise ActParseError(text, None, f"expected a string, got {type(text).__name__}")
        return _Parser(text, strict=bool(strict)).parse_turn()

    @classmethod
    def from_tool_calls(cls, calls: object, *, lists: ListMode = "ordered", max_calls: int = MAX_CALLS) -> Act:
        """Build an act from a language-model agent's tool calls: the tool's name is the intent.

        Reads one call or a list of calls in the shapes agents log (:mod:`simscore.tool_arguments`):
        OpenAI chat completions' ``tool_calls`` (``{"type": "function", "function": {"name",
        "arguments"}}``, arguments a JSON string), the Responses API's ``{"type":
        "function_call", "name", "arguments", "call_id"}`` items and plain ``{"name",
        "arguments"}`` objects (arguments a JSON string or an object, as τ²-bench logs them).
        The arguments become the items, one-to-one: nested objects as dotted paths, list
        positions as ``[i]`` (argument names percent-encoded where they hold ``% . [ ]``), values
        as canonical JSON text; lists in order (``lists="ordered"``, one slot per position) or as
        a set of values of one slot ``name[]`` (``lists="set"``). At most ``max_calls`` calls (a turn's
        :data:`~simscore.tool_arguments.MAX_CALLS` by default).

        Returns
        -------
        Act
            One call gives an :class:`Act`; several give an :class:`ActSequence` of them, in
            the order called (the action measures compare them as a sequence, unordered, as a
            subset or as a superset: their ``calls`` option).

        Raises
        ------
        ToolCallError
            An empty list, a call without a name, arguments that are not a JSON object or
            beyond the bounds of :mod:`simscore.tool_arguments`; the message names the tool.

        Examples
        --------
        >>> call = {"id": "c1", "type": "function",
        ...         "function": {"name": "find_flight", "arguments": '{"origin": "SFO", "when": {"day": 3}}'}}
        >>> Act.from_tool_calls([call])
        Act.parse('find_flight(origin=SFO,when.day=3)')
        >>> Act.from_tool_calls([{"type": "function_call", "name": "book", "arguments": '{"seats": ["1A", "1B"]}',
        ...                       "call_id": "c2"}, {"name": "pay", "arguments": {}}])
        Act.parse('book(seats[0]=1A,seats[1]=1B);pay()')
        >>> Act.from_tool_calls({"name": "book", "arguments": '{"seats": ["1B", "1A"]}'}, lists="set")
        Act.parse('book(seats[]=1A,seats[]=1B)')
        >>> Act.from_tool_calls({"name": "book", "arguments": "[1, 2]"})
        Traceback (most recent call last):
        ...
        simscore.errors.ToolCallError: cannot read tool call {'name': 'book', 'arguments': '[1, 2]'}:
        the arguments of 'book' must be a JSON object, got an array
        """
        acts = []
        for call in tool_call_list(calls, max_calls=max_calls):
            name, items = read_tool_call(call, lists=lists)
            try:
                acts.append(cls(name, [Item(slot, "=", value) for slot, value in items]))
            except ActParseError as exc:  # a value the act cannot hold; read_tool_call checked the rest
                raise ToolCallError(call, exc.reason) from None
        return acts[0] if len(acts) == 1 else ActSequence(acts)

    @classmethod
    def from_convlab(cls, acts: object, *, qualify_slots: bool = True) -> Act:
        """Build an act from a ConvLab turn: a list of ``[intent, domain, slot, value]``.

        Intents and slots are lower-cased; a slot of ``none``/empty adds no item; a value of
        ``""``, ``"?"`` marks a bare (requested) slot. The act's intents are the distinct
        intents; its items the union of all items.

        Slots keep their domain by default (``restaurant-food``), unless the domain is empty,
        ``none`` or ``general``, so that a multi-domain turn keeps ``hotel-area`` and
        ``restaurant-area`` apart. Such a slot never equals the unqualified slot of a
        single-domain act (PyDial's ``food``, simscore's simulated world): TMR, CER and CMR
        then see different concepts. To compare ConvLab acts with single-domain ones, pass
        ``qualify_slots=False`` (``inform(food=thai)``); two domains' slots of one name then
        become one.

        An act whose order is ambiguous is an error, not a silent misreading: a domain name
        (:data:`CONVLAB_DOMAINS`) in the intent position, an intent name
        (:data:`KNOWN_INTENTS`) in the domain position (ConvLab-2 uses the order
        ``(domain, intent, slot, value)`` internally and in its vectorisers), or a
        ``Domain-Intent`` key such as ``Restaurant-Inform`` as the intent.

        Raises
        ------
        ActParseError
            Naming the turn, the act's position in it and, for an ambiguous act, the order
            expected.

        Examples
        --------
        >>> str(Act.from_convlab([["Inform", "Restaurant", "Food", "thai"],
        ...                        ["Request", "Restaurant", "Area", "?"]]))
        'inform+request(restaurant-area,restaurant-food=thai)'
        >>> convlab = [["Inform", "Restaurant", "Food", "thai"]]
        >>> Act.from_convlab(convlab) == Act.parse("inform(food=thai)")
        False
        >>> Act.from_convlab(convlab, qualify_slots=False) == Act.parse("inform(food=thai)")
        True
        >>> Act.from_convlab([["Restaurant", "Inform", "Food", "thai"]])
        Traceback (most recent call last):
        ...
        simscore.errors.ActParseError: cannot parse act ...: act ['Restaurant', 'Inform', 'Food', 'thai'] is in
        (domain, intent, slot, value) order; expected [intent, domain, slot, value],
        e.g. ['Inform', 'Restaurant', 'Food', 'thai'] at position 0
        """
        if not isinstance(acts, (list, tuple)) or not acts:
            raise ActParseError(acts, None, "a ConvLab turn is a non-empty list of [intent, domain, slot, value]")
        intents: list[str] = []
        items: list[Item] = []
        for position, quad in enumerate(acts):
            if (
                not isinstance(quad, (list, tuple))
                or len(quad) != 4
                or not all(isinstance(part, str) for part in quad)
            ):
                raise ActParseError(acts, position, "each act must be a list of 4 strings [intent, domain, slot, value]")
            intent, domain, slot, value = (part.strip() for part in quad)
            problem = convlab_order_problem(quad)
            if problem is not None:
                raise ActParseError(acts, position, problem)
            intents.append(intent.lower())
            slot = slot.lower()
            if slot in ("", "none"):
                continue
            domain = domain.lower()
            qualified = slot if not qualify_slots or domain in ("", "none", "general") else f"{domain}-{slot}"
            items.append(Item(qualified, "=", None if value in ("", "?") else value))
        try:
            return cls(intents, items)
        except ActParseError as exc:
            raise ActParseError(acts, None, exc.reason) from None


class ActSequence(Act):
    """Several acts in order: the tool calls of one reply of a language-model agent, or of a whole
    trajectory, its messages of calls.

    Written as its acts joined by ``;`` (``find_flight(origin=SFO);pay()``), and where it holds
    several messages, the messages joined by ``;;`` (``find(origin=SFO);;pay();notify()``: a
    message of one call, then one of two), which :meth:`Act.parse` reads back. Equal to another
    sequence of the same acts in the same order and in the same messages, never to a single act.
    As an :class:`Act` (its ``intents``, ``items``, concept tokens and set) it is the union of its
    acts, the reading of a multi-intent ConvLab turn; the action measures compare its
    :attr:`calls` themselves, in the way their ``calls`` option names
    (:mod:`simscore.measures.calls`; ``per_message`` compares its :attr:`messages`).

    Parameters
    ----------
    calls : sequence of Act
        At least two single acts (one act is an :class:`Act`, not a sequence).
    message_sizes : sequence of int, optional
        How many of the calls, in order, each message holds (positive, summing to the number of
        calls); by default all are one message (one reply).

    Examples
    --------
    >>> seq = ActSequence([Act.parse("find(origin=SFO)"), Act.parse("pay()")])
    >>> str(seq), seq.intents, len(seq.calls)
    ('find(origin=SFO);pay()', ('find', 'pay'), 2)
    >>> Act.parse(str(seq)) == seq, seq == ActSequence(seq.calls[::-1])
    (True, False)
    >>> trajectory = ActSequence([*seq.calls, Act.parse("bye()")], message_sizes=[1, 2])
    >>> str(trajectory), [len(message) for message in trajectory.messages]
    ('find(origin=SFO);;pay();bye()', [1, 2])
    >>> Act.parse(str(trajectory)) == trajectory, trajectory == ActSequence(trajectory.calls)
    (True, False)
    """

    __slots__ = ("_calls", "_sizes")

    def __init__(self, calls: Sequence[Act], *, message_sizes: Sequence[int] | None = None) -> None:
        acts = tuple(calls)
        if len(acts) < 2:
            raise ActParseError(acts, None, "an act sequence needs at least two acts (one act is an Act)")
        for act in acts:
            if type(act) is not Act:
                raise ActParseError(act, None, f"each act of a sequence must be a single Act, got {type(act).__name__}")
        sizes = (len(acts),) if message_sizes is None else tuple(message_sizes)
        if (not all(type(size) is int and size > 0 for size in sizes)) or sum(sizes) != len(acts):
            raise ActParseError(
                list(sizes), None, f"message_sizes must be positive integers summing to the {len(acts)} calls"
            )
        super().__init__([i for act in acts for i in act.intents], [item for act in acts for item in act.items])
        self._calls: tuple[Act, ...] = acts
        self._sizes: tuple[int, ...] = sizes
        self._hash = hash(("sequence", acts)) if len(sizes) == 1 else hash(("sequence", acts, sizes))

    @property
    def calls(self) -> tuple[Act, ...]:
        """The acts in the order they were made."""
        return self._calls

    @property
    def messages(self) -> tuple[tuple[Act, ...], ...]:
        """The acts message by message, in order (one message unless ``message_sizes`` said more)."""
        out, start = [], 0
        for size in self._sizes:
            out.append(self._calls[start : start + size])
            start += size
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        if type(other) is not ActSequence:
            return NotImplemented if not isinstance(other, Act) else False
        return self._calls == other._calls and self._sizes == other._sizes

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return ";;".join(";".join(map(str, message)) for message in self.messages)


_SHARED_ACTS: dict[tuple[str, tuple[tuple[str, str, str | None], ...]], Act] = {}
_MAX_SHARED_ACTS = 1 << 16


def shared_act(intent: str, items: tuple[tuple[str, str, str | None], ...] = ()) -> Act:
    """``Act(intent, [Item(*i) for i in items])``, built once per distinct argument and shared.

    Acts are immutable values, so hot loops that build the same few acts over and over (the
    simulated user, the summary-to-master mapping) can take a shared instance instead of a
    new one. ``items`` are ``(slot, op, value)`` triples; at most 65,536 acts are kept.

    >>> shared_act("inform", (("food", "=", "thai"),)) is shared_act("inform", (("food", "=", "thai"),))
    True
    >>> str(shared_act("inform", (("food", "=", "thai"), ("area", "=", "north"))))
    'inform(area=north,food=thai)'
    """
    key = (intent, items)
    act = _SHARED_ACTS.get(key)
    if act is None:
        act = Act(intent, [Item(slot, op, value) for slot, op, value in items])
        if len(_SHARED_ACTS) < _MAX_SHARED_ACTS:
            _SHARED_ACTS[key] = act
    return act


def convlab_order_problem(act: Sequence[str]) -> str | None:
    """What is ambiguous about the order of one ConvLab act ``[intent, domain, slot, value]``.

    None if the order looks right (see :meth:`Act.from_convlab`).

    >>> convlab_order_problem(["inform", "restaurant", "food", "thai"]) is None
    True
    >>> convlab_order_problem(["restaurant", "x", "food", "thai"])
    "act ['restaurant', 'x', 'food', 'thai']: the intent 'restaurant' is a domain name; expected [intent, domain, slot, value]"
    """
    intent, domain = act[0].strip().lower(), act[1].strip().lower()
    shown = list(act)
    if intent in CONVLAB_DOMAINS and domain in KNOWN_INTENTS:
        example = [act[1], act[0], *act[2:]]
        return (
            f"act {shown!r} is in (domain, intent, slot, value) order; "
            f"expected [intent, domain, slot, value], e.g. {example!r}"
        )
    if intent in CONVLAB_DOMAINS:
        return f"act {shown!r}: the intent {act[0]!r} is a domain name; expected [intent, domain, slot, value]"
    if domain in KNOWN_INTENTS:
        return f"act {shown!r}: the domain {act[1]!r} is an intent name; expected [intent, domain, slot, value]"
    head, dash, tail = intent.partition("-")
    if dash and head in CONVLAB_DOMAINS:
        return (
            f"act {shown!r}: the intent {act[0]!r} looks like a ConvLab-2 'Domain-Intent' key; "
            "expected [intent, domain, slot, value] with the intent alone"
        )
    return None


class _Parser:
    """Hand-written recursive-descent parser: precise positions, no regex backtracking."""

    def __init__(self, text: str, *, strict: bool = True) -> None:
        self.text = text
        self.pos = 0
        self.strict = strict

    def fail(self, reason: str, position: int | None = None) -> ActParseError:
        return ActParseError(self.text, self.pos if position is None else position, reason)

    def skip_spaces(self) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos].isspace():
            self.pos += 1

    def parse_turn(self) -> Act:
        """One act, or several joined by ``;`` and messages of them by ``;;`` (an :class:`ActSequence`),
        up to the end of the text."""
        acts = [self.parse()]
        sizes = [1]
        while self.pos < len(self.text) and self.text[self.pos] == ";":
            self.pos += 1
            if self.text.startswith(";", self.pos):  # ";;": the next act opens a message
                self.pos += 1
                sizes.append(0)
            acts.append(self.parse())
            sizes[-1] += 1
        return acts[0] if len(acts) == 1 else ActSequence(acts, message_sizes=sizes)

    def parse(self) -> Act:
        text = self.text
        self.skip_spaces()
        start = self.pos
        open_at = text.find("(", start)
        if open_at < 0:
            raise self.fail("missing '(' after the intent", len(text))
        intents = []
        offset = start
        for name in text[start:open_at].split("+"):
            stripped = name.strip()
            if not stripped:
                raise self.fail("empty intent", offset)
            if not _INTENT_RE.match(stripped):
                raise self.fail(f"intent {excerpt(stripped)} is not an identifier [A-Za-z0-9_.-]", offset)
            intents.append(stripped)
            offset += len(name) + 1
        self.pos = open_at + 1
        items: list[Item] = []
        self.skip_spaces()
        if self.pos < len(text) and text[self.pos] == ")":
            self.pos += 1
        else:
            while True:
                items.append(self.parse_item() if self.strict else self.parse_item_tolerant())
                self.skip_spaces()
                if self.pos >= len(text):
                    raise self.fail("unbalanced parentheses: missing ')'")
                char = text[self.pos]
                self.pos += 1
                if char == ")":
                    break
                if char != ",":
                    raise self.fail(f"expected ',' or ')', found {char!r}", self.pos - 1)
        self.skip_spaces()
        if self.pos != len(text) and text[self.pos] != ";":
            rest = text[self.pos :]
            hint = " (PyDial joins alternative acts with '|': parse each act on its own)" if rest[0] == "|" else ""
            raise self.fail(f"unexpected text after ')': {excerpt(rest)}{hint}")
        return Act(intents, items)

    def parse_item(self) -> Item:
        text = self.text
        self.skip_spaces()
        start = self.pos
        while self.pos < len(text) and text[self.pos] not in "=!,()\"'\\":
            self.pos += 1
        slot = text[start : self.pos].strip()
        if not slot:
            if self.pos < len(text) and text[self.pos] in "\"'":
                raise self.fail("stray quote where a slot name was expected")
            raise self.fail("empty item: expected a slot name", start)
        if "+" in slot:
            raise self.fail("'+' is not allowed in a slot name", start + text[start:].index("+"))
        if self.pos >= len(text):
            raise self.fail("unbalanced parentheses: missing ')'")
        char = text[self.pos]
        if char in ",)":
            return Item(slot)
        if char in "\"'\\":
            raise self.fail("stray quote or backslash in a slot name")
        if char == "(":
            raise self.fail("unexpected '(' inside an act")
        if char == "!":
            if text.startswith("!=", self.pos):
                op = "!="
                self.pos += 2
            else:
                raise self.fail("expected '!=' ")
        else:
            op = "="
            self.pos += 1
        return Item(slot, op, self.parse_value())

    def parse_value(self) -> str:
        text = self.text
        self.skip_spaces()
        if self.pos >= len(text):
            raise self.fail("missing value and ')'")
        quote = text[self.pos]
        if quote in "\"'":
            opened = self.pos
            self.pos += 1
            chars: list[str] = []
            while True:
                if self.pos >= len(text):
                    raise self.fail("unterminated quoted value", opened)
                char = text[self.pos]
                if char == "\\":
                    if self.pos + 1 >= len(text):
                        raise self.fail("unterminated quoted value", opened)
                    chars.append(text[self.pos + 1])
                    self.pos += 2
                    continue
                self.pos += 1
                if char == quote:
                    return "".join(chars)
                chars.append(char)
        start = self.pos
        while self.pos < len(text) and text[self.pos] not in ",()":
            if text[self.pos] in "\"'\\=!":
                raise self.fail(f"unexpected {text[self.pos]!r} in an unquoted value (quote the value)")
            self.pos += 1
        value = text[start : self.pos].strip()
        if not value:
            raise self.fail("missing value after the operator", start)
        return value

    # -- the tolerant grammar (PyDial's forms) --------------------------------------------

    def parse_item_tolerant(self) -> Item:
        text = self.text
        self.skip_spaces()
        start = self.pos
        while self.pos < len(text):
            char = text[self.pos]
            if char in "=,)" or text.startswith("!=", self.pos):
                break
            if char in "(\"'\\!":
                raise self.fail(f"unexpected {char!r} in a slot name")
            self.pos += 1
        slot = text[start : self.pos].strip()
        if self.pos >= len(text):
            raise self.fail("unbalanced parentheses: missing ')'")
        char = text[self.pos]
        if not slot:
            if char in "=!":
                raise self.fail("empty slot name: PyDial's unnamed slot (as in inform(=dontcare)) is not supported", start)
            raise self.fail("empty item: expected a slot name", start)
        if "+" in slot:
            raise self.fail("'+' is not allowed in a slot name", start + text[start:].index("+"))
        if char in ",)":
            return Item(slot)
        op = "!=" if char == "!" else "="
        self.pos += len(op)
        return Item(slot, op, self.parse_value_tolerant())

    def parse_value_tolerant(self) -> str:
        text = self.text
        self.skip_spaces()
        if self.pos >= len(text):
            raise self.fail("missing value and ')'")
        quote = text[self.pos]
        if quote == '"':
            return self.parse_value()  # the strict quoted value: up to the unescaped closing quote
        if quote == "'":
            return self.single_quoted()
        start = self.pos
        depth = 0
        while self.pos < len(text):
            char = text[self.pos]
            if char == "(":
                depth += 1
            elif char == ")":
                if depth == 0:
                    break
                depth -= 1
            elif char == "," and depth == 0:
                break
            self.pos += 1
        if self.pos >= len(text):
            raise self.fail("unbalanced parentheses: missing ')'")
        return text[start : self.pos].strip()

    def single_quoted(self) -> str:
        """A value in single quotes; a quote closes it only before ``,`` or ``)`` (or the end)."""
        text = self.text
        opened = self.pos
        self.pos += 1
        chars: list[str] = []
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\\" and self.pos + 1 < len(text):
                chars.append(text[self.pos + 1])
                self.pos += 2
                continue
            self.pos += 1
            if char == "'":
                after = self.pos
                while after < len(text) and text[after].isspace():
                    after += 1
                if after >= len(text) or text[after] in ",)":
                    return "".join(chars)
            chars.append(char)
        raise self.fail("unterminated quoted value", opened)

