"""What the figures of :mod:`simscore.plots` and :mod:`simscore.plots.figures` share: style, canvas, colours, labels.

A private module of simscore's core, so that the appendix grids (:mod:`simscore.plots`) and the
page-width figures (:mod:`simscore.plots.figures`) draw with one style without importing each
other's private names. :mod:`simscore.plots` exposes :data:`PALETTE`, :data:`MEASURE_LABELS`,
:func:`figure_style` and :func:`new_figure` to everyone else. matplotlib is imported lazily.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from simscore import analysis
from simscore.errors import MissingDependencyError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PALETTE",
    "MEASURE_LABELS",
    "import_matplotlib",
    "figure_style",
    "new_figure",
    "measure_label",
    "check_nonempty",
    "colours_for",
    "checkpoint_ticks",
    "band_line",
    "set_title",
]

#: Okabe–Ito colours (safe for the common colour-vision deficiencies), black last.
PALETTE: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
)

#: How measures are named on axes and legends.
MEASURE_LABELS: dict[str, str] = {
    "tmr": "TMR", "dmr": "DMR", "cer": "CER", "cmr": "CMR", "use_cos": "USE cos",
    "use_ang": "USE ang", "bleu4": "BLEU-4", "bertscore": "BERTScore",
}

#: The style of every figure (with the PALETTE as its colour cycle).
_RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 120,
    "savefig.facecolor": "white",
}


def import_matplotlib() -> Any:
    """The ``matplotlib`` module, or :class:`~simscore.errors.MissingDependencyError` naming it."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is a core dependency
        raise MissingDependencyError("plots need matplotlib: pip install matplotlib") from None
    return matplotlib


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """simscore's matplotlib style (sizes, grid, the :data:`PALETTE` cycle), undone on leaving the block."""
    matplotlib = import_matplotlib()
    from cycler import cycler

    with matplotlib.rc_context({**_RC, "axes.prop_cycle": cycler(color=list(PALETTE))}):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` x ``height`` inches on an Agg canvas (never ``pyplot``), constrained layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def measure_label(measure: str) -> str:
    """How ``measure`` is named on axes and legends (:data:`MEASURE_LABELS`, else its name)."""
    return MEASURE_LABELS.get(measure, measure)


def check_nonempty(table: pd.DataFrame, schema: str, parameter: str = "table") -> None:
    """``table`` checked against ``schema`` (:func:`simscore.analysis.check_table`) and not empty."""
    analysis.check_table(table, schema, parameter)
    if table.empty:
        raise ValueError(f"{parameter} is empty: nothing to plot")


def colours_for(keys: Sequence[Any]) -> dict[Any, str]:
    """A :data:`PALETTE` colour per distinct key, in order of first appearance (cycling)."""
    return {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(dict.fromkeys(keys))}


def checkpoint_ticks(ax: Axes) -> None:
    """At most five integer ticks, thousands written as "10k", so labels never collide."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    def label(value: float, _position: int) -> str:
        if value and abs(value) >= 1000 and value % 1000 == 0:
            return f"{value / 1000:g}k"
        return f"{value:g}"

    ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(label))


def band_line(ax: Axes, x: Any, mean: Any, low: Any, high: Any, colour: str, **style: Any) -> None:
    """A curve with markers and its confidence band in the same colour."""
    ax.plot(x, mean, color=colour, markersize=3, **style)
    ax.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)


def set_title(figure: Figure, title: str) -> None:
    """The figure's bold title."""
    figure.suptitle(title, fontsize=11, fontweight="bold")
