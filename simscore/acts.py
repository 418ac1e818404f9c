"""Canonical semantic system actions (dialogue acts) and their parser.

An :class:`Act` is a dialogue-act identity (one intent, or the sorted distinct intents of a
multi-intent ConvLab turn) plus items ``(slot, op, value)`` kept in canonical order, so two
actions that differ only in item order are equal. :meth:`Act.parse` reads PyDial strings,
``str(act)`` writes them back, and :meth:`Act.from_convlab` reads ConvLab-style lists of
``[intent, domain, slot, value]``. Definitions follow the metrics reference of the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from simscore.errors import ActParseError

__all__ = ["Act", "Item", "NONE_VALUE"]

#: Characters an intent may contain (PyDial and ConvLab intents are identifiers).
_INTENT_RE = re.compile(r"[A-Za-z0-9_\-]+\Z")
#: Characters that would make a slot ambiguous in the string form.
_SLOT_FORBIDDEN = set('=!,()"\'\\+')
#: A value written without quotes must match this; anything else is quoted.
_BARE_VALUE_RE = re.compile(r"[A-Za-z0-9_\-.:/&]+\Z")


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
                raise ActParseError(name, None, "intent must be a non-empty identifier [A-Za-z0-9_-]")
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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Act):
            return NotImplemented
        return self._intents == other._intents and self._items == other._items

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"{self.intent}({','.join(map(str, self._items))})"

    def __repr__(self) -> str:
        return f"Act.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: object) -> Act:
        """Parse a PyDial action string.

        Accepts ``intent(item,item,...)`` with items ``slot``, ``slot=value`` and
        ``slot!=value``; values bare or in double or single quotes (backslash escapes the
        quote character and the backslash); intents of multi-intent turns joined by ``+``.
        Spaces around tokens are ignored.

        Raises
        ------
        ActParseError
            For anything else, naming the text and the 0-based position of the problem.
        """
        if not isinstance(text, str):
            raise ActParseError(text, None, f"expected a string, got {type(text).__name__}")
        return _Parser(text).parse()

    @classmethod
    def from_convlab(cls, acts: object) -> Act:
        """Build an act from a ConvLab turn: a list of ``[intent, domain, slot, value]``.

        Intents and slots are lower-cased; slots are qualified by their domain
        (``restaurant-food``) unless the domain is empty, ``none`` or ``general``; a slot of
        ``none``/empty adds no item; a value of ``""``, ``"?"`` marks a bare (requested) slot.
        The act's intents are the distinct intents; its items the union of all items.

        >>> str(Act.from_convlab([["Inform", "Restaurant", "Food", "thai"],
        ...                        ["Request", "Restaurant", "Area", "?"]]))
        'inform+request(restaurant-area,restaurant-food=thai)'
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
            intents.append(intent.lower())
            slot = slot.lower()
            if slot in ("", "none"):
                continue
            domain = domain.lower()
            qualified = slot if domain in ("", "none", "general") else f"{domain}-{slot}"
            items.append(Item(qualified, "=", None if value in ("", "?") else value))
        try:
            return cls(intents, items)
        except ActParseError as exc:
            raise ActParseError(acts, None, exc.reason) from None


class _Parser:
    """Hand-written recursive-descent parser: precise positions, no regex backtracking."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, reason: str, position: int | None = None) -> ActParseError:
        return ActParseError(self.text, self.pos if position is None else position, reason)

    def skip_spaces(self) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos].isspace():
            self.pos += 1

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
                raise self.fail(f"intent {stripped!r} is not an identifier [A-Za-z0-9_-]", offset)
            intents.append(stripped)
            offset += len(name) + 1
        self.pos = open_at + 1
        items: list[Item] = []
        self.skip_spaces()
        if self.pos < len(text) and text[self.pos] == ")":
            self.pos += 1
        else:
            while True:
                items.append(self.parse_item())
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
        if self.pos != len(text):
            raise self.fail(f"unexpected text after ')': {text[self.pos:]!r}")
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
