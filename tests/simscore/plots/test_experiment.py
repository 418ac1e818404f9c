"""simscore.plots: every figure is a readable, valid PNG drawn from the analysis tables."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from simscore import analysis as an
from simscore import plots
from tests.simscore.synthetic import col_only as _col_only
from tests.simscore.synthetic import synthetic_tables

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()


def _visible_axes(figure):
    return [ax for ax in figure.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def _legend_texts(figure) -> list[str]:
    legends = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend()]
    return [t.get_text() for legend in legends for t in legend.get_texts()]


@pytest.mark.slow
def test_make_figures_writes_valid_pngs(tables, tmp_path):
    small = _col_only(tables)
    written = plots.make_figures(tmp_path / "figures", small, bootstrap=an.Bootstrap(n_resamples=100))
    # every figure whose table is there: the synthetic tables have neither the held-out
    # flow_strata table, nor the replayed consequences table, nor the behaviour maps (the experiment tests
    # draw those three)
    assert list(written) == [name for name, source in plots.FIGURE_NAMES.items() if source in small]
    missing = {source for source in plots.FIGURE_NAMES.values() if source not in small}
    assert missing == {"flow_strata", "consequences", "behaviour_map_policies"}
    assert len(written) == len(plots.FIGURE_NAMES) - len(missing)
    for name, path in written.items():
        assert path == tmp_path / "figures" / f"{name}.png"
        assert path.read_bytes()[:8] == PNG_SIGNATURE
        image = imread(path)
        assert image.ndim == 3 and image.shape[0] > 250 and image.shape[1] > 400, name
        assert float(image[..., :3].std()) > 0.05, name  # not a blank canvas
    # atomic writes leave no temporary files behind
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == sorted(f"{n}.png" for n in written)


def test_make_figures_skips_absent_tables(tables, tmp_path):
    small = _col_only(tables)
    written = plots.make_figures(tmp_path, {"performance": small["performance"], "seeds": small["seeds"].iloc[:0]})
    assert list(written) == ["performance"]
    assert [p.name for p in tmp_path.iterdir()] == ["performance.png"]


def test_convergence_figure_is_labelled(tables):
    figure = plots.draw_convergence(tables["convergence"])
    axes = _visible_axes(figure)
    assert len(axes) == 2 * 4  # context sets × measures
    titles = [ax.get_title() for ax in axes]
    assert titles[:4] == ["TMR — col", "DMR — col", "CER — col", "CMR — col"]
    assert titles[4] == "TMR — gen"
    for ax in axes:
        assert "0–1" in ax.get_ylabel()
        assert ax.get_ylim() == pytest.approx((0.0, 1.02))
        assert len(ax.collections) == 4  # one bootstrap band per run
    assert [ax.get_xlabel() for ax in axes[4:]] == ["checkpoint k (compared with k − 1)"] * 4
    assert _legend_texts(figure) == ["ts / ts-1", "ts / ts-2", "iq / iq-1", "iq / iq-2"]
    assert "Convergence" in figure.get_suptitle()
    line = axes[0].get_lines()[0]  # ts-1 on col: TMR 0.8 then 0.9
    assert list(line.get_xdata()) == [2, 3] and list(line.get_ydata()) == pytest.approx([0.8, 0.9])


def test_seeds_figure_shows_pairs_and_means(tables):
    figure = plots.draw_seeds(_col_only(tables)["seeds"], bootstrap=an.Bootstrap(n_resamples=100))
    axes = _visible_axes(figure)
    assert [ax.get_title() for ax in axes] == ["TMR — col", "DMR — col"]
    assert axes[0].get_xlabel() == "checkpoint k" and "between seeds" in axes[0].get_ylabel()
    assert _legend_texts(figure) == ["ts: mean of 1 pair(s)", "iq: mean of 1 pair(s)"]
    bold = [line for line in axes[0].get_lines() if line.get_linewidth() == 2]
    assert list(bold[0].get_ydata()) == pytest.approx([0.5, 0.3, 0.2])  # ts seed pair TMR, k = 1..3


def test_per_turn_figure(tables):
    figure = plots.draw_per_turn(tables["per_turn"])
    axes = _visible_axes(figure)
    assert [ax.get_title() for ax in axes[:2]] == ["TMR by turn", "DMR by turn"]
    assert [ax.get_ylabel() for ax in axes] == ["TMR (0–1)", "DMR (0–1)", "pairs scored", "pairs scored"]
    assert axes[2].get_xlabel() == "turn index of the context"
    assert _legend_texts(figure) == ["seed pairs (col)", "ts-iq pairs (col)"]
    counts = axes[2].get_lines()[0]
    assert list(counts.get_ydata()) == [24] * 5
    with pytest.raises(ValueError, match="'bleu4' not in the table"):
        plots.draw_per_turn(tables["per_turn"], measures=["bleu4"])


def test_reward_models_figure_has_grouped_bars_with_intervals(tables):
    figure = plots.draw_reward_models(tables["reward_models"], bootstrap=an.Bootstrap(n_resamples=100))
    axes = _visible_axes(figure)
    assert [ax.get_title() for ax in axes] == ["checkpoint 3 — col", "checkpoint 3 — gen"]
    ax = axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["TMR", "DMR", "CER", "CMR"]
    assert ax.get_xlabel() == "measure" and "0–1" in ax.get_ylabel()
    assert _legend_texts(figure) == ["ts-ts (n=1)", "iq-iq (n=1)", "ts-iq (n=4)"]
    heights = [patch.get_height() for patch in ax.patches]
    assert len(heights) == 3 * 4
    aggregate = an.reward_models_aggregate(tables["reward_models"], bootstrap=an.Bootstrap(n_resamples=100))
    cross = aggregate[(aggregate["context_set"] == "col") & (aggregate["group"] == "ts-iq")]
    assert heights[8:] == pytest.approx(cross["mean"].tolist())


def test_correlation_figure(tables):
    figure = plots.draw_correlation(tables["correlation"])
    axes = _visible_axes(figure)
    assert len(axes) == 4  # (all, non-matching) × (r, MSE)
    assert axes[0].get_title() == "Pearson r, all pairs\n560 pairs"
    assert axes[3].get_title().startswith("Mean squared error, non-matching pairs (TMR = 0)\n")
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["TMR", "DMR", "CER", "CMR"]
    texts = [t.get_text() for t in axes[2].texts]
    assert texts[:4] == ["n/a"] * 4  # TMR is constant on non-matching pairs
    colorbars = [ax for ax in figure.axes if ax.get_label() == "<colorbar>"]
    assert len(colorbars) == 4


def test_performance_figure(tables):
    figure = plots.draw_performance(tables["performance"])
    axes = _visible_axes(figure)
    assert [ax.get_ylabel() for ax in axes] == [
        "task success rate (0–1)", "average interaction quality (1–5)", "average dialogue length (turns)",
    ]
    assert axes[0].get_ylim() == pytest.approx((0.0, 1.02))
    assert axes[1].get_ylim() == pytest.approx((1.0, 5.05))
    assert all(ax.get_xlabel() == "checkpoint k (training dialogues)" for ax in axes)
    assert _legend_texts(figure) == ["ts (2 runs)", "iq (2 runs)"]


def test_chance_figure_is_page_wide_with_its_legend_below(tables):
    small = _col_only(tables)
    contrast = an.contrast(chance=small["chance"], seeds=small["seeds"], bootstrap=an.Bootstrap(n_resamples=100))
    figure = plots.draw_chance(contrast)
    ax = _visible_axes(figure)[0]
    assert ax.get_title() == "context set col" and figure.get_size_inches()[0] == 7.0
    assert _legend_texts(figure) == ["chance (random vs trained) (n=1)", "seeds (final checkpoint) (n=2)"]
    assert ax.get_legend() is None and not ax.texts  # the legend under the figure, no labels on the bars
    heights = [bar.get_height() for bar in ax.patches]
    assert heights[:2] == [0.0, 0.0]  # the random policy matches nothing


def test_negative_cer_extends_the_axis(tables):
    table = tables["convergence"].copy()
    mask = table["measure"] == "cer"
    table.loc[mask, "ci_low"] = -0.4
    figure = plots.draw_convergence(table[table["context_set"] == "col"], measures=["cer"])
    assert _visible_axes(figure)[0].get_ylim()[0] == pytest.approx(-0.45)


def test_no_global_matplotlib_state_changes(tables, tmp_path):
    before = dict(matplotlib.rcParams)
    backend = matplotlib.get_backend()
    plots.plot_performance(tables["performance"], tmp_path / "p.png")
    after = dict(matplotlib.rcParams)
    assert {k: v for k, v in after.items() if before.get(k) != v and k != "backend"} == {}
    assert matplotlib.get_backend() == backend


def test_bad_input_is_reported(tables, tmp_path):
    with pytest.raises(ValueError, match="nothing to plot"):
        plots.draw_convergence(tables["convergence"].iloc[:0])
    with pytest.raises(ValueError, match="lacks column"):
        plots.draw_seeds(pd.DataFrame({"measure": ["tmr"], "mean": [1.0]}))
    with pytest.raises(ValueError, match="must end in .png"):
        plots.plot_performance(tables["performance"], tmp_path / "p.jpg")
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="'use_cos' not in the table"):
        plots.draw_convergence(tables["convergence"], measures=["use_cos"])


def test_plot_functions_return_the_path(tables, tmp_path):
    path = plots.plot_correlation(_col_only(tables)["correlation"], tmp_path / "sub" / "corr.png")
    assert path == tmp_path / "sub" / "corr.png" and path.read_bytes().startswith(PNG_SIGNATURE)
    assert np.asarray(imread(path)).shape[0] > 250


def test_checkpoint_ticks_are_few_and_short():
    conv = an.convergence({k: _same_responses() for k in range(1000, 41000, 1000)}, ["tmr"], run="r").table
    figure = plots.draw_convergence(conv)
    ax = _visible_axes(figure)[0]
    figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert 2 <= len(labels) <= 6
    assert all(label.endswith("k") for label in labels if label != "0")


def _same_responses():
    from simscore import Act, Response, Responses

    return Responses({"c1": Response(Act.parse("hello()"))})


def _behaviour_history():
    from types import SimpleNamespace

    from simscore import Act, BehaviourMonitor, Response

    class Table:
        def __init__(self, acts):
            self.acts = [Act.parse(a) for a in acts]

        def respond(self, context):
            return Response(self.acts[int(context.id[1:])])

    contexts = [SimpleNamespace(id=f"c{i}") for i in range(10)]
    monitor = BehaviourMonitor(contexts, measures=("tmr", "dmr"), baseline=Table(["bye()"] * 10),
                               bootstrap=an.Bootstrap(n_resamples=100))
    for step, k in enumerate((0, 4, 7, 9, 10, 10)):
        monitor.update(Table(["request(area)"] * k + ["request(food)"] * (10 - k)), step * 1000)
    return monitor.history()


def test_behaviour_curve_has_bands_chance_threshold_and_stop(tmp_path):
    history = _behaviour_history()
    figure = plots.draw_behaviour(history, threshold=0.9, stopped_at=5000)
    assert [ax.get_title() for ax in _visible_axes(figure)] == ["TMR", "DMR"]
    texts = _legend_texts(figure)
    assert "chance level (random policy)" in texts and "threshold 0.9" in texts and "stopped" in texts
    path = plots.plot_behaviour(history, tmp_path / "behaviour.png", measures=["tmr"])
    assert path.read_bytes()[:8] == PNG_SIGNATURE and imread(path).shape[0] > 100


def test_behaviour_curve_errors():
    with pytest.raises(ValueError, match="'step' column"):
        plots.draw_behaviour(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="empty"):
        plots.draw_behaviour(_behaviour_history().iloc[:0])
    with pytest.raises(ValueError, match="'cer' not in the history"):
        plots.draw_behaviour(_behaviour_history(), measures=["cer"])
