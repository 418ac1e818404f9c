"""The [held_out] table: configuration, held-out collection (deterministic, resumable, checked), flow strata."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from simscore.app.experiment.config import ExperimentConfig, load_config
from simscore.app.experiment.sections import HELD_OUT_USERS, HeldOutConfig
from simscore.app.runner import run_experiment
from simscore.errors import ConfigError, ExperimentError
from simscore.stats import Bootstrap
from tests.simscore.app.experiments import HELD


def _load(tmp_path: Path, text: str) -> ExperimentConfig:
    path = tmp_path / "x.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_held_out_table_is_read_validated_and_round_trips(tmp_path):
    config = _load(tmp_path, "[held_out]\ndialogues = 3\ngraph_dialogues = 7\nseed = 5\ndomain_agnostic = true\n"
                             "[held_out.user]\npatience = [2, 3]\n")
    assert config.held_out == HeldOutConfig(dialogues=3, graph_dialogues=7, seed=5, domain_agnostic=True,
                                            user={"patience": [2, 3]})
    assert ExperimentConfig.from_dict(config.to_dict()) == config
    assert config.to_dict()["held_out"]["user"] == {"patience": [2, 3]}
    default = _load(tmp_path, "[held_out]\n")
    assert default.held_out is not None and default.held_out.user == dict(HELD_OUT_USERS)
    assert _load(tmp_path, "name = 'x'\n").held_out is None
    assert "held_out" not in ExperimentConfig().to_dict()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[held_out]\ndialogues = 0\n", r"held_out\.dialogues must be"),
        ("[held_out]\ndialogs = 3\n", r"\[held_out\] unknown key 'dialogs'; did you mean 'dialogues'"),
        ("[held_out]\ndomain_agnostic = 'yes'\n", r"\[held_out\] domain_agnostic: expected true or false"),
        ("[held_out.user]\n", r"held_out\.user: name at least one user setting"),
        ("[held_out.user]\npatiense = [2, 3]\n", r"\[held_out\.user\] unknown key 'patiense'; did you mean 'patience'"),
        ("[held_out.user]\ninform_combination = 'more'\n", r"\[held_out\.user\] inform_combination: expected a list"),
        ("[held_out.user]\ninform_combination = [0.9, 0.2]\n", r"held_out\.user: inform_combination must satisfy"),
        ("[held_out.user]\ninform_combination = [0.2, 0.7]\n", r"are the training users' settings"),
        ("[training.user]\ngreeting = [0.5, 0.5]\n[held_out.user]\ngreeting = [0.5, 0.5]\n",
         r"are the training users' settings"),
    ],
)
def test_bad_held_out_settings_are_refused_naming_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        _load(tmp_path, text)


def test_held_out_config_refuses_bad_values_in_python():
    with pytest.raises(ExperimentError, match="held_out.user: name at least one"):
        HeldOutConfig(user={})
    with pytest.raises(ExperimentError, match="must behave differently"):
        ExperimentConfig(held_out=HeldOutConfig(user={"greeting": [0.3, 0.7]}))


def _pieces(out: Path) -> dict[str, bytes]:
    paths = [*sorted((out / "held_out").rglob("*.json*")), out / "contexts" / "held.jsonl",
             *sorted((out / "responses" / "held").rglob("*.jsonl")), out / "flow_strata.csv",
             out / "flow_strata_tests.csv", out / "flow_graph.csv"]
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in paths}


@pytest.mark.slow
def test_held_out_pieces_tables_and_report(held_run):
    out = held_run
    pieces = _pieces(out)
    runs = ["iq-1", "iq-2", "ts-1", "ts-2"]
    assert sorted(p for p in pieces if p.startswith("held_out/graph/")) == [f"held_out/graph/{r}.jsonl" for r in runs]
    assert sorted(p for p in pieces if p.startswith("held_out/users/")) == [f"held_out/users/{r}.jsonl" for r in runs]
    # the final checkpoint only, and the random policy
    assert sorted(p for p in pieces if p.startswith("responses/held/")) == sorted(
        [f"responses/held/{r}/ckpt-000060.jsonl" for r in runs] + ["responses/held/random/random.jsonl"])
    strata = pd.read_csv(out / "flow_strata.csv")
    assert set(strata["by"]) >= {"flow_prefix", "flow"}
    assert set(strata["measure"]) == {"tmr", "dmr", "cer", "cmr"}
    groups = set(zip(strata["comparison"], strata["group"], strict=True))
    assert groups == {("seeds", "ts"), ("seeds", "iq"), ("reward models", "ts-iq"), ("chance", "ts"),
                      ("chance", "iq")}
    cross = strata[(strata["comparison"] == "reward models") & (strata["pair"] != "pooled")]
    assert set(cross["pair"]) == {"ts-1 vs iq-1", "ts-1 vs iq-2", "ts-2 vs iq-1", "ts-2 vs iq-2"}
    tests = pd.read_csv(out / "flow_strata_tests.csv")
    assert len(tests) == len(strata) // 2  # two strata per stratification: one test
    assert tests["p"].str.startswith("p ").all() and tests["p_value"].between(0, 1).all()
    graph = pd.read_csv(out / "flow_graph.csv")
    assert len(graph) == 1 and graph["graph_dialogues"].iloc[0] == 4 * 4 and graph["dialogues"].iloc[0] == 4 * 2
    assert 0.0 <= graph["unseen_dialogue_share"].iloc[0] <= 1.0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Seen and unseen conversation flows" in report and "no such experiment" in report
    assert "`inform_combination` 0.2–0.7 → 0.6–0.9" in report
    assert (out / "figures" / "flow_strata.png").is_file()


@pytest.mark.slow
def test_table_numbers_are_comparison_by_stratum(held_run):
    from contexts import ContextSet
    from simscore.comparison import compare
    from simscore.responses import Responses

    out = held_run
    held = ContextSet.read_jsonl(out / "contexts" / "held.jsonl")
    answers = {r: Responses.read_jsonl(out / "responses" / "held" / r / "ckpt-000060.jsonl")
               for r in ("ts-1", "ts-2", "iq-1")}
    options = {"cluster": "dialogue_id", "n_resamples": HELD.n_resamples, "n_permutations": 200,
               "seed": HELD.bootstrap_seed, "confidence": HELD.confidence}
    ts_ids = [c.id for c in held if c.metadata["source_name"] in ("ts-1", "ts-2")]
    strata = pd.read_csv(out / "flow_strata.csv")
    tests = pd.read_csv(out / "flow_strata_tests.csv")
    for pair, a, b, ids in (("ts-1 vs ts-2", "ts-1", "ts-2", ts_ids), ("ts-1 vs iq-1", "ts-1", "iq-1", None)):
        first, second = answers[a], answers[b]
        if ids is not None:
            first, second = first.subset(ids), second.subset(ids)
        direct = compare(first, second, ["tmr", "dmr", "cer", "cmr"], metadata=held, bootstrap=Bootstrap(n_resamples=0),
                         progress=False).by_stratum("flow_prefix", **options)
        mine = strata[(strata["pair"] == pair) & (strata["by"] == "flow_prefix")].set_index(["measure", "stratum"])
        expected = direct.table.rename(columns={"units": "dialogues"})
        for column in ("mean", "ci_low", "ci_high", "count", "dialogues"):
            got = mine.loc[expected.index, column].to_numpy(dtype=float)
            assert got == pytest.approx(expected[column].to_numpy(dtype=float), rel=1e-12, nan_ok=True), column
        row = tests[(tests["pair"] == pair) & (tests["by"] == "flow_prefix") & (tests["measure"] == "tmr")].iloc[0]
        test = direct.test("tmr")
        assert (row["difference"], row["p_value"]) == pytest.approx((test.difference, test.p_value), rel=1e-12)


@pytest.mark.slow
def test_held_out_collection_is_deterministic_and_resumes_piece_by_piece(held_run, tmp_path, figures_off):
    out = held_run
    before = _pieces(out)
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    # every held-out piece made again from nothing, in the same folder: the same bytes
    shutil.rmtree(copy / "held_out")
    shutil.rmtree(copy / "responses" / "held")
    (copy / "contexts" / "held.jsonl").unlink()
    run_experiment(HELD, copy, n_jobs=1, progress=False)
    first = _pieces(copy)
    # one piece at a time, as a run killed between two pieces leaves it
    for piece in ("held_out/users/iq-1.jsonl", "held_out/flow_graph.json", "contexts/held.jsonl",
                  "held_out/graph/ts-2.jsonl"):
        (copy / piece).unlink()
        run_experiment(HELD, copy, n_jobs=1, progress=False)
        assert _pieces(copy) == first, piece
    # a fresh folder holds the same pieces, except the source paths recorded in the held set's header
    assert {k: v for k, v in first.items() if k != "contexts/held.jsonl"} == \
        {k: v for k, v in before.items() if k != "contexts/held.jsonl"}
    assert first["contexts/held.jsonl"].replace(bytes(copy), b"X") == before["contexts/held.jsonl"].replace(
        bytes(out), b"X")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seed": 9}, r"held_out/graph/ts-1.jsonl was made with other settings than this run's: "
                      r"\[held_out\] seed 3000017 \(this run: 9\)"),
        ({"graph_dialogues": 5}, r"held_out/graph/ts-1.jsonl .*\[held_out\] graph_dialogues 4 \(this run: 5\)"),
        ({"dialogues": 3}, r"held_out/users/ts-1.jsonl .*\[held_out\] dialogues 2 \(this run: 3\)"),
        ({"user": {"patience": [2, 3]}}, r"held_out/users/ts-1.jsonl .*\[held_out.user\] \(the users\)"),
        ({"domain_agnostic": True}, r"held_out/flow_graph.json .*domain_agnostic false \(this run: true\)"),
    ],
)
def test_held_out_pieces_made_with_other_settings_are_refused(held_run, tmp_path, change, message):
    folder = tmp_path / "x"
    shutil.copytree(held_run, folder)
    assert HELD.held_out is not None
    other = dataclasses.replace(HELD, held_out=dataclasses.replace(HELD.held_out, **change))
    before = (folder / "contexts" / "held.jsonl").read_bytes()
    with pytest.raises(ExperimentError, match=message):
        run_experiment(other, folder, n_jobs=1, progress=False)
    assert (folder / "contexts" / "held.jsonl").read_bytes() == before


def test_report_has_no_flow_section_without_the_table():
    from simscore.app.report.document import build_report

    assert "Seen and unseen" not in build_report({}, {"title": "x"})


@pytest.mark.slow
def test_stratifying_logs_its_progress_and_gives_the_run_s_tables(held_run, monkeypatch, caplog):
    """The strata's permutation tests take a minute on the paper's run: away from a terminal they say how far they are."""
    import logging

    import simscore.progress
    from simscore.app.experiment.flow_strata import flow_strata_tables
    from simscore.app.experiment.folder import ExperimentFolder
    from simscore.measures import resolve_measures

    monkeypatch.setattr(simscore.progress, "LOG_INTERVAL", 0.01)
    settings = HELD.for_held_out
    assert settings is not None
    with caplog.at_level(logging.INFO, logger="simscore.progress"):
        tables = flow_strata_tables(settings, resolve_measures(list(HELD.measures)), ExperimentFolder(held_run),
                                    progress=True)
    lines = [r.getMessage() for r in caplog.records if r.name == "simscore.progress"]
    assert lines and all(re.fullmatch(r"held out: stratifying: \d+/\d+ comparisons done, (\d+m)?\d+s", line)
                         for line in lines), lines
    saved = pd.read_csv(held_run / "flow_strata.csv")
    assert len(tables["flow_strata"]) == len(saved)
    assert tables["flow_strata"]["mean"].to_numpy() == pytest.approx(saved["mean"].to_numpy(), nan_ok=True)
