"""Local model folders, read safely (:mod:`~simscore.models.folders`, whose names this face offers),
and chat templates rendered in a bounded sandbox process (:mod:`~simscore.models.chat_templates`).
"""

from simscore.models import folders as _face
from simscore.models.folders import *  # noqa: F403 (the face offers exactly what folders lists in __all__)

__all__ = list(_face.__all__)
