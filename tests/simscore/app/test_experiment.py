"""The experiment pipeline end to end on a tiny configuration: outputs, reuse, resume, Dask.

The finished run (``tiny_run``) is built once per test run (``conftest.py``); a test that
writes copies it.
"""

from __future__ import annotations

import dataclasses
import filecmp
import json
import logging
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contexts import ContextSet
from simscore.analysis import SCHEMAS
from simscore.app.cli import main
from simscore.app.experiment.folder import ExperimentFolder, RunId
from simscore.app.experiment.reference import reference_policies
from simscore.app.experiment.sections import ConsequencesConfig, HeldOutConfig
from simscore.app.experiment.steps import ReferenceSettings
from simscore.app.runner import run_experiment
from simscore.errors import ExperimentError, MissingValueWarning
from simscore.stats import Bootstrap
from tests.simscore.app.experiments import HELD, TINY


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    return {p.stem: pd.read_csv(p) for p in sorted(out.glob("*.csv"))}


@pytest.mark.slow
def test_outputs(tiny_run):
    out, report = tiny_run
    text = report.read_text()
    for heading in ("## Findings", "Convergence", "Seeds", "Reward models", "Per turn", "Correlation", "Chance",
                    "## Does the difference matter?"):
        assert heading in text
    figures = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert figures == ["behaviour_map.png", "chance.png", "consequences.png", "convergence.png", "convergence_all.png",
                       "correlation.png", "per_turn.png", "performance.png", "reward_models.png", "seeds.png",
                       "seeds_all.png"]
    tables = _tables(out)
    assert set(tables) >= {"performance", "convergence", "seeds", "reward_models", "per_turn", "correlation", "chance"}
    conv = tables["convergence"]
    # 4 runs x 1 comparison (checkpoint 60 vs 30) x 2 context sets x 4 measures
    assert len(conv) == 4 * 1 * 2 * 4
    assert set(conv["checkpoint"]) == {60} and set(conv["previous"]) == {30}
    # collected contexts exclude the fixed greeting (turn 0)
    assert tables["per_turn"]["turn_index"].min() >= 1
    performance = tables["performance"]
    assert set(performance["checkpoint"]) == {30, 60}
    meta = json.loads((out / "tables.json").read_text())["meta"]
    assert set(meta["signatures"]) == {"tmr", "dmr", "cer", "cmr"}
    assert meta["config"]["training"]["seeds"] == [1, 2]
    assert meta["findings"] == TINY.findings.to_dict() and meta["command"] is None
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", meta["date"])
    # first system turn of every seed pair (one per reward at 2 checkpoints: 4) and ts-iq pair (4 at 60)
    first = tables["first_turn"]
    assert set(first["turn_index"]) == {1} and set(first["measure"]) == {"tmr", "dmr", "cer", "cmr"}
    assert len(first) == (2 * 2 + 4) * 4
    assert "text_at_matching_actions" not in tables  # no text measure in this configuration
    # chance level: a random policy is far less similar to a trained one than seeds are
    chance = tables["chance"]
    seeds = tables["seeds"]
    assert chance.query("measure == 'tmr'")["mean"].mean() < seeds.query("measure == 'tmr'")["mean"].mean()


def _mtimes(folder: Path, *parts: str) -> dict[Path, int]:
    """Every file under ``folder/<part>`` (or the file itself) -> its modification time."""
    out = {}
    for part in parts:
        paths = [folder / part] if (folder / part).is_file() else (folder / part).rglob("*")
        out.update({p: p.stat().st_mtime_ns for p in paths if p.is_file()})
    return out


#: What a run makes from the responses: kept by a re-run whose inputs are the same.
DERIVED = ("tables.json", "convergence.csv", "convergence.json", "chance.csv", "consequences.csv", "cache/consequences",
           "explain", "figures", "report.md")


def test_undefined_consequences_are_logged_once_per_reason(caplog):
    from simscore.app.experiment.notes import log_undefined, undefined_values_logged

    interval = "a 95% interval from one dialogue is undefined (NaN): one value says nothing about its spread"
    with caplog.at_level(logging.INFO, logger="simscore.app.experiment"):
        log_undefined("consequences", [f"ts-1@4 -> ts-1@5, differ: {interval}", "iq-2@4 -> iq-2@5: no pair in group 'differ'; its "
                        "rates are NaN", f"iq-3@4 -> iq-3@5, differ: {interval}", f"ts-1@4 -> ts-1@5, differ: {interval}",
                        "undefined"])
    assert [r.getMessage() for r in caplog.records] == [
        f"consequences: {interval} (ts-1@4 -> ts-1@5, differ; iq-3@4 -> iq-3@5, differ)",
        "consequences: no pair in group 'differ'; its rates are NaN (iq-2@4 -> iq-2@5)",
        "consequences: undefined",
    ]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="simscore.app.experiment"), pytest.warns(RuntimeWarning, match="other"):
        with undefined_values_logged("per turn"):
            warnings.warn(f"turn 16 tmr: {interval}", MissingValueWarning, stacklevel=1)
            warnings.warn("other", RuntimeWarning, stacklevel=1)  # goes on as it came
    assert [r.getMessage() for r in caplog.records] == [f"per turn: {interval} (turn 16 tmr)"]


def test_behaviour_map_of_the_final_policies(tiny_run):
    """The map of every final run, the handcrafted and the random policy on each context set: its pairs are
    the reward-model table's means, float for float; the groups asked about are each reward model's seeds."""
    from simscore.analysis.tables_io import load_tables

    out, report = tiny_run
    tables = load_tables(out).tables
    pairs = tables["behaviour_map"]
    names = ["ts-1", "ts-2", "iq-1", "iq-2", "handcrafted", "random"]
    for context_set in ("col", "gen"):
        own = pairs[(pairs["context_set"] == context_set) & (pairs["map"] == "final policies")]
        assert list(dict.fromkeys(own["a"])) == names and set(own["measure"]) == {"tmr", "dmr", "cer", "cmr"}
        assert len(own) == 4 * len(names) ** 2  # every ordered pair, the diagonal included
        reward_models = tables["reward_models"]
        for row in reward_models[reward_models["context_set"] == context_set].itertuples():
            mapped = own[(own["a"] == row.run_a) & (own["b"] == row.run_b) & (own["measure"] == row.measure)]
            assert mapped["mean"].item() == row.mean
        tmr = own[own["measure"] == "tmr"]
        assert (tmr[tmr["a"] == tmr["b"]]["mean"] == 1.0).all()
    groups = tables["behaviour_map_groups"]
    assert set(groups["group"]) == {"ts seeds", "iq seeds", "trained runs"}
    assert groups["support"].between(0, 1).all() and set(groups["clustered"]) <= {0, 1}
    policies = tables["behaviour_map_policies"]
    col = policies[(policies["context_set"] == "col") & (policies["measure"] == "tmr")]
    assert set(col["unit"]) == {"dialogues"} and set(col["nearest"]) <= set(names)
    assert tables["checkpoint_plateau"].empty  # two checkpoints per run: a map needs three
    text = report.read_text()
    section = text.split("## Who behaves like whom: the map of the final policies (beside finding 5)")[1]
    assert "![" in section.split("##")[0] and "| col | ts seeds | ts-1 + ts-2 |" in section
    assert "Where training plateaus" not in text


@pytest.mark.slow
def test_consequences_table(tiny_run):
    """Every comparison's pairs, both groups and three effects each; the random policy changes outcomes."""
    out, report = tiny_run
    table = pd.read_csv(out / "consequences.csv", keep_default_na=False, na_values=[""])
    assert tuple(table.columns) == SCHEMAS["consequences"]
    pairs = table[table["pair"] != "pooled"].drop_duplicates("pair")
    assert list(pairs["pair"]) == [
        "ts-1@30 -> ts-1@60", "ts-2@30 -> ts-2@60", "iq-1@30 -> iq-1@60", "iq-2@30 -> iq-2@60",
        "ts-1@60 -> ts-2@60", "iq-1@60 -> iq-2@60",
        "ts-1@60 -> iq-1@60", "ts-1@60 -> iq-2@60", "ts-2@60 -> iq-1@60", "ts-2@60 -> iq-2@60",
        "ts-1@60 -> random", "ts-2@60 -> random", "iq-1@60 -> random", "iq-2@60 -> random"]
    assert list(pairs["context_set"]) == ["col-ts"] * 2 + ["col-iq"] * 2 + ["col-ts", "col-iq"] + ["col"] * 4 \
        + ["col-ts"] * 2 + ["col-iq"] * 2
    assert list(pairs["reward"]) == ["ts", "ts", "iq", "iq", "ts", "iq", "ts", "ts", "ts", "ts", "ts", "ts", "iq", "iq"]
    # six rows per pair (effect x actions), a pooled group per comparison with several pairs
    assert (table.groupby("pair", sort=False).size().drop("pooled") == 6).all()
    pooled = table[table["pair"] == "pooled"].drop_duplicates(["comparison", "group"])
    assert list(zip(pooled["comparison"], pooled["group"], pooled["n_pairs"])) == [
        ("convergence", "ts", 2), ("convergence", "iq", 2), ("reward models", "ts-iq", 4), ("random", "ts", 2),
        ("random", "iq", 2)]
    assert set(table["continuations"]) == {TINY.consequences.continuations}
    # every context of the pair's set in one of the two groups, K continuations each
    contexts = {name: len(ContextSet.read_jsonl(out / "contexts" / f"{name}.jsonl")) for name in ("col", "col-ts")}
    first = table[(table["pair"] == "ts-1@60 -> iq-1@60") & (table["effect"] == "total")]
    assert first["count"].sum() == 2 * contexts["col"] and first["contexts"].sum() >= contexts["col"]
    # the outcome changed is the complement of benign churn; rates are shares
    assert np.allclose(table["outcome_changed"], 1 - table["benign_churn_rate"], equal_nan=True)
    rates = table[["outcome_changed", "negative_flip_rate", "positive_flip_rate"]].to_numpy()
    assert np.nanmin(rates) >= 0 and np.nanmax(rates) <= 1
    # the sanity end: against the random policy most actions differ, and where they do most outcomes change
    random = table[(table["comparison"] == "random") & (table["pair"] == "pooled") & (table["effect"] == "total")]
    differ = random[random["actions"] == "differ"]
    assert (differ["count"] > random[random["actions"] == "agree"]["count"].to_numpy()).all()
    assert (differ["outcome_changed"] > 0.5).all()
    # where the actions agree, the one action changes nothing: (c) is (b) there
    agree = table[(table["effect"] == "action") & (table["actions"] == "agree") & (table["count"] > 0)]
    assert (agree["outcome_changed"] == 0).all() and (agree["negative_flip_rate"] == 0).all()
    text = report.read_text()
    assert "Trained (ts) → random, the sanity end, 2 pairs: the actions differ in" in text
    assert "[consequences.csv](consequences.csv)" in text and "![" in text.split("## Does the difference matter?")[1]


@pytest.mark.slow
def test_rerun_reuses_everything_and_gives_the_same_tables(tiny_run, tmp_path, caplog):
    out, _ = tiny_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    before = _mtimes(copy, "responses", "runs", *DERIVED)
    with caplog.at_level(logging.INFO, logger="simscore"):
        run_experiment(TINY, copy, n_jobs=1, progress=False)
    for message in ("training: 0 runs trained, 4 had finished", "responses: 0 new response files",
                    "tables: kept (made by an earlier run from the same responses and settings)",
                    "explain: kept (made by an earlier run from the same responses and settings)",
                    "figures and report: kept (made by an earlier run from the same tables)"):
        assert message in caplog.text and message in (copy / "run.log").read_text(encoding="utf-8"), message
    assert _mtimes(copy, "responses", "runs", *DERIVED) == before  # nothing written again
    for name in _tables(out):
        assert filecmp.cmp(out / f"{name}.csv", copy / f"{name}.csv", shallow=False), name


@pytest.mark.slow
def test_steps_beside_the_scoring_give_the_same_files(held_run, tmp_path, caplog):
    """With two jobs the held-out strata, the reference policies, the consequences and explain run in a worker
    beside the scoring and the figures (the reference policies and the consequences here instead, when the worker
    has not begun them by the end of the scoring): every table, explain's files, the figures and the report equal
    the one-process run's, byte for byte (training and responses are kept; only their bookkeeping,
    ``cache/pieces.json``, is dropped)."""
    out = held_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "cache" / "pieces.json").unlink()
    with caplog.at_level(logging.INFO, logger="simscore"):
        run_experiment(HELD, copy, n_jobs=2, progress=False)
    log = (copy / "run.log").read_text(encoding="utf-8")
    for said in ("flow strata on the held-out set (beside the scoring): ", "held out: 10 comparisons stratified by ",
                 "final, handcrafted and random policies on the final evaluation users", "continuations per context",
                 "(beside the scoring and the figures)", "explain: wrote "):  # a line the worker logs
        assert said in caplog.text and said in log, said
    made = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.suffix in (".csv", ".json", ".md",
                                                                                               ".png")
                  and p.parts[len(out.parts)] not in ("runs", "responses", "contexts", "logs", "cache"))
    assert len(made) > 40 and {Path("explain/explain.md"), Path("figures/convergence.png"), Path("flow_strata.csv"),
                               Path("figures/flow_strata.png")} <= set(made)
    for name in made:
        ours, theirs = (copy / name).read_bytes(), (out / name).read_bytes()
        assert ours.replace(b"Explain: copy", b"Explain: " + out.name.encode()) == theirs, name


@pytest.mark.slow
def test_a_rerun_remakes_what_changed_and_only_that(tiny_run, tmp_path, caplog, figures_off):
    out, _ = tiny_run
    folder = tmp_path / "x"
    shutil.copytree(out, folder)
    # [findings]: the tables' record and the report change; explain/ is made from the responses alone
    other = dataclasses.replace(TINY, findings=dataclasses.replace(TINY.findings, converged_tmr=0.95))
    explain_before = _mtimes(folder, "explain")
    with caplog.at_level(logging.INFO, logger="simscore"):
        run_experiment(other, folder, n_jobs=1, progress=False)
    # the consequences are made from the checkpoints, C_col and their own settings: kept
    assert "consequences: kept (made by an earlier run from the same checkpoints, contexts and settings)" in caplog.text
    assert json.loads((folder / "tables.json").read_text())["meta"]["findings"]["converged_tmr"] == 0.95
    assert _mtimes(folder, "explain") == explain_before
    for name in _tables(out):  # the numbers are the same
        assert filecmp.cmp(out / f"{name}.csv", folder / f"{name}.csv", shallow=False), name
    # a missing file of a piece: that piece (and what is made from it) again
    (folder / "explain" / "churn.csv").unlink()
    kept = _mtimes(folder, "tables.json", "convergence.csv")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="simscore"):
        run_experiment(other, folder, n_jobs=1, progress=False)
    assert (folder / "explain" / "churn.csv").is_file() and _mtimes(folder, "tables.json", "convergence.csv") == kept
    assert "tables: kept" in caplog.text and "explain: kept" not in caplog.text
    # explain/ written by hand with other settings: a run makes its own again
    assert main(["explain", str(folder), "--seed", "5", "--permutations", "20", "--quiet"]) == 0
    assert "Seed 5, 20 permutations." in (folder / "explain" / "explain.md").read_text()
    run_experiment(other, folder, n_jobs=1, progress=False)
    assert "Seed 0, 200 permutations." in (folder / "explain" / "explain.md").read_text()
    # no cache/: everything made again, to the same numbers
    shutil.rmtree(folder / "cache")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="simscore"):
        run_experiment(TINY, folder, n_jobs=1, progress=False)
    assert "kept" not in caplog.text
    for name in _tables(out):
        assert filecmp.cmp(out / f"{name}.csv", folder / f"{name}.csv", shallow=False), name
    assert filecmp.cmp(out / "report.md", folder / "report.md", shallow=False)


@pytest.mark.slow
def test_every_long_step_logs_its_progress_away_from_a_terminal(tmp_path, monkeypatch):
    import simscore.progress

    monkeypatch.setattr(simscore.progress, "LOG_INTERVAL", 0.01)  # every step of the tiny run counts as long
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_experiment(dataclasses.replace(TINY, seeds=(1,), measures=("tmr", "bleu4")), tmp_path / "run", n_jobs=1)
    log = (tmp_path / "run" / "run.log").read_text(encoding="utf-8")
    # the last turns rest on one dialogue: said in the log, not as a warning
    assert [str(w.message) for w in caught if issubclass(w.category, MissingValueWarning)] == []
    assert re.search(r"\] per turn, reward models \(final checkpoint\): a 95% interval from one dialogue is undefined "
                     r"\(NaN\): one value says nothing about its spread \(turn \d+ tmr, ", log)
    for step in ("training", "collecting", "responding", "scoring", "final, handcrafted and random policies",
                 "consequences: replaying", "consequences: flip rates", "explain", "figures"):
        assert re.search(rf"\] {step}: \d+/\d+ [a-z]+ done.*, (\d+m)?\d+s\n", log), step


@pytest.mark.slow
def test_interrupted_run_continues(tiny_run, tmp_path, figures_off):
    out, _ = tiny_run
    partial = tmp_path / "partial"
    shutil.copytree(out, partial)
    # lose the last checkpoint of one run, some responses and everything after them
    run = partial / "runs" / "ts-2"
    for path in (run / "checkpoints").glob("ckpt-000060.*"):
        path.unlink()
    shutil.rmtree(partial / "responses" / "gen" / "iq-1")
    for path in partial.glob("*.csv"):
        path.unlink()
    run_experiment(TINY, partial, n_jobs=1, progress=False)
    for name in _tables(out):
        assert filecmp.cmp(out / f"{name}.csv", partial / f"{name}.csv", shallow=False), name


@pytest.mark.slow
def test_other_training_settings_are_refused(tiny_run, tmp_path):
    out, _ = tiny_run
    folder = tmp_path / "x"
    shutil.copytree(out, folder)
    other = dataclasses.replace(TINY, training=dataclasses.replace(TINY.training, sigma=2.0), collect_seed=7)
    before = (folder / "experiment.json").read_bytes()
    with pytest.raises(ExperimentError, match=r"other settings than this configuration: \[training\] sigma = 5.0 there, "
                                              r"2.0 here \(they made the training runs \(runs/\).*\[contexts\] "
                                              r"collect_seed = 2000003 there, 7 here"):
        run_experiment(other, folder, n_jobs=1, progress=False)
    assert (folder / "experiment.json").read_bytes() == before  # the folder's record is kept
    # with experiment.json gone, the pieces themselves still say what made them
    (folder / "experiment.json").unlink()
    with pytest.raises(ExperimentError, match=r"logs/ts-1.jsonl was made with other settings than this run's: "
                                              r"\[contexts\] collect_seed 2000003 \(this run: 7\)"):
        run_experiment(dataclasses.replace(TINY, collect_seed=7), folder, n_jobs=1, progress=False)
    shutil.rmtree(folder / "logs")  # collected again, with the new seed: the old C_col does not fit them
    with pytest.raises(ExperimentError, match=r"contexts/col-ts.jsonl was made with other settings than this run's: "
                                              r"collected from ts-1 \(seed 2000003, scale 1.0, 2 dialogues\), ts-2 .*"
                                              r"this run: ts-1 \(seed 7, scale 1.0, 2 dialogues\)"):
        run_experiment(dataclasses.replace(TINY, collect_seed=7), folder, n_jobs=1, progress=False)


@pytest.mark.slow
def test_other_chance_seed_remakes_the_random_responses(tiny_run, tmp_path, caplog, figures_off):
    from contexts import ContextSet
    from policies import RandomPolicy, SummaryPolicyAdapter
    from simscore.policy import run_policy
    from simscore.responses import Responses

    out, _ = tiny_run
    folder = tmp_path / "x"
    shutil.copytree(out, folder)
    other = dataclasses.replace(TINY, random_seed=5)
    with caplog.at_level(logging.INFO, logger="simscore"):
        run_experiment(other, folder, n_jobs=1, progress=False)
    assert "responses/col/random/random.jsonl was made with [chance] random_seed 0, this run's is 5: made again" \
        in caplog.text
    for name in ("col", "gen"):
        saved = Responses.read_jsonl(folder / "responses" / name / "random" / "random.jsonl")
        contexts = ContextSet.read_jsonl(folder / "contexts" / f"{name}.jsonl")
        fresh = run_policy(SummaryPolicyAdapter(RandomPolicy(seed=5), name="random"), contexts, name="random")
        assert saved.provenance["seed"] == 5 and saved.actions() == fresh.actions()
    assert not filecmp.cmp(out / "chance.csv", folder / "chance.csv", shallow=False)
    assert filecmp.cmp(out / "seeds.csv", folder / "seeds.csv", shallow=False)  # nothing else changes
    assert '"random_policy": 5' in (folder / "report.md").read_text()


@pytest.mark.slow
def test_generated_contexts_can_be_turned_off_and_on(tiny_run, tmp_path, figures_off):
    out, _ = tiny_run
    folder = tmp_path / "x"
    shutil.copytree(out, folder)
    run_experiment(dataclasses.replace(TINY, generated=False), folder, n_jobs=1, progress=False)
    assert set(pd.read_csv(folder / "convergence.csv")["context_set"]) == {"col"}
    assert set(pd.read_csv(folder / "explain" / "agreement.csv")["context_set"]) == {"col"}
    run_experiment(TINY, folder, n_jobs=1, progress=False)  # on again: the C_gen pieces are still there
    for name in _tables(out):
        assert filecmp.cmp(out / f"{name}.csv", folder / f"{name}.csv", shallow=False), name


@pytest.mark.slow
def test_report_command_rebuilds_from_tables(tiny_run, tmp_path, capsys):
    out, report = tiny_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "report.md").unlink()
    shutil.rmtree(copy / "figures")
    assert main(["report", str(copy)]) == 0
    assert (copy / "report.md").read_text() == report.read_text()
    assert len(list((copy / "figures").glob("*.png"))) == 11  # consequences.png and behaviour_map.png among them


@pytest.mark.slow
def test_dask_cluster_gives_identical_results(tiny_run, tmp_path, caplog):
    """The jobs a Dask cluster runs (training, responses and the consequences' replays) give the same bytes."""
    distributed = pytest.importorskip("dask.distributed")
    from simscore.analysis.tables_io import load_tables
    from simscore.app.experiment.consequences import consequences_table

    out, _ = tiny_run
    other = tmp_path / "dask"
    shutil.copytree(out, other)
    shutil.rmtree(other / "runs")
    shutil.rmtree(other / "responses")
    settings = TINY.for_consequences
    assert settings is not None
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        with caplog.at_level(logging.INFO, logger="simscore"):
            run_experiment(TINY, other, scheduler=cluster.scheduler_address, progress=False)
        replayed = consequences_table(settings, ExperimentFolder(other), scheduler=cluster.scheduler_address)
    assert "training: 4 runs trained, 0 had finished" in caplog.text
    for path in [*(out / "runs").rglob("ckpt-*"), *(out / "responses").rglob("*.jsonl")]:
        assert filecmp.cmp(path, other / path.relative_to(out), shallow=False), path
    # what is made from them is then the same: kept, as from the same bytes
    assert "tables: kept" in caplog.text and "explain: kept" in caplog.text
    for name in _tables(out):
        assert filecmp.cmp(out / f"{name}.csv", other / f"{name}.csv", shallow=False), name
    saved = load_tables(out / "cache" / "consequences").tables["consequences"]
    pd.testing.assert_frame_equal(replayed, saved, check_exact=True)


def test_a_folder_in_use_is_refused_before_any_work(tmp_path, capsys):
    from simscore.app.experiment.folder import ExperimentFolder
    from simscore.errors import FolderInUseError

    folder = ExperimentFolder(tmp_path / "busy")
    folder.root.mkdir()
    with folder.lock("simscore run other.toml --out busy"):
        with pytest.raises(FolderInUseError, match="in use by another process: simscore run other.toml --out busy"):
            run_experiment(TINY, folder.root, n_jobs=1, progress=False)
        assert main(["demo", "--out", str(folder.root), "--quiet"]) == 2
        assert "simscore demo: error: " in capsys.readouterr().err
        assert [p.name for p in folder.root.iterdir()] == ["simscore.lock"]  # nothing written


def test_each_step_gets_its_own_settings():
    config = dataclasses.replace(TINY, collect_scale=0.5, random_seed=7)
    runs = (RunId("ts", 1), RunId("ts", 2), RunId("iq", 1), RunId("iq", 2))
    collection = config.for_collection
    assert (collection.runs, collection.rewards, collection.dialogues, collection.seed, collection.scale,
            collection.generated) == (runs, ("ts", "iq"), 2, 2_000_003, 0.5, True)
    assert collection.simulation == config.training.simulation()
    scoring = config.for_scoring
    assert scoring.runs == runs and scoring.measures == ("tmr", "dmr", "cer", "cmr")
    assert scoring.bootstrap == Bootstrap(n_resamples=100, confidence=0.95, seed=0)
    reference = config.for_reference
    assert (reference.random_seed, reference.eval_seed, reference.eval_dialogues, reference.eval_scale) == (
        7, config.training.eval_seed, 10, config.training.eval_scale)
    assert config.for_held_out is None
    consequences = config.for_consequences
    assert consequences is not None and consequences.runs == runs and consequences.bootstrap == scoring.bootstrap
    assert (consequences.continuations, consequences.seed, consequences.random_seed, consequences.collect_scale) == (
        2, 4_000_037, 7, 0.5)
    assert dataclasses.replace(config, consequences=ConsequencesConfig(enabled=False)).for_consequences is None
    held = dataclasses.replace(config, held_out=HeldOutConfig(dialogues=3)).for_held_out
    assert held is not None and held.held_out.dialogues == 3 and held.scale == 0.5 and held.bootstrap == scoring.bootstrap


@pytest.mark.slow
def test_a_step_runs_alone_on_its_own_settings(tiny_run):
    """The reference policies' step, given by hand only what it reads, makes the rows the run made."""
    out, _ = tiny_run
    saved = pd.read_csv(out / "policies.csv")
    one = ReferenceSettings(runs=(RunId("iq", 2),), random_seed=TINY.random_seed, eval_seed=TINY.training.eval_seed,
                            eval_dialogues=10, eval_scale=TINY.training.eval_scale,
                            simulation=TINY.training.simulation())
    table = reference_policies(one, ExperimentFolder(out))
    assert list(table["policy"]) == ["iq-2", "handcrafted", "random"] and list(table["n"]) == [10, 10, 10]
    row = saved.set_index("policy").loc["iq-2"]
    assert table.iloc[0]["success_rate"] == row["success_rate"] and table.iloc[0]["avg_iq"] == row["avg_iq"]
