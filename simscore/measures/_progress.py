"""Embedding progress of the model-backed measures, shown by the calls that ask for it.

Embedding thousands of sentences takes a while; :func:`~simscore.comparison.compare`,
:func:`~simscore.scoring.score`, ``simscore compare`` and the experiment ask for progress
(``progress=True``, their default; ``--quiet`` or ``progress=False`` turns it off) by scoring
inside :func:`show_progress`. A measure then shows how far it has embedded through
:mod:`simscore.progress`: on a terminal a tqdm bar once the embedding has taken
:data:`PROGRESS_DELAY` seconds (quick calls stay silent), elsewhere a log line at least every
minute of a long embedding (never carriage-return noise in a log file). A measure called
directly shows none. The setting is a context variable: scoped to the call, per thread,
never global.

Examples
--------
>>> progress_bar(10, "demo: embedding").enabled  # not inside show_progress(True)
False
"""

from __future__ import annotations

from simscore.progress import Progress, progress_enabled, show_progress

__all__ = ["show_progress", "progress_enabled", "progress_bar", "PROGRESS_DELAY"]

#: Seconds of embedding before a terminal's bar appears.
PROGRESS_DELAY = 1.0


def progress_bar(total: int, desc: str) -> Progress:
    """The progress of embedding ``total`` texts (:class:`simscore.progress.Progress`), shown
    only where the call asked for it (:func:`~simscore.progress.show_progress`)."""
    return Progress(total, desc, unit="texts", delay=PROGRESS_DELAY, leave=False, enabled=progress_enabled())
