"""simscore explain on a tiny fake experiment folder whose answers are known."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contexts.generate import GridSpec, generate_grid
from simscore import Act, Response, Responses
from simscore.app.cli import main
from simscore.app.inspect.explain import explain, load_runs, summary_paragraph
from simscore.errors import SimscoreError

GRID = generate_grid(GridSpec(levels=(0.0, 1.0)))  # 48 contexts
IDS = list(GRID.ids)


def _acts(run: str, checkpoint: int) -> list[str]:
    """ts-1 == ts-2; iq-1 and iq-2 agree on 3/4 of the contexts; ts and iq never agree."""
    if run.startswith("ts"):
        return ["request(food)" if i % 2 == 0 else "request(area)" for i in range(len(IDS))]
    if run == "iq-1" and checkpoint == 1:
        return ["hello()"] * len(IDS)  # churn of iq-1 between its two checkpoints: 1
    acts = ["inform(food=thai)" if i % 2 == 0 else "reqmore()" for i in range(len(IDS))]
    if run == "iq-2":
        acts = ["reqmore()" if i % 4 == 0 else a for i, a in enumerate(acts)]
    return acts


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("experiment")
    (out / "contexts").mkdir()
    GRID.to_jsonl(out / "contexts" / "gen.jsonl")
    for run in ("ts-1", "ts-2", "iq-1", "iq-2"):
        for checkpoint in (1, 2):
            acts = _acts(run, checkpoint)
            responses = Responses({i: Response(Act.parse(a), f"{run} says {a}") for i, a in zip(IDS, acts)},
                                  policy=f"{run}@{checkpoint}")
            path = out / "responses" / "gen" / run / f"ckpt-{checkpoint:06d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            responses.to_jsonl(path)
    random = Responses({i: Response(Act.parse("bye()"), "bye") for i in IDS}, policy="random")
    (out / "responses" / "gen" / "random").mkdir()
    random.to_jsonl(out / "responses" / "gen" / "random" / "random.jsonl")
    return out


@pytest.fixture(scope="module")
def explained(folder: Path) -> Path:
    before = {p for p in folder.rglob("*")}
    path = explain(folder, seed=3, n_permutations=50, top=3)
    after = {p for p in folder.rglob("*")}
    assert all(p.is_relative_to(folder / "explain") for p in after - before)
    return path


def _csv(explained: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(explained.parent / f"{name}.csv")


def test_runs_are_found_and_random_skipped(folder: Path) -> None:
    runs = load_runs(folder, "gen")
    assert [(r.reward, r.seed, [c for c, _ in r.checkpoints]) for r in runs] == [
        ("iq", 1, [1, 2]), ("iq", 2, [1, 2]), ("ts", 1, [1, 2]), ("ts", 2, [1, 2])]


def test_outputs(explained: Path) -> None:
    names = {p.name for p in explained.parent.iterdir()}
    assert {"explain.md", "agreement.csv", "churn.csv", "seed_vs_reward.csv", "churn_floor.png",
            "disagreement_by_group.csv"} <= names
    text = explained.read_text()
    for heading in ("Chance-corrected agreement", "Churn floor", "seed difference smaller", "Where", "Why"):
        assert heading in text


def test_agreement_and_chance_correction(explained: Path) -> None:
    summary = _csv(explained, "agreement_summary").set_index("group")
    ts, iq, across = summary.loc["seeds within ts"], summary.loc["seeds within iq"], summary.loc["across reward models"]
    assert (ts["tmr"], ts["kappa_act"], ts["ac1_act"]) == (1.0, 1.0, 1.0)
    # iq: observed .75; shares (1/2, 1/2) vs (1/4, 3/4) -> p_e .5 -> kappa .5
    assert iq["tmr"] == pytest.approx(0.75) and iq["kappa_act"] == pytest.approx(0.5)
    # across: disjoint acts -> kappa 0; four categories of share 1/4 -> AC1 p_e 1/4 -> -1/3
    assert across["tmr"] == 0.0 and across["kappa_act"] == pytest.approx(0.0)
    pairs = _csv(explained, "agreement").set_index(["run_a", "run_b"])
    assert pairs.loc[("iq-1", "ts-1"), "ac1_act"] == pytest.approx(-1 / 3)
    # iq-2's shares (1/4, 3/4): pi = (1/4, 1/4, 1/8, 3/8) -> p_e 23/96 -> AC1 -23/73; the group mean averages both
    assert across["ac1_act"] == pytest.approx((-1 / 3 - 23 / 73) / 2)
    assert across["pairs"] == 4 and ts["pairs"] == 1


def test_churn_floor_uses_consecutive_checkpoints(explained: Path) -> None:
    churn = _csv(explained, "churn").set_index("run")["churn"]
    assert churn.to_dict() == {"iq-1": 1.0, "iq-2": 0.0, "ts-1": 0.0, "ts-2": 0.0}
    floor = _csv(explained, "churn_floor").set_index("what")["disagreement"]
    assert floor["churn within ts runs (last third)"] == 0.0
    assert floor["churn within iq runs (last third)"] == 0.5
    assert floor["across reward models"] == 1.0 and floor["seeds within iq"] == pytest.approx(0.25)


def test_seeds_closer_than_reward_models(explained: Path) -> None:
    row = _csv(explained, "seed_vs_reward").iloc[0]
    assert row["within_tmr"] == pytest.approx(0.875) and row["across_tmr"] == 0.0
    assert row["difference"] == pytest.approx(0.875) and row["n"] == 48
    assert (row["units"], row["unit"]) == (48, "contexts")  # generated contexts: each its own unit
    assert row["p_value"] < 0.05


def test_separating_contexts_and_two_sample(explained: Path) -> None:
    sep = pd.read_csv(explained.parent / "disagreement_by_group.csv")
    assert set(sep["disagreement"]) == {1.0}  # ts and iq never agree, in any group
    text = explained.read_text()
    # the top contexts separate perfectly (iq seeds agree there: index % 4 != 0) and show both policies
    for i in (1, 2, 3):
        assert f"| {IDS[i]} | 1.000 | 2 | 0.000 | 4 | 1.000 |" in text
    assert "ts-1 says request(area)" in text and "iq-1 says reqmore()" in text
    probe = _csv(explained, "probe").iloc[0]
    assert "one class" in probe["probe_note"]  # ts-1 and iq-1 disagree everywhere: nothing to predict
    assert probe["two_sample_accuracy"] > 0.9 and probe["two_sample_p"] == pytest.approx(1 / 51)


def test_deterministic(folder: Path, explained: Path, tmp_path: Path) -> None:
    first = {p.name: p.read_bytes() for p in explained.parent.glob("*.csv")}
    explain(folder, seed=3, n_permutations=50, top=3)
    assert {p.name: p.read_bytes() for p in explained.parent.glob("*.csv")} == first


def test_summary_paragraph(folder: Path, explained: Path) -> None:
    text = summary_paragraph(folder)
    assert text is not None and "explain/explain.md" in text and "87.5%" in text
    # the p-value to the precision of the test's permutations, never more digits than they resolve
    assert re.search(r"paired p (=|≤) 0\.\d{1,2} \(\d+ permutations\)", text), text


def test_cli_and_empty_folder(folder: Path, explained: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["explain", str(folder), "--permutations", "20"]) == 0
    assert "explain.md" in capsys.readouterr().out
    with pytest.raises(SimscoreError, match="no context set"):
        explain(tmp_path)


def test_report_links_explain(folder: Path, explained: Path, tmp_path: Path) -> None:
    from simscore.app.report.document import build_report

    text = build_report({}, {}, base=folder)
    assert "[explain/explain.md](explain/explain.md)" in text and "difference +0.875" in text
    assert "explain/explain.md" not in build_report({}, {}, base=tmp_path)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"top": 0}, "top must be >= 1, got 0"),
        ({"seed": -1}, "seed must be >= 0, got -1"),
        ({"n_permutations": 0}, "n_permutations must be >= 1, got 0"),
        ({"n_jobs": 0}, "n_jobs must be >= 1, got 0"),
    ],
)
def test_bad_options_are_named_before_any_work(tmp_path: Path, options, message) -> None:
    # the folder does not even exist: the options are checked first (--top 0 was an IndexError at the end)
    with pytest.raises(ValueError, match=message):
        explain(tmp_path / "nowhere", **options)


def test_bad_command_line_options_are_argparse_errors(tmp_path: Path, capsys) -> None:
    for argv, message in ((["--top", "0"], "argument --top: expected a positive integer, got '0'"),
                          (["--permutations", "0"], "argument --permutations: expected an integer from 1 to"),
                          (["--seed", "x"], "argument --seed: expected a seed")):
        with pytest.raises(SystemExit):
            main(["explain", str(tmp_path), *argv])
        assert message in capsys.readouterr().err


def _collected_folder(out: Path) -> list[str]:
    """C_col of 8 dialogues of 4 turns; ts runs agree with each other and the iq runs with each other
    everywhere, and ts with iq only in dialogues 4 to 7."""
    from contexts.belief import BeliefState
    from contexts.collect import collect_contexts
    from contexts.dialogue_log import Dialogue, DialogueTurn

    foods = ["thai", "indian", "french", "italian"]
    dialogues = [Dialogue(f"d{d}", tuple(DialogueTurn(turn_index=t, belief=BeliefState(slots={"food": {foods[t]: 1.0}}))
                                         for t in range(4))) for d in range(8)]
    contexts = collect_contexts([({"domain": "restaurants", "source": {"name": "sim"}}, dialogues)], name="col")
    (out / "contexts").mkdir(parents=True)
    contexts.to_jsonl(out / "contexts" / "col.jsonl")
    ids = list(contexts.ids)
    for run in ("ts-1", "ts-2", "iq-1", "iq-2"):
        acts = ["request(food)" if run.startswith("ts") or int(i.split("/")[2][1:]) >= 4 else "bye()" for i in ids]
        for checkpoint in (1, 2):
            path = out / "responses" / "col" / run / f"ckpt-{checkpoint:06d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            Responses({i: Response(Act.parse(a)) for i, a in zip(ids, acts)}, policy=run).to_jsonl(path)
    return ids


@pytest.mark.slow
def test_collected_contexts_move_whole_dialogues(tmp_path: Path) -> None:
    from simscore.stats import paired_test

    ids = _collected_folder(tmp_path)
    explain(tmp_path, seed=3, n_permutations=300, top=3)
    row = _csv(tmp_path / "explain" / "explain.md", "seed_vs_reward").iloc[0]
    assert (row["within_tmr"], row["across_tmr"], row["difference"]) == (1.0, 0.5, 0.5)
    assert (row["n"], row["units"], row["unit"]) == (32, 8, "dialogues")
    # x - y is 1 on the 16 contexts of dialogues 0-3, else 0: of the 2**8 sign patterns of the eight
    # dialogues, the 16 with dialogues 0-3 positive are as extreme: exact p = 2 * 16/256
    assert row["p_value"] == pytest.approx(0.125)
    # with contexts as units (before): 16 independent +1s, no random sign pattern as extreme in 300
    x, y = np.ones(32), np.array([0.0 if int(i.split("/")[2][1:]) < 4 else 1.0 for i in ids])
    assert paired_test(x, y, n_permutations=300, seed=3).p_value == pytest.approx(2 / 301)
    # resampling the 8 dialogues, the mean difference is 4 * Binomial(8, 1/2) / 32 in steps of 1/8
    assert (row["ci_low"], row["ci_high"]) == (0.125, 0.875)
    probe = _csv(tmp_path / "explain" / "explain.md", "probe").iloc[0]
    assert (probe["two_sample_units"], probe["two_sample_unit"]) == (8, "dialogues")
    assert 1 / 301 <= probe["two_sample_p"] <= 1.0
