"""The types of the paper's findings: verdicts, thresholds, checks (application layer).

:class:`Thresholds` holds simscore's thresholds (with their defaults and the paper's numbers),
:class:`Check` one finding graded in one scope, :class:`Finding` one finding with its checks.
:mod:`simscore.app.findings_rules` grades them; :func:`simscore.app.findings.findings` is the
entry point (and re-exports these types).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np

from simscore.checks import check_number
from simscore.config import from_mapping

__all__ = ["Verdict", "VERDICTS", "Thresholds", "Check", "Finding", "format_quantities"]

Verdict: TypeAlias = Literal["holds", "partly", "does not hold", "not assessed"]
#: The grades, best first.
VERDICTS: tuple[Verdict, ...] = ("holds", "partly", "does not hold", "not assessed")

# thresholds are compared with this slack, so that 0.95 - 0.90 counts as a difference of 0.05
_EPS = 1e-9


#: Each threshold's range and what it is a bound on: (low, high, low excluded, what). A
#: threshold outside its range cannot mean what its finding says (a TMR of 5.0, an r of 2).
_RANGES: dict[str, tuple[float, float, bool, str]] = {
    "late_fraction": (0.0, 1.0, True, "a share of the training"),
    "converged_tmr": (0.0, 1.0, False, "a TMR"),
    "converged_tmr_partly": (0.0, 1.0, False, "a TMR"),
    "small_change_max": (0.0, 1.0, False, "a distance below TMR 1"),
    "seeds_margin": (0.0, 1.0, False, "a difference of two TMRs"),
    "dmr_margin": (0.0, 1.0, False, "a difference of DMR and TMR"),
    "reward_model_margin": (0.0, 1.0, False, "a difference of two TMRs"),
    "first_turn_share": (0.0, 1.0, True, "a share of seed pairs"),
    "agreement_r": (-1.0, 1.0, False, "a Pearson r"),
    "agreement_mse": (0.0, math.inf, False, "a mean squared error"),
    "nonmatching_drop": (0.0, 2.0, False, "a difference of two Pearson r"),
    "weak_r": (-1.0, 1.0, False, "a Pearson r"),
    "high_r": (-1.0, 1.0, False, "a Pearson r"),
    "small_mse": (0.0, math.inf, False, "a mean squared error"),
    "text_gap": (0.0, 1.0, False, "a distance below a text score of 1"),
    "trend_r": (-1.0, 1.0, False, "a Pearson r"),
}


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of :func:`findings` (simscore's choice), with their defaults.

    Attributes
    ----------
    late_fraction : float, default 0.25
        "Late" checkpoints: the last quarter of training, k ≥ (1 − late_fraction)·K.
    converged_tmr, converged_tmr_partly : float, default 0.9 and 0.8
        (1) Mean convergence TMR over the late checkpoints (runs pooled): holds at
        ≥ ``converged_tmr``, partly at ≥ ``converged_tmr_partly``. Paper: 0.986 (TS), 0.989 (IQ).
    small_change_max : float, default 0.1
        (2) Late convergence comparisons with TMR < 1 must exist (else: does not hold) and
        change little: the lowest late TMR ≥ 1 − ``small_change_max`` (else: partly).
        Paper: 5 of 6 (TS) and 6 of 6 (IQ) late comparisons below 1, the lowest 0.978.
    seeds_margin : float, default 0.1
        (3) Late seed-pair TMR at least this far below the late convergence TMR; partly
        when below by at least half the paper's gap (half this where the paper has no
        number). Paper: 0.639 vs 0.986 (TS), 0.455 vs 0.989 (IQ).
    dmr_margin : float, default 0.2
        (4) Late seed-pair DMR − TMR ≥ this; partly at ≥ half the paper's gap (or of this).
        Paper: 0.212 (TS), 0.388 (IQ).
    reward_model_margin : float, default 0.2
        (5) Cross-reward TMR below the within-reward TMR at the same checkpoint by at most
        this; partly when above it by at most half the paper's gap (or of this).
        Paper: 0.407 vs 0.553 (a gap of 0.146).
    first_turn_share : float, default 1.0
        (6) Share of seed pairs (final checkpoint) whose first-turn TMR is 0 or 1, and share
        whose first-turn DMR is 1, both needed; partly when one of the two. Paper: all pairs.
    agreement_r, agreement_mse : float, default 0.9 and 0.01
        (7) CER and CMR over all pairs: Pearson r ≥ ``agreement_r`` and MSE ≤
        ``agreement_mse``; partly when one of the two.
    nonmatching_drop : float, default 0.2
        (7) On the non-matching pairs the CER–CMR r falls at least this far below its value
        over all pairs; partly when lower by at least half this (the paper gives no r over all
        pairs). Paper: 0.466 on the non-matching pairs.
    weak_r : float, default 0.5
        (8) Mean Pearson r of DMR (and of BLEU-4) with every other measure ≤ this (Cohen's
        "large" correlation starts at 0.5); partly when above it but below the mean r among
        the other measures.
    high_r, small_mse : float, default 0.8 and 0.05
        (9) CER and USE cosine: r ≥ ``high_r`` and MSE ≤ ``small_mse``; partly when one.
    text_gap : float, default 0.05
        (10) Where actions match (convergence pairs with TMR = 1) every text measure's mean
        ≤ 1 − ``text_gap``; partly when some are. Paper: angular 0.871, BLEU-4 0.493,
        BERTScore 0.918.
    trend_r : float, default 0.5
        (11) Per reward model and measure, matched convergence and seed-pair rows: the mean on
        C_gen below the mean on C_col and their Pearson r ≥ ``trend_r``; partly when some
        measures pass.

    Each threshold must lie in the range of what it bounds, else ``ValueError`` naming it: the
    TMR thresholds, margins, shares, ``late_fraction`` and ``text_gap`` in [0, 1] (the shares and
    ``late_fraction`` above 0), the correlations ``agreement_r``, ``weak_r``, ``high_r`` and
    ``trend_r`` in [−1, 1], ``nonmatching_drop`` (a drop of r) in [0, 2], the MSEs ≥ 0.

    >>> Thresholds(converged_tmr=5.0)
    Traceback (most recent call last):
    ...
    ValueError: findings threshold converged_tmr must be in [0, 1] (a TMR), got 5.0
    """

    late_fraction: float = 0.25
    converged_tmr: float = 0.9
    converged_tmr_partly: float = 0.8
    small_change_max: float = 0.1
    seeds_margin: float = 0.1
    dmr_margin: float = 0.2
    reward_model_margin: float = 0.2
    first_turn_share: float = 1.0
    agreement_r: float = 0.9
    agreement_mse: float = 0.01
    nonmatching_drop: float = 0.2
    weak_r: float = 0.5
    high_r: float = 0.8
    small_mse: float = 0.05
    text_gap: float = 0.05
    trend_r: float = 0.5

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = check_number(f"findings threshold {f.name}", getattr(self, f.name), error=ValueError)
            object.__setattr__(self, f.name, value)  # a float, also when given an int or a numpy number
            low, high, open_low, what = _RANGES[f.name]
            if value < low or (open_low and value == low) or value > high:
                shown = f"{'(' if open_low else '['}{low:g}, {high:g}]" if high < math.inf else f">= {low:g}"
                verb = "be in" if high < math.inf else "be"
                raise ValueError(f"findings threshold {f.name} must {verb} {shown} ({what}), got {value!r}")
        if self.converged_tmr_partly > self.converged_tmr:
            raise ValueError(
                f"findings threshold converged_tmr_partly ({self.converged_tmr_partly!r}) must not exceed "
                f"converged_tmr ({self.converged_tmr!r})"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "findings") -> Thresholds:
        """Build from plain data (a TOML ``[findings]`` table); unknown names are errors naming them.

        >>> Thresholds.from_mapping({"converged_tmr": 0.95}).converged_tmr
        0.95
        >>> Thresholds.from_mapping({"converged": 0.95})
        Traceback (most recent call last):
        ...
        simscore.errors.ConfigError: findings: unknown key 'converged'; did you mean 'converged_tmr'? ...
        """
        return from_mapping(cls, data, source=source)

    def to_dict(self) -> dict[str, float]:
        """Every threshold by name (the ``[findings]`` table; ``meta["findings"]``)."""
        return dataclasses.asdict(self)

    def changed(self) -> dict[str, float]:
        """The thresholds that differ from their defaults, by name.

        >>> Thresholds(weak_r=0.4).changed()
        {'weak_r': 0.4}
        """
        defaults = Thresholds().to_dict()
        return {name: value for name, value in self.to_dict().items() if value != defaults[name]}


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


def _fmt(value: float) -> str:
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
    return ", ".join(f"{label} {_fmt(value)}" for label, value in values.items())


def _nan(value: float) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
