"""Progress of the long steps: a bar on a terminal, a log line at least every minute elsewhere.

One mechanism for every long step of simscore, contexts and policies -- training runs,
collection, responding, embedding, scoring, explain, figures, simulation, generation. A step
counts what it has done through :func:`progress` (or :func:`track` over an iterable), and what
is shown depends on where standard error goes:

- **a terminal**: a tqdm bar, drawn once the step has taken ``delay`` seconds;
- **anything else** (a log file, a pipe, CI): a line on the logger ``simscore.progress`` (INFO)
  every :data:`LOG_INTERVAL` seconds while the step lasts, saying what step, how far and for
  how long -- ``training: 2/6 runs done, 2m10s``. The line comes from a background thread, so
  a step whose units take minutes each (one training run) still reports; the command line
  shows it on stderr and an experiment also writes it into its ``run.log``. Steps that follow
  one another share the minute: a step that starts less than :data:`LOG_INTERVAL` seconds
  after the last line (:data:`LAST_LINE`: any step's, or any message through a handler that
  carries :class:`LineClock`) writes its first line when that minute is up, so a chain of
  short steps is never silent for longer than a minute. A step that starts after a longer
  silence, or that ends within its minute, writes nothing of its own;
- **nothing** when the step was asked for no progress (``progress=False``, ``--quiet``).

:data:`LOG_INTERVAL` and :data:`CLOCK` are module attributes read by each new step, so a
program (or a test) may change them; :class:`Progress` also takes them as arguments.

A library function that shows its own progress only when asked (``compare(progress=True)``)
lets the steps inside it -- a measure embedding its texts -- show theirs through
:func:`show_progress`, a context variable: scoped to the call, per thread, never global
(:func:`progress_enabled` inside).

Examples
--------
>>> with progress(3, "counting", unit="items", enabled=False) as bar:
...     bar.update(2)
>>> [x * x for x in track(range(3), desc="squares", enabled=False)]
[0, 1, 4]
>>> format_elapsed(130.4), format_elapsed(7), format_elapsed(3725)
('2m10s', '7s', '1h02m05s')
>>> progress_enabled()
False
>>> with show_progress(True):
...     progress_enabled()
True
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, TypeVar

__all__ = [
    "Progress", "progress", "track", "format_elapsed", "show_progress", "progress_enabled", "LOG_INTERVAL", "CLOCK",
    "LAST_LINE", "LineClock",
]

logger = logging.getLogger("simscore.progress")

#: Seconds between two log lines of a step away from a terminal (none for a shorter step).
LOG_INTERVAL = 60.0
#: The clock a step's elapsed time is read from (seconds, monotonic).
CLOCK: Callable[[], float] = time.monotonic

T = TypeVar("T")


class LastLine:
    """When the last log line went out (``time.monotonic`` seconds; None: none yet), for every step.

    One per process (:data:`LAST_LINE`): the steps' lines and the messages through a handler that
    carries :class:`LineClock` mark it, and a new step times its first line from it.
    """

    def __init__(self) -> None:
        self.at: float | None = None

    def mark(self) -> None:
        """A line went out now."""
        self.at = time.monotonic()


#: The last log line of this process, for the steps' shared minute (module docstring).
LAST_LINE = LastLine()


class LineClock(logging.Filter):
    """A handler's filter that lets every record through and marks :data:`LAST_LINE`.

    The command line's stderr handler and an experiment's ``run.log`` carry one, so that the
    messages between the steps (``training: 6 runs trained, 71.0 s``) count as lines too.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        LAST_LINE.mark()
        return True

_NESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("simscore_nested_progress", default=False)


@contextlib.contextmanager
def show_progress(enabled: bool = True) -> Iterator[None]:
    """Let the steps inside the block show their progress (or not): see the module docstring."""
    token = _NESTED.set(bool(enabled))
    try:
        yield
    finally:
        _NESTED.reset(token)


def progress_enabled() -> bool:
    """Whether the current call asked the steps inside it for their progress (:func:`show_progress`)."""
    return _NESTED.get()


def format_elapsed(seconds: float) -> str:
    """Seconds as ``7s``, ``2m10s`` or ``1h02m05s``."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """A long step's progress, shown as the module docstring says.

    Parameters
    ----------
    total : int, optional
        How many units the step has (None: unknown).
    desc : str
        What the step is (``"training"``, ``"bertscore: embedding"``).
    unit : str
        What a unit is, plural (``"runs"``, ``"texts"``).
    enabled : bool
        False: show nothing.
    delay : float
        Seconds before a terminal's bar appears.
    leave : bool
        Whether a terminal's bar stays when the step ends.
    interval : float, optional
        Seconds between two log lines (default :data:`LOG_INTERVAL`).
    clock : callable, optional
        The clock of the elapsed time in the log lines (default :data:`CLOCK`).
    stream : file, optional
        Where the bar would go (default ``sys.stderr``); a terminal or not decides the form.
    initial : int
        Units already done when the step starts (a resumed step).
    """

    def __init__(self, total: int | None, desc: str, *, unit: str = "steps", enabled: bool = True,
                 delay: float = 0.0, leave: bool = True, interval: float | None = None,
                 clock: Callable[[], float] | None = None, stream: IO[str] | None = None, initial: int = 0) -> None:
        self.total = total
        self.desc = desc
        #: whether anything is shown (False: asked for none)
        self.enabled = enabled
        self.unit = unit
        self.n = initial
        self.postfix = ""
        self.interval = LOG_INTERVAL if interval is None else interval
        self.clock = CLOCK if clock is None else clock
        self.started = self.clock()
        self._bar: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        stream = sys.stderr if stream is None else stream
        if not enabled:
            return
        if _is_terminal(stream):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=_singular(unit), file=stream, delay=delay, leave=leave,
                             initial=initial, dynamic_ncols=True)
        else:
            self._thread = threading.Thread(target=self._tick, name=f"simscore-progress {desc}", daemon=True)
            self._thread.start()

    def line(self) -> str:
        """What a log line says now: ``<desc>: <n>/<total> <unit> done[ (<postfix>)], <elapsed>``."""
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        postfix = f" ({self.postfix})" if self.postfix else ""
        return f"{self.desc}: {count} {self.unit} done{postfix}, {format_elapsed(self.clock() - self.started)}"

    def _tick(self) -> None:
        mark = time.monotonic()  # this step's last line; its start at first
        while True:
            last = LAST_LINE.at
            # a line less than an interval before the step started: its minute is this step's first
            since = min(mark, last) if last is not None and last > mark - self.interval else mark
            if self._stop.wait(max(0.0, since + self.interval - time.monotonic())):
                return
            logger.info("%s", self.line())
            mark = time.monotonic()
            LAST_LINE.mark()

    def update(self, n: int = 1) -> None:
        """``n`` more units done."""
        self.n += n
        if self._bar is not None:
            self._bar.update(n)

    def set_postfix_str(self, text: str) -> None:
        """What the step does now, beside the count (empty: nothing)."""
        self.postfix = text
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def close(self) -> None:
        """The step ended: no more lines, the bar closed."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _singular(unit: str) -> str:
    return unit[:-1] if unit.endswith("s") and len(unit) > 1 else unit


def progress(total: int | None, desc: str, **options: Any) -> Progress:
    """The progress of a step of ``total`` units (:class:`Progress`; options as there)."""
    return Progress(total, desc, **options)


def track(iterable: Iterable[T], desc: str, *, total: int | None = None, **options: Any) -> Iterator[T]:
    """The items of ``iterable``, each counted as one unit of a step (:class:`Progress`)."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    with Progress(total, desc, **options) as bar:
        for item in iterable:
            yield item
            bar.update()
