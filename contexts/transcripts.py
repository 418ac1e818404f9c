"""Contexts from the transcripts of tool-calling agents, and the logged agent's responses.

Two inputs are read:

* **OpenAI-style chat transcripts** (:func:`read_chat_transcripts`): JSON Lines, one
  conversation a line, ``{"id": ..., "messages": [...], "tools": [...]}`` with messages of the
  roles ``system`` (or ``developer``), ``user``, ``assistant`` (``content`` and
  ``tool_calls``, arguments a JSON string; or the legacy functions API's one ``function_call``)
  and ``tool`` (``tool_call_id``, ``content``; the legacy ``function`` role alike), the
  tools' JSON schemas in ``tools`` (optional), and optional ``task_id`` and ``trial``; a line
  without ``id`` (a fine-tuning export, τ²-bench's among them) takes its line number as id, and
  one warning and the responses' provenance (``ids``) say so;
* **τ²-bench results** (:func:`read_tau2_results`), in every layout its runner saves
  (:mod:`simscore.io.tau2`): one JSON document (``info``, ``tasks``, ``simulations``), a
  folder (``results.json`` and one file per simulation in ``simulations/``), or a bare list of
  simulations; each with ``id``, ``task_id``, ``trial``, ``messages`` whose tool calls hold
  their arguments as an object, ``reward_info``. The agent's system message is the domain
  policy the file records (τ²-bench wraps it in instructions of its own that the file does not
  hold); the simulated user's own tool calls and their results (``requestor: "user"``), which
  the agent never sees, are left out. The run's τ²-bench (``info.git_commit``, a
  ``format_version``) and a layout other than one document are named in the responses'
  provenance (``tau2``, ``layout``); a simulation without ``task_id`` takes its position as
  task id, and one warning and the provenance (``ids``) say so.

Tool names may hold dots (a namespaced tool's ``server.tool``; the act ``server.tool(...)``
reads back as it is written). Arguments JSON-encoded once more than the input writes them (a
string holding JSON text where τ²-bench writes an object; in chat transcripts, the JSON text of
such a string) are decoded once more, and one warning and the provenance (``arguments``) say
so; a string that is not JSON stays an error. Each reader given the other's file names the
other (``--format tau2`` / ``--format chat``) in its error.

Every assistant message becomes one context: its id ``<conversation>/<k>`` (τ²-bench:
``<task>/<trial>/<k>``) for the ``k``-th assistant turn, an empty belief state, and metadata:
``source`` ``"col"``, ``source_name`` (the input's name), ``dialogue_id`` (the conversation),
``turn_index`` ``k``, ``history`` (the messages before, one line each, ``role: text``, a call
written as its act), ``messages`` (the messages before, as chat-completions messages),
``tools``, ``task_id``, ``trial`` and, from τ²-bench, ``reward``. The same message is the
logged agent's response in that context (:meth:`Response.from_message
<simscore.responses.Response.from_message>`): its calls as the action, its text as the text,
and a reply without calls the act ``reply()`` (``reply_intent``), so that an agent that answers
in words where another calls a tool scores 0 on the action measures.

With ``unit="task"`` a conversation is one context instead (id ``<conversation>``, τ²-bench
``<task>/<trial>``, the history before the agent's first turn), and the agent's response is
its trajectory: every call it made in the conversation, in order, as one act sequence that
keeps its messages (``a();;b();c()``: a message of one call, then one of two). Two
logged agents answer the same turn contexts only while their histories are the same -- up to
the first reply worded differently -- so their logged turns are paired by task, trial and turn
only as "the same step of the same task"; their trajectories answer the same task and compare
as they are (strict, unordered, subset, superset, per_message: the action measures' ``calls``
option; ``per_message`` is agentevals' strict trajectory match, message by message).

Reading is bounded like every reader (:mod:`simscore.io`): lines up to
:data:`~simscore.io.reading.MAX_LINE_LENGTH`, a results file up to :data:`~simscore.io.reading.MAX_FILE_BYTES`,
nesting up to :data:`~simscore.io.reading.MAX_NESTING`, tool calls within the bounds of
:mod:`simscore.tool_arguments` (a turn's calls by its ``MAX_CALLS``, a trajectory's by
:data:`MAX_TRAJECTORY_CALLS`); a bad input is a :class:`~simscore.errors.FileFormatError`
naming the file, the line (or simulation), the message and what is wrong, and a file of
another of simscore's kinds is named as such. A context holds the whole history before it, so
a conversation of ``n`` assistant turns costs ``O(n²)`` in the context file: the contexts of
one conversation hold at most :data:`MAX_HISTORY_CHARACTERS` characters of history together
(split longer conversations), and the contexts of one input at most :data:`MAX_HELD_BYTES`
bytes of memory (estimated: each context's copy of its messages' objects; their texts are
shared), which a results file of 18,000 ordinary τ²-bench simulations (320 MB) holds a tenth of.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from simscore.acts import Act, ActSequence
from simscore.errors import (
    ContextMismatchError,
    FileFormatError,
    InvalidContextError,
    InvalidResponseError,
    ToolCallError,
    excerpt,
    json_excerpt,
)
from simscore.errors import json_kind as _kind
from simscore.io import decode_line, dumps, open_input, parse_json, read_head, read_lines
from simscore.io.formats import FILE_FORMATS, detect_format, kind_mismatch
from simscore.io.tau2 import is_tau2_folder, read_tau2
from simscore.responses import Response, Responses
from simscore.tool_arguments import (
    LIST_MODES,
    MAX_ARGUMENTS_LENGTH,
    MAX_CALLS,
    ListMode,
    read_tool_call,
    tool_call_list,
)

__all__ = ["AgentTranscripts", "PairedTranscripts", "pair_transcripts", "read_chat_transcripts", "read_tau2_results",
           "read_transcripts", "log_hint", "CHAT_TRANSCRIPTS", "TAU2_RESULTS", "MAX_HISTORY_CHARACTERS", "MAX_HELD_BYTES",
           "MAX_TRAJECTORY_CALLS", "UNITS"]

#: What a chat-transcripts file is, in messages.
CHAT_TRANSCRIPTS = "OpenAI-style chat transcripts (JSON Lines, one conversation a line)"
#: What a τ²-bench results file is, in messages.
TAU2_RESULTS = ("tau2-bench results (a JSON document with 'simulations', a list of simulations, or a folder of "
                "results.json and simulations/)")

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")

#: What one context is: an assistant turn (the history before it; the logged reply is the
#: response), or a whole conversation of a task (its opening; the agent's calls over the whole
#: conversation, in order, are one action: its trajectory).
UNITS = ("turn", "task")

#: The most characters of history (the messages' JSON) the contexts of one conversation may hold
#: together: every context holds the whole history before it, so a long conversation costs the
#: square of its length in the context file (256 Mi characters; split such conversations, or keep
#: their ends). Many short conversations are bounded by what they hold in memory, :data:`MAX_HELD_BYTES`.
MAX_HISTORY_CHARACTERS = 2**28
#: The most calls one agent's trajectory (``unit="task"``: every call of one conversation) may
#: hold: 16 turns of the most calls a turn may hold (4,096; a real τ²-bench trajectory has tens).
MAX_TRAJECTORY_CALLS = 16 * MAX_CALLS
#: The most bytes of memory the contexts of one input may hold together (4 GiB), estimated by
#: :func:`_held`: each context holds its own copy of the objects of its history and tools (their
#: texts it shares). A results file of 18,000 ordinary τ²-bench simulations (320 MB) holds about
#: a tenth of it; what breaks it is many conversations, not long ones: read the input in parts.
MAX_HELD_BYTES = 2**32
#: Bytes a context holds, estimated: itself and its metadata; each object or array of its copy
#: of the messages and tools; each reference to a message or a line of history.
_CONTEXT_BYTES, _NODE_BYTES, _REFERENCE_BYTES = 2048, 256, 8
_EMPTY_BELIEF = BeliefState()


@dataclass(frozen=True)
class AgentTranscripts:
    """What a transcript reader gives: the contexts and the logged agent's responses in them.

    Attributes
    ----------
    contexts : ContextSet
        One context per assistant turn, in file order.
    responses : Responses
        The logged agent's response in every context (same ids, same order).
    """

    contexts: ContextSet
    responses: Responses


class _Builder:
    """Contexts and responses of one input, conversation by conversation."""

    def __init__(self, path: Path, *, lists: str, reply_intent: str | None, unit: str = "turn",
                 arguments: str = "string") -> None:
        if lists not in LIST_MODES:
            raise ValueError(f"lists must be one of {', '.join(map(repr, LIST_MODES))}, got {lists!r}")
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {', '.join(map(repr, UNITS))}, got {unit!r}")
        self.unit = unit
        if reply_intent is not None:
            Act(reply_intent)  # an identifier, or ActParseError naming it
        self.path = path
        self.lists: ListMode = lists  # type: ignore[assignment]
        self.reply_intent = reply_intent
        self.contexts: list[Context] = []
        self.responses: list[tuple[str, Response]] = []
        self.seen: dict[str, str] = {}
        self.unnamed = 0  # conversations without an id, named by their line
        self.history_characters = 0  # of the conversation being read
        self.held = 0  # bytes the contexts hold in memory, estimated (_held)
        self.arguments = arguments  # how the input writes a call's arguments: "string" (JSON text) or "object"
        self.decoded: list[str] = []  # the tools whose arguments were JSON-encoded once more, decoded again

    def conversation(self, where: str, line: int | None, dialogue_id: str, prefix: str,
                     messages: Any, tools: Any, extra: dict[str, Any], *, first: int = 1) -> None:
        """Add the contexts and responses of one conversation (its messages numbered from ``first``)."""
        if prefix in self.seen:
            raise FileFormatError(self.path, f"{where} appears twice (first {self.seen[prefix]})", line=line)
        self.seen[prefix] = f"on line {line}" if line is not None else where.partition(" (")[0]
        tools = self._tools(where, line, tools)
        self.history_characters, start = 0, len(self.contexts)
        if not isinstance(messages, list):
            raise FileFormatError(self.path, f"{where}: 'messages' must be a list, got {_kind(messages)}", line=line)
        history: list[dict[str, Any]] = []
        lines: list[str] = []
        size = 0  # characters of the history so far
        turn = 0
        calls: list[dict[str, Any]] = []  # the agent's calls over the conversation (unit "task")
        sizes: list[int] = []  # how many of them each of its messages made
        texts: list[str] = []
        opening: tuple[list[dict[str, Any]], list[str]] | None = None  # the history before its first turn
        for number, message in enumerate(messages, first):
            try:
                normal = _normal_message(message, number, self.arguments, self.decoded)
                if normal is None:
                    continue
                if normal["role"] == "assistant" and self.unit == "task":
                    Response.from_message(normal, lists=self.lists, reply_intent=self.reply_intent)  # checked
                    calls.extend(normal.get("tool_calls", ()))
                    sizes.append(len(normal.get("tool_calls", ())))
                    texts.append(_history_line(normal, self.lists).partition(": ")[2])
                    opening = (history, lines) if opening is None else opening
                    turn += 1
                elif normal["role"] == "assistant":
                    response = Response.from_message(normal, lists=self.lists, reply_intent=self.reply_intent)
                    self._count(where, line, size)
                    context_id = f"{prefix}/{turn}"
                    metadata = {"source": "col", "source_name": self.path.name, "dialogue_id": dialogue_id,
                                "turn_index": turn, "history": lines, "messages": history, "tools": tools, **extra}
                    self.contexts.append(Context(context_id, _EMPTY_BELIEF, metadata))
                    self.responses.append((context_id, response))
                    turn += 1
            except (InvalidResponseError, ToolCallError, InvalidContextError) as exc:
                raise FileFormatError(self.path, f"{where}, message {number}: {exc}", line=line) from None
            history = [*history, normal]
            size += len(dumps(normal))
            lines = [*lines, _history_line(normal, self.lists)] if normal["role"] not in ("system", "developer") else lines
        if opening is not None:
            try:
                self._task(prefix, dialogue_id, opening, (calls, sizes, texts), turn, tools, extra)
            except ToolCallError as exc:
                raise FileFormatError(self.path, f"{where}, its trajectory: {exc.reason} "
                                      "(contexts.transcripts.MAX_TRAJECTORY_CALLS)", line=line) from None
        self._hold(where, line, self.contexts[start:])

    def _task(self, prefix: str, dialogue_id: str, opening: tuple[list[dict[str, Any]], list[str]],
              said: tuple[list[dict[str, Any]], list[int], list[str]], turns: int, tools: list[Any],
              extra: dict[str, Any]) -> None:
        """The context of a whole conversation: its opening, and the agent's calls over it as one action,
        its messages of calls kept (``calls="per_message"`` compares them message by message)."""
        messages, lines = opening
        calls, sizes, texts = said
        self._count(prefix, None, len(dumps(messages)))
        metadata = {"source": "col", "source_name": self.path.name, "dialogue_id": dialogue_id, "turn_index": 0,
                    "history": lines, "messages": messages, "tools": tools, "agent_turns": turns, **extra}
        self.contexts.append(Context(prefix, _EMPTY_BELIEF, metadata))
        if calls:
            action = Act.from_tool_calls(calls, lists=self.lists, max_calls=MAX_TRAJECTORY_CALLS)
            made = [size for size in sizes if size]  # its messages of calls
            if len(made) > 1:
                action = ActSequence(action.calls, message_sizes=made)
            self.responses.append((prefix, Response(action)))
        elif self.reply_intent is not None:
            self.responses.append((prefix, Response(Act(self.reply_intent))))
        else:  # no call, no reply act: the agent's words, so that the response is not empty
            self.responses.append((prefix, Response(text="\n".join(texts))))

    def _count(self, where: str, line: int | None, size: int) -> None:
        self.history_characters += size
        if self.history_characters > MAX_HISTORY_CHARACTERS:
            raise FileFormatError(
                self.path, f"{where}: its contexts would hold more than {MAX_HISTORY_CHARACTERS:,} characters of "
                "history (contexts.transcripts.MAX_HISTORY_CHARACTERS; each holds the whole history before it, so a "
                "conversation costs the square of its length): split the long conversation", line=line,
            )

    def _hold(self, where: str, line: int | None, contexts: list[Context]) -> None:
        """Count the memory a conversation's contexts hold; refuse more than MAX_HELD_BYTES for the input."""
        self.held += sum(_held(context) for context in contexts)
        if self.held > MAX_HELD_BYTES:
            conversations = len({context.metadata["dialogue_id"] for context in self.contexts})
            raise FileFormatError(
                self.path, f"{where}: the contexts read so far ({len(self.contexts):,}, of {conversations:,} "
                f"conversations) would hold about {self.held:,} bytes in memory, more than {MAX_HELD_BYTES:,} "
                "(contexts.transcripts.MAX_HELD_BYTES): read the input in parts", line=line,
            )

    def say(self, provenance: dict[str, Any], ids: str, unnamed: str) -> None:
        """Warn once, and note in ``provenance``, where the input was read by a fallback: conversations
        without an id (``ids`` and ``unnamed`` say how they were named), arguments encoded twice."""
        if self.unnamed:
            provenance["ids"] = ids.format(self.unnamed)
            warnings.warn(f"{self.path}: {unnamed.format(self.unnamed)}", stacklevel=3)
        if self.decoded:
            shown = ", ".join(sorted({excerpt(name, 40) for name in self.decoded})[:3])
            provenance["arguments"] = f"{len(self.decoded)} tool call(s) with arguments JSON-encoded twice, decoded again"
            warnings.warn(f"{self.path}: {len(self.decoded):,} tool call(s) hold their arguments JSON-encoded twice "
                          f"(a string holding JSON text; {shown}): decoded once more", stacklevel=3)

    def _tools(self, where: str, line: int | None, tools: Any) -> list[Any]:
        if tools is None:
            return []
        if not isinstance(tools, list) or not all(isinstance(tool, Mapping) for tool in tools):
            raise FileFormatError(self.path, f"{where}: 'tools' must be a list of tool schemas (objects), got "
                                  f"{excerpt(tools, 60)}", line=line)
        names = {_tool_name(tool) for tool in tools}
        if self.reply_intent is not None and self.reply_intent in names:
            raise FileFormatError(self.path, f"{where}: a tool is named {self.reply_intent!r}, the act of a reply "
                                  "without calls; choose another reply intent", line=line)
        return tools

    def result(self, name: str, policy: str, provenance: dict[str, Any], built: dict[str, Any]) -> AgentTranscripts:
        if not self.contexts:
            raise FileFormatError(self.path, "no assistant message: no context to build")
        built = {**built, "lists": self.lists, "reply_intent": self.reply_intent}
        if self.unit != "turn":  # the turn contexts' hashes stay those of earlier versions
            built["unit"] = self.unit
        contexts = ContextSet(self.contexts, name=name, built=built)
        return AgentTranscripts(contexts, Responses(self.responses, policy=policy, provenance=provenance))


def _held(context: Context) -> int:
    """The bytes ``context`` holds in memory, estimated (:data:`MAX_HELD_BYTES`): its texts are shared."""
    metadata = context.metadata
    stack: list[Any] = [metadata.get("messages", ()), metadata.get("tools", ())]
    nodes = 0
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            nodes += 1
            stack.extend(item for item in value.values() if isinstance(item, (Mapping, tuple)))
        elif isinstance(value, tuple):
            nodes += 1
            stack.extend(item for item in value if isinstance(item, (Mapping, tuple)))
    references = len(metadata.get("messages", ())) + len(metadata["history"])
    return _CONTEXT_BYTES + _NODE_BYTES * nodes + _REFERENCE_BYTES * references


def _tool_name(tool: Mapping[str, Any]) -> Any:
    function = tool.get("function")
    return function.get("name") if isinstance(function, Mapping) else tool.get("name")


def _normal_message(message: Any, number: int, arguments: str = "string",
                    decoded: list[str] | None = None) -> dict[str, Any] | None:
    """A message as chat completions writes it, or None for what the agent never sees (a user's own tool use).

    ``arguments`` is how the input writes a call's arguments (``"string"``: JSON text, chat
    completions; ``"object"``: τ²-bench); arguments JSON-encoded once more than that are decoded
    again, and their tools' names appended to ``decoded``.
    """
    if not isinstance(message, Mapping):
        raise InvalidResponseError(f"a message must be an object, got {_kind(message)}")
    role = message.get("role")
    if role not in _ROLES:
        raise InvalidResponseError(f"role {excerpt(role, 40)} is not one of {', '.join(_ROLES)}")
    if message.get("requestor") == "user" and role == "tool":
        return None
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise InvalidResponseError(f"'content' must be text, null or a list of parts, got {_kind(content)}")
    if role in ("tool", "function"):  # "function": the legacy functions API's result, named, without an id
        call_id = message.get("tool_call_id", message.get("id"))
        return {"role": "tool", "tool_call_id": call_id if isinstance(call_id, str) else None, "content": content}
    normal: dict[str, Any] = {"role": role, "content": content}
    calls = message.get("tool_calls")
    legacy = message.get("function_call")
    if legacy is not None and role == "assistant":  # the legacy functions API: one call, arguments a JSON string
        if calls:
            raise InvalidResponseError("an assistant message holds both 'tool_calls' and the legacy 'function_call'")
        calls = [legacy]
    if calls and role == "assistant":
        normal["tool_calls"] = [_normal_call(call, arguments, decoded) for call in tool_call_list(calls)]
    elif calls and role == "user" and content is None:
        return None  # τ²-bench: the simulated user's own tool call
    return normal


def _normal_call(call: Any, written: str = "string", decoded: list[str] | None = None) -> dict[str, Any]:
    """A call as chat completions writes it (arguments a JSON string), checked by :func:`read_tool_call`."""
    function: Any = call.get("function") if isinstance(call, Mapping) else None
    body: Any = function if isinstance(function, Mapping) else call
    inner = _encoded_twice(body.get("arguments"), written) if isinstance(body, Mapping) else None
    if inner is not None and body is function:  # read as the input should have written it
        call = {**call, "function": {**body, "arguments": inner}}
        body = call["function"]
    elif inner is not None:
        call = body = {**call, "arguments": inner}
    name = read_tool_call(call).name
    if inner is not None and decoded is not None:
        decoded.append(name)
    arguments = body.get("arguments")
    if not isinstance(arguments, str):
        arguments = dumps({} if arguments is None else arguments)
    call_id = call.get("id", call.get("call_id"))
    return {"id": call_id if isinstance(call_id, str) else None, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def _encoded_twice(arguments: Any, written: str) -> str | None:
    """The JSON text of arguments JSON-encoded once more than the input writes them, else None.

    Chat completions write arguments as JSON text (``'{"id": 7}'``); τ²-bench as an object. A
    string there (τ²-bench), or JSON text of a string there (chat: ``'"{\\"id\\": 7}"'``), that
    holds a JSON object is its text; anything else is left for :func:`read_tool_call` to name.

    >>> _encoded_twice('{"id": 7}', "object"), _encoded_twice(json.dumps('{"id": 7}'), "string")
    ('{"id": 7}', '{"id": 7}')
    >>> _encoded_twice('{"id": 7}', "string") is None, _encoded_twice('"hello"', "string") is None
    (True, True)
    """
    if not isinstance(arguments, str) or not arguments or len(arguments) > MAX_ARGUMENTS_LENGTH:
        return None  # read_tool_call names what is wrong with them, if anything
    if written == "string":
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
        if not isinstance(arguments, str):
            return None
    try:
        return arguments if isinstance(json.loads(arguments), dict) else None
    except (ValueError, RecursionError):
        return None if written == "string" else arguments  # τ²-bench: a string is text to read, and name if not JSON


def _history_line(message: Mapping[str, Any], lists: ListMode) -> str:
    text = message.get("content")
    if isinstance(text, list):
        text = "\n".join(str(part.get("text", "")) for part in text if isinstance(part, Mapping))
    parts = [text] if text else []
    if message.get("tool_calls"):
        parts.append(str(Act.from_tool_calls(message["tool_calls"], lists=lists)))
    return f"{message['role']}: {' '.join(parts)}"


def _object(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (τ²-bench's optional parts)."""
    return value if isinstance(value, dict) else {}


def _label(value: Any, what: str, where: str, path: Path, line: int | None) -> str:
    """An id field as a string: a non-empty string, or an integer (τ²-bench's task ids are either)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise FileFormatError(path, f"{where}: {what} must be a non-empty string or an integer, got {json_excerpt(value, 60)}",
                              line=line)
    return str(value)


def _trial(value: Any, where: str, path: Path, line: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FileFormatError(path, f"{where}: 'trial' must be a non-negative integer, got {json_excerpt(value, 60)}", line=line)
    return value


def read_chat_transcripts(
    path: str | os.PathLike[str], *, name: str | None = None, policy: str | None = None,
    lists: ListMode = "ordered", reply_intent: str | None = "reply", unit: str = "turn",
) -> AgentTranscripts:
    """Contexts and responses from OpenAI-style chat transcripts (JSON Lines; see the module).

    Parameters
    ----------
    path : path-like
        Read once from its start (a pipe works).
    name : str, optional
        The context set's name (default: the file name without its suffix).
    policy : str, optional
        The responses' policy name (default: the file name without its suffix).
    lists : {"ordered", "set"}
        How list arguments become items (:meth:`Act.from_tool_calls <simscore.acts.Act.from_tool_calls>`).
    reply_intent : str or None
        The act of an assistant reply without calls (default ``reply``; None: no action).
    unit : {"turn", "task"}
        One context per assistant turn (default), or one per conversation (``"task"``: id
        ``<conversation>``, τ²-bench ``<task>/<trial>``; the history before the agent's first
        turn; the response is every call the agent made in the conversation, in order, as one
        act sequence that keeps its messages -- its trajectory -- or ``reply()`` when it made
        none; metadata
        ``agent_turns`` counts its turns). Two logged agents' turns answer different histories
        once their words differ; their trajectories answer the same task.

    Raises
    ------
    FileFormatError
        Naming the file, the line, the message and the problem.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "chats.jsonl"
    >>> conversation = {"id": "c1", "messages": [
    ...     {"role": "user", "content": "Where is order 7?"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "type": "function",
    ...      "function": {"name": "get_order", "arguments": '{"order_id": 7}'}}]},
    ...     {"role": "tool", "tool_call_id": "t1", "content": '{"status": "shipped"}'},
    ...     {"role": "assistant", "content": "It has shipped."}]}
    >>> _ = path.write_text(json.dumps(conversation) + "\\n")
    >>> read = read_chat_transcripts(path)
    >>> read.contexts.ids, [str(a) for a in read.responses.actions()], read.responses["c1/1"].text
    (('c1/0', 'c1/1'), ['get_order(order_id=7)', 'reply()'], 'It has shipped.')
    >>> read.contexts["c1/1"].metadata["history"]
    ('user: Where is order 7?', 'assistant: get_order(order_id=7)', 'tool: {"status": "shipped"}')
    """
    p = Path(path)
    builder = _Builder(p, lists=lists, reply_intent=reply_intent, unit=unit)
    digest = hashlib.sha256()
    if is_tau2_folder(p):
        raise _hinted(FileFormatError(p, f"a folder, where {CHAT_TRANSCRIPTS} were expected"), b"", "tau2")
    head, stream = read_head(open_input(p, digest=digest), 4096)
    with stream:
        found = detect_format(head.decode("utf-8", "replace"))
        if found in FILE_FORMATS:
            raise FileFormatError(p, kind_mismatch(found, CHAT_TRANSCRIPTS), line=1)
        try:
            for number, raw in read_lines(stream, p):
                line = decode_line(p, raw.removeprefix(codecs.BOM_UTF8) if number == 1 else raw, number)
                if not line.strip():
                    continue
                record = parse_json(line, p, line=number)
                _chat_conversation(builder, p, number, record)
        except FileFormatError as exc:
            raise _hinted(exc, head, "tau2") from None
    stem = p.name.split(".")[0] or "transcripts"
    provenance = {"source": p.name, "format": "openai-chat-jsonl", "sha256": digest.hexdigest()}
    builder.say(provenance, "line numbers: {} conversation(s) without 'id'",
                "{:,} conversation(s) without 'id' (a fine-tuning export?) take their line number as id")
    return builder.result(name or stem, policy or stem, provenance, {"importer": "openai-chat", "source": p.name})


#: What the start of a τ²-bench results file holds (its run's info, a simulation's fields), and a chat transcript's.
_TAU2_MARKS = (b'"git_commit"', b'"agent_info"', b'"environment_info"', b'"termination_reason"', b'"simulations"')
_CHAT_MARKS = (b'"messages"',)


def _head(path: Path) -> bytes:
    """The first 4 KiB of a regular file (to tell what it looks like, after an error), else nothing."""
    if not path.is_file():
        return b""
    with path.open("rb") as handle:
        return handle.read(4096)


def _hinted(exc: FileFormatError, head: bytes, other: str) -> FileFormatError:
    """``exc``, with a hint where the input (its first bytes ``head``; a folder: none) looks like the ``other`` kind."""
    if other == "tau2" and (not head or any(mark in head for mark in _TAU2_MARKS)):
        hint = "tau2-bench results: read them with --format tau2 (contexts.transcripts.read_tau2_results)"
    elif other == "chat" and any(mark in head for mark in _CHAT_MARKS) and not any(m in head for m in _TAU2_MARKS):
        hint = "chat transcripts (one conversation a line): read them with --format chat (read_chat_transcripts)"
    else:
        return exc
    return FileFormatError(exc.path, f"{exc.reason}; this looks like {hint}", line=exc.line)


def log_hint(exc: FileFormatError, path: str | os.PathLike[str]) -> FileFormatError:
    """``exc`` (a file read as something else failed), saying so where ``path`` looks like an agent log:
    chat transcripts (``--format chat``) or τ²-bench results (``--format tau2``); else ``exc`` itself."""
    head = _head(Path(path))
    if not head:
        return exc
    hinted = _hinted(exc, head, "chat")
    return _hinted(exc, head, "tau2") if hinted is exc and any(m in head for m in _TAU2_MARKS) else hinted


def _chat_conversation(builder: _Builder, path: Path, line: int, record: Any) -> None:
    if not isinstance(record, dict):
        raise FileFormatError(path, f"expected a conversation (a JSON object with 'id' and 'messages'), got {_kind(record)}",
                              line=line)
    if "id" in record:
        conversation = _label(record["id"], "'id'", "conversation", path, line)
    else:  # τ²-bench's fine-tuning export and other training sets: the line names the conversation
        conversation = str(line)
        builder.unnamed += 1
    where = f"conversation {excerpt(conversation, 60)}"
    extra: dict[str, Any] = {}
    if record.get("task_id") is not None:
        extra["task_id"] = _label(record["task_id"], "'task_id'", where, path, line)
    trial = _trial(record.get("trial"), where, path, line)
    if trial is not None:
        extra["trial"] = trial
    if "messages" not in record:
        raise FileFormatError(path, f"{where} has no 'messages'", line=line)
    builder.conversation(where, line, conversation, conversation, record["messages"], record.get("tools"), extra)


def read_tau2_results(
    path: str | os.PathLike[str], *, name: str | None = None, policy: str | None = None,
    lists: ListMode = "ordered", reply_intent: str | None = "reply", unit: str = "turn",
) -> AgentTranscripts:
    """Contexts and responses from τ²-bench results: a results file, a results folder or a list (see the module).

    Parameters are those of :func:`read_chat_transcripts`; ``path`` is a results file (one JSON
    document, or a bare list of simulations), a results folder (``results.json`` and
    ``simulations/``) or its ``results.json`` (:mod:`simscore.io.tau2`). The policy's name
    defaults to the agent the file records (``info.agent_info``: its ``llm``, or its
    ``implementation``).

    Raises
    ------
    FileFormatError
        Naming the file, the simulation (its position, task and trial; its file in a folder),
        the message and the problem.
    """
    p = Path(path)
    try:
        results = read_tau2(p, expected=TAU2_RESULTS)
    except FileFormatError as exc:
        raise _hinted(exc, _head(p), "chat") from None
    info = results.info
    environment, agent, user = (_object(info.get(key)) for key in ("environment_info", "agent_info", "user_info"))
    tools = environment.get("tool_defs")
    if isinstance(tools, Mapping):
        tools = list(tools.values())
    builder = _Builder(p, lists=lists, reply_intent=reply_intent, unit=unit, arguments="object")
    for position, simulation in enumerate(results.simulations, 1):
        _tau2_simulation(builder, p, results.where(position), position, simulation, tools, environment.get("policy"))
    domain = environment.get("domain_name") if isinstance(environment.get("domain_name"), str) else None
    agent_name = next((agent[key] for key in ("llm", "implementation") if isinstance(agent.get(key), str)), None)
    stem = p.name.split(".")[0] or "tau2"
    provenance: dict[str, Any] = {
        "source": p.name, "format": "tau2-results", "sha256": results.sha256,
        "domain": domain, "agent": {k: v for k, v in agent.items() if isinstance(v, (str, int, float, bool))},
    }
    if results.layout != "document":
        provenance["layout"] = results.layout
    if results.version:
        provenance["tau2"] = results.version
    builder.say(provenance, "positions: {} simulation(s) without 'task_id'",
                "{:,} simulation(s) without 'task_id' take their position in the file as task id")
    built = {"importer": "tau2", "source": p.name, "domain": domain,
             "user_llm": user.get("llm") if isinstance(user.get("llm"), str) else None,
             "git_commit": results.version.get("git_commit")}
    if results.layout != "document":
        built["layout"] = results.layout
    return builder.result(name or stem, policy or agent_name or stem, provenance, built)


def _tau2_simulation(builder: _Builder, path: Path, where: str, position: int, simulation: Any, tools: Any,
                     policy: Any) -> None:
    if not isinstance(simulation, dict):
        raise FileFormatError(path, f"{where}: expected an object, got {_kind(simulation)}")
    if "task_id" not in simulation:
        task = str(position)  # a simulation without a task: its position names it, and a warning says so
        builder.unnamed += 1
    else:
        task = _label(simulation.get("task_id"), "'task_id'", where, path, None)
    trial = _trial(simulation.get("trial", 0), where, path, None) or 0
    where = f"{where[:-1]}; task {excerpt(task, 60)}, trial {trial})" if where.endswith(")") else (
        f"{where} (task {excerpt(task, 60)}, trial {trial})")
    given = simulation.get("id")
    dialogue = given if isinstance(given, str) and given else f"{task}/{trial}"
    reward_info = simulation.get("reward_info")
    reward = reward_info.get("reward") if isinstance(reward_info, dict) else None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        reward = None
    messages = simulation.get("messages")
    system = simulation.get("policy") if isinstance(simulation.get("policy"), str) else policy
    first = 1
    if isinstance(messages, list) and isinstance(system, str):  # the policy is message 0: the file's keep their numbers
        messages, first = [{"role": "system", "content": system}, *messages], 0
    extra = {"task_id": task, "trial": trial, "reward": reward}
    builder.conversation(where, None, dialogue, f"{task}/{trial}", messages, tools, extra, first=first)


def read_transcripts(
    path: str | os.PathLike[str], *, kind: str | None = None, name: str | None = None, policy: str | None = None,
    lists: ListMode = "ordered", reply_intent: str | None = "reply", unit: str = "turn",
) -> AgentTranscripts:
    """:func:`read_tau2_results` for ``kind="tau2"`` (default for a ``.json`` file), else :func:`read_chat_transcripts`."""
    if kind not in (None, "chat", "tau2"):
        raise ValueError(f"kind must be 'chat', 'tau2' or None, got {kind!r}")
    chosen = kind or ("tau2" if Path(path).suffix.lower() == ".json" or is_tau2_folder(path) else "chat")
    reader = read_tau2_results if chosen == "tau2" else read_chat_transcripts
    return reader(path, name=name, policy=policy, lists=lists, reply_intent=reply_intent, unit=unit)


@dataclass(frozen=True)
class PairedTranscripts:
    """Two logged agents on the contexts both logs have (:func:`pair_transcripts`).

    Attributes
    ----------
    contexts : ContextSet
        The first log's contexts whose ids the second also has, in its order, each with the
        metadata ``same_history`` (whether the second agent was given the same history there)
        and, for turns (``unit="turn"``), ``turns_a``, ``turns_b``: how many turns its dialogue
        has in each log (where one agent goes on after the other stopped, the turns only one
        made are not paired).
    a, b : Responses
        Each agent's logged response in those contexts.
    """

    contexts: ContextSet
    a: Responses
    b: Responses


def pair_transcripts(a: AgentTranscripts, b: AgentTranscripts) -> PairedTranscripts:
    """The contexts two logged agents share by id, marked by whether their histories agree.

    Two agents logged on the same tasks (τ²-bench: the same task, trial and seed) give contexts
    with the same ids, ``<task>/<trial>/<k>`` for their ``k``-th turns; but once one of them
    words a reply differently, the simulated user answers differently and their histories part:
    the second agent's ``k``-th turn then answers another history than the first's. A logged
    comparison therefore pairs the same step of the same task, and only where ``same_history``
    is true the same context (the messages before the turn equal, call ids aside). Compared
    turn by turn, where the two first differ in action is :func:`simscore.analysis.divergence.first_divergence`;
    for the same contexts everywhere, replay the second agent on the first's contexts
    (``simscore respond openai:URL``), or compare whole conversations (``unit="task"``: the
    trajectories answer the same task, and ``same_history`` says whether their openings agree).

    Parameters
    ----------
    a, b : AgentTranscripts
        Read with the same ``unit``, ``lists`` and ``reply_intent``.

    Returns
    -------
    PairedTranscripts

    Raises
    ------
    ContextMismatchError
        The two logs share no context id, or were read with different settings.

    Examples
    --------
    >>> from simscore.acts import Act
    >>> def log(reply, call):
    ...     hello = {"role": "assistant", "content": reply}
    ...     ask = {"role": "user", "content": "Cancel order 7."}
    ...     act = {"role": "assistant", "content": None, "tool_calls": [
    ...         {"id": "x", "type": "function", "function": {"name": call, "arguments": '{"order": 7}'}}]}
    ...     builder = _Builder(Path("log.jsonl"), lists="ordered", reply_intent="reply")
    ...     builder.conversation("conversation t1", 1, "t1", "t1", [hello, ask, act], None, {"task_id": "t1"})
    ...     return builder.result("log", call, {}, {})
    >>> paired = pair_transcripts(log("Hi!", "cancel"), log("Hello!", "get_order"))
    >>> [(c.id, c.metadata["same_history"]) for c in paired.contexts]
    [('t1/0', True), ('t1/1', False)]
    >>> str(paired.a["t1/1"].action), str(paired.b["t1/1"].action)
    ('cancel(order=7)', 'get_order(order=7)')
    """
    built_a, built_b = a.contexts.built, b.contexts.built
    settings = ("unit", "lists", "reply_intent")
    differ = [key for key in settings if built_a.get(key) != built_b.get(key)]
    if differ:
        raise ContextMismatchError(
            "the two logs were read with different settings: "
            + ", ".join(f"{key} {built_a.get(key)!r} and {built_b.get(key)!r}" for key in differ))
    ids = [context.id for context in a.contexts if context.id in b.contexts]
    if not ids:
        raise ContextMismatchError(
            f"the two logs share no context id (first ids {a.contexts.ids[0]!r} and {b.contexts.ids[0]!r}): "
            "pairing needs the same conversations, tasks or trials")
    by_turn = built_a.get("unit", "turn") == "turn"
    turns_a, turns_b = _turns(a.contexts), _turns(b.contexts)
    contexts = []
    for context_id in ids:
        context = a.contexts[context_id]
        same = _without_call_ids(context.metadata.get("messages", ())) == _without_call_ids(
            b.contexts[context_id].metadata.get("messages", ()))
        lengths = {}
        if by_turn:  # the k-th turn's id is <dialogue>/<k> in both logs
            dialogue = context_id.rsplit("/", 1)[0]
            lengths = {"turns_a": turns_a[dialogue], "turns_b": turns_b[dialogue]}
        contexts.append(Context(context_id, context.belief, {**context.metadata, "same_history": same, **lengths}))
    built = {**built_a, "paired_with": built_b.get("source")}
    name = f"{a.contexts.name}+{b.contexts.name}"
    return PairedTranscripts(ContextSet(contexts, name=name, built=built), a.responses.subset(ids),
                             b.responses.subset(ids))


def _turns(contexts: ContextSet) -> dict[str, int]:
    """Each dialogue's number of turns in one log, by the id its turns share (``<dialogue>/<k>``)."""
    counts: dict[str, int] = {}
    for context_id in contexts.ids:
        dialogue = context_id.rsplit("/", 1)[0]
        counts[dialogue] = counts.get(dialogue, 0) + 1
    return counts


def _without_call_ids(messages: Any) -> list[Any]:
    """The messages without the calls' ids, which differ between runs of the same calls."""
    out = []
    for message in messages:
        message = {key: value for key, value in message.items() if key != "tool_call_id"}
        if message.get("tool_calls"):
            message["tool_calls"] = [{k: v for k, v in call.items() if k != "id"} for call in message["tool_calls"]]
        out.append(message)
    return out
