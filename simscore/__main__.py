"""The ``simscore`` command's entry point (also ``python -m simscore``).

The command line lives in :mod:`simscore.app.cli`. Importing :mod:`simscore.app` first checks
that ``contexts`` and ``policies`` are simscore-dialogue's own packages
(:mod:`simscore.ownership`) and raises :class:`~simscore.errors.PackageClashError` when an
unrelated distribution has overwritten one of them — before any code of the command line
exists to report it. This module imports the command line and turns that error into the
command's usual one-line message and exit code 2; it is the one module outside
``simscore.app`` that imports it (``tests/test_layering.py`` says so).

Before anything loads torch, the command lets OpenMP's waiting threads sleep instead of spin
(:func:`simscore.parallel.wait_passively`, unless ``OMP_WAIT_POLICY`` is set): measured on the
2-core machine beside competing processes, a spinning torch thread doubled the embedding's
time and its CPU (docs/guide/experiment.md, "On a busy machine"); no number changes.

``import simscore`` itself does not check: simscore's core never imports ``contexts`` or
``policies`` and works beside a clash, and this module is imported after ``simscore``, so an
error raised there would be a traceback before this module could run, and a warning would be
printed ahead of the command's own message.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from simscore.errors import PackageClashError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``simscore`` command (:func:`simscore.app.cli.main`); returns the exit code."""
    from simscore.parallel import wait_passively

    wait_passively()
    try:
        from simscore.app.cli import main as command_line
    except PackageClashError as exc:
        from simscore.io.untrusted import terminal_text

        print(f"simscore: error: {terminal_text(str(exc))}", file=sys.stderr)
        return 2
    return command_line(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
