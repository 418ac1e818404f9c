"""The measures' shared defaults: each built at most once per process, on first use, thread-safe."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from simscore.measures._once import BuiltOnce

ROOT = Path(__file__).resolve().parents[3]


def test_nothing_is_built_before_the_first_get_and_then_one_object_for_good():
    made: list[object] = []

    def build() -> object:
        made.append(object())
        return made[-1]

    shared = BuiltOnce(build)
    assert not shared.built and made == []
    first = shared.get()
    assert shared.built and shared.get() is first and made == [first]


def test_a_value_of_none_is_built_once_too():
    calls: list[None] = []
    shared: BuiltOnce[None] = BuiltOnce(lambda: calls.append(None))
    assert shared.get() is None and shared.get() is None and len(calls) == 1


def test_threads_asking_together_wait_for_one_build():
    count = 0
    start = threading.Barrier(8)

    def slow() -> object:
        nonlocal count
        count += 1
        time.sleep(0.05)  # the other threads arrive while it builds
        return object()

    shared = BuiltOnce(slow)
    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(shared.get())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert count == 1 and len(got) == 8 and all(value is got[0] for value in got)


def test_a_build_that_fails_keeps_nothing_and_the_next_get_builds_again():
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("not yet")
        return "built"

    shared = BuiltOnce(build)
    with pytest.raises(RuntimeError, match="not yet"):
        shared.get()
    assert not shared.built
    assert shared.get() == "built" and shared.get() == "built" and len(attempts) == 2


def test_the_default_encoders_are_built_on_first_use_only():
    # a fresh interpreter: importing the measures builds neither default; each getter then builds its own, once
    code = (
        "from simscore.measures import _encoders, embedding, default_use_encoder\n"
        "from simscore.measures.embedding import default_embedding_encoder\n"
        "print(_encoders._DEFAULT_ENCODER.built, embedding._DEFAULT_ENCODER.built)\n"
        "use = default_use_encoder()\n"
        "print(_encoders._DEFAULT_ENCODER.built, embedding._DEFAULT_ENCODER.built, use is default_use_encoder(),"
        " type(use).__name__, use.loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["False False", "True False True UsemEncoder False"]
