"""A bounded least-recently-used cache for the measures' memos (embeddings, pair scores).

Measures remember what they computed -- a sentence's embedding, a pair's score -- because a
comparison has few distinct inputs and an experiment scores the same ones many times. Inside
a long-running process (an RL run watched by a monitor, a server) the distinct inputs never
stop coming, so every such memo is an :class:`LRUCache` with a documented bound: when it is
full, the entry used least recently is forgotten and, if needed again, computed again.

A memo may only hold what recomputing gives again: every measure documents why its entries
are functions of their keys -- bit for bit, or within a stated tolerance where a BLAS kernel
rounds a row according to its position in a batch -- so the bound changes the time a call
takes, not a result (beyond that tolerance). The bounds are far above what an experiment
holds (the demo, the paper run), whose numbers therefore never meet an eviction.

Examples
--------
>>> cache = LRUCache("demo", max_entries=2)
>>> cache.put("a", 1); cache.put("b", 2)
>>> cache.get("a")  # "a" is now the most recently used
1
>>> cache.put("c", 3)  # full: forgets "b", the least recently used
>>> sorted(cache.keys()), cache.evictions
(['a', 'c'], 1)
>>> cache.get("b") is None
True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

from simscore.checks import check_int

__all__ = ["LRUCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A mapping bounded by a number of entries and, optionally, by a total cost.

    Parameters
    ----------
    name : str
        What the cache holds, for error messages and ``repr``.
    max_entries : int
        Most entries kept (>= 1).
    max_cost : int, optional
        Most total cost kept, with ``cost(value)`` the cost of one entry (e.g. its bytes).
        An entry costlier than ``max_cost`` alone is not kept at all.
    cost : callable, optional
        Cost of a value; required with ``max_cost``.

    Thread-safe: every method takes the cache's own lock, so measures shared between threads
    (a model preloaded in the background while another thread scores) keep it consistent.
    """

    def __init__(
        self,
        name: str,
        *,
        max_entries: int,
        max_cost: int | None = None,
        cost: Callable[[V], int] | None = None,
    ) -> None:
        self.name = name
        self.max_entries = check_int(f"{name}: max_entries", max_entries, minimum=1, error=ValueError)
        if max_cost is not None:
            max_cost = check_int(f"{name}: max_cost", max_cost, minimum=1, error=ValueError)
            if cost is None:
                raise ValueError(f"{name}: max_cost needs cost, the cost of one entry")
        self.max_cost = max_cost
        self._cost = cost
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()
        #: entries forgotten to stay within the bound, over the cache's lifetime
        self.evictions = 0

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._lock:
            found = self._data.get(key)
            if found is None:
                return None
            self._data.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key``, forgetting the least recently used entries if full."""
        self.update(((key, value),))

    def _insert(self, key: K, value: V) -> None:
        size = self._cost(value) if self._cost is not None else 0
        old = self._data.pop(key, None)
        if old is not None:
            self._total -= old[1]
        if self.max_cost is not None and size > self.max_cost:
            return
        self._data[key] = (value, size)
        self._total += size

    def _evict(self) -> None:
        while len(self._data) > self.max_entries or (self.max_cost is not None and self._total > self.max_cost):
            _, (_, freed) = self._data.popitem(last=False)
            self._total -= freed
            self.evictions += 1

    def get_many(self, keys: list[K]) -> list[V | None]:
        """:meth:`get` of every key, in order, under one acquisition of the lock."""
        with self._lock:
            data = self._data
            out: list[V | None] = []
            for key in keys:
                found = data.get(key)
                if found is None:
                    out.append(None)
                else:
                    data.move_to_end(key)
                    out.append(found[0])
            return out

    def update(self, items: Iterable[tuple[K, V]]) -> None:
        """:meth:`put` every ``(key, value)`` of ``items``, in order, under one acquisition of the lock."""
        with self._lock:
            insert, evict = self._insert, self._evict
            for key, value in items:
                insert(key, value)
                evict()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> list[K]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._data)

    @property
    def cost(self) -> int:
        """Total cost of the entries kept (0 without a cost function)."""
        return self._total

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._data.clear()
            self._total = 0

    def __repr__(self) -> str:
        bound = f"{self.max_entries} entries" + (f", cost {self.max_cost}" if self.max_cost is not None else "")
        return f"<LRUCache {self.name}: {len(self._data)} of {bound}>"
