"""Run independent jobs in parallel: local processes by default, or a Dask cluster.

Training runs and response generation are independent jobs with their own seeds, so where
they run cannot change a result: :func:`run_jobs` gives the same list whichever backend is
used (joblib processes, sequential in-process for ``n_jobs=1``, or joblib's Dask backend
when a scheduler address is given; Dask is the optional extra ``simscore-dialogue[dask]``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from simscore.errors import MissingDependencyError

__all__ = ["run_jobs"]


def run_jobs(
    function: Callable[..., Any],
    jobs: Sequence[tuple[Any, ...]],
    *,
    n_jobs: int | None = None,
    scheduler: str | None = None,
    desc: str = "jobs",
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
    desc : str
        Label of the progress bar.
    progress : bool
        Show a progress bar over finished jobs.

    Examples
    --------
    >>> run_jobs(pow, [(2, 3), (3, 2)], n_jobs=1, progress=False)
    [8, 9]
    """
    from tqdm.auto import tqdm

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
            calls = joblib.Parallel(n_jobs=workers, return_as="generator")(
                joblib.delayed(function)(*args) for args in jobs
            )
            return list(tqdm(calls, total=len(jobs), desc=f"{desc} (dask)", disable=not progress))
    workers = min(len(jobs), n_jobs or os.cpu_count() or 1)
    if workers == 1:
        return [function(*args) for args in tqdm(jobs, desc=desc, disable=not progress)]
    calls = joblib.Parallel(n_jobs=workers, backend="loky", return_as="generator")(
        joblib.delayed(function)(*args) for args in jobs
    )
    return list(tqdm(calls, total=len(jobs), desc=desc, disable=not progress))
