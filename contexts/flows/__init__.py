"""Conversation flows: flow graphs (:mod:`~contexts.flows.graph`, whose names this face offers),
the dialogues they are built from (:mod:`~contexts.flows.dialogues`), turn labels
(:mod:`~contexts.flows.labels`), complex-pattern tags (:mod:`~contexts.flows.patterns`) and the
figure of a graph (:mod:`~contexts.flows.plot`).
"""

from contexts.flows import graph as _face
from contexts.flows.graph import *  # noqa: F403 (the face offers exactly what graph lists in __all__)

__all__ = list(_face.__all__)
