"""simscore.app.report.paper: the paper's published numbers, shipped with the package."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from simscore.app.report import paper
from simscore.errors import FileFormatError

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("load", "rows", "columns"),
    [
        (paper.performance, 18, ["checkpoint", "reward", "success_rate", "avg_iq", "avg_length"]),
        (paper.convergence, 24, ["reward", "trial", "checkpoint", *paper.MEASURES]),
        (paper.reward_models, 9, ["ts_trial", "iq_trial", *paper.MEASURES]),
        (paper.seeds, 24, ["reward", "trial_a", "trial_b", "checkpoint", *paper.MEASURES]),
    ],
)
def test_tables_are_typed(load, rows, columns):
    table = load()
    assert len(table) == rows and list(table.columns) == columns
    for column in columns:
        if column in ("checkpoint", "trial", "trial_a", "trial_b", "ts_trial", "iq_trial"):
            assert table[column].dtype == np.int64, column
        elif column == "reward":
            assert set(table[column]) == {"ts", "iq"}
        else:
            assert table[column].dtype == np.float64, column
    table.loc[:, columns[-1]] = -1.0  # a copy: the next call is unchanged
    assert (load()[columns[-1]] != -1.0).all()


def test_table_values():
    t1 = paper.performance()
    assert t1["checkpoint"].tolist()[:3] == [1000, 5000, 10000]
    row = t1[(t1["reward"] == "iq") & (t1["checkpoint"] == 20000)].iloc[0]
    assert (row["success_rate"], row["avg_iq"], row["avg_length"]) == (0.97, 3.73, 4.62)
    t2 = paper.convergence()
    assert t2[(t2["reward"] == "ts") & (t2["trial"] == 2) & (t2["checkpoint"] == 10000)]["tmr"].item() == 0.885
    t3 = paper.reward_models()
    assert t3[(t3["ts_trial"] == 1) & (t3["iq_trial"] == 2)]["bertscore"].item() == 0.825
    t4 = paper.seeds()
    assert t4[(t4["reward"] == "iq") & (t4["trial_a"] == 1) & (t4["checkpoint"] == 40000)]["tmr"].item() == 0.68


def test_means_over_trials():
    conv = paper.convergence_means()
    assert list(conv.columns[:3]) == ["reward", "checkpoint", "n_trials"]
    ts40 = conv[(conv["reward"] == "ts") & (conv["checkpoint"] == 40000)].iloc[0]
    assert ts40["n_trials"] == 3
    assert ts40["tmr"] == pytest.approx((1.000 + 0.978 + 0.978) / 3)
    assert ts40["bleu4"] == pytest.approx((0.493 + 0.532 + 0.525) / 3)
    seeds = paper.seeds_means()
    iq10 = seeds[(seeds["reward"] == "iq") & (seeds["checkpoint"] == 10000)].iloc[0]
    assert iq10["n_pairs"] == 3 and iq10["dmr"] == pytest.approx((0.792 + 0.764 + 0.803) / 3)
    rm = paper.reward_models_means()
    assert list(rm.index) == list(paper.MEASURES)
    assert rm["tmr"] == pytest.approx((0.645 + 0.310 + 0.288 + 0.338 + 0.485 + 0.380 + 0.615 + 0.307 + 0.296) / 9)


def test_facts():
    facts = paper.facts()
    assert facts.best_seed_tmr == {"ts": 0.896, "iq": 0.68}  # the text's numbers, found in Table 4
    assert (facts.trials, facts.dialogues, facts.every, facts.eval_dialogues) == (3, 40000, 1000, 100)
    assert facts.col_contexts == {"ts": 183, "iq": 178} and facts.col_dialogues == 30
    assert facts.contexts_per_dialogue("ts") == pytest.approx(6.1)
    assert facts.contexts_per_dialogue("iq") == pytest.approx(178 / 30)
    assert (facts.correlation_tmr, facts.nonmatching_cer_cmr_r) == (0.633, 0.466)
    # one row of Table 2 has TMR 1.000 (ts, trial 0, 40k): the text's "≈ 0.87, ≈ 0.5, ≈ 0.92"
    assert facts.text_at_tmr_one_rows == 1
    assert facts.text_at_tmr_one == {"use_ang": 0.871, "use_cos": 0.891, "bleu4": 0.493, "bertscore": 0.918}
    with pytest.raises(KeyError, match="reward 'xx': the paper has C_col sizes for ts, iq"):
        facts.contexts_per_dialogue("xx")
    # derived from the shipped tables: Table 1's range and checkpoints, the pairs behind Tables 3 and 4
    assert facts.success_range == (0.94, 1.0) and facts.first_turn_share == 1.0
    assert facts.performance_checkpoints[:3] == (1000, 5000, 10000) and facts.performance_checkpoints[-1] == 40000
    assert (facts.seed_pairs, facts.cross_pairs) == (3, 9)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("trials = 3\n", ""), r"missing \['trials'\]"),
        (lambda t: "extra = 1\n" + t, r"unknown \['extra'\]"),
        (lambda t: t.replace("every = 1000", 'every = "1000"'), "every must be int, got '1000'"),
        (lambda t: t.replace("trials = 3", "trials = true"), "trials must be int, got True"),
        (lambda t: t.replace("ts = 183", "ts = 183.5"), "col_contexts must map rewards to integers"),
        (lambda t: t.replace("[col_contexts]", "[col_contexts"), "invalid TOML"),
    ],
)
def test_stated_facts_file_is_checked(edit, message):
    text = paper._read("facts.toml")
    assert paper._stated(text)["nonmatching_cer_cmr_r"] == 0.466
    with pytest.raises(FileFormatError, match=f"simscore/app/data/paper/facts.toml: .*{message}"):
        paper._stated(edit(text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reward,trial,checkpoint\nts,0,1\n", "expected columns reward, trial, dialogues, tmr"),
        ("ts_trial,iq_trial,tmr,dmr,cer,cmr,use_ang,use_cos,bleu4,bertscore\n", "holds no rows"),
        (
            "ts_trial,iq_trial,tmr,dmr,cer,cmr,use_ang,use_cos,bleu4,bertscore\n0,x,1,1,1,1,1,1,1,1\n",
            "column 'iq_trial' must hold int values",
        ),
        (
            "ts_trial,iq_trial,tmr,dmr,cer,cmr,use_ang,use_cos,bleu4,bertscore\n0,0,1,1,1,1,1,nan,1,1\n",
            "column 'use_cos' must hold float values",
        ),
    ],
)
def test_broken_files_are_named(text, message):
    name = "table2_convergence.csv" if text.startswith("reward") else "table3_reward_models.csv"
    with pytest.raises(FileFormatError, match=f"simscore/app/data/paper/{name}: .*{message}"):
        paper._parse(name, text)


def test_tables_ship_as_package_data():
    with open(ROOT / "pyproject.toml", "rb") as f:
        entries = tomllib.load(f)["tool"]["setuptools"]["package-data"]["simscore"]
    assert "app/data/paper/*.csv" in entries
    shipped = sorted(p.name for p in (ROOT / "simscore").glob("app/data/paper/*.csv"))
    assert shipped == sorted(paper._FILES)


def test_citation():
    assert "Similarity Scoring for Dialogue Behaviour Comparison" in paper.BIBTEX
    assert "pages     = {311--322}" in paper.BIBTEX and "year      = {2020}" in paper.BIBTEX
    assert paper.CITATION.startswith("Stefan Ultes and Wolfgang Maier. 2020.")
