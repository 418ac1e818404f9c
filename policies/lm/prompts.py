"""Prompts for language-model policies: a context as chat messages or plain text, and acts read back.

A collected context (C_col) carries its dialogue's texts before the decision in
``metadata["history"]`` (:func:`dialogue_history`); they are taken to alternate between the
user and the system and to end with the user's turn (a context is the moment after the user
spoke). A generated context (C_gen) has no history: the prompt shows its belief state as text
instead (:func:`belief_text`). With ``source="auto"`` (the default of :class:`PromptTemplate`)
a context with a non-empty history is shown by its history, any other by its belief.

Where the model's tokenizer has a chat template, the prompt is a list of chat messages (the
instruction as the system message, the history as user and assistant turns, or the belief as
one user message) rendered by that template with the generation prompt added, within bounds of
time and memory (:class:`simscore.models.chat_templates.ChatTemplate`); otherwise it is plain text::

    <instruction>

    Dialogue so far:
    User: I want thai food.
    System: Which part of town?
    User: The north, please.
    System:

A context read from an agent transcript (:mod:`contexts.transcripts`) also carries its
messages as chat completions writes them (``metadata["messages"]``) and its tools' JSON schemas
(``metadata["tools"]``): its chat prompt is those messages (:func:`transcript_messages`;
the instruction is not added, the transcript has its own system message), rendered with the
tools as the chat template's ``tools`` (as ``apply_chat_template(messages, tools=...)``), the
calls' arguments as objects as Hugging Face templates expect them. Its plain prompt is its
history lines.

Every wording is a field of the frozen dataclass :class:`PromptTemplate`; for anything else
subclass it and override :meth:`PromptTemplate.messages` (chat) or :meth:`PromptTemplate.plain`.

Asked for acts (``act_output=True``), the instruction adds :data:`DEFAULT_ACT_INSTRUCTION`
(or the template's ``act_instruction``) and :func:`act_from_output` reads the answer: the first
non-empty line, parsed with :meth:`Act.parse <simscore.acts.Act.parse>`, or None when it does
not parse (nothing is repaired or guessed).

Examples
--------
>>> from types import SimpleNamespace
>>> from contexts.belief import BeliefState
>>> context = SimpleNamespace(id="c1", belief=BeliefState(), metadata={"history": ("Hello.", "Thai food, please.")})
>>> print(PromptTemplate(instruction="Reply to the user.").plain(context))
Reply to the user.
<BLANKLINE>
Dialogue so far:
System: Hello.
User: Thai food, please.
System:
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from simscore.acts import Act
from simscore.checks import check_bool, check_choice
from simscore.errors import ActParseError, InvalidContextError, UnsupportedModelError
from simscore.models.chat_templates import ChatTemplate

if TYPE_CHECKING:
    from contexts.belief import BeliefState

__all__ = [
    "PromptTemplate",
    "belief_text",
    "dialogue_history",
    "transcript_messages",
    "transcript_tools",
    "act_from_output",
    "DEFAULT_INSTRUCTION",
    "DEFAULT_ACT_INSTRUCTION",
]

#: What the model is asked to do, by default (the system message of a chat prompt).
DEFAULT_INSTRUCTION = (
    "You are a dialogue system that helps the user find a restaurant in Cambridge. "
    "Write the system's next turn: one or two short sentences."
)
#: Added to the instruction when a policy is asked for acts.
DEFAULT_ACT_INSTRUCTION = (
    "Answer with one dialogue act on one line, written as intent(slot=value,...), for example "
    'hello(), request(food), confirm(area=north), select(pricerange=cheap,pricerange=expensive), '
    'inform(name="the golden wok",food=chinese,area=north), reqmore() or bye().'
)
#: Values below this probability are left out of a belief's text.
_SHOWN_PROBABILITY = 0.01
#: At most this many values per slot in a belief's text (the most probable ones).
_SHOWN_VALUES = 3


def act_from_output(text: str) -> Act | None:
    """The act a model wrote: its first non-empty line parsed as an act, or None if it does not parse.

    Examples
    --------
    >>> act_from_output("  request(food)\\nUser: thai")
    Act.parse('request(food)')
    >>> act_from_output("What kind of food would you like?") is None
    True
    """
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    try:
        return Act.parse(line)
    except ActParseError:
        return None


def _values(dist: Mapping[str, float], skip: tuple[str, ...] = ()) -> list[tuple[str, float]]:
    """The shown values of a distribution: most probable first (ties in stored order), at most three."""
    ranked = sorted(
        ((v, p) for v, p in dist.items() if v not in skip and p >= _SHOWN_PROBABILITY), key=lambda vp: -vp[1]
    )
    return ranked[:_SHOWN_VALUES]


def _listed(pairs: Sequence[tuple[str, float]], empty: str) -> str:
    return ", ".join(f"{value} {p:.2f}" for value, p in pairs) or empty


def belief_text(belief: BeliefState) -> str:
    """A belief state as lines of text, for a language model's prompt.

    One line per slot of the belief (its values other than ``none`` with probability at least
    0.01, the three most probable, or ``not mentioned``), the user's method and discourse act
    (most probable, with its probability), the requested slots, and the venue last offered
    and whether no venue matched, when the belief says so. Probabilities have two decimals.

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> b = BeliefState(slots={"area": {"north": 0.8}, "food": {"thai": 0.6, "chinese": 0.3}},
    ...                 method={"byconstraints": 1.0}, requested={"phone": 0.9})
    >>> print(belief_text(b))
    area: north 0.80
    food: thai 0.60, chinese 0.30
    method: byconstraints 1.00
    discourse act: none 1.00
    requested: phone 0.90
    """
    lines = [f"{slot}: {_listed(_values(dist, ('none',)), 'not mentioned')}" for slot, dist in belief.slots.items()]
    lines.append(f"method: {_listed(_values(belief.method)[:1], 'none')}")
    lines.append(f"discourse act: {_listed(_values(belief.discourse_act)[:1], 'none')}")
    requested = sorted(((s, p) for s, p in belief.requested.items() if p >= _SHOWN_PROBABILITY), key=lambda sp: -sp[1])
    lines.append(f"requested: {_listed(requested, 'nothing')}")
    if belief.last_offered is not None:
        lines.append(f"last offered: {belief.last_offered}")
    if belief.last_informed_no_venue:
        lines.append("no venue matched the last request")
    return "\n".join(lines)


def dialogue_history(context: Any) -> tuple[str, ...]:
    """The dialogue's texts before ``context``'s decision (``metadata["history"]``; ``()`` if none).

    >>> from types import SimpleNamespace
    >>> dialogue_history(SimpleNamespace(id="c", metadata={"history": ["Hello.", "Thai food."]}))
    ('Hello.', 'Thai food.')
    """
    metadata = getattr(context, "metadata", None)
    history = metadata.get("history", ()) if isinstance(metadata, Mapping) else ()
    if isinstance(history, str) or not all(isinstance(text, str) for text in history):
        raise InvalidContextError(f"context {getattr(context, 'id', context)!r}: metadata 'history' must be a list of strings")
    return tuple(history)


def transcript_messages(context: Any) -> list[dict[str, Any]] | None:
    """A transcript context's messages before its decision (``metadata["messages"]``), or None for
    a context without them; fields without a value are left out.

    >>> from types import SimpleNamespace
    >>> transcript_messages(SimpleNamespace(id="c", metadata={"messages": [
    ...     {"role": "tool", "tool_call_id": None, "content": "{}"}]}))
    [{'role': 'tool', 'content': '{}'}]
    >>> transcript_messages(SimpleNamespace(id="c", metadata={"history": ["Hello."]})) is None
    True
    """
    metadata = getattr(context, "metadata", None)
    messages = metadata.get("messages") if isinstance(metadata, Mapping) else None
    if messages is None:
        return None
    if isinstance(messages, (str, Mapping)) or not isinstance(messages, Sequence) or not all(
        isinstance(message, Mapping) for message in messages
    ):
        raise InvalidContextError(f"context {getattr(context, 'id', context)!r}: metadata 'messages' must be a list of messages")
    chat = []
    for message in messages:
        entry = {key: value for key, value in message.items() if value is not None}
        if "tool_calls" in entry:
            entry["tool_calls"] = [{key: value for key, value in call.items() if value is not None}
                                   for call in entry["tool_calls"] if isinstance(call, Mapping)]
        elif "content" not in entry:
            entry["content"] = ""
        chat.append(entry)
    return chat


def transcript_tools(context: Any) -> list[dict[str, Any]]:
    """A transcript context's tools (``metadata["tools"]``, JSON schemas; ``[]`` if none)."""
    metadata = getattr(context, "metadata", None)
    tools = metadata.get("tools") if isinstance(metadata, Mapping) else None
    if tools is None:
        return []
    if isinstance(tools, (str, Mapping)) or not isinstance(tools, Sequence) or not all(
        isinstance(tool, Mapping) for tool in tools
    ):
        raise InvalidContextError(f"context {getattr(context, 'id', context)!r}: metadata 'tools' must be a list of schemas")
    return [dict(tool) for tool in tools]


def _arguments_as_objects(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with each call's ``arguments`` JSON string as its object (Hugging Face chat
    templates write ``arguments | tojson``); a string that is not a JSON object stays."""
    import json

    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            message = {**message, "tool_calls": [_call_with_object(call, json) for call in calls]}
        out.append(message)
    return out


def _call_with_object(call: dict[str, Any], json: Any) -> dict[str, Any]:
    function = call.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("arguments"), str):
        return call
    try:
        arguments = json.loads(function["arguments"])
    except ValueError:
        return call
    return {**call, "function": {**function, "arguments": arguments}} if isinstance(arguments, dict) else call


@dataclass(frozen=True)
class PromptTemplate:
    """How a context becomes a language model's prompt (see the module docstring).

    Parameters
    ----------
    instruction : str
        What the model is asked to do (the system message of a chat prompt).
    act_instruction : str
        Added to the instruction when the policy asks for acts (``act_output=True``).
    source : {"auto", "history", "belief"}
        What the prompt shows: ``"history"`` the dialogue so far (a context without one is an
        error), ``"belief"`` the belief state as text (:func:`belief_text`), ``"auto"`` the
        history where a context has one, else the belief.
    history_heading, belief_heading : str
        Headings of the plain prompt (the belief heading also starts the chat prompt's belief
        message).
    user_label, system_label : str
        Speaker labels of the plain prompt; it ends with ``system_label + ":"``.
    use_chat_template : bool or None
        Render with the tokenizer's chat template: None (default) where it has one, True
        requires one, False never.
    system_role : bool
        Put the instruction in a system message (default). Some chat templates have no system
        role: False puts it before the first user message instead.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from contexts.belief import BeliefState
    >>> grid_context = SimpleNamespace(id="g1", belief=BeliefState(slots={"food": {"thai": 1.0}}), metadata={})
    >>> template = PromptTemplate(instruction="Reply.")
    >>> template.messages(grid_context)[1]["content"].splitlines()[:4]
    ["The system's belief about the user's goal:", 'food: thai 1.00', 'method: none 1.00', 'discourse act: none 1.00']
    """

    instruction: str = DEFAULT_INSTRUCTION
    act_instruction: str = DEFAULT_ACT_INSTRUCTION
    source: Literal["auto", "history", "belief"] = "auto"
    history_heading: str = "Dialogue so far:"
    belief_heading: str = "The system's belief about the user's goal:"
    user_label: str = "User"
    system_label: str = "System"
    use_chat_template: bool | None = None
    system_role: bool = True

    def __post_init__(self) -> None:
        for field in ("instruction", "act_instruction", "history_heading", "belief_heading", "user_label", "system_label"):
            if not isinstance(getattr(self, field), str):
                raise TypeError(f"PromptTemplate.{field} must be a str, got {type(getattr(self, field)).__name__}")
        check_choice("source", self.source, ("auto", "history", "belief"))
        if self.use_chat_template is not None:
            check_bool("use_chat_template", self.use_chat_template)
        check_bool("system_role", self.system_role)

    def source_of(self, context: Any) -> Literal["history", "belief"]:
        """``"history"`` or ``"belief"``: what the prompt of ``context`` shows."""
        if self.source == "belief":
            return "belief"
        if self.source == "history" or dialogue_history(context) or transcript_messages(context) is not None:
            return "history"
        return "belief"

    def _instruction(self, act_output: bool) -> str:
        return f"{self.instruction} {self.act_instruction}" if act_output else self.instruction

    def _turns(self, context: Any, skip_turns: int) -> list[tuple[str, str]]:
        """``(role, text)`` of the shown history: roles alternate backwards from the last, the user's."""
        history = dialogue_history(context)
        if not history:
            raise InvalidContextError(
                f"context {getattr(context, 'id', context)!r} has no dialogue history (source='history')"
            )
        n = len(history)
        return [("user" if (n - 1 - i) % 2 == 0 else "assistant", text) for i, text in enumerate(history)][skip_turns:]

    def _belief(self, context: Any) -> str:
        belief = getattr(context, "belief", None)
        if belief is None or not hasattr(belief, "slots"):
            raise InvalidContextError(f"context {getattr(context, 'id', context)!r} has no belief state to show")
        return belief_text(belief)

    def messages(self, context: Any, *, act_output: bool = False, skip_turns: int = 0) -> list[dict[str, Any]]:
        """The chat messages (``{"role": ..., "content": ...}``) of ``context``'s prompt (a
        transcript context's: its own, :func:`transcript_messages`).

        ``skip_turns`` leaves out the oldest turns of the history (used when the prompt is too
        long for the model).
        """
        transcript = transcript_messages(context) if self.source_of(context) == "history" else None
        if transcript is not None:  # the transcript's own system message, its turns less the oldest skip_turns
            lead = next((i for i, m in enumerate(transcript) if m.get("role") not in ("system", "developer")),
                        len(transcript))
            return [*transcript[:lead], *transcript[lead:][skip_turns:]]
        if self.source_of(context) == "history":
            body: list[dict[str, Any]] = [{"role": role, "content": text} for role, text in self._turns(context, skip_turns)]
        else:
            body = [{"role": "user", "content": f"{self.belief_heading}\n{self._belief(context)}"}]
        instruction = self._instruction(act_output)
        if self.system_role:
            return [{"role": "system", "content": instruction}, *body]
        if body and body[0]["role"] == "user":
            return [{"role": "user", "content": f"{instruction}\n\n{body[0]['content']}"}, *body[1:]]
        return [{"role": "user", "content": instruction}, *body]

    def plain(self, context: Any, *, act_output: bool = False, skip_turns: int = 0) -> str:
        """The plain-text prompt of ``context`` (for a tokenizer without a chat template)."""
        if self.source_of(context) == "history":
            labels = {"user": self.user_label, "assistant": self.system_label}
            lines = [self.history_heading, *(f"{labels[role]}: {text}" for role, text in self._turns(context, skip_turns))]
        else:
            lines = [self.belief_heading, self._belief(context)]
        return f"{self._instruction(act_output)}\n\n" + "\n".join(lines) + f"\n{self.system_label}:"

    def render(self, context: Any, chat_template: Any = None, *, act_output: bool = False, skip_turns: int = 0) -> str:
        """The prompt as the model reads it: through a chat template where it applies, else :meth:`plain`.

        ``chat_template`` is a :class:`~simscore.models.chat_templates.ChatTemplate`, or a tokenizer (its chat
        template is then rendered by a :class:`~simscore.models.chat_templates.ChatTemplate` made for this one
        prompt: to render many, make one and pass it), or None.
        """
        if not self.chat(chat_template):
            return self.plain(context, act_output=act_output, skip_turns=skip_turns)
        messages = self.messages(context, act_output=act_output, skip_turns=skip_turns)
        tools = transcript_tools(context) if self.source_of(context) == "history" else []
        if tools or transcript_messages(context) is not None:
            messages = _arguments_as_objects(messages)
        if isinstance(chat_template, ChatTemplate):
            return chat_template.render(messages, tools=tools or None)
        with ChatTemplate.of(chat_template) as once:  # type: ignore[union-attr]  # chat() found a template
            return once.render(messages, tools=tools or None)

    def chat(self, chat_template: Any) -> bool:
        """Whether prompts go through ``chat_template`` (a :class:`~simscore.models.chat_templates.ChatTemplate`, a
        tokenizer that may have one, or None)."""
        has_template = isinstance(chat_template, ChatTemplate) or bool(getattr(chat_template, "chat_template", None))
        if self.use_chat_template and not has_template:
            raise UnsupportedModelError("use_chat_template=True, but the tokenizer has no chat template")
        return has_template if self.use_chat_template is None else self.use_chat_template

    def to_json(self) -> dict[str, Any]:
        """Every field, for the responses' provenance."""
        return dataclasses.asdict(self)
