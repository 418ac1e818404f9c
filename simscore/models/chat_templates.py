"""Chat templates rendered within bounds of time, memory and size: :class:`ChatTemplate`.

A model folder's chat template (``tokenizer_config.json``'s ``chat_template``, or a
``chat_template.jinja``) is a program in Jinja that the folder's author wrote. simscore renders it
as transformers does (``apply_chat_template(..., tokenize=False)``: the same text), but in a
separate process (``simscore/models/_chat_worker.py``) with jinja's immutable sandbox, no file to open,
and limits on its time (:data:`CHAT_TEMPLATE_SECONDS`), memory (:data:`CHAT_TEMPLATE_MEMORY`)
and output (:data:`CHAT_TEMPLATE_CHARS`); a template over :data:`MAX_CHAT_TEMPLATE_CHARS` is
refused before it is parsed. Each failure is a :class:`~simscore.errors.ChatTemplateError`.
The model folders themselves are read by :mod:`simscore.models`.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simscore.errors import ChatTemplateError, MissingDependencyError

__all__ = ["ChatTemplate", "CHAT_TEMPLATE_SECONDS", "CHAT_TEMPLATE_MEMORY", "CHAT_TEMPLATE_CHARS", "MAX_CHAT_TEMPLATE_CHARS"]

#: Seconds a chat template may take to render one prompt (real templates take milliseconds).
CHAT_TEMPLATE_SECONDS = 5.0
#: Bytes of memory a chat template may use while rendering, above the renderer's own (256 MiB).
CHAT_TEMPLATE_MEMORY = 256 << 20
#: Most characters a rendered prompt may have: 2**22, about a million tokens, beyond every
#: model's context window.
CHAT_TEMPLATE_CHARS = 1 << 22
#: Longest chat template: 1 MiB of text (real ones have 1-20 kB).
MAX_CHAT_TEMPLATE_CHARS = 1 << 20


_WORKER = Path(__file__).with_name("_chat_worker.py")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill a renderer and reap it (its reader thread closes its output at the end)."""
    if process.poll() is None:
        process.kill()
    process.wait()
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()


class ChatTemplate:
    """A tokenizer's chat template, rendered within bounds of time, memory and size.

    transformers renders a chat template with jinja2's ``ImmutableSandboxedEnvironment``
    (``trim_blocks``, ``lstrip_blocks``, loop controls, a ``generation`` block, and the globals
    ``raise_exception``, ``strftime_now``, a restricted ``dict`` and ``namespace``, a ``tojson``
    filter), in the calling process, with no bound: a loop of 10**10 steps runs until the
    process is killed, a template that multiplies a string fills the memory. Here the same
    environment renders in a separate Python process (jinja2 only: it starts in about 0.3 s,
    once per :class:`ChatTemplate`), which

    * answers within ``seconds`` or is killed (the render is then a
      :class:`~simscore.errors.ChatTemplateError`, and the next render starts a new process);
    * may use ``memory`` bytes above its start (``RLIMIT_AS``; beyond it Python's
      ``MemoryError`` is the error);
    * stops a prompt at ``max_chars`` characters;
    * may open no file, create no process (as a user without privileges) and write no
      byte to a file (``RLIMIT_NOFILE``, ``RLIMIT_NPROC``, ``RLIMIT_FSIZE``): should a
      template escape jinja's sandbox, it finds nothing to do. The limits are POSIX; on other
      systems only the time and size limits hold.

    The inputs are rebuilt from plain JSON data, as transformers does, and the tokenizer's
    special tokens are the template's variables, as in ``apply_chat_template``; the text is
    the one ``tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)``
    returns (tested on the installed transformers). The cost is the pipe's round trip: measured
    on two cores shared with other work (load 11), 0.6-1.3 ms per prompt against 0.2-0.6 ms for
    ``apply_chat_template`` in process, and 0.4-0.6 s to start the renderer.

    Parameters
    ----------
    template : str
        The Jinja chat template (at most :data:`MAX_CHAT_TEMPLATE_CHARS` characters).
    variables : mapping, optional
        Further template variables (JSON data), e.g. the special tokens.
    seconds, memory, max_chars
        The limits (defaults :data:`CHAT_TEMPLATE_SECONDS`, :data:`CHAT_TEMPLATE_MEMORY`,
        :data:`CHAT_TEMPLATE_CHARS`).
    source : str
        Where the template comes from, for messages (e.g. the model folder).

    Examples
    --------
    >>> with ChatTemplate("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>") as chat:
    ...     chat.render([{"role": "user", "content": "Thai food."}])
    '<user>Thai food.<assistant>'
    """

    def __init__(self, template: str, *, variables: Mapping[str, Any] | None = None,
                 seconds: float = CHAT_TEMPLATE_SECONDS, memory: int = CHAT_TEMPLATE_MEMORY,
                 max_chars: int = CHAT_TEMPLATE_CHARS, source: str = "chat template") -> None:
        if not isinstance(template, str):
            raise TypeError(f"template must be a str, got {type(template).__name__}")
        if len(template) > MAX_CHAT_TEMPLATE_CHARS:
            raise ChatTemplateError(
                f"{source}: the chat template has {len(template):,} characters, more than {MAX_CHAT_TEMPLATE_CHARS:,}"
            )
        self.template = template
        self.variables = json.loads(json.dumps(dict(variables or {})))
        self.seconds = float(seconds)
        self.memory = int(memory)
        self.max_chars = int(max_chars)
        self.source = source
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[bytes] = queue.Queue()

    @classmethod
    def of(cls, tokenizer: Any, *, source: str | None = None, **limits: Any) -> ChatTemplate | None:
        """The chat template of a transformers tokenizer (None if it has none), with its special
        tokens as variables (as ``apply_chat_template`` passes them); ``limits`` as for the class."""
        template = getattr(tokenizer, "chat_template", None)
        if isinstance(template, dict):  # named templates: apply_chat_template renders "default"
            template = template.get("default")
        if not template:
            return None
        special = dict(getattr(tokenizer, "special_tokens_map", None) or {})
        where = source or str(getattr(tokenizer, "name_or_path", "") or "the tokenizer")
        return cls(str(template), variables=special, source=where, **limits)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_lock=None, _process=None, _replies=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._replies = queue.Queue()

    def __enter__(self) -> ChatTemplate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the rendering process (a later render starts a new one)."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._process is not None:
            _stop(self._process)
            self._process = None

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-I", str(_WORKER), json.dumps(sys.path), str(self.memory)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        weakref.finalize(self, _stop, process)
        self._replies = replies = queue.Queue[bytes]()
        limit = 6 * self.max_chars + 4096  # a JSON reply escapes a character in at most 6 bytes

        def read() -> None:  # the worker's replies, one line each, at most `limit` bytes; b"" at the end
            output = process.stdout
            assert output is not None
            with output:
                for line in iter(lambda: output.readline(limit), b""):
                    replies.put(line)
            replies.put(b"")

        threading.Thread(target=read, name="chat-template-reader", daemon=True).start()
        self._process = process
        ready = self._reply(120.0, "start")  # start-up is not the template's doing: a long wait
        if ready.get("error"):
            self._close()
            raise MissingDependencyError(f"chat templates: {ready['error']}")
        return process

    def _reply(self, seconds: float, what: str) -> dict[str, Any]:
        try:
            line = self._replies.get(timeout=seconds)
        except queue.Empty:
            self._close()
            raise ChatTemplateError(
                f"{self.source}: the chat template did not {what} within {seconds:g} s (stopped)"
            ) from None
        if not line.endswith(b"\n"):
            code = self._process.poll() if self._process is not None else None
            self._close()
            raise ChatTemplateError(
                f"{self.source}: the chat template's renderer stopped ({'exit code ' + str(code) if code else 'no reply'}"
                f"; over the memory limit of {self.memory:,} bytes?)"
            )
        reply = json.loads(line)
        return reply if isinstance(reply, dict) else {"error": "unreadable reply"}

    def render(self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Mapping[str, Any]] | None = None,
               add_generation_prompt: bool = True) -> str:
        """The prompt for ``messages`` (``{"role": ..., "content": ...}``), as the template writes it.

        ``tools`` (JSON schemas, ``{"type": "function", "function": {...}}``) are the template's
        ``tools`` variable, as ``apply_chat_template(messages, tools=...)`` passes them (None: none).

        Raises
        ------
        ChatTemplateError
            The template does not compile, raises (``raise_exception``), breaks a sandbox rule,
            runs past its time, memory or size limit; the message says which.
        """
        chat = [{key: value for key, value in dict(message).items() if value is not None} for message in messages]
        request = json.dumps({"template": self.template, "messages": chat, "variables": self.variables,
                              "tools": None if tools is None else [dict(tool) for tool in tools],
                              "add_generation_prompt": bool(add_generation_prompt), "max_chars": self.max_chars})
        with self._lock:
            process = self._process if self._process is not None and self._process.poll() is None else self._start()
            assert process.stdin is not None
            try:
                process.stdin.write(request.encode("utf-8") + b"\n")
                process.stdin.flush()
            except OSError:
                self._close()
                raise ChatTemplateError(f"{self.source}: the chat template's renderer stopped") from None
            reply = self._reply(self.seconds, "render")
        if "text" not in reply:
            raise ChatTemplateError(f"{self.source}: the chat template failed: {str(reply.get('error'))[:300]}")
        return str(reply["text"])

    def __repr__(self) -> str:
        return f"ChatTemplate({self.source!r}, {len(self.template)} characters)"
