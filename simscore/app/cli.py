"""The ``simscore`` command line (application layer: the one place that wires packages together).

``simscore compare A B [--measures ...] [--out PATH|-] [--format text|json|csv] [--score-only]``
scores two response logs against each other; further commands are registered by the modules
that own them. Errors print ``simscore <command>: error: ...`` on stderr and exit with code 2.

``--contexts C.jsonl`` joins the context set's metadata onto the per-context scores;
``--by COLUMN`` then reports every measure per stratum of that metadata column (e.g. ``flow``
= seen/unseen, see ``simscore contexts flows``) with bootstrap intervals, and the difference
between strata with a permutation test (:mod:`simscore.strata`; ``--cluster dialogue_id``
moves whole dialogues). An existing ``--out`` file is replaced only with ``--force``, and
never one of the inputs.

``compare`` reads simscore's JSON Lines responses files and the CSV response logs of
:func:`simscore.responses_csv.read_responses_csv` (by suffix: ``.csv``; ``.jsonl``, ``.json``,
``.ndjson``; otherwise by content: JSON Lines if the file starts with ``{``). What it writes:

* ``--format text`` — the summary table (mean, confidence interval, counts per measure),
  headed by the two policies' names; ``--signatures`` adds every measure's signature;
* ``--format json`` — everything: the policies, provenance, bootstrap settings, the
  signatures, the summary and the per-context scores (:meth:`Comparison.to_json_dict
  <simscore.compare.Comparison.to_json_dict>`; NaN is ``null``);
* ``--format csv`` — the per-context scores, one row per context.

Where: without ``--out`` to stdout (default format ``text``); with ``--out -`` to stdout
(default format ``json``), nothing else on stdout; with ``--out PATH`` to the file (format
from ``--format``, else from the suffix ``.json`` / ``.csv``), and the text summary and
``wrote PATH`` on stdout as before. ``--score-only`` prints only the mean of each measure,
one bare number per line in the order of ``--measures`` (``nan`` when undefined), for
scripts: ``read tmr dmr < <(simscore compare a.csv b.csv --measures tmr,dmr --score-only)``;
it combines with ``--out PATH`` but not with ``--out -`` or a ``--format`` for stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from simscore._version import __version__
from simscore.app.cli_args import measure_list
from simscore.errors import RunStopped, SimscoreError
from simscore.measures import ALL_MEASURES

if TYPE_CHECKING:
    from simscore.compare import Comparison
    from simscore.strata import StratifiedComparison

__all__ = ["main", "build_parser"]


_SUFFIX_FORMATS = {".json": "json", ".csv": "csv"}


def _compare_output(args: argparse.Namespace) -> tuple[str | None, str]:
    """(file path or None for stdout, format) of ``compare``, with the flags checked."""
    to_stdout = args.out is None or args.out == "-"
    if args.score_only and to_stdout and (args.out == "-" or args.format is not None):
        raise ValueError(
            "--score-only prints only the scores on stdout; it cannot be combined with --out - or --format "
            "(give --out PATH to also write a file)"
        )
    if to_stdout:
        return None, args.format or ("json" if args.out == "-" else "text")
    if args.format is not None:
        return args.out, args.format
    suffix = os.path.splitext(args.out)[1].lower()
    if suffix not in _SUFFIX_FORMATS:
        raise ValueError(f"output path must end in .csv or .json (or give --format), got {args.out!r}")
    return args.out, _SUFFIX_FORMATS[suffix]


def _render(
    comparison: Comparison, fmt: str, heading: str, signatures: bool, strata: StratifiedComparison | None = None
) -> str:
    if fmt == "json":
        data = comparison.to_json_dict()
        if strata is not None:
            data["strata"] = strata.to_json_dict()
        return json.dumps(data, indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return str(comparison.scores.to_csv(float_format="%.10g", lineterminator="\n"))
    lines = [heading, comparison.format_summary()]
    if strata is not None:
        lines += ["", strata.format()]
    if signatures:
        lines.append("")
        lines += [f"{name:<9} {signature}" for name, signature in comparison.signatures.items()]
    return "\n".join(lines) + "\n"


def _cmd_compare(args: argparse.Namespace) -> int:
    from simscore.compare import compare
    from simscore.io import atomic_write_text, prepare_output
    from simscore.measures import resolve_measures
    from simscore.responses_csv import read_responses

    path, fmt = _compare_output(args)  # fail on bad flags and bad names before reading files
    if (args.by is not None or args.cluster is not None) and args.contexts is None:
        raise ValueError("--by and --cluster need --contexts (the context set whose metadata holds the strata)")
    if args.cluster is not None and args.by is None:
        raise ValueError("--cluster applies to a stratified comparison: give --by")
    measures = resolve_measures(args.measures)
    if path is not None:
        inputs = [args.a, args.b, *([args.contexts] if args.contexts else [])]
        prepare_output(path, inputs=inputs, overwrite=args.force)
    a = read_responses(args.a)
    b = read_responses(args.b)
    metadata = None
    if args.contexts is not None:
        from contexts.context import ContextSet

        metadata = ContextSet.read_jsonl(args.contexts)
    comparison = compare(a, b, measures, metadata=metadata, n_resamples=args.resamples, seed=args.seed)
    strata = None
    if args.by is not None:
        strata = comparison.by_stratum(
            args.by, cluster=args.cluster, n_resamples=args.resamples, n_permutations=args.permutations,
            seed=args.seed,
        )
    heading = f"{a.policy or args.a}  vs  {b.policy or args.b}  ({len(comparison.scores)} contexts)"
    if path is not None:
        atomic_write_text(path, _render(comparison, fmt, heading, args.signatures, strata))
    if args.score_only:
        sys.stdout.write("".join(f"{comparison.mean(name)!r}\n" for name in comparison.measures))
    elif path is None:
        sys.stdout.write(_render(comparison, fmt, heading, args.signatures, strata))
    else:
        sys.stdout.write(_render(comparison, "text", heading, args.signatures, strata))
        print(f"wrote {path}")
    return 0


def _stdout_is_data(args: argparse.Namespace) -> bool:
    """Whether the command writes data (JSON, CSV, bare scores) on stdout: log messages go to stderr then."""
    if getattr(args, "command", None) != "compare":
        return False
    return bool(args.score_only or args.out == "-" or (args.out is None and args.format in ("json", "csv")))


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
                   help="run training and responding on this Dask scheduler (extra: simscore-dialogue[dask])")
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

    p = sub.add_parser("compare", help="score two response logs against each other")
    p.add_argument("a", help="responses of policy A (simscore's JSON Lines responses file, or CSV)")
    p.add_argument("b", help="responses of policy B (JSON Lines or CSV)")
    p.add_argument(
        "--measures",
        type=measure_list,
        default=list(ALL_MEASURES),
        help="comma-separated measure names or groups ('all', 'action', 'text'); default: all eight",
    )
    p.add_argument(
        "--out",
        help="write the result to this file (format from --format, else .json: everything, .csv: per-context "
        "scores), or '-' for stdout (default format json)",
    )
    p.add_argument(
        "--format", choices=("text", "json", "csv"),
        help="text: the summary table; json: signatures, summary and per-context scores; csv: per-context scores "
        "(default: text on stdout, json for --out -, else by the --out suffix)",
    )
    p.add_argument(
        "--score-only", action="store_true",
        help="print only each measure's mean, one bare number per line in the order of --measures (nan if undefined)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--signatures", action="store_true", help="also print every measure's signature (text format)")
    p.add_argument(
        "--contexts", metavar="FILE",
        help="the context set (JSON Lines) the responses answer: its metadata joins the per-context scores",
    )
    p.add_argument(
        "--by", metavar="COLUMN",
        help="with --contexts: every measure per stratum of this metadata column (e.g. flow, flow_prefix, "
        "pattern_repeat), with bootstrap intervals and a permutation test between strata",
    )
    p.add_argument(
        "--cluster", metavar="COLUMN",
        help="with --by: resample and permute whole groups of contexts (e.g. dialogue_id) instead of contexts",
    )
    p.add_argument(
        "--permutations", type=int, default=10_000,
        help="random splits of a Monte Carlo permutation test (default 10000; exact tests need none)",
    )
    p.add_argument("--force", action="store_true", help="replace the --out file if it exists (never an input)")
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
    from simscore.app import cli_contexts, cli_respond, cli_train, diagnose, explain, report, view

    return [
        cli_contexts.add_subcommands,
        cli_train.add_subcommands,
        cli_respond.add_subcommands,
        explain.add_subcommands,
        report.add_subcommands,
        view.add_subcommands,
        diagnose.add_subcommands,
    ]


@contextlib.contextmanager
def _console_log(quiet: bool, stream: object = None) -> Iterator[None]:
    """Show the ``simscore`` loggers' INFO messages on ``stream`` (default stdout) while a command runs.

    Left alone when the caller has configured the ``simscore`` logger (or the root logger)
    itself, so an embedding program keeps control of where messages go.
    """
    package = logging.getLogger("simscore")
    if quiet or package.handlers or logging.getLogger().handlers:
        yield
        return
    handler = logging.StreamHandler(sys.stdout if stream is None else stream)  # type: ignore[arg-type]
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
        with _console_log(quiet=False, stream=sys.stderr if _stdout_is_data(args) else None):
            return int(args.func(args))
    except BrokenPipeError:
        # output piped into a program that stopped reading (e.g. `| head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (SimscoreError, OSError, ValueError) as exc:
        print(f"simscore {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        stopped = exc.signal if isinstance(exc, RunStopped) else signal.SIGINT
        what = "interrupted" if stopped == signal.SIGINT else str(exc)
        resume = "; run the same command again to continue" if args.command in ("run", "demo") else ""
        print(f"simscore {args.command}: {what}{resume}", file=sys.stderr)
        return 128 + int(stopped)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
