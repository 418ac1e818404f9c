"""Progress bars for the model-backed measures, shown by the calls that ask for them.

Embedding thousands of sentences takes a while; :func:`~simscore.compare.compare`,
:func:`~simscore.scoring.score` and ``simscore compare`` ask for a bar (``progress=True``,
their default; ``--quiet`` or ``progress=False`` turns it off) by scoring inside
:func:`show_progress`. A measure then draws a tqdm bar on stderr while it embeds -- only on a
terminal (never carriage-return noise in a log file) and only once the embedding has taken
:data:`PROGRESS_DELAY` seconds, so quick calls stay silent. A measure called directly shows
none. The setting is a context variable: scoped to the call, per thread, never global.

Examples
--------
>>> progress_enabled()
False
>>> with show_progress(True):
...     progress_enabled()
True
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["show_progress", "progress_enabled", "progress_bar", "PROGRESS_DELAY"]

#: Seconds of embedding before a bar appears.
PROGRESS_DELAY = 1.0

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("simscore_measure_progress", default=False)


@contextlib.contextmanager
def show_progress(enabled: bool = True) -> Iterator[None]:
    """Let the measures draw embedding progress bars inside the block (or not)."""
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
        _ENABLED.reset(token)


def progress_enabled() -> bool:
    """Whether the current call asked for progress bars."""
    return _ENABLED.get()


def progress_bar(total: int, desc: str) -> Any:
    """A tqdm bar over ``total`` texts, or a silent stand-in when no bar was asked for.

    Shown on stderr, only where stderr is a terminal, after :data:`PROGRESS_DELAY` seconds.
    """
    if not _ENABLED.get():
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="text", file=sys.stderr, disable=None, delay=PROGRESS_DELAY,
                leave=False, dynamic_ncols=True)


class _Silent:
    """What a measure updates when no bar was asked for."""

    def update(self, n: int = 1) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
