"""The tensorflow-hub backend of use_cos / use_ang, on a tiny USE-like SavedModel built here.

The model maps a batch of strings to a fixed linear image of hashed character 1- and
2-grams: deterministic, a few kilobytes, and exercising the same ``tensorflow_hub.load``
path and call signature (``(None,) tf.string -> (n, d) float32``) as a real USE SavedModel.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from simscore.measures.text import TFHubEncoder, UseAngular, UseCosine

# tensorflow is imported by the fixture, not at collection: importing it takes seconds.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("tensorflow") is None, reason="tensorflow is not installed"
    ),
]

BUCKETS, DIM = 97, 16
PROMPTS = [
    "What kind of food would you like?",
    "What part of town do you have in mind?",
    "The Golden Wok is a nice restaurant in the centre of town serving chinese food.",
    "La Mimosa is a nice restaurant in the centre of town serving mediterranean food.",
    "Sorry, would you like the north or the south part of town?",
    "Thank you for using the Cambridge restaurant system. Goodbye.",
]


def _tiny_use(tf):
    """A tf.Module with a USE-like ``__call__``: strings (n,) -> float32 (n, DIM)."""

    class TinyUse(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            rng = np.random.default_rng(20200701)
            self.table = tf.Variable(rng.normal(size=(BUCKETS, DIM)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, texts):
            chars = tf.strings.unicode_split(tf.strings.lower(texts), "UTF-8")
            grams = tf.strings.ngrams(chars, ngram_width=(1, 2), separator="")
            ids = tf.ragged.map_flat_values(tf.strings.to_hash_bucket_fast, grams, BUCKETS)
            vectors = tf.ragged.map_flat_values(lambda i: tf.gather(self.table, i), ids)
            return tf.reduce_sum(vectors, axis=1)

    return TinyUse()


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    import tensorflow as tf

    module = _tiny_use(tf)
    path = tmp_path_factory.mktemp("tiny_use")
    tf.saved_model.save(module, str(path))
    direct = module(tf.constant(PROMPTS)).numpy().astype(np.float64)
    return path, direct


def _pairs():
    n = len(PROMPTS)
    idx_a = [0, 1, 2, 3, 4, 5, 2, 0, 3]
    idx_b = [1, 1, 3, 2, 5, 0, 3, 4, 3]
    assert max(idx_a + idx_b) < n
    return idx_a, idx_b


def test_tfhub_encoder_scores_match_direct_embedding(saved_model):
    path, direct = saved_model
    encoder = TFHubEncoder(path)
    assert not encoder.loaded
    use_cos, use_ang = UseCosine(encoder=encoder), UseAngular(encoder=encoder)
    idx_a, idx_b = _pairs()
    a = [PROMPTS[i] for i in idx_a]
    b = [PROMPTS[i] for i in idx_b]

    unit = direct / np.linalg.norm(direct, axis=1, keepdims=True)
    cos = np.clip(np.sum(unit[idx_a] * unit[idx_b], axis=1), -1.0, 1.0)
    ang = 1.0 - np.arccos(cos) / np.pi

    got_cos = use_cos.score_pairs(a, b)
    got_ang = use_ang.score_pairs(a, b)
    np.testing.assert_allclose(got_cos, cos, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got_ang, ang, rtol=0, atol=1e-6)
    # identical texts score exactly the maximum; the values are not all alike
    assert got_cos[1] == 1.0 and got_ang[1] == 1.0 and got_cos[8] == 1.0
    assert np.ptp(got_cos) > 0.1
    # both measures shared one encoder: every distinct sentence embedded once
    assert encoder.loaded and encoder.cache_size == len(set(a) | set(b))


def test_tfhub_encoder_encode_and_signature(saved_model):
    path, direct = saved_model
    encoder = TFHubEncoder(str(path))
    emb = encoder.encode(PROMPTS[:3] + PROMPTS[:1])
    assert emb.shape == (4, DIM) and emb.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(
        emb[:3], direct[:3] / np.linalg.norm(direct[:3], axis=1, keepdims=True), atol=1e-6
    )
    np.testing.assert_array_equal(emb[3], emb[0])
    assert encoder.cache_size == 3
    signature = UseCosine(encoder=encoder).signature()
    assert signature.startswith(f"use_cos|encoder:tfhub:{path.name}|tensorflow-hub:")
    assert "|tensorflow:" in signature
