"""The types of the paper's findings: verdicts, checks (application layer).

The thresholds are a section of the configuration (:class:`simscore.app.experiment.sections.Thresholds`);
:class:`Check` is one finding graded in one scope, :class:`Finding` one finding with its checks.
:mod:`simscore.app.report._findings_rules` grades them; :func:`simscore.app.report.findings.findings` is the
entry point (and re-exports these types).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import numpy as np

__all__ = ["Verdict", "VERDICTS", "Check", "Finding", "format_number", "format_quantities"]

Verdict: TypeAlias = Literal["holds", "partly", "does not hold", "not assessed"]
#: The grades, best first.
VERDICTS: tuple[Verdict, ...] = ("holds", "partly", "does not hold", "not assessed")



@dataclass(frozen=True)
class Check:
    """One finding graded in one scope (a context set and reward model, a subset of pairs, a measure).

    Attributes
    ----------
    scope : str
        E.g. ``"col/ts"``, ``"gen/ts-iq"``, ``"all pairs"``, ``"DMR"``.
    verdict : str
        One of :data:`VERDICTS`.
    ours, paper : dict
        The numbers behind the verdict (quantity → value), ours and the paper's (empty when
        the paper gives none: see ``paper_says``).
    rule : str
        The thresholds applied, in words.
    note : str
        Detail: which checkpoints, per-measure numbers, or why the scope is not assessed.
    paper_says : str
        What the paper states where it gives no number.
    """

    scope: str
    verdict: Verdict
    ours: dict[str, float] = field(default_factory=dict)
    paper: dict[str, float] = field(default_factory=dict)
    rule: str = ""
    note: str = ""
    paper_says: str = ""


@dataclass(frozen=True)
class Finding:
    """One of the paper's findings, graded on this run.

    Attributes
    ----------
    number : int
        1–11, in the order of :func:`findings`.
    name : str
        Short identifier, e.g. ``"converge"``.
    title : str
        A few words for tables.
    claim : str
        The finding as the paper states it.
    checks : tuple of Check
        One per scope; empty when the finding could not be assessed at all.
    reason : str
        Why it is not assessed, when ``checks`` is empty.
    caveat : str
        What the verdict cannot show, said beside it: a finding that holds by construction of
        this simulated world, or that depends on the text models rather than the policies.
    mechanism : str
        Why the numbers come out as they do, where that is known.
    """

    number: int
    name: str
    title: str
    claim: str
    checks: tuple[Check, ...] = ()
    reason: str = ""
    caveat: str = ""
    mechanism: str = ""

    @property
    def verdict(self) -> Verdict:
        """Holds if every assessed scope holds, does not hold if none does, partly in between."""
        assessed = [c.verdict for c in self.checks if c.verdict != "not assessed"]
        if not assessed:
            return "not assessed"
        if all(v == "holds" for v in assessed):
            return "holds"
        if all(v == "does not hold" for v in assessed):
            return "does not hold"
        return "partly"

    @property
    def holds(self) -> bool | None:
        """True if the finding holds in every assessed scope, None if not assessed, else False."""
        verdict = self.verdict
        return None if verdict == "not assessed" else verdict == "holds"

    @property
    def evidence(self) -> str:
        """The checks in words: scope, verdict, our numbers, the paper's, the rule."""
        if not self.checks:
            return f"not assessed: {self.reason}"
        parts = []
        for c in self.checks:
            text = f"{c.scope}: {c.verdict}"
            if c.ours:
                text += f", ours {format_quantities(c.ours)}"
            if c.paper:
                text += f", paper {format_quantities(c.paper)}"
            elif c.paper_says:
                text += f", paper: {c.paper_says}"
            if c.note:
                text += f" ({c.note})"
            parts.append(text)
        rules = list(dict.fromkeys(c.rule for c in self.checks if c.rule))
        return "; ".join(parts) + (f". Threshold: {'; '.join(rules)}" if rules else "")


def format_number(value: float) -> str:
    """A number as the findings quote it (``—`` for a missing one)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    return f"{value:.3f}"


def format_quantities(values: Mapping[str, float]) -> str:
    """``"label value, label value"`` with three decimals (integers as they are, NaN as —).

    >>> format_quantities({"late TMR": 0.98765, "pairs": 3})
    'late TMR 0.988, pairs 3'
    """
    return ", ".join(f"{label} {format_number(value)}" for label, value in values.items())
