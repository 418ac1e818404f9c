"""Figures: those of the main experiment (:mod:`~simscore.plots.experiment`, whose names this face
offers), the paper-ready pages (:mod:`~simscore.plots.figures`) and the canvas they share.
"""

from simscore.plots import experiment as _face
from simscore.plots.experiment import *  # noqa: F403 (the face offers exactly what experiment lists in __all__)

__all__ = list(_face.__all__)
