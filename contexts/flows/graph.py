"""Conversation-flow graphs: which dialogue flows a policy met in training, and which it did not.

After FRAPI (a framework for competitive test beds for task-oriented dialogue), every dialogue
is a path through a **flow graph** built from the *training* dialogues
(:class:`~contexts.flows.dialogues.FlowDialogue`, read from any dialogues simscore reads):

* a node per turn pair (a user turn and the system turn after it): which belief-state slots
  are filled after the user's turn, values ignored — the binary vector over
  :attr:`FlowGraph.slots`, stored as the sorted tuple of the filled slots (``()`` for none);
* a source and a sink node; a directed edge between the nodes of successive turn pairs of
  a dialogue, from the source to its first turn pair, and from its last to the sink;
* a count on every node and edge (how many training turn pairs and transitions), and the
  count of every distinct training path.

**Slot abstraction.** Slots are named ``<domain>-<slot>`` (``restaurant-area``,
``hotel-area``) by default; ``domain_agnostic=True`` drops the domain, so ``area`` of a
hotel and of a restaurant are one coordinate (FRAPI's representation).

:meth:`FlowGraph.walk` follows a test dialogue through the graph: it is *seen*
(FRAPI's non-violating) if every edge of its path from source to sink is in the graph, else
*unseen* (violating), and the walk says at which turn pair it first leaves the graph and why:
a filled-slot combination never met in training (``node``), a transition never met
(``edge``), or an ending never met (``end``).

Files: :meth:`FlowGraph.save` writes JSON (format ``simscore-flow-graph``, version 1: the
abstraction, the slots, the nodes with their filled slots and counts, the edges as
``[from, to, count]`` with node indices, ``"source"`` and ``"sink"``, and the distinct paths
as node indices with counts); :meth:`FlowGraph.load` checks every field and the counts'
consistency and names the field at fault.

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.dialogue_log import Dialogue, DialogueTurn
>>> from contexts.flows.dialogues import flow_dialogues
>>> def turn(i, **slots):
...     return DialogueTurn(turn_index=i, belief=BeliefState(slots={s: {v: 1.0} for s, v in slots.items()}))
>>> train = [Dialogue("d1", (turn(0), turn(1, food="thai"), turn(2, food="thai", area="north")))]
>>> graph = FlowGraph.from_dialogues(flow_dialogues(train, domain="restaurants"))
>>> graph.nodes, graph.n_edges
((('restaurants-food',), ('restaurants-area', 'restaurants-food')), 3)
>>> test = flow_dialogues([Dialogue("t1", (turn(0), turn(1, food="thai", area="east")))], domain="restaurants")
>>> walk = graph.walk(test[0])
>>> walk.seen, walk.exit, walk.exit_turn
(False, 'edge', 1)
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import simscore.io.reading
from contexts.flows.dialogues import FlowDialogue, FlowTurn
from simscore.checks import check_int
from simscore.errors import FileFormatError, InvalidContextError
from simscore.io import atomic_write_text, format_problem, parse_json, prepare_output, read_text
from simscore.io.formats import FILE_FORMATS, detect_format

if TYPE_CHECKING:
    import networkx

__all__ = [
    "FLOW_GRAPH_FORMAT",
    "FLOW_GRAPH_VERSION",
    "MAX_FLOW_GRAPH_BYTES",
    "SOURCE",
    "SINK",
    "FlowWalk",
    "FlowGraph",
    "node_label",
]

#: The ``format`` field of a flow-graph file.
FLOW_GRAPH_FORMAT = "simscore-flow-graph"
#: The current (and only) version of the flow-graph format.
FLOW_GRAPH_VERSION = 1
#: Larger flow-graph files are refused before they are parsed (MultiWOZ's 8,438 training
#: dialogues give well under 10 MB).
MAX_FLOW_GRAPH_BYTES = 128 * 1024 * 1024
#: The start node of every path.
SOURCE = "source"
#: The end node of every path.
SINK = "sink"

def node_label(node: Any) -> str:
    """How a node is shown: ``source``, ``sink``, ``∅`` (nothing filled) or the filled slots.

    >>> node_label(()), node_label(("area", "food")), node_label(SINK)
    ('∅', 'area, food', 'sink')
    """
    if isinstance(node, str):
        return node
    return ", ".join(node) if node else "∅"


class FlowWalk(NamedTuple):
    """A dialogue's walk through a flow graph (see :meth:`FlowGraph.walk`).

    Attributes
    ----------
    seen : bool
        Every edge of the path from source to sink is in the graph.
    exit_index : int or None
        Position (0-based) of the first turn pair whose incoming edge is missing;
        ``len(turns)`` when only the edge to the sink is; None when seen.
    exit_turn : int or None
        That turn pair's turn index (the last turn pair's for an unseen ending).
    exit : str or None
        ``"node"`` (its filled slots were never met in training), ``"edge"`` (the transition
        was never met) or ``"end"`` (no training dialogue ended there); None when seen.
    path : tuple
        The dialogue's nodes (without source and sink).
    path_seen : bool
        The whole path occurred as one training dialogue (stricter than ``seen``).
    """

    seen: bool
    exit_index: int | None
    exit_turn: int | None
    exit: str | None
    path: tuple[tuple[str, ...], ...]
    path_seen: bool


# ----------------------------------------------------------------------------- the graph


def _networkx() -> Any:
    import networkx

    return networkx


class FlowGraph:
    """A conversation-flow graph (see the module docstring); build it with :meth:`from_dialogues`.

    Parameters
    ----------
    graph : networkx.DiGraph
        Nodes :data:`SOURCE`, :data:`SINK` and tuples of filled slots, each with a ``count``;
        edges with a ``count``.
    domain_agnostic : bool
        Whether slot names dropped their domain.
    paths : mapping of path to int
        Every distinct training path (a tuple of nodes, without source and sink) and its count.
    built : mapping, optional
        Provenance (sources, dialogue counts); JSON values.
    """

    def __init__(
        self,
        graph: networkx.DiGraph,
        *,
        domain_agnostic: bool,
        paths: Mapping[tuple[tuple[str, ...], ...], int],
        built: Mapping[str, Any] | None = None,
    ) -> None:
        self._graph = graph
        self._domain_agnostic = bool(domain_agnostic)
        self._paths = dict(paths)
        self._built = dict(built or {})
        states = [n for n in graph.nodes if not isinstance(n, str)]
        self._nodes = tuple(sorted(states, key=lambda n: (len(n), n)))
        self._slots = tuple(sorted({slot for node in states for slot in node}))

    # -- building ----------------------------------------------------------------------

    @staticmethod
    def node(turn: FlowTurn, *, domain_agnostic: bool) -> tuple[str, ...]:
        """The node of a turn pair: its filled slots, sorted, named per domain or not.

        >>> t = FlowTurn(1, {("hotel", "area"): "north", ("restaurant", "area"): "north", ("", "people"): "2"})
        >>> FlowGraph.node(t, domain_agnostic=False), FlowGraph.node(t, domain_agnostic=True)
        (('hotel-area', 'people', 'restaurant-area'), ('area', 'people'))
        """
        if domain_agnostic:
            return tuple(sorted({slot for _, slot in turn.state}))
        return tuple(sorted(f"{domain}-{slot}" if domain else slot for domain, slot in turn.state))

    @classmethod
    def from_dialogues(
        cls,
        dialogues: Iterable[FlowDialogue],
        *,
        domain_agnostic: bool = False,
        built: Mapping[str, Any] | None = None,
    ) -> FlowGraph:
        """The flow graph of (training) dialogues.

        Raises
        ------
        InvalidContextError
            If there is no dialogue, or an element is not a :class:`FlowDialogue`.
        """
        nx = _networkx()
        graph = nx.DiGraph()
        graph.add_node(SOURCE, count=0)
        graph.add_node(SINK, count=0)
        paths: Counter[tuple[tuple[str, ...], ...]] = Counter()
        sources: Counter[str] = Counter()
        for dialogue in dialogues:
            if not isinstance(dialogue, FlowDialogue):
                raise InvalidContextError(f"expected FlowDialogue objects, got {type(dialogue).__name__}")
            path = tuple(cls.node(turn, domain_agnostic=domain_agnostic) for turn in dialogue.turns)
            paths[path] += 1
            sources[dialogue.source_name] += 1
            for node in path:
                if node in graph:
                    graph.nodes[node]["count"] += 1
                else:
                    graph.add_node(node, count=1)
            for u, v in zip((SOURCE, *path), (*path, SINK)):
                if graph.has_edge(u, v):
                    graph.edges[u, v]["count"] += 1
                else:
                    graph.add_edge(u, v, count=1)
        if not paths:
            raise InvalidContextError("no dialogues to build a flow graph from")
        total = sum(paths.values())
        graph.nodes[SOURCE]["count"] = graph.nodes[SINK]["count"] = total
        info = {"dialogues_by_source": dict(sorted(sources.items())), **dict(built or {})}
        return cls(graph, domain_agnostic=domain_agnostic, paths=paths, built=info)

    # -- queries -----------------------------------------------------------------------

    @property
    def graph(self) -> networkx.DiGraph:
        """The graph itself, as a read-only view (networkx algorithms run on it)."""
        return self._graph.copy(as_view=True)

    @property
    def domain_agnostic(self) -> bool:
        """Whether slot names dropped their domain."""
        return self._domain_agnostic

    @property
    def abstraction(self) -> str:
        """``"domain-agnostic"`` or ``"per-domain"``."""
        return "domain-agnostic" if self._domain_agnostic else "per-domain"

    @property
    def slots(self) -> tuple[str, ...]:
        """The coordinates of the nodes' binary vectors: every slot filled in training, sorted."""
        return self._slots

    @property
    def nodes(self) -> tuple[tuple[str, ...], ...]:
        """The turn-pair nodes (without source and sink), by number of filled slots, then name."""
        return self._nodes

    @property
    def n_nodes(self) -> int:
        """Turn-pair nodes (source and sink not counted)."""
        return len(self._nodes)

    @property
    def n_edges(self) -> int:
        """Edges, those from the source and to the sink included."""
        return int(self._graph.number_of_edges())

    @property
    def dialogues(self) -> int:
        """Training dialogues (paths from source to sink)."""
        return int(self._graph.nodes[SOURCE]["count"])

    @property
    def turn_pairs(self) -> int:
        """Training turn pairs (the nodes' counts added up)."""
        return int(sum(self._graph.nodes[n]["count"] for n in self._nodes))

    @property
    def built(self) -> dict[str, Any]:
        """Provenance: the training dialogues per source and what the builder recorded."""
        return dict(self._built)

    def describe(self) -> dict[str, Any]:
        """The graph's size: abstraction, nodes, edges, dialogues, turn pairs and slots."""
        return {
            "abstraction": self.abstraction, "nodes": self.n_nodes, "edges": self.n_edges,
            "dialogues": self.dialogues, "turn_pairs": self.turn_pairs, "slots": len(self._slots),
        }

    @staticmethod
    def format_description(facts: Mapping[str, Any]) -> str:
        """:meth:`describe` as one line of text.

        >>> FlowGraph.format_description({"abstraction": "per-domain", "nodes": 6, "edges": 15,
        ...                               "dialogues": 10, "turn_pairs": 50, "slots": 3})
        'per-domain, 6 nodes (+ source and sink), 15 edges, 10 training dialogues, 50 turn pairs, 3 slots'
        """
        return (
            f"{facts['abstraction']}, {facts['nodes']} nodes (+ source and sink), {facts['edges']} edges, "
            f"{facts['dialogues']} training dialogues, {facts['turn_pairs']} turn pairs, {facts['slots']} slots"
        )

    def node_count(self, node: Any) -> int:
        """Training turn pairs at ``node`` (0 if it is not in the graph)."""
        return int(self._graph.nodes[node]["count"]) if node in self._graph else 0

    def edge_count(self, u: Any, v: Any) -> int:
        """Training transitions from ``u`` to ``v`` (0 if the edge is not in the graph)."""
        return int(self._graph.edges[u, v]["count"]) if self._graph.has_edge(u, v) else 0

    def vector(self, node: Sequence[str]) -> tuple[int, ...]:
        """The node's binary vector over :attr:`slots` (FRAPI's representation).

        Raises
        ------
        KeyError
            If the node fills a slot the graph has no coordinate for.
        """
        unknown = [s for s in node if s not in self._slots]
        if unknown:
            raise KeyError(f"slot(s) {', '.join(map(repr, unknown))} are not coordinates of this graph")
        return tuple(int(slot in node) for slot in self._slots)

    def path(self, dialogue: FlowDialogue) -> tuple[tuple[str, ...], ...]:
        """The dialogue's nodes in this graph's abstraction (without source and sink)."""
        return tuple(self.node(turn, domain_agnostic=self._domain_agnostic) for turn in dialogue.turns)

    def walk(self, dialogue: FlowDialogue) -> FlowWalk:
        """Follow a dialogue through the graph: seen or unseen, and where it leaves (:class:`FlowWalk`)."""
        path = self.path(dialogue)
        previous: Any = SOURCE
        for index, node in enumerate(path):
            if not self._graph.has_edge(previous, node):
                reason = "edge" if node in self._graph else "node"
                return FlowWalk(False, index, dialogue.turns[index].turn_index, reason, path, False)
            previous = node
        if not self._graph.has_edge(previous, SINK):
            last = dialogue.turns[-1].turn_index if dialogue.turns else None
            return FlowWalk(False, len(path), last, "end", path, False)
        return FlowWalk(True, None, None, None, path, path in self._paths)

    def most_frequent_paths(self, k: int = 10) -> list[tuple[tuple[tuple[str, ...], ...], int]]:
        """The ``k`` most frequent training paths with their counts (ties: shorter, then by name)."""
        k = check_int("k", k, minimum=1, error=ValueError)
        ranked = sorted(self._paths.items(), key=lambda item: (-item[1], len(item[0]), item[0]))
        return ranked[:k]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FlowGraph):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"FlowGraph({self.abstraction}, nodes={self.n_nodes}, edges={self.n_edges}, "
            f"dialogues={self.dialogues})"
        )

    # -- files -------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The graph as JSON values (the file's content; see the module docstring)."""
        index = {node: i for i, node in enumerate(self._nodes)}
        ref = {SOURCE: SOURCE, SINK: SINK, **index}
        order = {SOURCE: -1, SINK: len(index), **index}
        edges = sorted(self._graph.edges(data="count"), key=lambda e: (order[e[0]], order[e[1]]))
        paths = sorted(self._paths.items(), key=lambda item: (-item[1], [index[n] for n in item[0]]))
        return {
            "format": FLOW_GRAPH_FORMAT,
            "version": FLOW_GRAPH_VERSION,
            "abstraction": self.abstraction,
            "slots": list(self._slots),
            "dialogues": self.dialogues,
            "turn_pairs": self.turn_pairs,
            "built": self._built,
            "nodes": [{"filled": list(node), "count": self.node_count(node)} for node in self._nodes],
            "edges": [[ref[u], ref[v], int(count)] for u, v, count in edges],
            "paths": [{"nodes": [index[n] for n in path], "count": count} for path, count in paths],
        }

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the graph as JSON, atomically (one node, edge or path a line).

        An existing file is replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise).
        """
        target = prepare_output(path, overwrite=overwrite)
        data = self.to_json()
        head = {k: v for k, v in data.items() if k not in ("nodes", "edges", "paths")}
        lines = [json.dumps(head, ensure_ascii=False)[:-1] + ","]
        for key in ("nodes", "edges", "paths"):
            items = [json.dumps(item, ensure_ascii=False) for item in data[key]]
            closing = "]" if key == "paths" else "],"
            lines.append(f' "{key}": [' + ("\n  " + ",\n  ".join(items) + "\n " if items else "") + closing)
        atomic_write_text(target, "\n".join(lines) + "}\n")
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FlowGraph:
        """Read a graph written by :meth:`save`.

        Raises
        ------
        FileFormatError
            Naming the file and the line (invalid JSON) or the field at fault: wrong format
            or version, a bad value, a node index out of range, an edge or path that is not
            in the graph, or counts that do not add up. Files over
            :data:`MAX_FLOW_GRAPH_BYTES` (or :data:`simscore.io.reading.MAX_FILE_BYTES` where that is
            lower) are refused unread.
        """
        p = Path(path)
        limit = min(MAX_FLOW_GRAPH_BYTES, simscore.io.reading.MAX_FILE_BYTES)
        try:
            size = p.stat().st_size
        except FileNotFoundError:
            raise FileFormatError(p, "file not found") from None
        if p.is_dir():
            raise FileFormatError(p, "is a directory, expected a flow-graph file")
        if size > limit:
            raise FileFormatError(p, f"{size:,} bytes; flow-graph files are read up to {limit:,}")
        data = parse_json(read_text(p, limit=limit), p, expected=FLOW_GRAPH_FORMAT)
        return _parse(p, data, cls)


def _field_error(path: Path, field: str, problem: str) -> FileFormatError:
    return FileFormatError(path, f"field {field}: {problem}")


def _count(path: Path, value: Any, field: str, *, minimum: int = 1) -> int:
    if type(value) is not int or value < minimum:
        raise _field_error(path, field, f"expected an integer >= {minimum}, got {value!r}")
    return value


def _list(path: Path, data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise _field_error(path, key, f"expected a list, got {type(value).__name__}")
    return value


def _check_format(path: Path, data: Any) -> None:
    """A flow graph's format and version; another of simscore's files is named as such."""
    problem = format_problem(data, FLOW_GRAPH_FORMAT, (FLOW_GRAPH_VERSION,))
    if problem and detect_format(data) in FILE_FORMATS:
        raise FileFormatError(path, problem)
    if problem:
        raise _field_error(path, "format", problem)


def _parse(path: Path, data: Any, cls: type[FlowGraph]) -> FlowGraph:
    _check_format(path, data)
    abstraction = data.get("abstraction")
    if abstraction not in ("per-domain", "domain-agnostic"):
        raise _field_error(path, "abstraction", f"expected 'per-domain' or 'domain-agnostic', got {abstraction!r}")
    slots = _list(path, data, "slots")
    if not all(isinstance(s, str) and s for s in slots) or len(set(slots)) != len(slots):
        raise _field_error(path, "slots", "expected distinct non-empty strings")
    dialogues = _count(path, data.get("dialogues"), "dialogues")
    turn_pairs = _count(path, data.get("turn_pairs"), "turn_pairs", minimum=0)
    built = data.get("built", {})
    if not isinstance(built, dict):
        raise _field_error(path, "built", f"expected an object, got {type(built).__name__}")
    known = set(slots)
    nodes: list[tuple[str, ...]] = []
    counts: dict[Any, int] = {SOURCE: dialogues, SINK: dialogues}
    for i, entry in enumerate(_list(path, data, "nodes")):
        field = f"nodes[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"filled", "count"}:
            raise _field_error(path, field, 'expected an object {"filled": [...], "count": n}')
        filled = entry["filled"]
        if not isinstance(filled, list) or not all(isinstance(s, str) for s in filled):
            raise _field_error(path, f"{field}.filled", "expected a list of slot names")
        if filled != sorted(set(filled)) or not known.issuperset(filled):
            raise _field_error(path, f"{field}.filled", f"expected distinct slots of 'slots', sorted, got {filled!r}")
        node = tuple(filled)
        if node in counts:
            raise _field_error(path, f"{field}.filled", f"node {filled!r} appears twice")
        counts[node] = _count(path, entry["count"], f"{field}.count")
        nodes.append(node)
    if sum(counts[n] for n in nodes) != turn_pairs:
        raise _field_error(path, "turn_pairs", f"is {turn_pairs} but the nodes' counts add up to {sum(counts[n] for n in nodes)}")

    def ref(value: Any, field: str, end: str) -> Any:
        if value == end:
            return value
        if type(value) is not int or not 0 <= value < len(nodes):
            raise _field_error(path, field, f"expected {end!r} or a node index in [0, {len(nodes)}), got {value!r}")
        return nodes[value]

    nx = _networkx()
    graph = nx.DiGraph()
    graph.add_nodes_from((node, {"count": count}) for node, count in counts.items())
    inflow: Counter[Any] = Counter()
    outflow: Counter[Any] = Counter()
    for i, entry in enumerate(_list(path, data, "edges")):
        field = f"edges[{i}]"
        if not isinstance(entry, list) or len(entry) != 3:
            raise _field_error(path, field, "expected [from, to, count]")
        u, v = ref(entry[0], f"{field}[0]", SOURCE), ref(entry[1], f"{field}[1]", SINK)
        if graph.has_edge(u, v):
            raise _field_error(path, field, "edge appears twice")
        count = _count(path, entry[2], f"{field}[2]")
        graph.add_edge(u, v, count=count)
        outflow[u] += count
        inflow[v] += count
    for node, count in counts.items():
        for flow, direction, exempt in ((inflow, "into", SOURCE), (outflow, "out of", SINK)):
            if node != exempt and flow[node] != count:
                problem = f"counts {direction} node {node_label(node)!r} add up to {flow[node]}, but its count is {count}"
                raise _field_error(path, "edges", problem)
    paths: dict[tuple[tuple[str, ...], ...], int] = {}
    for i, entry in enumerate(_list(path, data, "paths")):
        field = f"paths[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"nodes", "count"} or not isinstance(entry["nodes"], list):
            raise _field_error(path, field, 'expected an object {"nodes": [...], "count": n}')
        steps = tuple(ref(n, f"{field}.nodes[{j}]", "") for j, n in enumerate(entry["nodes"]))
        for u, v in zip((SOURCE, *steps), (*steps, SINK)):
            if not graph.has_edge(u, v):
                raise _field_error(path, field, f"steps from {node_label(u)!r} to {node_label(v)!r}, which is not an edge")
        if steps in paths:
            raise _field_error(path, field, "path appears twice")
        paths[steps] = _count(path, entry["count"], f"{field}.count")
    if sum(paths.values()) != dialogues:
        raise _field_error(path, "paths", f"counts add up to {sum(paths.values())}, but 'dialogues' is {dialogues}")
    return cls(graph, domain_agnostic=abstraction == "domain-agnostic", paths=paths, built=built)
