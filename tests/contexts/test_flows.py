"""Flow graphs, flow dialogues from every format, complex patterns, labels, summaries and samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contexts.belief import BeliefState
from contexts.collect import collect_contexts, import_convlab
from contexts.context import Context, ContextSet
from contexts.dialogue_log import Dialogue, DialogueTurn
from contexts.flows import SINK, SOURCE, FlowGraph
from contexts.flows.dialogues import FlowDialogue, FlowTurn, belief_slots, flow_dialogues, read_flow_dialogues
from contexts.flows.labels import FLOW_KEYS, flow_summary, label_contexts, sample_balanced
from contexts.flows.patterns import turn_patterns
from contexts.flows.plot import plot_flows
from simscore.errors import FileFormatError, InvalidContextError, OutputExistsError
from tests.conftest import CONVLAB

R = "restaurants"
FOOD, AREA, PRICE = (R, "food"), (R, "area"), (R, "pricerange")


def _turn(index: int, user_act: str | None = None, system_act: str | None = None, **slots: str) -> DialogueTurn:
    return DialogueTurn(
        turn_index=index, belief=BeliefState(slots={s: {v: 1.0} for s, v in slots.items()}),
        user_act=user_act, system_act=system_act,
    )


def _dialogue(dialogue_id: str, *states: dict[str, str]) -> Dialogue:
    return Dialogue(dialogue_id, (_turn(0), *(_turn(i + 1, **state) for i, state in enumerate(states))))


TRAIN = [
    _dialogue("t1", {"food": "thai"}, {"food": "thai", "area": "north"}),
    _dialogue("t2", {"food": "thai"}, {"food": "thai", "area": "north"}),
    _dialogue("t3", {"area": "east"}, {"food": "thai", "area": "east"}, {"food": "thai", "area": "east"}),
]


@pytest.fixture()
def graph() -> FlowGraph:
    return FlowGraph.from_dialogues(flow_dialogues(TRAIN, domain=R, source_name="train"))


# ----------------------------------------------------------------------------- the graph


def test_nodes_edges_and_counts(graph: FlowGraph) -> None:
    food, both, area = ("restaurants-food",), ("restaurants-area", "restaurants-food"), ("restaurants-area",)
    assert graph.nodes == (area, food, both)
    assert graph.slots == ("restaurants-area", "restaurants-food")
    assert (graph.n_nodes, graph.n_edges, graph.dialogues, graph.turn_pairs) == (3, 6, 3, 7)
    assert graph.node_count(both) == 4 and graph.node_count(("nope",)) == 0
    assert graph.edge_count(SOURCE, food) == 2 and graph.edge_count(both, both) == 1
    assert graph.edge_count(both, SINK) == 3 and graph.edge_count(food, area) == 0
    assert graph.vector(food) == (0, 1) and graph.vector(both) == (1, 1)
    with pytest.raises(KeyError, match="'hotel-area'"):
        graph.vector(("hotel-area",))
    assert graph.most_frequent_paths(1) == [((food, both), 2)]
    assert graph.describe() == {"abstraction": "per-domain", "nodes": 3, "edges": 6, "dialogues": 3,
                                "turn_pairs": 7, "slots": 2}
    view = graph.graph
    assert view.number_of_edges() == 6
    with pytest.raises(Exception, match="[Ff]rozen"):
        view.add_edge("x", "y")


@pytest.mark.parametrize(
    ("states", "seen", "exit", "exit_index", "exit_turn", "path_seen"),
    [
        ([{"food": "thai"}, {"food": "thai", "area": "north"}], True, None, None, None, True),
        # every edge was met, but never as one dialogue
        ([{"area": "east"}, {"food": "thai", "area": "north"}], True, None, None, None, False),
        ([{"food": "thai"}, {"food": "thai", "pricerange": "cheap"}], False, "node", 1, 2, False),
        ([{"food": "thai"}, {"area": "east"}], False, "edge", 1, 2, False),
        ([{"food": "thai"}], False, "end", 1, 1, False),
    ],
)
def test_walks(graph: FlowGraph, states, seen, exit, exit_index, exit_turn, path_seen) -> None:
    [dialogue] = flow_dialogues([_dialogue("x", *states)], domain=R)
    walk = graph.walk(dialogue)
    assert (walk.seen, walk.exit, walk.exit_index, walk.exit_turn, walk.path_seen) == (
        seen, exit, exit_index, exit_turn, path_seen
    )


def test_domain_abstraction_on_convlab(tmp_path: Path) -> None:
    path = tmp_path / "convlab.json"
    path.write_text(json.dumps(CONVLAB))
    dialogues = read_flow_dialogues(path, kind="convlab")
    per_domain = FlowGraph.from_dialogues(dialogues)
    agnostic = FlowGraph.from_dialogues(dialogues, domain_agnostic=True)
    # the hotel state (area north) rides along in every turn of the fixture
    assert ("hotel-area", "restaurant-food", "restaurant-price range") in per_domain.nodes
    assert ("area", "food", "price range") in agnostic.nodes
    assert "hotel-area" in per_domain.slots and "area" in agnostic.slots and "hotel-area" not in agnostic.slots
    assert agnostic.abstraction == "domain-agnostic"


def test_save_and_load(tmp_path: Path, graph: FlowGraph) -> None:
    path = graph.save(tmp_path / "g.json")
    again = FlowGraph.load(path)
    assert again == graph and again.describe() == graph.describe()
    assert again.most_frequent_paths(3) == graph.most_frequent_paths(3)
    assert json.loads(path.read_text())["edges"][0] == ["source", 0, 1]
    with pytest.raises(OutputExistsError):
        graph.save(path)
    graph.save(path, overwrite=True)


def _edited(tmp_path: Path, graph: FlowGraph, edit) -> Path:
    data = graph.to_json()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="other"), "field format: format is 'other'"),
        (lambda d: d.update(version=9), "unsupported format version 9"),
        (lambda d: d.update(abstraction="both"), "field abstraction"),
        (lambda d: d["nodes"][1].update(count=0), r"field nodes\[1\].count: expected an integer >= 1, got 0"),
        (lambda d: d["nodes"][1].update(filled=["zzz"]), r"field nodes\[1\].filled"),
        (lambda d: d["edges"][0].__setitem__(1, 17), r"field edges\[0\]\[1\]: expected 'sink' or a node index"),
        (lambda d: d["edges"].append(d["edges"][0]), r"field edges\[6\]: edge appears twice"),
        (lambda d: d["edges"][0].__setitem__(2, 5), "field edges: counts out of node 'source' add up to 7"),
        (lambda d: d.update(turn_pairs=8), "field turn_pairs: is 8"),
        (lambda d: d["paths"][0].update(nodes=[0, 1]), r"field paths\[0\]: steps from"),
        (lambda d: d["paths"].pop(), "field paths: counts add up to 2"),
        (lambda d: d["paths"][1].update(count=0), r"bad.json: field paths\[1\].count: expected an integer >= 1"),
    ],
)
def test_bad_graph_files_name_the_field(tmp_path: Path, graph: FlowGraph, edit, message: str) -> None:
    with pytest.raises(FileFormatError, match=message):
        FlowGraph.load(_edited(tmp_path, graph, edit))


def test_bad_graph_files(tmp_path: Path, graph: FlowGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "g.json"
    path.write_text('{"format": "simscore-flow-graph",\n "version": 1,\n oops}')
    with pytest.raises(FileFormatError, match=r"g.json, line 3: invalid JSON"):
        FlowGraph.load(path)
    with pytest.raises(FileFormatError, match="file not found"):
        FlowGraph.load(tmp_path / "missing.json")
    graph.save(path, overwrite=True)
    monkeypatch.setattr("contexts.flows.graph.MAX_FLOW_GRAPH_BYTES", 100)
    with pytest.raises(FileFormatError, match="bytes; flow-graph files are read up to 100"):
        FlowGraph.load(path)


def test_no_dialogues() -> None:
    with pytest.raises(InvalidContextError, match="no dialogues"):
        FlowGraph.from_dialogues([])


# ----------------------------------------------------------------------------- reading dialogues


def test_flow_dialogues_from_the_log(tmp_path: Path, log_lines: list[dict[str, Any]]) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in log_lines))
    d1, d2 = read_flow_dialogues(path)
    assert d1.key == ("sim-a", "d1") and d1.origin == "log"
    assert [t.turn_index for t in d1.turns] == [1, 2, 3]  # turn 0 is the system's opening
    assert dict(d1.turns[1].state) == {FOOD: "thai", AREA: "centre"}
    assert d1.turns[0].user_items == (("inform", FOOD, "thai"),)
    assert d1.turns[2].user_items == (("request", (R, "phone"), None),)
    assert d1.turns[0].system_items == (("request", AREA, None),)
    assert d1.turns[2].system_items is None  # no system act logged
    assert len(d2.turns) == 1
    assert read_flow_dialogues(path, source_name="other", max_dialogues=1)[0].key == ("other", "d1")


def test_flow_dialogues_from_convlab(tmp_path: Path) -> None:
    path = tmp_path / "convlab.json"
    data = json.loads(json.dumps(CONVLAB))
    data[2]["data_split"] = "test"
    path.write_text(json.dumps(data))
    first, hotel, second = read_flow_dialogues(path, kind="convlab")
    assert first.key == ("camrest", "camrest-test-0") and first.origin == "convlab"
    # three system turns after user turns, and the user's last "Bye." without an answer
    assert [t.turn_index for t in first.turns] == [1, 2, 3, 4]
    assert first.turns[0].state == {("restaurant", "food"): "thai", ("restaurant", "price range"): "cheap",
                                    ("hotel", "area"): "north"}
    assert first.turns[2].user_items == (("thank", None, None), ("request", ("restaurant", "address"), None))
    assert first.turns[3].system_items is None
    assert hotel.turns == ()
    assert [t.turn_index for t in second.turns] == [1, 2]  # the system's greeting is no turn pair
    assert [d.dialogue_id for d in read_flow_dialogues(path, kind="convlab", split="test")] == ["camrest-test-2"]
    # the numbering matches the contexts ConvLab import collects
    with pytest.warns(Warning):
        contexts = import_convlab(path)
    assert {(c.metadata["dialogue_id"], c.metadata["turn_index"]) for c in contexts} <= {
        (d.dialogue_id, t.turn_index) for d in (first, second) for t in d.turns
    }


def test_bad_convlab_flow_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"dialogue_id": "x", "turns": [{"speaker": "user", "state": {"hotel": {"area": 3}}}]}]))
    with pytest.raises(FileFormatError, match=r"bad.json: dialogue 'x', utt_idx 0: state\['hotel'\]\['area'\] must be a string"):
        read_flow_dialogues(path, kind="convlab")
    with pytest.raises(ValueError, match="split applies to ConvLab-3 files only"):
        read_flow_dialogues(path, split="train")
    with pytest.raises(ValueError, match="kind must be one of"):
        read_flow_dialogues(path, kind="csv")


def test_flow_dialogues_from_pydial(tmp_path: Path) -> None:
    lines = [
        {"format": "simscore-pydial-beliefs", "version": 1, "source": {"name": "camrest"}},
        {"dialogue_id": "d0", "turn_index": 0, "belief": {"beliefs": {"food": {"**NONE**": 1.0}}}},
        {"dialogue_id": "d0", "turn_index": 1, "user_text": "Thai food.", "system_act": "request(area)",
         "belief": {"beliefs": {"food": {"thai": 0.7, "**NONE**": 0.3}},
                    "userActs": [["inform(food=thai)", 0.8], ["inform(food=tai)", 0.2]]}},
    ]
    path = tmp_path / "pd.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [dialogue] = read_flow_dialogues(path, kind="pydial")
    assert dialogue.key == ("camrest", "d0") and dialogue.origin == "pydial"
    [turn] = dialogue.turns
    assert turn.state == {FOOD: "thai"} and turn.user_items == (("inform", FOOD, "thai"),)


def test_belief_slots_need_more_than_none() -> None:
    belief = BeliefState(slots={"food": {"thai": 0.5, "none": 0.5}, "area": {"north": 0.51}})
    assert belief_slots(belief, R) == {AREA: "north"}


# ----------------------------------------------------------------------------- patterns


def _tags(*turns: FlowTurn) -> list[list[str]]:
    out = []
    for tags in turn_patterns(FlowDialogue("d", "s", turns)):
        out.append(sorted(f"{k}" if v else f"{k}?" for k, v in tags.items() if v is not False))
    return out


def test_multi_slot_and_goal_change() -> None:
    assert _tags(
        FlowTurn(1, {FOOD: "thai", AREA: "north"}, (), ()),  # two slots at once
        FlowTurn(2, {FOOD: "thai", AREA: "north", PRICE: "cheap"}, (), ()),  # one more: no
        FlowTurn(3, {FOOD: "thai", AREA: "dontcare", PRICE: "cheap"}, (), ()),  # relaxed: a change
        FlowTurn(4, {FOOD: "thai", PRICE: "expensive", AREA: "south"}, (), ()),  # two new values: both
        FlowTurn(5, {FOOD: "thai"}, (), ()),  # emptied: a change
    ) == [["multi_slot"], [], ["goal_change"], ["goal_change", "multi_slot"], ["goal_change"]]


def test_repeat() -> None:
    inform = ("inform", FOOD, "thai")
    assert _tags(
        FlowTurn(1, {FOOD: "thai"}, (inform,), ()),
        FlowTurn(2, {FOOD: "thai"}, (("thankyou", None, None),), ()),
        FlowTurn(3, {FOOD: "thai"}, (("thankyou", None, None),), ()),  # no slot: not a repeat
        FlowTurn(4, {FOOD: "thai"}, (inform,), ()),
        FlowTurn(5, {FOOD: "thai"}, (("inform", FOOD, "thai food"),), ()),  # another value
    ) == [[], [], [], ["repeat"], []]
    # without acts, the texts decide; without either, nobody can tell (nor whether the user clarifies)
    assert _tags(
        FlowTurn(1, {}, None, (), "Thai  food."),
        FlowTurn(2, {}, None, (), "thai food."),
        FlowTurn(3, {}, None, (), None),
    ) == [["clarify?"], ["clarify?", "repeat"], ["clarify?", "repeat?"]]


def test_clarify() -> None:
    assert _tags(
        FlowTurn(1, {FOOD: "thai"}, (("inform", FOOD, "thai"),), (("confirm", FOOD, "thai"),)),
        FlowTurn(2, {FOOD: "thai"}, (("affirm", None, None),), (("request", FOOD, None),)),  # answers a confirm
        FlowTurn(3, {FOOD: "thai"}, (("inform", AREA, "x"),), (("request", AREA, None),)),  # asked for food again
        FlowTurn(4, {FOOD: "thai"}, (("negate", AREA, "x"),), None),  # corrects
        FlowTurn(5, {FOOD: "thai"}, (("inform", PRICE, "cheap"),), ()),  # previous system act unknown
    ) == [[], ["clarify"], ["clarify"], ["clarify"], ["clarify?"]]


# ----------------------------------------------------------------------------- labels


def _test_log() -> tuple[dict[str, Any], list[Dialogue]]:
    dialogues = [
        Dialogue("a", (_turn(0), _turn(1, "inform(food=thai)", "request(area)", food="thai"),
                       _turn(2, "inform(area=north)", "bye()", food="thai", area="north"))),
        Dialogue("b", (_turn(0), _turn(1, "inform(food=thai)", "request(area)", food="thai"),
                       _turn(2, "inform(pricerange=cheap,area=north)", "bye()", food="thai", area="north",
                             pricerange="cheap"))),
    ]
    return {"domain": R, "source": {"name": "test"}}, dialogues


def _labelled(graph: FlowGraph) -> ContextSet:
    header, dialogues = _test_log()
    return label_contexts(collect_contexts([(header, dialogues)]), graph,
                          flow_dialogues(dialogues, domain=R, source_name="test"))


def test_label_contexts(graph: FlowGraph) -> None:
    labelled = _labelled(graph)
    rows = {c.id: tuple(c.metadata[k] for k in FLOW_KEYS) for c in labelled}
    assert rows == {
        "col/test/a/0": ("seen", "seen", None, None, False, False, False, False),
        "col/test/a/1": ("seen", "seen", None, None, False, False, False, False),
        "col/test/a/2": ("seen", "seen", None, None, False, False, False, False),
        "col/test/b/0": ("unseen", "seen", 2, "node", False, False, False, False),
        "col/test/b/1": ("unseen", "seen", 2, "node", False, False, False, False),
        "col/test/b/2": ("unseen", "unseen", 2, "node", True, False, False, False),
    }
    assert labelled.built["flow_labels"]["training_dialogues"] == 3
    frame = labelled.metadata_frame()
    assert frame.groupby("flow").size().to_dict() == {"seen": 3, "unseen": 3}
    # labelling again replaces the labels
    again = label_contexts(labelled, graph, flow_dialogues(_test_log()[1], domain=R, source_name="test"))
    assert [dict(c.metadata) for c in again] == [dict(c.metadata) for c in labelled]


def test_label_errors(graph: FlowGraph) -> None:
    header, dialogues = _test_log()
    contexts = collect_contexts([(header, dialogues)])
    with pytest.raises(InvalidContextError, match=r"6 context\(s\) have no dialogue or turn among the 0"):
        label_contexts(contexts, graph, [])
    wrong_name = flow_dialogues(dialogues, domain=R, source_name="other")
    with pytest.raises(InvalidContextError, match="matched by source name and dialogue id"):
        label_contexts(contexts, graph, wrong_name)
    swapped = [Dialogue("a", dialogues[1].turns), Dialogue("b", dialogues[0].turns)]
    with pytest.raises(InvalidContextError, match="are these the dialogues the contexts were collected from"):
        label_contexts(contexts, graph, flow_dialogues(swapped, domain=R, source_name="test"))
    generated = ContextSet([Context("g", BeliefState())], name="g")
    with pytest.raises(InvalidContextError, match="flows label collected contexts only"):
        label_contexts(generated, graph, [])
    twice = flow_dialogues(dialogues[:1] * 2, domain=R, source_name="test")
    with pytest.raises(InvalidContextError, match="appears twice"):
        label_contexts(contexts, graph, twice)


def test_flow_summary(graph: FlowGraph) -> None:
    summary = flow_summary(_labelled(graph), graph)
    assert (summary.dialogues, summary.unseen_dialogues, summary.contexts) == (2, 1, 6)
    assert (summary.unseen_contexts, summary.unseen_prefix_contexts) == (3, 1)
    assert summary.unseen_dialogue_share == 0.5 and summary.exits == {"node": 1}
    assert summary.patterns["multi_slot"] == {"contexts": 1, "seen": 0, "unseen": 1, "unknown": 0, "dialogues": 1}
    text = summary.format()
    assert "unseen flow 1 (50.0%)" in text and "graph: per-domain, 3 nodes" in text
    assert json.loads(json.dumps(summary.to_json()))["unseen_prefix_share"] == pytest.approx(1 / 6)
    with pytest.raises(InvalidContextError, match="label the set first"):
        flow_summary(collect_contexts([_test_log()]))


def test_sample_balanced(graph: FlowGraph) -> None:
    labelled = _labelled(graph)
    sample = sample_balanced(labelled, by="flow_prefix", seed=3)
    assert len(sample) == 2 and sorted(c.metadata["flow_prefix"] for c in sample) == ["seen", "unseen"]
    assert sample.ids == sample_balanced(labelled, by="flow_prefix", seed=3).ids
    assert sample.built["sampled"] == {"from": "C_col", "by": "flow_prefix", "per_stratum": 1, "seed": 3,
                                       "strata": {"seen": 5, "unseen": 1}}
    seeds = {sample_balanced(labelled, per_stratum=2, seed=s).ids for s in range(12)}
    assert len(seeds) > 1 and all(len(ids) == 4 for ids in seeds)
    with pytest.raises(InvalidContextError, match=r"per_stratum=4 but stratum sizes are \{'seen': 3, 'unseen': 3\}"):
        sample_balanced(labelled, per_stratum=4)
    with pytest.raises(InvalidContextError, match="nothing to balance"):
        sample_balanced(labelled, by="pattern_repeat")


def test_plot_flows(tmp_path: Path, graph: FlowGraph) -> None:
    walks = [graph.walk(d) for d in flow_dialogues(_test_log()[1], domain=R, source_name="test")]
    path = plot_flows(graph, tmp_path / "flows.png", walks, top=3)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(OutputExistsError):
        plot_flows(graph, path)
    with pytest.raises(ValueError, match="top must be <= 8"):
        plot_flows(graph, tmp_path / "other.png", top=9)


# ----------------------------------------------------------------------------- MultiWOZ


MULTIWOZ = Path(__file__).parent / "data" / "multiwoz21_dummy.json"


def test_multiwoz_sample_leave_one_out() -> None:
    """ConvLab-3's ten MultiWOZ 2.1 dialogues: each walked through the graph of the other nine."""
    dialogues = read_flow_dialogues(MULTIWOZ, kind="convlab")
    assert len(dialogues) == 10 and sum(len(d.turns) for d in dialogues) == 60
    per_domain = FlowGraph.from_dialogues(dialogues)
    agnostic = FlowGraph.from_dialogues(dialogues, domain_agnostic=True)
    assert (per_domain.n_nodes, per_domain.n_edges, len(per_domain.slots)) == (33, 54, 24)
    assert (agnostic.n_nodes, agnostic.n_edges, len(agnostic.slots)) == (32, 53, 17)
    walks = [FlowGraph.from_dialogues(dialogues[:i] + dialogues[i + 1:], domain_agnostic=True).walk(dialogues[i])
             for i in range(10)]
    assert [w.exit_index for w in walks] == [0, None, 0, None, 0, 0, 1, None, 0, None]
    # the restaurant dialogue's contexts, labelled against the other nine
    with pytest.warns(Warning, match="skipped 9 of 10 dialogues"):
        contexts = import_convlab(MULTIWOZ, skip_unknown_values=True)
    graph = FlowGraph.from_dialogues(dialogues[:6] + dialogues[7:], domain_agnostic=True)
    labelled = label_contexts(contexts, graph, dialogues)
    summary = flow_summary(labelled, graph)
    assert (summary.contexts, summary.unseen_contexts, summary.unseen_prefix_contexts) == (7, 7, 6)
    assert summary.exits == {"node": 1}
