"""The Markdown report of an experiment, and the ``simscore report DIR`` command (application layer).

The experiment pipeline (:mod:`simscore.app.experiment`) produces the tables of
:mod:`simscore.analysis`, saves them with :func:`simscore.tables_io.save_tables` and calls
:func:`write_report`; ``simscore report DIR`` (:func:`rebuild_report`) later rebuilds figures
and report from the saved tables alone.

Directory layout
----------------
::

    DIR/<name>.csv       each table as CSV (header row, no index)
    DIR/<name>.json      {"format": "simscore-table", "version": 1, "name", "columns",
                          "dtypes", "meta", "records"} — the file load_tables reads
    DIR/tables.json      {"format": "simscore-tables", "version": 1, "tables": [names], "meta"}
    DIR/figures/*.png    one per figure (simscore.plots.make_figures)
    DIR/report.md        the report, linking the figures and tables relatively

Table names the report knows (schemas in :mod:`simscore.analysis`): ``performance``,
``convergence``, ``seeds``, ``reward_models``, ``per_turn``, ``correlation``, ``chance``.
Other names are saved, loaded and linked, but not analysed.

The ``meta`` dict (JSON-serialisable; every key optional):

- ``title``: report title;
- ``signatures``: measure name → signature (``Comparison.signatures``);
- ``config``: the experiment configuration;
- ``versions``: package → version (:func:`simscore.tables_io.collect_versions`);
- ``seeds``: the seeds used (training, policies, bootstrap), any JSON value;
- ``bootstrap``: ``{"n_resamples", "confidence", "seed"}`` for the aggregates over pairs;
- ``findings``: keyword arguments (thresholds) of :func:`simscore.app.findings.findings`.

Everything in the report derives from the tables and ``meta`` (no clock, no host names),
so rebuilding from saved tables gives the same text.

A pipeline, in outline (``ck[cs][reward][run]`` maps checkpoint → Responses, ``K`` is the
final checkpoint, ``ctx[cs]`` the context set or its metadata frame)::

    from simscore import analysis as an, tables_io
    from simscore.app import report

    conv = an.combine(an.convergence(ck[cs][rw][run], measures, run=run, reward=rw, context_set=cs,
                                     metadata=ctx[cs]) for cs in ck for rw in ck[cs] for run in ck[cs][rw])
    seeds = an.combine(an.seeds(ck[cs][rw], measures, reward=rw, context_set=cs, metadata=ctx[cs])
                       for cs in ck for rw in ck[cs])
    rm = an.combine(an.reward_models({rw: {run: c[K] for run, c in runs.items()}
                                      for rw, runs in ck[cs].items()},
                                     measures, checkpoint=K, context_set=cs, metadata=ctx[cs]) for cs in ck)
    chance = an.chance_level(random_responses, ck["col"]["ts"]["ts-1"][K], measures,
                             checkpoint=K, reward="ts", run="ts-1", context_set="col")
    cross = [c for key, c in rm.comparisons.items() if key.reward_a != key.reward_b]
    tables = {
        "performance": an.performance_table(evaluation_records),
        "convergence": conv.table, "seeds": seeds.table, "reward_models": rm.table,
        "per_turn": an.per_turn(seeds.select(context_set="col", checkpoint=K), group="seed pairs"),
        "correlation": an.correlation_table([*conv.comparisons.values(), *seeds.comparisons.values(), *cross]),
        "chance": chance.table,
    }
    meta = {"signatures": conv.select()[0].signatures, "config": config, "seeds": seeds_used,
            "versions": tables_io.collect_versions(), "bootstrap": {"n_resamples": 1000, "seed": 0}}
    tables_io.save_tables(out_dir, tables, meta)
    report.write_report(out_dir, tables, meta)   # figures/*.png and report.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simscore import analysis
from simscore._version import __version__
from simscore.app.findings import findings
from simscore.io import atomic_write_text
from simscore.tables_io import TABLES_VERSION, load_tables, markdown_table

__all__ = [
    "TABLE_NAMES",
    "build_report",
    "write_report",
    "rebuild_report",
    "add_subcommands",
]

#: The tables the report analyses, in report order.
TABLE_NAMES: tuple[str, ...] = (
    "performance", "convergence", "seeds", "reward_models", "per_turn", "correlation", "chance",
)


def _label(measure: str) -> str:
    from simscore.plots import MEASURE_LABELS

    return MEASURE_LABELS.get(measure, measure)


def _wide(
    table: pd.DataFrame,
    index: list[str],
    value: str = "mean",
    *,
    agg: str = "mean",
    extra: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """Measures as columns (first-appearance order) beside the ``index`` columns (rows in table order).

    ``agg`` combines repeated cells (``"mean"`` over runs, ``"first"`` for text cells);
    ``extra = (title, column)`` adds the per-row maximum of ``column`` after the index columns.
    """
    keys = table[index].drop_duplicates()
    order = pd.MultiIndex.from_frame(keys) if len(index) > 1 else pd.Index(keys[index[0]], name=index[0])
    measures = list(dict.fromkeys(table["measure"]))
    cells = table.groupby([*index, "measure"], sort=False)[value].agg(agg)
    wide = cells.unstack("measure").reindex(index=order, columns=measures)
    if extra is not None:
        title, column = extra
        wide.insert(0, title, table.groupby(index, sort=False)[column].max().reindex(order).to_numpy())
    wide = wide.reset_index()
    wide.columns.name = None
    return wide.rename(columns={m: _label(m) for m in measures})


def _with_interval(mean: float, low: float, high: float, digits: int = 3) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "—"
    if any(v is None or math.isnan(v) for v in (low, high)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _figure(figures: Mapping[str, Path], name: str, base: Path | None, caption: str) -> list[str]:
    path = figures.get(name)
    if path is None:
        return []
    link = Path(os.path.relpath(Path(path), base)) if base is not None else Path(path)
    return [f"![{caption}]({link.as_posix()})", ""]


def _drop_blank(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Leave out label columns that hold a single empty string (e.g. no context set name)."""
    blank = [c for c in columns if c in frame.columns and frame[c].astype(str).eq("").all()]
    return frame.drop(columns=blank)


def _section_performance(table: pd.DataFrame) -> list[str]:
    shown = pd.DataFrame({
        "reward": table["reward"],
        "checkpoint": table["checkpoint"],
        "runs": table["n_runs"],
        **{
            title: [
                _with_interval(m, lo, hi)
                for m, lo, hi in zip(table[c], table[f"{c}_low"], table[f"{c}_high"], strict=True)
            ]
            for c, title in (
                ("success_rate", "task success rate"), ("avg_iq", "average IQ (1–5)"),
                ("avg_length", "average length (turns)"),
            )
        },
    })
    return [
        "Mean over runs per reward model and checkpoint, with a 95% Student-t interval over runs "
        "(— with a single run).",
        "",
        markdown_table(_drop_blank(shown, ["reward"])),
        "",
    ]


def _section_convergence(table: pd.DataFrame, threshold: float) -> list[str]:
    keys = ["context_set", "reward", "checkpoint"]
    runs = table.assign(runs=table.groupby(keys, sort=False)["run"].transform("nunique"))
    mean_over_runs = _wide(runs, keys, extra=("runs", "runs"))
    stability = analysis.stability_table(table, threshold=threshold)
    stability = stability.assign(
        first=["never" if v is pd.NA else str(int(v)) for v in stability["first_stable"]]
    )
    stable = _wide(stability, ["context_set", "reward", "run"], "first", agg="first")
    return [
        "Checkpoint k compared with checkpoint k − 1 of the same run; mean over runs per reward model.",
        "",
        markdown_table(_drop_blank(mean_over_runs, ["context_set", "reward"])),
        "",
        f"First checkpoint from which each measure stays ≥ {threshold:g} (\"never\": the last value is below):",
        "",
        markdown_table(_drop_blank(stable, ["context_set", "reward"])),
        "",
    ]


def _section_seeds(table: pd.DataFrame, bootstrap: Mapping[str, Any]) -> list[str]:
    aggregate = analysis.seeds_aggregate(table, **bootstrap)
    wide = _wide(aggregate, ["context_set", "reward", "checkpoint"], extra=("pairs", "n_pairs"))
    return [
        "Every pair of runs of one reward model at the same checkpoint; mean over pairs.",
        "",
        markdown_table(_drop_blank(wide, ["context_set", "reward"])),
        "",
    ]


def _section_reward_models(table: pd.DataFrame, bootstrap: Mapping[str, Any]) -> list[str]:
    aggregate = analysis.reward_models_aggregate(table, **bootstrap)
    aggregate = aggregate.assign(
        value=[_with_interval(m, lo, hi) for m, lo, hi in
               zip(aggregate["mean"], aggregate["ci_low"], aggregate["ci_high"], strict=True)]
    )
    keys = ["context_set", "checkpoint", "group"]
    wide = _wide(aggregate, keys, "value", agg="first", extra=("pairs", "n_pairs"))
    return [
        "Within-reward pairs (e.g. ts-ts, iq-iq) beside cross-reward pairs (e.g. ts-iq): mean over pairs "
        "[95% bootstrap interval over pairs; a single pair shows its own interval over contexts].",
        "",
        markdown_table(_drop_blank(wide, ["context_set"])),
        "",
    ]


def _section_per_turn(table: pd.DataFrame) -> list[str]:
    wide = _wide(table, ["group", "turn_index"], extra=("pairs", "count"))
    return [
        "Scores pooled over the compared pairs, grouped by the turn index of the context.",
        "",
        markdown_table(_drop_blank(wide, ["group"])),
        "",
    ]


def _section_correlation(table: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    for subset in dict.fromkeys(table["subset"]):
        matrices = analysis.correlation_matrices(table, subset)
        n = int(np.diag(matrices.n.to_numpy()).max()) if len(matrices.n) else 0
        what = {"all": "All pairs", "nonmatching": "Non-matching pairs (TMR = 0)"}.get(subset, subset)
        for title, matrix in (("Pearson r", matrices.r), ("mean squared error", matrices.mse)):
            shown = matrix.rename(index=_label, columns=_label).reset_index()
            lines += [f"{what}, {title} (up to {n} pairs; — where a measure is constant or undefined):", "",
                      markdown_table(shown), ""]
    return lines


def _section_chance(tables: Mapping[str, pd.DataFrame], bootstrap: Mapping[str, Any]) -> list[str]:
    def get(name: str) -> pd.DataFrame | None:
        table = tables.get(name)
        return table if table is not None and not table.empty else None

    contrast = analysis.contrast(
        chance=tables["chance"], convergence=get("convergence"), seeds=get("seeds"),
        reward_models=get("reward_models"), **bootstrap,
    )
    wide = _wide(contrast, ["context_set", "comparison"], extra=("pairs", "n_pairs"))
    return [
        "A seeded random policy against trained policies shows what \"dissimilar\" looks like; "
        "beside it the trained comparisons at their final checkpoints (means over pairs).",
        "",
        markdown_table(_drop_blank(wide, ["context_set"])),
        "",
    ]


_SECTIONS = {
    "performance": ("Absolute performance (paper's Table 1)", "Learning curves of absolute performance"),
    "convergence": ("Convergence (paper's Table 2)", "Convergence curves"),
    "seeds": ("Seeds (paper's Table 4 and Figure 3)", "Seed-pair similarity over checkpoints"),
    "reward_models": ("Reward models (paper's Table 3 and Figure 5)", "Reward-model comparison"),
    "per_turn": ("Per turn (paper's Figure 4)", "Similarity by dialogue turn"),
    "correlation": ("Correlation between measures (paper's Figure 6)", "Correlation heatmaps"),
    "chance": ("Chance level", "Chance level vs trained comparisons"),
}


def _present(tables: Mapping[str, pd.DataFrame], name: str) -> bool:
    table = tables.get(name)
    return table is not None and not table.empty


def build_report(
    tables: Mapping[str, pd.DataFrame],
    meta: Mapping[str, Any] | None = None,
    *,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
    base: str | os.PathLike[str] | None = None,
) -> str:
    """The Markdown report of an experiment.

    Parameters
    ----------
    tables : mapping name → DataFrame
        Tables by schema name (:data:`TABLE_NAMES`); missing or empty ones are skipped.
    meta : mapping, optional
        See the module docstring (title, signatures, config, versions, seeds, bootstrap, findings).
    figures : mapping figure name → path, optional
        Figures to embed (:func:`simscore.plots.make_figures`).
    base : path-like, optional
        Directory the report is written to: figure and table links are relative to it.

    Returns
    -------
    str
        The report text (ends with a newline).
    """
    meta = dict(meta or {})
    figure_paths = {k: Path(v) for k, v in (figures or {}).items()}
    base_dir = Path(base) if base is not None else None
    bootstrap = dict(meta.get("bootstrap") or {})
    thresholds = dict(meta.get("findings") or {})
    known = [n for n in TABLE_NAMES if _present(tables, n)]
    for name in known:
        analysis.check_table(tables[name], name, f"tables[{name!r}]")

    title = str(meta.get("title") or "simscore report: similarity of dialogue behaviour")
    lines = [f"# {title}", ""]
    sets: list[str] = []
    measures: list[str] = []
    for name in known:
        table = tables[name]
        if "context_set" in table.columns:
            sets += [s for s in table["context_set"].astype(str) if s]
        if "measure" in table.columns:
            measures += list(table["measure"])
    intro = (
        f"Policies compared with simscore {meta.get('versions', {}).get('simscore', __version__)} "
        "(Ultes & Maier, SIGDIAL 2020)."
    )
    if sets:
        intro += f" Context sets: {', '.join(dict.fromkeys(sets))}."
    if measures:
        intro += f" Measures: {', '.join(_label(m) for m in dict.fromkeys(measures))}."
    lines += [intro, ""]
    saved = [n for n in tables if base_dir is not None and (base_dir / f"{n}.csv").is_file()]
    if saved:
        lines += ["Tables: " + ", ".join(f"[{n}]({n}.csv)" for n in saved) + " (CSV; JSON beside each).", ""]

    lines += ["## Findings", ""]
    results = findings(
        convergence=tables.get("convergence") if "convergence" in known else None,
        seeds=tables.get("seeds") if "seeds" in known else None,
        reward_models=tables.get("reward_models") if "reward_models" in known else None,
        correlation=tables.get("correlation") if "correlation" in known else None,
        **thresholds,
    )
    for finding in results:
        evidence = finding.evidence if finding.checks else finding.reason
        lines.append(f"- ({finding.number}) {finding.claim} **{finding.verdict.capitalize()}:** {evidence}.")
    lines.append("")

    threshold = float(thresholds.get("converged_tmr", 0.9))
    for name in known:
        heading, caption = _SECTIONS[name]
        lines += [f"## {heading}", ""]
        lines += _figure(figure_paths, name, base_dir, caption)
        table = tables[name]
        if name == "performance":
            lines += _section_performance(table)
        elif name == "convergence":
            lines += _section_convergence(table, threshold)
        elif name == "seeds":
            lines += _section_seeds(table, bootstrap)
        elif name == "reward_models":
            lines += _section_reward_models(table, bootstrap)
        elif name == "per_turn":
            lines += _section_per_turn(table)
        elif name == "correlation":
            lines += _section_correlation(table)
        elif name == "chance":
            lines += _section_chance(tables, bootstrap)

    signatures = meta.get("signatures") or {}
    lines += ["## Measure signatures", ""]
    if signatures:
        lines += [markdown_table(pd.DataFrame(
            {"measure": list(signatures), "signature": [f"`{s}`" for s in signatures.values()]}
        )), ""]
    else:
        lines += ["No signatures were recorded.", ""]

    lines += ["## Reproducibility", ""]
    block: dict[str, Any] = {
        key: meta[key] for key in ("versions", "seeds", "bootstrap", "findings", "config") if key in meta
    }
    block["simscore_report_format"] = TABLES_VERSION
    lines += [
        "Everything above is computed from the saved tables and this block; "
        "`simscore report DIR` rebuilds the figures and this report from them.",
        "",
        "```json",
        json.dumps(block, ensure_ascii=False, indent=2, sort_keys=False, allow_nan=False),
        "```",
        "",
    ]
    return "\n".join(lines)


def write_report(
    directory: str | os.PathLike[str],
    tables: Mapping[str, pd.DataFrame],
    meta: Mapping[str, Any] | None = None,
    *,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
) -> Path:
    """Write ``DIR/report.md`` atomically; draws the figures into ``DIR/figures`` unless given.

    Parameters
    ----------
    directory : path-like
        The experiment's output folder.
    tables, meta
        As for :func:`build_report`.
    figures : mapping figure name → path, optional
        Already drawn figures; default: :func:`simscore.plots.make_figures` into
        ``DIR/figures`` with the bootstrap settings of ``meta["bootstrap"]``.

    Returns
    -------
    Path
        The report file.
    """
    from simscore.plots import make_figures

    out = Path(directory)
    meta = dict(meta or {})
    if figures is None:
        figures = make_figures(out / "figures", tables, **dict(meta.get("bootstrap") or {}))
    else:
        missing = [str(p) for p in figures.values() if not Path(p).is_file()]
        if missing:
            raise FileNotFoundError(f"figures: no such file(s): {', '.join(missing)}")
    text = build_report(tables, meta, figures=figures, base=out)
    path = out / "report.md"
    atomic_write_text(path, text)
    return path


def rebuild_report(directory: str | os.PathLike[str]) -> Path:
    """Redraw the figures and rewrite ``report.md`` from the tables saved in ``directory``.

    Returns
    -------
    Path
        The report file.
    """
    saved = load_tables(directory)
    return write_report(directory, saved.tables, saved.meta)


def _cmd_report(args: argparse.Namespace) -> int:
    path = rebuild_report(args.directory)
    print(f"wrote {path}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore report DIR`` on the CLI's sub-command parsers."""
    p = subparsers.add_parser("report", help="rebuild figures and report.md from the tables saved in DIR")
    p.add_argument("directory", help="an experiment's output folder (with tables.json)")
    p.set_defaults(func=_cmd_report)
