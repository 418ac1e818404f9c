"""The embedding cache folder: round trip, keys, torn and hostile shards, versions, the bound, processes."""

from __future__ import annotations

import hashlib
import io
import logging
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

import simscore.measures.disk_cache as disk_cache
from simscore.errors import TextMeasureError
from simscore.measures.disk_cache import EmbeddingCache, check_cache_dir

SIG = "bertscore|model:x|layer:6"
DTYPES = (np.float32, np.float64)


def _entry(text: str, dim: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """A text's deterministic 'token embeddings' and weights: as many rows as words."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    rows = len(text.split()) or 1
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, dim)).astype(np.float32), rng.random(rows)


def _shards(root: Path) -> list[Path]:
    return sorted(root.glob("v1/*/*.npz"))


def test_entries_come_back_bit_for_bit_under_their_signature_only(tmp_path):
    cache = EmbeddingCache(tmp_path)
    texts = ["hello there", "what food would you like?", "a b c d e f"]
    cache.put(SIG, {t: _entry(t) for t in texts})
    found = EmbeddingCache(tmp_path).get(SIG, [*texts, "never stored"], DTYPES)  # a new process's view
    assert sorted(found) == sorted(texts)
    for text in texts:
        for got, expected in zip(found[text], _entry(text), strict=True):
            np.testing.assert_array_equal(got, expected)
            assert got.dtype == expected.dtype and got.flags.owndata
    assert EmbeddingCache(tmp_path).get(SIG + "|other", texts, DTYPES) == {}
    assert EmbeddingCache(tmp_path).get(SIG, texts, (np.float64, np.float64)) == {}  # other dtypes: not used
    (signature,) = (tmp_path / "v1").glob("*/signature.json")
    assert signature.read_text() == '{"format":"simscore-embedding-cache","version":1,"signature":"' + SIG + '"}\n'


def test_the_same_embeddings_make_the_same_file(tmp_path):
    entries = {t: _entry(t) for t in ("one two", "three")}
    EmbeddingCache(tmp_path / "a").put(SIG, entries)
    EmbeddingCache(tmp_path / "b").put(SIG, dict(reversed(entries.items())))
    (a,), (b,) = _shards(tmp_path / "a"), _shards(tmp_path / "b")
    assert a.name == b.name and a.read_bytes() == b.read_bytes()
    assert a.name[:32] == hashlib.sha256(a.read_bytes()).hexdigest()[:32]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_a_torn_or_altered_shard_is_never_read(tmp_path, caplog, damage):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"hello there": _entry("hello there")})
    (shard,) = _shards(tmp_path)
    data = shard.read_bytes()
    shard.write_bytes({"truncate": data[: len(data) // 2], "flip": data[:-9] + bytes([data[-9] ^ 1]) + data[-8:],
                       "empty": b""}[damage])
    with caplog.at_level(logging.WARNING, logger="simscore.measures.disk_cache"):
        assert EmbeddingCache(tmp_path).get(SIG, ["hello there"], DTYPES) == {}
    assert "is damaged: its content does not match its name (torn or altered); deleted" in caplog.text
    assert not shard.exists()


def test_a_pickled_array_under_its_own_digest_is_refused_not_unpickled(tmp_path, caplog):
    """A hostile shard whose name matches its bytes: allow_pickle=False refuses the object array."""
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.zeros((1, 32), np.uint8), a0=np.array([object()], dtype=object),
             n0=np.array([1]), a1=np.zeros(1), n1=np.array([1]))
    data = buffer.getvalue()
    hostile = shard.with_name(hashlib.sha256(data).hexdigest()[:32] + ".npz")
    hostile.write_bytes(data)
    shard.unlink()
    with caplog.at_level(logging.WARNING, logger="simscore.measures.disk_cache"):
        assert EmbeddingCache(tmp_path).get(SIG, ["x"], DTYPES) == {}
    assert "is damaged: not an .npz of arrays (Object arrays cannot be loaded when allow_pickle=False)" in caplog.text


def test_a_killed_write_leaves_a_temporary_file_that_is_never_read(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    leftover = shard.with_name(f".{shard.name}.0123456789ab.tmp")
    shard.rename(leftover)  # what atomic_open leaves when killed before its rename
    assert EmbeddingCache(tmp_path).get(SIG, ["x"], DTYPES) == {}
    assert leftover.exists()


def test_other_format_versions_are_ignored(tmp_path, caplog):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    newer = tmp_path / "v2" / "abc"
    newer.mkdir(parents=True)
    (newer / "big.npz").write_bytes(b"\0" * 1000)
    signature = shard.parent / "signature.json"
    signature.write_text(signature.read_text().replace('"version":1', '"version":2'))
    fresh = EmbeddingCache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="simscore.measures.disk_cache"):
        assert fresh.get(SIG, ["x"], DTYPES) == {}
        fresh.put(SIG, {"y": _entry("y")})
    assert "ignored: unsupported format version 2 (this simscore reads version 1)" in caplog.text
    assert _shards(tmp_path) == [shard]  # nothing written into the folder of another version
    assert (newer / "big.npz").exists()


def test_the_least_recently_used_shards_go_first_to_keep_the_bound(tmp_path, monkeypatch):
    cache = EmbeddingCache(tmp_path)
    by_text: dict[str, Path] = {}
    for t, text in enumerate(["first", "second", "third"]):
        cache.put(SIG, {text: _entry(text, dim=64)})
        (shard,) = set(_shards(tmp_path)) - set(by_text.values())
        by_text[text] = shard
        os.utime(shard, ns=(10**9 * (t + 1),) * 2)  # written at seconds 1, 2, 3
    size = by_text["first"].stat().st_size
    assert EmbeddingCache(tmp_path).get(SIG, ["first"], DTYPES)  # read: now the most recently used
    monkeypatch.setattr(disk_cache, "MAX_BYTES", 3 * size + size // 2)
    cache.put(SIG, {"fourth": _entry("fourth", dim=64)})
    assert not by_text["second"].exists() and by_text["first"].exists() and by_text["third"].exists()
    assert sorted(EmbeddingCache(tmp_path).get(SIG, ["first", "second", "third", "fourth"], DTYPES)) == \
        ["first", "fourth", "third"]
    monkeypatch.setattr(disk_cache, "MAX_BYTES", size // 2)  # a shard larger than the whole bound: not stored
    cache.put(SIG, {"fifth": _entry("fifth", dim=64)})
    assert EmbeddingCache(tmp_path).get(SIG, ["fifth"], DTYPES) == {}


def test_many_small_shards_are_merged(tmp_path, monkeypatch):
    monkeypatch.setattr(disk_cache, "MAX_SHARDS", 3)
    cache = EmbeddingCache(tmp_path)
    texts = [f"text number {k}" for k in range(6)]
    for text in texts:
        cache.put(SIG, {text: _entry(text)})
    assert len(_shards(tmp_path)) <= 3
    found = EmbeddingCache(tmp_path).get(SIG, texts, DTYPES)
    assert sorted(found) == sorted(texts)
    for text in texts:
        np.testing.assert_array_equal(found[text][0], _entry(text)[0])


def test_an_unwritable_folder_is_only_read(tmp_path, caplog):
    (tmp_path / "file").write_text("not a folder")
    cache = EmbeddingCache(tmp_path / "file" / "cache")
    with caplog.at_level(logging.WARNING, logger="simscore.measures.disk_cache"):
        cache.put(SIG, {"x": _entry("x")})
        cache.put(SIG, {"y": _entry("y")})
    assert caplog.text.count("cannot write") == 1 and cache.get(SIG, ["x"], DTYPES) == {}


def test_cache_dir_is_checked_before_any_work(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(TextMeasureError, match=r"cache_dir: '.*file' exists and is not a folder"):
        check_cache_dir(tmp_path / "file")
    with pytest.raises(TextMeasureError, match=r"cache_dir must be a folder path, got 3"):
        check_cache_dir(3)
    assert check_cache_dir(tmp_path / "new") == tmp_path / "new"


def _worker(root: str, offset: int, rounds: int, queue: multiprocessing.Queue) -> None:
    """Store and read overlapping texts in a small cache that evicts all the time; count wrong entries."""
    disk_cache.MAX_BYTES = 40_000
    cache = EmbeddingCache(root)
    wrong = hits = 0
    for k in range(rounds):
        texts = [f"text {(offset + k + j) % 30} " * (1 + (k + j) % 5) for j in range(4)]
        cache.put(SIG, {t: _entry(t, dim=32) for t in texts})
        for text, entry in EmbeddingCache(root).get(SIG, texts, DTYPES).items():
            hits += 1
            wrong += not all(np.array_equal(a, b) for a, b in zip(entry, _entry(text, dim=32), strict=True))
    queue.put((wrong, hits))


@pytest.mark.slow
def test_two_processes_share_one_folder_safely(tmp_path):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_worker, args=(str(tmp_path), offset, 60, queue)) for offset in (0, 7)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert [wrong for wrong, _ in results] == [0, 0]
    assert all(hits > 0 for _, hits in results)
    assert sum(p.stat().st_size for p in _shards(tmp_path)) <= 40_000 + max(p.stat().st_size for p in _shards(tmp_path))


# ----------------------------------------------------------------------------- the text measures


def _loaded(measure) -> bool:
    return measure.loaded if hasattr(measure, "loaded") else measure.encoder.loaded


@pytest.mark.slow
@pytest.mark.extra("text")
@pytest.mark.parametrize("name", ["use_cos", "use_ang", "bertscore", "emb_cos", "emb_ang"])
def test_a_warm_cache_gives_the_cold_scores_bit_for_bit_without_a_model(tmp_path, name):
    from simscore.measures import configure_measure
    from tests.simscore.measures.corpus import MANY, pairs_of

    a, b = pairs_of(MANY, 60, seed=3)
    cold = configure_measure(name, {"cache_dir": tmp_path})
    first = cold.score_pairs(a, b)
    assert _loaded(cold) and _shards(tmp_path)
    warm = configure_measure(name, {"cache_dir": tmp_path})  # another run: a new instance, an empty memory
    np.testing.assert_array_equal(warm.score_pairs(a, b), first)
    subset = configure_measure(name, {"cache_dir": tmp_path})
    np.testing.assert_array_equal(subset.score_pairs(a[:7], b[:7]), first[:7])  # other calls, the same numbers
    assert not _loaded(warm) and not _loaded(subset)  # every text came from the cache: no model was loaded
    assert warm.signature() == configure_measure(name).signature()  # the folder is in no signature
    again = configure_measure(name, {"cache_dir": tmp_path})
    again.prepare([*a, "a text the cache has not seen"])  # a new text: the model loads for it alone
    assert _loaded(again)
    np.testing.assert_array_equal(again.score_pairs(a, b), first)


@pytest.mark.extra("text")
def test_the_cosine_and_angular_measures_share_one_cache_and_encoder(tmp_path):
    from simscore.measures import resolve_measures, with_cache_dir

    use_cos, use_ang, bleu = resolve_measures(
        ["use_cos", "use_ang", "bleu4"], options=with_cache_dir(["use_cos", "use_ang", "bleu4"], {}, tmp_path))
    assert use_cos.encoder is use_ang.encoder and use_cos.encoder.disk_cache.root == tmp_path
    assert bleu.signature() == resolve_measures(["bleu4"])[0].signature()
