"""simscore.app.folder: every path of an experiment folder in one place, and finding them again."""

from __future__ import annotations

from pathlib import Path

import pytest

from simscore.app.folder import ExperimentFolder, RunId


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
