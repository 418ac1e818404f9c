"""A value built at most once per process, on first use, thread-safe: the measures' shared defaults.

:func:`~simscore.measures.default_use_encoder` and
:func:`~simscore.measures.embedding.default_embedding_encoder` each hand out one encoder per
process, so that the cosine and angular measures of a family embed each sentence once and load
their model once. Both are a :class:`BuiltOnce` of their encoder's class.

Examples
--------
>>> made = []
>>> shared = BuiltOnce(lambda: made.append("built") or object())
>>> shared.built
False
>>> shared.get() is shared.get(), made
(True, ['built'])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["BuiltOnce"]

T = TypeVar("T")


class BuiltOnce(Generic[T]):
    """``build()``'s result: built on the first :meth:`get`, the very same object on every later one.

    Nothing is built before the first :meth:`get`. Thread-safe: :meth:`get` builds under a lock, so
    threads asking at the same time wait for the one build and get its object. A ``build`` that
    raises keeps nothing, and the next :meth:`get` builds again.
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: tuple[T] | None = None  # (the value,) once built: a value may itself be None

    @property
    def built(self) -> bool:
        """Whether the value has been built."""
        return self._value is not None

    def get(self) -> T:
        """The value, built now if it is not yet."""
        with self._lock:
            if self._value is None:
                self._value = (self._build(),)
            return self._value[0]
