"""simscore.figures: one question per figure, at a page's width, the published values overlaid."""

from __future__ import annotations

import pandas as pd
import pytest

from simscore import figures
from tests.simscore.synthetic import synthetic_tables


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()


def _legend(figure) -> list[str]:
    return [t.get_text() for legend in figure.legends for t in legend.get_texts()]


def test_every_page_figure_is_page_wide_with_one_legend_under_it(tables):
    reference = pd.DataFrame({"reward": ["ts", "ts"], "checkpoint": [1, 3], "tmr": [0.9, 0.95], "dmr": [0.9, 1.0]})
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
