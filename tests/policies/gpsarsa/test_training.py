"""Tests of policies.gpsarsa.training and the ``simscore train`` command: runs, determinism, resume."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from policies.gpsarsa.training import (
    EVAL_SEED,
    EVALUATION_COLUMNS,
    RUN_FORMAT,
    Checkpoint,
    EvaluationRecord,
    TrainingConfig,
    TrainingConfigMismatchError,
    checkpoint_schedule,
    evaluation_stream,
    is_trained,
    list_checkpoints,
    load_checkpoint,
    read_evaluation,
    train,
    trained_with,
)
from policies.handcrafted import HandcraftedPolicy, RandomPolicy
from policies.sim.simulation import run_dialogues
from policies.sim.usersim import UserSimulatorConfig
from simscore.errors import CheckpointError, ConfigError, FileFormatError

SMALL = TrainingConfig(reward="ts", seed=3, dialogues=60, every=20, eval_dialogues=20)


def _files(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "checkpoints").iterdir())}


def _same_rows(a, b) -> bool:
    return len(a) == len(b) and all(x.same_values(y) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of SMALL."""
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    train(SMALL, run_dir, progress=False)
    return run_dir


# ----------------------------------------------------------------------------- config


def test_config_defaults_round_trip_and_schedule() -> None:
    config = TrainingConfig(reward="iq", seed=1)
    assert (config.dialogues, config.every, config.eval_dialogues, config.eval_seed) == (40000, 1000, 700, EVAL_SEED)
    assert (config.gamma, config.sigma, config.nu, config.scale, config.max_turns) == (1.0, 5.0, 0.001, 3.0, 25)
    data = json.loads(json.dumps(config.to_dict()))
    assert TrainingConfig.from_dict(data) == config
    custom = TrainingConfig(reward="ts", seed=0, sigma=2, user=UserSimulatorConfig(patience=(2, 3)))
    assert custom.sigma == 2.0 and isinstance(custom.sigma, float)
    assert TrainingConfig.from_dict(json.loads(json.dumps(custom.to_dict()))) == custom
    assert checkpoint_schedule(SMALL) == (20, 40, 60)
    assert checkpoint_schedule(TrainingConfig(reward="ts", seed=0, dialogues=50, every=20)) == (20, 40, 50)
    assert checkpoint_schedule(TrainingConfig(reward="ts", seed=0, dialogues=5, every=20)) == (5,)
    gp = config.gp_config()
    assert (gp.feature_dim, gp.n_actions, gp.sigma) == (302, 16, 5.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"reward": "bleu"}, ValueError, r"reward must be one of 'ts', 'iq', got 'bleu'"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
        ({"seed": 1.0}, TypeError, "seed must be an int"),
        ({"dialogues": 0}, ValueError, "dialogues must be >= 1"),
        ({"every": 0}, ValueError, "every must be >= 1"),
        ({"eval_dialogues": 0}, ValueError, "eval_dialogues must be >= 1"),
        ({"sigma": 0}, ValueError, "sigma must be > 0"),
        ({"scale": 0}, ValueError, "scale must be > 0 for training"),
        ({"max_turns": 1}, ValueError, "max_turns must be >= 2"),
        ({"user": {}}, TypeError, "user must be a UserSimulatorConfig"),
        ({"dialogues": 10**20}, ValueError, "dialogues must be <= 100,000,000"),
        ({"dialogues": 10**7, "every": 1}, ValueError, "more than 100,000 checkpoints"),
        ({"eval_scale": float("nan")}, ValueError, "eval_scale must be a finite number"),
        ({"reward_assignment": "spread"}, ValueError, "reward_assignment must be one of"),
    ],
)
def test_bad_config(kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        TrainingConfig(**{"reward": "ts", "seed": 0, **kwargs})


def test_config_from_dict_is_strict() -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'epochs'"):
        TrainingConfig.from_dict({"reward": "ts", "seed": 0, "epochs": 3})
    with pytest.raises(ConfigError, match=r"\[user\] greeting: expected a list, got str 'yes'"):
        TrainingConfig.from_dict({"user": {"greeting": "yes"}}, source="x.toml")
    with pytest.raises(ConfigError, match=r"x.toml: dialogues: expected an integer, got float 1000000000.0"):
        TrainingConfig.from_dict({"dialogues": 1e9}, source="x.toml")
    config = TrainingConfig.from_dict({"user": {"greeting": [0.5, 0.5]}, "iq": {"per_repeat": 2}})
    assert config.user.greeting == (0.5, 0.5) and config.iq.per_repeat == 2


# ----------------------------------------------------------------------------- a run


def test_run_directory_layout_and_table(reference: Path) -> None:
    assert [c.dialogues for c in list_checkpoints(reference)] == [20, 40, 60]
    assert set(_files(reference)) == {f"ckpt-0000{n}.{ext}" for n in (20, 40, 60) for ext in ("json", "npz")}
    info = json.loads((reference / "run.json").read_text())
    assert info["format"] == RUN_FORMAT and info["status"] == "complete" and info["dialogues_done"] == 60
    assert TrainingConfig.from_dict(info["config"]) == SMALL
    assert info["checkpoints"] == [20, 40, 60] and info["domain"]["feature_size"] == 302
    assert set(info["versions"]) == {"simscore", "numpy", "python"}
    with open(reference / "evaluation.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == EVALUATION_COLUMNS
    assert [r["checkpoint"] for r in rows] == ["ckpt-000020", "ckpt-000040", "ckpt-000060"]
    records = read_evaluation(reference)
    for row, record in zip(rows, records):
        assert record.eval_dialogues == 20 and float(row["success_rate"]) == record.success_rate
        assert record.success_low <= record.success_rate <= record.success_high
        assert record.avg_iq_low <= record.avg_iq <= record.avg_iq_high
        assert record.avg_length_low <= record.avg_length <= record.avg_length_high
        assert record.avg_reward == pytest.approx(20.0 * record.success_rate - record.avg_length)
        assert record.train_seconds > 0 and record.eval_seconds > 0
    assert records[0].train_seconds < records[1].train_seconds < records[2].train_seconds  # cumulative
    policy = load_checkpoint(reference)
    assert policy.dialogues_trained == 60 and policy.training is False
    assert [r.dictionary_size for r in records][-1] == policy.learner.dictionary_size
    # the table's numbers: the checkpoint on the run's evaluation users of that checkpoint,
    # sampling with scale 1 (PyDial)
    policy.sampling_scale = SMALL.eval_scale
    result = run_dialogues(policy, 20, seed=SMALL.seed, stream=evaluation_stream(EVAL_SEED, 60))
    assert result.success_rate == records[-1].success_rate and result.mean_turns == records[-1].avg_length
    assert records[-1].avg_length_sd == pytest.approx(float(np.std(result.turns, ddof=1)))
    assert records[-1].avg_iq_sd == pytest.approx(float(np.std(result.iq, ddof=1)))
    assert result.dialogue_ids[0] == f"s{SMALL.seed}-{EVAL_SEED}-60-000000"


def test_every_checkpoint_and_run_meets_fresh_users() -> None:
    # The users of a checkpoint's evaluation depend on the run seed and the checkpoint only,
    # and no evaluation stream repeats a training user (spawn keys of other lengths).
    from policies.sim.simulator import dialogue_seed

    keys = {dialogue_seed(seed, 0, evaluation_stream(EVAL_SEED, k)).generate_state(4).tobytes()
            for seed in (1, 2) for k in (1000, 2000)}
    training = {dialogue_seed(seed, i).generate_state(4).tobytes() for seed in (1, 2) for i in range(3000)}
    assert len(keys) == 4 and not keys & training
    users = [run_dialogues(HandcraftedPolicy(), 30, seed=1, stream=evaluation_stream(EVAL_SEED, k)).turns
             for k in (1000, 2000)]
    assert not np.array_equal(users[0], users[1])


def test_same_seed_gives_bit_identical_checkpoints(reference: Path, tmp_path: Path) -> None:
    train(SMALL, tmp_path / "again", progress=False)
    assert _files(tmp_path / "again") == _files(reference)
    assert _same_rows(read_evaluation(tmp_path / "again"), read_evaluation(reference))
    train(TrainingConfig(**{**SMALL.__dict__, "seed": 4}), tmp_path / "other", progress=False)
    a = np.load(tmp_path / "other" / "checkpoints" / "ckpt-000060.npz")
    b = np.load(reference / "checkpoints" / "ckpt-000060.npz")
    assert a["alpha"].shape != b["alpha"].shape or not np.array_equal(a["alpha"], b["alpha"])


def test_resume_equals_uninterrupted(reference: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = train(TrainingConfig(**{**SMALL.__dict__, "dialogues": 40}), run_dir, progress=False)
    assert first.resumed_from == 0 and [c.dialogues for c in first.checkpoints] == [20, 40]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    second = train(SMALL, run_dir, progress=False)
    assert second.resumed_from == 40 and second.policy.dialogues_trained == 60
    assert _files(run_dir) == _files(reference)
    assert _same_rows(second.evaluation, read_evaluation(reference))
    assert read_evaluation(run_dir) == second.evaluation
    # a complete run: nothing left to do
    third = train(SMALL, run_dir, progress=False)
    assert third.resumed_from == 60 and _same_rows(third.evaluation, second.evaluation)


def test_resume_after_a_torn_checkpoint(reference: Path, tmp_path: Path) -> None:
    """Interrupted between the .npz and the .json of the last checkpoint, or before its row."""
    torn = tmp_path / "torn"
    shutil.copytree(reference, torn)
    (torn / "checkpoints" / "ckpt-000060.json").unlink()  # .npz written, .json not yet
    (torn / "checkpoints" / "ckpt-000060.npz").write_bytes(b"half a file")
    rows = (torn / "evaluation.csv").read_text().splitlines()
    (torn / "evaluation.csv").write_text("\n".join(rows[:-1]) + "\n")
    assert [c.dialogues for c in list_checkpoints(torn)] == [20, 40]
    result = train(SMALL, torn, progress=False)
    assert result.resumed_from == 40
    assert _files(torn) == _files(reference)
    assert _same_rows(read_evaluation(torn), read_evaluation(reference))

    no_row = tmp_path / "no_row"
    shutil.copytree(reference, no_row)
    (no_row / "evaluation.csv").write_text("\n".join(rows[:-1]) + "\n")  # checkpoint 60 has no row
    result = train(SMALL, no_row, progress=False)
    assert result.resumed_from == 60 and math.isnan(result.evaluation[-1].train_seconds)
    assert _same_rows(read_evaluation(no_row), read_evaluation(reference))


def test_keyboard_interrupt_marks_the_run_and_resume_completes_it(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import policies.gpsarsa.training as training

    real = training.run_dialogues

    def interrupted(policy, n, **kwargs):
        if kwargs.get("start") == 20 and kwargs["seed"] == SMALL.seed:
            real(policy, n // 2, **kwargs)  # half of the chunk has been learned when the user hits Ctrl-C
            raise KeyboardInterrupt
        return real(policy, n, **kwargs)

    monkeypatch.setattr(training, "run_dialogues", interrupted)
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        train(SMALL, run_dir, progress=False)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted" and info["dialogues_done"] == 20
    monkeypatch.setattr(training, "run_dialogues", real)
    result = train(SMALL, run_dir, progress=False)
    assert result.resumed_from == 20
    assert _files(run_dir) == _files(reference)
    assert _same_rows(read_evaluation(run_dir), read_evaluation(reference))


def test_is_trained_says_when_train_would_change_nothing(reference: Path, tmp_path: Path) -> None:
    assert is_trained(SMALL, reference)
    assert not is_trained(TrainingConfig(**{**SMALL.__dict__, "dialogues": 80}), reference)  # more to train
    assert not is_trained(TrainingConfig(**{**SMALL.__dict__, "sigma": 4.0}), reference)  # train() refuses it
    assert not is_trained(SMALL, tmp_path / "nothing")
    no_row = tmp_path / "no_row"
    shutil.copytree(reference, no_row)
    rows = (no_row / "evaluation.csv").read_text().splitlines()
    (no_row / "evaluation.csv").write_text("\n".join(rows[:-1]) + "\n")  # checkpoint 60 has no row yet
    assert not is_trained(SMALL, no_row)
    running = tmp_path / "running"
    shutil.copytree(reference, running)
    info = json.loads((running / "run.json").read_text())
    (running / "run.json").write_text(json.dumps({**info, "status": "running"}))  # killed before "complete"
    assert not is_trained(SMALL, running)
    train(SMALL, running, progress=False)
    assert is_trained(SMALL, running)


def test_config_mismatch_on_resume_is_a_clear_error(reference: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(reference, run_dir)
    other = TrainingConfig(**{**SMALL.__dict__, "reward": "iq", "sigma": 4.0})
    with pytest.raises(TrainingConfigMismatchError, match=r"reward: run has 'ts', requested 'iq'; sigma: run has 5.0"):
        train(other, run_dir, progress=False)
    with pytest.raises(CheckpointError, match="already holds 60 training dialogues, more than config.dialogues=40"):
        train(TrainingConfig(**{**SMALL.__dict__, "dialogues": 40}), run_dir, progress=False)
    assert _files(run_dir) == _files(reference)  # nothing was touched


def test_checkpoints_without_run_json(reference: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(reference, run_dir)
    (run_dir / "run.json").unlink()
    with pytest.raises(CheckpointError, match="holds checkpoints but no run.json"):
        train(SMALL, run_dir, progress=False)
    (run_dir / "run.json").write_text('{"format": "something else"}')
    with pytest.raises(CheckpointError, match="format is 'something else'"):
        train(SMALL, run_dir, progress=False)
    info = json.loads((reference / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**info, "version": 1}))
    with pytest.raises(CheckpointError, match=r"unsupported run format version 1 .*train a new run into a new directory"):
        train(SMALL, run_dir, progress=False)


def test_trained_with_reads_the_run_configuration(reference: Path, tmp_path: Path) -> None:
    assert trained_with(reference) == SMALL
    assert trained_with(tmp_path) is None  # no run.json: not a run
    (tmp_path / "run.json").write_text('{"format": "something else"}')
    with pytest.raises(CheckpointError, match="format is 'something else'"):
        trained_with(tmp_path)
    info = json.loads((reference / "run.json").read_text())
    info["config"]["gamma"] = 7.0
    (tmp_path / "run.json").write_text(json.dumps(info))
    with pytest.raises(ConfigError, match="gamma"):
        trained_with(tmp_path)


def test_load_checkpoint_and_list(reference: Path, tmp_path: Path) -> None:
    assert list_checkpoints(tmp_path) == ()
    first = list_checkpoints(reference)[0]
    assert first == Checkpoint(20, reference / "checkpoints" / "ckpt-000020")
    policy = load_checkpoint(reference, 20, training=True)
    assert policy.dialogues_trained == 20 and policy.training is True and policy.name == "gpsarsa-ts-seed3-20"
    with pytest.raises(CheckpointError, match=r"no checkpoint after 30 dialogues \(available: 20, 40, 60\)"):
        load_checkpoint(reference, 30)
    with pytest.raises(CheckpointError, match="no checkpoints found"):
        load_checkpoint(tmp_path)


def test_read_evaluation_errors(tmp_path: Path) -> None:
    assert read_evaluation(tmp_path) == ()
    (tmp_path / "evaluation.csv").write_text("a,b\n1,2\n")
    with pytest.raises(FileFormatError, match="line 1"):
        read_evaluation(tmp_path)
    row = ["ckpt-000001", "1", "x"] + ["0.5"] * (len(EVALUATION_COLUMNS) - 3)
    (tmp_path / "evaluation.csv").write_text(",".join(EVALUATION_COLUMNS) + "\n" + ",".join(row) + "\n")
    with pytest.raises(FileFormatError, match="line 2.*column 'eval_dialogues': bad value 'x'"):
        read_evaluation(tmp_path)


def test_record_comparison_ignores_only_timings() -> None:
    values = dict.fromkeys(EVALUATION_COLUMNS, 1.0)
    values.update(checkpoint="ckpt-000001", dialogues=1, eval_dialogues=1, dictionary_size=1, avg_iq_low=math.nan)
    a = EvaluationRecord(**values)
    assert a.same_values(EvaluationRecord(**{**values, "train_seconds": 9.0, "eval_seconds": 3.0}))
    assert not a.same_values(EvaluationRecord(**{**values, "avg_reward": 2.0}))
    assert math.isnan(a.without_timings().train_seconds)


# ----------------------------------------------------------------------------- learning


def test_short_training_clearly_beats_the_random_policy(tmp_path: Path) -> None:
    # Measured: seed 0, 300 dialogues, 200 evaluation dialogues (scale 1): success 0.90 at 6.4
    # turns; the random policy on the same users: 0.66 success at 17 turns.
    config = TrainingConfig(reward="ts", seed=0, dialogues=300, every=300, eval_dialogues=200)
    (record,) = train(config, tmp_path / "run", progress=False).evaluation
    chance = run_dialogues(RandomPolicy(seed=0), 200, seed=EVAL_SEED)
    assert chance.success_rate < 0.75 and chance.mean_turns > 12
    assert record.success_rate >= 0.85 and record.success_low > chance.success_rate
    assert record.avg_length < 8.0 and record.avg_iq > chance.mean_iq + 1.5
