"""``emb_cos`` / ``emb_ang`` on any local sentence-embedding folder, against sentence-transformers'
own ``encode`` on the same folders (the packaged MiniLM, and copies of it with other pooling)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from simscore.errors import ModelNotFoundError, TextMeasureError, TruncationWarning
from simscore.measures import resolve_measures
from simscore.measures.embedding import EmbeddingAngular, EmbeddingCosine, LocalSentenceEncoder, read_layout
from tests.simscore.measures.corpus import MANY, ODD, PROMPTS, bert_dir

st = pytest.importorskip("sentence_transformers")
TEXTS = PROMPTS + MANY[::40] + ODD


def _reference(folder: Path, texts: list[str], *, normalize: bool = True) -> np.ndarray:
    model = st.SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    emb = model.encode(texts, batch_size=16, convert_to_numpy=True).astype(np.float64)
    return emb / np.linalg.norm(emb, axis=1, keepdims=True) if normalize else emb


def _copy(tmp_path: Path, *, pooling: dict | None = None, modules: list | None = None, plain: bool = False) -> Path:
    """A copy of the packaged MiniLM folder, optionally with another pooling or module list."""
    folder = tmp_path / "minilm-copy"
    shutil.copytree(bert_dir(), folder)
    if plain:
        for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
            (folder / name).unlink()
        shutil.rmtree(folder / "1_Pooling")
    if pooling is not None:
        (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 384, **pooling}))
    if modules is not None:
        (folder / "modules.json").write_text(json.dumps(modules))
    return folder


@pytest.mark.slow
def test_embeddings_equal_sentence_transformers_encode_to_1e6():
    encoder = LocalSentenceEncoder(threads=1)
    ours = encoder.encode(TEXTS)
    theirs = _reference(Path(bert_dir()), TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() <= 1e-6
    cos = EmbeddingCosine(encoder=encoder).score_pairs(TEXTS[:-1], TEXTS[1:])
    expected = np.clip(np.sum(theirs[:-1] * theirs[1:], axis=1), -1, 1)
    np.testing.assert_allclose(cos, expected, rtol=0, atol=1e-6)
    ang = EmbeddingAngular(encoder=encoder).score_pairs(TEXTS[:-1], TEXTS[1:])
    np.testing.assert_allclose(ang, 1 - np.arccos(expected) / np.pi, rtol=0, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize(
    "pooling",
    [
        {"pooling_mode": "cls"},
        {"pooling_mode": ["max", "mean"]},
        {"pooling_mode_mean_sqrt_len_tokens": True},
        {"pooling_mode": "weightedmean"},
        {"pooling_mode": "lasttoken"},
    ],
)
def test_the_models_own_pooling_config_is_followed(tmp_path, pooling):
    folder = _copy(tmp_path, pooling=pooling)
    encoder = LocalSentenceEncoder(folder, threads=1)
    assert encoder.layout.pooling in {("cls",), ("max", "mean"), ("mean_sqrt_len_tokens",), ("weightedmean",),
                                      ("lasttoken",)}
    assert np.abs(encoder.encode(TEXTS[:12]) - _reference(folder, TEXTS[:12])).max() <= 1e-6
    assert f"|pooling:{'+'.join(encoder.layout.pooling)}|" in encoder.signature_part()


@pytest.mark.slow
def test_a_plain_hugging_face_folder_gets_mean_pooling_as_sentence_transformers_builds(tmp_path):
    folder = _copy(tmp_path, plain=True)
    encoder = LocalSentenceEncoder(folder, threads=1)
    assert encoder.layout.pooling == ("mean",) and not encoder.layout.normalize
    assert encoder.layout.max_tokens == 512  # no max_seq_length: the tokenizer's maximum
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sentence-transformers announces the mean pooling it adds
        theirs = _reference(folder, TEXTS[:12])
    assert np.abs(encoder.encode(TEXTS[:12]) - theirs).max() <= 1e-6


def test_modules_simscore_does_not_run_are_refused(tmp_path):
    modules = json.loads((Path(bert_dir()) / "modules.json").read_text())
    modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    with pytest.raises(TextMeasureError, match="this model has sentence_transformers.models.Dense"):
        read_layout(_copy(tmp_path, modules=modules))
    with pytest.raises(TextMeasureError, match=r"pooling modes \['median'\]"):
        read_layout(_copy(tmp_path / "b", pooling={"pooling_mode": "median"}))


def test_signature_names_the_model_and_a_hash_of_its_content(tmp_path):
    default = LocalSentenceEncoder().signature_part()
    copy = _copy(tmp_path)
    same = LocalSentenceEncoder(copy).signature_part()
    digest = default.split("sha256:")[1][:12]
    assert same.startswith(f"encoder:st:minilm-copy(sha256:{digest})|pooling:mean|normalize:yes|max_tokens:256")
    assert "|torch:" in same and "|transformers:" in same and same.endswith("|device:cpu|dtype:float32")
    (copy / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "cls"}))
    assert digest not in LocalSentenceEncoder(copy).signature_part()  # another model, another hash


@pytest.mark.slow
def test_long_texts_are_cut_at_max_seq_length_as_sentence_transformers_does():
    long = " ".join(PROMPTS * 6)  # about 750 word pieces; MiniLM's max_seq_length is 256
    encoder = LocalSentenceEncoder(threads=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = encoder.encode([long])
    assert [w.category for w in caught] == [TruncationWarning] and encoder.truncated == 1
    assert np.abs(ours - _reference(Path(bert_dir()), [long])).max() <= 1e-6


def test_options_build_and_share_an_encoder(tmp_path):
    cos, ang = resolve_measures(["emb_cos", "emb_ang"], options={
        "emb_cos": {"model": bert_dir(), "batch_size": 8}, "emb_ang": {"model": bert_dir(), "batch_size": 8}})
    assert cos.encoder is ang.encoder and cos.encoder.batch_size == 8 and not cos.encoder.loaded
    assert cos.signature().startswith("emb_cos|encoder:st:model(sha256:")
    with pytest.raises(ModelNotFoundError, match="model folder .*missing does not exist"):
        resolve_measures(["emb_cos"], options={"emb_cos": {"model": str(tmp_path / "missing")}})
