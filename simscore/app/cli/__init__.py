"""The ``simscore`` command line (application layer: the one place that wires packages together).

:func:`main` is the command (``simscore``, ``python -m simscore``); :func:`build_parser`
registers the sub-command given, from its own module of this room, imported only when that
command runs (:data:`COMMANDS` lists them all, so ``simscore --help`` imports none):
:mod:`~simscore.app.cli.compare` (``compare``), :mod:`~simscore.app.cli.experiment` (``demo``,
``run``), :mod:`~simscore.app.cli.contexts` (``contexts``, with ``contexts flows``),
:mod:`~simscore.app.cli.train`, :mod:`~simscore.app.cli.respond`, :mod:`~simscore.app.cli.explain`,
:mod:`~simscore.app.cli.report`, :mod:`~simscore.app.cli.view`, :mod:`~simscore.app.cli.map`,
:mod:`~simscore.app.cli.diagnose` and
:mod:`~simscore.app.cli.gate`;
their argument types are in :mod:`~simscore.app.cli.args`. Errors print ``simscore <command>:
error: ...`` on stderr and exit with code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import IO

from simscore._version import __version__
from simscore.errors import RunStopped, SimscoreError
from simscore.io.untrusted import TerminalStream, terminal_text
from simscore.parallel import stop_on_signals
from simscore.progress import LineClock

__all__ = ["main", "build_parser"]


#: Every sub-command, in the order ``simscore --help`` lists them -> the module of this room that
#: registers it and its one-line help (a test holds each equal to what its module registers).
COMMANDS: dict[str, tuple[str, str]] = {
    "compare": ("compare", "score two response logs against each other"),
    "demo": ("experiment", "the paper's experiment, small: train, collect, respond, score, report"),
    "run": ("experiment", "run (or continue) an experiment described by a TOML file"),
    "contexts": ("contexts", "build and inspect context sets (C_gen, C_col)"),
    "train": ("train", "train a GP-SARSA policy against the simulated user (checkpoints + evaluations)"),
    "respond": ("respond", "answer a context set with any policy and write its responses file"),
    "explain": ("explain", "chance-corrected agreement, churn floor, where and why policies differ"),
    "report": ("report", "rebuild figures and report.md from the tables saved in DIR"),
    "view": ("view", "write an HTML page of the contexts where two policies differ"),
    "map": ("map", "the behaviour map of 3 or more policies: who behaves like whom"),
    "diagnose": ("diagnose", "can a measure be fooled? degenerate policies vs real ones"),
    "gate": ("gate", "CI gate: does the candidate lose what the baseline won? (exit 0 pass, 1 regression, 2 bad input, "
             "3 undecided)"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only that command's module is imported.

    Every command is listed (``simscore --help``) by its name and help from :data:`COMMANDS`;
    the command given is registered in full by its own module, the others stay a name until
    they run. ``None`` (the default) registers every command in full (the documentation's
    reference, the tests of every option).
    """
    parser = argparse.ArgumentParser(
        prog="simscore",
        description="Similarity scoring for dialogue behaviour comparison (Ultes & Maier 2020).",
    )
    parser.add_argument("--version", action="version", version=f"simscore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    full = {module for module, _ in COMMANDS.values()} if command is None else {COMMANDS.get(command, ("", ""))[0]}
    registered: set[str] = set()
    for name, (module, summary) in COMMANDS.items():
        if module not in full:
            sub.add_parser(name, help=summary)  # a name in the list; its module loads when it runs
        elif module not in registered:
            registered.add(module)
            importlib.import_module(f"{__name__}.{module}").add_subcommands(sub)
    _add_log_options(parser)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word that is not an option (the top level has only options without values)."""
    return next((word for word in argv if not word.startswith("-")), None)


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

    Standard output goes through :class:`~simscore.io.untrusted.TerminalStream`; warnings are
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
    handler.addFilter(LineClock())  # its messages count as lines for the steps' minute
    handler.setLevel(level)  # the run log lowers the loggers' level to INFO for its file, not for the console
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
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command(argv) or "")
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

