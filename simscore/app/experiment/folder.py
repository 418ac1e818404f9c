"""The output folder of an experiment: one class owns every path in it (application layer).

:class:`ExperimentFolder` names every file and folder an experiment writes, and finds them
again (the saved runs and checkpoints of :func:`simscore.app.inspect.explain.explain`), so the layout
is written down once: no module builds these paths from strings, none parses them back with
patterns of its own. :class:`RunId` is one training run (reward model and seed) and its
folder name. Layout::

    experiment.json                          configuration of the last run started here
    run.log                                  progress messages of every run (appended)
    runs/<reward>-<seed>/                    one training run (policies.gpsarsa.training: run.json,
                                             checkpoints/, evaluation.csv)
    logs/<reward>-<seed>.jsonl               C_col dialogues of the run's final policy
    contexts/col.jsonl, col-<reward>.jsonl   collected context sets (both rewards, per reward)
    contexts/gen.jsonl                       the generated grid C_gen
    held_out/graph/<reward>-<seed>.jsonl     with [held_out]: the final policy's dialogues with the
                                             training users, and the flow graph built from them
    held_out/flow_graph.json                 (simscore.app.experiment.held_out)
    held_out/users/<reward>-<seed>.jsonl     with [held_out]: its dialogues with the held-out users
    contexts/held.jsonl                      their decision contexts, flow-labelled
    responses/<set>/<reward>-<seed>/ckpt-NNNNNN.jsonl
                                             responses of each checkpoint (NNNNNN: dialogues
                                             trained, six digits) on each context set (on
                                             held: the final checkpoint only)
    responses/<set>/random/random.jsonl      responses of the seeded random policy
    <table>.csv, <table>.json, tables.json   the tables (simscore.analysis.tables_io)
    figures/<figure>.png                     the figures (simscore.plots.make_figures)
    explain/                                 simscore explain (explain.md, CSV tables, a PNG)
    report.md                                the report (simscore.app.report.document)
    cache/embeddings/                        the text measures' embeddings (simscore.measures.disk_cache)
    cache/consequences/                      the consequences table as last made (reused while its inputs stay)
    cache/pieces.json                        what the consequences, the tables, explain/ and the report were
                                             made from (simscore.app.experiment.provenance.MadeFrom); deleting cache/
                                             makes the next run compute them again, to the same numbers
    simscore.lock                            while a run (or report, explain) writes the folder:
                                             its process id, host and command

One process at a time writes a folder: :meth:`ExperimentFolder.lock` holds ``simscore.lock``
(an advisory ``flock`` lock, which the system releases when the process ends however it ends)
and refuses a folder in use, naming the process, host and command that hold it; the lock
file of a process that died is taken over (:attr:`FolderLock.taken_over`, for a log line).
:meth:`ExperimentFolder.remove_leftovers` deletes the temporary files of writes that a killed
process left behind (:func:`simscore.io.is_temporary`), so a resumed run leaves the folder as
an uninterrupted one would.

>>> folder = ExperimentFolder("out")
>>> run = RunId("ts", 3)
>>> folder.responses("col", run, 500).as_posix(), folder.random_responses("gen").as_posix()
('out/responses/col/ts-3/ckpt-000500.jsonl', 'out/responses/gen/random/random.jsonl')
>>> RunId.parse("iq-12"), RunId.parse("random")
(RunId(reward='iq', seed=12), None)
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simscore.analysis.tables_io import INDEX_FILE
from simscore.errors import FolderInUseError
from simscore.io import is_temporary, parse_json

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock file is created exclusively instead
    fcntl = None  # type: ignore[assignment]

__all__ = ["RunId", "RunFiles", "ExperimentFolder", "FolderLock", "COLLECTED", "GENERATED", "HELD_OUT", "RANDOM"]

#: Name of the collected context set (both reward models), and the prefix of one reward's part.
COLLECTED = "col"
#: Name of the generated context set.
GENERATED = "gen"
#: Name of the context set collected from the held-out users (``[held_out]``).
HELD_OUT = "held"
#: Folder name of the random policy's responses (not a run: no ``-<seed>``).
RANDOM = "random"

_CHECKPOINT_PREFIX = "ckpt-"
_JSONL = ".jsonl"


def _digits(text: str) -> bool:
    return bool(text) and text.isascii() and text.isdigit()


@dataclass(frozen=True, order=True)
class RunId:
    """One training run: a reward model and a seed (ordered by reward, then seed).

    Attributes
    ----------
    reward : str
        Letters, digits, ``_`` and ``.``, e.g. ``"ts"``.
    seed : int
    """

    reward: str
    seed: int

    @property
    def name(self) -> str:
        """The run's folder and file name, ``<reward>-<seed>``."""
        return f"{self.reward}-{self.seed}"

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(cls, name: str) -> RunId | None:
        """The run a folder name stands for, or None if it is not ``<reward>-<seed>`` (e.g. ``random``)."""
        reward, dash, seed = name.rpartition("-")
        if not dash or not reward or not _digits(seed):
            return None
        if not all(c.isascii() and (c.isalnum() or c in "_.") for c in reward):
            return None
        return cls(reward, int(seed))


@dataclass(frozen=True)
class RunFiles:
    """The responses files of one run's checkpoints on one context set.

    Attributes
    ----------
    run : str
        Folder name ``<reward>-<seed>``.
    reward : str
    seed : int
    checkpoints : tuple of (int, Path)
        Ascending by number of training dialogues; the last is the final policy.
    """

    run: str
    reward: str
    seed: int
    checkpoints: tuple[tuple[int, Path], ...]


class ExperimentFolder:
    """Every path of an experiment's output folder (the layout in the module docstring).

    Parameters
    ----------
    root : path-like
        The folder; nothing is created or read on construction.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ExperimentFolder({str(self.root)!r})"

    # -- files at the top ------------------------------------------------------------------

    @property
    def experiment_file(self) -> Path:
        """``experiment.json``: the configuration of the last run started in the folder."""
        return self.root / "experiment.json"

    @property
    def run_log(self) -> Path:
        """``run.log``: the progress messages of every run."""
        return self.root / "run.log"

    @property
    def report(self) -> Path:
        """``report.md``."""
        return self.root / "report.md"

    @property
    def tables_index(self) -> Path:
        """``tables.json``, the index of the saved tables (:mod:`simscore.analysis.tables_io`)."""
        return self.root / INDEX_FILE

    def table(self, name: str, suffix: str = ".csv") -> Path:
        """``<name>.csv`` (or ``.json``): one saved table."""
        return self.root / f"{name}{suffix}"

    @property
    def figures(self) -> Path:
        """``figures/``: one PNG per figure."""
        return self.root / "figures"

    @property
    def explain(self) -> Path:
        """``explain/``: the output of ``simscore explain``."""
        return self.root / "explain"

    @property
    def explain_report(self) -> Path:
        """``explain/explain.md``."""
        return self.explain / "explain.md"

    @property
    def cache(self) -> Path:
        """``cache/``: what a run keeps to make the next one quick (deleting it changes no result)."""
        return self.root / "cache"

    @property
    def embedding_cache(self) -> Path:
        """``cache/embeddings/``: the text measures' cache folder (:mod:`simscore.measures.disk_cache`)."""
        return self.cache / "embeddings"

    @property
    def consequences_cache(self) -> Path:
        """``cache/consequences/``: the ``consequences`` table as last made, with what made it
        (:mod:`simscore.app.experiment.consequences`), kept while the other tables are made again."""
        return self.cache / "consequences"

    @property
    def pieces_file(self) -> Path:
        """``cache/pieces.json``: what the derived pieces were made from
        (:class:`simscore.app.experiment.provenance.MadeFrom`)."""
        return self.cache / "pieces.json"

    @property
    def lock_file(self) -> Path:
        """``simscore.lock``: who writes the folder now (:meth:`lock`)."""
        return self.root / "simscore.lock"

    def lock(self, command: str) -> FolderLock:
        """The folder's lock for ``command`` (``with folder.lock("simscore run"): ...``); see :class:`FolderLock`."""
        return FolderLock(self.lock_file, command)

    def lock_if_present(self, command: str) -> contextlib.AbstractContextManager[Any]:
        """:meth:`lock` if the folder exists (else nothing: the command that reads it says what is missing)."""
        return self.lock(command) if self.root.is_dir() else contextlib.nullcontext()

    def remove_leftovers(self) -> list[Path]:
        """Delete the temporary files killed writes left anywhere in the folder; returns their paths.

        Call it only while holding :meth:`lock`: another process's write in progress would
        look the same.
        """
        removed = []
        for directory, _, files in os.walk(self.root):
            for name in files:
                if is_temporary(name):
                    path = Path(directory) / name
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                    removed.append(path)
        return sorted(removed)

    def link(self, path: Path) -> str:
        """``path`` relative to the folder, with forward slashes: a link in ``report.md``."""
        return path.relative_to(self.root).as_posix()

    # -- training, collection, contexts -----------------------------------------------------

    def run_dir(self, run: RunId) -> Path:
        """``runs/<reward>-<seed>/``: one training run."""
        return self.root / "runs" / run.name

    def log(self, run: RunId) -> Path:
        """``logs/<reward>-<seed>.jsonl``: the dialogues of the run's final policy that C_col is collected from."""
        return self.root / "logs" / f"{run.name}{_JSONL}"

    def contexts(self, name: str) -> Path:
        """``contexts/<name>.jsonl``: a context set (``col``, ``col-<reward>``, ``gen``)."""
        return self.root / "contexts" / f"{name}{_JSONL}"

    def collected(self, reward: str | None = None) -> Path:
        """C_col of both reward models (``contexts/col.jsonl``) or of one (``contexts/col-<reward>.jsonl``)."""
        return self.contexts(COLLECTED if reward is None else f"{COLLECTED}-{reward}")

    @property
    def generated(self) -> Path:
        """C_gen, ``contexts/gen.jsonl``."""
        return self.contexts(GENERATED)

    @property
    def held_out(self) -> Path:
        """``held_out/``: the held-out users' dialogues and the flow graph (``[held_out]``)."""
        return self.root / "held_out"

    def graph_log(self, run: RunId) -> Path:
        """``held_out/graph/<reward>-<seed>.jsonl``: the final policy's dialogues the flow graph is built from."""
        return self.held_out / "graph" / f"{run.name}{_JSONL}"

    def held_out_log(self, run: RunId) -> Path:
        """``held_out/users/<reward>-<seed>.jsonl``: the final policy's dialogues with the held-out users."""
        return self.held_out / "users" / f"{run.name}{_JSONL}"

    @property
    def flow_graph(self) -> Path:
        """``held_out/flow_graph.json``: the flow graph of every run's graph dialogues."""
        return self.held_out / "flow_graph.json"

    # -- responses --------------------------------------------------------------------------

    def responses(self, context_set: str, run: RunId, checkpoint: int) -> Path:
        """``responses/<set>/<reward>-<seed>/ckpt-NNNNNN.jsonl``: one checkpoint on one context set."""
        name = f"{_CHECKPOINT_PREFIX}{checkpoint:06d}{_JSONL}"
        return self.root / "responses" / context_set / run.name / name

    def random_responses(self, context_set: str) -> Path:
        """``responses/<set>/random/random.jsonl``: the random policy on one context set."""
        return self.root / "responses" / context_set / RANDOM / f"{RANDOM}{_JSONL}"

    def response_sets(self) -> list[str]:
        """The context sets with a folder under ``responses/``, sorted by name."""
        root = self.root / "responses"
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def run_responses(self, context_set: str) -> list[RunFiles]:
        """The runs with saved checkpoints under ``responses/<context_set>``, sorted by reward then seed.

        Folders that are not ``<reward>-<seed>`` (such as ``random``) or hold no checkpoint
        file are skipped; so are files that are not ``ckpt-<digits>.jsonl``.
        """
        root = self.root / "responses" / context_set
        runs = []
        for folder in sorted(root.iterdir()) if root.is_dir() else []:
            run = RunId.parse(folder.name)
            if run is None or not folder.is_dir():
                continue
            checkpoints = sorted((k, p) for p in folder.iterdir() if (k := _checkpoint_of(p.name)) is not None)
            if checkpoints:
                runs.append(RunFiles(folder.name, run.reward, run.seed, tuple(checkpoints)))
        return sorted(runs, key=lambda r: (r.reward, r.seed))


def _checkpoint_of(file_name: str) -> int | None:
    """The checkpoint of a responses file name ``ckpt-<digits>.jsonl`` (the inverse of :meth:`ExperimentFolder.responses`)."""
    if not (file_name.startswith(_CHECKPOINT_PREFIX) and file_name.endswith(_JSONL)):
        return None
    digits = file_name[len(_CHECKPOINT_PREFIX):-len(_JSONL)]
    return int(digits) if _digits(digits) else None


class FolderLock:
    """Exclusive use of an experiment folder by one process, recorded in its lock file.

    Entering locks ``path`` (its folder must exist) and writes the holder into it (``pid``,
    ``host``, ``since``, ``command``); leaving deletes it. A folder locked by a live process
    raises :class:`~simscore.errors.FolderInUseError` naming that process. A lock file left by
    a process that ended without leaving (killed) is taken over: :attr:`taken_over` holds what
    it said, for a log line.

    Parameters
    ----------
    path : Path
        The lock file.
    command : str
        What this process does (``"simscore run"``), shown to anyone refused.
    """

    def __init__(self, path: Path, command: str) -> None:
        self.path = path
        self.command = command
        self.taken_over: dict[str, Any] | None = None
        self._fd: int | None = None

    def __enter__(self) -> FolderLock:
        fd = self._open_locked() if fcntl is not None else self._create_exclusive()
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                  "since": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(holder) + "\n").encode("utf-8"))
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if _same_file(fd, self.path):
                self.path.unlink()
        finally:
            os.close(fd)  # releases the lock

    def _open_locked(self) -> int:
        """Open and lock the lock file (the system lock: released when a process ends, however)."""
        assert fcntl is not None
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise FolderInUseError(self._in_use(holder)) from None
            if _same_file(fd, self.path):  # not deleted by its last holder while we waited for it
                self.taken_over = _read_holder(fd)
                return fd
            os.close(fd)

    def _create_exclusive(self) -> int:  # pragma: no cover - only where fcntl is missing
        """Without ``flock``: create the lock file exclusively; a holder whose process is gone is taken over."""
        while True:
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                fd = os.open(self.path, os.O_RDONLY)
                holder = _read_holder(fd)
                os.close(fd)
                if holder is not None and holder.get("host") == socket.gethostname() and _alive(holder.get("pid")):
                    raise FolderInUseError(self._in_use(holder)) from None
                self.taken_over = holder or {}
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()

    def _in_use(self, holder: dict[str, Any] | None) -> str:
        folder = self.path.parent
        if holder is None:
            return f"{folder} is in use by another process (its lock file {self.path} is being written)"
        return (f"{folder} is in use by another process: {holder.get('command', '?')} (process {holder.get('pid')} "
                f"on {holder.get('host')}, since {holder.get('since')}); wait for it to finish or use another folder")


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _read_holder(fd: int) -> dict[str, Any] | None:
    """What a lock file says (None when empty or unreadable: being written, or not ours)."""
    try:
        data = os.pread(fd, 4096, 0)
        holder = parse_json(data.decode("utf-8"), "lock")  # strict and bounded: 4,096 '[' are not a holder
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def _alive(pid: Any) -> bool:  # pragma: no cover - only where fcntl is missing
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

