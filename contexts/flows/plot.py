"""The figure of a flow graph: its most frequent training paths, and where test dialogues leave it.

:func:`draw_flows` builds the figure (a :class:`matplotlib.figure.Figure` on an Agg canvas,
never through ``pyplot``); :func:`plot_flows` writes it as a PNG, atomically. Left: the
``top`` most frequent training paths from source to sink, one line each (width by count),
through the nodes they visit (rows: the filled slots). Right, given the walks of test
dialogues (:meth:`FlowGraph.walk <contexts.flows.FlowGraph.walk>`): how many leave the graph
at each turn pair, split by why (a node, an edge or an ending never met in training).
matplotlib is imported lazily.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contexts.flows import SINK, SOURCE, FlowGraph, FlowWalk, node_label
from simscore.checks import check_int
from simscore.errors import MissingDependencyError
from simscore.io import prepare_output

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["MAX_TOP", "draw_flows", "plot_flows"]

#: At most this many paths are drawn (one colour each).
MAX_TOP = 8
#: Why a dialogue leaves the graph: its colour (Okabe–Ito, as simscore.plots) and legend label.
_EXITS = (("node", "#D55E00", "unseen node"), ("edge", "#E69F00", "unseen edge"), ("end", "#56B4E9", "unseen ending"))
_LABEL_WIDTH = 42


def _figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - matplotlib is a core dependency
        raise MissingDependencyError("flow figures need matplotlib: pip install matplotlib") from None
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _short(text: str) -> str:
    return text if len(text) <= _LABEL_WIDTH else text[: _LABEL_WIDTH - 1] + "…"


def _draw_paths(ax: Axes, graph: FlowGraph, top: int) -> None:
    from simscore.plots import PALETTE

    paths = graph.most_frequent_paths(top)
    visited = sorted({node for path, _ in paths for node in path}, key=lambda n: (len(n), n))
    rows: dict[Any, int] = {SOURCE: 0, **{node: i + 1 for i, node in enumerate(visited)}, SINK: len(visited) + 1}
    largest = paths[0][1]
    for rank, (path, count) in enumerate(paths):
        offset = (rank - (len(paths) - 1) / 2) * min(0.5 / max(1, len(paths)), 0.08)
        steps = (SOURCE, *path, SINK)
        ax.plot(
            range(len(steps)), [rows[n] + offset for n in steps], marker="o", markersize=3,
            color=PALETTE[rank % len(PALETTE)], linewidth=0.8 + 4.0 * count / largest, alpha=0.85,
            label=f"{count} ({count / graph.dialogues:.1%})",
        )
    domains = {slot.split("-", 1)[0] for slot in graph.slots if "-" in slot}
    common = next(iter(domains)) if len(domains) == 1 and all("-" in s for s in graph.slots) else None

    def label(node: Any) -> str:  # one domain: its name once in the title, not on every row
        if common is None or isinstance(node, str):
            return _short(node_label(node))
        return _short(node_label(tuple(slot.split("-", 1)[1] for slot in node)))

    ax.set_yticks(range(len(rows)), [label(n) for n in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("step (0 = source)")
    ax.set_ylabel("filled slots" + (f" ({common})" if common else ""))
    ax.set_title(
        f"{len(paths)} most frequent of {graph.dialogues} training paths\n"
        f"{graph.n_nodes} nodes, {graph.n_edges} edges ({graph.abstraction})",
        fontsize=9,
    )
    ax.legend(title="dialogues", fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="x", alpha=0.3)


def _draw_exits(ax: Axes, walks: Sequence[FlowWalk]) -> None:
    unseen = [w for w in walks if not w.seen]
    # an unseen ending is drawn at "end", whatever the dialogue's length
    exits = Counter((w.exit, "end" if w.exit == "end" else w.exit_index) for w in unseen)
    last = max([w.exit_index for w in unseen if w.exit != "end" and w.exit_index is not None], default=-1) + 1
    positions: list[Any] = [*range(last), "end"]
    bottom = [0] * len(positions)
    for reason, colour, label in _EXITS:
        heights = [exits[(reason, p)] for p in positions]
        ax.bar(range(len(positions)), heights, bottom=bottom, color=colour, label=label)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(range(len(positions)), [str(p + 1) if p != "end" else "end" for p in positions], fontsize=7)
    ax.set_xlabel("turn pair where the dialogue first leaves the graph")
    ax.set_ylabel("test dialogues")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(bottom, default=0) * 1.08 + 1)  # room above the tallest bar
    share = len(unseen) / len(walks) if walks else float("nan")
    ax.set_title(f"{len(unseen)} of {len(walks)} test dialogues leave the graph ({share:.1%})", fontsize=9)
    ax.legend(fontsize=7)


def draw_flows(graph: FlowGraph, walks: Sequence[FlowWalk] | None = None, *, top: int = 8) -> Figure:
    """The figure (see the module docstring); without ``walks`` only the paths panel."""
    if not isinstance(graph, FlowGraph):
        raise TypeError(f"graph must be a FlowGraph, got {type(graph).__name__}")
    top = check_int("top", top, minimum=1, maximum=MAX_TOP, error=ValueError)
    visited = {node for path, _ in graph.most_frequent_paths(top) for node in path}
    height = max(4.0, 0.3 * (len(visited) + 2) + 1.5)
    figure = _figure(13.0 if walks is not None else 7.5, height)
    if walks is None:
        _draw_paths(figure.subplots(), graph, top)
        return figure
    left, right = figure.subplots(1, 2, width_ratios=[3, 2])
    _draw_paths(left, graph, top)
    _draw_exits(right, list(walks))
    return figure


def plot_flows(
    graph: FlowGraph,
    path: str | os.PathLike[str],
    walks: Sequence[FlowWalk] | None = None,
    *,
    top: int = 8,
    overwrite: bool = False,
) -> Path:
    """Draw the figure and write it as a PNG, atomically (an existing file only with ``overwrite``)."""
    from simscore.plots import save_figure

    target = prepare_output(path, overwrite=overwrite)
    if target.suffix.lower() != ".png":
        raise ValueError(f"path must end in .png, got {os.fspath(path)!r}")
    return save_figure(draw_flows(graph, walks, top=top), target, overwrite=overwrite)

