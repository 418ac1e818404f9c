"""The embedding cache folder: round trip, keys, torn and hostile shards, versions, the bound, processes.

Each hostile shard is built here, small, from a real one: copied from another signature's
folder, a deflate bomb, a header declaring 10**12 elements, a FIFO, a link, a folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import multiprocessing
import os
import threading
import time
import tracemalloc
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import simscore.measures.disk_cache as disk_cache
from simscore.errors import CacheShardWarning, TextMeasureError
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
    return sorted(root.glob("v2/*/*.npz"))


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
    (signature,) = (tmp_path / "v2").glob("*/signature.json")
    assert signature.read_text() == '{"format":"simscore-embedding-cache","version":2,"signature":"' + SIG + '"}\n'
    (shard,) = _shards(tmp_path)
    with zipfile.ZipFile(shard) as archive:
        assert archive.namelist() == ["shard.json", "keys.npy", "a0.npy", "n0.npy", "a1.npy", "n1.npy"]
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
        assert archive.read("shard.json").decode() == (
            '{"format":"simscore-embedding-cache","version":2,"signature":"' + SIG + '","arrays":{'
            '"keys":["|u1",[3,32]],"a0":["<f4",[13,4]],"n0":["<i8",[3]],"a1":["<f8",[13]],"n1":["<i8",[3]]}}')
    # a shard recording other dtypes than the signature's measure asks for is not one it made
    with pytest.warns(CacheShardWarning, match=r"shard.json: a1 is recorded as \['<f8', \[13\]\], expected dtype '<f4'"):
        assert EmbeddingCache(tmp_path).get(SIG, texts, (np.float32, np.float32)) == {}


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
    with pytest.warns(CacheShardWarning, match=f"{shard.name}: its content does not match its name "
                                                 r"\(torn or altered\); deleted, its texts are embedded again") as caught:
        assert EmbeddingCache(tmp_path).get(SIG, ["hello there"], DTYPES) == {}
    assert len(caught) == 1 and not shard.exists()


def _replaced(shard: Path, name: str, data: bytes, *, declared: int | None = None,
              method: int = zipfile.ZIP_STORED) -> Path:
    """``shard`` with its member ``name`` holding ``data`` (stored or deflated, its size declared as
    ``declared`` if given), under the SHA-256 of its new bytes: a hostile shard that passes the digest."""
    out = io.BytesIO()
    with zipfile.ZipFile(shard) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename != name:
                target.writestr(info, source.read(info))
                continue
            body = data if method == zipfile.ZIP_STORED else zlib.compress(data, 9)[2:-4]  # raw deflate
            new = zipfile.ZipInfo(name, date_time=info.date_time)
            new.compress_type, new.CRC, new.flag_bits = method, zlib.crc32(data), 0
            new.file_size, new.compress_size = len(data) if declared is None else declared, len(body)
            new.extract_version = new.create_version = 45
            target.fp.seek(target.start_dir)  # type: ignore[union-attr]
            new.header_offset = target.fp.tell()  # type: ignore[union-attr]
            target.fp.write(new.FileHeader(zip64=True) + body)  # type: ignore[union-attr]
            target.start_dir = target.fp.tell()  # type: ignore[union-attr]
            target.filelist.append(new)
            target.NameToInfo[name] = new
    hostile = shard.with_name(hashlib.sha256(out.getvalue()).hexdigest()[:32] + ".npz")
    hostile.write_bytes(out.getvalue())
    shard.unlink()
    return hostile


def _npy(array: np.ndarray | None = None, *, header: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    if header is not None:
        np.lib.format.write_array_header_1_0(buffer, header)
    else:
        np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _one_warning(cache: EmbeddingCache, texts: list[str], match: str, signature: str = SIG) -> dict:
    """What ``cache`` finds of ``texts``, with exactly one CacheShardWarning matching ``match``."""
    with pytest.warns(CacheShardWarning, match=match) as caught:
        found = cache.get(signature, texts, DTYPES)
    assert len(caught) == 1, [str(w.message) for w in caught]
    return found


def test_a_pickled_array_under_its_own_digest_is_refused_not_unpickled(tmp_path):
    EmbeddingCache(tmp_path).put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    hostile = _replaced(shard, "a0.npy", _npy(np.array([object()], dtype=object)))
    found = _one_warning(EmbeddingCache(tmp_path), ["x"], r"a0.npy has shape \(1,\) and dtype \|O; shard.json records "
                         r"\(1, 4\) and <f4; deleted")
    assert found == {} and not hostile.exists()


def test_a_shard_copied_from_another_signature_is_not_used_and_its_texts_are_recomputed(tmp_path):
    """Integrity is not origin: the copy is whole (its name is its digest) but was made under model A."""
    model_a, model_b = SIG + "|model:A", SIG + "|model:B"
    cache = EmbeddingCache(tmp_path)
    cache.put(model_a, {"hello": _entry("hello")})
    cache.put(model_b, {"other": _entry("other")})
    (copy,) = cache.signature_folder(model_a).glob("*.npz")
    target = cache.signature_folder(model_b) / copy.name
    target.write_bytes(copy.read_bytes())
    fresh = EmbeddingCache(tmp_path)
    assert _one_warning(fresh, ["hello"], f"{target.name}: shard.json: made under another signature", model_b) == {}
    assert not target.exists() and copy.exists()
    right = (np.full((1, 4), 0.25, np.float32), np.ones(1))  # model B's own embedding, computed again
    fresh.put(model_b, {"hello": right})
    (got,) = EmbeddingCache(tmp_path).get(model_b, ["hello"], DTYPES).values()
    np.testing.assert_array_equal(got[0], right[0])
    np.testing.assert_array_equal(EmbeddingCache(tmp_path).get(model_a, ["hello"], DTYPES)["hello"][0], _entry("hello")[0])


def test_a_deflate_bomb_is_refused_by_its_declared_size_without_inflating(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    inflated = _npy(header={"descr": "<f4", "fortran_order": False, "shape": (2**24,)}) + bytes(2**26)  # 64 MiB
    bomb = _replaced(shard, "a0.npy", inflated, method=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 2**17  # 64 MiB of arrays in a file of under 128 kB
    with zipfile.ZipFile(bomb) as archive:
        assert archive.getinfo("a0.npy").file_size == len(inflated)
    tracemalloc.start()
    try:
        _one_warning(EmbeddingCache(tmp_path), ["x"], r"a0.npy is compressed or encrypted \(method 8\); shards store "
                     "their members as written; deleted")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**22, f"{peak:,} bytes to refuse a bomb"  # never inflated
    # stored, not compressed, but declaring more than the shard holds: refused by the zip directory alone
    cache.put(SIG, {"y": _entry("y")})
    (shard,) = _shards(tmp_path)
    liar = _replaced(shard, "a0.npy", _npy(_entry("y")[0]), declared=2**40)
    _one_warning(EmbeddingCache(tmp_path), ["y"], r"a0.npy declares 1,099,511,627,776 bytes \(\d+ stored\), more than "
                 r"the [\d,]+ it may hold; deleted")
    assert not liar.exists()


def test_a_header_declaring_10_to_the_12_elements_is_refused_set_aside_and_the_next_run_is_fine(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    huge = _replaced(shard, "a0.npy", _npy(header={"descr": "<f4", "fortran_order": False, "shape": (10**12, 4)}))
    assert huge.stat().st_size < 2000
    assert _one_warning(EmbeddingCache(tmp_path), ["x"], r"a0.npy has shape \(1000000000000, 4\) and dtype <f4; "
                        r"shard.json records \(1, 4\) and <f4; deleted") == {}
    assert not huge.exists()
    # the next run: nothing to warn about; what it stores comes back
    again = EmbeddingCache(tmp_path)
    with warnings_as_errors():
        assert again.get(SIG, ["x"], DTYPES) == {}
        again.put(SIG, {"x": _entry("x")})
        np.testing.assert_array_equal(EmbeddingCache(tmp_path).get(SIG, ["x"], DTYPES)["x"][0], _entry("x")[0])


def test_counts_that_wrap_around_in_int64_are_refused(tmp_path):
    """Three texts, one row: counts 2**63 - 1, 2**63 - 1 and 3 sum to 1 in int64."""
    texts = ["a", "b", "c"]
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {t: (np.zeros((1 if t == "a" else 0, 4), np.float32), np.zeros(1 if t == "a" else 0)) for t in texts})
    (shard,) = _shards(tmp_path)
    _replaced(shard, "n0.npy", _npy(np.array([2**63 - 1, 2**63 - 1, 3], dtype=np.int64)))
    assert _one_warning(EmbeddingCache(tmp_path), texts, "n0 does not count the rows of a0 per text; deleted") == {}


def test_a_shard_json_recording_more_bytes_than_the_shard_holds_is_refused(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    with zipfile.ZipFile(shard) as archive:
        header = archive.read("shard.json").replace(b'"a0":["<f4",[1,4]]', b'"a0":["<f4",[1000000000000,4]]')
    _replaced(shard, "shard.json", header)
    _one_warning(EmbeddingCache(tmp_path), ["x"], r"shard.json records 16,000,000,000,\d+ bytes of arrays in a shard of")


@contextlib.contextmanager
def warnings_as_errors() -> Iterator[None]:
    """A CacheShardWarning fails the block."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheShardWarning)
        yield


def _release_after(path: Path, seconds: float) -> threading.Timer:
    """A watchdog: a reader blocked opening the FIFO ``path`` gets an end of file (the test fails, it never hangs)."""

    def release() -> None:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    timer = threading.Timer(seconds, release)
    timer.start()
    return timer


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
def test_what_is_not_a_regular_file_is_never_read_and_is_renamed_aside(tmp_path, kind):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    (shard,) = _shards(tmp_path)
    elsewhere = tmp_path / "elsewhere.npz"
    shard.rename(elsewhere)  # a valid shard, under its right name, reached through a link
    {"fifo": os.mkfifo, "symlink": lambda p: p.symlink_to(elsewhere), "folder": os.mkdir}[kind](shard)
    watchdog = _release_after(shard, 10) if kind == "fifo" else None
    start = time.monotonic()
    try:
        what = {"fifo": "a FIFO", "symlink": "a symbolic link", "folder": "a folder"}[kind]
        assert _one_warning(EmbeddingCache(tmp_path), ["x"], f"{shard.name}: is {what}, not a regular file; "
                            f"renamed {shard.name}.bad, its texts") == {}
    finally:
        if watchdog is not None:
            watchdog.cancel()
    assert time.monotonic() - start < 5
    assert not os.path.lexists(shard) and os.path.lexists(shard.with_name(shard.name + ".bad"))
    assert elsewhere.exists()  # a link's target is left alone
    with warnings_as_errors():  # set aside: never read again
        assert EmbeddingCache(tmp_path).get(SIG, ["x"], DTYPES) == {}


def test_a_signature_file_that_is_a_fifo_makes_its_folder_ignored_without_waiting(tmp_path, caplog):
    cache = EmbeddingCache(tmp_path)
    cache.put(SIG, {"x": _entry("x")})
    signature = cache.signature_folder(SIG) / "signature.json"
    signature.unlink()
    os.mkfifo(signature)
    watchdog = _release_after(signature, 10)
    try:
        with caplog.at_level(logging.WARNING, logger="simscore.measures.disk_cache"):
            assert EmbeddingCache(tmp_path).get(SIG, ["x"], DTYPES) == {}
    finally:
        watchdog.cancel()
    assert "ignored: unreadable signature.json (is a FIFO, not a regular file)" in caplog.text


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
    older, newer = tmp_path / "v1" / shard.parent.name, tmp_path / "v3" / "abc"
    for folder in (older, newer):  # a v1 folder of the same signature, with a shard of its own name
        folder.mkdir(parents=True)
        (folder / "signature.json").write_text('{"format":"simscore-embedding-cache","version":1,"signature":"'
                                               + SIG + '"}\n')
        (folder / shard.name).write_bytes(shard.read_bytes())
    signature = shard.parent / "signature.json"
    signature.write_text(signature.read_text().replace('"version":2', '"version":3'))
    fresh = EmbeddingCache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="simscore.measures.disk_cache"):
        assert fresh.get(SIG, ["x"], DTYPES) == {}
        fresh.put(SIG, {"y": _entry("y")})
    assert "ignored: unsupported format version 3 (this simscore reads version 2)" in caplog.text
    assert _shards(tmp_path) == [shard]  # nothing written into the folder of another version
    assert (older / shard.name).exists() and (newer / shard.name).exists()  # nor read, nor evicted


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
