"""Files in and out: bounded, line-numbered reading (:mod:`~simscore.io.reading`, whose limits are
read there at each call) and the output contract (:mod:`~simscore.io.output`), both offered
here; simscore's file kinds (:mod:`~simscore.io.formats`), strings from files made inert
(:mod:`~simscore.io.untrusted`) and strict configuration mappings (:mod:`~simscore.io.config`).
"""

from simscore.io import reading as _face
from simscore.io.reading import *  # noqa: F403 (the face offers exactly what reading lists in __all__)

__all__ = list(_face.__all__)
