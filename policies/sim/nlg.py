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

from simscore.acts import Act, Item

if TYPE_CHECKING:
    from contexts.belief import BeliefState

__all__ = ["TemplateNLG", "SYSTEM_TEMPLATES", "USER_TEMPLATES"]

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
#: Slots that describe a venue rather than constrain the search.
_DETAIL_SLOTS = frozenset(("addr", "phone", "postcode", "signature", "description"))
#: Slots with their own request and select templates.
_ASKED_SLOTS = frozenset(("area", "food", "pricerange"))
#: Values that leave a slot unconstrained.
_ANY = frozenset(("dontcare", "none"))

# -- slot phrases ------------------------------------------------------------------------------
# {v} is the value, {f} the value as a food phrase ("thai food"), {n} the slot's noun.

# Qualifiers follow a noun: "a restaurant [in the north of town] [serving thai food]".
_COMPASS_QUALIFIERS = (
    "in the {v} of town",
    "in the {v}ern part of town",
    "in the {v} part of town",
    "on the {v} side of town",
    "in the {v} area",
)
_AREA_QUALIFIERS: dict[str, tuple[str, ...]] = {
    "centre": (
        "in the centre of town",
        "in the town centre",
        "in the city centre",
        "right in the centre",
        "in the centre area",
    ),
    **dict.fromkeys(("north", "south", "east", "west"), _COMPASS_QUALIFIERS),
}
_QUALIFIERS: dict[str, tuple[str, ...]] = {
    "area": ("in the {v} of town", "in the {v} part of town", "in the {v} area", "in the area of {v}"),
    "food": ("serving {f}", "that serves {f}", "with {v} cuisine", "offering {f}", "specialising in {f}"),
    "pricerange": ("in the {v} price range", "with {v} prices", "in the {v} price bracket", "at {v} prices"),
    "name": ("called {v}", "named {v}", "by the name of {v}"),
}
_GENERIC_QUALIFIERS = ("with {n} {v}", "whose {n} is {v}", "where the {n} is {v}")
_DONTCARE_QUALIFIERS: dict[str, tuple[str, ...]] = {
    "area": ("in any part of town", "anywhere in town", "in any area", "in whatever part of town"),
    "food": ("serving any kind of food", "with any type of cuisine", "serving any food", "of any food type"),
    "pricerange": ("in any price range", "at any price", "of any price range", "whatever the price"),
}
_GENERIC_DONTCARE_QUALIFIERS = ("with any {n}", "of any {n}", "whatever the {n}")

# Clauses make a statement about an offered venue: "it is in the north of town".
_AREA_CLAUSES = ("it is {q}", "it is located {q}", "you will find it {q}")
_CLAUSES: dict[str, tuple[str, ...]] = {
    "food": ("it serves {f}", "they serve {f}", "it offers {v} cuisine", "it specialises in {f}", "the food is {v}"),
    "pricerange": ("it is in the {v} price range", "the prices are {v}", "it has {v} prices",
                   "it is in the {v} price bracket"),
    "name": ("it is called {v}", "its name is {v}", "the name is {v}"),
    "addr": ("the address is {v}", "it is located at {v}", "you can find it at {v}", "it is on {v}"),
    "phone": ("the phone number is {v}", "you can call them on {v}", "their phone number is {v}",
              "you can reach them on {v}"),
    "postcode": ("the postcode is {v}", "its postcode is {v}", "the post code is {v}", "it has the postcode {v}"),
    "signature": ("their signature dish is {v}", "they are known for their {v}", "the house speciality is {v}",
                  "you should try the {v}"),
}
_GENERIC_CLAUSES = ("its {n} is {v}", "the {n} is {v}")
_DONTCARE_CLAUSES = ("any {n} is fine", "the {n} does not matter")
_NEGATED_CLAUSES = ("its {n} is not {v}", "the {n} is not {v}")
_UNKNOWN_CLAUSES = ("I don't know the {n}", "I do not have the {n}", "the {n} is not known to me")

#: The system's sentence templates per act type. Placeholders: ``{name}`` venue name,
#: ``{q}`` slot qualifiers ("serving thai food in the north of town"), ``{c}`` and
#: ``{facts}`` clauses ("it serves thai food and it is in the north of town"), ``{x}``
#: (empty or a space and qualifiers), ``{excluded}`` / ``{only}`` the excluded venues,
#: ``{nouns}`` slot nouns, ``{a}`` / ``{b}`` the alternatives of a select, ``{desc}`` a
#: venue's description.
SYSTEM_TEMPLATES: dict[str, tuple[str, ...]] = {
    "hello": (
        "Hello, welcome to the Cambridge restaurant system. How may I help you?",
        "Hi! I can help you find a restaurant in Cambridge. What are you looking for?",
        "Welcome to the restaurant information service. What kind of place would you like?",
        "Hello, I can help you find a place to eat. What do you have in mind?",
        "Good day, this is the Cambridge restaurant system. How can I help?",
    ),
    "bye": (
        "Thank you for using this system, goodbye.",
        "Goodbye, and enjoy your meal!",
        "Thanks for calling. Goodbye.",
        "Thank you, goodbye.",
        "Have a nice day, goodbye.",
    ),
    "reqmore": (
        "Can I help you with anything else?",
        "Is there anything else I can do for you?",
        "Would you like to know anything else?",
        "Is there anything more I can help with?",
        "Can I help you with something else?",
    ),
    "repeat": (
        "Sorry, could you repeat that?",
        "I'm sorry, I didn't catch that. Could you say it again?",
        "Could you please repeat that?",
        "Sorry, I did not understand. Can you say that again?",
        "Pardon? Could you repeat that, please?",
    ),
    "restart": (
        "Let's start again. What kind of restaurant are you looking for?",
        "OK, starting over. How can I help you?",
        "Let us begin again. What are you looking for?",
        "Alright, let's start from the beginning. What would you like?",
        "Starting again. What kind of place do you have in mind?",
    ),
    "request_area": (
        "What part of town do you have in mind?",
        "Which area would you like?",
        "Where in town would you like to eat?",
        "Is there a particular part of town you prefer?",
        "Which part of town are you interested in?",
    ),
    "request_food": (
        "What kind of food would you like?",
        "What type of cuisine are you looking for?",
        "What sort of food do you fancy?",
        "Is there a particular type of food you would like?",
        "Which kind of food do you prefer?",
    ),
    "request_pricerange": (
        "Would you like something in the cheap, moderate, or expensive price range?",
        "What price range are you looking for?",
        "How much would you like to spend?",
        "Do you have a price range in mind?",
        "Are you looking for something cheap, moderate or expensive?",
    ),
    "request": (
        "What {nouns} would you like?",
        "Which {nouns} are you looking for?",
        "Do you have a preference for the {nouns}?",
        "Could you tell me the {nouns} you want?",
        "What {nouns} do you have in mind?",
    ),
    "request_any": (
        "What are you looking for?",
        "What can I help you with?",
        "What would you like?",
        "How can I help you?",
    ),
    "confirm": (
        "You are looking for a restaurant {q}, right?",
        "Let me confirm: you want a place {q}?",
        "Did you say you are looking for a restaurant {q}?",
        "So you would like a venue {q}, is that right?",
        "Just to check, you want something {q}?",
    ),
    "confirm_slots": (
        "Could you confirm the {nouns}?",
        "Can you confirm the {nouns}, please?",
        "Could you tell me the {nouns} again?",
    ),
    "select_area": (
        "Would you like something in the {a} or the {b} of town?",
        "Do you prefer the {a} or the {b} part of town?",
        "Which area would you prefer, the {a} or the {b}?",
        "Should it be in the {a} or in the {b}?",
        "Sorry, did you want the {a} or the {b} of town?",
    ),
    "select_food": (
        "Would you like {a} or {b} food?",
        "Do you prefer {a} food or {b} food?",
        "Sorry, was that {a} or {b} food?",
        "Which would you prefer, {a} or {b} cuisine?",
        "Are you looking for {a} or {b} food?",
    ),
    "select_pricerange": (
        "Would you like something in the {a} or the {b} price range?",
        "Do you prefer {a} or {b} prices?",
        "Should it be {a} or {b}?",
        "Which price range would you like, {a} or {b}?",
        "Sorry, are you looking for something {a} or {b}?",
    ),
    "select": (
        "Would you like a restaurant {a} or one {b}?",
        "Do you prefer a place {a} or one {b}?",
        "Sorry, should it be a restaurant {a} or one {b}?",
        "Are you looking for something {a} or something {b}?",
    ),
    "offer": (
        "{name} is a nice place {q}.",
        "{name} is a great restaurant {q}.",
        "How about {name}? It is a restaurant {q}.",
        "{name} is a nice place, {c}.",
        "I can recommend {name}: {c}.",
        "{name} would be a good choice, {c}.",
    ),
    "offer_name": (
        "{name} is a nice place.",
        "How about {name}?",
        "I can recommend {name}.",
        "{name} would be a good choice.",
        "You might like {name}.",
    ),
    "details": (
        "Sure, here are the details of {name}: {facts}.",
        "For {name}, {facts}.",
        "Here is what I know about {name}: {facts}.",
        "Of course. As for {name}, {facts}.",
        "I have the details of {name}: {facts}.",
    ),
    "description": (
        "Here is a description of {name}: {desc}",
        "This is how {name} is described: {desc}",
        "About {name}: {desc}",
        "Sure, {name}. {desc}",
        "Let me tell you about {name}. {desc}",
    ),
    "description_after": (
        "{desc}",
        "Here is a description: {desc}",
        "In a few words: {desc}",
        "A short description: {desc}",
    ),
    "no_venue": (
        "I am sorry but there is no restaurant {q}.",
        "Sorry, I could not find any place {q}.",
        "Unfortunately there is no venue {q}.",
        "I'm afraid there is no restaurant {q}.",
        "I have checked, but there is no restaurant {q}.",
    ),
    "no_other_venue": (
        "I am sorry, apart from {excluded} there is no restaurant{x}.",
        "Sorry, there is no restaurant{x} other than {excluded}.",
        "Unfortunately, besides {excluded} I have no other place{x}.",
        "I'm afraid {excluded} {only}{x}.",
        "There is nothing else{x}, only {excluded}.",
    ),
}

#: The simulated user's sentence templates per act type (placeholders as for the system,
#: plus ``{wrong}`` the values a deny rejects and ``{noun}`` one slot's noun).
USER_TEMPLATES: dict[str, tuple[str, ...]] = {
    "hello": ("Hello.", "Hi.", "Hello there."),
    "looking": (
        "I'm looking for a restaurant{x}.",
        "I want to find a restaurant{x}.",
        "Can you help me find a restaurant{x}?",
        "I need a place to eat{x}.",
    ),
    "inform": (
        "I want a restaurant {q}.",
        "I'm looking for a place {q}.",
        "Something {q}, please.",
        "I'd like a restaurant {q}.",
    ),
    "dontcare": ("I don't care about the {noun}.", "Any {noun} is fine.", "The {noun} doesn't matter."),
    "dontcare_any": ("I don't mind.", "It doesn't matter.", "Anything is fine."),
    "affirm": ("Yes.", "Yes, that's right.", "Right."),
    "affirm_items": ("Yes, a restaurant {q}.", "Yes, I want a place {q}.", "That's right, something {q}."),
    "negate": ("No.", "No, not really.", "No, thanks."),
    "negate_items": ("No, I want a restaurant {q}.", "No, I'm looking for a place {q}.", "No, something {q}."),
    "deny": (
        "No, not {wrong}. I want a place {q}.",
        "Not {wrong}; I said a restaurant {q}.",
        "No, I didn't say {wrong}, I want something {q}.",
    ),
    "deny_only": ("No, not {wrong}.", "Not {wrong}.", "I didn't say {wrong}."),
    "request": ("What is the {nouns}?", "Could you give me the {nouns}?", "Can I have the {nouns}, please?"),
    "request_named": (
        "What is the {nouns} of {name}?",
        "Could you give me the {nouns} of {name}?",
        "Can I have the {nouns} for {name}, please?",
    ),
    "request_any": ("Can you tell me more?", "What else can you tell me?", "Tell me more about it, please."),
    "reqalts": ("Is there anything else?", "Do you have something else?", "What else do you have?"),
    "reqalts_items": (
        "Is there anything else {q}?",
        "Do you have something else {q}?",
        "How about a place {q} instead?",
    ),
    "confirm": ("Is that a place {q}?", "Is it a restaurant {q}?", "Just to check, is it a restaurant {q}?"),
    "thankyou": ("Thank you.", "Thanks.", "Great, thank you."),
    "ack": ("Okay.", "Alright.", "Fine."),
    "bye": ("Thank you, goodbye.", "Thanks, bye.", "That's all, goodbye."),
    "silence": ("Hmm.", "Um.", "Er."),
    "repeat": ("Could you repeat that?", "Sorry, what did you say?", "Pardon?"),
}
#: User intents said as a short sentence of their own before the rest of a combined act.
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
