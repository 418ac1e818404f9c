"""Figures of the main experiment, drawn from the tidy tables of :mod:`simscore.analysis`.

One figure per idea, as PNG: convergence curves (paper's Table 2 as a figure), seed-pair
similarity over checkpoints (Figure 3), per-turn rates (Figure 4), reward-model comparison
(Figure 5), correlation heatmaps (Figure 6), learning curves of absolute performance
(Table 1 as a figure) and chance level against trained comparisons; and the behaviour curve of
one training run watched by :class:`~simscore.monitor.BehaviourMonitor` (or the
stable-baselines3 callback built on it).

Every figure has two entry points: ``draw_<name>(table, ...) -> matplotlib.figure.Figure``
builds the figure (for inspection or further editing) and ``plot_<name>(table, path, ...)``
draws it and writes a PNG atomically, returning the path. Figures are built on
:class:`matplotlib.figure.Figure` with an Agg canvas, never through ``pyplot``, and styled
inside :func:`matplotlib.rc_context`, so nothing leaks into the caller's matplotlib state.
A figure of one's own in the same style: :func:`new_figure` inside ``with figure_style():``.
Colours come from the Okabe–Ito palette (colour-blind safe). matplotlib is imported lazily.
:func:`make_figures` draws every figure whose table is present.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore import analysis
from simscore.plots._canvas import (
    MEASURE_LABELS,
    PALETTE,
    band_line,
    check_nonempty,
    checkpoint_ticks,
    colours_for,
    figure_style,
    import_matplotlib,
    measure_label,
    new_figure,
    set_title,
)
from simscore.plots.output import png_target as _png
from simscore.plots.output import save_figure
from simscore.progress import track
from simscore.stats import Bootstrap

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PALETTE",
    "MEASURE_LABELS",
    "FIGURE_NAMES",
    "draw_convergence",
    "plot_convergence",
    "draw_seeds",
    "plot_seeds",
    "draw_per_turn",
    "plot_per_turn",
    "draw_reward_models",
    "plot_reward_models",
    "draw_correlation",
    "plot_correlation",
    "draw_performance",
    "plot_performance",
    "draw_chance",
    "plot_chance",
    "draw_behaviour",
    "plot_behaviour",
    "save_figure",
    "make_figures",
    "figures_of",
    "figure_style",
    "new_figure",
]

#: Figure names drawn by :func:`make_figures`, in report order, with the table each needs: one
#: page-width figure per question (:mod:`simscore.plots.figures`), then the appendix grids of every
#: measure (``*_all``).
FIGURE_NAMES: dict[str, str] = {
    "performance": "performance",
    "convergence": "convergence",
    "seeds": "seeds",
    "per_turn": "per_turn",
    "reward_models": "reward_models",
    "correlation": "correlation",
    "chance": "chance",
    "convergence_all": "convergence",
    "seeds_all": "seeds",
    "flow_strata": "flow_strata",
    "consequences": "consequences",
    "behaviour_map": "behaviour_map_policies",
}

_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")



def _measures(table: pd.DataFrame, measures: Sequence[str] | None) -> list[str]:
    present = list(dict.fromkeys(table["measure"]))
    if measures is None:
        return present
    names = [measures] if isinstance(measures, str) else list(measures)
    missing = [m for m in names if m not in present]
    if missing:
        raise ValueError(
            f"measures: {', '.join(map(repr, missing))} not in the table (present: {', '.join(present)})"
        )
    return names


def _rate_limits(ax: Axes, values: Sequence[float] | np.ndarray) -> None:
    """0–1 for rates, extended below 0 when a measure (CER) goes negative."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    low = min(0.0, float(finite.min()) - 0.05) if len(finite) else 0.0
    ax.set_ylim(low, 1.02)


def _grid(figure: Figure, n: int, ncols: int = 4, **kwargs: Any) -> list[Axes]:
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    axes = figure.subplots(nrows, ncols, squeeze=False, **kwargs).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return axes[:n]


def _finish_panels(axes: list[Axes], xlabel: str, ncols: int = 4) -> None:
    """Checkpoint ticks; the x label only under the bottom panel of each column."""
    ncols = max(1, min(ncols, len(axes)))
    for i, ax in enumerate(axes):
        checkpoint_ticks(ax)
        if i + ncols >= len(axes):
            ax.set_xlabel(xlabel)
            ax.tick_params(labelbottom=True)


def _outside_legend(figure: Figure, ax: Axes, title: str) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside right upper", title=title)


# ----------------------------------------------------------------------------- convergence


def draw_convergence(table: pd.DataFrame, *, measures: Sequence[str] | None = None) -> Figure:
    """Convergence curves: checkpoint k vs k − 1 per measure and run, with bootstrap bands.

    One panel per (context set, measure); one line per run, coloured by reward.
    """
    check_nonempty(table, "convergence")
    names = _measures(table, measures)
    sets = list(dict.fromkeys(table["context_set"]))
    colours = colours_for(table["reward"])
    panels = [(s, m) for s in sets for m in names]
    with figure_style():
        figure = new_figure(3.2 * min(4, len(panels)) + 1.6, 2.8 * math.ceil(len(panels) / 4) + 0.6)
        axes = _grid(figure, len(panels), sharex=True)
        for ax, (context_set, measure) in zip(axes, panels, strict=True):
            part = table[(table["context_set"] == context_set) & (table["measure"] == measure)]
            for reward, by_reward in part.groupby("reward", sort=False):
                for i, (run, curve) in enumerate(by_reward.groupby("run", sort=False)):
                    curve = curve.sort_values("checkpoint")
                    x = curve["checkpoint"].to_numpy()
                    label = f"{reward} / {run}" if reward and run else (run or reward or "run")
                    band_line(ax, x, curve["mean"], curve["ci_low"], curve["ci_high"], colours[reward],
                              linestyle=_LINESTYLES[i % 4], marker=_MARKERS[i % len(_MARKERS)], label=label)
            ax.set_title(f"{measure_label(measure)}{' — ' + context_set if context_set else ''}")
            ax.set_ylabel(f"{measure_label(measure)} (mean over contexts, 0–1)")
            _rate_limits(ax, np.concatenate([part["mean"], part["ci_low"]]))
        _finish_panels(axes, "checkpoint k (compared with k − 1)")
        _outside_legend(figure, axes[0], "reward / run")
        set_title(figure, "Convergence: similarity of consecutive checkpoints of one run (bootstrap bands)")
    return figure


def plot_convergence(table: pd.DataFrame, path: str | os.PathLike[str], *,
                     measures: Sequence[str] | None = None, overwrite: bool = False) -> Path:
    """:func:`draw_convergence` written to ``path`` (PNG); returns the path."""
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_convergence(table, measures=measures), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- seeds


def draw_seeds(table: pd.DataFrame, *, measures: Sequence[str] | None = None,
               bootstrap: Bootstrap | None = None) -> Figure:
    """Seed-pair similarity over checkpoints: thin lines per pair, bold mean over pairs with its band.

    ``bootstrap`` (:class:`simscore.stats.Bootstrap`) goes to
    :func:`simscore.analysis.seeds_aggregate`.
    """
    check_nonempty(table, "seeds")
    names = _measures(table, measures)
    aggregate = analysis.seeds_aggregate(table, bootstrap=Bootstrap.resolve(bootstrap, "draw_seeds"))
    sets = list(dict.fromkeys(table["context_set"]))
    colours = colours_for(table["reward"])
    panels = [(s, m) for s in sets for m in names]
    with figure_style():
        figure = new_figure(3.2 * min(4, len(panels)) + 2.0, 2.8 * math.ceil(len(panels) / 4) + 0.6)
        axes = _grid(figure, len(panels), sharex=True)
        for ax, (context_set, measure) in zip(axes, panels, strict=True):
            part = table[(table["context_set"] == context_set) & (table["measure"] == measure)]
            for (reward, _, _), pair in part.groupby(["reward", "run_a", "run_b"], sort=False):
                pair = pair.sort_values("checkpoint")
                ax.plot(pair["checkpoint"], pair["mean"], color=colours[reward], alpha=0.35, linewidth=0.8)
            agg = aggregate[(aggregate["context_set"] == context_set) & (aggregate["measure"] == measure)]
            for reward, curve in agg.groupby("reward", sort=False):
                curve = curve.sort_values("checkpoint")
                n_pairs = int(curve["n_pairs"].max())
                band_line(ax, curve["checkpoint"], curve["mean"], curve["ci_low"], curve["ci_high"],
                          colours[reward], linewidth=2, marker="o",
                          label=f"{reward or 'runs'}: mean of {n_pairs} pair(s)")
            ax.set_title(f"{measure_label(measure)}{' — ' + context_set if context_set else ''}")
            ax.set_ylabel(f"{measure_label(measure)} between seeds (0–1)")
            _rate_limits(ax, np.concatenate([part["mean"], agg["ci_low"]]))
        _finish_panels(axes, "checkpoint k")
        _outside_legend(figure, axes[0], "reward (thin: single pairs)")
        set_title(figure, "Seeds: similarity of runs with different seeds at the same checkpoint")
    return figure


def plot_seeds(table: pd.DataFrame, path: str | os.PathLike[str], *, measures: Sequence[str] | None = None,
               bootstrap: Bootstrap | None = None, overwrite: bool = False) -> Path:
    """:func:`draw_seeds` written to ``path`` (PNG); returns the path."""
    settings = Bootstrap.resolve(bootstrap, "plot_seeds")
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_seeds(table, measures=measures, bootstrap=settings), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- per turn


def draw_per_turn(table: pd.DataFrame, *, measures: Sequence[str] | None = None) -> Figure:
    """Per-turn rates with bootstrap bands, one line per group, and pairs scored per turn below.

    ``measures`` defaults to TMR and DMR (those present; all measures if neither is).
    """
    check_nonempty(table, "per_turn")
    present = list(dict.fromkeys(table["measure"]))
    if measures is None:
        names = [m for m in ("tmr", "dmr") if m in present] or present
    else:
        names = _measures(table, measures)
    groups = list(dict.fromkeys(table["group"]))
    colours = colours_for(groups)
    with figure_style():
        from matplotlib.ticker import MaxNLocator

        figure = new_figure(3.6 * len(names) + 2.0, 4.6)
        grid = figure.subplots(2, len(names), squeeze=False, sharex="col", height_ratios=[3, 1.2])
        for col, measure in enumerate(names):
            ax, count_ax = grid[0][col], grid[1][col]
            part = table[table["measure"] == measure]
            for i, group in enumerate(groups):
                curve = part[part["group"] == group].sort_values("turn_index")
                band_line(ax, curve["turn_index"], curve["mean"], curve["ci_low"], curve["ci_high"],
                          colours[group], marker=_MARKERS[i % 8], label=group or "all pairs")
                count_ax.plot(curve["turn_index"], curve["count"], color=colours[group], marker=_MARKERS[i % 8],
                              markersize=3)
            ax.set_title(f"{measure_label(measure)} by turn")
            ax.set_ylabel(f"{measure_label(measure)} (0–1)")
            _rate_limits(ax, part["ci_low"])
            count_ax.set_xlabel("turn index of the context")
            count_ax.set_ylabel("pairs scored")
            count_ax.set_ylim(bottom=0)
            count_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        _outside_legend(figure, grid[0][0], "comparisons")
        set_title(figure, "Similarity by dialogue turn (bootstrap bands)")
    return figure


def plot_per_turn(table: pd.DataFrame, path: str | os.PathLike[str], *,
                  measures: Sequence[str] | None = None, overwrite: bool = False) -> Path:
    """:func:`draw_per_turn` written to ``path`` (PNG); returns the path."""
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_per_turn(table, measures=measures), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- grouped bars


def _grouped_bars(ax: Axes, frame: pd.DataFrame, names: list[str], series_column: str,
                  colours: Mapping[Any, str], *, annotate: bool = False) -> None:
    series = list(dict.fromkeys(frame[series_column]))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(names))
    for i, key in enumerate(series):
        rows = frame[frame[series_column] == key].set_index("measure").reindex(names)
        means = rows["mean"].to_numpy(dtype=np.float64)
        low = np.clip(means - rows["ci_low"].to_numpy(dtype=np.float64), 0, None)
        high = np.clip(rows["ci_high"].to_numpy(dtype=np.float64) - means, 0, None)
        label = key
        if "n_pairs" in rows:
            counts = rows["n_pairs"].dropna()
            if len(counts):
                label = f"{key} (n={int(counts.max())})"
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, means, width, yerr=[np.nan_to_num(low),
                      np.nan_to_num(high)], color=colours[key], capsize=2, label=label,
                      error_kw={"linewidth": 0.8})
        if annotate:
            ax.bar_label(bars, labels=["" if np.isnan(m) else f"{m:.2f}" for m in means], fontsize=6,
                         padding=1)
    ax.set_xticks(x, [measure_label(m) for m in names])
    ax.set_xlabel("measure")


def draw_reward_models(table: pd.DataFrame, *, measures: Sequence[str] | None = None,
                       bootstrap: Bootstrap | None = None) -> Figure:
    """Reward models: grouped bars (e.g. ts-ts, iq-iq, ts-iq) per measure with intervals over pairs.

    One panel per (context set, checkpoint). ``bootstrap`` goes to
    :func:`simscore.analysis.reward_models_aggregate`.
    """
    check_nonempty(table, "reward_models")
    names = _measures(table, measures)
    settings = Bootstrap.resolve(bootstrap, "draw_reward_models")
    aggregate = analysis.reward_models_aggregate(table, bootstrap=settings)
    colours = colours_for(aggregate["group"])
    panels = list(dict.fromkeys(zip(aggregate["context_set"], aggregate["checkpoint"], strict=True)))
    with figure_style():
        figure = new_figure(max(5.0, 0.9 * len(names) + 2.5) * min(2, len(panels)) + 1.4,
                            3.4 * math.ceil(len(panels) / 2) + 0.6)
        axes = _grid(figure, len(panels), ncols=2)
        for ax, (context_set, checkpoint) in zip(axes, panels, strict=True):
            part = aggregate[(aggregate["context_set"] == context_set) & (aggregate["checkpoint"] == checkpoint)]
            _grouped_bars(ax, part, names, "group", colours)
            ax.set_title(f"checkpoint {checkpoint}{' — ' + context_set if context_set else ''}")
            ax.set_ylabel("similarity, mean over pairs (0–1)")
            _rate_limits(ax, part["ci_low"])
        _outside_legend(figure, axes[0], "reward pair")
        set_title(
            figure, "Reward models: within-reward vs cross-reward similarity (bootstrap interval over pairs)"
        )
    return figure


def plot_reward_models(table: pd.DataFrame, path: str | os.PathLike[str], *,
                       measures: Sequence[str] | None = None, bootstrap: Bootstrap | None = None,
                       overwrite: bool = False) -> Path:
    """:func:`draw_reward_models` written to ``path`` (PNG); returns the path."""
    settings = Bootstrap.resolve(bootstrap, "plot_reward_models")
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_reward_models(table, measures=measures, bootstrap=settings), target, overwrite=overwrite)


def draw_chance(table: pd.DataFrame, *, measures: Sequence[str] | None = None) -> Figure:
    """Chance level (random vs trained) beside the trained comparisons (a ``contrast`` table)."""
    check_nonempty(table, "contrast")
    names = _measures(table, measures)
    colours = colours_for(table["comparison"])
    sets = list(dict.fromkeys(table["context_set"]))
    with figure_style():
        figure = new_figure(7.0, 2.9 * len(sets) + 0.6)
        axes = _grid(figure, len(sets), ncols=1)
        for ax, context_set in zip(axes, sets, strict=True):
            part = table[table["context_set"] == context_set]
            _grouped_bars(ax, part, names, "comparison", colours)
            ax.tick_params(axis="x", labelrotation=30)
            ax.set_title(f"context set {context_set}" if context_set else "all contexts")
            ax.set_ylabel("similarity, mean (0–1)")
            _rate_limits(ax, part["ci_low"])
        handles, labels = axes[0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False, fontsize=7)
        set_title(figure, "Chance level: a random policy vs trained policies")
    return figure


def plot_chance(table: pd.DataFrame, path: str | os.PathLike[str], *,
                measures: Sequence[str] | None = None, overwrite: bool = False) -> Path:
    """:func:`draw_chance` written to ``path`` (PNG); returns the path."""
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_chance(table, measures=measures), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- correlation


def draw_correlation(table: pd.DataFrame) -> Figure:
    """Heatmaps of Pearson r and MSE between measures, all pairs and non-matching pairs (rows)."""
    check_nonempty(table, "correlation")
    subsets = list(dict.fromkeys(table["subset"]))
    matplotlib = import_matplotlib()
    with figure_style():
        size = 3.5  # two heatmaps side by side fill a page's width (7 inches)
        figure = new_figure(2 * size, size * len(subsets) + 0.4)
        axes = figure.subplots(len(subsets), 2, squeeze=False)
        mse_max = float(np.nanmax(table["mse"].to_numpy(dtype=np.float64))) if table["mse"].notna().any() else 1.0
        for row, subset in enumerate(subsets):
            matrices = analysis.correlation_matrices(table, subset)
            n = int(np.diag(matrices.n.to_numpy()).max()) if len(matrices.n) else 0
            what = {"all": "all pairs", "nonmatching": "non-matching pairs (TMR = 0)"}.get(subset, subset)
            for col, (matrix, cmap, vmin, vmax, name) in enumerate((
                (matrices.r, "PuOr", -1.0, 1.0, "Pearson r"),
                (matrices.mse, "cividis", 0.0, max(mse_max, 1e-9), "Mean squared error"),
            )):
                ax = axes[row][col]
                values = matrix.to_numpy(dtype=np.float64)
                colormap = matplotlib.colormaps[cmap].with_extremes(bad="#dddddd")
                image = ax.imshow(np.ma.masked_invalid(values), cmap=colormap, vmin=vmin, vmax=vmax)
                labels = [measure_label(m) for m in matrix.index]
                ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
                ax.set_yticks(range(len(labels)), labels, fontsize=7)
                ax.grid(False)
                for i in range(values.shape[0]):
                    for j in range(values.shape[1]):
                        v = values[i, j]
                        # white text on the dark ends of each colour map
                        if np.isnan(v):
                            text, dark = "n/a", False
                        elif cmap == "cividis":
                            text, dark = f"{v:.2f}", (v - vmin) / (vmax - vmin) < 0.35
                        else:
                            text, dark = f"{v:.2f}", abs(v) > 0.6
                        ax.text(j, i, text, ha="center", va="center", fontsize=5,
                                color="white" if dark else "black")
                ax.set_title(f"{name}, {what}\n{n:,} pairs", fontsize=8)
                figure.colorbar(image, ax=ax, shrink=0.7)
        set_title(figure, "Agreement between measures over all compared pairs")
    return figure


def plot_correlation(table: pd.DataFrame, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """:func:`draw_correlation` written to ``path`` (PNG); returns the path."""
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_correlation(table), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- performance


def draw_performance(table: pd.DataFrame) -> Figure:
    """Learning curves: task success rate, average IQ and average length per reward, with intervals over the users."""
    check_nonempty(table, "performance")
    colours = colours_for(table["reward"])
    panels = (
        ("success_rate", "task success rate (0–1)", (0.0, 1.02)),
        ("avg_iq", "average interaction quality (1–5)", (1.0, 5.05)),
        ("avg_length", "average dialogue length (turns)", None),
    )
    with figure_style():
        figure = new_figure(12.0, 3.4)
        axes = figure.subplots(1, 3, squeeze=False)[0]
        for ax, (column, ylabel, limits) in zip(axes, panels, strict=True):
            for i, (reward, curve) in enumerate(table.groupby("reward", sort=False)):
                curve = curve.sort_values("checkpoint")
                n_runs = int(curve["n_runs"].max())
                band_line(ax, curve["checkpoint"], curve[column], curve[f"{column}_low"],
                          curve[f"{column}_high"], colours[reward], marker=_MARKERS[i % 8],
                          label=f"{reward} ({n_runs} run{'s' if n_runs != 1 else ''})")
            ax.set_xlabel("checkpoint k (training dialogues)")
            checkpoint_ticks(ax)
            ax.set_ylabel(ylabel)
            ax.set_title(ylabel.split(" (")[0].capitalize())
            if limits is not None:
                ax.set_ylim(*limits)
            else:
                ax.set_ylim(bottom=0)
        _outside_legend(figure, axes[0], "reward")
        set_title(figure, "Absolute performance per checkpoint (mean over the runs' evaluation users; band: 95% "
                          "interval over the users)")
    return figure


def plot_performance(table: pd.DataFrame, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """:func:`draw_performance` written to ``path`` (PNG); returns the path."""
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_performance(table), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- behaviour monitor


def draw_behaviour(
    history: pd.DataFrame,
    *,
    measures: Sequence[str] | None = None,
    threshold: float | None = None,
    stopped_at: float | None = None,
    xlabel: str = "training step",
    title: str | None = None,
) -> Figure:
    """The behaviour curve of one training run: snapshot k vs k − 1 per measure.

    Parameters
    ----------
    history : pandas.DataFrame
        :meth:`simscore.BehaviourMonitor.history` (or the SB3 callback's ``history()``):
        ``step``, a column per measure with ``<measure>_ci_low`` / ``_ci_high`` (drawn as a
        band) and, if present, ``<measure>_chance`` (dashed: the chance level).
    measures : sequence of str, optional
        Default: every measure column of ``history``.
    threshold : float, optional
        Drawn as a dotted horizontal line (the stopping threshold).
    stopped_at : float, optional
        Drawn as a vertical line (where training stopped).
    xlabel, title : str
    """
    if not isinstance(history, pd.DataFrame) or "step" not in history.columns:
        raise ValueError("history must be a DataFrame with a 'step' column (BehaviourMonitor.history())")
    if history.empty:
        raise ValueError("history is empty: nothing to plot (fewer than two snapshots)")
    present = [c[: -len("_ci_low")] for c in history.columns if c.endswith("_ci_low")]
    names = present if measures is None else ([measures] if isinstance(measures, str) else list(measures))
    missing = [m for m in names if m not in present]
    if missing:
        raise ValueError(f"measures: {', '.join(map(repr, missing))} not in the history (present: {', '.join(present)})")
    x = history["step"].to_numpy(dtype=np.float64)
    with figure_style():
        figure = new_figure(max(6.0, 3.2 * min(4, len(names)) + 0.6), 2.8 * math.ceil(len(names) / 4) + 1.1)
        axes = _grid(figure, len(names), sharex=True)
        for ax, measure in zip(axes, names, strict=True):
            values = [history[measure], history[f"{measure}_ci_low"]]
            band_line(ax, x, history[measure], history[f"{measure}_ci_low"], history[f"{measure}_ci_high"],
                      PALETTE[0], marker="o", label="vs previous snapshot (95% CI)")
            chance = f"{measure}_chance"
            if chance in history.columns:
                ax.plot(x, history[chance], color=PALETTE[1], linestyle="--", label="chance level (random policy)")
                values.append(history[chance])
            if threshold is not None:
                ax.axhline(threshold, color=PALETTE[7], linestyle=":", linewidth=1, label=f"threshold {threshold:g}")
            if stopped_at is not None:
                ax.axvline(stopped_at, color=PALETTE[5], linewidth=1, label="stopped")
            ax.set_title(measure_label(measure))
            ax.set_ylabel(f"{measure_label(measure)} (mean over contexts)")
            _rate_limits(ax, np.concatenate([np.asarray(v, dtype=np.float64) for v in values]))
        _finish_panels(axes, xlabel)
        handles, labels = axes[0].get_legend_handles_labels()
        columns = min(len(handles), 4 if figure.get_figwidth() >= 7.5 else 2)
        figure.legend(handles, labels, loc="outside lower center", ncols=columns, frameon=False)
        heading = title or "Behaviour convergence: each snapshot vs the previous one on a fixed context set"
        set_title(figure, textwrap.fill(heading, width=int(8.5 * figure.get_figwidth())))
    return figure


def plot_behaviour(history: pd.DataFrame, path: str | os.PathLike[str], *, overwrite: bool = False,
                   **kwargs: Any) -> Path:
    """:func:`draw_behaviour` written to ``path`` (PNG); returns the path."""
    target = _png(path, overwrite)  # before drawing
    return save_figure(draw_behaviour(history, **kwargs), target, overwrite=overwrite)


# ----------------------------------------------------------------------------- all figures


def _first_map_page(tables: Mapping[str, pd.DataFrame]) -> Figure:
    """The behaviour map page of the tables' first map (an experiment's final policies on its first
    context set), of TMR where the map has it, else of its first measure."""
    from simscore.analysis.behaviour_map import from_long_tables
    from simscore.plots.behaviour_map import draw_map_page

    first = tables["behaviour_map_policies"].iloc[0]
    bmap = from_long_tables(tables, context_set=first["context_set"], map=first["map"])
    return draw_map_page(bmap, "tmr" if "tmr" in bmap.measures else bmap.measures[0])


def figures_of(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """The names of the figures :func:`make_figures` draws from ``tables``, in report order: those of
    :data:`FIGURE_NAMES` whose table is present and not empty.

    Examples
    --------
    >>> figures_of({"seeds": pd.DataFrame({"mean": [0.5]}), "chance": pd.DataFrame()})
    ['seeds', 'seeds_all']
    """
    return [name for name, source in FIGURE_NAMES.items() if _has(tables, source)]


def _has(tables: Mapping[str, pd.DataFrame], name: str) -> bool:
    """Whether ``tables`` holds table ``name``, not empty."""
    table = tables.get(name)
    return table is not None and not table.empty


def make_figures(
    directory: str | os.PathLike[str],
    tables: Mapping[str, pd.DataFrame],
    *,
    bootstrap: Bootstrap | None = None,
    references: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, Path]:
    """Draw every figure whose table is present (and not empty) into ``directory``.

    The folder's figures are this function's own: the ones it draws replace those of an
    earlier call.

    Parameters
    ----------
    directory : path-like
        Created if needed; files are ``<name>.png`` for the names of :data:`FIGURE_NAMES`.
    tables : mapping name → DataFrame
        Tables by their schema names (``performance``, ``convergence``, ``seeds``,
        ``per_turn``, ``reward_models``, ``correlation``, ``chance``; the chance figure also
        uses ``convergence``, ``seeds`` and ``reward_models`` when present).
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the aggregates over pairs (default ``Bootstrap()``).
    references : mapping, optional
        Published values to overlay (:mod:`simscore.plots.figures`): ``"performance"``,
        ``"convergence"``, ``"seeds"``, ``"reward_models"`` (DataFrames) and ``"lengths"``
        (label → value or range).
    progress : bool
        Show how many figures are drawn (:mod:`simscore.progress`).

    Returns
    -------
    dict
        Figure name → path written, in report order.
    """
    out = Path(directory)
    settings = Bootstrap.resolve(bootstrap, "make_figures")

    from simscore.plots import figures as pages

    refs = dict(references or {})
    written: dict[str, Path] = {}
    for name in track(figures_of(tables), "figures", unit="figures", enabled=progress):
        path = out / f"{name}.png"
        table = tables[FIGURE_NAMES[name]]
        if name == "performance":
            written[name] = save_figure(pages.draw_performance_page(
                table, reference=refs.get("performance"), lengths=refs.get("lengths")), path, overwrite=True)
        elif name == "convergence":
            written[name] = save_figure(pages.draw_convergence_page(table, reference=refs.get("convergence")),
                                        path, overwrite=True)
        elif name == "seeds":
            written[name] = save_figure(pages.draw_seeds_page(table, reference=refs.get("seeds"), bootstrap=settings),
                                        path, overwrite=True)
        elif name == "per_turn":
            written[name] = save_figure(pages.draw_per_turn_page(table), path, overwrite=True)
        elif name == "reward_models":
            written[name] = save_figure(pages.draw_reward_models_page(
                table, reference=refs.get("reward_models"), bootstrap=settings), path, overwrite=True)
        elif name == "behaviour_map":
            written[name] = save_figure(_first_map_page(tables), path, overwrite=True)
        elif name == "convergence_all":
            written[name] = plot_convergence(table, path, overwrite=True)
        elif name == "seeds_all":
            written[name] = plot_seeds(table, path, bootstrap=settings, overwrite=True)
        elif name == "correlation":
            written[name] = plot_correlation(table, path, overwrite=True)
        elif name == "chance":
            contrast = analysis.contrast(
                chance=table,
                convergence=tables["convergence"] if _has(tables, "convergence") else None,
                seeds=tables["seeds"] if _has(tables, "seeds") else None,
                reward_models=tables["reward_models"] if _has(tables, "reward_models") else None,
                bootstrap=settings,
            )
            written[name] = plot_chance(contrast, path, overwrite=True)
        elif name == "flow_strata":
            written[name] = save_figure(pages.draw_flow_strata_page(table), path, overwrite=True)
        elif name == "consequences":
            written[name] = save_figure(pages.draw_consequences_page(table), path, overwrite=True)
    return written
