"""The ``simscore`` command line (application layer: the one place that wires packages together).

``simscore compare A.jsonl B.jsonl [--measures ...] [--out scores.csv|scores.json]`` scores two
responses files; further commands are registered by the modules that own them.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shlex
import sys
from collections.abc import Iterator, Sequence

from simscore._version import __version__
from simscore.errors import SimscoreError
from simscore.measures import ALL_MEASURES

__all__ = ["main", "build_parser"]


def _measure_list(text: str) -> list[str]:
    names = [part.strip() for part in text.replace(" ", ",").split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected measure names separated by commas")
    return names


def _cmd_compare(args: argparse.Namespace) -> int:
    from simscore.compare import compare
    from simscore.measures import resolve_measures
    from simscore.responses import Responses

    measures = resolve_measures(args.measures)  # fail on a bad name before reading files
    a = Responses.read_jsonl(args.a)
    b = Responses.read_jsonl(args.b)
    comparison = compare(a, b, measures, n_resamples=args.resamples, seed=args.seed)
    name_a = a.policy or args.a
    name_b = b.policy or args.b
    print(f"{name_a}  vs  {name_b}  ({len(comparison.scores)} contexts)")
    print(comparison.format_summary())
    if args.signatures:
        print()
        for name, signature in comparison.signatures.items():
            print(f"{name:<9} {signature}")
    if args.out:
        comparison.save(args.out)
        print(f"wrote {args.out}")
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    from simscore.app.experiment import DEMO_CONFIG, load_config, run_experiment

    config = DEMO_CONFIG if args.command == "demo" else load_config(args.config)
    out = args.out or f"simscore-{config.name}"
    # what reproduces the results (--jobs, --scheduler and --quiet do not change them)
    command = shlex.join(["simscore", args.command, *([args.config] if args.command == "run" else []), "--out", out])
    path = run_experiment(config, out, n_jobs=args.jobs, scheduler=args.scheduler, progress=not args.quiet,
                          command=command)
    print(f"report: {path}")
    return 0


def _experiment_options(p: argparse.ArgumentParser, default_out: str) -> None:
    p.add_argument("--out", help=f"output folder; finished pieces in it are reused (default: {default_out})")
    p.add_argument("--jobs", type=int, default=None, help="local worker processes (default: one per core)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run training and responding on this Dask scheduler (extra: simscore[dask])")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_experiment)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command."""
    parser = argparse.ArgumentParser(
        prog="simscore",
        description="Similarity scoring for dialogue behaviour comparison (Ultes & Maier 2020).",
    )
    parser.add_argument("--version", action="version", version=f"simscore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("compare", help="score two responses files against each other")
    p.add_argument("a", help="responses of policy A (JSON Lines)")
    p.add_argument("b", help="responses of policy B (JSON Lines)")
    p.add_argument(
        "--measures",
        type=_measure_list,
        default=list(ALL_MEASURES),
        help="comma-separated measure names or groups ('all', 'action', 'text'); default: all eight",
    )
    p.add_argument("--out", help="write per-context scores (.csv) or everything (.json)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--signatures", action="store_true", help="also print every measure's signature")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("demo", help="the paper's experiment, small: train, collect, respond, score, report")
    _experiment_options(p, "simscore-demo")
    p = sub.add_parser("run", help="run (or continue) an experiment described by a TOML file")
    p.add_argument("config", help="experiment configuration (TOML), e.g. examples/paper.toml")
    _experiment_options(p, "simscore-<name>")

    for register in _extensions():
        register(sub)
    return parser


def _extensions() -> list:
    """Sub-command registrars of the other modules (imported lazily by their commands)."""
    from simscore.app import cli_contexts, cli_train, diagnose, report

    return [cli_contexts.add_subcommands, cli_train.add_subcommands, report.add_subcommands, diagnose.add_subcommands]


@contextlib.contextmanager
def _console_log(quiet: bool) -> Iterator[None]:
    """Show the ``simscore`` loggers' INFO messages on stdout while a command runs.

    Left alone when the caller has configured the ``simscore`` logger (or the root logger)
    itself, so an embedding program keeps control of where messages go.
    """
    package = logging.getLogger("simscore")
    if quiet or package.handlers or logging.getLogger().handlers:
        yield
        return
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[%(asctime)s] %(message)s", "%H:%M:%S"))
    previous_level = package.level
    package.addHandler(handler)
    package.setLevel(logging.INFO)
    try:
        yield
    finally:
        package.removeHandler(handler)
        package.setLevel(previous_level)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``simscore`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _console_log(quiet=False):
            return int(args.func(args))
    except BrokenPipeError:
        # output piped into a program that stopped reading (e.g. `| head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (SimscoreError, OSError, ValueError) as exc:
        print(f"simscore {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"simscore {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
