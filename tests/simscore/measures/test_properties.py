"""Properties every registered measure must have (one test loops over the whole registry)."""

from __future__ import annotations

import numpy as np
import pytest

from simscore import MEASURES, Act
from simscore.measures import ACTION_MEASURES, Measure

ACTS = [
    Act.parse("hello()"),
    Act.parse("request(food)"),
    Act.parse("request(area)"),
    Act.parse('confirm(food="thai")'),
    Act.parse('inform(name="the golden wok",food="chinese",area="centre")'),
    Act.parse('inform(name="la mimosa",food="italian")'),
    Act.parse('inform(name=none,food="korean",area="north")'),
    Act.parse('select(area="north",area="south")'),
    Act.parse("bye()"),
]
TEXTS = [
    "Hello, welcome to the Cambridge restaurant system. How may I help you?",
    "What kind of food would you like?",
    "What part of town do you have in mind?",
    "You are looking for a thai restaurant, right?",
    "The golden wok is a chinese restaurant in the centre of town.",
    "La mimosa serves italian food.",
    "I am sorry but there is no korean restaurant in the north of town.",
    "Sorry would you like the north or the south of town?",
    "Goodbye.",
    "",
]


def _inputs(measure: Measure, n: int, seed: int) -> tuple[list, list]:
    pool = ACTS if measure.level == "action" else TEXTS
    rng = np.random.default_rng(seed)
    return [pool[i] for i in rng.integers(0, len(pool), n)], [pool[i] for i in rng.integers(0, len(pool), n)]


#: The measures of a bare install; the others need the text extra (conftest.py skips them without it).
CORE = (*ACTION_MEASURES, "bleu4")


@pytest.fixture(
    scope="module",
    params=[name if name in CORE else pytest.param(name, marks=pytest.mark.extra("text")) for name in MEASURES],
)
def measure(request):
    return MEASURES[request.param]


@pytest.mark.slow
def test_measure_properties(measure):
    assert measure.level in ("action", "text")
    assert isinstance(measure.signature(), str) and measure.signature().startswith(measure.name)
    pool = ACTS if measure.level == "action" else TEXTS
    low, high = measure.bounds
    # identical inputs score the maximum
    same = measure.score_pairs(pool, pool)
    np.testing.assert_allclose(same, high, rtol=0, atol=1e-6)
    a, b = _inputs(measure, 60, seed=1)
    ab = measure.score_pairs(a, b)
    # finite and within bounds
    assert ab.dtype == np.float64 and ab.shape == (60,)
    assert np.isfinite(ab).all()
    assert (ab >= low - 1e-9).all() and (ab <= high + 1e-9).all()
    # symmetric
    if measure.symmetric:
        np.testing.assert_allclose(measure.score_pairs(b, a), ab, rtol=0, atol=1e-9)
    # permuting pairs permutes scores
    perm = np.random.default_rng(2).permutation(60)
    np.testing.assert_allclose(
        measure.score_pairs([a[i] for i in perm], [b[i] for i in perm]), ab[perm], rtol=0, atol=1e-9
    )
    # cached (second call on the same instance) and uncached (fresh instance) results identical
    np.testing.assert_array_equal(measure.score_pairs(a, b), ab)
    fresh = type(measure)()
    np.testing.assert_allclose(fresh.score_pairs(a, b), ab, rtol=0, atol=1e-6)
    # scoring one pair at a time gives the same numbers as scoring them together
    one_by_one = np.array([measure.score_pairs([x], [y])[0] for x, y in zip(a[:8], b[:8])])
    np.testing.assert_allclose(one_by_one, ab[:8], rtol=0, atol=1e-6)
