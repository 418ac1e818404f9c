"""Experiment configuration: TOML files, defaults and errors that name what is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simscore.app.experiment import (
    DEMO_CONFIG,
    ExperimentConfig,
    ExperimentError,
    load_config,
)
from simscore.app.findings import Thresholds

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_paper_config_is_the_papers_setup():
    config = load_config(EXAMPLES / "paper.toml")
    assert config.rewards == ("ts", "iq") and config.seeds == (1, 2, 3)
    assert config.dialogues == 40000 and config.every == 1000 and config.eval_dialogues == 100
    assert config.collect_dialogues == 10 and config.generated
    assert len(config.measures) == 8
    assert [run for _, _, run in config.runs] == ["ts-1", "ts-2", "ts-3", "iq-1", "iq-2", "iq-3"]
    assert ExperimentConfig.from_dict(config.to_dict()) == config


def test_demo_config_round_trips():
    assert ExperimentConfig.from_dict(DEMO_CONFIG.to_dict()) == DEMO_CONFIG


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[training]\nrewards = ['ts', 'xx']\n", "unknown reward model 'xx'"),
        ("[training]\nseeds = [1, 1]\n", "distinct seeds"),
        ("[training]\ndialogues = 1000\nevery = 300\n", "multiple of every"),
        ("[training]\ndialogues = 0\n", "dialogues must be a positive integer"),
        ("[trainig]\nseeds = [1]\n", "unknown entry 'trainig'"),
        ("[training]\nseed = [1]\n", "unknown option 'seed' in [training]"),
        ("[scoring]\nmeasures = ['tmr', 'blue4']\n", "did you mean 'bleu4'"),
        ("[training\n", "invalid TOML"),
    ],
)
def test_bad_configs(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises((ExperimentError, KeyError), match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(path)


def test_missing_config_file(tmp_path):
    with pytest.raises(ExperimentError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_findings_thresholds_in_the_configuration(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("[findings]\nconverged_tmr = 0.95\nfirst_turn_share = 1\n")
    config = load_config(path)
    assert config.findings == Thresholds(converged_tmr=0.95)
    assert config.to_dict()["findings"]["converged_tmr"] == 0.95
    assert config.to_dict()["findings"]["weak_r"] == 0.5  # every threshold is written out
    assert ExperimentConfig.from_dict(config.to_dict()) == config
    assert DEMO_CONFIG.findings == Thresholds()
    assert ExperimentConfig(findings={"weak_r": 0.4}).findings.weak_r == 0.4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[findings]\nconverged = 0.9\n", "[findings]: unknown threshold 'converged'; did you mean 'converged_tmr'?"),
        ("[findings]\nlate_fraction = 2.0\n", "[findings]: findings threshold late_fraction must be in (0, 1]"),
        ("[findings]\nweak_r = 'low'\n", "weak_r must be a finite number, got 'low'"),
        ("findings = 3\n", "[findings] must be a table"),
    ],
)
def test_bad_findings_sections(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ExperimentError, match=re.escape(message)):
        load_config(path)
