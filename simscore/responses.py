"""What policies return: :class:`Response` for one context, :class:`Responses` for a context set.

Responses files are JSON Lines: a header line ``{"format": "simscore-responses", "version": 1,
"policy": ..., "provenance": {...}}`` then one line per context
``{"context_id": ..., "action": "inform(...)" | null, "text": "..." | null}``; an action of
several acts (a language-model agent's tool calls in one turn, :class:`~simscore.acts.ActSequence`)
is its acts joined by ``;`` (``"get_user(id=u7);pay(amount=5)"``).
Writing is atomic; reading names the line of the first bad record (and a file of another of
simscore's kinds as such).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import IO, Any, TypeVar

from simscore.acts import Act
from simscore.errors import ActParseError, FileFormatError, InvalidResponseError, excerpt
from simscore.io import dumps, prepare_output, read_jsonl, write_jsonl
from simscore.tool_arguments import ListMode

__all__ = ["Response", "Responses", "ByContext", "FORMAT_NAME", "FORMAT_VERSION", "read_record", "ActCache"]

FORMAT_NAME = "simscore-responses"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Response:
    """One policy's response to one context.

    Parameters
    ----------
    action : Act or None
        The semantic action; None for a text-only policy.
    text : str or None
        The prompt; None for an action-only policy. ``""`` is an (empty) text, not a missing one.

    Examples
    --------
    >>> Response(Act.parse("request(food)"), "What kind of food would you like?").action
    Act.parse('request(food)')
    """

    action: Act | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if self.action is None and self.text is None:
            raise InvalidResponseError("a response needs an action, a text, or both (got neither)")
        if self.action is not None and not isinstance(self.action, Act):
            raise InvalidResponseError(
                f"action must be a simscore.Act or None, got {type(self.action).__name__}"
                " (use Act.parse for strings)"
            )
        if self.text is not None and not isinstance(self.text, str):
            raise InvalidResponseError(f"text must be a str or None, got {type(self.text).__name__}")

    @classmethod
    def from_message(cls, message: Any, *, lists: ListMode = "ordered", reply_intent: str | None = None) -> Response:
        """The response of an agent's reply: its tool calls as the action, its text as the text.

        Reads an assistant message of OpenAI chat completions or τ²-bench (``content``: a
        string, null or a list of text parts; ``tool_calls``), or the output of the Responses
        API (a list of items: ``message`` items' ``output_text`` parts are the text,
        ``function_call`` items the calls; other items, such as ``reasoning``, are left out).
        A reply with text and calls keeps both: the calls go to the action measures, the
        text to the text measures.

        Parameters
        ----------
        message : mapping or list
        lists : {"ordered", "set"}
            How list arguments become items (:meth:`Act.from_tool_calls`).
        reply_intent : str, optional
            The act of a reply without calls (e.g. ``"reply"``: then an agent that answers in
            words where another calls a tool scores 0 on the action measures, not NaN);
            by default such a reply has no action.

        Raises
        ------
        InvalidResponseError
            A message that is neither an object nor a list, a content that is not text, a
            reply with neither text nor calls (and no ``reply_intent``).
        ToolCallError
            A call that cannot be an act (:meth:`Act.from_tool_calls`).

        Examples
        --------
        >>> r = Response.from_message({"role": "assistant", "content": "Let me look.", "tool_calls": [
        ...     {"id": "c1", "type": "function", "function": {"name": "get_user", "arguments": '{"id": "u7"}'}}]})
        >>> r.action, r.text
        (Act.parse('get_user(id=u7)'), 'Let me look.')
        >>> Response.from_message([{"type": "reasoning", "summary": []},
        ...                        {"type": "function_call", "name": "pay", "arguments": "{}", "call_id": "c9"}]).action
        Act.parse('pay()')
        >>> Response.from_message({"role": "assistant", "content": "Bye!"}, reply_intent="reply").action
        Act.parse('reply()')
        """
        if isinstance(message, Mapping):
            calls = message.get("tool_calls") or []
            text = _message_text(message.get("content"))
        elif isinstance(message, list):
            calls = [item for item in message if isinstance(item, Mapping) and item.get("type") == "function_call"]
            parts = [_message_text(item.get("content")) for item in message
                     if isinstance(item, Mapping) and item.get("type") == "message"]
            texts = [part for part in parts if part is not None]
            text = "\n".join(texts) if texts else None
        else:
            raise InvalidResponseError(
                f"a reply must be a message (an object) or a list of output items, got {type(message).__name__}"
            )
        if calls:
            action: Act | None = Act.from_tool_calls(calls, lists=lists)
            text = text or None
        else:
            action = None if reply_intent is None else Act(reply_intent)
        if action is None and text is None:
            raise InvalidResponseError("a reply with neither text nor tool calls (give reply_intent to make it an act)")
        return cls(action, text)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this response (without its context id)."""
        return {
            "action": None if self.action is None else str(self.action),
            "text": self.text,
        }


V = TypeVar("V")


class ByContext(Mapping[str, V]):
    """A mapping context id -> value in the order of its contexts, with their ids (``ids``).

    The shared shape of :class:`Responses` (one response per context) and
    :class:`~simscore.samples.SampledResponses` (K per context), with the policy's name and the
    provenance (JSON-serialisable: else :class:`~simscore.errors.InvalidResponseError`); a
    subclass checks its values, then hands them over in order.
    """

    def __init__(self, data: dict[str, V], *, policy: str = "", provenance: Mapping[str, Any] | None = None) -> None:
        self._data = data
        self.policy = str(policy)
        self.provenance: dict[str, Any] = dict(provenance or {})
        try:
            dumps(self.provenance)
        except (TypeError, ValueError) as exc:
            raise InvalidResponseError(f"provenance must be JSON-serialisable: {exc}") from None

    def __getitem__(self, context_id: str) -> V:
        return self._data[context_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    @property
    def ids(self) -> tuple[str, ...]:
        """Context ids in order."""
        return tuple(self._data)


class Responses(ByContext[Response]):
    """The responses of one policy over one context set, keyed by context id, in order.

    Parameters
    ----------
    responses : mapping or iterable of (context_id, Response)
        Context ids must be non-empty strings and unique.
    policy : str
        A name for the policy (shown in reports).
    provenance : mapping
        JSON-serialisable facts about where the responses came from (checkpoint, seed, reward, ...).

    Examples
    --------
    >>> r = Responses({"c1": Response(text="Hello!")}, policy="demo", provenance={"seed": 1})
    >>> len(r), r.ids, r["c1"].text
    (1, ('c1',), 'Hello!')
    """

    def __init__(
        self,
        responses: Mapping[str, Response] | Iterable[tuple[str, Response]],
        *,
        policy: str = "",
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        pairs = responses.items() if isinstance(responses, Mapping) else responses
        data: dict[str, Response] = {}
        for context_id, response in pairs:
            if not isinstance(context_id, str) or not context_id:
                raise InvalidResponseError(f"context id must be a non-empty string, got {context_id!r}")
            if not isinstance(response, Response):
                raise InvalidResponseError(
                    f"response for context {context_id!r} must be a Response, got {type(response).__name__}"
                )
            if context_id in data:
                raise InvalidResponseError(f"context id {context_id!r} appears more than once")
            data[context_id] = response
        super().__init__(data, policy=policy, provenance=provenance)

    def __repr__(self) -> str:
        return f"Responses(policy={self.policy!r}, n={len(self)})"

    def actions(self, ids: Iterable[str] | None = None) -> list[Act | None]:
        """The actions for ``ids`` (default: all, in order)."""
        responses = self._data.values() if ids is None else map(self._data.__getitem__, ids)
        return list(map(attrgetter("action"), responses))

    def texts(self, ids: Iterable[str] | None = None) -> list[str | None]:
        """The texts for ``ids`` (default: all, in order)."""
        responses = self._data.values() if ids is None else map(self._data.__getitem__, ids)
        return list(map(attrgetter("text"), responses))

    def subset(self, ids: Iterable[str]) -> Responses:
        """The responses for ``ids`` only (in that order), with the same policy and provenance.

        >>> r = Responses({"a": Response(text="x"), "b": Response(text="y")})
        >>> r.subset(["b"]).ids
        ('b',)
        """
        data = self._data
        missing = [i for i in ids if i not in data]
        if missing:
            raise KeyError(f"context id(s) not in these responses: {', '.join(map(repr, missing[:5]))}")
        return Responses(((i, data[i]) for i in ids), policy=self.policy, provenance=self.provenance)

    def to_jsonl(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the responses as a JSON Lines file, atomically.

        An existing file is replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise).
        """
        prepare_output(path, overwrite=overwrite)
        header = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "policy": self.policy,
            "provenance": self.provenance,
        }
        records = ({"context_id": cid, **r.to_json()} for cid, r in self._data.items())
        write_jsonl(path, header, records)

    @classmethod
    def read_jsonl(cls, path: str | os.PathLike[str], *, stream: IO[bytes] | None = None) -> Responses:
        """Read a responses file written by :meth:`to_jsonl` (or by hand in the same format).

        The file is read once from its start, so a pipe works (``/dev/stdin``, ``<(zcat r.jsonl.gz)``).

        Parameters
        ----------
        path : path-like
        stream : binary file, optional
            Read this open stream instead of opening ``path``, which then only names it (see
            :func:`simscore.io.read_jsonl`).

        Raises
        ------
        FileFormatError
            Naming the file and the line of the first bad record; a file of another kind
            (a context set, a flow graph, a saved comparison) is named as such.
        """
        header, records = read_jsonl(path, format_name=FORMAT_NAME, versions=(FORMAT_VERSION, 2), stream=stream)
        try:
            if header["version"] != FORMAT_VERSION:  # 2: simscore.samples.SAMPLED_FORMAT_VERSION
                raise FileFormatError(
                    path, "a sampled responses file (format version 2: several samples per context): read "
                    "it with simscore.samples.SampledResponses.read_jsonl (simscore compare and compare() take it)",
                    line=1,
                )
            provenance = header.get("provenance", {})
            if not isinstance(provenance, dict):
                raise FileFormatError(path, "header field 'provenance' must be an object", line=1)
            policy = header.get("policy")
            if policy is not None and not isinstance(policy, str):
                raise FileFormatError(
                    path, f"header field 'policy' must be a string or null, got {_json_type(policy)} {excerpt(policy, 60)}",
                    line=1,
                )
            pairs: dict[str, Response] = {}
            parse = ActCache()
            for number, record in records:
                context_id, response = read_record(path, number, record, parse)
                if context_id in pairs:
                    raise FileFormatError(path, f"context id {excerpt(context_id)} appears more than once", line=number)
                pairs[context_id] = response
        finally:
            records.close()
        return cls(pairs, policy=policy or "", provenance=provenance)


def _message_text(content: Any) -> str | None:
    """A message's content as text: a string, null, or a list of text parts joined by line breaks."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            text = part.get("text") if isinstance(part, Mapping) else None
            if not isinstance(text, str):
                raise InvalidResponseError(f"a content part must be an object with a 'text' string, got {excerpt(part, 60)}")
            texts.append(text)
        return "\n".join(texts)
    raise InvalidResponseError(f"a message's content must be text, null or a list of text parts, got {excerpt(content, 60)}")


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for a message."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), "null" if value is None else type(value).__name__)


def read_record(
    path: str | os.PathLike[str], number: int, record: Mapping[str, Any], parse: ActCache
) -> tuple[str, Response]:
    """The context id and response of one record of a responses file (line ``number`` of ``path``).

    Shared by :meth:`Responses.read_jsonl` and the reader of sampled files
    (:meth:`simscore.samples.SampledResponses.read_jsonl`); ``parse`` reads the action strings.

    Raises
    ------
    FileFormatError
        A missing or empty ``context_id``, an action or text that is not a string or null, an
        action that does not parse, a record with neither.

    >>> read_record("r.jsonl", 2, {"context_id": "c1", "action": "bye()", "text": None}, ActCache())
    ('c1', Response(action=Act.parse('bye()'), text=None))
    """
    context_id = record.get("context_id")
    if not isinstance(context_id, str) or not context_id:
        raise FileFormatError(path, "missing or empty 'context_id'", line=number)
    action, text = record.get("action"), record.get("text")
    if action is not None and not isinstance(action, str):
        raise FileFormatError(path, "'action' must be a string or null", line=number)
    if text is not None and not isinstance(text, str):
        raise FileFormatError(path, "'text' must be a string or null", line=number)
    try:
        return context_id, Response(None if action is None else parse(action), text)
    except (ActParseError, InvalidResponseError) as exc:
        raise FileFormatError(path, str(exc), line=number) from None


class ActCache:
    """Parse each distinct action string once (files repeat a few hundred actions).

    >>> parse = ActCache()
    >>> parse("bye()") is parse("bye()")
    True
    """

    def __init__(self) -> None:
        self._cache: dict[str, Act] = {}

    def __call__(self, text: str) -> Act:
        act = self._cache.get(text)
        if act is None:
            act = self._cache[text] = Act.parse(text)
        return act
