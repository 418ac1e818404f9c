"""The bounded cache behind every measure memo: least recently used entries go first."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

from simscore.measures._cache import LRUCache
from simscore.measures.text_base import TextMeasure


def test_entries_bound_forgets_the_least_recently_used():
    cache: LRUCache[str, int] = LRUCache("t", max_entries=3)
    for k, key in enumerate("abc"):
        cache.put(key, k)
    assert cache.get("a") == 0  # now the most recent
    cache.put("d", 3)
    assert cache.keys() == ["c", "a", "d"] and cache.get("b") is None and cache.evictions == 1
    assert cache.get_many(["d", "x", "c"]) == [3, None, 2] and cache.keys() == ["a", "d", "c"]
    cache.put("a", 10)  # replacing keeps the size
    assert len(cache) == 3 and cache.get("a") == 10 and cache.evictions == 1


def test_cost_bound_counts_bytes_and_skips_an_entry_larger_than_the_bound():
    cache: LRUCache[str, np.ndarray] = LRUCache("t", max_entries=100, max_cost=100, cost=lambda v: v.nbytes)
    cache.update((f"k{i}", np.zeros(5)) for i in range(3))  # 40 bytes each
    assert cache.keys() == ["k1", "k2"] and cache.cost == 80 and cache.evictions == 1
    cache.put("big", np.zeros(20))  # 160 bytes: never kept, and nothing else is evicted for it
    assert "big" not in cache and cache.keys() == ["k1", "k2"]
    cache.clear()
    assert len(cache) == 0 and cache.cost == 0


@pytest.mark.parametrize("seed", range(20))
def test_update_leaves_what_puts_one_by_one_leave(seed):
    # update() inserts a batch under one acquisition of the lock: the entries, their order, the
    # cost and the evictions are those of putting the items one by one (a later item of the
    # batch may replace a large one that already made older entries go).
    rng = np.random.default_rng(seed)
    bounds = {"max_entries": int(rng.integers(1, 8)), "max_cost": int(rng.integers(5, 40)), "cost": len}
    caches = [LRUCache("t", **bounds), LRUCache("t", **bounds)]
    for _ in range(6):
        batch = [(f"k{int(rng.integers(0, 10))}", "x" * int(rng.integers(0, 12))) for _ in range(int(rng.integers(0, 9)))]
        caches[0].update(batch)
        for key, value in batch:
            caches[1].update([(key, value)])
        if rng.random() < 0.5:
            key = f"k{int(rng.integers(0, 10))}"
            assert caches[0].get(key) == caches[1].get(key)
        assert caches[0].keys() == caches[1].keys()
        assert (caches[0].cost, caches[0].evictions) == (caches[1].cost, caches[1].evictions)
        assert [caches[0].get(k) for k in caches[0].keys()] == [caches[1].get(k) for k in caches[1].keys()]


def test_bad_bounds_are_rejected():
    with pytest.raises(ValueError, match="t: max_entries must be >= 1, got 0"):
        LRUCache("t", max_entries=0)
    with pytest.raises(ValueError, match="t: max_cost needs cost"):
        LRUCache("t", max_entries=1, max_cost=10)


def test_pickled_cache_keeps_its_entries_and_gets_a_new_lock():
    cache: LRUCache[str, int] = LRUCache("t", max_entries=2)
    cache.put("a", 1)
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.keys() == ["a"] and clone.get("a") == 1
    clone.put("b", 2)
    clone.put("c", 3)
    assert clone.keys() == ["b", "c"] and cache.keys() == ["a"]


def test_threads_sharing_a_cache_keep_it_within_its_bound():
    cache: LRUCache[int, int] = LRUCache("t", max_entries=50)

    def work(offset: int) -> None:
        for i in range(2000):
            cache.put(offset + i % 80, i)
            cache.get(offset + (i * 7) % 80)

    threads = [threading.Thread(target=work, args=(k * 1000,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50 and len(set(cache.keys())) == 50


class _CountedOverlap(TextMeasure):
    """Word overlap of two texts, counting the pairs it computes."""

    name = "overlap"

    def __init__(self) -> None:
        super().__init__()
        self.computed: list[tuple[str, str]] = []

    def signature(self) -> str:
        return "overlap|words"

    def _score_texts(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        self.computed.extend(pairs)
        return np.array([len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split())) for a, b in pairs])


def test_a_text_measure_forgets_its_pair_scores_and_computes_them_again_alike():
    measure = _CountedOverlap()
    a, b = ["a b", "c d", "a b", ""], ["b c", "c d e", "b c", " "]
    first = measure.score_pairs(a, b)
    assert measure.computed == [("a b", "b c"), ("c d", "c d e")]  # each distinct pair once; blanks by rule
    assert (measure.score_pairs(b, a) == first).all() and len(measure.computed) == 2  # remembered (both orders)
    measure.clear_pair_cache()
    again = measure.score_pairs(a, b)
    assert measure.computed[2:] == [("a b", "b c"), ("c d", "c d e")]  # computed again, and the same numbers
    assert again.tobytes() == first.tobytes()
