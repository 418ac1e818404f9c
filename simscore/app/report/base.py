"""What every section of the report shares (application layer): its input, its shape, its helpers.

:class:`ReportInput` is what a section may read (the tables and the run's record), :class:`Section`
one section of :data:`simscore.app.report.sections.SECTIONS`; the topic modules
(:mod:`~simscore.app.report.sections`, :mod:`~simscore.app.report.performance`,
:mod:`~simscore.app.report.flows`) and :mod:`~simscore.app.report.document` build on them. This
module imports none of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.record import RunRecord
from simscore.app.experiment.sections import Thresholds
from simscore.stats import Bootstrap

__all__ = ["PAPER_MARK", "ReportInput", "Section", "format_estimate", "measure_label", "thousands"]


@dataclass(frozen=True)
class ReportInput:
    """What a section may read: every table of the report and the run's record."""

    tables: Mapping[str, pd.DataFrame]
    record: RunRecord

    def table(self, name: str) -> pd.DataFrame | None:
        """The table ``name``, or None when it is missing or empty."""
        table = self.tables.get(name)
        return table if table is not None and not table.empty else None

    @property
    def config(self) -> ExperimentConfig | None:
        """The run's configuration (None when not recorded)."""
        return self.record.config

    @property
    def bootstrap(self) -> Bootstrap:
        """Bootstrap settings of the aggregates over pairs."""
        return self.record.bootstrap_settings

    @property
    def thresholds(self) -> Thresholds:
        """Thresholds of the findings (the convergence section shows its stability threshold)."""
        return self.record.thresholds


@dataclass(frozen=True)
class Section:
    """One section of the report: the table it presents, its heading, its figure and its text.

    Attributes
    ----------
    table : str
        The table's schema name; the section is left out when the table is missing or empty.
    heading : str
        The ``##`` heading.
    figure : str or None
        Caption of the table's figure (:func:`simscore.plots.make_figures` draws it under the
        table's name), or None when the section has no figure.
    render : callable
        ``render(table, run) -> lines`` of Markdown after the heading and figure.
    absent : callable, optional
        ``absent(run) -> lines`` saying why the table is missing where the run's design leaves
        it out (e.g. a run of one reward model has no reward-model comparison); the section is
        then shown with these lines. None, or no lines: the section is left out.
    """

    table: str
    heading: str
    figure: str | None
    render: Callable[[pd.DataFrame, ReportInput], list[str]]
    absent: Callable[[ReportInput], list[str]] | None = None


#: What marks the paper's rows in a table (the context set column reads e.g. "col (paper)").
PAPER_MARK = "(paper)"


def measure_label(measure: str) -> str:
    """The name the report and the figures give a measure (its own name when it has no label)."""
    from simscore.plots import MEASURE_LABELS

    return MEASURE_LABELS.get(measure, measure)


def thousands(value: Any) -> str:
    """An integer with thousands separators (``12,000``); anything else as it stands."""
    return f"{int(value):,}" if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else str(value)



def format_estimate(value: float, low: float, high: float, signed: bool = False) -> str:
    """An estimate with its interval to three decimals (``—`` when undefined, no interval when its bounds are).

    >>> format_estimate(0.5, 0.25, 0.75), format_estimate(0.1, float("nan"), 0.2, signed=True)
    ('0.500 [0.250, 0.750]', '+0.100')
    """
    sign = "+" if signed else ""
    if math.isnan(value):
        return "—"
    if math.isnan(low) or math.isnan(high):
        return f"{value:{sign}.3f}"
    return f"{value:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"
