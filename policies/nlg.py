"""Template natural-language generation for the system's (and the simulated user's) acts.

Every master act the system can produce has several wordings. Which one is used is a
deterministic function of the act, a little of the context (the belief's top method and
last offered venue) and an ``nlg_seed``: a stable CRC-32 of those picks a template (and,
for acts with several parts, one wording per part). So one policy is fully deterministic,
while two policies with different NLG seeds may word the same action differently, as the
paper's separately trained neural NLG models did. The hash never uses Python's salted
``hash()``, so texts are the same in every process.

The simulated user's acts are realised the same way without a seed (the user is part of
the environment, not of the policy being compared).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from simscore.acts import Act

if TYPE_CHECKING:
    from contexts.belief import BeliefState

__all__ = ["TemplateNLG", "SYSTEM_TEMPLATES"]

_SLOT_NOUNS = {
    "addr": "address",
    "area": "area",
    "food": "type of food",
    "name": "name",
    "phone": "phone number",
    "pricerange": "price range",
    "postcode": "postcode",
    "signature": "signature dish",
    "description": "description",
}

# Constraint phrases: how a slot value qualifies "a restaurant ...".
_PHRASES: dict[str, tuple[str, ...]] = {
    "area": ("in the {v} of town", "in the {v} part of town", "in the {v} area"),
    "food": ("serving {v} food", "that serves {v} food", "with {v} cuisine"),
    "pricerange": ("in the {v} price range", "with {v} prices", "in the {v} price bracket"),
    "name": ("called {v}", "named {v}", "called {v}"),
}
_DONTCARE_PHRASES: dict[str, tuple[str, ...]] = {
    "area": ("in any part of town", "anywhere in town", "in any area"),
    "food": ("serving any kind of food", "with any type of cuisine", "serving any food"),
    "pricerange": ("in any price range", "at any price", "of any price"),
    "name": ("with any name", "of any name", "with any name"),
}
_GENERIC_PHRASES = ("with {s} {v}", "whose {s} is {v}", "with the {s} {v}")
_GENERIC_DONTCARE = ("with any {s}", "of any {s}", "with any {s}")

# Sentences giving one detail of a venue.
_DETAILS: dict[str, tuple[str, ...]] = {
    "addr": ("The address is {v}.", "It is located at {v}.", "You can find it at {v}."),
    "phone": ("The phone number is {v}.", "Their phone number is {v}.", "You can call them on {v}."),
    "postcode": ("The postcode is {v}.", "Its postcode is {v}.", "The post code is {v}."),
    "signature": ("Their signature dish is {v}.", "They are known for {v}.", "The house speciality is {v}."),
    "description": ("{v}", "Here is a description: {v}", "In their own words: {v}"),
}
_GENERIC_DETAILS = ("The {s} is {v}.", "Its {s} is {v}.", "The {s}: {v}.")

#: The system's sentence templates per act type (``{name}``, ``{phrases}``, ``{excluded}``
#: and ``{question}`` are filled in by :class:`TemplateNLG`).
SYSTEM_TEMPLATES: dict[str, tuple[str, ...]] = {
    "hello": (
        "Hello, welcome to the restaurant search system. How may I help you?",
        "Hi! I can help you find a restaurant. What are you looking for?",
        "Welcome! What kind of restaurant are you looking for?",
    ),
    "bye": (
        "Thank you for using this system. Goodbye.",
        "Goodbye, and enjoy your meal!",
        "Thanks for calling. Goodbye.",
    ),
    "reqmore": (
        "Can I help you with anything else?",
        "Is there anything else I can do for you?",
        "Would you like to know anything else?",
    ),
    "repeat": (
        "Sorry, could you repeat that?",
        "I'm sorry, I didn't catch that. Could you say it again?",
        "Could you please repeat that?",
    ),
    "restart": (
        "Let's start again. What kind of restaurant are you looking for?",
        "OK, starting over. How can I help you?",
        "Let us begin again. What are you looking for?",
    ),
    "request_area": (
        "What part of town do you have in mind?",
        "Which area would you like?",
        "Where in town would you like to eat?",
    ),
    "request_food": (
        "What kind of food would you like?",
        "What type of cuisine are you looking for?",
        "Which food type do you prefer?",
    ),
    "request_pricerange": (
        "Would you like something in the cheap, moderate, or expensive price range?",
        "What price range are you looking for?",
        "How much would you like to spend?",
    ),
    "request": (
        "What {question} would you like?",
        "Which {question} are you looking for?",
        "Do you have a preference for the {question}?",
    ),
    "confirm": (
        "Did you say you are looking for a restaurant {phrases}?",
        "You are looking for a restaurant {phrases}, right?",
        "Let me confirm: you want a restaurant {phrases}?",
    ),
    "select": (
        "Would you like a restaurant {first} or {second}?",
        "Sorry, do you want a restaurant {first} or one {second}?",
        "Do you prefer a place {first} or {second}?",
    ),
    "offer": (
        "{name} is a nice restaurant{phrases}.",
        "{name} is a great place{phrases}.",
        "How about {name}? It is a restaurant{phrases}.",
        "I can recommend {name}, a restaurant{phrases}.",
    ),
    "details": (
        "Here is the information about {name}.",
        "Sure, {name}.",
        "Of course. About {name}:",
    ),
    "no_venue": (
        "I'm sorry, there is no restaurant{phrases}.",
        "Sorry, I could not find a restaurant{phrases}.",
        "Unfortunately there are no restaurants{phrases}.",
    ),
    "no_other_venue": (
        "I'm sorry, apart from {excluded} there is no restaurant{phrases}.",
        "Sorry, there is no other restaurant{phrases} besides {excluded}.",
        "Unfortunately {excluded} is all I have{phrases_for}.",
    ),
}

_USER_TEMPLATES: dict[str, tuple[str, ...]] = {
    "looking": (
        "I'm looking for a restaurant{phrases}.",
        "I want to find a restaurant{phrases}.",
        "Can you help me find a restaurant{phrases}?",
    ),
    "inform": ("I want a place {phrases}.", "Something {phrases}, please.", "I'd like a restaurant {phrases}."),
    "dontcare": ("I don't care about the {noun}.", "Any {noun} is fine.", "The {noun} doesn't matter."),
    "affirm": ("Yes.", "Yes, that's right.", "Correct."),
    "negate": ("No.", "No, that's wrong.", "No, not really."),
    "negate_items": ("No, I want a restaurant {phrases}.", "No, I'm looking for a place {phrases}.", "No, {phrases}."),
    "deny": ("No, not {wrong}. I want a place {phrases}.", "Not {wrong}, I said {phrases}.", "No, not {wrong}; {phrases}."),
    "request": ("What is the {nouns}?", "Could you give me the {nouns}?", "Can I have the {nouns}, please?"),
    "reqalts": ("Is there anything else?", "Do you have something else?", "What else do you have?"),
    "bye": ("Thank you, goodbye.", "Thanks, bye.", "That's all, goodbye."),
    "silence": ("...",),
}


def _join(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


class _Picker:
    """Stable choices from a CRC-32 seed: one per named part."""

    __slots__ = ("base",)

    def __init__(self, key: str) -> None:
        self.base = zlib.crc32(key.encode("utf-8"))

    def pick(self, options: Sequence[str], part: str = "") -> str:
        if len(options) == 1:
            return options[0]
        h = zlib.crc32(part.encode("utf-8"), self.base) if part else self.base
        return options[h % len(options)]


def _phrase(picker: _Picker, slot: str, value: str | None, part: str) -> str:
    if value is None or value in ("dontcare", "none"):
        options = _DONTCARE_PHRASES.get(slot)
        if options is None:
            return picker.pick(_GENERIC_DONTCARE, part).format(s=_SLOT_NOUNS.get(slot, slot))
        return picker.pick(options, part)
    options = _PHRASES.get(slot)
    if options is None:
        return picker.pick(_GENERIC_PHRASES, part).format(s=_SLOT_NOUNS.get(slot, slot), v=value)
    return picker.pick(options, part).format(v=value)


def _detail(picker: _Picker, slot: str, value: str, part: str) -> str:
    options = _DETAILS.get(slot)
    if options is None:
        if slot in _PHRASES:
            return f"It is {_phrase(picker, slot, value, part)}."
        return picker.pick(_GENERIC_DETAILS, part).format(s=_SLOT_NOUNS.get(slot, slot), v=value)
    text = picker.pick(options, part).format(v=value)
    if text and text[-1] not in ".!?":
        text += "."
    return text


class TemplateNLG:
    """Template realiser; the wording choice depends on the act, the context and ``nlg_seed``.

    Parameters
    ----------
    nlg_seed : int
        Selects among the wordings; policies with different seeds word acts differently.

    Examples
    --------
    >>> nlg = TemplateNLG(nlg_seed=0)
    >>> act = Act.parse('inform(name="the golden wok",food=chinese,area=north)')
    >>> text = nlg.realise(act)
    >>> "the golden wok" in text and "chinese" in text and "north" in text
    True
    >>> text == TemplateNLG(nlg_seed=0).realise(act)
    True
    >>> len({TemplateNLG(nlg_seed=s).realise(act) for s in range(20)}) > 1
    True
    >>> TemplateNLG().realise_user(Act.parse("request(phone)")) in (
    ...     "What is the phone number?", "Could you give me the phone number?",
    ...     "Can I have the phone number, please?")
    True
    """

    def __init__(self, *, nlg_seed: int = 0) -> None:
        if isinstance(nlg_seed, bool) or not isinstance(nlg_seed, int):
            raise ValueError(f"nlg_seed must be an int, got {nlg_seed!r}")
        self.nlg_seed = nlg_seed
        self._handlers: dict[str, Callable[[Act, _Picker], str]] = {
            "request": self._request,
            "confirm": self._confirm,
            "select": self._select,
            "inform": self._inform,
        }

    def __repr__(self) -> str:
        return f"TemplateNLG(nlg_seed={self.nlg_seed})"

    @staticmethod
    def context_key(belief: BeliefState | None) -> str:
        """The part of the context that influences the wording: top method and last offer."""
        if belief is None:
            return ""
        return f"{belief.top_method()}/{belief.last_offered or ''}"

    def realise(self, act: Act, belief: BeliefState | None = None, *, context_key: str | None = None) -> str:
        """The system's text for ``act`` in the context of ``belief``.

        Parameters
        ----------
        act : simscore.Act
        belief : contexts.belief.BeliefState, optional
            The belief the act was chosen on (part of the wording choice).
        context_key : str, optional
            Precomputed :meth:`context_key` of the belief (saves recomputing it).
        """
        if not isinstance(act, Act):
            raise TypeError(f"act must be a simscore.Act, got {type(act).__name__}")
        key = self.context_key(belief) if context_key is None else context_key
        picker = _Picker(f"{self.nlg_seed}\x1f{act}\x1f{key}")
        intent = act.intent
        handler = self._handlers.get(intent)
        if handler is not None:
            return _capitalise(handler(act, picker))
        templates = SYSTEM_TEMPLATES.get(intent)
        if templates is not None and not act.items:
            return picker.pick(templates)
        return _generic(act)

    # -- system acts ---------------------------------------------------------------------

    def _request(self, act: Act, picker: _Picker) -> str:
        slots = [item.slot for item in act.items]
        if len(slots) == 1:
            templates = SYSTEM_TEMPLATES.get(f"request_{slots[0]}")
            if templates is not None:
                return picker.pick(templates)
        if not slots:
            return picker.pick(SYSTEM_TEMPLATES["repeat"])
        question = _join([_SLOT_NOUNS.get(s, s) for s in slots])
        return picker.pick(SYSTEM_TEMPLATES["request"]).format(question=question)

    def _confirm(self, act: Act, picker: _Picker) -> str:
        phrases = [_phrase(picker, i.slot, i.value, str(n)) for n, i in enumerate(act.items)]
        if not phrases:
            return picker.pick(SYSTEM_TEMPLATES["repeat"])
        return picker.pick(SYSTEM_TEMPLATES["confirm"]).format(phrases=" ".join(phrases))

    def _select(self, act: Act, picker: _Picker) -> str:
        items = act.items
        if len(items) < 2:
            return self._confirm(Act("confirm", items), picker)
        first = _phrase(picker, items[0].slot, items[0].value, "a")
        second = _phrase(picker, items[1].slot, items[1].value, "b")
        return picker.pick(SYSTEM_TEMPLATES["select"]).format(first=first, second=second)

    def _inform(self, act: Act, picker: _Picker) -> str:
        name: str | None = None
        excluded: list[str] = []
        constraints: list[tuple[str, str]] = []
        details: list[tuple[str, str]] = []
        for item in act.items:
            if item.slot == "name":
                if item.op == "!=":
                    excluded.append(item.value or "")
                else:
                    name = item.value
            elif item.op == "=" and item.value is not None:
                target = constraints if item.slot in _PHRASES or item.slot not in _DETAILS else details
                target.append((item.slot, item.value))
        if name is None:
            parts = [_detail(picker, slot, value, str(n)) for n, (slot, value) in enumerate(constraints + details)]
            return " ".join(parts) if parts else _generic(act)
        phrases = "".join(" " + _phrase(picker, slot, value, str(n)) for n, (slot, value) in enumerate(constraints))
        if name == "none":
            if excluded:
                template = picker.pick(SYSTEM_TEMPLATES["no_other_venue"])
                phrases_for = f" for a restaurant{phrases}" if phrases else ""
                return template.format(excluded=_join(excluded), phrases=phrases, phrases_for=phrases_for)
            if not phrases:
                phrases = " matching your request"
            return picker.pick(SYSTEM_TEMPLATES["no_venue"]).format(phrases=phrases)
        sentences = []
        if constraints or not details:
            sentences.append(picker.pick(SYSTEM_TEMPLATES["offer"]).format(name=name, phrases=phrases))
        else:
            sentences.append(picker.pick(SYSTEM_TEMPLATES["details"]).format(name=name))
        sentences.extend(_detail(picker, slot, value, f"d{n}") for n, (slot, value) in enumerate(details))
        return " ".join(sentences)

    # -- user acts -----------------------------------------------------------------------

    def realise_user(self, act: Act) -> str:
        """The simulated user's text for ``act`` (no seed: the user is the same for every policy).

        >>> TemplateNLG().realise_user(Act.parse("inform(pricerange=dontcare)")) in (
        ...     "I don't care about the price range.", "Any price range is fine.",
        ...     "The price range doesn't matter.")
        True
        """
        return _capitalise(self._realise_user(act))

    def _realise_user(self, act: Act) -> str:
        picker = _Picker(str(act))
        intents = act.intents
        items = act.items
        if "bye" in intents:
            return picker.pick(_USER_TEMPLATES["bye"])
        if intents == ("reqalts",) and not items:
            return picker.pick(_USER_TEMPLATES["reqalts"])
        if intents == ("affirm",) and not items:
            return picker.pick(_USER_TEMPLATES["affirm"])
        if intents == ("null",):
            return _USER_TEMPLATES["silence"][0]
        if intents == ("request",):
            nouns = _join([_SLOT_NOUNS.get(i.slot, i.slot) for i in items])
            return picker.pick(_USER_TEMPLATES["request"]).format(nouns=nouns or "details")
        wanted = [i for i in items if i.op == "=" and i.value is not None and i.slot != "type" and i.value != "dontcare"]
        dontcare = [i for i in items if i.op == "=" and i.value == "dontcare"]
        phrases = " ".join([_phrase(picker, i.slot, i.value, str(n)) for n, i in enumerate(wanted)])
        if intents == ("negate",):
            if not wanted:
                return picker.pick(_USER_TEMPLATES["negate"])
            return picker.pick(_USER_TEMPLATES["negate_items"]).format(phrases=phrases)
        if intents == ("deny",):
            wrong = _join([i.value or "" for i in items if i.op == "!="]) or "that"
            return picker.pick(_USER_TEMPLATES["deny"]).format(wrong=wrong, phrases=phrases or "something else")
        if intents == ("inform",):
            sentences = []
            if any(i.slot == "type" for i in items):
                sentences.append(
                    picker.pick(_USER_TEMPLATES["looking"]).format(phrases=" " + phrases if phrases else "")
                )
            elif wanted:
                sentences.append(picker.pick(_USER_TEMPLATES["inform"]).format(phrases=phrases))
            for n, item in enumerate(dontcare):
                noun = _SLOT_NOUNS.get(item.slot, item.slot)
                sentences.append(picker.pick(_USER_TEMPLATES["dontcare"], f"dc{n}").format(noun=noun))
            if sentences:
                return " ".join(sentences)
        return _generic(act)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def _generic(act: Act) -> str:
    """A plain rendering for acts no template covers (never empty)."""
    words = act.intent.replace("+", " and ").replace("_", " ")
    parts = []
    for item in act.items:
        noun = _SLOT_NOUNS.get(item.slot, item.slot)
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
