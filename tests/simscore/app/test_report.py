"""simscore.app.report.document: the Markdown report of an experiment beside the paper's numbers, and rebuilding it."""

from __future__ import annotations

import argparse
import re
import tomllib

import pandas as pd
import pytest

from policies.gpsarsa.training import TrainingConfig
from simscore import analysis as an
from simscore import plots
from simscore.analysis import tables_io
from simscore.app.cli import report as cli_report
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.report import document as report
from simscore.app.report import paper
from simscore.app.report.findings import Thresholds
from tests.simscore.synthetic import META, PERFORMANCE_RECORDS, synthetic_tables
from tests.simscore.synthetic import col_only as _small


@pytest.fixture(scope="module")
def tables():
    return synthetic_tables()


def _section(text: str, heading: str) -> str:
    """The text of one ``## heading`` section."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _as_paper_checkpoints(tables):
    """The synthetic tables with checkpoints 1, 2, 3 relabelled as the paper's 10k, 20k, 30k."""
    out = {}
    for name, table in tables.items():
        table = table.copy()
        for column in ("checkpoint", "previous"):
            if column in table.columns:
                table[column] = table[column] * 10000
        out[name] = table
    return out


def test_report_sections_and_numbers(tables):
    text = report.build_report(tables, META)
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == [
        "Findings",
        "Set-up beside the paper's",
        "Absolute performance (paper's Table 1)",
        "Convergence (paper's Table 2)",
        "Seeds (paper's Table 4 and Figure 3)",
        "Reward models (paper's Table 3 and Figure 5)",
        "Per turn (paper's Figure 4)",
        "First system turn per pair (paper's Figure 4)",
        "Correlation between measures (paper's Figure 6)",
        "Chance level",
        "Measure signatures",
        "Reproduce",
    ]
    assert text.startswith("# Synthetic experiment\n")
    assert "Context sets: col, gen. Measures: TMR, DMR, CER, CMR." in text
    # convergence: mean over the two ts runs on col at k = 2 (0.8 and 0.9) and k = 3 (0.9 and 1.0)
    assert "| col | ts | 2 | 2 | 0.850 | 0.950 | 0.925 | 0.925 |" in text
    assert "| col | ts | 3 | 2 | 0.950 | 0.950 | 0.950 | 0.958 |" in text
    assert "| col | ts | ts-1 | 3 | 2 | 2 | 2 |" in text  # first checkpoint with TMR ≥ 0.85 from then on
    # seeds: one pair per reward; ts TMR falls 0.5 → 0.3 → 0.2
    assert "| col | ts | 3 | 1 | 0.200 | 0.800 | 0.650 | 0.633 |" in text
    # reward models: four ts-iq pairs, mean with its interval over pairs
    assert re.search(r"\| col \| 3 \| ts-iq \| 4 \| 0\.438 \[0\.\d{3}, 0\.\d{3}\] \|", text)
    assert "| seed pairs (col) | 1 | 24 | 0.667 |" in text
    # first turn of each pair at k = 3 (c00..c03): ts-1 1111 vs ts-2 2200
    assert "| col | 3 | ts-ts | ts-1 | ts-2 | 1 | 4 | 0.000 | 0.500 |" in text
    assert "| CER | 0.781 | 0.760 | 1.000 | 0.973 |" in text
    assert "| col | chance (random vs trained) | 1 | 0.000 | 0.000 | 0.000 | 0.000 |" in text
    assert "| ts | 3 | 2 × 100 | 0.930 [" in text  # performance: mean success rate of 0.95 and 0.91
    assert "| cer | `cer\\|levenshtein:x\\|clip:no` |" in text
    assert "![Convergence curves]" not in text  # no figures were given


def test_findings_summary_table(tables):
    text = report.build_report(tables, META)
    findings = _section(text, "Findings")
    assert "| finding | scope | verdict | ours | paper | threshold |" in findings
    # threshold from meta, shown once per finding
    assert ("| (1) convergence | col/ts | holds | late TMR 0.950 | late TMR 0.986 | late TMR ≥ 0.85 (partly ≥ 0.8) |"
            in findings)
    assert "| (1) convergence | gen/ts | holds | late TMR 0.850 | — | (as above) |" in findings
    assert ("| (3) seeds differ | col/ts | holds | seed-pair TMR 0.200, convergence TMR 0.950 | "
            "seed-pair TMR 0.639, convergence TMR 0.986 |") in findings
    assert "| (5) reward models ≈ seeds | col/ts-iq | does not hold | cross TMR 0.438, within TMR 0.225 |" in findings
    assert "| (6) first system turn | col/ts | partly | share TMR 0 or 1 1.000, share DMR = 1 0.000, pairs 1 |" in findings
    assert "| (9) CER ≈ USE cos † | — | not assessed: the correlation table lacks CER or USE cosine | — | — | — |" in findings
    # each row states the rule that graded it: "(as above)" only for the same rule
    assert ("| (7) CER ≈ CMR | non-matching pairs | does not hold | r 1.000, r (all pairs) 0.973 | r 0.466 | r on all "
            "pairs − r on the non-matching pairs ≥ 0.2 (partly: ≥ 0.100, half the threshold's margin) |") in findings
    assert len(re.findall(r"^\| \(\d+\) ", findings, flags=re.M)) == 27
    assert "simscore's own choice, not the paper's" in findings and "This run changed `converged_tmr = 0.85`." in findings
    details = [line for line in findings.splitlines() if line.startswith("- **(")]
    assert len(details) == 11
    assert details[0] == ("- **(1) Holds.** Policies converge: the checkpoint-to-checkpoint TMR of late checkpoints is "
                          "high (Table 2). Late checkpoints 3 (every scope).")
    assert "Not assessed: no text_at_matching_actions table." in details[9] and "† Built in" in details[9]
    default = report.build_report(tables, {k: v for k, v in META.items() if k != "findings"})
    assert "late TMR ≥ 0.9 (partly ≥ 0.8)" in default and "This run uses the defaults." in default
    old = report.build_report(tables, {**META, "findings": {"converged_tmr": 0.85, "stable_window": 3}})
    assert "Unknown thresholds in the saved settings, ignored: stable_window." in old


def test_paper_rows_at_the_final_checkpoint_when_checkpoints_differ(tables):
    text = report.build_report(tables, META)
    convergence = _section(text, "Convergence (paper's Table 2)")
    rows = [line for line in convergence.splitlines() if line.startswith("| col")]
    # the paper's row follows our last col/ts row: Table 2 at 40k, mean of its 3 trials
    assert rows[:3] == [
        "| col | ts | 2 | 2 | 0.850 | 0.950 | 0.925 | 0.925 |",
        "| col | ts | 3 | 2 | 0.950 | 0.950 | 0.950 | 0.958 |",
        "| col (paper) | ts | 40000 | 3 | 0.985 | 0.991 | 0.989 | 0.989 |",
    ]
    assert "at its final checkpoint (40,000 dialogues), since this run's checkpoints are not the paper's" in convergence
    assert not re.search(r"^\| gen \(paper\)", text, flags=re.M)  # the paper has no C_gen numbers
    seeds = _section(text, "Seeds (paper's Table 4 and Figure 3)")
    # Table 4 at 40k: ts pairs 0.508, 0.896, 0.536
    assert "| col (paper) | iq | 40000 | 3 | 0.459 | 0.839 | 0.648 | 0.556 |" in seeds
    reward_models = _section(text, "Reward models (paper's Table 3 and Figure 5)")
    lines = reward_models.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("| col | 3 | ts-iq |")))
    assert lines[at + 1] == "| col (paper) | 40000 | ts-iq | 9 | 0.407 | 0.797 | 0.608 | 0.506 |"  # Table 3
    assert "| col (paper) | 40000 | ts-ts | 3 | 0.647 | 0.873 | 0.762 | 0.703 |" in reward_models  # Table 4 at 40k


def test_paper_rows_beside_the_same_checkpoint(tables):
    text = report.build_report(_as_paper_checkpoints(tables), META)
    convergence = _section(text, "Convergence (paper's Table 2)")
    rows = [line for line in convergence.splitlines() if line.startswith("| col")]
    # Table 2 has 10k..40k: paper rows follow ours at 20k and 30k (mean of 3 trials)
    assert rows[:4] == [
        "| col | ts | 20000 | 2 | 0.850 | 0.950 | 0.925 | 0.925 |",
        "| col (paper) | ts | 20000 | 3 | 0.982 | 0.987 | 0.985 | 0.983 |",
        "| col | ts | 30000 | 2 | 0.950 | 0.950 | 0.950 | 0.958 |",
        "| col (paper) | ts | 30000 | 3 | 0.988 | 0.993 | 0.991 | 0.991 |",
    ]
    assert "the paper's Table 2 (mean over its 3 trials, on C_col) at the same checkpoint." in convergence
    seeds = _section(text, "Seeds (paper's Table 4 and Figure 3)")
    # Table 4, iq at 10k: 0.371, 0.320, 0.376
    assert "| col (paper) | iq | 10000 | 3 | 0.356 | 0.786 | 0.571 | 0.463 |" in seeds
    performance = _section(text, "Absolute performance (paper's Table 1)")
    assert re.search(r"\| ts \| 10000 \| 2 × 100 \| .* \| 1\.00 \| 3\.81 \| 4\.32 \|", performance)
    assert "Rows at the checkpoints of the paper's Table 1" in performance


def test_performance_beside_the_paper_and_saturation(tables):
    text = report.build_report(tables, META)
    performance = _section(text, "Absolute performance (paper's Table 1)")
    assert "| run means: length | paper success | paper IQ | paper length |" in performance
    # checkpoints 1..3: the paper has none of them, so every row of this run, without paper numbers
    assert "| ts | 1 | 2 × 100 | 0.480 [0.412, 0.549] | 2.52 [2.38, 2.66] | 9.20 [8.92, 9.48] | 9.00–9.40 | — | — | — |" \
        in performance
    assert "Every checkpoint of this run." in performance and "nearest" not in performance
    assert "saturated" not in performance  # success 0.43 to 0.93
    # the length beside PyDial3's own Environment 1 and the note on the paper's 4.2-4.8
    assert "PyDial3's own Environment 1 gives 5.9 turns for its handcrafted policy, 6.2–6.5 for GP-SARSA" in performance
    assert "The paper's 4.2–4.8 turns cannot be this count for Environment 1" in performance
    records = [{**r, "success_rate": 1.0 if r["reward"] == "ts" else r["success_rate"]} for r in PERFORMANCE_RECORDS]
    saturated = report.build_report({"performance": an.performance_table(records)}, {})
    assert ("**Task success is saturated** for ts: at least 0.99 at every checkpoint, so it cannot tell these runs "
            "apart") in saturated
    all_saturated = [{**r, "success_rate": 0.995} for r in PERFORMANCE_RECORDS]
    assert "**Task success is saturated** for ts, iq:" in report.build_report(
        {"performance": an.performance_table(all_saturated)})


def test_setup_beside_the_paper(tables):
    config = ExperimentConfig(seeds=(1, 2), training=TrainingConfig(dialogues=60, every=30, eval_dialogues=10),
                              collect_dialogues=2)
    text = report.build_report(tables, {**META, "config": config.to_dict()})
    setup = _section(text, "Set-up beside the paper's")
    assert "| training dialogues per run | 60 | 40,000 |" in setup
    assert "| runs (seeds) per reward model | 2 | 3 |" in setup
    assert "| C_col contexts per reward model | ts 20, iq 20 | ts 183, iq 178 |" in setup
    # 20 contexts from 2 runs x 2 dialogues; the paper 183 / 30 and 178 / 30
    assert "| C_col contexts per collected dialogue | ts 5.0, iq 5.0 | ts 6.1, iq 5.9 |" in setup
    assert "| C_gen contexts | 20 | 1,296 |" in setup
    assert ("differs from the paper's set-up in: training dialogues per run (60 vs 40,000); a checkpoint every "
            "(dialogues) (30 vs 1,000); runs (seeds) per reward model (2 vs 3); evaluation dialogues per checkpoint "
            "(10 vs 100); C_col: dialogues collected per run (2 vs 10); C_gen contexts (20 vs 1,296).") in setup
    performance = _section(text, "Absolute performance (paper's Table 1)")
    assert "This run evaluates each checkpoint on 10 dialogues per run." in performance
    convergence = _section(text, "Convergence (paper's Table 2)")
    assert "The paper compares k with k − 1,000; this run with k − 30." in convergence


def test_text_at_matching_actions_beside_the_paper(tables):
    rows = [
        {"context_set": cs, "analysis": analysis, "reward": reward, "measure": m, "mean": v, "ci_low": v,
         "ci_high": v, "count": n}
        for cs, analysis, reward, n, values in (
            ("col", "convergence", "ts", 40, (0.9, 0.8, 0.5, 0.85)),
            ("col", "seeds", "ts", 30, (0.7, 0.75, 0.3, 0.7)),
            ("gen", "convergence", "ts", 0, (float("nan"),) * 4),
        )
        for m, v in zip(("use_cos", "use_ang", "bleu4", "bertscore"), values)
    ]
    text_table = an.typed_table(pd.DataFrame(rows, columns=list(an.SCHEMAS["text_at_matching_actions"])))
    text = report.build_report({**tables, "text_at_matching_actions": text_table}, META)
    section = _section(text, "Text measures where the actions match (paper's Table 2)")
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    assert lines[0] == "| context_set | analysis | reward | pairs | USE cos | USE ang | BLEU-4 | BERTScore |"
    # the paper's Table 2 row with TMR 1.000 (ts, trial 0, 40k) follows our col convergence rows
    assert lines[1:5] == [
        "| col | convergence | ts | 40 | 0.900 | 0.800 | 0.500 | 0.850 |",
        "| col (paper) | convergence | ts | — | 0.891 | 0.871 | 0.493 | 0.918 |",
        "| col | seeds | ts | 30 | 0.700 | 0.750 | 0.300 | 0.700 |",
        "| gen | convergence | ts | 0 | — | — | — | — |",
    ]
    assert "the paper's Table 2 rows with TMR 1.000 (1 checkpoint pair;" in section
    findings = _section(text, "Findings")
    assert ("| (10) text < 1 at same action † | col/ts | holds | use_cos 0.900, use_ang 0.800, bleu4 0.500, "
            "bertscore 0.850 | use_cos 0.891, use_ang 0.871, bleu4 0.493, bertscore 0.918 |") in findings
    assert "| (10) text < 1 at same action † | gen/ts | not assessed: no pair with matching actions |" in findings
    assert "† Built in: the template NLG words an act" in findings


def test_correlation_beside_the_paper(tables):
    text = report.build_report(tables, META)
    # 560 pooled pairs, 358 with the same action: 152 + 136 convergence (col, gen), 35 + 35 seed pairs
    assert ("Beside the paper: overall TMR of the pooled pairs 0.639 (paper 0.633); CER–CMR r on the non-matching "
            "pairs 1.000 (paper 0.466).") in text


def test_reproduce_section(tables, tmp_path):
    config = ExperimentConfig(seeds=(1, 2), training=TrainingConfig(dialogues=60, every=30),
                              findings=Thresholds(converged_tmr=0.85)).to_dict()
    meta = {**META, "config": config, "command": "simscore demo --out out", "date": "2026-11-23"}
    (tmp_path / "run.log").write_text("log\n")
    text = report.build_report(tables, meta, base=tmp_path)
    section = _section(text, "Reproduce")
    assert "```sh\nsimscore demo --out out\n```" in section
    assert "Scored on 2026-11-23 (UTC) with simscore 0.1.0. Log of the run: [run.log](run.log)." in section
    toml = re.search(r"```toml\n(.*?)\n```", section, flags=re.S).group(1)
    assert tomllib.loads(toml) == config  # the configuration as `simscore run` reads it
    assert ExperimentConfig.from_dict(tomllib.loads(toml)).findings.converged_tmr == 0.85
    assert "| numpy | 2.4.6 |" in section
    assert '"converged_tmr": 0.85' in section and '"simscore_report_format": 1' in section
    assert "```bibtex\n" + paper.BIBTEX + "\n```" in section
    assert "pages     = {311--322}" in section and paper.CITATION in section

    from_python = _section(report.build_report(tables, {**meta, "command": None}), "Reproduce")
    assert "started from Python" in from_python and "simscore run experiment.toml --out DIR" in from_python
    assert "[run.log]" not in from_python  # no folder given
    unrecorded = _section(report.build_report(tables, {}), "Reproduce")
    assert "The command that produced these tables was not recorded." in unrecorded
    assert "Scored on" not in unrecorded and "```toml" not in unrecorded


def test_report_skips_absent_tables(tables):
    text = report.build_report({"convergence": tables["convergence"], "seeds": tables["seeds"].iloc[:0]}, {})
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["Findings", "Set-up beside the paper's", "Convergence (paper's Table 2)", "Measure signatures",
                        "Reproduce"]
    assert "| (7) CER ≈ CMR | — | not assessed: no correlation table | — | — | — |" in text
    assert "No signatures were recorded." in text
    empty = report.build_report({}, {})
    assert "## Set-up beside the paper's" not in empty and "## Findings" in empty


def _one_reward(tables, reward="ts"):
    """The synthetic tables of a run of one reward model: its rows only, no reward_models table."""
    out = {}
    for name, table in tables.items():
        if name == "reward_models":
            continue
        if "reward" in table.columns:
            table = table[table["reward"] == reward]
        elif "reward_a" in table.columns:
            table = table[(table["reward_a"] == reward) & (table["reward_b"] == reward)]
        out[name] = table
    return out


def test_a_run_of_one_reward_model_says_what_it_cannot_assess(tables):
    text = report.build_report(_one_reward(tables), {})
    assert _section(text, "Reward models (paper's Table 3 and Figure 5)") == (
        "## Reward models (paper's Table 3 and Figure 5)\n\nNot assessed: one reward model in this run (ts). Comparing "
        "reward models needs runs of two (`rewards = [\"ts\", \"iq\"]` under `[training]`).\n")
    assert "| (5) reward models ≈ seeds | — | not assessed: one reward model in this run (ts) | — | — | — |" in text
    assert "Not assessed: one reward model in this run (ts)." in _section(text, "Findings")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert "Seeds (paper's Table 4 and Figure 3)" in headings and "Chance level" in headings
    assert "not assessed" not in text.split("| (1) convergence |")[1].split("\n")[0]  # the rest is assessed
    # two reward models whose comparison is missing: the section is left out, the finding names the table
    two = {name: table for name, table in tables.items() if name != "reward_models"}
    text = report.build_report(two, {})
    assert "## Reward models" not in text
    assert "| (5) reward models ≈ seeds | — | not assessed: no reward_models table with TMR | — | — | — |" in text


@pytest.mark.slow
def test_rebuild_from_saved_tables_gives_the_same_report(tables, tmp_path):
    small = _small(tables)
    meta = {**META, "command": "simscore demo --out x", "date": "2026-11-23"}
    tables_io.save_tables(tmp_path, small, meta)
    (tmp_path / "run.log").write_text("log\n")
    expected_figures = {name: tmp_path / "figures" / f"{name}.png" for name, source in plots.FIGURE_NAMES.items()
                        if source in small}
    expected = report.build_report(small, meta, figures=expected_figures, base=tmp_path)

    parser = argparse.ArgumentParser()
    cli_report.add_subcommands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", str(tmp_path)])
    assert args.func(args) == 0  # `simscore report DIR`

    text = (tmp_path / "report.md").read_text()
    assert text == expected
    links = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)
    # one figure per section, then the appendix grids of every measure
    # (only for the tables there: these have no held-out flow_strata)
    assert links == [f"figures/{name}.png" for name in report.TABLE_NAMES
                     if name in plots.FIGURE_NAMES and plots.FIGURE_NAMES[name] in small] + [
        "figures/convergence_all.png", "figures/seeds_all.png"]
    for link in links:
        assert (tmp_path / link).read_bytes()[:4] == b"\x89PNG"
    for table in re.findall(r"\[(\w+)\]\((\w+)\.csv\)", text):
        assert (tmp_path / f"{table[1]}.csv").is_file()
    assert "[run.log](run.log)" in text and "Scored on 2026-11-23 (UTC)" in text
    assert not [p for p in tmp_path.rglob("*.tmp")]

    # written from memory with the same figures: identical text
    again = report.write_report(tmp_path, small, meta, figures=expected_figures)
    assert again.read_text() == expected


def test_write_report_checks_given_figures(tables, tmp_path):
    with pytest.raises(FileNotFoundError, match="convergence.png"):
        report.write_report(tmp_path, tables, META, figures={"convergence": tmp_path / "convergence.png"})
    assert not (tmp_path / "report.md").exists()


def test_sections_are_data_one_per_table_in_report_order():
    from simscore.app.report.sections import SECTIONS

    assert report.TABLE_NAMES == tuple(s.table for s in SECTIONS)
    assert all(s.table in an.SCHEMAS for s in SECTIONS)
    # a section with a figure names one make_figures draws (under the table's name), and only those
    assert {s.table for s in SECTIONS if s.figure} == {n for n in plots.FIGURE_NAMES if not n.endswith("_all")}
