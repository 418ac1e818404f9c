"""The HTTP side of :mod:`policies.lm.openai_endpoint`: an API key that shows itself nowhere, and
urllib's opener whose requests follow no redirect and end by a deadline.

Imported when an endpoint policy is made, not with :mod:`policies` (``urllib.request`` and
``ssl`` take a while to import).

**The key.** :class:`APIKey` holds the key; its ``repr`` names the environment variable only, so
neither ``vars(policy)`` nor a traceback that shows its frames' locals holds the value.
:meth:`APIKey.scrub` replaces, in any text a server sent, every form of the key a server might
echo: the key itself, percent-encoded (as in a redirect's query string, upper or lower case hex)
and base64-encoded (as a server dumping the request's headers would write it; three fragments,
one per alignment of the key in the encoded bytes, so any base64 text holding it has one of
them, leaving at most two characters of the key at either end). Every form becomes
:data:`MASK`. Text is scrubbed whole and cut after, so no cut leaves part of the key; a text that
was already cut where it was read (a bounded read of an error body) is scrubbed with
``cut=True``, which also masks a start of a form at its end.

**The deadline.** A request's ``timeout`` bounds the whole request: connecting, sending, and
reading the status line, the headers and the body. Before each read from the socket its timeout
is set to the time left, so a server that trickles a byte a second is cut off when the time is
up, not held while every read returns in time.
"""

from __future__ import annotations

import base64
import http.client
import io
import re
import ssl
import time
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["APIKey", "MASK", "opener"]

#: What each appearance of the key becomes in a text a server sent.
MASK = "[API key]"
#: Base64 forms are scrubbed for keys of at least this many characters (a shorter key's fragments are too short
#: to tell from ordinary text).
_MIN_ENCODED = 12
#: The shortest start of a form masked at the end of a text cut where it was read.
_MIN_PARTIAL = 4


def _forms(value: str) -> tuple[str, ...]:
    """Every form of the key scrubbed (longest first, so a longer form is masked before a part of it)."""
    quoted = {urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}
    forms = {value, *quoted, *(re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), q) for q in quoted)}
    if len(value) >= _MIN_ENCODED:
        raw = value.encode("ascii")
        for start in range(3):  # whatever the key's offset in the encoded bytes, one of these starts a 3-byte group
            part = raw[start:]
            encoded = base64.b64encode(part[: len(part) - len(part) % 3]).decode("ascii")
            forms |= {encoded, encoded.replace("+", "-").replace("/", "_")}
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))


class APIKey:
    """An API key read from the environment variable ``variable``, that shows itself nowhere.

    The value must be printable ASCII without spaces (what an HTTP header can carry): a key with
    a line break (``KEY=$(cat file)`` from a file with a CR LF) or a space is refused, naming
    the variable and the character's position, not the value.

    >>> key = APIKey("MY_KEY", "sk-0123456789abcdef")
    >>> key, str(key)
    (APIKey(from MY_KEY), 'APIKey(from MY_KEY)')
    >>> key.scrub("echo: Bearer sk-0123456789abcdef, ?k=sk-0123456789abcdef")
    'echo: Bearer [API key], ?k=[API key]'
    >>> key.scrub("the body was cut here: sk-0123", cut=True)
    'the body was cut here: [API key]'
    >>> APIKey("MY_KEY", "sk-0123\\n")
    Traceback (most recent call last):
    ...
    ValueError: the environment variable MY_KEY holds the API key with a space, a line break or ... (character 8 of 8); ...
    """

    __slots__ = ("variable", "_value", "_forms")

    def __init__(self, variable: str, value: str) -> None:
        self.variable = variable  # first: the repr of an APIKey being made is sound
        bad = next((i for i, character in enumerate(value) if not "!" <= character <= "~"), None)
        if bad is not None:
            length = len(value)
            del value  # the traceback's frame then holds no copy of the key
            raise ValueError(f"the environment variable {variable} holds the API key with a space, a line break or "
                             f"another character an HTTP header cannot carry (character {bad + 1} of {length}); "
                             "set it to the key alone")
        self._value = value
        self._forms = _forms(value)

    def __repr__(self) -> str:
        return f"APIKey(from {self.variable})"

    def authorization(self) -> str:
        """The ``Authorization`` header's value."""
        return f"Bearer {self._value}"

    def scrub(self, text: str, *, cut: bool = False) -> str:
        """``text`` with every form of the key masked; ``cut``: ``text`` was cut where it was read, and a
        start of a form at its end (at least four characters) is masked too."""
        for form in self._forms:
            text = text.replace(form, MASK)
        if cut:
            for form in self._forms:
                start = next((n for n in range(len(form) - 1, _MIN_PARTIAL - 1, -1) if text.endswith(form[:n])), None)
                if start is not None:
                    text = text[:-start] + MASK
        return text

    def scrub_value(self, value: Any) -> tuple[Any, bool]:
        """A parsed JSON ``value`` with every string in it (keys too) scrubbed, and whether one held the key.

        >>> APIKey("MY_KEY", "sk-0123456789abcdef").scrub_value({"content": "sk-0123456789abcdef", "n": [1]})
        ({'content': '[API key]', 'n': [1]}, True)
        """
        if isinstance(value, str):
            scrubbed = self.scrub(value)
            return scrubbed, scrubbed != value
        if isinstance(value, list):
            items = [self.scrub_value(item) for item in value]
            return [item for item, _ in items], any(held for _, held in items)
        if isinstance(value, dict):
            pairs = [(self.scrub_value(key), self.scrub_value(item)) for key, item in value.items()]
            return {key: item for (key, _), (item, _) in pairs}, any(k or i for (_, k), (_, i) in pairs)
        return value, False


# -- the deadline -------------------------------------------------------------------------------


class _DeadlineReader(io.RawIOBase):
    """A socket's bytes, each read given the time left before ``deadline`` (``time.monotonic``)."""

    def __init__(self, sock: Any, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)  # holds the socket open until the reply is read
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(buffer)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """The socket as :class:`http.client.HTTPResponse` sees it: it only asks for a file to read."""

    def __init__(self, sock: Any, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


class _DeadlineConnection(http.client.HTTPConnection):
    """An HTTP connection whose request, from connecting to the reply's last byte, ends within its timeout."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = time.monotonic() + float(self.timeout)  # type: ignore[arg-type]  # always a number here

    def connect(self) -> None:
        self.timeout = _time_left(self._deadline)
        super().connect()

    def send(self, data: Any) -> None:
        if self.sock is not None:
            self.sock.settimeout(_time_left(self._deadline))
        super().send(data)

    def response_class(self, sock: Any, *args: Any, **kwargs: Any) -> http.client.HTTPResponse:  # type: ignore[override]
        return http.client.HTTPResponse(_DeadlineSocket(sock, self._deadline), *args, **kwargs)  # type: ignore[arg-type]


class _DeadlineHTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    """:class:`_DeadlineConnection` over TLS (the handshake's reads are bounded each by the time left when it starts)."""


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: Any) -> Any:
        return self.do_open(_DeadlineConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(context=self._tls)

    def https_open(self, req: Any) -> Any:
        return self.do_open(_DeadlineHTTPSConnection, req, context=self._tls)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: the 3xx reaches the caller as an :class:`urllib.error.HTTPError`."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None


def opener(loopback: bool) -> urllib.request.OpenerDirector:
    """urllib's opener that follows no redirect (the key is never sent to where one points), ends
    each request within its ``timeout`` and, for a loopback address, asks no proxy."""
    handlers: list[Any] = [_NoRedirect(), _HTTPHandler(), _HTTPSHandler()]
    if loopback:
        handlers.append(urllib.request.ProxyHandler({}))  # a proxy cannot reach our loopback
    return urllib.request.build_opener(*handlers)
