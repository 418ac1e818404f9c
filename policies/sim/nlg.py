"""Template natural-language generation for the system's and the simulated user's acts.

The templates follow the style of PyDial's CamRestaurants messages (one sentence per act
pattern; the slot phrases of an offer or a confirmation in shuffled order), but every act
type has several wordings, and every slot constraint several phrasings ("in the north of
town", "in the northern part of town", ...). There is one template set, shared by every
policy.

Keying
------
A :class:`TemplateNLG` belongs to one policy *instance* (a string such as
``"gpsarsa-ts-seed1-40000"``). The wording of a system act is a deterministic function of
``(instance, context key, act)``: a BLAKE2b digest of those three strings (never Python's
salted ``hash()``, so texts are the same in every process) is read as a stream of uniform
draws, and the first draw picks the sentence template, later ones the phrasing of each slot
and the order of the slot phrases. Hence

* the same instance in the same context says the same thing every time;
* different instances, or one instance in different contexts, choose independently:
  uniformly among the act's templates, then among the phrasings and orders of its slots.

So if an act has k equally likely wordings, two policies that pick it in the same context
word it identically with probability 1/k (in general the sum of the squared probabilities
of the wordings), as the paper observed for separately trained NLG models: the same action,
different text. Their sentence templates agree with probability 1/t. Per act type
(templates in :data:`SYSTEM_TEMPLATES`; k counted over whole texts):

==================================================  =========  ==========================
act type                                            t          k (example)
==================================================  =========  ==========================
hello, bye, reqmore, repeat, restart                5 each     5
request(area), request(food), request(pricerange)   5 each     5
request of other or several slots; request()        5; 4       5; 4
confirm with values; confirm of bare slots          5; 3       5·Πp·n!: ``confirm(food=
                                                               thai)`` 25, food and area
                                                               250; bare 3
select of two values of area, food or pricerange    5 each     5·2 (the two values in
                                                               either order) = 10
select, other shapes                                4          4·Πp·n!
offer ``inform(name=X, <1-5 slots>)``               6          area and food: 600 (1/440
                                                               identical); area, food and
                                                               pricerange: 7200 (1/4600)
offer ``inform(name=X)``                            5          5
details ``inform(name=X, phone=.., addr=..)``       5          5·4·4·2 = 160 (a
                                                               description adds 4 or 5)
no venue ``inform(name=none, <slots>)``             5          5·Πp·n!: food only 25
no other venue ``inform(name=none, name!=a, ..)``   5          5·Πp·n!: food only 25
unknown acts (generic rendering)                    1          1
==================================================  =========  ==========================

Here p is the number of phrasings of one slot phrase (area 5, or 15 as a clause such as
"you will find it in the north of town"; food 5; pricerange 4; name 3; dontcare 3-4; a
venue detail 4) and n! the orders of n slot phrases. Acts without slots thus repeat their
wording across policies in one case out of 5 (the paper's same-action text similarity well
below 1), acts with slots far more rarely, although they share most of their words.

The simulated user is part of the environment, not of the policy under comparison: its
wording (:meth:`TemplateNLG.realise_user`, 3-4 wordings per act type) depends only on the
act and a context key, never on the instance.

Examples
--------
>>> nlg = TemplateNLG("policy-a")
>>> act = Act.parse('inform(name="the golden wok",food=chinese,area=north)')
>>> text = nlg.realise(act, context_key="c1")
>>> all(value in text.lower() for value in ("the golden wok", "chinese", "north"))
True
>>> text == TemplateNLG("policy-a").realise(act, context_key="c1")
True
>>> len({TemplateNLG(f"policy-{i}").realise(act, context_key="c1") for i in range(20)}) > 1
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from policies.sim._templates import (
    _ANY,
    _AREA_CLAUSES,
    _AREA_QUALIFIERS,
    _ASKED_SLOTS,
    _CLAUSES,
    _DETAIL_SLOTS,
    _DONTCARE_CLAUSES,
    _DONTCARE_QUALIFIERS,
    _GENERIC_CLAUSES,
    _GENERIC_DONTCARE_QUALIFIERS,
    _GENERIC_QUALIFIERS,
    _NEGATED_CLAUSES,
    _QUALIFIERS,
    _SLOT_NOUNS,
    _UNKNOWN_CLAUSES,
    SYSTEM_TEMPLATES,
    USER_TEMPLATES,
)
from simscore.acts import Act, Item

if TYPE_CHECKING:
    from contexts.belief import BeliefState

__all__ = ["TemplateNLG", "SYSTEM_TEMPLATES", "USER_TEMPLATES"]

_USER_PREFIX_INTENTS = ("hello", "ack", "affirm", "negate", "thankyou")


class _Draws:
    """A stream of uniform choices read from a BLAKE2b digest of a key string."""

    __slots__ = ("bits",)

    def __init__(self, key: str) -> None:
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=32).digest()
        self.bits = int.from_bytes(digest, "little")

    def pick(self, options: Sequence[str]) -> str:
        n = len(options)
        if n == 1:
            return options[0]
        self.bits, r = divmod(self.bits, n)
        return options[r]

    def shuffle(self, parts: list[str]) -> None:
        for i in range(len(parts) - 1, 0, -1):
            self.bits, j = divmod(self.bits, i + 1)
            parts[i], parts[j] = parts[j], parts[i]


def _noun(slot: str) -> str:
    return _SLOT_NOUNS.get(slot) or slot.replace("_", " ")


def _food(value: str) -> str:
    return value if value.endswith("food") else value + " food"


def _join(parts: Sequence[str], word: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} {word} {parts[-1]}"


def _join_qualifiers(parts: Sequence[str]) -> str:
    # Two qualifiers read well side by side ("serving thai food in the north of town").
    return " ".join(parts) if len(parts) <= 2 else _join(parts)


def _qualifier(item: Item, d: _Draws) -> str:
    """``item`` as a phrase qualifying "a restaurant" (a bare item: "of any kind")."""
    slot, value = item.slot, item.value
    if value is None:
        # PyDial's user may answer with a bare dontcare, which names no slot.
        return d.pick(_GENERIC_DONTCARE_QUALIFIERS).format(n="kind")
    if value in _ANY:
        options = _DONTCARE_QUALIFIERS.get(slot, _GENERIC_DONTCARE_QUALIFIERS)
        return d.pick(options).format(n=_noun(slot))
    if slot == "area":
        options = _AREA_QUALIFIERS.get(value, _QUALIFIERS["area"])
    else:
        options = _QUALIFIERS.get(slot, _GENERIC_QUALIFIERS)
    text = d.pick(options).format(v=value, f=_food(value), n=_noun(slot))
    if item.op == "!=":
        return f"other than {value}" if slot == "name" else "not " + text
    return text


def _clause(item: Item, d: _Draws) -> str:
    """``item`` as a statement about an offered venue ("it serves thai food")."""
    slot, value = item.slot, item.value
    if value is None or (value == "none" and slot in _DETAIL_SLOTS):
        return d.pick(_UNKNOWN_CLAUSES).format(n=_noun(slot))
    if value in _ANY:
        return d.pick(_DONTCARE_CLAUSES).format(n=_noun(slot))
    if item.op == "!=":
        return d.pick(_NEGATED_CLAUSES).format(n=_noun(slot), v=value)
    if slot == "area":
        return d.pick(_AREA_CLAUSES).format(q=_qualifier(item, d))
    return d.pick(_CLAUSES.get(slot, _GENERIC_CLAUSES)).format(v=value, f=_food(value), n=_noun(slot))


def _qualifiers(items: Sequence[Item], d: _Draws) -> str:
    parts = [_qualifier(item, d) for item in items]
    d.shuffle(parts)
    return _join_qualifiers(parts)


def _sentence(text: str) -> str:
    """Capitalised and ending with a full stop, question or exclamation mark."""
    text = text.strip()
    if not text:
        return text
    if text[-1] not in ".!?":
        text += "."
    return text[0].upper() + text[1:] if text[0].islower() else text


# -- system acts -------------------------------------------------------------------------------

_Handler = Callable[[Act, _Draws], str | None]


def _request(act: Act, d: _Draws) -> str | None:
    items = act.items
    if any(item.value is not None for item in items):
        return None
    if not items:
        return d.pick(SYSTEM_TEMPLATES["request_any"])
    if len(items) == 1 and items[0].slot in _ASKED_SLOTS:
        return d.pick(SYSTEM_TEMPLATES["request_" + items[0].slot])
    return d.pick(SYSTEM_TEMPLATES["request"]).format(nouns=_join([_noun(item.slot) for item in items]))


def _confirm(act: Act, d: _Draws) -> str | None:
    valued = [item for item in act.items if item.value is not None]
    if not valued:
        nouns = _join([_noun(item.slot) for item in act.items]) or "details"
        return d.pick(SYSTEM_TEMPLATES["confirm_slots"]).format(nouns=nouns)
    template = d.pick(SYSTEM_TEMPLATES["confirm"])
    return template.format(q=_qualifiers(valued, d))


def _select(act: Act, d: _Draws) -> str | None:
    items = list(act.items)
    if len(items) < 2 or any(item.value is None for item in items):
        return _confirm(act, d)
    first, second = items[0], items[1]
    if (
        len(items) == 2
        and first.slot == second.slot
        and first.slot in _ASKED_SLOTS
        and first.op == second.op == "="
        and first.value not in _ANY
        and second.value not in _ANY
    ):
        template = d.pick(SYSTEM_TEMPLATES["select_" + first.slot])
        values = [first.value or "", second.value or ""]
        d.shuffle(values)
        return template.format(a=values[0], b=values[1])
    template = d.pick(SYSTEM_TEMPLATES["select"])
    parts = [_qualifier(item, d) for item in items]
    d.shuffle(parts)
    return template.format(a=", ".join(parts[:-1]), b=parts[-1])


def _inform(act: Act, d: _Draws) -> str | None:
    names: list[str | None] = []
    excluded: list[str] = []
    others: list[Item] = []
    for item in act.items:
        if item.slot != "name":
            others.append(item)
        elif item.op == "!=":
            excluded.append(item.value or "")
        else:
            names.append(item.value)
    if len(names) > 1 or (names and names[0] is None):
        return None
    if not names:
        if excluded or not others:
            return None
        return _facts_sentence(None, others, d)
    name = names[0] or ""
    if name == "none":
        if any(item.value is None for item in others):
            return None
        q = _qualifiers(others, d)
        if not excluded:
            return d.pick(SYSTEM_TEMPLATES["no_venue"]).format(q=q or "matching your request")
        template = d.pick(SYSTEM_TEMPLATES["no_other_venue"])
        only = "is the only place" if len(excluded) == 1 else "are the only places"
        return template.format(excluded=_join(excluded), only=only, x=" " + q if q else "")
    if excluded:
        return None
    if any(item.slot in _DETAIL_SLOTS or item.value is None for item in others):
        return _facts_sentence(name, others, d)
    if not others:
        return d.pick(SYSTEM_TEMPLATES["offer_name"]).format(name=name)
    template = d.pick(SYSTEM_TEMPLATES["offer"])
    if "{c}" in template:
        parts = [_clause(item, d) for item in others]
        d.shuffle(parts)
        return template.format(name=name, c=_join(parts))
    return template.format(name=name, q=_qualifiers(others, d))


def _facts_sentence(name: str | None, items: Sequence[Item], d: _Draws) -> str:
    """Details of a venue: one sentence of clauses, then its description (if any)."""
    description: str | None = None
    facts_items: list[Item] = []
    for item in items:
        if item.slot == "description" and item.value not in (None, "none", "dontcare"):
            description = item.value
        else:
            facts_items.append(item)
    if name is None:
        parts = [_clause(item, d) for item in facts_items]
        d.shuffle(parts)
        sentences = [_sentence(_join(parts))] if parts else []
        if description is not None:
            sentences.append(_sentence(description))
        return " ".join(sentences)
    if not facts_items:
        template = d.pick(SYSTEM_TEMPLATES["description"])
        return template.format(name=name, desc=_sentence(description or ""))
    template = d.pick(SYSTEM_TEMPLATES["details"])
    parts = [_clause(item, d) for item in facts_items]
    d.shuffle(parts)
    text = template.format(name=name, facts=_join(parts))
    if description is not None:
        after = d.pick(SYSTEM_TEMPLATES["description_after"])
        text += " " + after.format(desc=_sentence(description))
    return text


def _bare(name: str) -> _Handler:
    templates = SYSTEM_TEMPLATES[name]

    def handler(act: Act, d: _Draws) -> str | None:
        return None if act.items else d.pick(templates)

    return handler


_SYSTEM_HANDLERS: dict[str, _Handler] = {
    "request": _request,
    "confirm": _confirm,
    "select": _select,
    "inform": _inform,
    **{name: _bare(name) for name in ("hello", "bye", "reqmore", "repeat", "restart")},
}


# -- user acts ---------------------------------------------------------------------------------


def _user_content(intent: str, act: Act, d: _Draws) -> str | None:
    """The user's text for one intent with all of ``act``'s items (None: no template)."""
    items = act.items
    t = USER_TEMPLATES
    if intent == "request":
        named = [item.value for item in items if item.slot == "name" and item.value is not None]
        slots = [item for item in items if item.value is None]
        if len(named) > 1 or len(named) + len(slots) != len(items):
            return None
        if not slots:
            return d.pick(t["request_any"]) if not named else None
        nouns = _join([_noun(item.slot) for item in slots])
        if named:
            return d.pick(t["request_named"]).format(nouns=nouns, name=named[0])
        return d.pick(t["request"]).format(nouns=nouns)
    if any(item.value is None and item.slot != "dontcare" for item in items):
        return None
    if intent == "inform":
        return _user_inform(act, d)
    if intent == "deny":
        wrong = [item.value or "" for item in items if item.op == "!="]
        right = [item for item in items if item.op == "="]
        if not wrong:
            return None
        if not right:
            return d.pick(t["deny_only"]).format(wrong=_join(wrong, "or"))
        template = d.pick(t["deny"])
        return template.format(wrong=_join(wrong, "or"), q=_qualifiers(right, d))
    simple = {"affirm": "affirm", "negate": "negate", "reqalts": "reqalts"}.get(intent)
    if simple is not None:
        if not items:
            return d.pick(t[simple])
        return d.pick(t[simple + "_items"]).format(q=_qualifiers(items, d))
    if intent == "confirm":
        return d.pick(t["confirm"]).format(q=_qualifiers(items, d)) if items else None
    if intent in ("null", "silence"):
        return d.pick(t["silence"]) if not items else None
    if intent in t and not items:
        return d.pick(t[intent])
    return None


def _user_inform(act: Act, d: _Draws) -> str | None:
    t = USER_TEMPLATES
    looking = False
    wanted: list[Item] = []
    dontcare: list[Item] = []
    bare_dontcare = False
    for item in act.items:
        if item.slot == "type":
            looking = True
        elif item.value is None or (item.slot == "this" and item.value == "dontcare"):
            bare_dontcare = True  # a dontcare without its slot: "this" is whatever was asked
        elif item.op == "=" and item.value == "dontcare":
            dontcare.append(item)
        else:
            wanted.append(item)
    sentences = []
    if looking:
        q = _qualifiers(wanted, d)
        sentences.append(d.pick(t["looking"]).format(x=" " + q if q else ""))
    elif wanted:
        sentences.append(d.pick(t["inform"]).format(q=_qualifiers(wanted, d)))
    for item in dontcare:
        sentences.append(d.pick(t["dontcare"]).format(noun=_noun(item.slot)))
    if bare_dontcare:
        sentences.append(d.pick(t["dontcare_any"]))
    return " ".join(sentences) or None


# -- fallback ----------------------------------------------------------------------------------


def _generic(act: Act) -> str:
    """A plain rendering for acts no template covers (never empty)."""
    words = act.intent.replace("+", " and ").replace("_", " ")
    parts = []
    for item in act.items:
        noun = _noun(item.slot)
        if item.value is None:
            parts.append(noun)
        elif item.op == "!=":
            parts.append(f"{noun} not {item.value}")
        else:
            parts.append(f"{noun} {item.value}")
    text = words[0].upper() + words[1:]
    if parts:
        text += ": " + ", ".join(parts)
    return text + "."


class TemplateNLG:
    """Template realiser of one policy instance; wording drawn per (instance, context, act).

    Parameters
    ----------
    instance : str, default ""
        Identifies the policy instance (e.g. ``"gpsarsa-ts-seed1-40000"``). All instances
        share the templates; each chooses among them independently.

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> nlg = TemplateNLG("gpsarsa-ts-seed1-40000")
    >>> belief = BeliefState(slots={"food": {"thai": 0.9}}, method={"byconstraints": 1.0})
    >>> text = nlg.realise(Act.parse("confirm(food=thai)"), belief)
    >>> "thai" in text and text.endswith("?")
    True
    >>> key = TemplateNLG.context_key(belief)
    >>> nlg.realise(Act.parse("confirm(food=thai)"), context_key=key) == text
    True
    >>> TemplateNLG().realise_user(Act.parse("request(phone)")) in (
    ...     "What is the phone number?", "Could you give me the phone number?",
    ...     "Can I have the phone number, please?")
    True
    """

    __slots__ = ("instance", "_prefix")

    def __init__(self, instance: str = "") -> None:
        if not isinstance(instance, str):
            raise TypeError(f"instance must be a str identifying the policy instance, got {type(instance).__name__}")
        self.instance = instance
        self._prefix = f"S\x1e{instance}\x1f"

    def __repr__(self) -> str:
        return f"TemplateNLG({self.instance!r})"

    @staticmethod
    def context_key(belief: BeliefState | None) -> str:
        """A short stable string identifying ``belief`` ("" for None).

        A BLAKE2b digest (128 bits) of ``repr(belief.key())``: beliefs that differ get
        different keys, equal beliefs the same key, in every process (about 10 µs for a
        belief of the simulator). Compute it once per context and pass it to
        :meth:`realise` as ``context_key`` when several policies answer the same context.

        >>> from contexts.belief import BeliefState
        >>> a = BeliefState(slots={"area": {"north": 1.0}})
        >>> TemplateNLG.context_key(a) == TemplateNLG.context_key(BeliefState(slots={"area": {"north": 1.0}}))
        True
        >>> TemplateNLG.context_key(a) != TemplateNLG.context_key(BeliefState(slots={"area": {"north": 0.9}}))
        True
        >>> len(TemplateNLG.context_key(a)), TemplateNLG.context_key(None)
        (32, '')
        """
        if belief is None:
            return ""
        key = getattr(belief, "key", None)
        if key is None:
            raise TypeError(f"belief must be a BeliefState or None, got {type(belief).__name__}")
        return hashlib.blake2b(repr(key()).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()

    def realise(self, act: Act, belief: BeliefState | None = None, *, context_key: str | None = None) -> str:
        """The system's text for ``act`` (a capitalised sentence or more; never empty).

        Parameters
        ----------
        act : simscore.Act
        belief : contexts.belief.BeliefState, optional
            The belief the act was chosen on; only its :meth:`context_key` is used.
        context_key : str, optional
            A precomputed :meth:`context_key` (then ``belief`` is ignored), or any string
            naming the context.

        Returns
        -------
        str
            Depends only on ``(self.instance, context key, act)``.
        """
        if not isinstance(act, Act):
            raise TypeError(f"act must be a simscore.Act, got {type(act).__name__}")
        if context_key is None:
            context_key = self.context_key(belief)
        elif not isinstance(context_key, str):
            raise TypeError(f"context_key must be a str or None, got {type(context_key).__name__}")
        draws = _Draws(f"{self._prefix}{context_key}\x1f{act}")
        handler = _SYSTEM_HANDLERS.get(act.intent)
        text = handler(act, draws) if handler is not None else None
        return _generic(act) if text is None else _sentence(text)

    @staticmethod
    def realise_user(act: Act, context_key: str = "") -> str:
        """The simulated user's text for ``act``: the same for every policy instance.

        Parameters
        ----------
        act : simscore.Act
        context_key : str, default ""
            Names the context; the wording depends only on ``(context_key, act)``.

        Examples
        --------
        >>> TemplateNLG.realise_user(Act.parse("inform(pricerange=dontcare)")) in (
        ...     "I don't care about the price range.", "Any price range is fine.",
        ...     "The price range doesn't matter.")
        True
        """
        if not isinstance(act, Act):
            raise TypeError(f"act must be a simscore.Act, got {type(act).__name__}")
        if not isinstance(context_key, str):
            raise TypeError(f"context_key must be a str, got {type(context_key).__name__}")
        d = _Draws(f"U\x1e{context_key}\x1f{act}")
        intents = act.intents
        if "bye" in intents:
            return d.pick(USER_TEMPLATES["bye"])
        prefixes = [intent for intent in intents if intent in _USER_PREFIX_INTENTS]
        rest = [intent for intent in intents if intent not in _USER_PREFIX_INTENTS]
        if not rest and prefixes == ["hello"] and act.items:
            rest = ["inform"]  # a greeting that already says what the user wants
        if len(rest) > 1:
            return _generic(act)
        if not rest:
            if len(prefixes) == 1:
                text = _user_content(prefixes[0], act, d)
                return _generic(act) if text is None else _sentence(text)
            if act.items:
                return _generic(act)
        sentences = [d.pick(USER_TEMPLATES[intent]) for intent in prefixes]
        if rest:
            text = _user_content(rest[0], act, d)
            if text is None:
                return _generic(act)
            sentences.append(_sentence(text))
        return " ".join(sentences)
