"""contexts: the dialogue contexts every compared policy is run on (step 1 of the method).

The restaurant-search domain (ontology and venue database), belief states, contexts and
context sets with their JSON Lines files, the C_gen grid generator and C_col collection from
dialogue logs (the simulator's format, ConvLab-3's unified data format, or PyDial belief dicts
logged turn by turn), and conversation-flow graphs with the seen/unseen-flow labels and
complex-pattern tags they give context sets (:mod:`contexts.flows`,
:mod:`contexts.flow_labels`).

Examples
--------
>>> from contexts import generate_grid
>>> c_gen = generate_grid()
>>> len(c_gen), c_gen.domain
(1296, 'restaurants')
"""

from contexts._frozen import FrozenDict
from contexts.belief import BeliefState
from contexts.collect import collect_contexts, import_convlab, read_convlab
from contexts.context import Context, ContextSet
from contexts.dialogue_log import Dialogue, DialogueTurn, dialogue_contexts, read_dialogue_log, write_dialogue_log
from contexts.domain import (
    DISCOURSE_ACTS,
    METHODS,
    Domain,
    Ontology,
    Venue,
    default_domain,
    load_domain,
    load_ontology,
    load_venues,
)
from contexts.flow_dialogues import FlowDialogue, FlowTurn, flow_dialogues, read_flow_dialogues
from contexts.flow_labels import flow_summary, label_contexts, sample_balanced
from contexts.flows import FlowGraph, FlowWalk
from contexts.generate import GridSpec, generate_grid
from contexts.pydial import import_pydial, read_pydial_beliefs

__simscore_distribution__ = "simscore-dialogue"  # checked by simscore.ownership (the name is shared on PyPI)
__all__ = [
    "BeliefState",
    "Context",
    "ContextSet",
    "DISCOURSE_ACTS",
    "Dialogue",
    "DialogueTurn",
    "Domain",
    "FlowDialogue",
    "FlowGraph",
    "FlowTurn",
    "FlowWalk",
    "FrozenDict",
    "GridSpec",
    "METHODS",
    "Ontology",
    "Venue",
    "collect_contexts",
    "default_domain",
    "dialogue_contexts",
    "flow_dialogues",
    "flow_summary",
    "generate_grid",
    "import_convlab",
    "import_pydial",
    "label_contexts",
    "load_domain",
    "load_ontology",
    "load_venues",
    "read_convlab",
    "read_dialogue_log",
    "read_flow_dialogues",
    "read_pydial_beliefs",
    "sample_balanced",
    "write_dialogue_log",
]
