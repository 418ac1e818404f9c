"""Figures a researcher puts in a paper: one question per figure, at a page's width (7 inches).

Each figure answers one question and, where the caller passes them, overlays the published
values it is to be compared with (open black markers, dotted):

* :func:`draw_performance_page` — how do the runs perform? Task success, IQ and length per
  reward model over training (band: the interval over the evaluation users), the paper's
  Table 1, and reference lengths (e.g. PyDial3's own Environment 1);
* :func:`draw_convergence_page` — do the runs converge? TMR of checkpoint k vs k − 1 per
  context set (thin: each run; bold: the mean over runs), the paper's Table 2;
* :func:`draw_seeds_page` — do runs with different seeds agree? TMR and DMR per context set
  (band: the interval over pairs), the paper's Table 4;
* :func:`draw_reward_models_page` — do reward models differ more than seeds? TMR and DMR of
  the within- and cross-reward pairs at the final checkpoint, the paper's Tables 3 and 4;
* :func:`draw_per_turn_page` — where in the dialogue do policies differ? TMR and DMR by turn
  (hollow markers: turns with fewer than ten pooled pairs);
* :func:`draw_consequences_page` — does the difference matter? Where two policies act
  differently at a context, how often the replayed dialogue ends differently, against the
  contexts where they act alike, and how often task success flips each way (an experiment's
  ``consequences`` table);
* :func:`draw_flow_strata_page` — do the policies agree less where the held-out users lead
  them off the training users' flows? TMR and DMR per flow stratum (seen / unseen prefix and
  whole flow) for seeds, reward models and the random policy, with intervals over dialogues.

Panels that show the same quantity share their scale. The x-axis spans the run's own
checkpoints: published values are drawn where they fall inside it, and the legend says where a
published curve goes on beyond the run (a 5,000-dialogue run beside the paper's 40,000 would
otherwise fill an eighth of the width). The many-panel grids of every measure
(:mod:`simscore.plots`) stay available as appendix figures. Reference values are plain
tables, so this module needs nothing from the application layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore import analysis
from simscore.plots._canvas import (
    band_line,
    check_nonempty,
    checkpoint_ticks,
    colours_for,
    figure_style,
    measure_label,
    new_figure,
    set_title,
)
from simscore.stats import Bootstrap

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "PAGE_WIDTH",
    "THIN_COUNT",
    "draw_performance_page",
    "draw_convergence_page",
    "draw_seeds_page",
    "draw_reward_models_page",
    "draw_per_turn_page",
    "draw_flow_strata_page",
    "consequences_groups",
    "draw_consequences_page",
]

#: Width of every figure of this module, in inches (a page's text width).
PAGE_WIDTH = 7.0
#: Per-turn points resting on fewer pooled pairs than this are drawn hollow.
THIN_COUNT = 10
_REFERENCE = {"color": "black", "marker": "x", "linestyle": ":", "linewidth": 1.0, "markersize": 5}


def _legend(ax: Axes, **kw: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, frameon=False, **kw)


def _bottom_legend(figure: Figure, axes: Sequence[Axes], ncols: int = 4) -> None:
    """One legend for the figure, under its panels (never over the data)."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label and not label.startswith("_"):
                seen.setdefault(label, handle)
    if seen:
        figure.legend(list(seen.values()), list(seen), loc="outside lower center", ncols=min(ncols, len(seen)),
                      frameon=False, fontsize=7)


def draw_performance_page(table: pd.DataFrame, *, reference: pd.DataFrame | None = None,
                          lengths: Mapping[str, float | tuple[float, float]] | None = None,
                          reference_label: str = "paper") -> Figure:
    """Task success, IQ and length per reward over training; the paper's values and reference lengths.

    Parameters
    ----------
    table : DataFrame
        ``performance`` schema (:func:`simscore.analysis.performance_table`).
    reference : DataFrame, optional
        ``reward``, ``checkpoint``, ``success_rate``, ``avg_iq``, ``avg_length`` (the paper's Table 1).
    lengths : mapping label → value or (low, high), optional
        Reference lengths drawn across the length panel (a range as a grey band).
    """
    check_nonempty(table, "performance")
    colours = colours_for(table["reward"])
    span = _span(table["checkpoint"])
    panels = (("success_rate", "task success rate"), ("avg_iq", "interaction quality (1–5)"),
              ("avg_length", "length (turns, PyDial's count)"))
    with figure_style():
        figure = new_figure(PAGE_WIDTH, 3.0)
        axes = figure.subplots(1, 3, squeeze=False, sharex=True)[0]
        for ax, (column, ylabel) in zip(axes, panels, strict=True):
            for reward, curve in table.groupby("reward", sort=False):
                curve = curve.sort_values("checkpoint")
                band_line(ax, curve["checkpoint"], curve[column], curve[f"{column}_low"], curve[f"{column}_high"],
                          colours[reward], label=f"{reward}")
            if reference is not None:
                ours = reference[reference["reward"].isin(set(table["reward"]))]
                _overlay(ax, ours, column, span, colours, reference_label)
            ax.set_ylabel(ylabel)
            checkpoint_ticks(ax)
            ax.set_xlabel("training dialogues")
        styles = ("--", "-.", ":")
        for i, (label, value) in enumerate((lengths or {}).items()):
            if isinstance(value, tuple):
                axes[2].axhspan(value[0], value[1], color="0.6", alpha=0.25, linewidth=0, label=label)
            else:
                axes[2].axhline(value, color="0.35", linestyle=styles[i % 3], linewidth=1.0, label=label)
        axes[0].set_ylim(top=1.005)
        _bottom_legend(figure, axes, ncols=4)
        set_title(figure, "How do the runs perform? (band: 95% interval over the evaluation users)")
    return figure


def _thousands(value: float) -> str:
    """Checkpoints as the axes write them: ``40k``, ``2.5k``, ``500``."""
    return f"{value / 1000:g}k" if abs(value) >= 1000 else f"{value:g}"


def _overlay(ax: Axes, reference: pd.DataFrame, column: str, span: tuple[float, float], colours: Mapping[Any, str],
             label: str, **style: Any) -> None:
    """Each reward's published ``column`` over checkpoints, drawn where it falls within ``span``.

    A curve cut short says where it goes on in its legend entry (``ts: paper (Table 1); goes on
    to 40k``); the rewards with no value inside the run get one entry saying where theirs lie,
    with nothing drawn (``paper (Table 2): 10k–40k, beyond this run``).
    """
    low, high = span
    beyond: list[float] = []
    for reward, theirs in reference.groupby("reward", sort=False):
        theirs = theirs.sort_values("checkpoint")
        checkpoints = theirs["checkpoint"].to_numpy(dtype=np.float64)
        inside = (checkpoints >= low) & (checkpoints <= high)
        outside = checkpoints[~inside]
        if not inside.any():
            beyond.extend(outside)
            continue
        note = ""
        if (outside > high).any() and (outside < low).any():
            note = f"; runs {_thousands(outside.min())}–{_thousands(outside.max())}"
        elif (outside > high).any():
            note = f"; goes on to {_thousands(outside.max())}"
        elif (outside < low).any():
            note = f"; starts at {_thousands(outside.min())}"
        colour = colours.get(reward, "black")
        ax.plot(theirs["checkpoint"][inside], theirs[column][inside],
                **{**_REFERENCE, "color": colour, "markeredgecolor": colour, **style}, label=f"{reward}: {label}{note}")
    if beyond:
        ax.plot([], [], **{**_REFERENCE, **style},
                label=f"{label}: {_thousands(min(beyond))}–{_thousands(max(beyond))}, beyond this run")


def _span(checkpoints: pd.Series) -> tuple[float, float]:
    return float(checkpoints.min()), float(checkpoints.max())


def _mean_over(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    return table.groupby(list(keys), sort=False)["mean"].agg(["mean", "min", "max"]).reset_index()


def draw_convergence_page(table: pd.DataFrame, *, reference: pd.DataFrame | None = None,
                          measure: str = "tmr", reference_label: str = "paper (Table 2)") -> Figure:
    """``measure`` of checkpoint k vs k − 1 per context set: thin lines per run, bold mean over runs.

    ``reference``: ``reward``, ``checkpoint`` and a column ``measure`` (the paper's Table 2
    means), drawn on the collected set's panel (the first context set).
    """
    check_nonempty(table, "convergence")
    part = table[table["measure"] == measure]
    sets = list(dict.fromkeys(part["context_set"]))
    colours = colours_for(part["reward"])
    span = _span(part["checkpoint"])
    with figure_style():
        figure = new_figure(PAGE_WIDTH, 3.0)
        axes = figure.subplots(1, len(sets), squeeze=False, sharey=True, sharex=True)[0]
        for j, (ax, context_set) in enumerate(zip(axes, sets, strict=True)):
            here = part[part["context_set"] == context_set]
            for (reward, _run), curve in here.groupby(["reward", "run"], sort=False):
                curve = curve.sort_values("checkpoint")
                ax.plot(curve["checkpoint"], curve["mean"], color=colours[reward], alpha=0.3, linewidth=0.7)
            for reward, curve in _mean_over(here, ["reward", "checkpoint"]).groupby("reward", sort=False):
                n = here[here["reward"] == reward]["run"].nunique()
                ax.plot(curve["checkpoint"], curve["mean"], color=colours[reward], linewidth=1.8,
                        label=f"{reward}: mean of {n} runs")
            if reference is not None and j == 0:
                _overlay(ax, reference, measure, span, colours, reference_label)
            ax.set_title(f"{context_set}")
            ax.set_xlabel("checkpoint k (vs k − 1)")
            checkpoint_ticks(ax)
        axes[0].set_ylabel(f"{measure_label(measure)} (0–1)")
        low = float(np.nanmin(part["mean"])) if len(part) else 0.0
        axes[0].set_ylim(max(0.0, min(0.5, low - 0.05)), 1.01)
        _bottom_legend(figure, axes)
        set_title(figure, f"Do the runs converge? {measure_label(measure)} of consecutive checkpoints")
    return figure


def draw_seeds_page(table: pd.DataFrame, *, reference: pd.DataFrame | None = None,
                    measures: Sequence[str] = ("tmr", "dmr"), bootstrap: Bootstrap | None = None,
                    reference_label: str = "paper (Table 4)") -> Figure:
    """Seed-pair TMR and DMR per context set over checkpoints (band: interval over pairs), the paper's Table 4."""
    check_nonempty(table, "seeds")
    names = [m for m in measures if m in set(table["measure"])]
    aggregate = analysis.seeds_aggregate(table[table["measure"].isin(names)], bootstrap=bootstrap or Bootstrap())
    sets = list(dict.fromkeys(table["context_set"]))
    colours = colours_for(table["reward"])
    span = _span(aggregate["checkpoint"])
    with figure_style():
        figure = new_figure(PAGE_WIDTH, 2.2 * len(names) + 0.8)
        grid = figure.subplots(len(names), len(sets), squeeze=False, sharex=True, sharey=True)
        for i, measure in enumerate(names):
            for j, context_set in enumerate(sets):
                ax = grid[i][j]
                agg = aggregate[(aggregate["context_set"] == context_set) & (aggregate["measure"] == measure)]
                for reward, curve in agg.groupby("reward", sort=False):
                    curve = curve.sort_values("checkpoint")
                    band_line(ax, curve["checkpoint"], curve["mean"], curve["ci_low"], curve["ci_high"],
                              colours[reward], linewidth=1.6, label=f"{reward}: mean of {int(curve['n_pairs'].max())} pairs")
                if reference is not None and j == 0:
                    _overlay(ax, reference, measure, span, colours, reference_label)
                if i == 0:
                    ax.set_title(context_set)
                if j == 0:
                    ax.set_ylabel(f"{measure_label(measure)} between seeds")
                if i == len(names) - 1:
                    ax.set_xlabel("checkpoint k")
                checkpoint_ticks(ax)
        grid[0][0].set_ylim(0.0, 1.02)
        _bottom_legend(figure, [ax for row in grid for ax in row])
        set_title(figure, "Do runs with different seeds agree? (band: 95% interval over pairs)")
    return figure


def draw_reward_models_page(table: pd.DataFrame, *, reference: pd.DataFrame | None = None,
                            measures: Sequence[str] = ("tmr", "dmr"), bootstrap: Bootstrap | None = None,
                            reference_label: str = "paper") -> Figure:
    """Within- vs cross-reward pairs at the last checkpoint: TMR and DMR per context set, the paper's values.

    ``reference``: ``group``, ``measure``, ``mean`` (e.g. ts-iq from the paper's Table 3, ts-ts
    and iq-iq from its Table 4), drawn as markers on the first context set's panel.
    """
    check_nonempty(table, "reward_models")
    names = [m for m in measures if m in set(table["measure"])]
    aggregate = analysis.reward_models_aggregate(table[table["measure"].isin(names)], bootstrap=bootstrap or Bootstrap())
    aggregate = aggregate[aggregate["checkpoint"] == aggregate.groupby("context_set")["checkpoint"].transform("max")]
    sets = list(dict.fromkeys(aggregate["context_set"]))
    groups = list(dict.fromkeys(aggregate["group"]))
    colours = colours_for(groups)
    width = 0.8 / max(1, len(groups))
    with figure_style():
        figure = new_figure(PAGE_WIDTH, 3.0)
        axes = figure.subplots(1, len(sets), squeeze=False, sharey=True)[0]
        for j, (ax, context_set) in enumerate(zip(axes, sets, strict=True)):
            part = aggregate[aggregate["context_set"] == context_set]
            x = np.arange(len(names))
            for g, group in enumerate(groups):
                rows = part[part["group"] == group].set_index("measure").reindex(names)
                means = rows["mean"].to_numpy(dtype=np.float64)
                err = [np.nan_to_num(np.clip(means - rows["ci_low"].to_numpy(dtype=np.float64), 0, None)),
                       np.nan_to_num(np.clip(rows["ci_high"].to_numpy(dtype=np.float64) - means, 0, None))]
                offset = (g - (len(groups) - 1) / 2) * width
                ax.bar(x + offset, means, width, yerr=err, color=colours[group], capsize=2,
                       label=f"{group} ({int(rows['n_pairs'].max())} pairs)", error_kw={"linewidth": 0.8})
                if reference is not None and j == 0:
                    theirs = reference[reference["group"] == group].set_index("measure").reindex(names)["mean"]
                    ax.plot(x + offset, theirs.to_numpy(dtype=np.float64), linestyle="none", marker="x",
                            color="black", markersize=6, label=reference_label if g == 0 else None)
            ax.set_xticks(x, [measure_label(m) for m in names])
            ax.set_title(f"{context_set}, checkpoint {int(part['checkpoint'].max()):,}")
        axes[0].set_ylabel("similarity, mean over pairs")
        axes[0].set_ylim(0.0, 1.05)
        _bottom_legend(figure, axes)
        set_title(figure, "Do reward models differ more than seeds? (error bars: 95% interval over pairs)")
    return figure


def draw_per_turn_page(table: pd.DataFrame, *, measures: Sequence[str] = ("tmr", "dmr")) -> Figure:
    """TMR and DMR by turn per group of pairs; turns with fewer than :data:`THIN_COUNT` pooled pairs hollow."""
    check_nonempty(table, "per_turn")
    names = [m for m in measures if m in set(table["measure"])]
    groups = list(dict.fromkeys(table["group"]))
    colours = colours_for(groups)
    with figure_style():
        from matplotlib.ticker import MaxNLocator

        figure = new_figure(PAGE_WIDTH, 3.0)
        axes = figure.subplots(1, len(names), squeeze=False, sharey=True, sharex=True)[0]
        for ax, measure in zip(axes, names, strict=True):
            part = table[table["measure"] == measure]
            for group in groups:
                curve = part[part["group"] == group].sort_values("turn_index")
                band_line(ax, curve["turn_index"], curve["mean"], curve["ci_low"], curve["ci_high"], colours[group],
                          label=group or "all pairs")
                thin = curve["count"] < THIN_COUNT
                ax.plot(curve["turn_index"][~thin], curve["mean"][~thin], linestyle="none", marker="o",
                        markersize=3.5, color=colours[group])
                ax.plot(curve["turn_index"][thin], curve["mean"][thin], linestyle="none", marker="o",
                        markersize=3.5, markerfacecolor="white", color=colours[group])
            ax.set_title(f"{measure_label(measure)} by turn")
            ax.set_xlabel("turn index of the context")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0].set_ylabel("similarity (0–1)")
        axes[0].set_ylim(0.0, 1.05)
        _bottom_legend(figure, axes)
        set_title(figure, f"Where do the policies differ? (hollow: fewer than {THIN_COUNT} pooled pairs)")
    return figure


def draw_flow_strata_page(table: pd.DataFrame, *, measures: Sequence[str] = ("tmr", "dmr")) -> Figure:
    """TMR and DMR per flow stratum (rows: measures; columns: flow prefix, whole flow) of a ``flow_strata`` table.

    Bars: the pooled pairs of each group (seeds per reward model, reward models, the random
    policy), one per stratum (seen, unseen), with the interval over dialogues.
    """
    check_nonempty(table, "flow_strata")
    pooled = table[table["pair"] == "pooled"]
    present = list(dict.fromkeys(pooled["by"]))
    # the flows, or where every held-out context had one flow label, the first two complex patterns
    strata_by = [by for by in ("flow_prefix", "flow") if by in present] or present[:2]
    pooled = pooled[pooled["by"].isin(strata_by)]
    names = [m for m in measures if m in set(pooled["measure"])] or list(dict.fromkeys(pooled["measure"]))[:2]
    groups = list(dict.fromkeys(zip(pooled["comparison"], pooled["group"], strict=True)))
    strata = sorted(set(pooled["stratum"].astype(str)))
    colours = colours_for(strata)
    titles = {"flow_prefix": "flow up to the context", "flow": "whole dialogue's flow"}
    flows = any(by in ("flow_prefix", "flow") for by in strata_by)
    # the labels say what a stratum is: flow labels name themselves, a pattern's are True/False
    shown = {stratum: stratum if flows else {"True": "with the pattern", "False": "without it"}.get(stratum, stratum)
             for stratum in strata}
    with figure_style():
        figure = new_figure(PAGE_WIDTH, 2.6 * max(1, len(names)) + 0.8)
        axes = figure.subplots(max(1, len(names)), max(1, len(strata_by)), squeeze=False, sharey=True)
        x = np.arange(len(groups))
        width = 0.8 / max(1, len(strata))
        for row, measure in enumerate(names):
            for column, by in enumerate(strata_by):
                ax = axes[row][column]
                part = pooled[(pooled["measure"] == measure) & (pooled["by"] == by)]
                for i, stratum in enumerate(strata):
                    rows = part[part["stratum"].astype(str) == stratum].set_index(["comparison", "group"])
                    rows = rows.reindex(pd.MultiIndex.from_tuples(groups, names=["comparison", "group"]))
                    mean = rows["mean"].to_numpy(dtype=np.float64)
                    low = np.nan_to_num(np.clip(mean - rows["ci_low"].to_numpy(dtype=np.float64), 0, None))
                    high = np.nan_to_num(np.clip(rows["ci_high"].to_numpy(dtype=np.float64) - mean, 0, None))
                    ax.bar(x + (i - (len(strata) - 1) / 2) * width, mean, width, yerr=[low, high], capsize=2,
                           color=colours[stratum], label=shown[stratum], error_kw={"linewidth": 0.8})
                ax.set_xticks(x, [f"{c}\n{g}" for c, g in groups], fontsize=7)
                ax.set_title(f"{measure_label(measure)}: {titles.get(by, by.removeprefix('pattern_').replace('_', ' '))}")
                ax.set_ylim(0.0, 1.05)
            axes[row][0].set_ylabel("similarity (0–1)")
        _bottom_legend(figure, list(axes[0]))
        set_title(figure, "Held-out users per flow stratum (interval over dialogues)" if flows
                  else "Held-out users, with and without a pattern (interval over dialogues)")
    return figure


#: The comparisons of a ``consequences`` table as a tick label has room for them.
_SHORT = {"convergence": "conv.", "reward models": "rewards"}


def consequences_groups(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a ``consequences`` table that speak for each comparison and group: the pooled rows
    where the group has several pairs, else its one pair's rows (table order kept).

    >>> t = pd.DataFrame({"comparison": ["seeds"] * 3 + ["random"], "group": ["ts"] * 4,
    ...                   "pair": ["a -> b", "a -> c", "pooled", "a -> random"]})
    >>> consequences_groups(t)["pair"].tolist()
    ['pooled', 'a -> random']
    """
    pooled = table["pair"] == "pooled"
    keys = list(zip(table["comparison"], table["group"], strict=True))
    with_pooled = {key for key, is_pooled in zip(keys, pooled, strict=True) if is_pooled}
    keep = [is_pooled or key not in with_pooled for key, is_pooled in zip(keys, pooled, strict=True)]
    return table[keep]


def draw_consequences_page(table: pd.DataFrame) -> Figure:
    """Does the difference matter? Two panels over the comparisons of a ``consequences`` table.

    Left: the share of continuations whose outcome changed, where the two policies acted
    differently at the context and, the control, where they acted alike. Right: where they
    acted differently, the negative and positive flip rates of task success. Bars: the pooled
    pairs of each comparison and group (:func:`consequences_groups`), the whole difference
    (``effect`` total), with the interval over dialogues.
    """
    check_nonempty(table, "consequences")
    rows = consequences_groups(table)
    rows = rows[rows["effect"] == "total"]
    groups = list(dict.fromkeys(zip(rows["comparison"], rows["group"], strict=True)))
    panels = ((("outcome_changed", "differ", "actions differ"), ("outcome_changed", "agree", "actions agree (control)")),
              (("negative_flip_rate", "differ", "success worse"), ("positive_flip_rate", "differ", "success better")))
    titles = ("outcome changed", "task success flipped (actions differ)")
    colours = colours_for([label for panel in panels for _, _, label in panel])
    with figure_style():
        figure = new_figure(PAGE_WIDTH, 3.4)
        axes = figure.subplots(1, 2, squeeze=False, sharey=True)[0]
        x = np.arange(len(groups))
        width = 0.38
        for ax, panel, title in zip(axes, panels, titles, strict=True):
            for i, (column, actions, label) in enumerate(panel):
                part = rows[rows["actions"] == actions].set_index(["comparison", "group"])
                part = part.reindex(pd.MultiIndex.from_tuples(groups, names=["comparison", "group"]))
                mean = part[column].to_numpy(dtype=np.float64)
                low = np.nan_to_num(np.clip(mean - part[f"{column}_low"].to_numpy(dtype=np.float64), 0, None))
                high = np.nan_to_num(np.clip(part[f"{column}_high"].to_numpy(dtype=np.float64) - mean, 0, None))
                ax.bar(x + (i - 0.5) * width, mean, width, yerr=[low, high], capsize=2, color=colours[label],
                       label=label, error_kw={"linewidth": 0.8})
            ax.set_xticks(x, [f"{_SHORT.get(c, c)}\n{g}" for c, g in groups], fontsize=6.5)
            ax.set_title(title)
            ax.set_ylim(0.0, 1.05)
        axes[0].set_ylabel("share of continuations")
        _bottom_legend(figure, list(axes))
        set_title(figure, "Does the difference matter? (interval over dialogues)")
    return figure
