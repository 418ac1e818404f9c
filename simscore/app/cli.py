"""The ``simscore`` command line (application layer: the one place that wires packages together).

``simscore compare A B [--measures ...] [--out PATH|-] [--format text|json|csv] [--score-only]``
scores two response logs against each other; further commands are registered by the modules
that own them. Errors print ``simscore <command>: error: ...`` on stderr and exit with code 2.

``--contexts C.jsonl`` joins the context set's metadata onto the per-context scores; on
collected contexts (C_col) the intervals then resample whole dialogues, as the experiment's
report does (``--cluster COLUMN[,COLUMN]`` names other columns, ``--no-cluster`` makes every
context a unit; the summary says what was resampled). ``--by COLUMN`` then reports every
measure per stratum of that metadata column (e.g. ``flow`` = seen/unseen, see ``simscore
contexts flows``) with bootstrap intervals, and the difference between strata with a
permutation test (:mod:`simscore.strata`) that moves the same units. An existing ``--out``
file is replaced only with ``--force``, and never one of the inputs.

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
import logging
import os
import shlex
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING

from simscore._version import __version__
from simscore.app.cli_args import (
    cache_folder,
    checks_outputs,
    column_list,
    input_file,
    installed_measures,
    measure_list,
    output_file,
    output_folder,
    permutations,
    positive_int,
    resamples,
    seed,
)
from simscore.errors import RunStopped, SimscoreError
from simscore.parallel import stop_on_signals
from simscore.untrusted import TerminalStream, spreadsheet_frame, terminal_text

if TYPE_CHECKING:
    from simscore.compare import Comparison
    from simscore.strata import StratifiedComparison

__all__ = ["main", "build_parser"]

logger = logging.getLogger(__name__)


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


def _write(
    handle: IO[str], comparison: Comparison, fmt: str, heading: str, signatures: bool,
    strata: StratifiedComparison | None = None,
) -> None:
    """Write the comparison in ``fmt`` to an open file; JSON and CSV are written as they are made."""
    if fmt == "json":
        comparison.write_json(handle, extra=None if strata is None else {"strata": strata.to_json_dict()})
    elif fmt == "csv":
        spreadsheet_frame(comparison.scores).to_csv(handle, float_format="%.10g", lineterminator="\n")
    else:
        handle.write(_text(comparison, heading, signatures, strata))


def _text(comparison: Comparison, heading: str, signatures: bool, strata: StratifiedComparison | None) -> str:
    lines = [heading, comparison.format_summary()]
    if strata is not None:
        lines += ["", strata.format()]
    if signatures:
        lines.append("")
        lines += [f"{name:<9} {signature}" for name, signature in comparison.signatures.items()]
    return "\n".join(lines) + "\n"


def _default_measures() -> list[str]:
    """compare's default: every measure whose packages are installed; the log names what the text extra adds."""
    usable, missing = installed_measures()
    if missing:
        logger.info(
            "measures %s left out: their packages are not installed (pip install 'simscore-dialogue[text]'); "
            "scoring %s", ", ".join(missing), ", ".join(usable),
        )
    return usable


@checks_outputs
def _cmd_compare(args: argparse.Namespace) -> int:
    from simscore.compare import compare
    from simscore.io import atomic_open
    from simscore.responses_csv import read_responses

    path, fmt = _compare_output(args)  # fail on bad flags and bad names before reading files
    if (args.by is not None or args.cluster is not None) and args.contexts is None:
        raise ValueError("--by and --cluster need --contexts (the context set whose metadata holds the strata)")
    measures = _compare_measures(args)
    a = read_responses(args.a)
    b = read_responses(args.b)
    metadata = None
    if args.contexts is not None:
        from contexts.context import ContextSet
        from simscore.clusters import check_column

        metadata = ContextSet.read_jsonl(args.contexts).metadata_frame()
        for option, column in (("--by", args.by), *(("--cluster", c) for c in args.cluster or ())):
            if column is not None:  # before any scoring
                check_column(metadata, column, role=option, where=f"the context set {args.contexts}")
    # collected contexts: whole dialogues resampled (the default, "auto"), as the experiment's report does
    clusters = None if args.no_cluster else args.cluster or "auto"
    comparison = compare(a, b, measures, metadata=metadata, n_resamples=args.resamples, seed=args.seed,
                         progress=not args.quiet, clusters=clusters)
    strata = None
    if args.by is not None:  # the strata move the comparison's units
        strata = comparison.by_stratum(
            args.by, n_resamples=args.resamples, n_permutations=args.permutations, seed=args.seed,
        )
    names = [terminal_text(response.policy or path) for response, path in ((a, args.a), (b, args.b))]
    heading = f"{names[0]}  vs  {names[1]}  ({len(comparison.scores)} contexts)"
    if path is not None:
        with atomic_open(path, "w") as handle:
            _write(handle, comparison, fmt, heading, args.signatures, strata)
    if args.score_only:
        sys.stdout.write("".join(f"{comparison.mean(name)!r}\n" for name in comparison.measures))
    elif path is None:
        _write(sys.stdout, comparison, fmt, heading, args.signatures, strata)
    else:
        sys.stdout.write(_text(comparison, heading, args.signatures, strata))
        print(f"wrote {path}")
    return 0


def _options_help() -> str:
    from simscore.measures import MEASURES, measure_options

    return "; ".join(f"{name}: {', '.join(measure_options(name))}" for name in MEASURES if measure_options(name))


def _compare_measures(args: argparse.Namespace) -> list:
    """The measures of ``compare`` with ``--measure-option``, ``--device`` and ``--cache-dir``, checked before any work.

    ``--device`` is checked whichever measures run (a device torch cannot see is an error);
    given for measures that run no model, it changes nothing, and a warning says so.
    """
    from simscore.measures import (
        check_device,
        measure_options,
        options_from_assignments,
        resolve_measures,
        with_cache_dir,
        with_device,
    )

    device = None if args.device is None else check_device(args.device, name="--device")
    names = args.measures if args.measures is not None else _default_measures()
    options = with_device(names, options_from_assignments(args.measure_option), device)
    measures = resolve_measures(names, options=with_cache_dir(names, options, args.cache_dir))
    if device is not None and not any("device" in measure_options(m.name) for m in measures):
        logger.warning(
            "--device %s is not used: no measure here runs a model (%s); it applies to bertscore, emb_cos and emb_ang",
            args.device, ", ".join(m.name for m in measures),
        )
    return measures


@checks_outputs
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
    p.add_argument("--out", type=output_folder,
                   help=f"output folder; finished pieces in it are reused (default: {default_out})")
    p.add_argument("--jobs", type=positive_int, default=None, help="local worker processes (default: one per core)")
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
    p.add_argument("a", type=input_file, help="responses of policy A (simscore's JSON Lines responses file, or CSV)")
    p.add_argument("b", type=input_file, help="responses of policy B (JSON Lines or CSV)")
    p.add_argument(
        "--measures",
        type=measure_list,
        default=None,
        help="comma-separated measure names or groups ('all', 'action', 'text'); default: every measure whose "
        "packages are installed (all eight with the text extra, else the action measures and bleu4; the log "
        "names the extra). The API's compare() defaults to the action measures instead: no model is loaded "
        "unless asked for",
    )
    p.add_argument(
        "--out", type=output_file,
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
    p.add_argument("--seed", type=seed, default=0, help="bootstrap and permutation seed (default 0)")
    p.add_argument("--resamples", type=resamples, default=1000, help="bootstrap resamples (default 1000; 0: no intervals)")
    p.add_argument("--signatures", action="store_true", help="also print every measure's signature (text format)")
    p.add_argument(
        "--contexts", metavar="FILE", type=input_file,
        help="the context set (JSON Lines) the responses answer: its metadata joins the per-context scores",
    )
    p.add_argument(
        "--by", metavar="COLUMN",
        help="with --contexts: every measure per stratum of this metadata column (e.g. flow, flow_prefix, "
        "pattern_repeat), with bootstrap intervals and a permutation test between strata",
    )
    units = p.add_mutually_exclusive_group()
    units.add_argument(
        "--cluster", metavar="COLUMN[,COLUMN]", type=column_list,
        help="with --contexts: the bootstrap (and with --by the permutation test) moves whole groups of contexts "
        "whose values in these metadata columns agree (default: the dialogues of collected contexts, "
        "source_name,dialogue_id; generated contexts are units of their own)",
    )
    units.add_argument(
        "--no-cluster", action="store_true",
        help="every context is a unit, also on collected contexts (turns the default clustering by dialogue off)",
    )
    p.add_argument(
        "--permutations", type=permutations, default=10_000,
        help="random splits of a Monte Carlo permutation test (default 10000; exact tests need none)",
    )
    p.add_argument("--force", action="store_true", help="replace the --out file if it exists (never an input)")
    p.add_argument(
        "--measure-option", action="append", default=[], metavar="MEASURE.OPTION=VALUE",
        help="configure one measure (repeatable; checked before any work, recorded in the signatures), e.g. "
        "bertscore.model=DIR bertscore.num_layers=17; the options: " + _options_help(),
    )
    p.add_argument(
        "--device", metavar="cpu|cuda|cuda:N",
        help="torch device of every model-backed measure (bertscore, emb_cos, emb_ang); checked before any work, "
        "whichever measures run (a device torch cannot see is an error; with no model-backed measure a warning says "
        "it is not used) (default: cpu)",
    )
    p.add_argument(
        "--cache-dir", metavar="DIR", type=cache_folder,
        help="keep the text measures' embeddings in this folder and read them back in later runs (speed only: "
        "no number changes; e.g. an experiment's DIR/cache/embeddings)",
    )
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (one appears on a terminal when embedding takes more than a second)")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("demo", help="the paper's experiment, small: train, collect, respond, score, report")
    _experiment_options(p, "simscore-demo")
    p = sub.add_parser("run", help="run (or continue) an experiment described by a TOML file")
    p.add_argument("config", type=input_file, help="experiment configuration (TOML), e.g. examples/paper.toml")
    _experiment_options(p, "simscore-<name>")

    for register in _extensions():
        register(sub)
    _add_log_options(parser)
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


def _add_log_options(parser: argparse.ArgumentParser) -> None:
    """``--quiet`` and ``--verbose`` on every sub-command (a command's own ``--quiet`` also hides its bars)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _add_log_options(child)
            return
    options = {option for action in parser._actions for option in action.option_strings}
    if "--quiet" in options:
        quiet = next(a for a in parser._actions if "--quiet" in a.option_strings)
        quiet.help = f"{quiet.help}; the log shows only warnings and errors"
    else:
        parser.add_argument("--quiet", action="store_true", help="the log (stderr) shows only warnings and errors")
    parser.add_argument("--verbose", action="store_true", help="the log (stderr) also shows debugging messages")


class _InertFormatter(logging.Formatter):
    """Log lines with the characters a terminal acts on escaped (messages may quote files)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record))


def warning_line(message: Warning | str, category: type[Warning], prefix: str = "simscore") -> str:
    """How the command line shows a warning: one escaped line, ``<prefix>: warning: <class>: <message>``.

    A person at the command line acts on the message, not on the Python file and source line
    that raised it (what :func:`warnings.showwarning` adds, and a library user keeps).

    >>> warning_line(UserWarning("two\\nlines"), UserWarning, "simscore compare")
    'simscore compare: warning: UserWarning: two\\\\nlines\\n'
    """
    return f"{prefix}: warning: {category.__name__}: {terminal_text(str(message))}\n"


@contextlib.contextmanager
def _inert_terminal(prefix: str = "simscore") -> Iterator[None]:
    """While a command runs: its standard output and its warnings cannot drive the terminal.

    Standard output goes through :class:`~simscore.untrusted.TerminalStream`; warnings are
    shown as one escaped line each (:func:`warning_line`, after ``prefix``), each distinct
    line once per command. Standard error is left alone for the progress bars (whose carriage
    returns are how they redraw); what the commands write there themselves (errors, warnings,
    log lines) is escaped where it is written.
    """
    import warnings

    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: IO[str] | None = None, line: str | None = None) -> None:
        text = warning_line(message, category, prefix)
        if text in shown:
            return
        shown.add(text)
        with contextlib.suppress(OSError, ValueError):  # stderr closed or gone: nowhere to warn
            (sys.stderr if file is None else file).write(text)

    stdout = sys.stdout
    with warnings.catch_warnings():
        warnings.showwarning = show
        sys.stdout = TerminalStream(stdout)
        try:
            yield
        finally:
            sys.stdout = stdout


#: The loggers the command line shows (the three packages').
LOGGERS = ("simscore", "contexts", "policies")


@contextlib.contextmanager
def _console_log(level: int, stream: object = None) -> Iterator[None]:
    """Show the packages' log messages from ``level`` up on ``stream`` (default stderr) while a command runs.

    Messages go to stderr so that stdout holds only a command's output (a table, JSON, CSV, bare
    scores). Left alone when the caller has configured one of the packages' loggers (or the
    root logger) itself, so an embedding program keeps control of where messages go.
    """
    loggers = [logging.getLogger(name) for name in LOGGERS]
    if any(logger.handlers for logger in loggers) or logging.getLogger().handlers:
        yield
        return
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)  # type: ignore[arg-type]
    handler.setFormatter(_InertFormatter("[%(asctime)s] %(message)s", "%H:%M:%S"))
    previous_levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(level)
    try:
        yield
    finally:
        for logger, previous in zip(loggers, previous_levels):
            logger.removeHandler(handler)
            logger.setLevel(previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``simscore`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.quiet and args.verbose:
        parser.error("--quiet and --verbose exclude each other")
    level = logging.WARNING if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    try:  # SIGTERM unwinds like Ctrl-C: a write in progress removes its temporary file
        with stop_on_signals(), _inert_terminal(f"simscore {args.command}"), _console_log(level):
            return int(args.func(args))
    except BrokenPipeError:
        # output piped into a program that stopped reading (e.g. `| head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (SimscoreError, OSError, ValueError) as exc:
        print(f"simscore {args.command}: error: {terminal_text(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        stopped = exc.signal if isinstance(exc, RunStopped) else signal.SIGINT
        what = "interrupted" if stopped == signal.SIGINT else str(exc)
        resume = "; run the same command again to continue" if args.command in ("run", "demo") else ""
        print(f"simscore {args.command}: {what}{resume}", file=sys.stderr)
        return 128 + int(stopped)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
