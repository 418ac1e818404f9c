"""The figure of a behaviour map (:mod:`simscore.analysis.behaviour_map`): who behaves like whom.

:func:`draw_map_page` draws, at a page's width (7 inches), for one measure: on the left the
similarity matrix as a heatmap ordered by the clustering, its dendrogram above it (each merge
labelled with its bootstrap support where the cluster has more than one and fewer than all
policies); on the right the 2-D map (classical scaling of the same distances), each policy
labelled (a name longer than :data:`LABEL_LENGTH` characters by its start) beside its point
where the label overlaps the fewest others and stays inside the map. The style is the
report's (:func:`simscore.plots.figure_style`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simscore.io import prepare_output
from simscore.plots._canvas import PALETTE, figure_style, measure_label, new_figure, set_title
from simscore.plots.output import save_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from simscore.analysis.behaviour_map import BehaviourMap

__all__ = ["draw_map_page", "plot_map_page"]


def draw_map_page(bmap: BehaviourMap, measure: str) -> Figure:
    """The heatmap with its dendrogram and the 2-D map of ``measure`` (one of ``bmap.measures``)."""
    if measure not in bmap.measures:
        raise ValueError(f"the map has no measure {measure!r} (it has {', '.join(bmap.measures)})")
    from scipy.cluster.hierarchy import dendrogram

    order = bmap.order[measure]
    labels = [_short(name) for name in order]
    n = len(order)
    matrix = bmap.similarity[measure].loc[order, order].to_numpy()
    height = 3.4 + 0.08 * max(n - 8, 0)
    with figure_style():
        figure = new_figure(7.0, height)
        grid = figure.add_gridspec(2, 2, width_ratios=[1.15, 1.0], height_ratios=[0.28, 1.0])
        tree_ax = figure.add_subplot(grid[0, 0])
        heat_ax = figure.add_subplot(grid[1, 0])
        map_ax = figure.add_subplot(grid[:, 1])
        drawn = dendrogram(bmap.linkage[measure], ax=tree_ax, no_labels=True, color_threshold=0,
                           above_threshold_color="#555555", link_color_func=lambda _k: "#555555")
        _support_labels(tree_ax, drawn, bmap, measure)
        tree_ax.set_xlim(0, 10 * n)  # scipy puts leaf k at 10 k + 5: the heatmap's columns below
        tree_ax.set_xticks([])
        tree_ax.grid(False)
        tree_ax.spines[["left", "bottom"]].set_visible(False)
        tree_ax.tick_params(axis="y", labelsize=7)
        tree_ax.set_ylabel("distance", fontsize=7)
        image = heat_ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto",
                               extent=(0, 10 * n, 10 * n, 0))
        heat_ax.grid(False)
        centres = [10 * k + 5 for k in range(n)]
        heat_ax.set_xticks(centres, labels, rotation=90, fontsize=7 if n > 12 else 8)
        heat_ax.set_yticks(centres, labels, fontsize=7 if n > 12 else 8)
        if n <= 12:
            for i in range(n):
                for j in range(n):
                    value = matrix[i, j]
                    if np.isfinite(value):
                        heat_ax.text(centres[j], centres[i], f"{value:.2f}", ha="center", va="center", fontsize=6,
                                     color="white" if value < 0.6 else "black")
        figure.colorbar(image, ax=[tree_ax, heat_ax], shrink=0.6, label=measure_label(measure))
        coords = bmap.coords[measure]
        map_ax.scatter(coords["x"], coords["y"], color=PALETTE[0], s=18, zorder=3)
        map_ax.set_xlabel("map, first axis\n(distance 1 - similarity)")
        map_ax.set_ylabel("second axis")
        map_ax.set_aspect("equal", adjustable="datalim")
        unit = bmap.unit if bmap.unit != "contexts" else "contexts"
        set_title(figure, f"Who behaves like whom: {measure_label(measure)} on {bmap.contexts:,} shared contexts "
                          f"({bmap.units:,} {unit} resampled)")
        # last: the labels are placed on the laid-out page, which they then leave as it is
        _place_labels(map_ax, coords[["x", "y"]].to_numpy(), [_short(str(name)) for name in coords.index])
    return figure


#: Where a point's label may go, in the order tried: (dx, dy) in points from the point and the
#: text's alignment -- beside it (right and above first, as a reader looks for it), then further
#: up or down with a thin line to its point, where the points crowd.
LABEL_PLACES = ((4, 3, "left", "bottom"), (4, -3, "left", "top"), (-4, 3, "right", "bottom"),
                (-4, -3, "right", "top"), (0, 6, "center", "bottom"), (0, -6, "center", "top"),
                (6, 0, "left", "center"), (-6, 0, "right", "center"),
                *((dx, dy, ha, va) for dy, va in ((12, "bottom"), (-12, "top"), (21, "bottom"), (-21, "top"),
                                                  (30, "bottom"), (-30, "top"))
                  for dx, ha in ((8, "left"), (-8, "right"))))
#: Beyond this distance (points) a label is joined to its point by a line.
LEADER_BEYOND = 10


def _place_labels(ax: Any, points: np.ndarray, labels: list[str]) -> None:
    """Label each point where its text overlaps the fewest labels placed before, other points and the
    axes' edge (greedy over :data:`LABEL_PLACES`, points from left to right; deterministic)."""
    from matplotlib.transforms import Bbox

    ax.figure.canvas.draw()  # the layout and the equal aspect's limits, before positions are read
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    shown = ax.transData.transform(points)
    dots = [Bbox.from_bounds(x - 3.0, y - 3.0, 6.0, 6.0) for x, y in shown]
    taken: list[Any] = []
    for k in sorted(range(len(labels)), key=lambda i: (shown[i][0], shown[i][1])):
        best: tuple[float, Any] | None = None
        for dx, dy, ha, va in LABEL_PLACES:
            leader = {"arrowstyle": "-", "color": "#888888", "linewidth": 0.5, "shrinkA": 0, "shrinkB": 2} \
                if abs(dy) > LEADER_BEYOND else None
            text = ax.annotate(labels[k], tuple(points[k]), xytext=(dx, dy), textcoords="offset points", fontsize=7,
                               ha=ha, va=va, arrowprops=leader)
            text.set_in_layout(False)  # the layout drawn above stays as it is
            box = text.get_window_extent(renderer)
            cost = sum(_overlap(box, other) for other in taken) + sum(
                _overlap(box, dot) for j, dot in enumerate(dots) if j != k) + box.width * box.height - _overlap(box, frame)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, text)
            else:
                text.remove()
            if cost == 0.0:
                break
        assert best is not None
        taken.append(best[1].get_window_extent(renderer))


def _overlap(a: Any, b: Any) -> float:
    """The area two boxes share (display units; matplotlib's intersection, None where they are apart)."""
    from matplotlib.transforms import Bbox

    shared = Bbox.intersection(a, b)
    return 0.0 if shared is None else shared.width * shared.height


#: The longest policy name a figure shows whole (longer ones: their start and an ellipsis).
LABEL_LENGTH = 24


def _short(name: str) -> str:
    """``name`` as the figure labels it: at most :data:`LABEL_LENGTH` characters.

    >>> _short("ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm")
    'ft:gpt-4.1-2025-04-14:s…'
    """
    return name if len(name) <= LABEL_LENGTH else name[: LABEL_LENGTH - 1] + "\u2026"


def _support_labels(ax: Any, drawn: dict[str, Any], bmap: BehaviourMap, measure: str) -> None:
    """Each inner merge's bootstrap support above its node of the dendrogram."""
    table = bmap.clusters[measure]
    heights = table["height"].to_numpy()
    n = len(bmap.policies)
    for xs, ys in zip(drawn["icoord"], drawn["dcoord"], strict=True):
        top = ys[1]
        k = int(np.argmin(np.abs(heights - top)))
        size = int(table["size"].iloc[k])
        if 1 < size < n:
            ax.text((xs[1] + xs[2]) / 2, top, f"{table['support'].iloc[k]:.0%}", ha="center", va="bottom", fontsize=6)


def plot_map_page(bmap: BehaviourMap, measure: str, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """:func:`draw_map_page` written to ``path`` (PNG, atomically); returns the path."""
    if Path(path).suffix.lower() != ".png":
        raise ValueError(f"path must end in .png, got {os.fspath(path)!r}")
    target = prepare_output(path, overwrite=overwrite)  # before drawing
    return save_figure(draw_map_page(bmap, measure), target, overwrite=overwrite)
