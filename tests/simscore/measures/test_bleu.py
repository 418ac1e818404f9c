"""``bleu4`` against sacrebleu itself, called directly on the same pairs (and hand-computed BLEU)."""

from __future__ import annotations

import importlib.metadata
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simscore.measures.bleu import Bleu4
from simscore.measures.text import TextMeasureError
from tests.simscore.measures.corpus import MANY, ODD, SAME, A, B, pairs_of


def _sacrebleu_symmetric(x: str, y: str, **options) -> float:
    from sacrebleu import sentence_bleu

    forward = sentence_bleu(x, [y], smooth_method="floor", **options).score
    backward = sentence_bleu(y, [x], smooth_method="floor", **options).score
    return (forward + backward) / 200.0


@pytest.mark.parametrize("lowercase", [False, True])
def test_bleu4_equals_sacrebleu_sentence_bleu_both_directions(lowercase):
    measure = Bleu4(lowercase=lowercase)
    expected = [_sacrebleu_symmetric(x, y, lowercase=lowercase) for x, y in zip(A, B)]
    got = measure.score_pairs(A, B)
    assert got.dtype == np.float64 and got.shape == (len(A),)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert (got[SAME] == 1.0).all() and (got[~SAME] < 1.0).all()


@pytest.mark.parametrize("options", [{}, {"lowercase": True, "tokenize": "intl"}, {"tokenize": "char"}])
def test_bleu4_vectorised_equals_sacrebleu_bit_for_bit_and_pair_alone(options, monkeypatch):
    import simscore.measures.bleu as bleu_module

    texts = MANY[::3] + ODD
    a, b = pairs_of(texts, 400, seed=3)
    a, b = a + ODD + ODD, b + ODD[::-1] + ODD[1:] + ODD[:1]
    import simscore.measures._ngrams as ngrams_module

    monkeypatch.setattr(ngrams_module, "MATCH_BLOCK", 64)  # several blocks per call
    monkeypatch.setattr(bleu_module, "PAIR_BLOCK", 100)  # n-grams counted in several blocks of texts
    got = Bleu4(**options).score_pairs(a, b)
    # a text with itself scores 1.0 by rule; sacrebleu's own 1 can be 1 + 4e-16 (clipped)
    expected = [1.0 if x == y else min(_sacrebleu_symmetric(x, y, **options), 1.0) for x, y in zip(a, b)]
    # the same float operations in the same order: equal, not merely close
    np.testing.assert_array_equal(got, expected)
    assert 0.0 < got.mean() < 1.0 and (got == 0.0).any() and (got == 1.0).any()
    # a pair's value does not depend on the other pairs of the call
    alone = Bleu4(**options)
    np.testing.assert_array_equal([alone.score_pairs([x], [y])[0] for x, y in zip(a[:40], b[:40])], got[:40])


def test_bleu4_tokenizer_option_equals_sacrebleu():
    expected = [_sacrebleu_symmetric(x, y, tokenize="char") for x, y in zip(A, B)]
    np.testing.assert_allclose(Bleu4(tokenize="char").score_pairs(A, B), expected, atol=1e-12)


# (hypothesis, reference, hand-computed value)
BLEU_GOLDEN = [
    # forward: precisions 3/3, 2/2, 1/1 (effective order 3), brevity penalty exp(1 - 6/3);
    # backward: 3/6, 2/5, 1/4 and floor 0.1/3 for 4-grams, no brevity penalty.
    ("the cat sat", "the cat sat on the mat",
     (math.exp(-1.0) + (0.5 * 0.4 * 0.25 * (0.1 / 3)) ** 0.25) / 2),
    # both directions: 1/2 unigrams, floor 0.1/1 bigrams, effective order 2
    ("hello there", "hello world", math.sqrt(0.5 * 0.1)),
    # 13a splits the punctuation: 4/5, 3/4, 2/3, 1/2 in both directions
    ("Thank you, goodbye.", "thank you, goodbye.", (0.8 * 0.75 * (2 / 3) * 0.5) ** 0.25),
    ("hello", "goodbye", 0.0),
    ("What kind of food would you like?", "What kind of food would you like?", 1.0),
]


@pytest.mark.parametrize(("hyp", "ref", "expected"), BLEU_GOLDEN)
def test_bleu4_golden_values(hyp, ref, expected):
    got = Bleu4().score_pairs([hyp, ref], [ref, hyp])
    assert got.tolist() == pytest.approx([expected, expected], abs=1e-12)


def test_bleu4_lowercase_option_and_signature():
    pair = (["Thank you, goodbye."], ["thank you, goodbye."])
    assert Bleu4(lowercase=True).score_pairs(*pair)[0] == 1.0
    assert Bleu4().signature() == (
        f"bleu4|sacrebleu:{importlib.metadata.version('sacrebleu')}|tok:13a|smooth:floor|order:4|sym:mean|lc:no"
    )
    assert Bleu4(tokenize="intl", lowercase=True).signature().endswith(
        "|tok:intl|smooth:floor|order:4|sym:mean|lc:yes"
    )


def test_bleu4_rejects_bad_options():
    with pytest.raises(TextMeasureError, match="tokenize must be one of .*got '14a'"):
        Bleu4(tokenize="14a")
    with pytest.raises(TextMeasureError, match="lowercase must be a bool"):
        Bleu4(lowercase="yes")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "a.", "ü"]), max_size=12))
def test_bleu4_counts_n_grams_as_sacrebleu_does(tokens):
    # bleu4 counts the n-grams itself (vectorised); sacrebleu's extract_all_word_ngrams is the definition
    from sacrebleu.metrics.helpers import extract_all_word_ngrams

    from simscore.measures.bleu import ngram_counts

    counts, length = extract_all_word_ngrams(" ".join(tokens), 1, 4)
    assert ngram_counts(tokens) == dict(counts) and length == len(tokens)


def test_bleu4_word_table_emptied_when_full_gives_the_same_values(monkeypatch):
    # the word ids are the instance's; emptied between calls when too many, values unchanged
    import simscore.measures.bleu as bleu_module

    a, b = pairs_of(MANY, 60, seed=5)
    expected = Bleu4().score_pairs(a, b)
    monkeypatch.setattr(bleu_module, "WORD_TABLE_ENTRIES", 10)
    measure = Bleu4()
    first = measure.score_pairs(a[:30], b[:30])
    assert len(measure._words) > 10
    measure.clear_pair_cache()
    np.testing.assert_array_equal(np.concatenate([first, measure.score_pairs(a[30:], b[30:])]), expected)
    assert len(measure._words) < len(set(" ".join(a + b).split())) + 10

