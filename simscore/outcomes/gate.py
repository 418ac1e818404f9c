"""A regression gate for continuous integration: does the candidate lose what the baseline won?

Given paired outcomes of a *baseline* and a *candidate* — the same task (or the same context
and simulated user) once served by each — :func:`gate` decides whether the candidate passes:

* the **negative flip rate** (the share of pairs the baseline succeeds on and the candidate
  fails; Yan et al. 2021) must have a one-sided upper 95 % bound at most
  :attr:`GateLimits.max_negative_flip_rate` (default 0.05). The bound is the larger of two:
  the cluster bootstrap's (whole clusters — tasks, dialogues — resampled, so repeated trials
  of one task count once) and the exact binomial (Clopper–Pearson) bound of the count, which
  a bootstrap lacks when no flip is seen: with no negative flip in ``n`` pairs it is
  ``1 - 0.05 ** (1 / n)``, so 59 pairs are needed to show a rate below 0.05 at all;
* where the actions are known (:func:`simscore.outcomes.gate.gate`'s ``changed``), the **behaviour
  change** — the share of pairs where the candidate acts differently from the baseline — may
  exceed the baseline's own churn (``floor_changed``: the baseline against itself, e.g. under
  another seed of its own randomness) by at most :attr:`GateLimits.max_change_above_floor`
  (default 0.10).

:func:`read_outcome_log` reads per-dialogue outcomes of a policy that lives elsewhere (CSV or
JSON Lines with ``task_id``, ``success``, optionally ``reward`` and ``trial``) and
:func:`pair_outcome_logs` pairs two of them by task (and trial). This module knows nothing of
contexts or policies: :mod:`simscore.app.cli.gate` replays policies in the simulated world and
hands the arrays here.

Examples
--------
>>> result = gate([1, 1, 1, 0], [1, 0, 1, 1], clusters=[0, 1, 2, 3],
...               limits=GateLimits(max_negative_flip_rate=0.5), bootstrap=Bootstrap(n_resamples=200))
>>> result.negative_flips, result.positive_flips, result.passed
(1, 1, False)
>>> round(result.negative_flip_upper, 4)  # the exact bound of 1 flip in 4 pairs
0.7514
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from simscore.errors import FileFormatError, OutcomeLogError, excerpt, json_excerpt, json_kind
from simscore.io import decode_line, open_input, parse_json, read_csv_rows, read_head, read_lines, reading
from simscore.io.formats import FILE_FORMATS, detect_format, kind_mismatch
from simscore.io.tau2 import read_tau2, tau2_results
from simscore.stats import Bootstrap, bootstrap_ci_shared
from simscore.stats.sequential import change_upper_bound

__all__ = [
    "OUTCOME_COLUMNS",
    "TAU2_SUCCESS_TOLERANCE",
    "GateLimits",
    "OutcomeLog",
    "PairedOutcomes",
    "GateResult",
    "Interval",
    "read_outcome_log",
    "pair_outcome_logs",
    "exact_upper_bound",
    "pairs_needed",
    "gate",
]

#: The columns (keys) of an outcome log: the first two are required.
OUTCOME_COLUMNS = ("task_id", "success", "reward", "trial")
#: How an outcome log is described where a file of another kind is given.
_EXPECTED = "an outcome log (CSV or JSON Lines with task_id, success[, reward, trial])"
_TRUE = frozenset({"true", "1", "1.0"})
_FALSE = frozenset({"false", "0", "0.0"})
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
_HEAD_BYTES = 4096
#: Tasks named in a message at most.
_SHOWN = 5


@dataclass(frozen=True)
class GateLimits:
    """When a candidate fails the gate.

    Attributes
    ----------
    max_negative_flip_rate : float, default 0.05
        The largest one-sided upper bound of the negative flip rate that passes: a candidate
        passes only where the outcomes show that it loses at most one in twenty of the
        baseline's successes (the bound, not the estimate: a few lucky pairs do not pass).
    max_change_above_floor : float, default 0.10
        The largest behaviour change beyond the baseline's own churn that passes (point
        estimates, shares of pairs). Retraining with another seed changes more (14 % of the
        demo's C_col pairs, 40 % of the paper's C_col): a retrained candidate is gated with this
        raised on purpose (1 turns it off), while a refactoring or a dependency update that
        should change nothing is caught.
    confidence : float, default 0.95
        Coverage of the one-sided bound (and of the two-sided intervals shown beside).
    """

    max_negative_flip_rate: float = 0.05
    max_change_above_floor: float = 0.10
    confidence: float = 0.95

    def __post_init__(self) -> None:
        for name in ("max_negative_flip_rate", "max_change_above_floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a share in [0, 1], got {excerpt(value)}")
        if isinstance(self.confidence, bool) or not 0.5 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0.5, 1), got {excerpt(self.confidence)}")

    def to_dict(self) -> dict[str, float]:
        """The limits, JSON-ready."""
        return {"max_negative_flip_rate": float(self.max_negative_flip_rate),
                "max_change_above_floor": float(self.max_change_above_floor), "confidence": float(self.confidence)}


# ----------------------------------------------------------------------------- outcome logs


@dataclass(frozen=True, eq=False)
class OutcomeLog:
    """Per-dialogue outcomes of one policy, in file order (read-only arrays).

    Attributes
    ----------
    path : str
    tasks : tuple of str
    trials : tuple of int or None
        The trial of each row (None throughout when the log has no trial column).
    success : numpy.ndarray of bool
    reward : numpy.ndarray of float
        NaN throughout when the log has no reward column.
    """

    path: str
    tasks: tuple[str, ...]
    trials: tuple[int | None, ...]
    success: np.ndarray
    reward: np.ndarray

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def has_trials(self) -> bool:
        return bool(self.trials) and self.trials[0] is not None

    @property
    def has_rewards(self) -> bool:
        return bool(len(self.reward)) and not bool(np.isnan(self.reward).all())


def _boolean(value: Any, path: Path, line: int) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise FileFormatError(path, f"success {json_excerpt(value, 60)} is not a boolean (true/false or 1/0)", line=line)


def _reward(value: Any, path: Path, line: int | None) -> float:
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        raise FileFormatError(path, f"reward {json_excerpt(value, 60)} is not a finite number", line=line)
    return number


def _trial(value: Any, path: Path, line: int | None) -> int:
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,18}\s*", value):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**18:
        return value
    raise FileFormatError(path, f"trial {json_excerpt(value, 60)} is not a whole number >= 0", line=line)


def _task(value: Any, path: Path, line: int | None) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise FileFormatError(path, f"task_id {json_excerpt(value, 60)} is not a non-empty string", line=line)
    return value


def _csv_records(path: Path, stream: IO[bytes]) -> Iterator[tuple[int, dict[str, str]]]:
    with io.TextIOWrapper(stream, encoding="utf-8-sig", newline="") as handle:
        try:
            rows = read_csv_rows(handle, path, expected=_EXPECTED)
            header_line, header = next(((n, row) for n, row in rows if row), (1, []))
            if not header:
                raise FileFormatError(path, "empty file, expected a header row with task_id and success", line=1)
            names = [cell.strip() for cell in header]
            repeated = sorted({name for name in names if names.count(name) > 1 and name in OUTCOME_COLUMNS})
            if repeated:
                raise FileFormatError(path, f"column {repeated[0]!r} appears twice in the header", line=header_line)
            missing = [name for name in ("task_id", "success") if name not in names]
            if missing:
                shown = ", ".join(excerpt(name, 40) for name in names[:8]) + (" ..." if len(names) > 8 else "")
                raise FileFormatError(path, f"no column {missing[0]!r} in the header (it has {shown}); an outcome "
                                      "log has task_id and success, reward and trial are optional", line=header_line)
            for number, row in rows:
                if not row:
                    continue
                if len(row) != len(names):
                    raise FileFormatError(path, f"{len(row)} cells, the header has {len(names)}", line=number)
                yield number, {name: cell for name, cell in zip(names, row) if name in OUTCOME_COLUMNS}
        except UnicodeDecodeError as exc:
            raise FileFormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


#: A τ²-bench simulation succeeds when its reward is 1 (τ²-bench's own test: within 1e-6 of it).
TAU2_SUCCESS_TOLERANCE = 1e-6


#: What a τ²-bench results input is, in messages (:mod:`simscore.io.tau2`: its layouts).
_TAU2_EXPECTED = (f"{_EXPECTED} or tau2-bench results (a JSON document with a list 'simulations', a list of "
                  "simulations, or a folder of results.json and simulations/)")


def _tau2_records(path: Path, document: Any = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The outcomes of τ²-bench results (a parsed document; None: the folder ``path``): per
    simulation its task, trial, reward and success."""
    results = read_tau2(path, expected=_TAU2_EXPECTED) if document is None else tau2_results(
        path, document, expected=_TAU2_EXPECTED)
    seen: dict[tuple[str, int], int] = {}
    for position, simulation in enumerate(results.simulations, 1):
        where = results.where(position)
        if not isinstance(simulation, dict):
            raise FileFormatError(path, f"{where}: expected an object, got {json_kind(simulation)}")
        reward_info = simulation.get("reward_info")
        reward = reward_info.get("reward") if isinstance(reward_info, dict) else None
        if reward is None:
            raise FileFormatError(path, f"{where}: no reward_info.reward (the simulation was not evaluated)")
        try:
            key = (_task(simulation.get("task_id"), path, None), _trial(simulation.get("trial", 0), path, None))
            value = _reward(reward, path, None)
        except FileFormatError as exc:
            raise FileFormatError(path, f"{where}: {exc.reason}") from None
        if key in seen:
            raise FileFormatError(path, f"{where}: task {excerpt(key[0], 60)} trial {key[1]} appears twice (simulations "
                                  f"{seen[key]} and {position})")
        seen[key] = position
        success = abs(value - 1.0) <= TAU2_SUCCESS_TOLERANCE
        yield position, {"task_id": key[0], "trial": key[1], "reward": value, "success": success}


def _rest(path: Path, first: str, lines: Iterator[tuple[int, bytes]]) -> str:
    """A JSON document from its first line and the lines after it, at most MAX_FILE_BYTES long."""
    parts, size = [first], len(first)
    for number, raw in lines:
        size += len(raw)
        if size > reading.MAX_FILE_BYTES:
            raise FileFormatError(path, f"larger than {reading.MAX_FILE_BYTES:,} bytes "
                                  "(simscore.io.reading.MAX_FILE_BYTES)", line=number)
        parts.append(decode_line(path, raw, number))
    return "".join(parts)


def _jsonl_records(path: Path, stream: IO[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    with stream:
        lines = read_lines(stream, path)
        for number, raw in lines:
            line = decode_line(path, raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw, number)
            if not line.strip():
                continue
            if number == 1 and (line.strip() == "{" or line.lstrip().startswith("[")):  # a JSON document
                # written with indents (τ²-bench's results), or a list (of τ²-bench's simulations)
                yield from _tau2_records(path, parse_json(_rest(path, line, lines), path, expected=_EXPECTED))
                return
            record = parse_json(line, path, line=number)
            if not isinstance(record, dict):
                raise FileFormatError(path, f"expected a JSON object, got {json_kind(record)}", line=number)
            if number == 1 and "simulations" in record and "task_id" not in record:  # τ²-bench's, on one line
                yield from _tau2_records(path, record)
                return
            found = detect_format(record)
            if found in FILE_FORMATS:
                raise FileFormatError(path, kind_mismatch(found, _EXPECTED), line=number)
            yield number, record


def read_outcome_log(path: str | Path) -> OutcomeLog:
    """Read per-dialogue outcomes: CSV (a header row) or JSON Lines (one object a line).

    Columns (keys): ``task_id`` (a string, or an integer read as its digits) and ``success``
    (``true``/``false`` or ``1``/``0``) are required; ``reward`` (a finite number) and
    ``trial`` (a whole number >= 0, for repeated runs of one task) are optional, and other
    columns are ignored. The format is told by the suffix (``.csv``; ``.jsonl``, ``.ndjson``,
    ``.json``), else by the content (JSON Lines if it starts with ``{``). The file is read once
    from its start (a pipe works).

    τ²-bench results are read as one too, in every layout its runner saves (:mod:`simscore.io.tau2`):
    a document (``{"info", "tasks", "simulations"}``, indented or on one line), a folder
    (``results.json`` and ``simulations/``; ``path`` the folder or its ``results.json``) or a bare
    list of simulations: per simulation its ``task_id``, ``trial`` and ``reward_info.reward``, and
    success where the reward is 1 (within :data:`TAU2_SUCCESS_TOLERANCE`, as τ²-bench counts it).

    Raises
    ------
    FileFormatError
        Naming the file and line: a missing column, a success that is not a boolean, a reward
        that is not a finite number, a trial that is not a whole number, a task (and trial) that
        appears twice, an empty log, a file of another of simscore's kinds.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "baseline.csv"
    >>> _ = path.write_text("task_id,success,reward\\nt1,true,1.0\\nt2,0,0\\n")
    >>> log = read_outcome_log(path)
    >>> log.tasks, log.success.tolist(), log.has_trials
    (('t1', 't2'), [True, False], False)
    """
    p = Path(path)
    if p.is_dir():  # τ²-bench's results folder (results.json and simulations/)
        return _outcome_log(p, _tau2_records(p), jsonl=True)
    head, stream = read_head(open_input(p), _HEAD_BYTES)
    found = detect_format(head.decode("utf-8", "replace"))
    if found in FILE_FORMATS:  # one of simscore's own files (a JSON document, a JSON Lines header): name it
        stream.close()
        raise FileFormatError(p, kind_mismatch(found, _EXPECTED), line=1)
    suffix = p.suffix.lower()
    jsonl = suffix in _JSONL_SUFFIXES or (suffix != ".csv" and head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["))
    return _outcome_log(p, _jsonl_records(p, stream) if jsonl else _csv_records(p, stream), jsonl=jsonl)


def _outcome_log(p: Path, records: Iterator[tuple[int, dict[str, Any]]], *, jsonl: bool) -> OutcomeLog:
    tasks: list[str] = []
    trials: list[int | None] = []
    success: list[bool] = []
    reward: list[float] = []
    seen: dict[tuple[str, int | None], int] = {}
    shape: tuple[bool, bool] | None = None  # (trial, reward) columns present
    for number, record in records:
        missing = [name for name in ("task_id", "success") if name not in record]
        if missing:
            what = "column" if not jsonl else "key"
            raise FileFormatError(p, f"missing {what} {missing[0]!r} (an outcome log has task_id and success; "
                                  "reward and trial are optional)", line=number)
        present = ("trial" in record, "reward" in record)
        if shape is None:
            shape = present
        elif present != shape:
            name, here = ("trial", present[0]) if present[0] != shape[0] else ("reward", present[1])
            raise FileFormatError(p, f"{name!r} is {'present' if here else 'missing'} here but "
                                  f"{'missing' if here else 'present'} in the first record: every record has the "
                                  "same keys", line=number)
        key = (_task(record["task_id"], p, number), _trial(record["trial"], p, number) if present[0] else None)
        if key in seen:
            trial = f" trial {key[1]}" if key[1] is not None else ""
            hint = "" if key[1] is not None else "; repeated runs of a task need a trial column"
            raise FileFormatError(p, f"task {excerpt(key[0], 60)}{trial} appears twice (lines {seen[key]} and "
                                  f"{number}){hint}", line=number)
        seen[key] = number
        tasks.append(key[0])
        trials.append(key[1])
        success.append(_boolean(record["success"], p, number))
        reward.append(_reward(record["reward"], p, number) if present[1] else math.nan)
    if not tasks:
        raise FileFormatError(p, "no outcome in the log (expected rows with task_id and success)")
    return OutcomeLog(str(p), tuple(tasks), tuple(trials), _readonly(success, bool), _readonly(reward, np.float64))


def _readonly(values: Any, dtype: Any) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class PairedOutcomes:
    """Two outcome logs paired by task (and trial), in the baseline's order.

    Attributes
    ----------
    tasks : tuple of str
    trials : tuple of int or None
    baseline_success, candidate_success : numpy.ndarray of bool
    baseline_reward, candidate_reward : numpy.ndarray of float or None
        None unless both logs have rewards.
    clusters : numpy.ndarray of int
        A code per pair naming its task (the trials of one task are resampled together).
    """

    tasks: tuple[str, ...]
    trials: tuple[int | None, ...]
    baseline_success: np.ndarray
    candidate_success: np.ndarray
    baseline_reward: np.ndarray | None
    candidate_reward: np.ndarray | None
    clusters: np.ndarray

    def __len__(self) -> int:
        return len(self.tasks)


def _named(keys: Sequence[tuple[str, int | None]]) -> str:
    shown = [f"{excerpt(task, 40)}{'' if trial is None else f' trial {trial}'}" for task, trial in keys[:_SHOWN]]
    return ", ".join(shown) + (f" and {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")


def pair_outcome_logs(baseline: OutcomeLog, candidate: OutcomeLog) -> PairedOutcomes:
    """Pair two outcome logs by task (and trial).

    Raises
    ------
    OutcomeLogError
        One log has trials and the other not, or tasks (task, trial pairs) appear in one log
        only (how many on each side, and the first few).

    Examples
    --------
    >>> a = OutcomeLog("a", ("t1", "t2"), (None, None), np.array([True, True]), np.array([1.0, 1.0]))
    >>> b = OutcomeLog("b", ("t2", "t1"), (None, None), np.array([False, True]), np.array([0.0, 1.0]))
    >>> paired = pair_outcome_logs(a, b)
    >>> paired.tasks, paired.candidate_success.tolist(), paired.candidate_reward.tolist()
    (('t1', 't2'), [True, False], [1.0, 0.0])
    """
    if baseline.has_trials != candidate.has_trials:
        which = (baseline, candidate)[int(candidate.has_trials)]
        raise OutcomeLogError(f"{which.path} has a trial column and the other log does not: pair repeated runs "
                              "by trial in both, or in neither")
    keys_a = list(zip(baseline.tasks, baseline.trials))
    keys_b = list(zip(candidate.tasks, candidate.trials))
    index_b = {key: i for i, key in enumerate(keys_b)}
    only_a = [key for key in keys_a if key not in index_b]
    known_a = set(keys_a)
    only_b = [key for key in keys_b if key not in known_a]
    if only_a or only_b:
        parts = [f"{len(keys)} only in the {side} ({path}): {_named(keys)}"
                 for keys, side, path in ((only_a, "baseline", baseline.path), (only_b, "candidate", candidate.path))
                 if keys]
        unit = "tasks (with trials)" if baseline.has_trials else "tasks"
        raise OutcomeLogError(f"the logs do not hold the same {unit}: {'; '.join(parts)}")
    order = np.array([index_b[key] for key in keys_a], dtype=np.int64)
    rewards = baseline.has_rewards and candidate.has_rewards
    codes = {task: code for code, task in enumerate(dict.fromkeys(baseline.tasks))}
    return PairedOutcomes(
        tasks=baseline.tasks, trials=baseline.trials, baseline_success=baseline.success,
        candidate_success=_readonly(candidate.success[order], bool),
        baseline_reward=baseline.reward if rewards else None,
        candidate_reward=_readonly(candidate.reward[order], np.float64) if rewards else None,
        clusters=_readonly([codes[task] for task in baseline.tasks], np.int64))


# ----------------------------------------------------------------------------- the decision


def exact_upper_bound(count: int, n: int, confidence: float = 0.95) -> float:
    """The one-sided Clopper–Pearson upper bound of a rate with ``count`` events in ``n`` trials.

    >>> round(exact_upper_bound(0, 59), 4), round(exact_upper_bound(0, 16), 4)  # 1 - 0.05 ** (1 / n)
    (0.0495, 0.1707)
    >>> exact_upper_bound(3, 3)
    1.0
    """
    if n <= 0 or not 0 <= count <= n:
        raise ValueError(f"expected 0 <= count <= n and n >= 1, got count {count} and n {n}")
    return float(change_upper_bound(count, n, 1.0 - confidence))


def pairs_needed(limit: float, confidence: float = 0.95) -> int:
    """The fewest pairs whose exact bound can fall to ``limit`` (none of them a negative flip).

    >>> pairs_needed(0.05), pairs_needed(0.01)
    (59, 299)
    """
    if not 0.0 < limit < 1.0:
        raise ValueError(f"limit must be in (0, 1), got {limit}")
    return math.ceil(math.log(1.0 - confidence) / math.log(1.0 - limit))


@dataclass(frozen=True)
class Interval:
    """A share or mean with its two-sided interval (NaN bounds: undefined)."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float | None]:
        return {"value": _finite(self.value), "low": _finite(self.low), "high": _finite(self.high)}

    def __str__(self) -> str:
        if math.isnan(self.low):
            return f"{self.value:.4f}"
        return f"{self.value:.4f} [{self.low:.4f}, {self.high:.4f}]"


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class GateResult:
    """:func:`gate`'s decision and what it rests on.

    Attributes
    ----------
    passed : bool
    reasons : tuple of str
        Why it failed (empty when it passed).
    pairs, units : int
        Paired outcomes, and the clusters they fall in (the bootstrap's units).
    negative_flips, positive_flips : int
        Pairs the baseline succeeds on and the candidate fails, and the other way round.
    negative_flip_rate, positive_flip_rate : Interval
        Shares of all pairs, with two-sided ``confidence`` intervals (clusters resampled).
    negative_flip_upper : float
        The one-sided upper bound the limit applies to: the larger of
        ``negative_flip_upper_bootstrap`` and ``negative_flip_upper_exact``.
    negative_flip_upper_bootstrap, negative_flip_upper_exact : float
    reward_difference : Interval or None
        Mean candidate − baseline reward (None without rewards).
    behaviour_change, churn_floor, change_above_floor : Interval or None
        Share of pairs where the candidate acts differently, the baseline's own churn, and
        the paired difference of the two (None where actions are not known).
    negative : tuple of int
        The indices of the pairs that are negative flips.
    limits : GateLimits
    bootstrap : Bootstrap
    unit : str
        What one cluster is (``"dialogues"``, ``"tasks"``), for the summary.
    """

    passed: bool
    reasons: tuple[str, ...]
    pairs: int
    units: int
    negative_flips: int
    positive_flips: int
    negative_flip_rate: Interval
    positive_flip_rate: Interval
    negative_flip_upper: float
    negative_flip_upper_bootstrap: float
    negative_flip_upper_exact: float
    reward_difference: Interval | None
    behaviour_change: Interval | None
    churn_floor: Interval | None
    change_above_floor: Interval | None
    negative: tuple[int, ...]
    limits: GateLimits
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    unit: str = "units"

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (NaN is None)."""
        out: dict[str, Any] = {"passed": self.passed, "reasons": list(self.reasons), "pairs": self.pairs,
                               "units": self.units, "unit": self.unit, "negative_flips": self.negative_flips,
                               "positive_flips": self.positive_flips}
        for name in ("negative_flip_rate", "positive_flip_rate"):
            out[name] = getattr(self, name).to_dict()
        out.update(negative_flip_upper=_finite(self.negative_flip_upper),
                   negative_flip_upper_bootstrap=_finite(self.negative_flip_upper_bootstrap),
                   negative_flip_upper_exact=self.negative_flip_upper_exact)
        for name in ("reward_difference", "behaviour_change", "churn_floor", "change_above_floor"):
            value = getattr(self, name)
            out[name] = None if value is None else value.to_dict()
        out.update(limits=self.limits.to_dict(), bootstrap=self.bootstrap.to_dict())
        return out

    def format(self) -> str:
        """The summary lines (no list of regressions: the caller knows what a pair is)."""
        limits, level = self.limits, f"{self.limits.confidence:.0%}"
        verdict = "PASS" if self.negative_flip_upper <= limits.max_negative_flip_rate else "FAIL"
        lines = [f"negative flips    {self.negative_flips} of {self.pairs} pairs ({self.units} {self.unit}): rate "
                 f"{self.negative_flip_rate}; upper {level} bound {self.negative_flip_upper:.4f} "
                 f"(limit {limits.max_negative_flip_rate:g})  {verdict}",
                 f"positive flips    {self.positive_flips}: rate {self.positive_flip_rate}"]
        if self.reward_difference is not None:
            lines.append(f"reward difference {self.reward_difference} (candidate - baseline)")
        if self.behaviour_change is not None and self.churn_floor is not None and self.change_above_floor is not None:
            verdict = "PASS" if self.change_above_floor.value <= limits.max_change_above_floor else "FAIL"
            lines.append(f"behaviour change  {self.behaviour_change}; the baseline's churn floor {self.churn_floor}; "
                         f"above the floor {self.change_above_floor} (limit {limits.max_change_above_floor:g})  "
                         f"{verdict}")
        lines.append("PASS" if self.passed else "REGRESSION: " + "; ".join(self.reasons))
        return "\n".join(lines)


def _indicator(name: str, values: Any, n: int | None = None) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or (n is not None and len(array) != n):
        raise ValueError(f"{name} must hold one value per pair ({n}), got shape {array.shape}")
    if array.dtype != bool and not (array.size == 0 or np.isin(array, (0, 1)).all()):
        raise ValueError(f"{name} must hold booleans (or 0/1)")
    return array.astype(bool)


def gate(
    baseline_success: Sequence[bool] | np.ndarray,
    candidate_success: Sequence[bool] | np.ndarray,
    *,
    clusters: Sequence[int] | np.ndarray | None = None,
    baseline_reward: Sequence[float] | np.ndarray | None = None,
    candidate_reward: Sequence[float] | np.ndarray | None = None,
    changed: Sequence[bool] | np.ndarray | None = None,
    floor_changed: Sequence[bool] | np.ndarray | None = None,
    limits: GateLimits | None = None,
    bootstrap: Bootstrap | None = None,
    unit: str = "units",
) -> GateResult:
    """Decide whether the candidate passes (see the module docstring for the two limits).

    Parameters
    ----------
    baseline_success, candidate_success : array-like of bool, shape (n,)
        Paired outcomes: pair ``i`` is the same task (context and simulated user) for both.
    clusters : array-like of int, shape (n,), optional
        A code per pair naming its resampling unit (a task with its trials, a dialogue with its
        contexts and continuations); default: every pair a unit.
    baseline_reward, candidate_reward : array-like of float, shape (n,), optional
        For the mean reward difference (shown, not gated).
    changed : array-like of bool, shape (n,), optional
        Whether the candidate acted differently from the baseline at pair ``i``.
    floor_changed : array-like of bool, shape (n,), optional
        Whether the baseline acted differently from itself (another seed) at pair ``i``: its
        churn floor. Required with ``changed``.
    limits : GateLimits, optional
    bootstrap : Bootstrap, optional
        Resamples and seed (its ``confidence`` is replaced by the limits').
    unit : str
        What one cluster is, for the summary (e.g. ``"dialogues"``, ``"tasks"``).

    Returns
    -------
    GateResult
    """
    limits = limits or GateLimits()
    bootstrap = bootstrap or Bootstrap()
    a = _indicator("baseline_success", baseline_success)
    n = len(a)
    if n == 0:
        raise ValueError("no pairs to gate on")
    b = _indicator("candidate_success", candidate_success, n)
    units = np.arange(n) if clusters is None else np.asarray(clusters)
    if units.shape != (n,) or not np.issubdtype(units.dtype, np.integer):
        raise ValueError(f"clusters must be one integer code per pair ({n})")
    columns = _columns(a, b, baseline_reward, candidate_reward, changed, floor_changed)
    shown, upper = _intervals(columns, units, bootstrap, limits.confidence)
    negatives = int((a & ~b).sum())
    exact = exact_upper_bound(negatives, n, limits.confidence)
    bound = max(exact, upper) if not math.isnan(upper) else exact
    reasons = []
    if bound > limits.max_negative_flip_rate:
        reason = (f"the negative flip rate's upper {limits.confidence:.0%} bound {bound:.4f} exceeds "
                  f"{limits.max_negative_flip_rate:g}")
        if negatives == 0:
            reason += (f" (no negative flip, but {n} pairs cannot show a rate below the limit: "
                       f"{pairs_needed(limits.max_negative_flip_rate, limits.confidence)} or more are needed)"
                       if limits.max_negative_flip_rate > 0 else "")
        reasons.append(reason)
    if "above" in shown and shown["above"].value > limits.max_change_above_floor:
        reasons.append(f"the behaviour change exceeds the baseline's churn floor by {shown['above'].value:.4f} "
                       f"(more than {limits.max_change_above_floor:g})")
    return GateResult(
        passed=not reasons, reasons=tuple(reasons), pairs=n, units=len(np.unique(units)), negative_flips=negatives,
        positive_flips=int((~a & b).sum()), negative_flip_rate=shown["negative"], positive_flip_rate=shown["positive"],
        negative_flip_upper=bound, negative_flip_upper_bootstrap=upper, negative_flip_upper_exact=exact,
        reward_difference=shown.get("reward"), behaviour_change=shown.get("change"), churn_floor=shown.get("floor"),
        change_above_floor=shown.get("above"), negative=tuple(int(i) for i in np.flatnonzero(a & ~b)), limits=limits,
        bootstrap=Bootstrap(bootstrap.n_resamples, limits.confidence, bootstrap.seed), unit=str(unit))


def _columns(a: np.ndarray, b: np.ndarray, baseline_reward: Any, candidate_reward: Any, changed: Any,
             floor_changed: Any) -> dict[str, np.ndarray]:
    """Per pair: the flips, the reward difference, the behaviour change, the floor and their difference."""
    n = len(a)
    if (changed is None) != (floor_changed is None):
        raise ValueError("changed and floor_changed go together: the behaviour change is judged against the floor")
    if (baseline_reward is None) != (candidate_reward is None):
        raise ValueError("baseline_reward and candidate_reward go together")
    columns: dict[str, np.ndarray] = {"negative": (a & ~b).astype(np.float64), "positive": (~a & b).astype(np.float64)}
    if baseline_reward is not None:
        ra, rb = (np.asarray(r, dtype=np.float64) for r in (baseline_reward, candidate_reward))
        if ra.shape != (n,) or rb.shape != (n,) or not (np.isfinite(ra).all() and np.isfinite(rb).all()):
            raise ValueError(f"rewards must be one finite number per pair ({n})")
        columns["reward"] = rb - ra
    if changed is not None:
        change = _indicator("changed", changed, n).astype(np.float64)
        floor = _indicator("floor_changed", floor_changed, n).astype(np.float64)
        columns.update(change=change, floor=floor, above=change - floor)
    return columns


def _intervals(columns: dict[str, np.ndarray], units: np.ndarray, bootstrap: Bootstrap,
               confidence: float) -> tuple[dict[str, Interval], float]:
    """Two-sided intervals of every column, and the one-sided upper bound of the negative flip rate."""
    means = {name: float(column.mean()) for name, column in columns.items()}
    if bootstrap.n_resamples == 0 or len(np.unique(units)) < 2:
        nan = (math.nan, math.nan)
        two_sided = {name: nan for name in columns}
        upper = math.nan
    else:
        groups = np.arange(len(units))
        common: dict[str, Any] = {"n_resamples": bootstrap.n_resamples, "seed": bootstrap.seed, "clusters": units}
        two_sided = bootstrap_ci_shared(columns, groups, confidence=confidence, **common)
        # the one-sided bound at `confidence` is the upper end of the two-sided interval at 2 * confidence - 1
        upper = bootstrap_ci_shared({"negative": columns["negative"]}, groups, confidence=2 * confidence - 1,
                                    **common)["negative"][1]
    return {name: Interval(means[name], float(two_sided[name][0]), float(two_sided[name][1]))
            for name in columns}, float(upper)
