"""simscore.parallel: jobs in worker processes, and stopping them (SIGTERM, SIGKILL of the parent)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from simscore.errors import RunStopped
from simscore.parallel import run_jobs, stop_on_signals

ROOT = Path(__file__).resolve().parents[2]

# A parent that starts two workers which would run for a minute, each first writing its pid.
_PARENT = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from simscore.parallel import run_jobs, stop_on_signals

    def job(folder, i):
        Path(folder, f"worker-{i}").write_text(str(os.getpid()))
        time.sleep(60)
        return i

    if __name__ == "__main__":
        with stop_on_signals():
            try:
                run_jobs(job, [(sys.argv[1], 0), (sys.argv[1], 1)], n_jobs=2, progress=False)
            except KeyboardInterrupt as exc:
                print(f"stopped: {exc}", flush=True)
                sys.exit(3)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by its parent) counts as ended
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("worker-*"))) < 2:
        assert time.monotonic() < deadline and parent.poll() is None, "the workers did not start"
        time.sleep(0.1)
    time.sleep(0.3)
    return parent, [int(p.read_text()) for p in sorted(tmp_path.glob("worker-*"))]


def _gone_within(pids: list[int], seconds: float) -> float:
    start = time.monotonic()
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() - start < seconds, f"workers {[p for p in pids if _alive(p)]} still run"
        time.sleep(0.05)
    return time.monotonic() - start


def test_jobs_in_order_in_process():
    assert run_jobs(pow, [(2, 3), (3, 2), (2, 0)], n_jobs=1, progress=False) == [8, 9, 1]


def test_sigterm_raises_run_stopped_inside_and_the_old_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(RunStopped, match="stopped by SIGTERM") as caught, stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert caught.value.signal == signal.SIGTERM and isinstance(caught.value, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.slow
def test_sigterm_stops_the_workers_within_seconds(tmp_path):
    parent, workers = _start(tmp_path)
    assert all(_alive(w) for w in workers)
    parent.send_signal(signal.SIGTERM)
    out, _ = parent.communicate(timeout=20)
    assert parent.returncode == 3 and "stopped: stopped by SIGTERM" in out
    assert _gone_within(workers, 10) < 10


@pytest.mark.slow
def test_workers_end_when_their_parent_is_killed(tmp_path):
    parent, workers = _start(tmp_path)
    parent.kill()
    parent.wait(timeout=20)
    assert _gone_within(workers, 5) < 5  # the watch in each worker checks every half second


def test_the_command_lets_openmp_threads_sleep_unless_told_otherwise(monkeypatch, capsys):
    from simscore.__main__ import main
    from simscore.parallel import OMP_WAIT_POLICY

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert os.environ["OMP_WAIT_POLICY"] == OMP_WAIT_POLICY == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # a user's choice stands
    with pytest.raises(SystemExit):
        main(["--help"])
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert "usage: simscore" in capsys.readouterr().out


# ----------------------------------------------------------------------------- Beside
# Module-level functions: they run in the worker process.


def _worker_facts(x: int) -> tuple[int, int, str | None]:
    """x squared, the worker's pid and its BLAS thread setting; logs and warns on the way."""
    import logging
    import warnings

    logging.getLogger("simscore.test_beside").info("squaring %d", x)
    logging.getLogger("simscore.test_beside").debug("not shown at INFO")
    warnings.warn(f"about {x}", UserWarning, stacklevel=1)
    return x * x, os.getpid(), os.environ.get("OPENBLAS_NUM_THREADS")


def _worker_fails(message: str) -> None:
    from simscore.errors import ExperimentError

    raise ExperimentError(message)


def _worker_pid_then_sleep(folder: str, seconds: float = 60) -> int:
    Path(folder, "beside").write_text(str(os.getpid()))
    time.sleep(seconds)
    return os.getpid()


def _started(folder: Path) -> int:
    """The pid of the worker once it runs :func:`_worker_pid_then_sleep`."""
    deadline = time.monotonic() + 60
    while not (folder / "beside").exists():
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.05)
    return int((folder / "beside").read_text())


def test_beside_returns_values_in_a_worker_and_hands_back_its_logs_and_warnings(caplog):
    import logging

    from simscore.parallel import Beside

    with caplog.at_level(logging.INFO, logger="simscore"), pytest.warns(UserWarning, match="^about [34]$"), \
            Beside() as beside:
        first, second = beside.submit(_worker_facts, 3), beside.submit(_worker_facts, 4)
        (square, pid, blas), seconds = beside.result(first)
        assert beside.result(second)[0][:2] == (16, pid)  # one worker, in the order submitted
    assert square == 9 and pid != os.getpid() and blas == "1" and 0 <= seconds < 30
    said = [(r.name, r.levelname, r.getMessage()) for r in caplog.records if r.name == "simscore.test_beside"]
    assert said == [("simscore.test_beside", "INFO", "squaring 3"), ("simscore.test_beside", "INFO", "squaring 4")]


def test_beside_raises_the_worker_s_error_here():
    from simscore.errors import ExperimentError
    from simscore.parallel import Beside

    with Beside() as beside:
        failed = beside.submit(_worker_fails, "explain: no context set")
        with pytest.raises(ExperimentError, match="^explain: no context set$"):
            beside.result(failed)


def test_beside_ends_its_worker_when_left_by_an_exception(tmp_path):
    from simscore.parallel import Beside

    with pytest.raises(KeyboardInterrupt), Beside() as beside:
        beside.submit(_worker_pid_then_sleep, str(tmp_path))
        queued = beside.submit(_worker_facts, 2)
        pid = _started(tmp_path)
        raise KeyboardInterrupt
    assert _gone_within([pid], 10) < 10
    assert queued.cancelled()  # the queue is dropped, not run


def test_a_run_s_step_not_begun_is_done_here_rather_than_waited_for_behind_another(tmp_path):
    import functools

    from simscore.app.runner import _Step
    from simscore.parallel import Beside

    with pytest.warns(UserWarning, match="^about 7$"), Beside() as beside:
        running = _Step(beside, "the test", functools.partial(_worker_pid_then_sleep, str(tmp_path), 1.0))
        queued = _Step(beside, "the test", functools.partial(_worker_facts, 7))
        running.start()
        queued.start()
        pid = _started(tmp_path)
        running.take_back()  # it runs there: left to it
        queued.take_back()  # not begun: done here, now, while the worker sleeps
        (square, where_run, _), _, said = queued.result()
        assert (square, where_run, said) == (49, os.getpid(), "")
        value, seconds, said = running.result()
        assert (value, said) == (pid, "beside the test") and 1.0 <= seconds < 30


def test_beside_gives_back_a_step_it_has_not_started(tmp_path):
    from simscore.parallel import Beside

    with pytest.warns(UserWarning, match="^about 6$"), Beside() as beside:  # 5's warning: never run
        running = beside.submit(_worker_pid_then_sleep, str(tmp_path), 1.0)
        queued, last = beside.submit(_worker_facts, 5), beside.submit(_worker_facts, 6)
        pid = _started(tmp_path)
        assert beside.take_back(queued) and queued.cancelled()  # the caller runs it itself
        assert not beside.take_back(running)  # it runs there: wait for it
        assert beside.result(running)[0] == pid
        assert beside.result(last)[0][:2] == (36, pid)  # the one after it still runs there
        assert not beside.take_back(last)
