"""``simscore demo`` and ``simscore run``: the paper's experiment, small, or one described by a TOML file.

Both run :func:`simscore.app.runner.run_experiment` into an output folder whose finished pieces
are reused (application layer: the command line).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from simscore.app.cli.args import checks_outputs, input_file, output_folder, positive_int

__all__ = ["add_subcommands"]


@checks_outputs
def _cmd_experiment(args: argparse.Namespace) -> int:
    from simscore.app.experiment.config import DEMO_CONFIG, load_config
    from simscore.app.runner import run_experiment

    config = DEMO_CONFIG if args.command == "demo" else load_config(args.config)
    out = args.out or f"simscore-{config.name}"
    # what reproduces the results (--jobs, --scheduler and --quiet do not change them)
    command = shlex.join(["simscore", args.command, *([args.config] if args.command == "run" else []), "--out", out])
    path = run_experiment(config, out, n_jobs=args.jobs, scheduler=args.scheduler, progress=not args.quiet,
                          command=command)
    print(f"report: {path}")
    return 0


def _experiment_options(p: argparse.ArgumentParser, default_out: str) -> None:
    p.add_argument("--out", type=output_folder,
                   help=f"output folder; finished pieces in it are reused (default: {default_out})")
    p.add_argument("--jobs", type=positive_int, default=None, help="local worker processes (default: one per core)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run training and responding on this Dask scheduler (extra: simscore-dialogue[dask])")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_experiment)


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore demo`` and ``simscore run`` on the CLI's sub-command parsers."""
    p = subparsers.add_parser("demo", help="the paper's experiment, small: train, collect, respond, score, report")
    _experiment_options(p, "simscore-demo")
    p = subparsers.add_parser("run", help="run (or continue) an experiment described by a TOML file")
    p.add_argument("config", type=input_file, help="experiment configuration (TOML), e.g. examples/paper.toml")
    _experiment_options(p, "simscore-<name>")
