"""contexts: the dialogue contexts every compared policy is run on (step 1 of the method).

The restaurant-search domain (ontology and venue database), belief states, contexts and
context sets with their JSON Lines files, the C_gen grid generator and C_col collection from
dialogue logs (the simulator's format, ConvLab-3's unified data format, or PyDial belief dicts
logged turn by turn), and conversation-flow graphs with the seen/unseen-flow labels and
complex-pattern tags they give context sets (:mod:`contexts.flows`,
:mod:`contexts.flows.labels`).

The names below are what a user starts from; the rest is imported from its module: the
ontology's parts from :mod:`contexts.domain` (``Ontology``, ``Venue``, ``METHODS``, ...), the
readers behind the importers from :mod:`contexts.collect` (``read_convlab``),
:mod:`contexts.pydial` (``read_pydial_beliefs``) and :mod:`contexts.dialogue_log`
(``dialogue_contexts``), the flow dialogues and walks from :mod:`contexts.flows.dialogues` and
:mod:`contexts.flows`.

Examples
--------
>>> from contexts import generate_grid
>>> c_gen = generate_grid()
>>> len(c_gen), c_gen.domain
(1296, 'restaurants')
"""

from contexts._frozen import FrozenDict
from contexts.belief import BeliefState
from contexts.collect import collect_contexts, import_convlab
from contexts.context import Context, ContextSet
from contexts.dialogue_log import Dialogue, DialogueTurn, read_dialogue_log, write_dialogue_log
from contexts.domain import Domain, default_domain, load_domain
from contexts.flows import FlowGraph
from contexts.flows.dialogues import read_flow_dialogues
from contexts.flows.labels import flow_summary, label_contexts, sample_balanced
from contexts.generate import GridSpec, generate_grid
from contexts.pydial import import_pydial

__simscore_distribution__ = "simscore-dialogue"  # checked by simscore.ownership (the name is shared on PyPI)
__all__ = [
    # contexts and their sets
    "BeliefState",
    "Context",
    "ContextSet",
    "FrozenDict",
    # the domain
    "Domain",
    "default_domain",
    "load_domain",
    # C_gen
    "GridSpec",
    "generate_grid",
    # C_col: dialogue logs, ConvLab-3 and PyDial
    "Dialogue",
    "DialogueTurn",
    "read_dialogue_log",
    "write_dialogue_log",
    "collect_contexts",
    "import_convlab",
    "import_pydial",
    # conversation flows
    "FlowGraph",
    "read_flow_dialogues",
    "label_contexts",
    "flow_summary",
    "sample_balanced",
]
