"""Fault injection: ``simscore run`` killed at a write point resumes to the same folder as a clean run.

A tiny experiment (two reward models, one seed each, 40 dialogues, action measures) is run
once cleanly through :mod:`tests.simscore.app.faults`, which lists its write points (every
file written, in order). A case kills a fresh run at one write point, after the file's
content is written and before it is renamed into place, with SIGKILL (the process ends on the
spot) or SIGTERM (stopped cleanly); then ``simscore run`` runs again on the same folder,
with no manual step, and the folder must equal the clean run's byte for byte, except
``run.log`` and the wall-clock fields of the training runs (``run.json``'s ``started`` and
``updated``; ``evaluation.csv``'s ``train_seconds`` and ``eval_seconds``, which no two runs
share). The default suite tries a few write points; the ``exhaustive`` matrix (``pytest -m exhaustive``) tries every write
point with both signals.

A single file's writer is tried the same way, with the signal sent from outside while the
process waits at its write point: ``simscore compare --out`` stopped by SIGTERM removes its
temporary file; killed by SIGKILL it leaves it, and the next write of the same file removes it.

The same experiment with a text measure (``use_cos``) adds the write points of the embedding
cache (``cache/embeddings/``: a signature file and a shard of embeddings); a resumed run reads
the embeddings a killed one stored, and must still give the clean run's folder byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from simscore.app.cli import main

ROOT = Path(__file__).resolve().parents[3]

CONFIG = """\
name = "faults"
[training]
rewards = ["ts", "iq"]
seeds = [1]
dialogues = 40
every = 20
eval_dialogues = 5
[contexts]
collect_dialogues = 2
generated = false
[scoring]
measures = ["action"]
n_resamples = 20
"""

#: The experiment with a text measure: its embeddings are kept in the folder's cache.
TEXT_CONFIG = CONFIG.replace('measures = ["action"]', 'measures = ["tmr", "use_cos"]')
assert TEXT_CONFIG != CONFIG

#: What a killed process returns (the CLI exits 128 + 15 after SIGTERM).
_EXIT = {"KILL": -signal.SIGKILL, "TERM": 128 + signal.SIGTERM}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _simscore(base: Path, *, at: int = 0, sig: str = "KILL", listing: Path | None = None) -> subprocess.CompletedProcess:
    """``simscore run`` on ``base/out``, through the fault runner when ``at`` is given."""
    command = ["run", str(base / "faults.toml"), "--out", str(base / "out"), "--jobs", "1", "--quiet"]
    runner = ["-m", "tests.simscore.app.faults", "--at", str(at), "--signal", sig]
    if listing is not None:
        runner += ["--list", str(listing)]
    argv = [sys.executable, *runner, "--", *command] if at or listing else [sys.executable, "-m", "simscore.app.cli",
                                                                              *command]
    return subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, check=False)


def _timeless(path: Path) -> object:
    """A file's content, without the wall-clock fields of training runs."""
    data = path.read_bytes()
    if path.name == "run.json" and path.parent.parent.name == "runs":
        document = json.loads(data)
        for key in ("started", "updated"):
            document.pop(key, None)
        return document
    if path.name == "evaluation.csv":
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
        drop = {rows[0].index(c) for c in ("train_seconds", "eval_seconds")}
        return [[v for i, v in enumerate(row) if i not in drop] for row in rows]
    return data


def _differences(expected: Path, actual: Path) -> list[str]:
    def files(root: Path) -> set[Path]:
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.name != "run.log"}

    a, b = files(expected), files(actual)
    out = [f"only in the clean run: {p}" for p in sorted(a - b)] + [f"only in the resumed run: {p}" for p in sorted(b - a)]
    out += [f"differs: {p}" for p in sorted(a & b) if _timeless(expected / p) != _timeless(actual / p)]
    return out


EXAMPLES = ROOT / "examples"


def _compare_waiting_at_its_write(out: Path) -> subprocess.Popen[str]:
    """``simscore compare ... --out out``, stopped (waiting) with its output complete and not yet renamed."""
    argv = [sys.executable, "-m", "tests.simscore.app.faults", "--at", "1", "--signal", "WAIT", "--", "compare",
            str(EXAMPLES / "responses_a.jsonl"), str(EXAMPLES / "responses_b.jsonl"), "--measures", "action",
            "--out", str(out), "--quiet"]
    process = subprocess.Popen(argv, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    assert line == f"waiting at {out}\n", line + process.stderr.read()
    return process


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["TERM", "INT"])
def test_a_stopped_compare_removes_its_temporary_file(tmp_path: Path, sig: str) -> None:
    out = tmp_path / "cmp.json"
    process = _compare_waiting_at_its_write(out)
    assert len(_leftovers(tmp_path)) == 1  # the complete output, waiting to be renamed
    process.send_signal(getattr(signal, f"SIG{sig}"))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + getattr(signal, f"SIG{sig}"), stderr
    assert f"simscore compare: {'stopped by SIGTERM' if sig == 'TERM' else 'interrupted'}" in stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_killed_compare_leaves_a_temporary_file_that_the_next_write_removes(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    process = _compare_waiting_at_its_write(out)
    process.kill()
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    (left,) = _leftovers(tmp_path)
    assert left.startswith(f".cmp.json.{process.pid}-") and left.endswith(".tmp") and not out.exists()
    other = tmp_path / f".cmp.json.{os.getpid()}-{left.split('-')[1]}-0123456789ab.tmp"
    other.write_text("a write in progress (this process's): kept")
    # the next write, in this process (alive, so its own temporary is a write in progress)
    assert main(["compare", str(EXAMPLES / "responses_a.jsonl"), str(EXAMPLES / "responses_b.jsonl"),
                 "--measures", "action", "--out", str(out), "--quiet"]) == 0
    assert _leftovers(tmp_path) == [other.name]
    assert json.loads(out.read_text())["summary"]["tmr"]["count"] == 24


def _clean_run(base: Path, config: str) -> tuple[Path, list[str]]:
    """The folder and the write points (paths relative to the folder, in order) of a clean run."""
    (base / "faults.toml").write_text(config)
    listing = base / "writes.txt"
    done = _simscore(base, listing=listing)
    assert done.returncode == 0, done.stderr
    (base / "out").rename(base / "clean")
    prefix = f"{base / 'out'}{os.sep}"
    points = [line.split(" ", 1)[1].removeprefix(prefix) for line in listing.read_text().splitlines()]
    return base, points


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The folder and write points of a clean run of :data:`CONFIG`."""
    return _clean_run(tmp_path_factory.mktemp("faults"), CONFIG)


@pytest.fixture(scope="module")
def clean_text(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The folder and write points of a clean run of :data:`TEXT_CONFIG`."""
    return _clean_run(tmp_path_factory.mktemp("faults-text"), TEXT_CONFIG)


def _kill_and_resume(base: Path, at: int, sig: str) -> list[str]:
    """Kill a run at write point ``at`` with ``sig``, run again; what differs from the clean run."""
    shutil.rmtree(base / "out", ignore_errors=True)
    killed = _simscore(base, at=at, sig=sig)
    assert killed.returncode == _EXIT[sig], (at, sig, killed.returncode, killed.stderr[-2000:])
    if sig == "TERM":
        assert "stopped by SIGTERM; run the same command again to continue" in killed.stderr
    assert (base / "out" / "simscore.lock").exists() == (sig == "KILL")  # a killed run cannot release its lock
    resumed = _simscore(base)
    assert resumed.returncode == 0, (at, sig, resumed.stderr[-2000:])
    log = (base / "out" / "run.log").read_text(encoding="utf-8")
    assert ("which ended without releasing it" in log) == (sig == "KILL")
    return _differences(base / "clean", base / "out")


def test_the_write_points_are_every_file_of_the_folder(clean):
    base, points = clean
    # the report last, then the record of what made it
    assert points[0] == "experiment.json" and points[-2:] == ["report.md", "cache/pieces.json"]
    written = {p for p in points}
    assert written == {str(p.relative_to(base / "clean")) for p in (base / "clean").rglob("*")
                       if p.is_file() and p.name != "run.log"}
    assert not (base / "clean" / "simscore.lock").exists()


@pytest.mark.parametrize(
    ("point", "sig"),
    [
        ("contexts/col-iq.jsonl", "KILL"),  # between the two C_col files: once a blocker ("... exists; use --force")
        ("chance.json", "TERM"),  # half-way through replacing the tables
    ],
)
def test_a_killed_run_resumes_to_the_clean_folder(clean, point, sig):
    base, points = clean
    assert _kill_and_resume(base, points.index(point) + 1, sig) == []


def _cache_points(points: list[str]) -> list[str]:
    return [p for p in points if p.startswith("cache/embeddings/")]


@pytest.mark.slow
@pytest.mark.extra("text")
@pytest.mark.parametrize(("which", "sig"), [("signature", "TERM"), ("shard", "KILL"), ("after", "TERM")])
def test_a_run_killed_around_the_embedding_cache_resumes_to_the_clean_folder(clean_text, which, sig):
    base, points = clean_text
    signature, shard = _cache_points(points)
    assert signature.endswith("/signature.json") and shard.endswith(".npz")
    point = {"signature": signature, "shard": shard, "after": "chance.json"}[which]  # after: read back from the cache
    assert _kill_and_resume(base, points.index(point) + 1, sig) == []


@pytest.mark.exhaustive
@pytest.mark.extra("text")
def test_every_cache_write_point_and_signal_resumes_to_the_clean_folder(clean_text):
    base, points = clean_text
    for point in _cache_points(points):
        for sig in ("KILL", "TERM"):
            assert _kill_and_resume(base, points.index(point) + 1, sig) == [], (point, sig)


@pytest.mark.exhaustive
def test_every_write_point_and_signal_resumes_to_the_clean_folder(clean):
    base, points = clean
    failed = {}
    for at, point in enumerate(points, start=1):
        for sig in ("KILL", "TERM"):
            differences = _kill_and_resume(base, at, sig)
            if differences:
                failed[(at, point, sig)] = differences
    print(f"\nfault matrix: {len(points)} write points x 2 signals, {len(failed)} resumed to another folder")
    for at, point in enumerate(points, start=1):
        print(f"{at:3d} {point:<45} " + "  ".join(
            f"{sig} {'FAIL' if (at, point, sig) in failed else 'ok'}" for sig in ("KILL", "TERM")))
    assert failed == {}
