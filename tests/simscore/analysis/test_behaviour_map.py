"""Tests of simscore.analysis.behaviour_map and ``simscore map``: the map of many policies."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from simscore import Act, Response, Responses, compare
from simscore.analysis import behaviour_map as bm
from simscore.analysis.behaviour_map import behaviour_map
from simscore.app.cli import main
from simscore.errors import ContextMismatchError, InvalidResponseError, MissingValueWarning, SharedSeedWarning
from simscore.measures.base import unique_pairs
from simscore.samples import SampledResponses
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
    with pytest.raises(InvalidResponseError, match="policy 'x': expected simscore.Responses or "
                                                   "simscore.samples.SampledResponses, got list"):
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
    named_json = [str(Path(f).with_suffix(".json")) for f in files]  # a responses file may end in .json
    for plain, named in zip(files, named_json, strict=True):
        Path(named).write_bytes(Path(plain).read_bytes())
    assert main(["map", *named_json, "--out", str(tmp_path / "json"), "--measures", "tmr", "--resamples", "10"]) == 0
    assert "5 policies on 60 shared contexts (60 contexts resampled 10 times)" in capsys.readouterr().out
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


# --- sampled responses: K responses per context -------------------------------------------------------------------


def _sampled(rows: dict[str, list[str]], name: str = "", seed: int | None = None) -> SampledResponses:
    provenance = {} if seed is None else {"samples": {"count": len(next(iter(rows.values()))), "seed": seed,
                                                       "drawn": True}}
    return SampledResponses({c: [Response(Act.parse(a)) for a in acts] for c, acts in rows.items()}, policy=name,
                            provenance=provenance)


def test_sampled_policies_by_hand() -> None:
    """Three policies, two contexts, two samples each (h = hello(), b = bye()); TMR counts equal pairs.

    p: c1 [h, b], c2 [b, b];  q: c1 [h, h], c2 [b, h];  r: c1 [b, b], c2 [h, h].
    A pair's score at a context is the share of equal pairs among its 2 x 2 cross pairs:
    p-q: c1 2/4, c2 2/4 -> 0.5;  p-r: c1 2/4, c2 0/4 -> 0.25;  q-r: c1 0/4, c2 2/4 -> 0.25.
    The diagonal is the policy's one pair of its own samples: p: c1 0, c2 1 -> 0.5; q: 1, 0 -> 0.5; r: 1, 1 -> 1.
    Chance (two contexts: each one's other is the other): p at c1 against q at c2 {b, h}: 2/4, p at c2 against
    q at c1: 0/4 -> 0.25; p-r: [h, b] x [h, h] 2/4, [b, b] x [b, b] 4/4 -> 0.75; q-r: [h, h] x [h, h] 1,
    [b, h] x [b, b] 2/4 -> 0.75. Corrected (s - chance) / (1 - chance): p-q 1/3, p-r and q-r -2.
    """
    sides = {"p": _sampled({"c1": ["hello()", "bye()"], "c2": ["bye()", "bye()"]}),
             "q": _sampled({"c1": ["hello()", "hello()"], "c2": ["bye()", "hello()"]}),
             "r": _sampled({"c1": ["bye()", "bye()"], "c2": ["hello()", "hello()"]})}
    bmap = behaviour_map(sides, ["tmr"], bootstrap=Bootstrap(20))
    np.testing.assert_array_equal(bmap.similarity["tmr"].to_numpy(), [[0.5, 0.5, 0.25], [0.5, 0.5, 0.25],
                                                                       [0.25, 0.25, 1.0]])
    nan = np.nan
    np.testing.assert_array_equal(bmap.chance["tmr"].to_numpy(), [[nan, 0.25, 0.75], [0.25, nan, 0.75],
                                                                   [0.75, 0.75, nan]])
    np.testing.assert_allclose(bmap.corrected["tmr"].to_numpy(), [[nan, 1 / 3, -2], [1 / 3, nan, -2], [-2, -2, nan]])
    assert bmap.samples == {"p": 2, "q": 2, "r": 2} and bmap.contexts == 2
    assert bmap.neighbours["tmr"].loc["p", "nearest"] == "q"


def _random_sampled(rng: np.random.Generator, k: int, name: str, n: int = 25) -> SampledResponses:
    """``k`` samples per context; some samples lack an action (a text-only answer: NaN pairs under TMR)."""
    rows = {}
    for c in range(n):
        drawn = []
        for _ in range(k):
            act = ACTS[int(rng.integers(len(ACTS)))]
            drawn.append(Response(None, "no act") if rng.random() < 0.1 else Response(Act.parse(act), f"I {act}"))
        rows[f"c{c}"] = drawn
    return SampledResponses(rows, policy=name)


@pytest.mark.parametrize("table", [True, False])  # the distinct pairs marked in a table, or sorted and merged
def test_a_sampled_map_holds_compare_s_numbers_to_the_bit(table: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ordered pair's entry is compare's mean (the mean over contexts of the mean over the K x K cross
    pairs) and the diagonal compare's within-policy agreement, the same floats: both score the same pairs and
    sum each context's pairs in the same order."""
    if not table:
        monkeypatch.setattr(bm, "_TABLE", 0)
        monkeypatch.setattr(bm, "_BLOCK", 20)  # blocks of a few contexts
    rng = np.random.default_rng(3)
    sides = {f"s{k}": _random_sampled(rng, 3, f"s{k}") for k in range(4)}
    measures = ["tmr", "dmr", "cer", "cmr", "bleu4"]
    bmap = behaviour_map(sides, measures, bootstrap=Bootstrap(30))
    for a, b in itertools.product(sides, repeat=2):
        with pytest.warns(MissingValueWarning):
            pair = compare(sides[a], sides[b], measures, bootstrap=Bootstrap(0), n_permutations=1)
        for m in measures:
            want = pair.consistency.table.at[m, "within_a"] if a == b else pair.mean(m)
            assert bmap.similarity[m].at[a, b] == want, (m, a, b)
    assert bmap.samples == dict.fromkeys(sides, 3)


def test_plain_sampled_and_mixed_sides_score_the_mean_over_cross_pairs() -> None:
    """A plain policy is one sample per context (SampledResponses.single maps the same); sides of 1, 2 and 3
    samples mix, each entry the mean over contexts of the mean of its cross pairs (counted here in loops)."""
    rng = np.random.default_rng(5)
    sides: dict[str, Responses | SampledResponses] = {
        "one": _random_sampled(rng, 1, "one").sample(0), "two": _random_sampled(rng, 2, "two"),
        "three": _random_sampled(rng, 3, "three")}
    bmap = behaviour_map(sides, ["tmr"], bootstrap=Bootstrap(20))
    assert bmap.samples == {"one": 1, "two": 2, "three": 3}

    def drawn(name: str, c: str) -> list[Response]:
        side = sides[name]
        return [side[c]] if isinstance(side, Responses) else list(side[c])

    for a, b in itertools.permutations(sides, 2):
        per_context = []
        for c in sides["one"].ids:
            equal = [x.action == y.action for x in drawn(a, c) for y in drawn(b, c)
                     if x.action is not None and y.action is not None]
            if equal:
                per_context.append(sum(equal) / len(equal))
        assert bmap.similarity["tmr"].at[a, b] == pytest.approx(np.mean(per_context), abs=1e-12)
    assert bmap.similarity["tmr"].at["one", "one"] == 1.0
    single = dict(sides, one=SampledResponses.single(sides["one"]))  # type: ignore[arg-type]
    again = behaviour_map(single, ["tmr"], bootstrap=Bootstrap(20))
    pd.testing.assert_frame_equal(again.pairs_table(), bmap.pairs_table(), check_exact=True)


def _old_pair_scores(measure: Any, sides: list[Responses], ids: list[str],
                     shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """behaviour_map's per-context scores before sampled responses (commit 30aa696), the reference of the plain path."""
    pick = Responses.actions if measure.level == "action" else Responses.texts
    columns = [pick(side, ids) for side in sides]
    n, c = len(sides), len(ids)
    flat = [value for column in columns for value in column]
    values, codes, _, inverse = unique_pairs(flat, flat)
    code = codes[inverse].reshape(n, c)
    first, second = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    symmetric = bool(getattr(measure, "symmetric", False))
    upper = first < second
    scored_pairs = upper if symmetric else first != second
    a = np.concatenate([code[first[scored_pairs]], code[first[upper]]]).reshape(-1)
    b = np.concatenate([code[second[scored_pairs]], code[second[upper]][:, shift]]).reshape(-1)
    pairs, where = np.unique(a * len(values) + b, return_inverse=True)
    distinct = measure.score_distinct(values, pairs // len(values), pairs % len(values))
    scored = distinct[where.reshape(-1)].reshape(-1, c)
    k = int(scored_pairs.sum())
    out = np.full((n, n, c), np.nan)
    chance = np.full((n, n, c), np.nan)
    out[scored_pairs] = scored[:k]
    if symmetric:
        out.transpose(1, 0, 2)[upper] = scored[:k]
    chance[upper] = scored[k:]
    chance.transpose(1, 0, 2)[upper] = scored[k:]
    same = measure.score_distinct(values, np.arange(len(values)), np.arange(len(values)))
    for k in range(n):
        out[k, k] = same[code[k]]
    return out, chance


def test_plain_responses_give_the_floats_they_gave_before_sampled_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole map of plain responses, every float, as the code before sampled responses computed it."""
    from simscore.measures import resolve_measures

    measures = [*resolve_measures(["tmr", "cer", "bleu4"]), resolve_measures("cmr")[0].__class__(calls="superset")]
    assert not measures[-1].symmetric  # both orders of each pair scored
    sides = _two_families()
    now = behaviour_map(sides, measures, bootstrap=Bootstrap(50))
    monkeypatch.setattr(bm, "_pair_scores", _old_pair_scores)
    before = behaviour_map(sides, measures, bootstrap=Bootstrap(50))
    for m in now.measures:
        for name in ("similarity", "ci_low", "ci_high", "chance", "corrected", "coords", "neighbours", "clusters"):
            pd.testing.assert_frame_equal(getattr(now, name)[m], getattr(before, name)[m], check_exact=True)
        assert now.linkage[m].tobytes() == before.linkage[m].tobytes()
    assert now.samples == dict.fromkeys(sides, 1)
    # and a few of them as they were (fractions of 60 contexts)
    assert now.similarity["tmr"].at["a1", "a2"].hex() == "0x1.b333333333333p-1"  # 0.85
    assert now.similarity["cer"].at["a1", "b1"].hex() == "0x1.bbbbbbbbbbbbcp-3"
    assert now.chance["cer"].at["a2", "noise"].hex() == "0x1.999999999999ap-3"  # 0.2


def test_sampled_inputs_are_checked_before_any_scoring() -> None:
    """Sides of different K are fine; an empty sampled side shares no context; one seed for two warns."""
    first = _sampled({"c1": ["hello()", "bye()"], "c2": ["bye()", "bye()"]}, seed=7)
    second = _sampled({"c1": ["hello()"] * 3, "c2": ["bye()"] * 3}, seed=7)
    third = _sampled({"c1": ["bye()"], "c2": ["hello()"]})
    with pytest.warns(SharedSeedWarning, match=r"'a' and 'b' \(seed 7\) were drawn with one seed"):
        behaviour_map({"a": first, "b": second, "c": third}, ["tmr"], bootstrap=Bootstrap(5))
    with pytest.raises(ContextMismatchError, match="the 3 policies share 0 context id"):
        behaviour_map({"a": first, "b": second, "none": SampledResponses({})}, ["tmr"])
    with pytest.raises(InvalidResponseError, match="context 'c1' has no samples"):
        SampledResponses({"c1": []})  # what the type allows: no context without samples


def test_the_command_maps_sampled_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three random policies of three samples each and the handcrafted one: read as compare reads them."""
    contexts = Path(__file__).resolve().parents[3] / "examples" / "contexts.jsonl"
    files = []
    for seed in (1, 2, 3):
        path = tmp_path / f"r{seed}.jsonl"
        assert main(["respond", "random", str(contexts), "--samples", "3", "--seed", str(seed), "--out",
                     str(path)]) == 0
        files.append(str(path))
    assert main(["respond", "handcrafted", str(contexts), "--out", str(tmp_path / "hc.jsonl")]) == 0
    files.append(str(tmp_path / "hc.jsonl"))
    capsys.readouterr()
    out = tmp_path / "map"
    assert main(["map", *files, "--out", str(out), "--measures", "tmr,dmr", "--resamples", "50"]) == 0
    printed = capsys.readouterr().out
    assert ("4 policies on 24 shared contexts (24 contexts resampled 50 times; samples per context: 3 for r1, r2, "
            "r3; 1 for hc)") in printed
    document = json.loads((out / "map.json").read_text())
    assert document["samples"] == {"r1": 3, "r2": 3, "r3": 3, "hc": 1}
    sides = {name: SampledResponses.read_jsonl(f) for name, f in zip(("r1", "r2", "r3"), files, strict=False)}
    expected = behaviour_map({**sides, "hc": Responses.read_jsonl(files[3])}, ["tmr", "dmr"],
                             bootstrap=Bootstrap(50))
    pairs = pd.read_csv(out / "pairs.csv")
    np.testing.assert_allclose(pairs["mean"], expected.pairs_table()["mean"], rtol=0, atol=1e-15)  # CSV's digits
    assert [row["tmr"] for row in document["diagonal"]] == list(np.diag(expected.similarity["tmr"]))
    assert document["diagonal"][3] == {"policy": "hc", "tmr": 1.0, "dmr": 1.0}


def test_the_map_s_percentiles_are_numpy_s_nan_aware_ones_bit_for_bit():
    """The intervals' percentiles over the resamples: the pairs without an undefined resample take numpy's
    vectorised path, the others nanpercentile's own; together exactly ``np.nanpercentile(boot, q, axis=0)``."""
    rng = np.random.default_rng(4)
    boot = rng.random((1000, 6, 6))
    boot[:, 0, 0] = 0.5  # constant
    boot[:, 1, 2] = rng.integers(0, 3, 1000) / 2  # ties
    boot[rng.random(1000) < 0.1, 2, 1] = np.nan  # some resamples undefined
    boot[:, 3, 4] = np.nan  # all undefined: NaN
    q = [2.5, 97.5]
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        expected = np.nanpercentile(boot, q, axis=0)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        ours = bm._percentiles(boot, q)
    assert ours.shape == expected.shape == (2, 6, 6)
    assert np.array_equal(ours, expected, equal_nan=True) and np.isnan(ours[:, 3, 4]).all()
    assert bm._percentiles(boot[:, :3, :1], q).tobytes() == np.nanpercentile(boot[:, :3, :1], q, axis=0).tobytes()
