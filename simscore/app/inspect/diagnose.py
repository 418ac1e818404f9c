"""Can a measure be fooled? Degenerate policies scored against real ones (``simscore diagnose``).

Trivial strategies (:mod:`policies.degenerate`: a constant act, an echo of the belief, a
fixed cycle of acts, uniformly random acts) are run on a context set beside real policies,
and every measure scores each degenerate policy against each real policy, and the real
policies against each other. A measure on which a trivial strategy comes within
``tolerance`` of the real-vs-real score (or clearly above the uniform-random reference) can be
gamed: a high similarity on it does not show that two policies behave alike.

``simscore diagnose [--contexts FILE] [--responses NAME=FILE ...] [--measures ...] --out DIR``
writes ``DIR/diagnose.csv`` (one row per pair and measure), ``DIR/diagnose.png`` (one panel
per measure, a bar per pair) and ``DIR/diagnose.md`` (the table and the verdicts).

Defaults: a small generated grid (:func:`contexts.generate.generate_grid` on the default
domain with top-value levels 0.0, 0.5 and 1.0: 3³ × 6 methods = 162 contexts, so the text
measures stay quick) and two real rule-based policies, the handcrafted policy
(:class:`policies.handcrafted.HandcraftedPolicy`) and a variant that confirms less
(``confirm_below=0.5``), each through :class:`policies.sim.simulation.SummaryPolicyAdapter`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simscore.checks import check_number
from simscore.comparison import compare
from simscore.io import atomic_write_text, prepare_output
from simscore.io.untrusted import spreadsheet_frame
from simscore.measures import ALL_MEASURES, resolve_measures
from simscore.responses import Responses
from simscore.stats import Bootstrap

__all__ = [
    "DEFAULT_LEVELS",
    "DEFAULT_TOLERANCE",
    "DiagnoseResult",
    "default_contexts",
    "default_real_policies",
    "diagnose",
    "write_diagnose",
    "wide_table",
    "DEFAULT_LEVELS",
    "DEFAULT_TOLERANCE",
    "OUTPUTS",
]

logger = logging.getLogger(__name__)

#: Top-value levels of the default grid (162 contexts).
DEFAULT_LEVELS: tuple[float, ...] = (0.0, 0.5, 1.0)
#: A degenerate policy within this distance of the real-vs-real mean games the measure.
DEFAULT_TOLERANCE: float = 0.1
_COLUMNS = ["a", "b", "kind", "measure", "mean", "ci_low", "ci_high", "count", "missing"]  # + gamed, above_chance
OUTPUTS = ("diagnose.csv", "diagnose.md", "diagnose.png")


@dataclass(frozen=True)
class DiagnoseResult:
    """Scores of every diagnostic pair.

    Attributes
    ----------
    table : pandas.DataFrame
        Columns ``a`` (degenerate or real policy), ``b`` (real policy), ``kind``
        (``"degenerate"`` or ``"real"``), ``measure``, ``mean``, ``ci_low``, ``ci_high``,
        ``count``, ``missing``, ``gamed`` (a degenerate pair whose mean is at least the
        measure's real-vs-real mean minus ``tolerance``), ``above_chance`` (a degenerate pair
        whose mean exceeds the upper CI bound of the chance reference against the same real
        policy); one row per pair and measure. The chance reference is never judged.
    verdicts : pandas.DataFrame
        One row per measure: ``real`` (mean over real-vs-real pairs, NaN without two real
        policies), ``chance`` (mean of the chance reference over the real policies),
        ``best_pair`` and ``best_score`` (the highest degenerate pair other than the chance
        reference), ``gamed_by`` and ``above_chance`` (the degenerate policies with such a
        pair, comma-separated, "" for none).
    n_contexts : int
    signatures : dict of str to str
    tolerance : float
    """

    table: pd.DataFrame
    verdicts: pd.DataFrame
    n_contexts: int
    signatures: dict[str, str]
    tolerance: float


def default_contexts(levels: Sequence[float] = DEFAULT_LEVELS) -> Any:
    """The default context set: the generated grid at ``levels`` on the default domain."""
    from contexts.generate import GridSpec, generate_grid

    return generate_grid(GridSpec(levels=tuple(levels)), name="C_gen-diagnose")


def default_real_policies() -> dict[str, Any]:
    """The default real policies: the handcrafted policy and a variant that confirms less."""
    from policies.handcrafted import HandcraftedPolicy
    from policies.sim.simulation import SummaryPolicyAdapter

    return {
        "handcrafted": SummaryPolicyAdapter(HandcraftedPolicy()),
        "handcrafted-c05": SummaryPolicyAdapter(HandcraftedPolicy(confirm_below=0.5), name="handcrafted-c05"),
    }


def _pairs(real: Sequence[str], degenerate: Sequence[str]) -> list[tuple[str, str, str]]:
    pairs = [(d, r, "degenerate") for d in degenerate for r in real]
    pairs += [(real[i], real[j], "real") for i in range(len(real)) for j in range(i + 1, len(real))]
    return pairs


def _judge(table: pd.DataFrame, tolerance: float, chance: str | None) -> pd.DataFrame:
    """Add ``gamed`` and ``above_chance`` to every degenerate row (False for the others)."""
    real_means = table[table["kind"] == "real"].groupby("measure")["mean"].mean()
    reference = table[table["a"] == chance] if chance else table.iloc[:0]
    chance_high = reference.set_index(["measure", "b"])["ci_high"]
    judged = (table["kind"] == "degenerate") & (table["a"] != chance)
    real = table["measure"].map(real_means).to_numpy(dtype=float)
    keys = pd.MultiIndex.from_frame(table[["measure", "b"]])
    high = chance_high.reindex(keys).to_numpy(dtype=float)
    means = table["mean"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        table["gamed"] = judged.to_numpy() & (means >= real - tolerance)
        table["above_chance"] = judged.to_numpy() & (means > high)
    return table


def _verdicts(table: pd.DataFrame, measures: Sequence[str], chance: str | None) -> pd.DataFrame:
    rows = []
    for measure in measures:
        part = table[table["measure"] == measure]
        real = part[part["kind"] == "real"]["mean"]
        candidates = part[(part["kind"] == "degenerate") & (part["a"] != chance)].dropna(subset=["mean"])
        best = candidates.loc[candidates["mean"].idxmax()] if len(candidates) else None
        rows.append({
            "measure": measure,
            "real": float(real.mean()) if len(real) else float("nan"),
            "chance": float(part[part["a"] == chance]["mean"].mean()) if chance else float("nan"),
            "best_pair": "" if best is None else f"{best['a']} vs {best['b']}",
            "best_score": float("nan") if best is None else float(best["mean"]),
            "gamed_by": ", ".join(dict.fromkeys(candidates[candidates["gamed"]]["a"])),
            "above_chance": ", ".join(dict.fromkeys(candidates[candidates["above_chance"]]["a"])),
        })
    return pd.DataFrame(rows).set_index("measure")


def diagnose(
    real: Mapping[str, Responses],
    degenerate: Mapping[str, Responses],
    measures: str | Iterable[Any] = ALL_MEASURES,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    chance: str | None = "uniform",
    bootstrap: Bootstrap | None = None,
    progress: bool = False,
) -> DiagnoseResult:
    """Score each degenerate policy against each real one, and the real ones against each other.

    Parameters
    ----------
    real : mapping of str to Responses
        The real policies' responses, by name (at least one).
    degenerate : mapping of str to Responses
        The degenerate policies' responses on the same contexts, by name.
    measures : names or Measure objects
        Default: all eight.
    tolerance : float
        A degenerate policy whose mean is at least the real-vs-real mean minus this games
        the measure.
    chance : str or None
        The name in ``degenerate`` that is the chance-level reference (not itself judged).
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the intervals of :func:`simscore.comparison.compare` (default ``Bootstrap()``).
    progress : bool
        Show a progress bar over the pairs.

    Returns
    -------
    DiagnoseResult
    """
    if not real:
        raise ValueError("diagnose needs at least one real policy")
    clash = sorted(set(real) & set(degenerate))
    if clash:
        raise ValueError(f"names used for both a real and a degenerate policy: {', '.join(clash)}")
    tolerance = check_number("tolerance", tolerance, minimum=0.0, finite=False, error=ValueError)
    settings = Bootstrap.resolve(bootstrap, "diagnose")
    resolved = resolve_measures(measures)
    names = [m.name for m in resolved]
    responses = {**real, **degenerate}
    pairs = _pairs(list(real), list(degenerate))
    if not pairs:
        raise ValueError("nothing to compare: give a degenerate policy or a second real policy")
    from simscore.progress import track

    records = []
    signatures: dict[str, str] = {}
    for a, b, kind in track(pairs, "diagnose", unit="pairs", enabled=progress, leave=False):
        t0 = time.perf_counter()
        comparison = compare(responses[a], responses[b], resolved, bootstrap=settings)
        signatures.update(comparison.signatures)
        logger.debug("%s vs %s: %.1f s", a, b, time.perf_counter() - t0)
        for measure, row in comparison.summary.iterrows():
            records.append({"a": a, "b": b, "kind": kind, "measure": measure,
                            **{c: float(row[c]) for c in ("mean", "ci_low", "ci_high")},
                            "count": int(row["count"]), "missing": int(row["missing"])})
    table = pd.DataFrame(records, columns=_COLUMNS)
    first = next(iter(real.values()))
    chance = chance if chance in degenerate else None
    table = _judge(table, tolerance, chance)
    verdicts = _verdicts(table, names, chance)
    return DiagnoseResult(table, verdicts, len(first), signatures, tolerance)


def wide_table(table: pd.DataFrame) -> pd.DataFrame:
    wide = table.pivot_table(index=["a", "b", "kind"], columns="measure", values="mean", sort=False)
    return wide[list(dict.fromkeys(table["measure"]))].reset_index()


def _markdown_table(frame: pd.DataFrame, digits: int = 3) -> list[str]:
    def cell(value: Any) -> str:
        if isinstance(value, (bool, np.bool_)):
            return "yes" if value else "no"
        if isinstance(value, (float, np.floating)):
            return "–" if np.isnan(value) else f"{value:.{digits}f}"
        return str(value) or "–"

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return lines


def _report(result: DiagnoseResult, context_name: str, command: str | None) -> str:
    verdicts = result.verdicts
    gamed = [m for m in verdicts.index if verdicts.loc[m, "gamed_by"]]
    above = [m for m in verdicts.index if verdicts.loc[m, "above_chance"]]
    lines = [
        "# Can a measure be fooled?",
        "",
        f"Degenerate policies against real policies on {result.n_contexts} contexts ({context_name}); "
        f"a measure is *gamed* when a degenerate policy (the uniform-random reference aside) scores, against "
        f"some real policy, at least the real-vs-real mean minus {result.tolerance:g}.",
        "",
        f"- gamed: {', '.join(gamed) if gamed else 'none'}" if not np.isnan(verdicts["real"]).all()
        else "- gamed: unknown (needs two real policies)",
        f"- a degenerate policy above the uniform-random reference: {', '.join(above) if above else 'none'}",
        "",
        "## Verdicts",
        "",
        *_markdown_table(verdicts.reset_index()),
        "",
        "## Mean score of every pair",
        "",
        *_markdown_table(wide_table(result.table)),
        "",
        "![scores per measure](diagnose.png)",
        "",
        "Per pair and measure with 95% bootstrap intervals: [diagnose.csv](diagnose.csv).",
        "",
        "## Signatures",
        "",
        *[f"- `{name}`: `{signature}`" for name, signature in result.signatures.items()],
    ]
    if command:
        lines += ["", "## Reproduce", "", f"    {command}"]
    return "\n".join(lines) + "\n"


def _figure(result: DiagnoseResult) -> Any:
    from simscore.plots import MEASURE_LABELS, PALETTE, figure_style, new_figure

    table = result.table
    measures = list(dict.fromkeys(table["measure"]))
    labels = [f"{a} vs {b}" for a, b in dict.fromkeys(zip(table["a"], table["b"]))]
    with figure_style():
        figure = new_figure(max(6.0, 0.55 * len(labels) + 2.0), 1.6 * len(measures) + 0.8)
        axes = figure.subplots(len(measures), 1, sharex=True, squeeze=False)[:, 0]
        for ax, measure in zip(axes, measures):
            part = table[table["measure"] == measure]
            colours = [PALETTE[0] if kind == "real" else PALETTE[1] for kind in part["kind"]]
            x = np.arange(len(part))
            means = part["mean"].to_numpy(dtype=float)
            errors = np.vstack([means - part["ci_low"].to_numpy(dtype=float),
                                part["ci_high"].to_numpy(dtype=float) - means])
            ax.bar(x, means, color=colours, yerr=np.nan_to_num(errors), capsize=2)
            real = result.verdicts.loc[measure, "real"]
            if not np.isnan(real):
                ax.axhline(real - result.tolerance, color=PALETTE[7], linestyle=":", linewidth=1)
            ax.set_ylabel(MEASURE_LABELS.get(measure, measure))
        axes[-1].set_xticks(np.arange(len(labels)), labels, rotation=60, ha="right")
        figure.suptitle("Degenerate (orange) and real (blue) pairs; dotted: real-vs-real mean − tolerance")
    return figure


def write_diagnose(
    result: DiagnoseResult,
    out: str | os.PathLike[str],
    *,
    context_name: str = "",
    command: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``diagnose.csv``, ``diagnose.png`` and ``diagnose.md`` into ``out``; returns the report path."""
    from simscore.plots import save_figure

    folder = Path(out)
    paths = [prepare_output(folder / name, overwrite=overwrite) for name in OUTPUTS]
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(paths[0], spreadsheet_frame(result.table).to_csv(index=False))
    save_figure(_figure(result), paths[2], overwrite=overwrite)
    atomic_write_text(paths[1], _report(result, context_name, command))
    return paths[1]
