"""The paper's findings, checked and graded on an experiment's tables (application layer: paper-specific).

:func:`findings` reads the tables of :mod:`simscore.analysis` and grades each of the eleven
findings of Ultes & Maier (SIGDIAL 2020), per context set and reward model where that applies,
as ``"holds"``, ``"partly"``, ``"does not hold"`` or ``"not assessed"`` (with the reason),
beside the paper's own number (:mod:`simscore.app.report.paper`) and the threshold applied.

The thresholds are simscore's own choice, not the paper's: the paper states its findings in
words ("high", "much higher", "weakly"). They are the fields of :class:`Thresholds`, each with
a documented default, given to :func:`findings` as one value (the ``[findings]`` section of an
experiment's configuration). Defaults are set so that the paper's own numbers, where it gives
them, pass; they are not tuned on any run of simscore.

"Late" checkpoints are those in the last ``late_fraction`` of training (k ≥ (1 −
late_fraction)·K, K the last checkpoint): with the default 0.25, 30k and 40k of the paper's
Tables 2 and 4, and 4000–5000 of a 5,000-dialogue demo. Means over late checkpoints are less
noisy than the final checkpoint alone.

Grading: a check of one scope (e.g. ``col/ts``) holds when its numbers pass the threshold,
holds partly when the direction is right and the size reaches at least half the paper's own
margin for that scope (half the threshold's where the paper gives no number) — or when one of
two conditions holds —, and does not hold otherwise: a sign alone never counts. A finding holds
when every assessed scope holds, does not hold when none does, and holds partly in between.
Where a verdict cannot show what it seems to (a finding built into the simulated world, or one
that depends on the text models), the finding says so (:attr:`Finding.caveat`).
"""

from __future__ import annotations

import pandas as pd

from simscore.analysis import check_table
from simscore.app.experiment.sections import Thresholds
from simscore.app.report._findings_rules import (
    _cer_cmr,
    _cer_use,
    _converge,
    _dmr_above_tmr,
    _first_turn,
    _gen_col,
    _Paper,
    _reward_models,
    _seeds_differ,
    _small_changes,
    _text,
    _weak,
)
from simscore.app.report.findings_types import VERDICTS, Check, Finding, Verdict, format_quantities
from simscore.io.config import resolve_settings

__all__ = ["Verdict", "VERDICTS", "Thresholds", "Check", "Finding", "findings", "format_quantities"]


def findings(
    *,
    convergence: pd.DataFrame | None = None,
    seeds: pd.DataFrame | None = None,
    reward_models: pd.DataFrame | None = None,
    correlation: pd.DataFrame | None = None,
    first_turn: pd.DataFrame | None = None,
    text_at_matching_actions: pd.DataFrame | None = None,
    contexts: pd.DataFrame | None = None,
    collected_set: str = "col",
    generated_set: str = "gen",
    thresholds: Thresholds | None = None,
) -> tuple[Finding, ...]:
    """Grade the paper's eleven findings on this run's tables, beside the paper's numbers.

    Parameters
    ----------
    convergence, seeds, reward_models, correlation, first_turn, text_at_matching_actions : DataFrame, optional
        Tables in their schemas (:mod:`simscore.analysis`); a finding whose tables are
        missing or empty is ``"not assessed"``, with the reason.
    contexts : DataFrame, optional
        The ``contexts`` table (:mod:`simscore.app.experiment.context_facts`): the first-turn finding
        then says how many distinct belief states its contexts hold.
    collected_set, generated_set : str
        Names of the context sets C_col (the one the paper's numbers describe) and C_gen.
    thresholds : Thresholds, optional
        The thresholds (simscore's choice), documented with their defaults in :class:`Thresholds`
        (default ``Thresholds()``).

    Returns
    -------
    tuple of Finding
        The eleven findings in the paper's order: (1) converge, (2) small_changes,
        (3) seeds_differ, (4) dmr_above_tmr, (5) reward_models_like_seeds, (6) first_turn,
        (7) cer_cmr_agree, (8) dmr_bleu_weak, (9) cer_use_agree, (10) text_below_one,
        (11) gen_below_col. Scopes are context set/reward (1–4, 6, 10), context set/group of
        pairs across reward models (5), subsets of pairs (7, 9), measures (8) and reward (11).

    Examples
    --------
    >>> conv = pd.DataFrame({"context_set": "col", "reward": "ts", "run": "ts-1", "checkpoint": [2, 3, 4],
    ...                      "previous": [1, 2, 3], "measure": "tmr", "mean": [0.5, 0.96, 0.98],
    ...                      "ci_low": 0.0, "ci_high": 1.0, "count": 50, "missing": 0})
    >>> first = findings(convergence=conv)[0]
    >>> first.verdict, first.checks[0].ours, round(first.checks[0].paper["late TMR"], 3)
    ('holds', {'late TMR': 0.97}, 0.986)
    >>> findings(convergence=conv, thresholds=Thresholds(converged_tmr=0.99))[0].verdict
    'partly'
    """
    t = resolve_settings(Thresholds, thresholds, where="findings", parameter="thresholds")
    given = {
        "convergence": convergence, "seeds": seeds, "reward_models": reward_models, "correlation": correlation,
        "first_turn": first_turn, "text_at_matching_actions": text_at_matching_actions,
    }
    for name, table in given.items():
        if table is not None:
            check_table(table, name, name)
    ref = _Paper(collected_set)
    return (
        _converge(convergence, t, ref),
        _small_changes(convergence, t, ref),
        _seeds_differ(convergence, seeds, t, ref),
        _dmr_above_tmr(seeds, t, ref),
        _reward_models(reward_models, t, ref, convergence),
        _first_turn(first_turn, t, ref, contexts),
        _cer_cmr(correlation, t, ref),
        _weak(correlation, t),
        _cer_use(correlation, t),
        _text(text_at_matching_actions, t, ref),
        _gen_col({"convergence": convergence, "seeds": seeds}, generated_set, collected_set, t),
    )
