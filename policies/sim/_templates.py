"""The words of the template NLG: slot nouns, qualifier and clause patterns, and the templates of
every system and user act (:data:`SYSTEM_TEMPLATES`, :data:`USER_TEMPLATES`).

Data only; :class:`policies.sim.nlg.TemplateNLG` chooses among them (private to it:
:mod:`policies.sim.nlg` exports the two template tables).
"""

from __future__ import annotations

__all__ = ["SYSTEM_TEMPLATES", "USER_TEMPLATES"]

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
