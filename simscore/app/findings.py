"""The paper's findings, checked on an experiment's tables (application layer: paper-specific).

:func:`findings` reads the tables of :mod:`simscore.analysis` and says, with the numbers and
the thresholds, whether each finding of Ultes & Maier (SIGDIAL 2020) holds in this run. The
thresholds are simscore's own choice (keyword arguments, settable in an experiment's
configuration), not the paper's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from simscore.analysis import SCHEMAS, check_table, final_rows
from simscore.stats import pearson_mse

__all__ = ["Finding", "findings"]


@dataclass(frozen=True)
class Finding:
    """Whether one of the paper's findings holds in this run, with the numbers.

    Attributes
    ----------
    name : str
        Short identifier: ``converge``, ``seeds_differ``, ``dmr_above_tmr``,
        ``cer_cmr_agree``, ``gen_below_col``.
    holds : bool or None
        None when the tables needed to judge it are absent.
    evidence : str
        The numbers and thresholds behind the verdict.
    claim : str
        The finding as the paper states it.
    """

    name: str
    holds: bool | None
    evidence: str
    claim: str = ""


_CLAIMS = {
    "converge": (
        "(1) Policies converge: checkpoint-to-checkpoint TMR of the final checkpoints is high "
        "and stable or rising."
    ),
    "seeds_differ": (
        "(2) Runs with different seeds do not converge to the same behaviour: seed-pair TMR at the "
        "final checkpoint is clearly below the convergence TMR."
    ),
    "dmr_above_tmr": (
        "(3) DMR is much higher than TMR: policies choose the same dialogue act far more often "
        "than the same full action."
    ),
    "cer_cmr_agree": "(4) CER and CMR agree closely (high Pearson r, small mean squared error).",
    "gen_below_col": "(5) C_gen gives lower absolute scores than C_col, with the same trends.",
}


# thresholds are compared with this slack, so that 0.95 - 0.90 counts as a difference of 0.05
_EPS = 1e-9


def _fmt(value: float) -> str:
    return "nan" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _label(*parts: Any) -> str:
    return "/".join(str(p) for p in parts if str(p))


def _tmr_by_final(table: pd.DataFrame, by: list[str], measure: str = "tmr") -> dict[tuple, float]:
    part = table[table["measure"] == measure]
    final = final_rows(part, by)
    return {
        (key if isinstance(key, tuple) else (key,)): float(values.mean())
        for key, values in final.groupby(by, sort=False)["mean"]
    }


def _finding_converge(conv: pd.DataFrame | None, threshold: float, window: int, tolerance: float) -> Finding:
    if conv is None or conv.empty or not (conv["measure"] == "tmr").any():
        return Finding("converge", None, "no convergence table with TMR", _CLAIMS["converge"])
    parts, verdicts = [], []
    tmr = conv[conv["measure"] == "tmr"]
    for key, group in tmr.groupby(["context_set", "reward"], sort=False):
        curve = group.groupby("checkpoint")["mean"].mean().sort_index()
        final_k, final = int(curve.index[-1]), float(curve.iloc[-1])
        earlier = curve.iloc[-1 - window : -1]
        ok = final >= threshold - _EPS
        text = f"{_fmt(final)} ({_label(*key)}, k={final_k}"
        if len(earlier):
            before = float(earlier.mean())
            ok = ok and final >= before - tolerance - _EPS
            text += f"; mean of the {len(earlier)} checkpoint(s) before {_fmt(before)}"
        parts.append(text + ")")
        verdicts.append(ok)
    holds = all(verdicts)
    evidence = (
        f"final-checkpoint convergence TMR (mean over runs) {', '.join(parts)}; "
        f"needs ≥ {threshold:g} and no drop of more than {tolerance:g} below the earlier mean"
    )
    return Finding("converge", holds, evidence, _CLAIMS["converge"])


def _finding_seeds(conv: pd.DataFrame | None, seed_table: pd.DataFrame | None, margin: float) -> Finding:
    if conv is None or seed_table is None or conv.empty or seed_table.empty:
        return Finding(
            "seeds_differ", None, "needs both the convergence and the seeds tables", _CLAIMS["seeds_differ"]
        )
    conv_final = _tmr_by_final(conv, ["context_set", "reward"])
    seed_final = _tmr_by_final(seed_table, ["context_set", "reward"])
    parts, verdicts = [], []
    for key, seed_value in seed_final.items():
        if key not in conv_final:
            continue
        conv_value = conv_final[key]
        verdicts.append(seed_value <= conv_value - margin + _EPS)
        parts.append(f"{_fmt(seed_value)} vs {_fmt(conv_value)} ({_label(*key)})")
    if not verdicts:
        return Finding(
            "seeds_differ", None, "no (context set, reward) appears in both tables", _CLAIMS["seeds_differ"]
        )
    evidence = (
        f"final-checkpoint seed-pair TMR vs convergence TMR: {', '.join(parts)}; "
        f"needs seed-pair TMR ≤ convergence TMR − {margin:g}"
    )
    return Finding("seeds_differ", all(verdicts), evidence, _CLAIMS["seeds_differ"])


def _finding_dmr(seed_table: pd.DataFrame | None, rm_table: pd.DataFrame | None, margin: float) -> Finding:
    if seed_table is not None and not seed_table.empty:
        table, by, source = seed_table, ["context_set", "reward"], "seed pairs at the final checkpoint"
    elif rm_table is not None and not rm_table.empty:
        table, by, source = rm_table, ["context_set", "group"], "reward-model pairs"
    else:
        return Finding(
            "dmr_above_tmr", None, "needs the seeds or the reward_models table", _CLAIMS["dmr_above_tmr"]
        )
    tmr = _tmr_by_final(table, by, "tmr")
    dmr = _tmr_by_final(table, by, "dmr")
    parts, verdicts = [], []
    for key in tmr:
        if key not in dmr:
            continue
        verdicts.append(dmr[key] - tmr[key] >= margin - _EPS)
        parts.append(f"DMR {_fmt(dmr[key])} vs TMR {_fmt(tmr[key])} ({_label(*key)})")
    if not verdicts:
        return Finding("dmr_above_tmr", None, "the tables lack TMR or DMR", _CLAIMS["dmr_above_tmr"])
    evidence = f"{source}: {', '.join(parts)}; needs DMR − TMR ≥ {margin:g}"
    return Finding("dmr_above_tmr", all(verdicts), evidence, _CLAIMS["dmr_above_tmr"])


def _finding_cer_cmr(table: pd.DataFrame | None, min_r: float, max_mse: float) -> Finding:
    if table is None or table.empty:
        return Finding("cer_cmr_agree", None, "no correlation table", _CLAIMS["cer_cmr_agree"])

    def cell(subset: str) -> tuple[float, float, int] | None:
        row = table[(table["subset"] == subset) & (table["measure_a"] == "cer") & (table["measure_b"] == "cmr")]
        if row.empty:
            return None
        return float(row["r"].iloc[0]), float(row["mse"].iloc[0]), int(row["n"].iloc[0])

    everything = cell("all")
    if everything is None:
        return Finding("cer_cmr_agree", None, "the correlation table lacks CER or CMR", _CLAIMS["cer_cmr_agree"])
    r, mse, n = everything
    holds = (not math.isnan(r)) and r >= min_r - _EPS and mse <= max_mse + _EPS
    evidence = f"all pairs: r = {_fmt(r)}, MSE = {_fmt(mse)} (n = {n})"
    other = cell("nonmatching")
    if other is not None:
        evidence += f"; non-matching pairs: r = {_fmt(other[0])}, MSE = {_fmt(other[1])} (n = {other[2]})"
    evidence += f"; needs r ≥ {min_r:g} and MSE ≤ {max_mse:g} on all pairs"
    return Finding("cer_cmr_agree", holds, evidence, _CLAIMS["cer_cmr_agree"])


def _finding_gen_col(
    tables: Mapping[str, pd.DataFrame | None], generated: str, collected: str, min_trend_r: float
) -> Finding:
    joined = []
    for name, table in tables.items():
        if table is None or table.empty:
            continue
        keys = [c for c in SCHEMAS[name][: SCHEMAS[name].index("measure") + 1] if c != "context_set"]
        gen = table[table["context_set"] == generated][[*keys, "mean"]]
        col = table[table["context_set"] == collected][[*keys, "mean"]]
        both = gen.merge(col, on=keys, suffixes=("_gen", "_col"))
        if not both.empty:
            joined.append(both[["measure", "mean_gen", "mean_col"]])
    if not joined:
        return Finding(
            "gen_below_col",
            None,
            f"needs convergence or seeds rows on both context sets {generated!r} and {collected!r}",
            _CLAIMS["gen_below_col"],
        )
    pairs = pd.concat(joined, ignore_index=True).dropna()
    parts, verdicts = [], []
    for measure, part in pairs.groupby("measure", sort=False):
        gen_mean, col_mean = float(part["mean_gen"].mean()), float(part["mean_col"].mean())
        r, _, _ = pearson_mse(part["mean_gen"].to_numpy(), part["mean_col"].to_numpy())
        flat = part["mean_gen"].nunique() == 1 and part["mean_col"].nunique() == 1
        same_trend = flat or (not math.isnan(r) and r >= min_trend_r - _EPS)
        verdicts.append(gen_mean < col_mean and same_trend)
        parts.append(f"{measure}: {generated} {_fmt(gen_mean)} vs {collected} {_fmt(col_mean)}, r = {_fmt(r)}")
    evidence = (
        f"matched comparisons ({len(pairs)} rows): {'; '.join(parts)}; needs the {generated} mean below "
        f"the {collected} mean and r ≥ {min_trend_r:g} across matched comparisons, for every measure"
    )
    return Finding("gen_below_col", all(verdicts), evidence, _CLAIMS["gen_below_col"])


def findings(
    *,
    convergence: pd.DataFrame | None = None,
    seeds: pd.DataFrame | None = None,
    reward_models: pd.DataFrame | None = None,
    correlation: pd.DataFrame | None = None,
    converged_tmr: float = 0.9,
    stable_window: int = 3,
    stable_tolerance: float = 0.05,
    seeds_margin: float = 0.1,
    dmr_margin: float = 0.2,
    agreement_r: float = 0.9,
    agreement_mse: float = 0.01,
    generated_set: str = "gen",
    collected_set: str = "col",
    trend_r: float = 0.5,
) -> tuple[Finding, ...]:
    """Check the paper's five findings on this run's tables.

    Parameters
    ----------
    convergence, seeds, reward_models, correlation : DataFrame, optional
        Tables in their schemas; a finding whose tables are missing has ``holds=None``.
    converged_tmr : float
        (1) Final-checkpoint convergence TMR (mean over runs, per context set and reward)
        must reach this.
    stable_window, stable_tolerance : int, float
        (1) "Stable or rising": the final value is at most ``stable_tolerance`` below the mean
        of the ``stable_window`` checkpoints before it.
    seeds_margin : float
        (2) Final-checkpoint seed-pair TMR (mean over pairs) must lie at least this far below
        the final convergence TMR of the same context set and reward.
    dmr_margin : float
        (3) Mean DMR − mean TMR over the final-checkpoint seed pairs (or, without a seeds
        table, the reward-model pairs per group) must reach this.
    agreement_r, agreement_mse : float
        (4) Pearson r of CER and CMR over all pairs ≥ ``agreement_r`` and MSE ≤ ``agreement_mse``.
    generated_set, collected_set, trend_r : str, str, float
        (5) Rows of the convergence and seeds tables matched across the two context sets:
        for every measure the mean on ``generated_set`` is below the mean on
        ``collected_set`` and their Pearson r across matched rows is ≥ ``trend_r``.

    Returns
    -------
    tuple of Finding
        In the paper's order: converge, seeds_differ, dmr_above_tmr, cer_cmr_agree, gen_below_col.
    """
    for name, table, schema in (
        ("convergence", convergence, "convergence"),
        ("seeds", seeds, "seeds"),
        ("reward_models", reward_models, "reward_models"),
        ("correlation", correlation, "correlation"),
    ):
        if table is not None:
            check_table(table, schema, name)
    if stable_window < 1:
        raise ValueError(f"stable_window must be at least 1, got {stable_window!r}")
    return (
        _finding_converge(convergence, converged_tmr, stable_window, stable_tolerance),
        _finding_seeds(convergence, seeds, seeds_margin),
        _finding_dmr(seeds, reward_models, dmr_margin),
        _finding_cer_cmr(correlation, agreement_r, agreement_mse),
        _finding_gen_col({"convergence": convergence, "seeds": seeds}, generated_set, collected_set, trend_r),
    )
