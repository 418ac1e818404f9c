"""Training runs of the GP-SARSA policy: checkpoints, evaluations, resume.

:func:`train` trains a :class:`~policies.gpsarsa.policy.GPSarsaPolicy` against the simulated
user and writes into one run directory::

    run.json                      format, version, config, domain, package versions, status
    checkpoints/ckpt-001000.json  learner + policy metadata (see GPSarsaPolicy.save)
    checkpoints/ckpt-001000.npz   learner arrays (never pickled)
    ...
    evaluation.csv                one row per checkpoint (see EvaluationRecord)

Every file is written atomically (temporary file, then rename). A checkpoint is written after
every ``every`` training dialogues and after the last one; after each checkpoint the policy is
evaluated on ``eval_dialogues`` simulated dialogues (sampling from the posterior with
``eval_scale``, as PyDial does) and a row is added to ``evaluation.csv``
(:mod:`policies.gpsarsa.evaluation`).

Determinism and resume
----------------------
Training dialogue ``i`` (0-based) draws all its randomness — the simulated user's and the
policy's exploration — from ``numpy.random.SeedSequence(seed, spawn_key=(i,))`` (see
:func:`policies.sim.simulation.run_dialogues`), and the learner learns once per dialogue, in
order. So the learner after ``n`` dialogues does not depend on how the run was split: calling
:func:`train` on a directory that already holds checkpoints checks that the configuration
matches (everything but ``dialogues``, which may grow), loads the last complete checkpoint and
continues; the result is bit-identical to an uninterrupted run (checkpoint files byte for
byte, evaluation rows except the timing columns). A checkpoint is complete when its ``.json``
exists (the ``.npz`` is written first); the evaluation row of a checkpoint interrupted before
its row was written is computed on resume.

Every checkpoint of every run is evaluated on fresh users, as in PyDial: the evaluation after
``k`` training dialogues draws them from the run's own seed and the stream
``(eval_seed, k)`` (:func:`~policies.gpsarsa.evaluation.evaluation_stream`), reproducible
and disjoint from the training users; resuming recomputes a missing evaluation on the same
users.

Statistics
----------
``success_rate`` has a 95% **Wilson score** interval; ``avg_iq`` and ``avg_length`` (turns as
PyDial counts them: the system's decisions, the greeting not counted, the decision after the
user's bye counted) have a 95% **Student-t** interval for the mean
(``mean ± t₀.₉₇₅,ₙ₋₁ · s/√n``; NaN for a single dialogue) and their standard deviation ``s``
over dialogues. These intervals are over the evaluation users of one run and checkpoint.
``avg_reward`` is the mean of the run's reward model (R_TS or R_IQ).

Examples
--------
>>> import tempfile
>>> config = TrainingConfig(reward="ts", seed=0, dialogues=40, every=20, eval_dialogues=10)
>>> with tempfile.TemporaryDirectory() as run_dir:
...     result = train(config, run_dir, progress=False)
...     [c.dialogues for c in list_checkpoints(run_dir)], load_checkpoint(run_dir).dialogues_trained
([20, 40], 40)
>>> [(r.checkpoint, r.dialogues) for r in result.evaluation]
[('ckpt-000020', 20), ('ckpt-000040', 40)]
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import os
import platform
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from contexts.domain import default_domain
from policies.gpsarsa.checkpoint import read_checkpoint_json
from policies.gpsarsa.evaluation import (
    EVAL_SEED,
    EVALUATION_COLUMNS,
    EVALUATION_FILE,
    TIMING_COLUMNS,
    EvaluationRecord,
    evaluate_policy,
    evaluation_stream,
    read_evaluation,
    write_evaluation,
)
from policies.gpsarsa.policy import REWARD_ASSIGNMENTS, REWARDS, GPSarsaPolicy
from policies.gpsarsa.values import GPSarsaConfig
from policies.sim.domain_cache import domain_cache
from policies.sim.features import feature_size
from policies.sim.rewards import RuleBasedIQ
from policies.sim.simulation import MAX_TURNS, SimulationSettings, run_dialogues
from policies.sim.usersim import UserSimulatorConfig
from simscore.checks import check_choice, check_int, check_number, check_seed
from simscore.errors import CheckpointError, TrainingConfigMismatchError
from simscore.io import atomic_write_text, dumps, format_problem
from simscore.io.config import from_mapping, to_mapping

if TYPE_CHECKING:
    from contexts.domain import Domain

__all__ = [
    "EVAL_SEED",
    "MAX_DIALOGUES",
    "MAX_CHECKPOINTS",
    "RUN_FILE",
    "RUN_FORMAT",
    "RUN_VERSION",
    "EVALUATION_COLUMNS",
    "EVALUATION_FILE",
    "TIMING_COLUMNS",
    "TrainingConfig",
    "TrainingConfigMismatchError",
    "Checkpoint",
    "EvaluationRecord",
    "TrainingResult",
    "train",
    "is_trained",
    "evaluate_policy",
    "evaluation_stream",
    "checkpoint_schedule",
    "list_checkpoints",
    "load_checkpoint",
    "read_evaluation",
    "trained_with",
]


#: The run's description in its folder (the one place its name is spelt).
RUN_FILE = "run.json"

RUN_FORMAT = "simscore.training_run"
"""Value of the ``"format"`` field of ``run.json``."""
RUN_VERSION = 2
"""Version of ``run.json`` written (and read) by this module.

Version 2: fresh evaluation users for every checkpoint (:func:`evaluation_stream`), the
standard deviations in ``evaluation.csv``, and the policies of checkpoint version 3 (PyDial's
belief features). Directories of version 1 are refused: train a new run."""

_CHECKPOINT_DIR = "checkpoints"
_CHECKPOINT_RE = re.compile(r"^ckpt-(\d{6,})\.json$")


#: Most training dialogues a run may have (a run of 10⁸ dialogues takes days): larger counts
#: are refused before anything is written.
MAX_DIALOGUES = 100_000_000
#: Most checkpoints a run may write (``dialogues / every``; each is a file pair and an evaluation).
MAX_CHECKPOINTS = 100_000


@dataclass(frozen=True, kw_only=True)
class TrainingConfig:
    """Everything that determines a training run (and its evaluation table).

    Parameters
    ----------
    reward : {"ts", "iq"}, default "ts"
        Reward model: task success R_TS = 20·success − T or interaction quality
        R_IQ = 5·(iq − 1) − T.
    seed : int, default 0
        Training seed: dialogue ``i`` uses ``SeedSequence(seed, spawn_key=(i,))``.
    dialogues : int, default 40000
        Training dialogues in total (at most :data:`MAX_DIALOGUES`). May grow between calls
        on the same run directory.
    every : int, default 1000
        A checkpoint (and an evaluation) every this many dialogues, and after the last.
    eval_dialogues : int, default 700
        Simulated dialogues per evaluation (the paper used 100). 700 give Table 1's length a
        95% interval over the users of three runs of at most about ±0.15 turns at every
        checkpoint (measured on the paper-scale run with 300: ±0.21–0.23 at 1,000 dialogues,
        at most ±0.18 from 2,000 on, the interval shrinking as 1/√n), at about 1.2 ms of CPU per
        dialogue: a third more than a 40,000-dialogue run's training with 100.
    eval_seed : int, default EVAL_SEED
        Key of the evaluation streams: after ``k`` training dialogues the run is evaluated on
        the users of its seed's stream ``(eval_seed, k)``
        (:func:`~policies.gpsarsa.evaluation.evaluation_stream`): fresh users for every
        checkpoint and run, never a training user.
    gamma, sigma, nu, scale : float
        GP-SARSA hyper-parameters (:class:`~policies.gpsarsa.GPSarsaConfig`; defaults 1.0,
        5.0, 0.001 and the exploration scale 3.0).
    eval_scale : float, default 1.0
        Posterior sampling scale of the evaluation dialogues (PyDial evaluates with 1: it
        still samples); 0 evaluates the greedy policy.
    reward_assignment : {"terminal", "per_turn"}
        How a dialogue's return is spread over its decisions when learning
        (:class:`~policies.gpsarsa.policy.GPSarsaPolicy`; ``"terminal"`` is PyDial's).
    max_turns : int, default 25
        Turn limit of a dialogue (the policy's decisions; the greeting is not one).
    user : UserSimulatorConfig
        The simulated user's parameters.
    iq : RuleBasedIQ
        The interaction-quality estimator (its weights).

    Examples
    --------
    >>> c = TrainingConfig(reward="iq", seed=2, dialogues=3000)
    >>> c.every, c.eval_dialogues, c.sigma
    (1000, 700, 5.0)
    >>> TrainingConfig.from_dict(c.to_dict()) == c
    True
    >>> TrainingConfig(reward="success", seed=0)
    Traceback (most recent call last):
    ...
    ValueError: reward must be one of 'ts', 'iq', got 'success'
    >>> TrainingConfig(dialogues=10**20, every=1)
    Traceback (most recent call last):
    ...
    ValueError: dialogues must be <= 100,000,000, got 100,000,000,000,000,000,000
    """

    reward: str = "ts"
    seed: int = 0
    dialogues: int = 40000
    every: int = 1000
    eval_dialogues: int = 700
    eval_seed: int = EVAL_SEED
    gamma: float = 1.0
    sigma: float = 5.0
    nu: float = 0.001
    scale: float = 3.0
    eval_scale: float = 1.0
    reward_assignment: str = "terminal"
    max_turns: int = MAX_TURNS
    user: UserSimulatorConfig = field(default_factory=UserSimulatorConfig)
    iq: RuleBasedIQ = field(default_factory=RuleBasedIQ)

    def __post_init__(self) -> None:
        check_choice("reward", self.reward, tuple(REWARDS))
        checked = {
            "seed": check_seed("seed", self.seed),
            "dialogues": check_int("dialogues", self.dialogues, minimum=1, maximum=MAX_DIALOGUES),
            "every": check_int("every", self.every, minimum=1),
            "eval_dialogues": check_int("eval_dialogues", self.eval_dialogues, minimum=1, maximum=MAX_DIALOGUES),
            "eval_seed": check_seed("eval_seed", self.eval_seed),
            "max_turns": check_int("max_turns", self.max_turns, minimum=2, maximum=1000),
            "eval_scale": check_number("eval_scale", self.eval_scale, minimum=0.0),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        if self.dialogues // self.every > MAX_CHECKPOINTS:
            raise ValueError(
                f"dialogues / every = {self.dialogues:,} / {self.every:,} would write more than "
                f"{MAX_CHECKPOINTS:,} checkpoints; checkpoint less often"
            )
        # GPSarsaConfig validates and normalises the GP parameters.
        gp = GPSarsaConfig(feature_dim=1, gamma=self.gamma, sigma=self.sigma, nu=self.nu, scale=self.scale)
        for name in ("gamma", "sigma", "nu", "scale"):
            object.__setattr__(self, name, getattr(gp, name))
        if gp.scale <= 0.0:
            raise ValueError(f"scale must be > 0 for training (exploration), got {gp.scale!r}")
        check_choice("reward_assignment", self.reward_assignment, REWARD_ASSIGNMENTS)
        if not isinstance(self.user, UserSimulatorConfig):
            raise TypeError(f"user must be a UserSimulatorConfig, got {type(self.user).__name__}")
        if not isinstance(self.iq, RuleBasedIQ):
            raise TypeError(f"iq must be a RuleBasedIQ, got {type(self.iq).__name__}")

    def for_run(self, reward: str, seed: int) -> TrainingConfig:
        """This configuration as the template of an experiment: one run's config."""
        return dataclasses.replace(self, reward=reward, seed=seed)

    def simulation(self, domain: Domain | None = None) -> SimulationSettings:
        """The simulated world of this run (user, IQ estimator, turn limit) in ``domain``."""
        return SimulationSettings(
            domain if domain is not None else default_domain(), self.user, self.iq, self.max_turns
        )

    def gp_config(self, domain: Domain | None = None) -> GPSarsaConfig:
        """The learner configuration for ``domain`` (default: the shipped one)."""
        domain = domain if domain is not None else default_domain()
        return GPSarsaConfig(
            feature_dim=feature_size(domain),
            n_actions=len(domain_cache(domain).space),
            gamma=self.gamma,
            sigma=self.sigma,
            nu=self.nu,
            scale=self.scale,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON/TOML-ready fields (the ``config`` of ``run.json``), nested tables for ``user`` and ``iq``."""
        return to_mapping(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "training config") -> TrainingConfig:
        """Rebuild a config from :meth:`to_dict` output with strict types (:func:`simscore.io.config.from_mapping`).

        Raises
        ------
        simscore.errors.ConfigError
            An unknown key or a value of the wrong type or range, named.
        """
        return from_mapping(cls, data, source=source)


class Checkpoint(NamedTuple):
    """A complete checkpoint of a run: training dialogues seen and the file stem."""

    dialogues: int
    stem: Path


def checkpoint_schedule(config: TrainingConfig) -> tuple[int, ...]:
    """Dialogue counts at which a checkpoint is written: every ``every``, and the last.

    >>> checkpoint_schedule(TrainingConfig(reward="ts", seed=0, dialogues=2500, every=1000))
    (1000, 2000, 2500)
    """
    points = list(range(config.every, config.dialogues + 1, config.every))
    if not points or points[-1] != config.dialogues:
        points.append(config.dialogues)
    return tuple(points)


def _stem(run_dir: Path, dialogues: int) -> Path:
    return run_dir / _CHECKPOINT_DIR / f"ckpt-{dialogues:06d}"


def list_checkpoints(run_dir: str | os.PathLike[str]) -> tuple[Checkpoint, ...]:
    """The complete checkpoints of a run directory (their ``.json`` exists), oldest first.

    Parameters
    ----------
    run_dir : path-like
        A directory written by :func:`train`.
    """
    folder = Path(run_dir) / _CHECKPOINT_DIR
    if not folder.is_dir():
        return ()
    found = []
    for entry in folder.iterdir():
        match = _CHECKPOINT_RE.match(entry.name)
        if match:
            n = int(match.group(1))
            found.append(Checkpoint(n, folder / entry.name[: -len(".json")]))
    return tuple(sorted(found))


def load_checkpoint(
    run_dir: str | os.PathLike[str],
    dialogues: int | None = None,
    *,
    domain: Domain | None = None,
    training: bool = False,
) -> GPSarsaPolicy:
    """Load a run's policy after ``dialogues`` training dialogues (default: the last checkpoint).

    Parameters
    ----------
    run_dir : path-like
        A directory written by :func:`train`.
    dialogues : int, optional
        Which checkpoint; default the last complete one.
    domain : contexts.domain.Domain, optional
        The run's domain (default: the shipped one).
    training : bool
        Return the policy in training mode (default greedy).

    Raises
    ------
    simscore.errors.CheckpointError
        No such checkpoint (the message lists the available ones) or a corrupt one.
    """
    available = list_checkpoints(run_dir)
    if not available:
        raise CheckpointError(f"{run_dir}: no checkpoints found (expected {_CHECKPOINT_DIR}/ckpt-NNNNNN.json)")
    if dialogues is None:
        chosen = available[-1]
    else:
        matches = [c for c in available if c.dialogues == dialogues]
        if not matches:
            listed = ", ".join(str(c.dialogues) for c in available)
            raise CheckpointError(f"{run_dir}: no checkpoint after {dialogues!r} dialogues (available: {listed})")
        chosen = matches[0]
    policy = GPSarsaPolicy.load(chosen.stem, domain=domain, training=training)
    if policy.dialogues_trained != chosen.dialogues:
        raise CheckpointError(
            f"{chosen.stem}.json: the policy has seen {policy.dialogues_trained} dialogues, "
            f"but the file name says {chosen.dialogues}"
        )
    return policy


# ---------------------------------------------------------------------------------------
# Training


@dataclass(frozen=True, eq=False)
class TrainingResult:
    """What :func:`train` did.

    Attributes
    ----------
    run_dir : pathlib.Path
    config : TrainingConfig
    checkpoints : tuple of Checkpoint
        All complete checkpoints of the run, oldest first.
    evaluation : tuple of EvaluationRecord
        All rows of ``evaluation.csv``.
    resumed_from : int
        Training dialogues the run already had when this call started (0 for a new run).
    policy : GPSarsaPolicy
        The policy after the last checkpoint, in greedy mode.
    """

    run_dir: Path
    config: TrainingConfig
    checkpoints: tuple[Checkpoint, ...]
    evaluation: tuple[EvaluationRecord, ...]
    resumed_from: int
    policy: GPSarsaPolicy

    def to_frame(self) -> Any:
        """The evaluation table as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame([r.to_row() for r in self.evaluation], columns=list(EVALUATION_COLUMNS))


def _versions() -> dict[str, str]:
    from simscore import __version__

    return {"simscore": __version__, "numpy": np.__version__, "python": platform.python_version()}


def _domain_info(domain: Domain) -> dict[str, Any]:
    return {
        "name": domain.name,
        "fingerprint": domain_cache(domain).fingerprint,
        "feature_size": feature_size(domain),
        "n_actions": len(domain_cache(domain).space),
    }


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _read_run(path: Path) -> dict[str, Any]:
    info = read_checkpoint_json(path, what="run description")
    problem = format_problem(info, RUN_FORMAT, (RUN_VERSION,), what="run format")
    if problem and isinstance(info, dict) and info.get("format") == RUN_FORMAT and info.get("version") == 1:
        problem += (
            "; version 1 evaluated every checkpoint on the same users and trained with other belief features, "
            "so it cannot be continued: train a new run into a new directory"
        )
    if problem:
        raise CheckpointError(f"{path}: {problem}")
    if not isinstance(info.get("config"), dict):
        raise CheckpointError(f"{path}: field 'config' is missing or not an object")
    return info


def _check_same_run(path: Path, info: Mapping[str, Any], config: TrainingConfig, domain: Domain) -> None:
    stored = dict(info["config"])
    wanted = config.to_dict()
    differences = [
        f"{key}: run has {stored.get(key)!r}, requested {wanted.get(key)!r}"
        for key in sorted(set(stored) | set(wanted))
        if key != "dialogues" and stored.get(key) != wanted.get(key)
    ]
    stored_domain = info.get("domain", {})
    if isinstance(stored_domain, dict) and stored_domain.get("fingerprint") != domain_cache(domain).fingerprint:
        differences.append(
            f"domain: run has {stored_domain.get('name')!r} ({str(stored_domain.get('fingerprint'))[:12]}...), "
            f"requested {domain.name!r} ({domain_cache(domain).fingerprint[:12]}...)"
        )
    if differences:
        raise TrainingConfigMismatchError(
            f"{path.parent} holds a run with another configuration; use a new directory or the same "
            "configuration (only 'dialogues' may change). Differences: " + "; ".join(differences)
        )


def trained_with(run_dir: str | os.PathLike[str]) -> TrainingConfig | None:
    """The training configuration of the run in ``run_dir``, from its ``run.json``; None when it has none.

    Raises
    ------
    CheckpointError
        ``run.json`` is not a run description of this version (naming the file and what is wrong).
    simscore.errors.ConfigError
        Its configuration is not a valid :class:`TrainingConfig`.
    """
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        return None
    return TrainingConfig.from_dict(_read_run(path)["config"], source=str(path))


class _RunFile:
    """``run.json`` of one run directory: what it holds, and its status as training goes on."""

    def __init__(self, run_dir: Path, config: TrainingConfig, domain: Domain) -> None:
        self.run_dir = run_dir
        self.path = run_dir / RUN_FILE
        self.config = config
        self.domain = domain
        self.started = _now()

    def existing_checkpoints(self) -> tuple[Checkpoint, ...]:
        """The checkpoints of a run of this configuration already in the directory (checked)."""
        if self.path.exists():
            info = _read_run(self.path)
            _check_same_run(self.path, info, self.config, self.domain)
            self.started = info.get("started", self.started)
            return list_checkpoints(self.run_dir)
        if list_checkpoints(self.run_dir):
            raise CheckpointError(f"{self.run_dir} holds checkpoints but no run.json; it is not a run directory")
        return ()

    def write(self, status: str, done: int) -> None:
        document = {
            "format": RUN_FORMAT,
            "version": RUN_VERSION,
            "config": self.config.to_dict(),
            "domain": _domain_info(self.domain),
            "versions": _versions(),
            "status": status,
            "dialogues_done": done,
            "checkpoints": [c.dialogues for c in list_checkpoints(self.run_dir)],
            "started": self.started,
            "updated": _now(),
        }
        atomic_write_text(self.path, dumps(document) + "\n")


def _starting_policy(
    config: TrainingConfig, run_dir: Path, domain: Domain, existing: Sequence[Checkpoint]
) -> GPSarsaPolicy:
    """A fresh policy, or the policy of the last complete checkpoint (checked against ``config``)."""
    gp_config = config.gp_config(domain)
    if not existing:
        return GPSarsaPolicy(
            domain, reward=config.reward, seed=config.seed, gp_config=gp_config, training=True,
            reward_assignment=config.reward_assignment,
        )
    last = existing[-1]
    if last.dialogues > config.dialogues:
        raise TrainingConfigMismatchError(
            f"{run_dir} already holds {last.dialogues} training dialogues, more than "
            f"config.dialogues={config.dialogues}"
        )
    policy = load_checkpoint(run_dir, last.dialogues, domain=domain, training=True)
    if (policy.reward, policy.seed, policy.gp_config, policy.reward_assignment) != (
        config.reward, config.seed, gp_config, config.reward_assignment
    ):
        raise TrainingConfigMismatchError(
            f"{run_dir}: the last checkpoint's policy (reward {policy.reward!r}, seed {policy.seed}, "
            f"{policy.gp_config}) does not match the configuration"
        )
    return policy


def is_trained(config: TrainingConfig, out_dir: str | os.PathLike[str], *, domain: Domain | None = None) -> bool:
    """Whether ``out_dir`` holds this run trained to its end, so that :func:`train` would change nothing.

    True when ``run.json`` says ``complete`` for this configuration and domain, the checkpoints
    reach ``config.dialogues`` and ``evaluation.csv`` has a row for each; False otherwise --
    also for a directory :func:`train` would refuse, which it then reports. Reads only the
    run's small files (no checkpoint is loaded), so a caller can skip finished runs cheaply.
    """
    if not isinstance(config, TrainingConfig):
        raise TypeError(f"config must be a TrainingConfig, got {type(config).__name__}")
    run_dir = Path(out_dir)
    path = run_dir / RUN_FILE
    if not path.is_file():
        return False
    try:
        info = _read_run(path)
        _check_same_run(path, info, config, domain if domain is not None else default_domain())
        checkpoints = list_checkpoints(run_dir)
        evaluated = {record.dialogues for record in read_evaluation(run_dir)}
    except (ValueError, OSError):
        return False
    return (info.get("status") == "complete" and bool(checkpoints) and checkpoints[-1].dialogues == config.dialogues
            and all(c.dialogues in evaluated for c in checkpoints))


def train(
    config: TrainingConfig,
    out_dir: str | os.PathLike[str],
    *,
    domain: Domain | None = None,
    progress: bool = True,
) -> TrainingResult:
    """Train (or resume training) a GP-SARSA policy; write checkpoints and evaluations.

    Parameters
    ----------
    config : TrainingConfig
    out_dir : path-like
        The run directory (created if missing). If it already holds this run, training
        continues from its last complete checkpoint (see the module docstring).
    domain : contexts.domain.Domain, optional
        Default: the shipped restaurant domain (recorded by fingerprint in ``run.json``).
    progress : bool
        Show the progress (:mod:`simscore.progress`: a bar on a terminal, else a log line at
        least every minute).

    Returns
    -------
    TrainingResult

    Raises
    ------
    TrainingConfigMismatchError
        ``out_dir`` holds a run with another configuration (every field but ``dialogues``
        must match), or more training dialogues than ``config.dialogues``.
    simscore.errors.CheckpointError
        ``out_dir`` holds checkpoints but no (valid) ``run.json``, or a corrupt checkpoint.
    """
    if not isinstance(config, TrainingConfig):
        raise TypeError(f"config must be a TrainingConfig, got {type(config).__name__}")
    domain = domain if domain is not None else default_domain()
    run_dir = Path(out_dir)
    run_file = _RunFile(run_dir, config, domain)
    existing = run_file.existing_checkpoints()
    policy = _starting_policy(config, run_dir, domain, existing)
    start = policy.dialogues_trained
    settings = config.simulation(domain)

    def evaluate(train_seconds: float) -> EvaluationRecord:
        return evaluate_policy(
            policy, config.eval_dialogues, seed=config.seed,
            stream=evaluation_stream(config.eval_seed, policy.dialogues_trained), settings=settings,
            scale=config.eval_scale,
            checkpoint=_stem(run_dir, policy.dialogues_trained).name, train_seconds=train_seconds,
        )

    # Keep the rows of checkpoints that exist; a checkpoint written just before an
    # interruption may lack its row: evaluate it now (its training time is then unknown).
    eval_path = run_dir / EVALUATION_FILE
    kept = {c.dialogues for c in existing}
    records = [r for r in read_evaluation(run_dir) if r.dialogues in kept and r.dialogues <= start]
    train_seconds = max((r.train_seconds for r in records if math.isfinite(r.train_seconds)), default=0.0)
    if existing and (not records or records[-1].dialogues != start):
        records.append(evaluate(math.nan))
        write_evaluation(eval_path, records, overwrite=True)  # the run's own table, rewritten as it grows
    run_dir.mkdir(parents=True, exist_ok=True)
    run_file.write("running", start)

    targets = [n for n in checkpoint_schedule(config) if n > start]
    from simscore.progress import Progress

    bar = Progress(config.dialogues, f"training gpsarsa {config.reward} seed {config.seed}", unit="dialogues",
                   initial=start, enabled=progress)
    done = start
    try:
        for target in targets:
            policy.training = True
            began = time.perf_counter()
            run_dialogues(
                policy, target - done, seed=config.seed, start=done, settings=settings,
                on_dialogue=lambda _outcome: bar.update(1),
            )
            train_seconds += time.perf_counter() - began
            done = target
            # a checkpoint past the last complete one is debris of an interrupted save of this run
            policy.save(_stem(run_dir, done), overwrite=True)
            record = evaluate(train_seconds)
            records.append(record)
            write_evaluation(eval_path, records, overwrite=True)
            run_file.write("running" if done < config.dialogues else "complete", done)
            bar.set_postfix_str(f"success={record.success_rate:.3f}, dictionary={record.dictionary_size}")
    except KeyboardInterrupt:
        run_file.write("interrupted", done)
        raise
    except BaseException:
        run_file.write("failed", done)
        raise
    finally:
        bar.close()
    if not targets:
        run_file.write("complete", done)
    policy.training = False
    return TrainingResult(
        run_dir=run_dir,
        config=config,
        checkpoints=list_checkpoints(run_dir),
        evaluation=tuple(records),
        resumed_from=start,
        policy=policy,
    )
