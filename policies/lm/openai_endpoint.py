"""Any OpenAI-compatible chat-completions endpoint as a dialogue policy: :class:`OpenAIEndpointPolicy`.

vLLM, llama.cpp's server, Ollama, ``transformers serve`` and hosted APIs answer
``POST <base>/chat/completions``. Every context becomes one such request:

* a context read from an agent transcript (:mod:`contexts.transcripts`: its metadata holds
  ``messages``, chat-completions messages, and ``tools``, the tools' JSON schemas) is sent as
  those messages, with its tools;
* any other context (C_gen, C_col) as the chat messages of a
  :class:`~policies.lm.prompts.PromptTemplate` (its instruction as the system message, then the
  dialogue history or the belief state as text).

The reply's tool calls become the response's action and its text the response's text
(:meth:`Response.from_message <simscore.responses.Response.from_message>`); a reply without
calls is the act ``reply()`` by default, as the transcript readers write the logged agent's, so
an agent that answers in words where another calls a tool scores 0 on the action measures.

Requests are deterministic where the server can be: temperature 0 by default and a seed,
``context_seed(seed, context.id)`` (:func:`policies.seeding.context_seed`), so each context has
its own seed whatever the order or concurrency. Whether the server honours the seed is the
server's affair; the replies' ``model`` and ``system_fingerprint`` are recorded.

At most ``concurrency`` requests are in flight. Each try of a request ends within ``timeout``
seconds, from connecting to the reply's last byte (a server that trickles its reply a byte at a
time is cut off then, not only one that stops); a refused or dropped connection, a timeout, a
429 (rate limit) or a 5xx is retried up to ``retries`` times after ``backoff * 2**k`` seconds
(``k`` = 0, 1, ...; at most :data:`MAX_BACKOFF` seconds, or the server's ``Retry-After`` within
that bound), each try with its own ``timeout``; any other status (400, 401, 404, ...) fails at
once. No redirect is followed, to another origin or to the same one: the key goes to the
endpoint given and nowhere else, and a POST redirected by 301 or 302 would become a GET. The
error names where the redirect pointed, so that an address the server moved to (``https://``
for ``http://``, a trailing ``/``) can be given as the URL. A reply is read up to
:data:`MAX_REPLY_BYTES` and parsed strictly (:func:`simscore.io.parse_json`).

The API key is read from an environment variable (``OPENAI_API_KEY`` by default; optional,
local servers need none) when the policy is made, sent only as the ``Authorization`` header,
and appears in no provenance, ``repr``, ``vars()``, log, error message or responses file:

* the endpoint is recorded without its query string, and a URL holding credentials
  (``user:password@``) is refused;
* the key is held by an object whose ``repr`` names only its variable, so a traceback that
  shows its frames' locals does not show it; a key holding a space, a line break or another
  character an HTTP header cannot carry is refused when the policy is made, naming the
  variable, not the value;
* whatever the server sends is scrubbed before it is shown or kept: the reason phrase, the
  body and the ``Location`` of an error, the text of a failed connection, and the whole parsed
  reply. The key, percent-encoded or base64-encoded, becomes ``[API key]``; texts are scrubbed
  whole and cut after, so no cut leaves part of the key (:class:`policies.lm._http.APIKey`);
* a model that echoes the key in its answer (its text or its tool calls' arguments) gets
  ``[API key]`` in its response instead, and :meth:`~OpenAIEndpointPolicy.respond_batch`
  warns once (:class:`~simscore.errors.APIKeyInReplyWarning`) how many replies held it; the
  provenance's ``api_key_masked`` counts them.

Examples
--------
With a server on the loopback address (the tests start ``transformers serve``)::

    policy = OpenAIEndpointPolicy("http://127.0.0.1:8000/v1", model="Qwen/Qwen2.5-0.5B-Instruct")
    responses = run_policy(policy, contexts)         # temperature 0, seed 0, 4 requests at a time
    responses.provenance["endpoint"], responses.provenance["model"]
"""

from __future__ import annotations

import ipaddress
import os
import time
import urllib.parse
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policies._provenance import _check_name, _provenance
from policies.lm.prompts import PromptTemplate, transcript_tools
from simscore.checks import check_int, check_number, check_seed
from simscore.errors import (
    APIKeyInReplyWarning,
    EndpointError,
    InvalidContextError,
    InvalidResponseError,
    ToolCallError,
    excerpt,
)
from simscore.io import dumps, parse_json
from simscore.responses import Response
from simscore.tool_arguments import LIST_MODES, ListMode

if TYPE_CHECKING:
    from policies.lm._http import APIKey

__all__ = ["OpenAIEndpointPolicy", "chat_completions_url", "MAX_REPLY_BYTES", "MAX_BACKOFF", "MAX_TIMEOUT"]

#: The largest reply read, in bytes (a chat completion is a few kilobytes).
MAX_REPLY_BYTES = 16 * 2**20
#: The longest wait between two tries of one request, in seconds.
MAX_BACKOFF = 60.0
#: The longest ``timeout`` of one request, in seconds (a day).
MAX_TIMEOUT = 86_400.0
#: The bytes of an error's body read (what a message shows of it is shorter).
_ERROR_BODY_BYTES = 2048
_RETRIED_STATUS = frozenset({429}) | frozenset(range(500, 600))  # rate limit, server errors; no other 4xx


def chat_completions_url(url: str) -> str:
    """The chat-completions address of an endpoint given by its base URL (or by that address itself).

    ``http://host:8000/v1`` → ``http://host:8000/v1/chat/completions``; a URL without a path
    gets ``/v1`` (vLLM's, llama.cpp's, Ollama's and ``transformers serve``'s base); a URL that
    already ends with ``/chat/completions`` is kept. Only ``http`` and ``https``; a URL with
    credentials in it (``user:password@``) is refused (pass the key in an environment variable).

    Examples
    --------
    >>> chat_completions_url("http://127.0.0.1:8000")
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> chat_completions_url("https://api.example.com/v1/")
    'https://api.example.com/v1/chat/completions'
    >>> chat_completions_url("ftp://host/v1")
    Traceback (most recent call last):
    ...
    ValueError: endpoint 'ftp://host/v1': expected an http:// or https:// URL
    """
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, got {type(url).__name__}")
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"endpoint {excerpt(url, 80)}: expected an http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "endpoint: the URL holds credentials (user:password@host); pass the API key in an environment variable"
        )
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ValueError(f"endpoint {excerpt(url, 80)}: the port is not a number") from None
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = f"{path or '/v1'}/chat/completions"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _api_key(variable: str, required: bool) -> APIKey | None:
    """The key in ``variable``, or None where it is unset or empty (no local of this frame holds its value)."""
    from policies.lm._http import APIKey  # with urllib.request, when a policy is made

    if not os.environ.get(variable):
        if required:
            raise ValueError(f"the environment variable {variable} holding the API key is not set")
        return None
    return APIKey(variable, os.environ[variable])


class OpenAIEndpointPolicy:
    """A dialogue policy answered by an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    url : str
        The endpoint's base URL (``http://127.0.0.1:8000/v1``; see :func:`chat_completions_url`).
    model : str
        The model the server is asked for (the request's ``model``).
    api_key_env : str
        The environment variable holding the API key (default ``OPENAI_API_KEY``), read once here.
    require_key : bool
        Refuse to start when that variable is unset or empty (default False: no key is sent,
        as local servers need none).
    temperature : float
        Sampling temperature (default 0: the most probable tokens).
    seed : int
        Base seed; context ``c`` is sent ``context_seed(seed, c.id)``.
    max_tokens : int, optional
        Tokens per reply at most (the request's ``max_tokens``; default: the server's).
    template : PromptTemplate, optional
        How a context without transcript messages becomes chat messages (default ``PromptTemplate()``).
    lists : {"ordered", "set"}
        How list arguments of tool calls become act items (:meth:`Act.from_tool_calls`).
    reply_intent : str or None
        The act of a reply without calls (default ``"reply"``, as the transcript readers write
        the logged agent's); None: such a reply has no action.
    extra : mapping, optional
        Further JSON fields of every request (``top_p``, ``tool_choice``, ...); the fields above win.
    concurrency : int
        Requests in flight at most (default 4).
    timeout : float
        Seconds each try of a request may take, from connecting to the reply's last byte
        (default 120; at most :data:`MAX_TIMEOUT`).
    retries : int
        Tries after the first for a connection error, a timeout, a 429 or a 5xx (default 4).
    backoff : float
        Seconds before the first retry, doubled for each next one (default 1).
    name : str, optional
        Policy name (default ``model``).
    provenance : mapping, optional
        JSON-serialisable facts added to the policy's own; given keys win.

    Attributes
    ----------
    url : str
        The chat-completions address requests go to.
    last_run : dict
        Counts of the latest :meth:`respond_batch`: ``responses``, ``retried`` (retries made),
        ``finish_reasons``, the replies' ``served_models`` and ``system_fingerprints``, and
        ``api_key_masked`` (replies that held the API key, masked in their responses).

    Raises
    ------
    ValueError
        A bad URL or setting, or ``require_key`` with the variable unset.
    EndpointError
        (when answering) A request that failed after its retries, a status that is not retried,
        or a reply that is not a chat completion; the message names the endpoint, the context
        and what came back (bounded), never the key.
    """

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        require_key: bool = False,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int | None = None,
        template: PromptTemplate | None = None,
        lists: str = "ordered",
        reply_intent: str | None = "reply",
        extra: Mapping[str, Any] | None = None,
        concurrency: int = 4,
        timeout: float = 120.0,
        retries: int = 4,
        backoff: float = 1.0,
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        self.url = chat_completions_url(url)
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {excerpt(model, 60)}")
        self.model = model
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValueError("api_key_env must name an environment variable")
        self.api_key_env = api_key_env
        self.__key = _api_key(api_key_env, require_key)  # its repr names the variable only
        self.temperature = check_number("temperature", temperature, minimum=0.0)
        self.seed = check_seed("seed", seed)
        self.max_tokens = None if max_tokens is None else check_int("max_tokens", max_tokens, minimum=1)
        self.template = PromptTemplate() if template is None else template
        if not isinstance(self.template, PromptTemplate):
            raise TypeError(f"template must be a PromptTemplate, got {type(self.template).__name__}")
        if lists not in LIST_MODES:
            raise ValueError(f"lists must be one of {', '.join(map(repr, LIST_MODES))}, got {lists!r}")
        self.lists: ListMode = lists  # type: ignore[assignment]  # checked above
        self.reply_intent = reply_intent
        self.extra = dict(extra or {})
        dumps(self.extra)  # JSON, now
        self.concurrency = check_int("concurrency", concurrency, minimum=1)
        self.timeout = check_number("timeout", timeout, minimum=0.0, exclusive_minimum=True, maximum=MAX_TIMEOUT)
        self.retries = check_int("retries", retries, minimum=0)
        self.backoff = check_number("backoff", backoff, minimum=0.0)
        _check_name(name)
        self.name: str = name if name is not None else model
        self._extra_provenance = dict(provenance or {})
        from policies.lm._http import opener

        self._opener = opener(_loopback(urllib.parse.urlsplit(self.url).hostname or ""))
        self.last_run: dict[str, Any] = {"responses": 0, "retried": 0, "finish_reasons": {},
                                         "served_models": [], "system_fingerprints": [], "api_key_masked": 0}
        self.provenance  # noqa: B018 - checks that the given provenance is JSON-serialisable, now

    def __repr__(self) -> str:
        try:
            return f"OpenAIEndpointPolicy({self.endpoint!r}, model={self.model!r}, name={self.name!r})"
        except AttributeError:  # a policy being made (a traceback showing __init__'s locals)
            return "OpenAIEndpointPolicy(<not made>)"

    @property
    def endpoint(self) -> str:
        """The chat-completions address without its query string (which may hold a key)."""
        parts = urllib.parse.urlsplit(self.url)
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))

    @property
    def provenance(self) -> dict[str, Any]:
        """The endpoint, the model, every request setting and the latest run's counts (never the key)."""
        facts: dict[str, Any] = {
            "adapter": "openai",
            "endpoint": self.endpoint,
            "model": self.model,
            "api_key": f"from {self.api_key_env}" if self.__key is not None else None,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "template": self.template.to_json(),
            "lists": self.lists,
            "reply_intent": self.reply_intent,
            "extra": self.extra,
            "concurrency": self.concurrency,
            "timeout": self.timeout,
            "retries": self.retries,
            "backoff": self.backoff,
            **self.last_run,
        }
        return _provenance(facts, self._extra_provenance)

    # -- requests -------------------------------------------------------------------------------

    def request(self, context: Any) -> dict[str, Any]:
        """The chat-completions request body for ``context`` (what is sent, less the key)."""
        from policies.seeding import context_seed

        context_id = getattr(context, "id", None)
        if not isinstance(context_id, str):
            raise InvalidContextError(f"a context needs a string 'id', got {excerpt(context, 60)}")
        chat = self.template.messages(context)
        tools = transcript_tools(context) if self.template.source_of(context) == "history" else []
        body: dict[str, Any] = {**self.extra, "model": self.model, "messages": chat,
                                "temperature": self.temperature, "seed": context_seed(self.seed, context_id),
                                "stream": False}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if tools:
            body["tools"] = tools
        return body

    def _post(self, data: bytes, context_id: str) -> tuple[dict[str, Any], bool, int]:
        """The parsed reply to one request (scrubbed), whether it held the key, and how many retries it took."""
        import http.client
        import urllib.error
        import urllib.request

        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            if self.__key is not None:
                request.add_unredirected_header("Authorization", self.__key.authorization())
            wait: float | None = None
            try:
                with self._opener.open(request, timeout=self.timeout) as reply:
                    raw = reply.read(MAX_REPLY_BYTES + 1)
                return (*self._parsed(raw, context_id), attempt)
            except urllib.error.HTTPError as exc:
                problem = self._refusal(exc)
                if exc.code not in _RETRIED_STATUS:
                    raise self._error(context_id, problem, attempt) from None
                wait = _retry_after(exc.headers.get("Retry-After"))
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                problem = f"{type(reason).__name__}: {self._shown(str(reason), 200)}"
                if isinstance(reason, TimeoutError):
                    problem = f"TimeoutError: timed out (no complete reply within {self.timeout:g} s)"
            if attempt == self.retries:
                raise self._error(context_id, problem, attempt)
            delay = min(self.backoff * 2**attempt, MAX_BACKOFF)
            time.sleep(min(max(delay, wait), MAX_BACKOFF) if wait is not None else delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _refusal(self, exc: Any) -> str:
        """What an HTTP error status says (an :class:`urllib.error.HTTPError`), scrubbed: its reason phrase and
        body, or for a redirect where it pointed."""
        body = exc.read(_ERROR_BODY_BYTES) if exc.fp is not None else b""
        exc.close()
        if 300 <= exc.code < 400:
            where = exc.headers.get("Location")
            shown = "nowhere (no Location)" if where is None else excerpt(self._scrub(where), 120)
            return (f"HTTP {exc.code} redirect to {shown} (not followed: the key goes to the endpoint given only; "
                    "if that address is the endpoint, give it as the URL)")
        text = self._scrub(body.decode("utf-8", "replace"), cut=len(body) == _ERROR_BODY_BYTES)
        return f"HTTP {exc.code} {self._shown(str(exc.reason), 80)}: {text}"

    def _parsed(self, raw: bytes, context_id: str) -> tuple[dict[str, Any], bool]:
        """The reply, every string in it scrubbed, and whether one held the key."""
        if len(raw) > MAX_REPLY_BYTES:
            raise self._error(context_id, f"the reply is longer than {MAX_REPLY_BYTES:,} bytes", None)
        try:
            parsed = parse_json(raw.decode("utf-8"), self.endpoint)
        except (ValueError, UnicodeDecodeError) as exc:
            raise self._error(context_id, f"the reply is not JSON ({self._shown(str(exc), 200)})", None) from None
        reply, held = (parsed, False) if self.__key is None else self.__key.scrub_value(parsed)
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) or not isinstance(
            choices[0].get("message"), dict
        ):
            shown = excerpt(reply, 120)
            raise self._error(context_id, f"the reply is not a chat completion (no choices[0].message): {shown}", None)
        return reply, held

    def _error(self, context_id: str, problem: str, attempt: int | None) -> EndpointError:
        tries = "" if attempt is None else f" after {attempt + 1} tr{'y' if attempt == 0 else 'ies'}"
        return EndpointError(f"{self.endpoint}: context {context_id!r}{tries}: {problem[:400]}")

    def _scrub(self, text: str, *, cut: bool = False) -> str:
        """``text`` without the key (a server may echo the request's headers; :meth:`APIKey.scrub`)."""
        return text if self.__key is None else self.__key.scrub(text, cut=cut)

    def _shown(self, text: str, limit: int) -> str:
        """``text`` scrubbed whole, then cut to ``limit`` characters."""
        scrubbed = self._scrub(text)
        return scrubbed if len(scrubbed) <= limit else f"{scrubbed[:limit]}... ({len(scrubbed):,} characters)"

    def _answer(self, context: Any) -> tuple[Response, dict[str, Any], int]:
        body = self.request(context)
        reply, held, retried = self._post(dumps(body).encode("utf-8"), context.id)
        choice = reply["choices"][0]
        try:
            response = Response.from_message(choice["message"], lists=self.lists, reply_intent=self.reply_intent)
        except (InvalidResponseError, ToolCallError) as exc:
            raise self._error(context.id, f"the reply cannot be a response: {self._scrub(str(exc))}", None) from None
        return response, {"finish_reason": choice.get("finish_reason"), "model": reply.get("model"),
                          "system_fingerprint": reply.get("system_fingerprint"), "held_key": held}, retried

    # -- answering ------------------------------------------------------------------------------

    def respond(self, context: Any) -> Response:
        """The endpoint's response to one context."""
        return self.respond_batch([context])[0]

    def respond_batch(self, contexts: Sequence[Any]) -> list[Response]:
        """The responses to ``contexts``, in order, ``concurrency`` requests at a time.

        The first context whose request fails (in order) raises its :class:`EndpointError`;
        requests not yet started are not sent. Where replies held the API key (masked in their
        responses), one :class:`~simscore.errors.APIKeyInReplyWarning` says how many.
        """
        from concurrent.futures import ThreadPoolExecutor

        items = list(contexts)
        for context in items:
            self.request(context)  # a bad context fails before any request is sent
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="openai-endpoint")
        try:
            futures = [pool.submit(self._answer, context) for context in items]
            answers = [future.result() for future in futures]
        finally:  # after a failure (or Ctrl-C) no request that has not started is sent
            pool.shutdown(wait=True, cancel_futures=True)
        reasons: dict[str, int] = {}
        for _, facts, _ in answers:
            reason = str(facts["finish_reason"])
            reasons[reason] = reasons.get(reason, 0) + 1
        self.last_run = {
            "responses": len(items),
            "retried": sum(retried for _, _, retried in answers),
            "finish_reasons": dict(sorted(reasons.items())),
            "served_models": sorted({str(f["model"]) for _, f, _ in answers if isinstance(f["model"], str)}),
            "system_fingerprints": sorted(
                {str(f["system_fingerprint"]) for _, f, _ in answers if isinstance(f["system_fingerprint"], str)}
            ),
            "api_key_masked": sum(f["held_key"] for _, f, _ in answers),
        }
        if self.last_run["api_key_masked"]:
            warnings.warn(APIKeyInReplyWarning(self.last_run["api_key_masked"], len(items), self.api_key_env),
                          stacklevel=2)
        return [response for response, _, _ in answers]


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number or an HTTP date), or None."""
    import email.utils

    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
