"""Evaluation of GP-SARSA checkpoints: one record per checkpoint, and the ``evaluation.csv`` of a run.

As in PyDial, whose evaluation dialogues continue a run's one random stream after its
training dialogues, every checkpoint of every run meets fresh simulated users: the evaluation
after ``k`` training dialogues of the run seeded ``s`` draws its users from the run's stream
:func:`evaluation_stream` ``(eval_seed, k)`` (:func:`policies.sim.simulator.dialogue_seed`),
reproducible from the run seed and the checkpoint and disjoint from the training users.
(Until run format 2, every run and checkpoint met the same 100 users, a sample on which every
policy was about 0.45 turns shorter than on fresh ones.)

:class:`EvaluationRecord` holds task success rate, interaction quality, length and reward with
their 95% intervals over the evaluation users (success: Wilson score; means: Student-t) and
the standard deviations over dialogues that let an analysis combine runs. A training run
(:mod:`policies.gpsarsa.training`) writes one row per checkpoint to ``evaluation.csv``;
:func:`read_evaluation` reads it back.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from policies.gpsarsa.policy import GPSarsaPolicy
from policies.sim.simulation import SimulationResult, SimulationSettings, run_dialogues
from simscore.errors import FileFormatError, excerpt
from simscore.io import atomic_open, prepare_output, read_csv_rows, read_text
from simscore.stats import t_interval, wilson_interval

__all__ = [
    "EVAL_SEED",
    "EVALUATION_COLUMNS",
    "EVALUATION_FILE",
    "TIMING_COLUMNS",
    "EvaluationRecord",
    "evaluation_stream",
    "evaluate_policy",
    "read_evaluation",
    "write_evaluation",
]

#: The file of a run's evaluation rows, in its run folder (the one place its name is spelt).
EVALUATION_FILE = "evaluation.csv"

#: Default key of the evaluation streams (:func:`evaluation_stream`).
EVAL_SEED = 20200701


def evaluation_stream(eval_seed: int, dialogues: int) -> tuple[int, int]:
    """The user stream of a run's evaluation after ``dialogues`` training dialogues.

    The run's seed with this stream (:func:`policies.sim.simulation.run_dialogues`) gives
    fresh users for every checkpoint of every run, the same ones on every replay.

    >>> evaluation_stream(EVAL_SEED, 1000)
    (20200701, 1000)
    """
    return (eval_seed, dialogues)


@dataclass(frozen=True)
class EvaluationRecord:
    """One row of ``evaluation.csv``: the policy's evaluation at one checkpoint.

    Attributes
    ----------
    checkpoint : str
        Checkpoint file stem (``ckpt-001000``).
    dialogues : int
        Training dialogues seen.
    eval_dialogues : int
        Evaluation dialogues.
    success_rate, success_low, success_high : float
        Task success rate and its 95% Wilson interval.
    avg_iq, avg_iq_low, avg_iq_high, avg_iq_sd : float
        Mean interaction quality (1-5), its 95% t interval and the standard deviation over
        dialogues (ddof 1; NaN for one dialogue).
    avg_length, avg_length_low, avg_length_high, avg_length_sd : float
        Mean dialogue length in turns as PyDial counts them (the system's decisions: the
        greeting not counted, the decision after the user's bye counted), its 95% t interval
        and the standard deviation over dialogues. PyDial3's own Environment 1 gives 5.9 for
        its handcrafted policy and 6.2–6.5 for GP-SARSA after 2k–4k dialogues in this count;
        the paper's 4.2–4.8 cannot be it (its C_col holds 6.1 decisions per dialogue).
    avg_reward : float
        Mean reward of the run's reward model.
    dictionary_size : int
        GP dictionary points.
    train_seconds : float
        Wall-clock seconds spent in training dialogues from the start of the run up to this
        checkpoint (evaluations and file writing excluded; NaN if unknown).
    eval_seconds : float
        Wall-clock seconds of this evaluation.
    """

    checkpoint: str
    dialogues: int
    eval_dialogues: int
    success_rate: float
    success_low: float
    success_high: float
    avg_iq: float
    avg_iq_low: float
    avg_iq_high: float
    avg_iq_sd: float
    avg_length: float
    avg_length_low: float
    avg_length_high: float
    avg_length_sd: float
    avg_reward: float
    dictionary_size: int
    train_seconds: float
    eval_seconds: float

    def to_row(self) -> dict[str, Any]:
        """The CSV row (floats written with ``repr``, so they read back exactly)."""
        return {name: getattr(self, name) for name in EVALUATION_COLUMNS}

    def without_timings(self) -> EvaluationRecord:
        """The record with the timing columns set to NaN (for comparing runs)."""
        return dataclasses.replace(self, train_seconds=math.nan, eval_seconds=math.nan)

    def same_values(self, other: EvaluationRecord) -> bool:
        """Equal in every column except the timings (NaN equals NaN)."""
        for name in EVALUATION_COLUMNS:
            if name in TIMING_COLUMNS:
                continue
            a, b = getattr(self, name), getattr(other, name)
            if a != b and not (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
                return False
        return True


#: Columns of ``evaluation.csv``, in order.
EVALUATION_COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(EvaluationRecord))
#: Columns that measure time (they differ between otherwise identical runs).
TIMING_COLUMNS: tuple[str, ...] = ("train_seconds", "eval_seconds")
_INT_COLUMNS = frozenset(("dialogues", "eval_dialogues", "dictionary_size"))


def _record(
    policy: GPSarsaPolicy, result: SimulationResult, *, checkpoint: str, train_seconds: float, eval_seconds: float
) -> EvaluationRecord:
    n = len(result)
    low, high = wilson_interval(int(result.success.sum()), n)
    iq, iq_low, iq_high = t_interval(result.iq)
    turns = result.turns.astype(np.float64)
    length, length_low, length_high = t_interval(turns)
    reward = result.reward_ts if policy.reward == "ts" else result.reward_iq
    return EvaluationRecord(
        checkpoint=checkpoint,
        dialogues=policy.dialogues_trained,
        eval_dialogues=n,
        success_rate=result.success_rate,
        success_low=low,
        success_high=high,
        avg_iq=iq,
        avg_iq_low=iq_low,
        avg_iq_high=iq_high,
        avg_iq_sd=_sd(result.iq),
        avg_length=length,
        avg_length_low=length_low,
        avg_length_high=length_high,
        avg_length_sd=_sd(turns),
        avg_reward=float(reward.mean()),
        dictionary_size=policy.learner.dictionary_size,
        train_seconds=float(train_seconds),
        eval_seconds=float(eval_seconds),
    )


def _sd(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) if values.size > 1 else math.nan


def evaluate_policy(
    policy: GPSarsaPolicy,
    dialogues: int,
    *,
    seed: int = EVAL_SEED,
    stream: tuple[int, ...] = (),
    settings: SimulationSettings | None = None,
    scale: float = 0.0,
    checkpoint: str = "",
    train_seconds: float = math.nan,
) -> EvaluationRecord:
    """Evaluate ``policy`` on ``dialogues`` simulated dialogues (it does not learn).

    Parameters
    ----------
    policy : GPSarsaPolicy
        Not learning; its mode is restored afterwards.
    dialogues : int
    seed : int
        Seed of the evaluation dialogues (a training run passes its own seed).
    stream : tuple of int
        Which user stream of ``seed`` (a training run passes :func:`evaluation_stream`).
    settings : SimulationSettings, optional
        The simulated world; default: the policy's domain with the default user.
    scale : float
        Posterior sampling scale (PyDial evaluates with 1); 0 (default) is greedy.
    checkpoint : str
        Label of the record.
    train_seconds : float
        Training time so far, recorded as it is.

    Examples
    --------
    >>> record = evaluate_policy(GPSarsaPolicy(seed=0), 20, seed=1)
    >>> record.eval_dialogues, record.dialogues, 0.0 <= record.success_low <= record.success_high <= 1.0
    (20, 0, True)
    """
    if settings is None:
        settings = SimulationSettings(policy.domain)
    was_training, was_scale = policy.training, policy.sampling_scale
    policy.training, policy.sampling_scale = False, float(scale)
    try:
        start = time.perf_counter()
        result = run_dialogues(policy, dialogues, seed=seed, stream=stream, settings=settings)
        seconds = time.perf_counter() - start
    finally:
        policy.training, policy.sampling_scale = was_training, was_scale
    return _record(policy, result, checkpoint=checkpoint, train_seconds=train_seconds, eval_seconds=seconds)


def _format_value(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def write_evaluation(path: str | os.PathLike[str], records: Sequence[EvaluationRecord], *, overwrite: bool = False) -> None:
    """Write a run's ``evaluation.csv`` (columns :data:`EVALUATION_COLUMNS`), atomically.

    An existing file is replaced only with ``overwrite=True`` (:func:`train` rewrites its own
    table after every checkpoint).
    """
    prepare_output(path, overwrite=overwrite)
    with atomic_open(path, "w") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(EVALUATION_COLUMNS)
        for record in records:
            writer.writerow([_format_value(getattr(record, name)) for name in EVALUATION_COLUMNS])


def read_evaluation(run_dir: str | os.PathLike[str]) -> tuple[EvaluationRecord, ...]:
    """The rows of a run's ``evaluation.csv`` (empty if the file does not exist yet).

    Raises
    ------
    simscore.errors.FileFormatError
        Wrong columns or a bad value (naming the line).
    """
    path = Path(run_dir) / EVALUATION_FILE
    if not path.exists():
        return ()
    rows = read_csv_rows(io.StringIO(read_text(path), newline=""), path, expected="a training run's evaluation.csv")
    return _evaluation_records(path, rows)


def _evaluation_records(path: Path, rows: Iterator[tuple[int, list[str]]]) -> tuple[EvaluationRecord, ...]:
    _, header = next(rows, (1, None))
    if header is None or tuple(header) != EVALUATION_COLUMNS:
        raise FileFormatError(path, f"expected the columns {', '.join(EVALUATION_COLUMNS)}, got {excerpt(header)}", line=1)
    records = []
    for line, row in rows:
        if not row:
            continue
        if len(row) != len(EVALUATION_COLUMNS):
            raise FileFormatError(path, f"expected {len(EVALUATION_COLUMNS)} values, got {len(row)}", line=line)
        values: dict[str, Any] = {}
        for name, text_value in zip(EVALUATION_COLUMNS, row):
            try:
                if name == "checkpoint":
                    values[name] = text_value
                elif name in _INT_COLUMNS:
                    values[name] = int(text_value)
                else:
                    values[name] = float(text_value)
            except ValueError:
                raise FileFormatError(path, f"column {name!r}: bad value {excerpt(text_value, 60)}", line=line) from None
        records.append(EvaluationRecord(**values))
    return tuple(records)
