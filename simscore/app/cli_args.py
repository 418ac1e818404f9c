"""Argument types shared by the command line's sub-commands (application layer).

The sub-command modules (:mod:`simscore.app.cli`, :mod:`simscore.app.diagnose`, ...) import
these from here, so none of them imports another sub-command's module: the CLI registers
the sub-commands, never the other way round.
"""

from __future__ import annotations

import argparse

__all__ = ["measure_list"]


def measure_list(text: str) -> list[str]:
    """``--measures``: measure names or groups separated by commas (or spaces).

    >>> measure_list("tmr, dmr,bleu4")
    ['tmr', 'dmr', 'bleu4']
    >>> measure_list(" , ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected measure names separated by commas
    """
    names = [part.strip() for part in text.replace(" ", ",").split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected measure names separated by commas")
    return names
