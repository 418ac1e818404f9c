"""simscore.app.experiment.folder: every path of an experiment folder in one place, and finding them again."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from simscore.app.experiment.folder import ExperimentFolder, RunId
from simscore.errors import FolderInUseError

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ts-1", RunId("ts", 1)),
        ("iq-20", RunId("iq", 20)),
        ("my.reward_2-7", RunId("my.reward_2", 7)),
        ("a-b-3", None),  # "-" is no character of a reward name
        ("random", None),
        ("ts-", None),
        ("-3", None),
        ("ts-x", None),
        ("ts-²", None),  # a digit to str.isdigit, not to a run name
        ("ts-+3", None),
    ],
)
def test_run_names_parse_back(name, expected):
    assert RunId.parse(name) == expected
    if expected is not None:
        assert expected.name == name == str(expected)


def test_runs_sort_by_reward_then_seed():
    assert sorted([RunId("ts", 10), RunId("iq", 2), RunId("ts", 9)]) == [RunId("iq", 2), RunId("ts", 9), RunId("ts", 10)]


def test_every_path_of_the_layout(tmp_path: Path):
    folder = ExperimentFolder(tmp_path)
    run = RunId("iq", 2)
    relative = {
        "experiment": folder.experiment_file, "log": folder.run_log, "report": folder.report,
        "index": folder.tables_index, "table": folder.table("seeds"), "table json": folder.table("seeds", ".json"),
        "figures": folder.figures, "explain": folder.explain_report, "run": folder.run_dir(run),
        "dialogues": folder.log(run), "col": folder.collected(), "col-iq": folder.collected("iq"),
        "gen": folder.generated, "responses": folder.responses("gen", run, 12500),
        "random": folder.random_responses("col"),
    }
    assert {k: folder.link(v) for k, v in relative.items()} == {
        "experiment": "experiment.json", "log": "run.log", "report": "report.md", "index": "tables.json",
        "table": "seeds.csv", "table json": "seeds.json", "figures": "figures", "explain": "explain/explain.md",
        "run": "runs/iq-2", "dialogues": "logs/iq-2.jsonl", "col": "contexts/col.jsonl",
        "col-iq": "contexts/col-iq.jsonl", "gen": "contexts/gen.jsonl",
        "responses": "responses/gen/iq-2/ckpt-012500.jsonl", "random": "responses/col/random/random.jsonl",
    }
    assert not any(tmp_path.iterdir())  # naming a path creates nothing


def test_saved_responses_are_found_again(tmp_path: Path):
    folder = ExperimentFolder(tmp_path)
    assert folder.response_sets() == [] and folder.run_responses("col") == []
    written = [folder.responses("col", RunId(r, s), k) for r, s in (("ts", 2), ("iq", 1), ("ts", 10)) for k in (500, 1000)]
    written.append(folder.random_responses("col"))
    stray = [tmp_path / "responses" / "col" / "ts-2" / name for name in ("ckpt-1.json", "notes.jsonl", "ckpt-x.jsonl")]
    for path in [*written, *stray, tmp_path / "responses" / "gen" / "ts-1" / "ckpt-000001.jsonl"]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    (tmp_path / "responses" / "col" / "empty-3").mkdir()
    assert folder.response_sets() == ["col", "gen"]
    found = folder.run_responses("col")
    assert [(r.run, r.reward, r.seed) for r in found] == [("iq-1", "iq", 1), ("ts-2", "ts", 2), ("ts-10", "ts", 10)]
    assert [k for k, _ in found[1].checkpoints] == [500, 1000]
    assert found[1].checkpoints[-1][1] == folder.responses("col", RunId("ts", 2), 1000)


def test_the_lock_refuses_a_second_holder_names_it_and_goes_away(tmp_path: Path):
    folder = ExperimentFolder(tmp_path)
    with folder.lock("simscore run x.toml --out d") as lock:
        assert lock.taken_over is None
        holder = json.loads(folder.lock_file.read_text())
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        with pytest.raises(FolderInUseError, match=rf"in use by another process: simscore run x.toml --out d "
                                                   rf"\(process {os.getpid()} on {socket.gethostname()}, since "):
            with folder.lock("simscore report"):
                pass
    assert not folder.lock_file.exists()
    with folder.lock("again"):  # free again
        pass


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path):
    folder = ExperimentFolder(tmp_path)
    code = ("import os, sys\nfrom simscore.app.experiment.folder import ExperimentFolder\n"
            "lock = ExperimentFolder(sys.argv[1]).lock('simscore run old').__enter__()\nos._exit(9)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    dead = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, check=False)
    assert dead.returncode == 9 and folder.lock_file.exists()  # the process ended without leaving
    with folder.lock("simscore run new") as lock:
        assert lock.taken_over is not None and lock.taken_over["command"] == "simscore run old"
        assert json.loads(folder.lock_file.read_text())["command"] == "simscore run new"
    assert not folder.lock_file.exists()


def test_leftovers_of_killed_writes_are_removed(tmp_path: Path):
    folder = ExperimentFolder(tmp_path)
    kept = [tmp_path / "report.md", tmp_path / ".hidden.tmp", tmp_path / "runs" / "ts-1" / "x.0a1b2c3d4e5f.tmp"]
    left = [tmp_path / ".report.md.0a1b2c3d4e5f.tmp", tmp_path / "runs" / "ts-1" / ".ckpt-000020.npz.ffffffffffff.tmp"]
    for path in kept + left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    assert folder.remove_leftovers() == sorted(left)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in left)


def test_a_lock_file_of_nested_brackets_is_not_a_holder(tmp_path: Path):
    # what a lock file says is read strictly and bounded: 4,096 '[' were a RecursionError
    folder = ExperimentFolder(tmp_path)
    folder.lock_file.write_text("[" * 4096)
    with folder.lock("simscore run new") as lock:
        assert lock.taken_over is None
    assert not folder.lock_file.exists()


def test_an_experiment_record_nested_too_deeply_is_unreadable(tmp_path: Path):
    from simscore.app.experiment.config import DEMO_CONFIG
    from simscore.app.experiment.provenance import check_folder_settings
    from simscore.errors import ExperimentError

    folder = ExperimentFolder(tmp_path)
    folder.experiment_file.write_text('{"config": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ExperimentError, match="unreadable experiment record"):
        check_folder_settings(folder, DEMO_CONFIG)
