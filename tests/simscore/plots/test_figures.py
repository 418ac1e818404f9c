"""simscore.plots.figures: one question per figure, at a page's width, the published values overlaid."""

from __future__ import annotations

import pandas as pd
import pytest

from simscore.plots import figures
from tests.simscore.synthetic import synthetic_tables


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()


def _legend(figure) -> list[str]:
    return [t.get_text() for legend in figure.legends for t in legend.get_texts()]


def test_every_page_figure_is_page_wide_with_one_legend_under_it(tables):
    reference = pd.DataFrame({"reward": ["ts", "ts"], "checkpoint": [2, 3], "tmr": [0.9, 0.95], "dmr": [0.9, 1.0]})
    drawn = [
        figures.draw_performance_page(tables["performance"], lengths={"PyDial3 handcrafted (5.9)": 5.9,
                                                                     "PyDial3 GP (6.2–6.5)": (6.2, 6.5)}),
        figures.draw_convergence_page(tables["convergence"], reference=reference),
        figures.draw_seeds_page(tables["seeds"], reference=reference),
        figures.draw_reward_models_page(tables["reward_models"], reference=pd.DataFrame(
            {"group": ["ts-iq", "ts-iq"], "measure": ["tmr", "dmr"], "mean": [0.4, 0.8]})),
        figures.draw_per_turn_page(tables["per_turn"]),
    ]
    for figure in drawn:
        assert figure.get_size_inches()[0] == figures.PAGE_WIDTH
        assert len(figure.legends) == 1 and not any(ax.get_legend() for ax in figure.axes)
    assert "PyDial3 handcrafted (5.9)" in _legend(drawn[0]) and "ts: paper (Table 2)" in _legend(drawn[1])
    assert "ts: paper (Table 4)" in _legend(drawn[2]) and "paper" in _legend(drawn[3])
    # panels of the same quantity share their scale
    seeds = [ax for ax in drawn[2].axes if ax.get_visible()]
    assert len({ax.get_ylim() for ax in seeds}) == 1


def _drawn(figure) -> list[tuple[str, list[float]]]:
    """(label, x values) of every labelled line of the figure's panels."""
    return [(line.get_label(), [float(x) for x in line.get_xdata()])
            for ax in figure.axes for line in ax.get_lines() if not line.get_label().startswith("_")]


def _scaled(table: pd.DataFrame, factor: int) -> pd.DataFrame:
    """The synthetic run's checkpoints 1, 2, 3 as ``factor`` times as many dialogues."""
    return table.assign(checkpoint=table["checkpoint"] * factor)


def test_the_axis_spans_the_run_and_the_paper_is_drawn_inside_it(tables):
    # a 3,000-dialogue run (checkpoints 1k-3k) beside published values at 1k, 2k and 10k-40k
    performance = _scaled(tables["performance"], 1000)
    reference = pd.DataFrame({"reward": "ts", "checkpoint": [1000, 2000, 10000, 20000, 40000], "success_rate": 0.9,
                              "avg_iq": 3.8, "avg_length": 4.4})
    figure = figures.draw_performance_page(performance, reference=reference, reference_label="paper (Table 1)")
    ours = [(label, x) for label, x in _drawn(figure) if "paper" in label]
    assert ours == [("ts: paper (Table 1); goes on to 40k", [1000.0, 2000.0])] * 3
    assert "ts: paper (Table 1); goes on to 40k" in _legend(figure)
    assert all(ax.get_xlim()[1] < 3500 for ax in figure.axes)  # the run's own span, not the paper's 40k
    # no published value inside the run: nothing drawn, one entry saying where they lie
    convergence = _scaled(tables["convergence"], 1000)
    beyond = pd.DataFrame({"reward": ["ts", "ts", "iq"], "checkpoint": [10000, 40000, 20000], "tmr": [0.98, 1.0, 0.97]})
    figure = figures.draw_convergence_page(convergence, reference=beyond)
    assert [x for label, x in _drawn(figure) if "paper" in label] == [[]]
    assert "paper (Table 2): 10k–40k, beyond this run" in _legend(figure)
    assert all(ax.get_xlim()[1] < 3500 for ax in figure.axes)
    seeds = figures.draw_seeds_page(_scaled(tables["seeds"], 1000), reference=beyond.assign(dmr=0.9))
    assert "paper (Table 4): 10k–40k, beyond this run" in _legend(seeds)
    assert all(ax.get_xlim()[1] < 3500 for ax in seeds.axes)


def test_a_run_as_long_as_the_paper_shows_its_whole_curve(tables):
    convergence = _scaled(tables["convergence"], 20000)  # checkpoints k = 40k and 60k (vs k - 1)
    reference = pd.DataFrame({"reward": ["ts", "ts", "iq", "iq"], "checkpoint": [40000, 60000] * 2,
                              "tmr": [0.98, 1.0, 0.97, 0.99]})
    figure = figures.draw_convergence_page(convergence, reference=reference)
    assert [x for label, x in _drawn(figure) if "paper" in label] == [[40000.0, 60000.0]] * 2
    assert {"ts: paper (Table 2)", "iq: paper (Table 2)"} <= set(_legend(figure))
    assert not any("beyond" in label or "goes on" in label for label in _legend(figure))
    # published values before the run's first checkpoint are cut there, and the legend says so
    early = pd.DataFrame({"reward": "ts", "checkpoint": [1000, 60000], "tmr": [0.9, 1.0]})
    figure = figures.draw_convergence_page(convergence, reference=early)
    assert [(label, x) for label, x in _drawn(figure) if "paper" in label] == [("ts: paper (Table 2); starts at 1k",
                                                                               [60000.0])]
