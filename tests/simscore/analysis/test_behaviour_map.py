"""Tests of simscore.analysis.behaviour_map and ``simscore map``: the map of many policies."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simscore import Act, Response, Responses, compare
from simscore.analysis.behaviour_map import behaviour_map
from simscore.app.cli import main
from simscore.errors import ContextMismatchError, InvalidResponseError
from simscore.stats import Bootstrap

ACTS = ["hello()", "bye()", "request(food)", "request(area)", "inform(food=thai)", "inform(area=north)"]


def _policy(rng: np.random.Generator, base: list[str], flip: float, name: str, n: int = 60) -> Responses:
    """``base``'s acts, each replaced by a random one with probability ``flip``; texts name the act."""
    acts = [ACTS[int(rng.integers(len(ACTS)))] if rng.random() < flip else base[k] for k in range(n)]
    return Responses({f"c{k}": Response(Act.parse(a), f"I say {a.split('(')[0]} now.") for k, a in enumerate(acts)},
                     policy=name)


def _two_families(seed: int = 0) -> dict[str, Responses]:
    rng = np.random.default_rng(seed)
    first = [ACTS[int(rng.integers(len(ACTS)))] for _ in range(60)]
    second = [ACTS[int(rng.integers(len(ACTS)))] for _ in range(60)]
    return {"a1": _policy(rng, first, 0.1, "a1"), "a2": _policy(rng, first, 0.1, "a2"),
            "b1": _policy(rng, second, 0.1, "b1"), "b2": _policy(rng, second, 0.1, "b2"),
            "noise": _policy(rng, first, 1.0, "noise")}


def test_the_matrix_holds_each_pair_s_comparison_and_the_map_is_symmetric() -> None:
    sides = _two_families()
    bmap = behaviour_map(sides, ["tmr", "cmr", "bleu4"], bootstrap=Bootstrap(50))
    for measure in ("tmr", "cmr", "bleu4"):
        matrix = bmap.similarity[measure]
        for a, b in itertools.permutations(sides, 2):  # the very numbers of compare, pair by pair
            assert matrix.at[a, b] == compare(sides[a], sides[b], [measure], bootstrap=Bootstrap(0)).mean(measure)
        np.testing.assert_array_equal(matrix.to_numpy(), matrix.to_numpy().T)
        assert (np.diag(matrix) == 1.0).all()
        low, high = bmap.ci_low[measure].to_numpy(), bmap.ci_high[measure].to_numpy()
        assert (low <= matrix.to_numpy() + 1e-12).all() and (matrix.to_numpy() <= high + 1e-12).all()
        chance = bmap.chance[measure].to_numpy()
        np.testing.assert_array_equal(chance, chance.T)
        off = ~np.eye(5, dtype=bool)
        np.testing.assert_allclose(bmap.corrected[measure].to_numpy()[off],
                                   ((matrix.to_numpy() - chance) / (1 - chance))[off])
    assert (bmap.contexts, bmap.units, bmap.unit) == (60, 60, "contexts")


def test_the_chance_level_pairs_each_context_with_another_one() -> None:
    # a policy that says the same act everywhere agrees with another such policy at chance as much as anywhere
    same = {name: Responses({f"c{k}": Response(Act.parse(act)) for k in range(10)}) for name, act in
            (("x", "bye()"), ("y", "bye()"), ("z", "hello()"))}
    bmap = behaviour_map(same, ["tmr"], bootstrap=Bootstrap(20))
    assert bmap.chance["tmr"].at["x", "y"] == 1.0 and bmap.chance["tmr"].at["x", "z"] == 0.0
    assert np.isnan(bmap.corrected["tmr"].at["x", "y"])  # chance 1: nothing left to correct for


def test_the_families_cluster_with_their_support_and_nearest_neighbours() -> None:
    bmap = behaviour_map(_two_families(), ["tmr"], bootstrap=Bootstrap(300, seed=4))
    clusters = bmap.clusters["tmr"].set_index("members")
    assert clusters.at["a1 + a2", "support"] >= 0.95 and clusters.at["b1 + b2", "support"] >= 0.95
    assert clusters.at["a1 + a2 + b1 + b2 + noise", "support"] == 1.0  # all of them: every resample
    assert list(bmap.clusters["tmr"]["merge"]) == [1, 2, 3, 4]
    neighbours = bmap.neighbours["tmr"]
    assert neighbours.loc[["a1", "a2", "b1", "b2"], "nearest"].tolist() == ["a2", "a1", "b2", "b1"]
    assert (neighbours.loc[["a1", "a2", "b1", "b2"], "p"] < 0.01).all()  # nearer than the second, clearly
    coords = bmap.coords["tmr"]
    near = np.hypot(*(coords.loc["a1"] - coords.loc["a2"]))
    far = np.hypot(*(coords.loc["a1"] - coords.loc["b1"]))
    assert near < far / 3
    order = bmap.order["tmr"]
    assert abs(order.index("a1") - order.index("a2")) == 1 and abs(order.index("b1") - order.index("b2")) == 1


def test_the_same_inputs_give_the_same_map_and_clusters_resample_whole_units() -> None:
    sides = _two_families(seed=2)
    first = behaviour_map(sides, ["dmr"], bootstrap=Bootstrap(100, seed=9))
    second = behaviour_map(sides, ["dmr"], bootstrap=Bootstrap(100, seed=9))
    pd.testing.assert_frame_equal(first.pairs_table(), second.pairs_table())
    pd.testing.assert_frame_equal(first.clusters_table(), second.clusters_table())
    dialogues = [k // 6 for k in range(60)]  # ten dialogues of six turns
    grouped = behaviour_map(sides, ["dmr"], clusters=dialogues, unit="dialogue", bootstrap=Bootstrap(100, seed=9))
    assert (grouped.units, grouped.unit) == (10, "dialogue")
    pd.testing.assert_frame_equal(grouped.similarity["dmr"], first.similarity["dmr"])  # the means do not move
    assert not grouped.ci_low["dmr"].equals(first.ci_low["dmr"])


def test_bad_inputs_are_refused_naming_what_is_wrong() -> None:
    sides = _two_families()
    with pytest.raises(InvalidResponseError, match=r"takes 3 to 50 policies, got 2 \(two: simscore compare\)"):
        behaviour_map({k: sides[k] for k in ("a1", "a2")}, ["tmr"])
    with pytest.raises(InvalidResponseError, match="policy 'x': expected simscore.Responses, got list"):
        behaviour_map({"a1": sides["a1"], "a2": sides["a2"], "x": []}, ["tmr"])  # type: ignore[dict-item]
    lone = Responses({"elsewhere": Response(Act.parse("bye()"))})
    with pytest.raises(ContextMismatchError, match="the 3 policies share 0 context id"):
        behaviour_map({"a1": sides["a1"], "a2": sides["a2"], "lone": lone}, ["tmr"])
    with pytest.raises(ContextMismatchError, match="clusters holds 3 labels for 60 shared contexts"):
        behaviour_map(sides, ["tmr"], clusters=[1, 2, 3])
    with pytest.raises(ValueError, match="bootstrap.n_resamples"):
        behaviour_map(sides, ["tmr"], bootstrap=Bootstrap(0))


def test_the_command_writes_tables_figures_and_refuses_to_overwrite(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    files = []
    for name, responses in _two_families().items():
        responses.to_jsonl(tmp_path / f"{name}.jsonl")
        files.append(str(tmp_path / f"{name}.jsonl"))
    out = tmp_path / "map"
    assert main(["map", *files, "--out", str(out), "--measures", "tmr,bleu4", "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "5 policies on 60 shared contexts (60 contexts resampled 100 times)" in printed
    assert "cluster a1 + a2 at distance" in printed
    assert sorted(p.name for p in out.iterdir()) == ["clusters.csv", "map.json", "map_bleu4.png", "map_tmr.png",
                                                      "neighbours.csv", "pairs.csv"]
    assert (out / "map_tmr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pairs = pd.read_csv(out / "pairs.csv")
    assert len(pairs) == 2 * 5 * 4 and set(pairs["measure"]) == {"tmr", "bleu4"}
    document = json.loads((out / "map.json").read_text())
    assert document["policies"] == ["a1", "a2", "b1", "b2", "noise"] and document["units"] == 60
    assert document["pairs"][0] == {k: (None if isinstance(v, float) and np.isnan(v) else v)
                                    for k, v in pairs.iloc[0].to_dict().items()}
    assert main(["map", *files, "--out", str(out), "--measures", "tmr"]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["map", *files[:2], "--out", str(tmp_path / "two")]) == 2
    assert "give 3 to 50 responses files, got 2 (for two: simscore compare A B)" in capsys.readouterr().err
    assert not (tmp_path / "two").exists()


def test_the_command_resamples_the_dialogues_a_context_set_names(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    contexts = Path(__file__).resolve().parents[3] / "examples" / "contexts.jsonl"
    files = []
    for seed in (1, 2, 3):
        path = tmp_path / f"random{seed}.jsonl"
        assert main(["respond", "random", str(contexts), "--out", str(path), "--seed", str(seed)]) == 0
        files.append(str(path))
    capsys.readouterr()
    assert main(["map", *files, "--out", str(tmp_path / "m"), "--contexts", str(contexts), "--cluster",
                 "dialogue_id", "--resamples", "50"]) == 0
    assert "3 policies on 24 shared contexts (4 dialogue_id resampled 50 times)" in capsys.readouterr().out
    assert main(["map", *files, "--out", str(tmp_path / "n"), "--contexts", str(contexts), "--cluster", "task"]) == 2
    assert "--cluster: the context set has no metadata column 'task'" in capsys.readouterr().err


TAU2 = Path(__file__).resolve().parents[3] / "examples" / "data" / "tau2"


def test_the_command_maps_agent_logs_task_by_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """τ²-bench results files are read per task, the tasks resampled; each pair's value is compare's on the
    trajectories (gpt-4.1 against its fine-tune: TMR 2 of 6 tasks, as examples/compare_tool_agents.py prints)."""
    from contexts.transcripts import read_tau2_results

    files = [TAU2 / f"airline_{name}_6_tasks.json" for name in ("gpt-4.1", "gpt-4.1-sft", "gpt-4o")]
    out = tmp_path / "map"
    assert main(["map", *map(str, files), "--out", str(out), "--measures", "tmr,cmr", "--resamples", "50"]) == 0
    assert "3 policies on 6 shared contexts (6 task_id resampled 50 times)" in capsys.readouterr().out
    pairs = pd.read_csv(out / "pairs.csv").set_index(["measure", "a", "b"])
    a, b = (read_tau2_results(f, unit="task").responses for f in files[:2])
    expected = compare(a, b, ["tmr", "cmr"], bootstrap=Bootstrap(1))
    assert pairs.at[("tmr", a.policy, b.policy), "mean"] == expected.mean("tmr") == pytest.approx(2 / 6)
    assert pairs.at[("cmr", a.policy, b.policy), "mean"] == expected.mean("cmr")
    assert json.loads((out / "map.json").read_text())["unit"] == "task_id"


def test_the_command_reads_chat_transcripts_with_format_chat(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Chat transcripts (JSON Lines, which would be taken for responses files) are read with --format chat."""
    from tests.contexts.transcript_samples import CONVERSATIONS, write_chat_transcripts

    files = [write_chat_transcripts(tmp_path / f"{name}.jsonl") for name in ("x", "y")]
    other = json.loads(json.dumps(CONVERSATIONS))
    other[1]["messages"][2]["tool_calls"][0]["function"]["name"] = "find_flight"  # trial 1 calls another tool
    files.append(tmp_path / "z.jsonl")
    files[-1].write_text("".join(json.dumps(c) + "\n" for c in other), encoding="utf-8")
    out = tmp_path / "map"
    assert main(["map", *map(str, files), "--format", "chat", "--out", str(out), "--measures", "tmr",
                 "--resamples", "20"]) == 0
    assert "3 policies on 2 shared contexts (1 task_id resampled 20 times)" in capsys.readouterr().out
    pairs = pd.read_csv(out / "pairs.csv").set_index(["a", "b"])
    assert pairs.at[("x", "y"), "mean"] == 1.0 and pairs.at[("x", "z"), "mean"] == 0.5
    assert main(["map", *map(str, files), "--out", str(tmp_path / "again")]) == 2  # taken for a responses file
    assert (f"{files[0]}, line 1: header format is missing, expected 'simscore-responses'; this looks like chat "
            "transcripts (one conversation a line): read them with --format chat") in capsys.readouterr().err


def test_a_group_s_support_says_whether_the_clustering_finds_it() -> None:
    """Two families of two: each family is a cluster in nearly every resample; a mixed pair is in none."""
    bmap = behaviour_map(_two_families(), ["tmr"], bootstrap=Bootstrap(200),
                         groups={"a": ["a1", "a2"], "b": ("b1", "b2"), "mixed": ["a1", "b1"]})
    groups = bmap.groups["tmr"].set_index("group")
    assert list(groups.index) == ["a", "b", "mixed"] and groups.loc["a", "members"] == "a1 + a2"
    assert groups.loc["a", "clustered"] == 1 and groups.loc["b", "clustered"] == 1
    assert groups.loc["a", "support"] >= 0.95 and groups.loc["b", "support"] >= 0.95
    assert groups.loc["mixed", "clustered"] == 0 and groups.loc["mixed", "support"] == 0.0
    # the support of a group the clustering has is that cluster's own support
    clusters = bmap.clusters["tmr"].set_index("members")
    assert groups.loc["a", "support"] == clusters.loc["a1 + a2", "support"]
    assert behaviour_map(_two_families(), ["tmr"], bootstrap=Bootstrap(5)).groups["tmr"].empty


@pytest.mark.parametrize(("groups", "message"), [
    ({"x": ["a1", "zz"]}, "group 'x': no policy named 'zz' in the map (it has a1, a2, b1, b2, noise)"),
    ({"x": ["a1", "a1"]}, "group 'x': needs 2 or more distinct policies, got ['a1', 'a1']"),
    ({"x": "a1"}, "group 'x': needs 2 or more distinct policies, got ['a1']"),
    (["a1", "a2"], "groups must map a name to policy names, got list"),
])
def test_a_bad_group_is_refused_before_any_scoring(groups, message) -> None:
    with pytest.raises(InvalidResponseError) as raised:
        behaviour_map(_two_families(), ["tmr"], bootstrap=Bootstrap(5), groups=groups)
    assert str(raised.value) == message


def test_the_long_tables_give_the_map_back_after_a_save(tmp_path) -> None:
    """long_tables -> save_tables (CSV and JSON) -> load_tables -> from_long_tables: the same map, float for float."""
    from simscore.analysis.behaviour_map import from_long_tables, long_tables
    from simscore.analysis.tables_io import load_tables, save_tables

    bmap = behaviour_map(_two_families(), ["tmr", "cer"], bootstrap=Bootstrap(50), groups={"a": ["a1", "a2"]})
    other = behaviour_map(dict(list(_two_families(1).items())[:3]), ["tmr", "cer"], bootstrap=Bootstrap(50))
    tables = {name: pd.concat([a, b], ignore_index=True) for (name, a), b in zip(
        long_tables(bmap, context_set="col", map="first").items(),
        long_tables(other, context_set="col", map="second").values(), strict=True)}
    save_tables(tmp_path, tables)
    back = from_long_tables(load_tables(tmp_path).tables, bootstrap=bmap.bootstrap, context_set="col", map="first")
    assert back.policies == bmap.policies and back.measures == bmap.measures
    assert (back.contexts, back.unit, back.units) == (60, "contexts", 60)
    for m in bmap.measures:
        for field in ("similarity", "ci_low", "ci_high", "chance", "corrected", "coords"):
            pd.testing.assert_frame_equal(getattr(back, field)[m], getattr(bmap, field)[m], check_exact=True)
        assert np.array_equal(back.linkage[m], bmap.linkage[m]) and back.order[m] == bmap.order[m]
        pd.testing.assert_frame_equal(back.clusters[m], bmap.clusters[m], check_dtype=False, check_exact=True)
        pd.testing.assert_frame_equal(back.groups[m], bmap.groups[m], check_dtype=False, check_exact=True)
    assert from_long_tables(tables, map="second").policies == other.policies
    with pytest.raises(ValueError, match="no behaviour map with {'map': 'third'} in the tables"):
        from_long_tables(tables, map="third")


def test_the_map_s_labels_stay_apart_and_inside_where_points_crowd() -> None:
    """Six τ²-bench agents, five of them close together on the map (CMR): no two labels overlap, none leaves the
    map, every label names its policy (long names by their start)."""
    from contexts.transcripts import read_tau2_results
    from simscore.plots.behaviour_map import LABEL_LENGTH, draw_map_page

    sides = {f.stem: read_tau2_results(f, unit="task").responses for f in sorted(TAU2.glob("*.json"))}
    figure = draw_map_page(behaviour_map(sides, ["cmr"], bootstrap=Bootstrap(20)), "cmr")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    map_ax = figure.axes[2]
    labels = [t for t in map_ax.texts]
    assert sorted(t.get_text() for t in labels) == sorted(s[:LABEL_LENGTH - 1] + "\u2026" if len(s) > LABEL_LENGTH
                                                          else s for s in sides)
    boxes = [t.get_window_extent(renderer) for t in labels]
    frame = map_ax.get_window_extent(renderer)
    for k, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, labels[k]
        for other in boxes[k + 1:]:
            assert not box.overlaps(other), (labels[k].get_text(), other)
