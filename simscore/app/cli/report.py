"""``simscore report DIR``: rebuild an experiment"s figures and report (application layer: the command line).

The work is :func:`simscore.app.report.document.rebuild_report`; this module parses its options.
"""

from __future__ import annotations

import argparse
from typing import Any

from simscore.app.experiment.folder import ExperimentFolder
from simscore.app.report.document import rebuild_report

__all__ = ["add_subcommands"]


def _cmd_report(args: argparse.Namespace) -> int:
    from simscore.parallel import stop_on_signals

    with stop_on_signals(), ExperimentFolder(args.directory).lock_if_present("simscore report"):
        path = rebuild_report(args.directory, progress=not getattr(args, "quiet", False))
    print(f"wrote {path}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore report DIR`` on the CLI's sub-command parsers."""
    p = subparsers.add_parser("report", help="rebuild figures and report.md from the tables saved in DIR")
    p.add_argument("directory", help="an experiment's output folder (with tables.json)")
    p.set_defaults(func=_cmd_report)
