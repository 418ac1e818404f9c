"""Where a figure is written: a PNG path checked before drawing, and the PNG written atomically.

The one writer every figure of :mod:`simscore.plots` (and of the report, ``explain`` and
``diagnose``) goes through, so the output contract holds for all of them: a ``.png`` path,
an existing file replaced only when asked, nothing half-written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from simscore.io import atomic_open, prepare_output
from simscore.plots._canvas import figure_style

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["png_target", "save_figure"]


def png_target(path: str | os.PathLike[str], overwrite: bool) -> Path:
    """``path`` checked as a figure's output (a ``.png``; the output contract) before anything is drawn."""
    if Path(path).suffix.lower() != ".png":
        raise ValueError(f"path must end in .png, got {os.fspath(path)!r}")
    return prepare_output(path, overwrite=overwrite)


def save_figure(figure: Figure, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write ``figure`` as a PNG atomically (temporary file in the same directory, then rename).

    An existing file is replaced only with ``overwrite=True``
    (:class:`~simscore.errors.OutputExistsError` otherwise); so for every ``plot_*`` function,
    which checks its ``path`` before it draws.
    """
    target = png_target(path, overwrite)
    with figure_style(), atomic_open(target, "wb") as handle:
        figure.savefig(handle, format="png")
    return target
