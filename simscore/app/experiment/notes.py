"""Values an experiment's tables leave undefined, said in its log rather than as warnings (application layer).

A step of the experiment whose tables hold NaN where a group is empty or an interval rests on one
dialogue (the last turns of the per-turn table, a convergence pair whose checkpoints never act
differently) is not a run that went wrong: the tables and the report show it, and the run says it
once per reason in its log (``run.log`` and, on the command line, stderr at INFO), naming where --
never as a warning line on a default run. :func:`undefined_values_logged` does that for the
:class:`~simscore.errors.MissingValueWarning` raised inside it; any other warning goes on as it came.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterable, Iterator

from simscore.errors import MissingValueWarning

__all__ = ["undefined_values_logged", "log_undefined"]

logger = logging.getLogger("simscore.app.experiment")


@contextlib.contextmanager
def undefined_values_logged(step: str) -> Iterator[None]:
    """Log the :class:`MissingValueWarning` raised inside as :func:`log_undefined` does, for ``step``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingValueWarning)
        yield
    log_undefined(step, (str(w.message) for w in caught if issubclass(w.category, MissingValueWarning)))
    for w in caught:
        if not issubclass(w.category, MissingValueWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def log_undefined(step: str, messages: Iterable[str]) -> list[str]:
    """Say at INFO, once per reason, why values are undefined, naming where; returns the lines said.

    A message reads ``<where>: <reason>`` (``ts-1@4500 -> ts-1@5000, differ: a 95% interval from
    one dialogue is undefined (NaN): ...``); the same message twice is said once.

    Examples
    --------
    >>> log_undefined("per turn", ["turn 16 tmr: an interval from one dialogue is undefined (NaN)",
    ...                            "turn 16 dmr: an interval from one dialogue is undefined (NaN)", "no pair"])
    ['per turn: an interval from one dialogue is undefined (NaN) (turn 16 tmr; turn 16 dmr)', 'per turn: no pair']
    """
    by_reason: dict[str, list[str]] = {}
    for message in dict.fromkeys(messages):
        where, _, reason = message.partition(": ")
        if not reason:
            where, reason = "", message
        by_reason.setdefault(reason, []).append(where)
    lines = []
    for reason, places in by_reason.items():
        named = "; ".join(place for place in places if place)
        lines.append(f"{step}: {reason}" + (f" ({named})" if named else ""))
        logger.info("%s", lines[-1])
    return lines
