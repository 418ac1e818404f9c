"""The Markdown report of an experiment, and rebuilding it from its tables (application layer).

The experiment pipeline (:mod:`simscore.app.runner`) produces the tables of
:mod:`simscore.analysis`, saves them with :func:`simscore.analysis.tables_io.save_tables` and calls
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
``convergence``, ``seeds``, ``reward_models``, ``per_turn``, ``first_turn``,
``text_at_matching_actions``, ``correlation``, ``chance``. Other names are saved, loaded and
linked, but not analysed.

What the report holds: a table of the paper's findings graded on this run
(:mod:`simscore.app.report.findings`), this run's set-up beside the paper's, one section per table
with the paper's published numbers beside ours where the paper has them
(:mod:`simscore.app.report.paper`: rows marked "(paper)" or columns named "paper"), a note when
task success is saturated (:data:`SATURATED_SUCCESS`), the measures' signatures and a
"Reproduce" section (command, date, run log, configuration, package versions, citation).

What the tables were made with comes as a :class:`~simscore.app.experiment.record.RunRecord` (title,
signatures, configuration, versions, seeds, bootstrap settings, finding thresholds, date,
command), or as its saved form, the ``meta`` object of ``tables.json``.

Everything in the report derives from the tables and the record (no clock, no host names; the
only look at the folder is whether it holds ``run.log`` and ``explain/``, to link them), so
rebuilding from saved tables gives the same text.

A pipeline, in outline (``ck[cs][reward][run]`` maps checkpoint → Responses, ``K`` is the
final checkpoint, ``ctx[cs]`` the context set or its metadata frame)::

    from simscore import analysis as an
    from simscore.analysis import tables_io
    from simscore.app.report import document as report

    conv = an.combine(an.convergence(ck[cs][rw][run], measures, run=run, reward=rw, context_set=cs,
                                     metadata=ctx[cs]) for cs in ck for rw in ck[cs] for run in ck[cs][rw])
    seeds = an.combine(an.seeds(ck[cs][rw], measures, reward=rw, context_set=cs, metadata=ctx[cs])
                       for cs in ck for rw in ck[cs])
    rm = an.combine(an.reward_models({rw: {run: c[K] for run, c in runs.items()}
                                      for rw, runs in ck[cs].items()},
                                     measures, checkpoint=K, context_set=cs, metadata=ctx[cs]) for cs in ck)
    chance = an.chance_level(random_responses, ck["col"]["ts"]["ts-1"][K], measures,
                             checkpoint=K, reward="ts", run="ts-1", context_set="col")
    cross = {key: c for key, c in rm.comparisons.items() if key.reward_a != key.reward_b}
    col_pairs = {k: c for k, c in [*seeds.comparisons.items(), *cross.items()] if k.context_set == "col"}
    tables = {
        "performance": an.performance_table(evaluation_records),
        "convergence": conv.table, "seeds": seeds.table, "reward_models": rm.table,
        "per_turn": an.per_turn(seeds.select(context_set="col", checkpoint=K), group="seed pairs"),
        "first_turn": an.first_turn(col_pairs),
        "text_at_matching_actions": an.text_at_matching_actions(
            {"convergence": conv, "seeds": seeds, "reward_models": cross}),
        "correlation": an.correlation_table([*conv.comparisons.values(), *seeds.comparisons.values(),
                                             *cross.values()]),
        "chance": chance.table,
    }
    record = RunRecord(signatures=conv.select()[0].signatures, config=config, seeds=seeds_used,
                       versions=tables_io.collect_versions(), bootstrap=Bootstrap(n_resamples=1000),
                       findings=Thresholds(converged_tmr=0.9), date="2020-07-01",
                       command="simscore run my.toml --out DIR", command_recorded=True)
    tables_io.save_tables(out_dir, tables, record.to_meta())
    report.write_report(out_dir, tables, record)   # figures/*.png and report.md
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from simscore import analysis
from simscore._version import __version__
from simscore.analysis.tables_io import TABLES_VERSION, load_tables, markdown_table
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.folder import ExperimentFolder
from simscore.app.experiment.provenance import remaking
from simscore.app.experiment.record import RunRecord
from simscore.app.experiment.sections import Thresholds
from simscore.app.report import paper
from simscore.app.report.base import PAPER_MARK, ReportInput, measure_label, thousands
from simscore.app.report.findings import Finding, findings, format_quantities
from simscore.app.report.performance import SATURATED_SUCCESS
from simscore.app.report.sections import SECTIONS, TABLE_NAMES
from simscore.errors import FileFormatError
from simscore.io import atomic_write_text
from simscore.io.untrusted import code_fence, markdown_text

__all__ = [
    "TABLE_NAMES",
    "SATURATED_SUCCESS",
    "PAPER_MARK",
    "build_report",
    "draw_figures",
    "write_report",
    "rebuild_report",
]


def _figure(figures: Mapping[str, Path], name: str, folder: ExperimentFolder | None, caption: str) -> list[str]:
    path = figures.get(name)
    if path is None:
        return []
    link = Path(os.path.relpath(Path(path), folder.root)) if folder is not None else Path(path)
    return [f"![{caption}]({link.as_posix()})", ""]














# ----------------------------------------------------------------------------- findings


def _findings_section(results: Sequence[Finding], thresholds: Thresholds, ignored: Sequence[str]) -> list[str]:
    rows = []
    for finding in results:
        label = f"({finding.number}) {finding.title}" + (" †" if finding.caveat else "")
        if not finding.checks:
            rows.append((label, "—", f"not assessed: {finding.reason}", "—", "—", "—"))
            continue
        for i, check in enumerate(finding.checks):
            verdict = check.verdict if check.verdict != "not assessed" else f"not assessed: {check.note}"
            paper_text = format_quantities(check.paper) if check.paper else (check.paper_says or "—")
            same_rule = i > 0 and check.rule == finding.checks[i - 1].rule
            rows.append((label, check.scope, verdict, format_quantities(check.ours) or "—", paper_text,
                         "(as above)" if same_rule else (check.rule or "—")))
    table = pd.DataFrame(rows, columns=["finding", "scope", "verdict", "ours", "paper", "threshold"])
    changed = thresholds.changed()
    lines = [
        "Each finding the paper states, checked on this run per context set and reward model (the scope), "
        "beside the paper's number where it gives one (— where it gives none). Verdicts: holds; partly (the "
        "direction is right and the size reaches at least half the paper's margin — half the threshold's where the "
        "paper gives no number —, one of two conditions holds, or it holds in one scope and not another); does not "
        "hold; not assessed. A finding marked † holds or fails by construction of this simulated world or by its "
        "text models, not by the policies (see its details).",
        "",
        markdown_table(table),
        "",
        "The thresholds are simscore's own choice, not the paper's (the paper states its findings in words); "
        "defaults are documented in `simscore.app.experiment.sections.Thresholds` and can be set in the `[findings]` "
        "section of the experiment configuration. "
        + ("This run changed " + ", ".join(f"`{k} = {v:g}`" for k, v in changed.items()) + "."
           if changed else "This run uses the defaults."),
        "",
    ]
    if ignored:
        lines += [f"Unknown thresholds in the saved settings, ignored: {', '.join(ignored)}.", ""]
    lines += ["Details:", ""]
    for finding in results:
        text = f"- **({finding.number}) {finding.verdict.capitalize()}.** {finding.claim}"
        if not finding.checks:
            text += f" Not assessed: {finding.reason}."
        else:
            noted = [c for c in finding.checks if c.note and c.verdict != "not assessed"]
            if len({c.note for c in noted}) == 1 and len(noted) > 1:
                text += f" {noted[0].note.capitalize()} (every scope)."
            elif noted:
                text += " " + "; ".join(f"{c.scope}: {c.note}" for c in noted) + "."
        if finding.mechanism:
            text += f" {finding.mechanism}"
        if finding.caveat:
            text += f" *† {finding.caveat}*"
        lines.append(text)
    lines.append("")
    return lines


# ----------------------------------------------------------------------------- set-up


def _contexts(tables: Mapping[str, pd.DataFrame], context_set: str, by: str | None = None) -> dict[str, int]:
    """Contexts per comparison (scored + missing) on ``context_set``, per value of ``by`` (or ``""``)."""
    for name in ("seeds", "convergence", "reward_models", "chance") if by else ("reward_models", "chance"):
        table = tables.get(name)
        if table is None or table.empty or (by and by not in table.columns):
            continue
        part = table[table["context_set"] == context_set]
        if part.empty:
            continue
        sizes = (part["count"] + part["missing"]).groupby(part[by] if by else [""] * len(part), sort=False).max()
        return {str(k): int(v) for k, v in sizes.items()}
    return {}


def _configured(config: ExperimentConfig | None) -> list[tuple[str, Any, Any]]:
    """The set-up's rows that the configuration gives: (aspect, this run, the paper); none without one."""
    if config is None:
        return []
    facts = paper.facts()
    return [
        ("training dialogues per run", config.training.dialogues, facts.dialogues),
        ("a checkpoint every (dialogues)", config.training.every, facts.every),
        ("reward models", ", ".join(config.rewards), ", ".join(facts.col_contexts)),
        ("runs (seeds) per reward model", len(config.seeds), facts.trials),
        ("evaluation dialogues per checkpoint", config.training.eval_dialogues, facts.eval_dialogues),
        ("C_col: dialogues collected per run", config.collect_dialogues, facts.collect_dialogues),
    ]


def _per_dialogue(config: ExperimentConfig | None, collected: Mapping[str, int]) -> str | None:
    """C_col's contexts per collected dialogue, per reward model; None without a configuration to count them."""
    if config is None:
        return None
    dialogues = config.collect_dialogues * len(config.seeds)
    return ", ".join(f"{r} {n / dialogues:.1f}" for r, n in collected.items())


def _section_setup(tables: Mapping[str, pd.DataFrame], config: ExperimentConfig | None) -> list[str]:
    facts = paper.facts()
    rows: list[tuple[str, str, str]] = []
    differs: list[str] = []

    def row(aspect: str, ours: Any, theirs: Any, compare: bool = True) -> None:
        if ours is None:
            return
        rows.append((aspect, thousands(ours), thousands(theirs)))
        if compare and ours != theirs:
            differs.append(f"{aspect} ({thousands(ours)} vs {thousands(theirs)})")

    for aspect, ours, theirs in _configured(config):
        row(aspect, ours, theirs)
    collected = _contexts(tables, paper.COLLECTED_SET, "reward")
    if collected:
        row("C_col contexts per reward model", ", ".join(f"{r} {n:,}" for r, n in collected.items()),
            ", ".join(f"{r} {n:,}" for r, n in facts.col_contexts.items()), compare=False)
        row("C_col contexts per collected dialogue", _per_dialogue(config, collected),
            ", ".join(f"{r} {facts.contexts_per_dialogue(r):.1f}" for r in facts.col_contexts), compare=False)
    union = _contexts(tables, paper.COLLECTED_SET)
    if union and len(collected) != 1:  # with one reward model its row above says it
        row("C_col contexts, both reward models", union[""], "—", compare=False)
    summary = tables.get("contexts")
    if summary is not None and not summary.empty:
        for _, r in summary[summary["part"].astype(str) == ""].iterrows():
            name = "C_col" if r["context_set"] == paper.COLLECTED_SET else "C_gen" if r["context_set"] == "gen" \
                else str(r["context_set"])
            row(f"{name}: distinct belief states (of {int(r['contexts']):,} contexts)", int(r["distinct_states"]), "—",
                compare=False)
            if int(r["dialogues"]):
                row(f"{name}: dialogues (the bootstrap's unit)", int(r["dialogues"]), "—", compare=False)
                row(f"{name}: contexts where the user has said bye (act replaced by bye)", int(r["user_bye"]), "—",
                    compare=False)
                row(f"{name}: first-turn contexts (distinct belief states)",
                    f"{int(r['first_turn']):,} ({int(r['first_turn_states']):,})", "—", compare=False)
    generated = _contexts(tables, "gen")
    if generated:
        row("C_gen contexts", generated[""], facts.gen_contexts)
    if not rows:
        return []
    lines = [
        markdown_table(pd.DataFrame(rows, columns=["aspect", "this run", "paper"])),
        "",
    ]
    if differs:
        lines += [
            "This run differs from the paper's set-up in: " + "; ".join(differs) + ". The paper's numbers "
            "stand beside ours for orientation; they are not expected to agree to the digit.",
            "",
        ]
    return lines


# ----------------------------------------------------------------------------- paper rows in tables






# ----------------------------------------------------------------------------- sections




















def _toml_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    return None


def _toml(config: Mapping[str, Any], prefix: str = "") -> str | None:
    """The configuration as TOML (a table's values, then its sub-tables); None if a value has no TOML form."""
    values, tables = [], []
    for key, value in config.items():
        if isinstance(value, Mapping):
            name = f"{prefix}.{key}" if prefix else str(key)
            body = _toml(value, name)
            if body is None:
                return None
            tables.append(f"[{name}]\n{body}".rstrip())
        else:
            text = _toml_value(value)
            if text is None:
                return None
            values.append(f"{key} = {text}")
    return "\n\n".join(part for part in ["\n".join(values), *tables] if part)


def _section_reproduce(record: RunRecord, folder: ExperimentFolder | None) -> list[str]:
    lines = ["## Reproduce", ""]
    config = record.config.to_dict() if record.config is not None else None
    toml = _toml(config) if config is not None else None
    if record.command:
        fence = code_fence(record.command)  # a path in the command cannot close the block
        lines += ["The command that produced this run:", "", f"{fence}sh", record.command, fence, ""]
    elif record.command_recorded:
        lines += [
            "This run was started from Python (`simscore.app.runner.run_experiment`). The same from the command "
            "line: save the configuration below as `experiment.toml` and run",
            "",
            "```sh",
            "simscore run experiment.toml --out DIR",
            "```",
            "",
        ]
    else:
        lines += ["The command that produced these tables was not recorded.", ""]
    versions = record.versions
    made = f" with simscore {versions['simscore']}" if versions.get("simscore") else ""
    text = f"Scored on {record.date} (UTC){made}." if record.date else (f"Made{made}." if made else "")
    if folder is not None and folder.run_log.is_file():
        log = folder.link(folder.run_log)
        text += (" " if text else "") + f"Log of the run: [{log}]({log})."
    if text:
        lines += [text, ""]
    if config is not None:
        if toml is not None:
            lines += ["Configuration (TOML, as `simscore run` reads it):", "", "```toml", toml, "```", ""]
        else:
            lines += ["Configuration:", "", "```json", json.dumps(config, ensure_ascii=False, indent=2), "```", ""]
    elif record.config_problem is not None:
        lines += [f"The configuration saved with these tables is not one this simscore reads, so it is not shown: "
                  f"{record.config_problem}.", ""]
    if versions:
        lines += ["Package versions:", "", markdown_table(pd.DataFrame(
            {"package": list(versions), "version": [str(v) for v in versions.values()]})), ""]
    saved = record.to_meta()
    block: dict[str, Any] = {key: saved[key] for key in ("seeds", "bootstrap", "findings") if key in saved}
    block["simscore_report_format"] = TABLES_VERSION
    lines += [
        "Seeds, bootstrap and finding thresholds:",
        "",
        "```json",
        json.dumps(block, ensure_ascii=False, indent=2, sort_keys=False, allow_nan=False),
        "```",
        "",
        "Everything above is computed from the saved tables and this section's settings; "
        "`simscore report DIR` rebuilds the figures and this report from them.",
        "",
        f"Please cite the paper whose method and findings this report follows: {paper.CITATION}",
        "",
        "```bibtex",
        paper.BIBTEX,
        "```",
        "",
    ]
    return lines


def build_report(
    tables: Mapping[str, pd.DataFrame],
    record: RunRecord | Mapping[str, Any] | None = None,
    *,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
    base: str | os.PathLike[str] | None = None,
) -> str:
    """The Markdown report of an experiment, with the paper's numbers beside ours.

    Parameters
    ----------
    tables : mapping name → DataFrame
        Tables by schema name (:data:`TABLE_NAMES`); missing or empty ones are skipped.
    record : RunRecord or mapping, optional
        What the tables were made with (:class:`simscore.app.experiment.record.RunRecord`, or its saved
        form, the ``meta`` of ``tables.json``).
    figures : mapping figure name → path, optional
        Figures to embed (:func:`simscore.plots.make_figures`).
    base : path-like, optional
        Directory the report is written to: figure, table and log links are relative to it.

    Returns
    -------
    str
        The report text (ends with a newline).

    Examples
    --------
    >>> text = build_report({}, {"title": "Nothing yet"})
    >>> text.splitlines()[0], "## Findings" in text, "## Reproduce" in text
    ('# Nothing yet', True, True)
    """
    record = record if isinstance(record, RunRecord) else RunRecord.from_meta(record)
    run = ReportInput(tables, record)
    folder = ExperimentFolder(base) if base is not None else None
    present = [section for section in SECTIONS if run.table(section.table) is not None]
    for section in present:
        analysis.check_table(tables[section.table], section.table, f"tables[{section.table!r}]")

    lines = _introduction(run, [section.table for section in present], folder)
    lines += ["## Findings", ""]
    results = findings(**{name: table for name in _FINDING_TABLES if (table := run.table(name)) is not None},
                       thresholds=record.thresholds)
    lines += _findings_section(results, record.thresholds, record.ignored_thresholds)
    if folder is not None:
        from simscore.app.inspect.explain import summary_paragraph

        explained = summary_paragraph(folder.root)
        if explained is not None:
            lines += ["## Explained: agreement beyond chance, where and why", "", explained, ""]
    setup = _section_setup(tables, run.config)
    if setup:
        lines += ["## Set-up beside the paper's", "", *setup]

    figure_paths = {k: Path(v) for k, v in (figures or {}).items()}
    for section in SECTIONS:
        if section not in present:
            why = section.absent(run) if section.absent is not None else []
            lines += [f"## {section.heading}", "", *why] if why else []
            continue
        lines += [f"## {section.heading}", ""]
        if section.figure is not None:
            lines += _figure(figure_paths, section.table, folder, section.figure)
        lines += section.render(tables[section.table], run)
    appendix = [(name, caption) for name, caption in _APPENDIX if name in figure_paths]
    if appendix:
        lines += ["## Appendix: every measure", ""]
        for name, caption in appendix:
            lines += _figure(figure_paths, name, folder, caption)

    lines += _section_signatures(record)
    lines += _section_reproduce(record, folder)
    return "\n".join(lines)


def _introduction(run: ReportInput, present: Sequence[str], folder: ExperimentFolder | None) -> list[str]:
    """Title, what was compared (context sets, measures), where the paper's numbers are, links to the tables."""
    title = run.record.title or "simscore report: similarity of dialogue behaviour"
    sets: list[str] = []
    measures: list[str] = []
    for name in present:
        table = run.tables[name]
        if "context_set" in table.columns:
            sets += [s for s in table["context_set"].astype(str) if s]
        if "measure" in table.columns:
            measures += list(table["measure"])
    intro = (
        f"Policies compared with simscore {run.record.versions.get('simscore', __version__)} "
        "(Ultes & Maier, SIGDIAL 2020)."
    )
    if sets:
        intro += f" Context sets: {', '.join(markdown_text(s) for s in dict.fromkeys(sets))}."
    if measures:
        intro += f" Measures: {', '.join(markdown_text(measure_label(m)) for m in dict.fromkeys(measures))}."
    intro += (f" The paper's published numbers (its Tables 1–4, shipped with simscore) stand beside ours, "
              f"in rows marked \"{PAPER_MARK}\" or columns named \"paper\".")
    lines = [f"# {markdown_text(title)}", "", intro, ""]  # the title comes from the configuration
    if folder is not None:
        linked = {n: folder.link(folder.table(n)) for n in run.tables if folder.table(n).is_file()}
        if linked:
            lines += ["Tables: " + ", ".join(f"[{n}]({link})" for n, link in linked.items())
                      + " (CSV; JSON beside each).", ""]
    return lines


def _section_signatures(record: RunRecord) -> list[str]:
    lines = ["## Measure signatures", ""]
    if not record.signatures:
        return [*lines, "No signatures were recorded.", ""]
    signatures = pd.DataFrame({"measure": list(record.signatures),
                               "signature": [f"`{s}`" for s in record.signatures.values()]})
    return [*lines, markdown_table(signatures), ""]


#: The tables :func:`~simscore.app.report.findings.findings` reads.
#: The appendix figures (:func:`simscore.plots.make_figures`): every measure, many panels.
_APPENDIX = (
    ("convergence_all", "Convergence of every measure: checkpoint k vs k − 1 per run (bootstrap bands)"),
    ("seeds_all", "Seed-pair similarity of every measure over checkpoints (thin: single pairs)"),
)


def paper_references() -> dict[str, Any]:
    """The published values the figures overlay (:func:`simscore.plots.make_figures`'s ``references``)."""
    facts = paper.facts()
    seeds = paper.seeds_means()
    final = seeds[seeds["checkpoint"] == facts.final_checkpoint]
    cross = paper.reward_models_means()
    rows = [{"group": "ts-iq", "measure": m, "mean": float(cross[m])} for m in paper.MEASURES]
    rows += [{"group": f"{r}-{r}", "measure": m, "mean": float(final.loc[final["reward"] == r, m].mean())}
             for r in final["reward"].unique() for m in paper.MEASURES]
    lengths = paper.PYDIAL3_LENGTHS
    return {
        "performance": paper.performance(),
        "convergence": paper.convergence_means(),
        "seeds": seeds,
        "reward_models": pd.DataFrame(rows),
        "lengths": {f"PyDial3 handcrafted ({lengths.handcrafted:g})": lengths.handcrafted,
                    f"PyDial3 GP at 2k–4k ({lengths.gp_low:g}–{lengths.gp_high:g})": (lengths.gp_low, lengths.gp_high)},
    }


_FINDING_TABLES = ("convergence", "seeds", "reward_models", "correlation", "first_turn", "text_at_matching_actions",
                   "contexts")


def draw_figures(directory: str | os.PathLike[str], tables: Mapping[str, pd.DataFrame],
                 record: RunRecord | Mapping[str, Any] | None = None, *, progress: bool = False) -> dict[str, Path]:
    """Draw the report's figures of ``tables`` into ``DIR/figures`` (:func:`simscore.plots.make_figures` with the
    record's bootstrap settings and the paper's values); figure name → path, for :func:`write_report`. The
    folder's record of what made its report is dropped first (the figures are the report's)."""
    from simscore.plots import make_figures

    folder = ExperimentFolder(directory)
    record = record if isinstance(record, RunRecord) else RunRecord.from_meta(record)
    remaking(folder, "report")
    return make_figures(folder.figures, tables, bootstrap=record.bootstrap_settings,
                        references=paper_references(), progress=progress)


def write_report(
    directory: str | os.PathLike[str],
    tables: Mapping[str, pd.DataFrame],
    record: RunRecord | Mapping[str, Any] | None = None,
    *,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
    progress: bool = False,
) -> Path:
    """Write ``DIR/report.md`` atomically; draws the figures into ``DIR/figures`` unless given.

    Parameters
    ----------
    directory : path-like
        The experiment's output folder.
    tables, record
        As for :func:`build_report`.
    figures : mapping figure name → path, optional
        Already drawn figures; default: :func:`simscore.plots.make_figures` into
        ``DIR/figures`` with the record's bootstrap settings.
    progress : bool
        Show how many figures are drawn (:mod:`simscore.progress`).

    Returns
    -------
    Path
        The report file.
    """
    folder = ExperimentFolder(directory)
    record = record if isinstance(record, RunRecord) else RunRecord.from_meta(record)
    remaking(folder, "report")
    if figures is None:
        figures = draw_figures(folder.root, tables, record, progress=progress)
    else:
        missing = [str(p) for p in figures.values() if not Path(p).is_file()]
        if missing:
            raise FileNotFoundError(f"figures: no such file(s): {', '.join(missing)}")
    text = build_report(tables, record, figures=figures, base=folder.root)
    path = folder.report
    atomic_write_text(path, text)
    return path


def rebuild_report(directory: str | os.PathLike[str], *, progress: bool = False) -> Path:
    """Redraw the figures and rewrite ``report.md`` from the tables saved in ``directory``
    (``progress``: show how many figures are drawn).

    Returns
    -------
    Path
        The report file.
    """
    folder = ExperimentFolder(directory)
    if folder.root.is_dir() and not folder.tables_index.exists():
        raise FileFormatError(folder.tables_index, "missing: this folder holds no complete set of tables (the run "
                              "that writes them has not finished); run the experiment (again)")
    saved = load_tables(folder.root)
    try:
        record = RunRecord.from_meta(saved.meta)
    except ValueError as exc:
        raise FileFormatError(folder.tables_index, str(exc)) from None
    return write_report(folder.root, saved.tables, record, progress=progress)
