"""Statistics of comparisons: intervals and the bootstrap (:mod:`~simscore.stats.intervals`, whose
names this face offers), the statistical unit (:mod:`~simscore.stats.clusters`), strata
(:mod:`~simscore.stats.strata`), power (:mod:`~simscore.stats.power`), decisions that stay valid
under repeated checks (:mod:`~simscore.stats.sequential`) and self-consistency of sampled
policies (:mod:`~simscore.stats.consistency`).
"""

from simscore.stats import intervals as _face
from simscore.stats.intervals import *  # noqa: F403 (the face offers exactly what intervals lists in __all__)

__all__ = list(_face.__all__)
