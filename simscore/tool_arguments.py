"""Tool calls read as intent and slot-value pairs, what :meth:`Act.from_tool_calls
<simscore.acts.Act.from_tool_calls>` builds acts from.

Three shapes of a call are read, the ones language-model agents log:

* OpenAI chat completions: ``{"id", "type": "function", "function": {"name", "arguments"}}``
  with ``arguments`` a JSON *string*;
* the OpenAI Responses API: ``{"type": "function_call", "name", "arguments", "call_id"}``;
* a plain ``{"name", "arguments"}`` with ``arguments`` a JSON string or an object (τ²-bench's
  ``ToolCall`` has ``id``, ``name``, ``arguments`` as an object and ``requestor``).

The tool's name is the intent. The arguments become items, one per value, at its *path*: an
argument's name, then ``.name`` for each object it is nested in and ``[i]`` for each list
position (``{"passenger": {"name": "Ann"}, "seats": ["12A"]}`` → ``passenger.name=Ann``,
``seats[0]=12A``). Names are percent-encoded where they hold ``%``, ``.``, ``[`` or ``]``
(``{"a.b": 1}`` → ``a%2Eb=1``, never the ``a.b=1`` of ``{"a": {"b": 1}}``), so two different
arguments never give one act. A value is canonical JSON text (a string as itself; ``true``,
``false``, ``null``; a number as JSON writes it, an integral number without a fraction, so ``1``
and ``1.0`` are one value, as in JSON), an empty object or array ``{}`` or ``[]``. With
``lists="set"`` a list is the set of its elements, its order and repeats not counted: each
element is a value of the slot ``path[]`` (``seats[]=12A``), an element that is an object or a
list as canonical JSON text (keys sorted, lists inside as sorted sets, every value as its text:
``passengers[]={"age":"31","name":"Ann"}``), so the elements' own contents stay together. The
act's values are strings: a string and the value it spells are one (``"1"`` and ``1``, ``"true"``
and ``true``, ``"{}"`` and ``{}``); apart from that, two calls give one act exactly when their
arguments are equal JSON.

Bounds (a call is read from a log: it may be anything): the arguments' JSON text at most
:data:`MAX_ARGUMENTS_LENGTH` characters, nested at most :data:`MAX_ARGUMENTS_DEPTH` levels,
at most :data:`MAX_ARGUMENT_VALUES` values per call and :data:`MAX_CALLS` calls per turn. What
breaks them, or is not a call, is a :class:`~simscore.errors.ToolCallError` naming it.

>>> read_tool_call({"type": "function", "function": {"name": "find_flight",
...                  "arguments": '{"origin": "SFO", "date": {"day": 3}, "seats": [2, 1.0]}'}})
ToolCall(name='find_flight', items=(('origin', 'SFO'), ('date.day', '3'), ('seats[0]', '2'), ('seats[1]', '1')))
>>> read_tool_call({"name": "find_flight", "arguments": {"seats": [2, 1, 2], "a.b": {"c": 1}}}, lists="set").items
(('seats[]', '2'), ('seats[]', '1'), ('seats[]', '2'), ('a%2Eb.c', '1'))
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from simscore.errors import ToolCallError
from simscore.errors import json_kind as _kind

__all__ = [
    "ToolCall",
    "ListMode",
    "LIST_MODES",
    "read_tool_call",
    "tool_call_list",
    "MAX_ARGUMENTS_LENGTH",
    "MAX_ARGUMENTS_DEPTH",
    "MAX_ARGUMENT_VALUES",
    "MAX_CALLS",
]

#: The longest arguments JSON string read, in characters (1 MiB).
MAX_ARGUMENTS_LENGTH = 2**20
#: The deepest nesting of objects and arrays inside a call's arguments.
MAX_ARGUMENTS_DEPTH = 16
#: The most values (items) one call may give.
MAX_ARGUMENT_VALUES = 10_000
#: The most calls one turn may hold.
MAX_CALLS = 256

#: How a list argument becomes items: ``"ordered"`` (one slot per position, ``seats[0]``) or
#: ``"set"`` (its elements values of one slot, ``seats[]``).
ListMode = Literal["ordered", "set"]
LIST_MODES: tuple[str, ...] = ("ordered", "set")

_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+\Z")  # OpenAI's rule, and the dots of namespaced tools


class ToolCall(NamedTuple):
    """One call: the tool's name and its arguments as ``(slot, value)`` pairs, in the order read."""

    name: str
    items: tuple[tuple[str, str], ...]


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON number {name}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def tool_call_list(calls: Any, *, max_calls: int = MAX_CALLS) -> list[Any]:
    """``calls`` as a list of calls: a list as it is, one call (a mapping) as a list of one; at
    most ``max_calls`` (a turn's :data:`MAX_CALLS`; a whole trajectory is bounded by its reader).

    >>> tool_call_list({"name": "a"})
    [{'name': 'a'}]
    """
    if isinstance(calls, Mapping):
        return [calls]
    if not isinstance(calls, (list, tuple)):
        raise ToolCallError(calls, f"expected a tool call (an object) or a list of them, got {_kind(calls)}")
    if not calls:
        raise ToolCallError(calls, "no tool call in the list (a turn without calls has no act)")
    if len(calls) > max_calls:
        what = "in one turn" if max_calls == MAX_CALLS else "together"
        bound = " (simscore.tool_arguments.MAX_CALLS)" if max_calls == MAX_CALLS else ""
        raise ToolCallError(calls, f"{len(calls):,} calls {what}, more than {max_calls:,}{bound}")
    return list(calls)


def read_tool_call(call: Any, *, lists: ListMode = "ordered") -> ToolCall:
    """The name and the flattened arguments of one call in any of the three shapes (see the module).

    Raises
    ------
    ToolCallError
        A call that is not an object, has no name or a name that is not an identifier
        ``[A-Za-z0-9_.-]`` (OpenAI's rule for function names, and the dots of namespaced tools:
        ``a.b``), arguments that are not JSON, not an
        object, longer, deeper or with more values than the bounds, or an argument name that
        cannot be a slot (empty, surrounding spaces, or one of ``= ! , ( ) " ' \\ +``).
    """
    if lists not in LIST_MODES:
        raise ValueError(f"lists must be one of {', '.join(map(repr, LIST_MODES))}, got {lists!r}")
    if not isinstance(call, Mapping):
        raise ToolCallError(call, f"a tool call must be an object, got {_kind(call)}")
    body = call.get("function") if call.get("type") == "function" or "function" in call else call
    if not isinstance(body, Mapping):
        raise ToolCallError(call, f"'function' must be an object with 'name' and 'arguments', got {_kind(body)}")
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ToolCallError(call, "no tool name (expected 'name', or 'function': {'name': ...})")
    if not _NAME_RE.match(name):
        raise ToolCallError(call, "the tool name is not an identifier [A-Za-z0-9_.-]")
    arguments = _arguments(call, name, body.get("arguments"))
    return ToolCall(name, _flatten(call, name, arguments, lists))


def _arguments(call: Any, name: str, arguments: Any) -> Any:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENTS_LENGTH:
            raise ToolCallError(
                call, f"the arguments of {name!r} are {len(arguments):,} characters long, more than "
                f"{MAX_ARGUMENTS_LENGTH:,} (simscore.tool_arguments.MAX_ARGUMENTS_LENGTH)",
            )
        try:
            arguments = _DECODER.decode(arguments)
        except RecursionError:
            raise ToolCallError(call, _too_deep(name)) from None
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ToolCallError(call, f"the arguments of {name!r} are not JSON ({reason})") from None
    if not isinstance(arguments, Mapping):
        raise ToolCallError(call, f"the arguments of {name!r} must be a JSON object, got {_kind(arguments)}")
    return arguments


def _too_deep(name: str) -> str:
    return (f"the arguments of {name!r} nest deeper than {MAX_ARGUMENTS_DEPTH} levels "
            "(simscore.tool_arguments.MAX_ARGUMENTS_DEPTH)")


def _flatten(call: Any, name: str, arguments: Mapping[str, Any], lists: str) -> tuple[tuple[str, str], ...]:
    items: list[tuple[str, str]] = []
    counted = [0]  # values read so far, the set elements' inner values included
    # (path, value, depth); reversed pushes keep the arguments' order
    stack: list[tuple[str, Any, int]] = [(_key(call, name, key), value, 1) for key, value in reversed(list(arguments.items()))]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, (Mapping, list, tuple)) and value:
            if depth >= MAX_ARGUMENTS_DEPTH:
                raise ToolCallError(call, _too_deep(name))
            if isinstance(value, Mapping):
                children = [(f"{path}.{_key(call, name, key)}", child) for key, child in value.items()]
            elif lists == "ordered":
                children = [(f"{path}[{index}]", child) for index, child in enumerate(value)]
            else:  # a set: each element one value of the slot ``path[]``, a container as its canonical text
                for child in value:
                    items.append((f"{path}[]", _element(call, name, child, depth + 1, counted)))
                continue
            stack.extend((child_path, child, depth + 1) for child_path, child in reversed(children))
            continue
        items.append((path, _scalar(call, name, value)))
        _count(call, name, counted)
    return tuple(items)


def _count(call: Any, name: str, counted: list[int]) -> None:
    counted[0] += 1
    if counted[0] > MAX_ARGUMENT_VALUES:
        raise ToolCallError(
            call, f"the arguments of {name!r} hold more than {MAX_ARGUMENT_VALUES:,} values "
            "(simscore.tool_arguments.MAX_ARGUMENT_VALUES)",
        )


def _element(call: Any, name: str, value: Any, depth: int, counted: list[int]) -> str:
    """An element of a list read as a set: a scalar as its value, an object or array as canonical
    JSON text (keys sorted, the arrays inside as sorted sets, every scalar as its value's text)."""
    if not isinstance(value, (Mapping, list, tuple)) or not value:
        _count(call, name, counted)
        return _scalar(call, name, value)
    if depth >= MAX_ARGUMENTS_DEPTH:
        raise ToolCallError(call, _too_deep(name))
    if isinstance(value, Mapping):
        members = {_member(call, name, key): _element_json(call, name, child, depth + 1, counted)
                   for key, child in value.items()}
        return "{" + ",".join(f"{key}:{members[key]}" for key in sorted(members)) + "}"
    return "[" + ",".join(sorted({_element_json(call, name, child, depth + 1, counted) for child in value})) + "]"


def _element_json(call: Any, name: str, value: Any, depth: int, counted: list[int]) -> str:
    text = _element(call, name, value, depth, counted)
    return text if isinstance(value, (Mapping, list, tuple)) and value else json.dumps(text, ensure_ascii=False)


def _member(call: Any, name: str, key: Any) -> str:
    if not isinstance(key, str):
        raise ToolCallError(call, f"argument name {repr(key)[:60]} of {name!r} is not a string")
    return json.dumps(key, ensure_ascii=False)


_SLOT_FORBIDDEN = set('=!,()"\'\\+')
#: What a key's path segment escapes (percent-encoding, ``%`` first), so that paths are one-to-one:
#: ``.`` and ``[`` ``]`` write the nesting, so a key ``"a.b"`` is ``a%2Eb``, never the ``a.b`` of ``{"a": {"b"}}``.
_KEY_ESCAPES = (("%", "%25"), (".", "%2E"), ("[", "%5B"), ("]", "%5D"))


def _key(call: Any, name: str, key: Any) -> str:
    """An argument name as a path segment: checked as a slot, with ``% . [ ]`` percent-encoded."""
    segment = _slot(call, name, key)
    for char, code in _KEY_ESCAPES:
        segment = segment.replace(char, code)
    return segment


def _slot(call: Any, name: str, key: Any) -> str:
    if not isinstance(key, str) or not key.strip() or key != key.strip() or _SLOT_FORBIDDEN.intersection(key):
        shown = repr(key)[:60]
        raise ToolCallError(
            call, f"argument name {shown} of {name!r} cannot be a slot (empty, surrounding spaces, or one of "
            "= ! , ( ) \" ' \\ +)",
        )
    return key


def _scalar(call: Any, name: str, value: Any) -> str:
    """A value as canonical JSON text (a string as itself)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ToolCallError(call, f"the arguments of {name!r} hold {value!r}, which is not a JSON number")
        if value.is_integer():  # 1.0 and 1, 1e20 and 100000000000000000000: one number (at most 309 digits)
            return str(int(value))
        return repr(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    raise ToolCallError(call, f"the arguments of {name!r} hold a {type(value).__name__}, not a JSON value")

