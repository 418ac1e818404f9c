"""Build an expensive thing once per test run, shared by pytest-xdist's workers."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # not POSIX: each worker builds its own
    fcntl = None  # type: ignore[assignment]


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``name``, made by ``build(folder)`` once in this test run.

    Under pytest-xdist the folder lies in the run's temporary folder, which its workers share:
    the first worker to ask builds it while holding a lock, and the others wait for it and
    then read it. A build that failed is tried again by the next to ask. Without xdist, or
    where files cannot be locked (not POSIX), it is the process's own, built at the first
    request. Tests must not write into it: copy it first.
    """
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None:
        base = base.parent  # the main process's temporary folder: the workers' own lie in it
    folder, done = base / name, base / f"{name}.done"
    with open(base / f"{name}.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            done.touch()
    return folder
