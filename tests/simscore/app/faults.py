"""The ``simscore`` command line with a fault at one write point (a helper of ``test_faults.py``).

Every file simscore writes goes through :func:`simscore.io.output.atomic_open`, which writes a
temporary file and renames it over the target. This runner counts those renames (the *write
points*, in the order a run makes them) and, at the ``--at``-th one, sends itself a signal
after the file's content is complete and before the rename: SIGKILL ends the process on the
spot (the temporary file stays behind); SIGTERM is raised as
:class:`~simscore.errors.RunStopped` and unwinds; with WAIT it sends nothing, prints
``waiting at <path>`` on stderr and waits (a minute) for a signal from outside, which a test
sends. With ``--at 0`` nothing happens; each rename is listed in ``--list`` (one
``<number> <path>`` a line) either way.

    python -m tests.simscore.app.faults --at 12 --signal KILL --list writes.txt -- run cfg.toml --out DIR --jobs 1

Only this process is watched: run with ``--jobs 1`` so every write is made here.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any


class _FaultyOs:
    """The ``os`` module as :mod:`simscore.io.output` sees it, with a fault in ``replace``."""

    def __init__(self, at: int, signum: int | None, listing: Path | None) -> None:
        self.count = 0
        self.at = at
        self.signum = signum
        self.listing = listing

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def replace(self, source: Any, target: Any) -> None:
        self.count += 1
        if self.listing is not None:
            with open(self.listing, "a", encoding="utf-8") as handle:
                handle.write(f"{self.count} {os.fspath(target)}\n")
        if self.count == self.at:
            if self.signum is None:
                print(f"waiting at {os.fspath(target)}", file=sys.stderr, flush=True)
                time.sleep(60)  # for the signal a test sends
            else:
                os.kill(os.getpid(), self.signum)
                time.sleep(30)  # SIGTERM's handler raises within this sleep; SIGKILL never returns
        os.replace(source, target)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.simscore.app.faults")
    parser.add_argument("--at", type=int, default=0, help="the write point to fail at (1-based; 0: none)")
    parser.add_argument("--signal", choices=("KILL", "TERM", "WAIT"), default="KILL")
    parser.add_argument("--list", type=Path, help="append every write point to this file")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the simscore command line")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    import simscore.io.output

    # a test sends SIGINT: a background job of a non-interactive shell (`cmd &` in a script) starts with it
    # ignored, and Python then raises no KeyboardInterrupt; the user's Ctrl-C is what this stands for
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signum = None if args.signal == "WAIT" else getattr(signal, f"SIG{args.signal}")
    simscore.io.output.os = _FaultyOs(args.at, signum, args.list)  # type: ignore[assignment]
    from simscore.app.cli import main as simscore

    return simscore(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
