"""``simscore explain DIR``: why the experiment"s policies differ (application layer: the command line).

The work is :func:`simscore.app.inspect.explain.explain`; this module parses its options.
"""

from __future__ import annotations

import argparse
from typing import Any

from simscore.app.cli.args import permutations, positive_int
from simscore.app.cli.args import seed as seed_type
from simscore.app.experiment.folder import ExperimentFolder
from simscore.app.inspect.explain import explain

__all__ = ["add_subcommands", "cmd_explain"]


def cmd_explain(args: argparse.Namespace) -> int:
    """Run ``simscore explain`` (the folder locked while it writes ``explain/``)."""
    from simscore.parallel import stop_on_signals

    with stop_on_signals(), ExperimentFolder(args.directory).lock_if_present("simscore explain"):
        path = explain(args.directory, seed=args.seed, n_permutations=args.permutations, top=args.top,
                       n_jobs=args.jobs, progress=not getattr(args, "quiet", False))
    print(f"wrote {path}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore explain`` on the CLI's sub-command parsers.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["explain", "d", "--top", "3"])
    >>> args.func is cmd_explain, args.directory, args.top, args.seed
    (True, 'd', 3, 0)
    """
    p = subparsers.add_parser("explain", help="chance-corrected agreement, churn floor, where and why policies differ")
    p.add_argument("directory", help="experiment output folder (writes DIR/explain/)")
    p.add_argument("--seed", type=seed_type, default=0, help="seed of the tests and classifiers (default 0)")
    p.add_argument("--permutations", type=permutations, default=200, help="permutations of the tests (default 200)")
    p.add_argument("--top", type=positive_int, default=5, help="rows of the top-N tables (default 5)")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help="threads for the two-sample test's permutations (default: one per core)")
    p.set_defaults(func=cmd_explain)
