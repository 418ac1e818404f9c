"""Run independent jobs in parallel: local processes by default, or a Dask cluster.

Training runs and response generation are independent jobs with their own seeds, so where
they run cannot change a result: :func:`run_jobs` gives the same list whichever backend is
used (joblib processes, sequential in-process for ``n_jobs=1``, or joblib's Dask backend
when a scheduler address is given; Dask is the optional extra ``simscore-dialogue[dask]``).

Stopping: inside :func:`stop_on_signals`, SIGTERM raises :class:`~simscore.errors.RunStopped`
(a :class:`KeyboardInterrupt`) as Ctrl-C raises :class:`KeyboardInterrupt`; either ends the
local worker processes of :func:`run_jobs` at once (joblib's abort). A local worker also ends
itself within half a second when the process that started it is gone (killed with SIGKILL,
say), instead of training on for minutes into a folder that a resumed run may already write.

Beside: :class:`Beside` runs steps that wait on nothing of this process's own work in one worker
process next to it (the experiment's held-out strata, simulations and explain beside its scoring,
which mostly keeps one core busy); their log records and warnings come back with their results,
and a step it has not begun can be taken back.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from concurrent.futures import Future
from typing import Any

from simscore.errors import MissingDependencyError, RunStopped
from simscore.progress import Progress, track

__all__ = ["OMP_WAIT_POLICY", "Beside", "run_jobs", "stop_on_signals", "wait_passively"]

#: OpenMP's waiting policy that the ``simscore`` command (and ``benchmarks/bench_text.py``) sets
#: unless the environment names one: threads that wait at a barrier sleep instead of spinning.
#: Measured with ``benchmarks/bench_text.py --beside`` (docs/guide/experiment.md, "On a busy machine"): there a
#: spinning thread burns the CPU that its sibling, descheduled by a competing process, needs to
#: reach the barrier, and torch's intra-op parallel regions then run at the pace of the slowest
#: thread. Numbers do not change (the threads and their shares of the work are the same; the
#: scores of 200 pairs by BERTScore and emb_cos are bit for bit equal under both policies).
OMP_WAIT_POLICY = "PASSIVE"

#: How often a local worker checks that the process that started it still runs (seconds).
_WATCH_INTERVAL = 0.5
_watching = False


@contextlib.contextmanager
def stop_on_signals(signals: Sequence[int] = (signal.SIGTERM,)) -> Iterator[None]:
    """While inside, the ``signals`` (default SIGTERM) raise :class:`~simscore.errors.RunStopped` in the main thread.

    SIGTERM's default action ends the process at once: no ``finally`` runs, so worker
    processes train on, locks stay, temporary files remain. As an exception it unwinds like
    Ctrl-C. Outside the main thread (where Python cannot handle signals) this does nothing.
    The previous handlers come back on leaving.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise RunStopped(signum)

    previous = {s: signal.signal(s, stop) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def wait_passively(environ: MutableMapping[str, str] | None = None) -> bool:
    """Set ``OMP_WAIT_POLICY`` to :data:`OMP_WAIT_POLICY` unless ``environ`` already names one.

    OpenMP reads the variable once, when its runtime loads (in this process: when torch is
    first imported), and worker processes inherit it; so this is for a program's entry point,
    before anything imports torch. Returns True when the policy is the one in force: the
    variable is (now) :data:`OMP_WAIT_POLICY` and torch was not imported before.

    Parameters
    ----------
    environ : mutable mapping, optional
        The environment to set (default ``os.environ``).

    Examples
    --------
    >>> env = {}
    >>> _ = wait_passively(env)
    >>> env
    {'OMP_WAIT_POLICY': 'PASSIVE'}
    >>> env = {"OMP_WAIT_POLICY": "active"}
    >>> wait_passively(env)
    False
    >>> env
    {'OMP_WAIT_POLICY': 'active'}
    """
    import sys

    environ = os.environ if environ is None else environ
    chosen = environ.setdefault("OMP_WAIT_POLICY", OMP_WAIT_POLICY)
    return chosen.upper() == OMP_WAIT_POLICY and "torch" not in sys.modules


def _watch_parent(parent: int) -> None:
    """In a worker process: end it as soon as ``parent`` (the process that started the jobs) is gone."""
    global _watching
    if os.getpid() == parent or _watching:
        return
    _watching = True

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_INTERVAL)
        os._exit(1)  # the parent is gone: nobody waits for this job's result

    threading.Thread(target=watch, name="simscore-parent-watch", daemon=True).start()


def _watched(function: Callable[..., Any], parent: int, args: tuple[Any, ...]) -> Any:
    """``function(*args)`` in a local worker that ends with its parent."""
    _watch_parent(parent)
    return function(*args)


def run_jobs(
    function: Callable[..., Any],
    jobs: Sequence[tuple[Any, ...]],
    *,
    n_jobs: int | None = None,
    scheduler: str | None = None,
    desc: str = "jobs",
    unit: str = "jobs",
    progress: bool = True,
) -> list[Any]:
    """Call ``function(*args)`` for every ``args`` in ``jobs``; results in job order.

    Parameters
    ----------
    function : callable
        A module-level function (it is sent to other processes).
    jobs : sequence of tuples
        Positional arguments of each call.
    n_jobs : int, optional
        Local worker processes (default: one per core, at most one per job); 1 runs the
        jobs one after the other in this process.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:port``); the jobs then run on its workers.
    desc, unit : str
        What the jobs are, for their progress: ``"<desc>: 2/6 <unit> done, 2m10s"``.
    progress : bool
        Show the progress over finished jobs (:mod:`simscore.progress`: a bar on a terminal,
        else a log line at least every minute of a long step).

    Examples
    --------
    >>> run_jobs(pow, [(2, 3), (3, 2)], n_jobs=1, progress=False)
    [8, 9]
    """
    jobs = list(jobs)
    if not jobs:
        return []
    if n_jobs is not None and n_jobs < 1:
        raise ValueError(f"n_jobs must be at least 1, got {n_jobs!r}")
    import joblib

    if scheduler is not None:
        try:
            from dask.distributed import Client
        except ImportError:
            raise MissingDependencyError(
                "running on a Dask cluster needs the optional extra: pip install 'simscore-dialogue[dask]'"
            ) from None
        with Client(scheduler) as client, joblib.parallel_config(backend="dask"):
            workers = max(1, len(client.scheduler_info().get("workers", {})))
            delayed = [joblib.delayed(function)(*args) for args in jobs]
            try:
                calls = joblib.Parallel(n_jobs=workers, return_as="generator")(delayed)
            except ValueError:  # joblib < 1.4: its Dask backend returns lists only (no progress per job then)
                calls = iter(joblib.Parallel(n_jobs=workers)(delayed))
            return list(track(calls, f"{desc} (dask)", total=len(jobs), unit=unit, enabled=progress))
    workers = min(len(jobs), n_jobs or os.cpu_count() or 1)
    if workers == 1:
        with Progress(len(jobs), desc, unit=unit, enabled=progress) as bar:
            done = []
            for args in jobs:
                done.append(function(*args))
                bar.update()
            return done
    parent = os.getpid()
    calls = joblib.Parallel(n_jobs=workers, backend="loky", return_as="generator")(
        joblib.delayed(_watched)(function, parent, args) for args in jobs
    )
    return list(track(calls, desc, total=len(jobs), unit=unit, enabled=progress))


# ----------------------------------------------------------------------------- beside


#: The environment of :class:`Beside`'s worker: one thread for every math library (the process
#: beside it keeps the other core), threads that wait sleep.
_BESIDE_ENV = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                      "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}
_BESIDE_ENV["OMP_WAIT_POLICY"] = OMP_WAIT_POLICY


class _Kept(logging.Handler):
    """Keeps the records of a job, made ready to travel (the message formatted, the traceback as text)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args, record.exc_info = record.getMessage(), None, None
        self.records.append(record)


def _beside_job(function: Callable[..., Any], parent: int, level: int, args: tuple[Any, ...]
                ) -> tuple[Any, float, list[logging.LogRecord], list[tuple[str, type[Warning], str, int]]]:
    """In :class:`Beside`'s worker: ``function(*args)``, its seconds, its log records and its warnings."""
    _watch_parent(parent)
    kept, root, ours = _Kept(), logging.getLogger(), logging.getLogger("simscore")
    before = ours.level
    root.addHandler(kept)
    ours.setLevel(level)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            value = function(*args)
            seconds = time.perf_counter() - start
    finally:
        root.removeHandler(kept)
        ours.setLevel(before)
    said = [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
    return value, seconds, kept.records, said


class Beside:
    """Module-level functions run in one worker process beside this process's own work.

    For steps that wait on nothing this process computes meanwhile: :meth:`submit` queues
    one (the worker runs them one at a time, in the order submitted), :meth:`result` waits
    for it and returns its value and its seconds in the worker, and :meth:`take_back` takes a
    step the worker has not started back, for this process to run when it has nothing else to
    do. Each one's log records and warnings are given to this process's loggers and warning
    filters when its result is taken, with the time they were made, so a run's log loses none.
    Where a step runs cannot change its result: the worker runs the same code on the same
    inputs, with one thread for numpy's and numba's math, as :func:`run_jobs`' workers do on
    two cores.

    Use it as a context manager: on leaving normally it waits for what is still queued or
    running; on an exception (Ctrl-C, :class:`~simscore.errors.RunStopped`) it drops the queue
    and ends the worker at once. The worker also ends itself when this process is gone.

    Examples
    --------
    >>> with Beside() as beside:
    ...     started = beside.submit(pow, 2, 10)
    ...     value, seconds = beside.result(started)
    >>> value
    1024
    """

    def __init__(self) -> None:
        from joblib.externals.loky import ProcessPoolExecutor

        self._executor = ProcessPoolExecutor(max_workers=1, env=dict(_BESIDE_ENV))
        # the steps not started yet: the worker is given one at a time, so that one still here can be taken back
        self._queue: collections.deque[tuple[Future[Any], Callable[..., Any], int, tuple[Any, ...]]] = \
            collections.deque()
        self._changed = threading.Condition()
        self._closing = False
        self._feeder = threading.Thread(target=self._feed, name="simscore-beside", daemon=True)
        self._feeder.start()

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        """Queue ``function(*args)`` for the worker, after what was submitted before."""
        future: Future[Any] = Future()
        level = logging.getLogger("simscore").getEffectiveLevel()
        with self._changed:
            if self._closing:
                raise RuntimeError("Beside: submit after close")
            self._queue.append((future, function, level, args))
            self._changed.notify()
        return future

    def take_back(self, future: Future[Any]) -> bool:
        """Take a submitted step back if the worker has not started it: True when taken (it is cancelled; run it
        here), False when it runs or ran there (wait with :meth:`result`)."""
        with self._changed:
            for queued in self._queue:
                if queued[0] is future:
                    self._queue.remove(queued)
                    future.cancel()
                    return True
        return False

    def _feed(self) -> None:
        """The feeder thread: gives the worker the queue's steps, one after the other."""
        while True:
            with self._changed:
                while not self._queue and not self._closing:
                    self._changed.wait()
                if not self._queue:
                    return
                future, function, level, args = self._queue.popleft()
                if not future.set_running_or_notify_cancel():
                    continue
            try:
                future.set_result(self._executor.submit(_beside_job, function, os.getpid(), level, args).result())
            except BaseException as error:  # the step's own error, or the worker's end: raised by result()
                future.set_exception(error)

    @staticmethod
    def result(future: Future[Any]) -> tuple[Any, float]:
        """Wait for a submitted step: its value and its seconds in the worker (its exception is raised here)."""
        value, seconds, records, said = future.result()
        for record in records:
            logger = logging.getLogger(record.name)
            if logger.isEnabledFor(record.levelno):
                logger.handle(record)
        for message, category, filename, lineno in said:
            warnings.warn_explicit(message, category, filename, lineno)
        return value, seconds

    def close(self, *, stop: bool = False) -> None:
        """Wait for the steps still queued or running, or (``stop``) drop the queue and end the worker at once."""
        with self._changed:
            self._closing = True
            if stop:
                for queued in self._queue:
                    queued[0].cancel()
                self._queue.clear()
            self._changed.notify()
        if not stop:
            self._feeder.join()
        self._executor.shutdown(wait=not stop, kill_workers=stop)

    def __enter__(self) -> Beside:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self.close(stop=kind is not None)
