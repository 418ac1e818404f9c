"""Flow labels on context sets: seen or unseen flow, where it leaves the graph, complex patterns.

:func:`label_contexts` walks each collected context's dialogue through a
:class:`~contexts.flows.FlowGraph` built from the training dialogues and writes into the
context's metadata (so every analysis can group by it, e.g. ``compare(..., metadata=labelled)``
then :meth:`Comparison.by_stratum("flow") <simscore.comparison.Comparison.by_stratum>`):

``flow``
    ``"seen"`` if the whole dialogue is a path of the graph (source to sink), else ``"unseen"``.
``flow_prefix``
    ``"seen"`` if the dialogue up to and including this context's turn pair is a path from the
    source, else ``"unseen"`` (the context lies at or after the turn where the dialogue first
    leaves the graph). A context before the first turn pair (the system's opening) is ``"seen"``.
``flow_exit_turn``, ``flow_exit``
    The turn index where the dialogue first leaves the graph and why (``node``, ``edge`` or
    ``end``, see :class:`~contexts.flows.FlowWalk`); None for a seen flow.
``pattern_multi_slot``, ``pattern_repeat``, ``pattern_clarify``, ``pattern_goal_change``
    The complex-pattern tags of the context's turn pair (:mod:`contexts.flows.patterns`): True,
    False, or None where the source does not record what the tag needs; False before the
    first turn pair.

:func:`flow_summary` counts them; :func:`sample_balanced` draws a seeded subset with as many
contexts of each stratum (e.g. seen and unseen flows).

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.collect import collect_contexts
>>> from contexts.dialogue_log import Dialogue, DialogueTurn
>>> from contexts.flows.dialogues import flow_dialogues
>>> from contexts.flows import FlowGraph
>>> def turn(i, **slots):
...     return DialogueTurn(turn_index=i, belief=BeliefState(slots={s: {v: 1.0} for s, v in slots.items()}))
>>> train = [Dialogue("a", (turn(0), turn(1, food="thai"), turn(2, food="thai", area="north")))]
>>> test = [Dialogue("b", (turn(0), turn(1, food="thai"), turn(2, food="thai", area="north", pricerange="cheap")))]
>>> graph = FlowGraph.from_dialogues(flow_dialogues(train, domain="restaurants"))
>>> log = ({"domain": "restaurants", "source": {"name": "test"}}, test)
>>> labelled = label_contexts(collect_contexts([log]), graph,
...                           flow_dialogues(test, domain="restaurants", source_name="test"))
>>> [(c.metadata["flow"], c.metadata["flow_prefix"], c.metadata["pattern_multi_slot"]) for c in labelled]
[('unseen', 'seen', False), ('unseen', 'seen', False), ('unseen', 'unseen', True)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contexts.context import Context, ContextSet
from contexts.flows import FlowGraph, FlowWalk
from contexts.flows.dialogues import FlowDialogue, belief_slots
from contexts.flows.patterns import PATTERNS, turn_patterns
from simscore.checks import check_int
from simscore.errors import InvalidContextError

__all__ = ["FLOW_KEYS", "PATTERN_KEYS", "label_contexts", "FlowSummary", "flow_summary", "sample_balanced"]

#: The metadata keys of the pattern tags.
PATTERN_KEYS: tuple[str, ...] = tuple(f"pattern_{name}" for name in PATTERNS)
#: Every metadata key :func:`label_contexts` writes.
FLOW_KEYS: tuple[str, ...] = ("flow", "flow_prefix", "flow_exit_turn", "flow_exit", *PATTERN_KEYS)


def _shown(ids: list[str]) -> str:
    more = f" and {len(ids) - 5} more" if len(ids) > 5 else ""
    return ", ".join(map(repr, ids[:5])) + more


def _dialogue_index(dialogues: Iterable[FlowDialogue]) -> dict[tuple[str, str], FlowDialogue]:
    index: dict[tuple[str, str], FlowDialogue] = {}
    for dialogue in dialogues:
        if not isinstance(dialogue, FlowDialogue):
            raise InvalidContextError(f"expected FlowDialogue objects, got {type(dialogue).__name__}")
        if dialogue.key in index:
            raise InvalidContextError(f"dialogue {dialogue.dialogue_id!r} of source {dialogue.source_name!r} appears twice")
        index[dialogue.key] = dialogue
    return index


def _check_belief(context: Context, dialogue: FlowDialogue, position: int) -> None:
    """A context collected from a log must fill the slots its turn pair fills (the right dialogues?)."""
    if dialogue.origin == "convlab":  # the context's belief is one domain mapped onto the ontology
        return
    mine = sorted(slot for _, slot in belief_slots(context.belief, ""))
    theirs = sorted(slot for _, slot in dialogue.turns[position].state)
    if mine != theirs:
        raise InvalidContextError(
            f"context {context.id!r} fills {mine} but turn {dialogue.turns[position].turn_index} of dialogue "
            f"{dialogue.dialogue_id!r} fills {theirs}: are these the dialogues the contexts were collected from?"
        )


def label_contexts(
    contexts: ContextSet,
    graph: FlowGraph,
    dialogues: Iterable[FlowDialogue],
    *,
    name: str | None = None,
) -> ContextSet:
    """The contexts with flow labels and pattern tags in their metadata (see the module docstring).

    Parameters
    ----------
    contexts : ContextSet
        Collected contexts (metadata ``dialogue_id``, ``turn_index``, ``source_name``).
    graph : FlowGraph
        Built from the training dialogues.
    dialogues : iterable of FlowDialogue
        The dialogues the contexts were collected from (matched by source name and dialogue
        id, e.g. :func:`~contexts.flows.dialogues.read_flow_dialogues` of the same files).
    name : str, optional
        Name of the result (default the input's).

    Returns
    -------
    ContextSet
        The same contexts in the same order, labels added (earlier flow labels replaced);
        ``built["flow_labels"]`` describes the graph.

    Raises
    ------
    InvalidContextError
        A context without a dialogue id, or whose dialogue or turn is not among
        ``dialogues`` (listing some), or whose belief does not fill the slots its logged
        turn pair fills.
    """
    if not isinstance(contexts, ContextSet):
        raise InvalidContextError(f"contexts must be a ContextSet, got {type(contexts).__name__}")
    if not isinstance(graph, FlowGraph):
        raise InvalidContextError(f"graph must be a FlowGraph, got {type(graph).__name__}")
    index = _dialogue_index(dialogues)
    walks: dict[tuple[str, str], tuple[FlowWalk, list[dict[str, bool | None]], dict[int, int]]] = {}
    no_dialogue: list[str] = []
    unmatched: list[str] = []
    labelled: list[Context] = []
    for context in contexts:
        meta = context.metadata
        if meta["dialogue_id"] is None:
            no_dialogue.append(context.id)
            continue
        key = (str(meta.get("source_name")), meta["dialogue_id"])
        dialogue = index.get(key)
        if dialogue is None:
            unmatched.append(context.id)
            continue
        if key not in walks:
            positions = {turn.turn_index: i for i, turn in enumerate(dialogue.turns)}
            walks[key] = (graph.walk(dialogue), turn_patterns(dialogue), positions)
        walk, patterns, positions = walks[key]
        turn = meta["turn_index"]
        tags: dict[str, bool | None]
        if turn is None or (turn not in positions and (not dialogue.turns or turn < dialogue.turns[0].turn_index)):
            prefix_seen, tags = True, dict.fromkeys(PATTERNS, False)  # before the first turn pair
        elif turn in positions:
            position = positions[turn]
            _check_belief(context, dialogue, position)
            prefix_seen = walk.exit_index is None or position < walk.exit_index
            tags = patterns[position]
        else:
            unmatched.append(context.id)
            continue
        labels = {
            "flow": "seen" if walk.seen else "unseen",
            "flow_prefix": "seen" if prefix_seen else "unseen",
            "flow_exit_turn": walk.exit_turn,
            "flow_exit": walk.exit,
            **{f"pattern_{p}": tags[p] for p in PATTERNS},
        }
        labelled.append(Context(context.id, context.belief, {**meta, **labels}))
    if no_dialogue:
        raise InvalidContextError(
            f"{len(no_dialogue)} context(s) have no dialogue_id ({_shown(no_dialogue)}): flows label collected "
            "contexts only (e.g. contexts.where(source='col'))"
        )
    if unmatched:
        raise InvalidContextError(
            f"{len(unmatched)} context(s) have no dialogue or turn among the {len(index)} dialogues given "
            f"({_shown(unmatched)}); give the dialogues the contexts were collected from (matched by source name "
            "and dialogue id)"
        )
    built = dict(contexts.built)
    built["flow_labels"] = {
        "abstraction": graph.abstraction, "nodes": graph.n_nodes, "edges": graph.n_edges,
        "training_dialogues": graph.dialogues, "graph_built": graph.built, "labelled_dialogues": len(walks),
    }
    return ContextSet(labelled, name=name or contexts.name, domain=contexts.domain, built=built)


# ----------------------------------------------------------------------------- summary


def _share(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


@dataclass(frozen=True)
class FlowSummary:
    """Counts of a labelled context set (and of its graph, when given): see :func:`flow_summary`."""

    graph: dict[str, Any] | None
    contexts: int
    dialogues: int
    unseen_dialogues: int
    unseen_contexts: int
    unseen_prefix_contexts: int
    exits: dict[str, int]
    patterns: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def unseen_dialogue_share(self) -> float:
        """Share of dialogues whose flow is unseen."""
        return _share(self.unseen_dialogues, self.dialogues)

    @property
    def unseen_context_share(self) -> float:
        """Share of contexts whose dialogue's flow is unseen."""
        return _share(self.unseen_contexts, self.contexts)

    @property
    def unseen_prefix_share(self) -> float:
        """Share of contexts at or after the turn where their dialogue leaves the graph."""
        return _share(self.unseen_prefix_contexts, self.contexts)

    def to_json(self) -> dict[str, Any]:
        """Every count and share as JSON values."""
        return {
            "graph": self.graph,
            "contexts": self.contexts,
            "dialogues": self.dialogues,
            "unseen_dialogues": self.unseen_dialogues,
            "unseen_dialogue_share": self.unseen_dialogue_share,
            "unseen_contexts": self.unseen_contexts,
            "unseen_context_share": self.unseen_context_share,
            "unseen_prefix_contexts": self.unseen_prefix_contexts,
            "unseen_prefix_share": self.unseen_prefix_share,
            "exits": self.exits,
            "patterns": self.patterns,
        }

    def format(self) -> str:
        """A readable report."""
        lines = []
        if self.graph is not None:
            lines.append(f"graph: {FlowGraph.format_description(self.graph)}")
        lines.append(
            f"dialogues: {self.dialogues}, unseen flow {self.unseen_dialogues} ({self.unseen_dialogue_share:.1%}); "
            f"left the graph at an unseen {', '.join(f'{k} {v}' for k, v in self.exits.items()) or '-'}"
        )
        lines.append(
            f"contexts: {self.contexts}, on unseen flows {self.unseen_contexts} ({self.unseen_context_share:.1%}), "
            f"after leaving the graph {self.unseen_prefix_contexts} ({self.unseen_prefix_share:.1%})"
        )
        lines.append(f"{'pattern':<12} {'contexts':>9} {'seen':>7} {'unseen':>7} {'unknown':>8} {'dialogues':>10}")
        for name, counts in self.patterns.items():
            lines.append(
                f"{name:<12} {counts['contexts']:>9} {counts['seen']:>7} {counts['unseen']:>7} "
                f"{counts['unknown']:>8} {counts['dialogues']:>10}"
            )
        return "\n".join(lines)


def flow_summary(contexts: ContextSet, graph: FlowGraph | None = None) -> FlowSummary:
    """Count a labelled context set: unseen dialogues and contexts, exits, patterns.

    Pattern counts per pattern: ``contexts`` tagged True, of them ``seen`` and ``unseen``
    (by the dialogue's flow), ``unknown`` (tag None) and ``dialogues`` with at least one
    tagged context. ``exits`` counts dialogues by why they left the graph.

    Raises
    ------
    InvalidContextError
        If a context has no flow label (label the set first).

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> meta = {"flow": "unseen", "flow_prefix": "seen", "flow_exit": "edge", "dialogue_id": "d"}
    >>> cs = ContextSet([Context("c", BeliefState(), {**meta, "pattern_repeat": True})], name="x")
    >>> s = flow_summary(cs)
    >>> s.unseen_dialogue_share, s.exits, s.patterns["repeat"]["unseen"]
    (1.0, {'edge': 1}, 1)
    """
    unlabelled = [c.id for c in contexts if c.metadata.get("flow") not in ("seen", "unseen")]
    if unlabelled:
        raise InvalidContextError(
            f"{len(unlabelled)} context(s) have no flow label ({_shown(unlabelled)}): label the set first "
            "(label_contexts, or simscore contexts flows label)"
        )
    dialogues: dict[tuple[Any, Any], Mapping[str, Any]] = {}
    patterns = {name: {"contexts": 0, "seen": 0, "unseen": 0, "unknown": 0, "dialogues": 0} for name in PATTERNS}
    tagged: dict[str, set[tuple[Any, Any]]] = {name: set() for name in PATTERNS}
    for context in contexts:
        meta = context.metadata
        key = (meta.get("source_name"), meta["dialogue_id"])
        dialogues.setdefault(key, meta)
        for name in PATTERNS:
            value = meta.get(f"pattern_{name}")
            if value is None:
                patterns[name]["unknown"] += 1
            elif value:
                patterns[name]["contexts"] += 1
                patterns[name][meta["flow"]] += 1
                tagged[name].add(key)
    for name in PATTERNS:
        patterns[name]["dialogues"] = len(tagged[name])
    exits = Counter(meta.get("flow_exit") for meta in dialogues.values() if meta["flow"] == "unseen")
    return FlowSummary(
        graph=None if graph is None else graph.describe(),
        contexts=len(contexts),
        dialogues=len(dialogues),
        unseen_dialogues=sum(1 for meta in dialogues.values() if meta["flow"] == "unseen"),
        unseen_contexts=sum(1 for c in contexts if c.metadata["flow"] == "unseen"),
        unseen_prefix_contexts=sum(1 for c in contexts if c.metadata.get("flow_prefix") == "unseen"),
        exits={str(k): v for k, v in sorted(exits.items(), key=lambda item: str(item[0]))},
        patterns=patterns,
    )


# ----------------------------------------------------------------------------- sampling


def sample_balanced(
    contexts: ContextSet,
    *,
    by: str = "flow",
    per_stratum: int | None = None,
    seed: int = 0,
    name: str | None = None,
) -> ContextSet:
    """A seeded subset with the same number of contexts from every stratum of ``by``.

    Parameters
    ----------
    contexts : ContextSet
        Labelled contexts (contexts without a ``by`` value are left out).
    by : str
        The metadata key of the strata (default ``flow``: seen and unseen flows).
    per_stratum : int, optional
        Contexts per stratum (default: the size of the smallest stratum).
    seed : int
        Which contexts are drawn (without replacement, uniformly within each stratum).
    name : str, optional
        Default ``<name>[balanced by <by>]``.

    Returns
    -------
    ContextSet
        In the input's order; ``built["sampled"]`` records the strata, their sizes and the seed.

    Raises
    ------
    InvalidContextError
        Fewer than two strata, or ``per_stratum`` larger than a stratum (naming its size).

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> cs = ContextSet([Context(f"c{i}", BeliefState(), {"flow": "seen" if i < 8 else "unseen"})
    ...                  for i in range(10)], name="C")
    >>> sample = sample_balanced(cs, seed=1)
    >>> len(sample), sorted(c.metadata["flow"] for c in sample)
    (4, ['seen', 'seen', 'unseen', 'unseen'])
    """
    seed = check_int("seed", seed, minimum=0, error=InvalidContextError)
    groups: dict[str, list[int]] = {}
    for position, context in enumerate(contexts):
        value = context.metadata.get(by)
        if value is not None:
            groups.setdefault(str(value), []).append(position)
    if len(groups) < 2:
        raise InvalidContextError(
            f"metadata {by!r} has {len(groups)} distinct value(s) in {contexts.name!r}: nothing to balance "
            "(label the set first?)"
        )
    sizes = {label: len(groups[label]) for label in sorted(groups)}
    if per_stratum is None:
        per_stratum = min(sizes.values())
    per_stratum = check_int("per_stratum", per_stratum, minimum=1, error=InvalidContextError)
    short = {label: size for label, size in sizes.items() if size < per_stratum}
    if short:
        raise InvalidContextError(
            f"per_stratum={per_stratum} but stratum sizes are {sizes} ({', '.join(short)} too small)"
        )
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for label in sorted(groups):
        members = np.asarray(groups[label])
        chosen.extend(int(i) for i in rng.choice(members, size=per_stratum, replace=False))
    keep = sorted(chosen)
    built = dict(contexts.built)
    built["sampled"] = {"from": contexts.name, "by": by, "per_stratum": per_stratum, "seed": seed, "strata": sizes}
    return ContextSet(
        [contexts.contexts[i] for i in keep],
        name=name or f"{contexts.name}[balanced by {by}]",
        domain=contexts.domain,
        built=built,
    )
