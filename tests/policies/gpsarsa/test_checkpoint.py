"""The checkpoint format of the GP-SARSA learner (policies.gpsarsa.checkpoint), through GPSarsa.save and load."""

from __future__ import annotations

import hashlib
import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from policies.gpsarsa.checkpoint import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, read_checkpoint, write_checkpoint
from policies.gpsarsa.learner import GPSarsa
from policies.gpsarsa.values import GPSarsaConfig
from simscore.errors import CheckpointError
from tests.policies.gpsarsa.test_learner import belief_like, run_training, trained

#: A checkpoint written by GPSarsa.save before the format had its own module (commit ecf47e8).
BEFORE = Path(__file__).parent / "data" / "learner-ecf47e8"


@pytest.mark.slow
def test_a_checkpoint_written_before_reads_and_writes_again_bit_for_bit(tmp_path):
    learner = GPSarsa.load(BEFORE)
    assert learner.config == GPSarsaConfig(feature_dim=3, n_actions=2, sigma=1.0)
    assert (learner.dictionary_size, learner.n_episodes, learner.n_transitions) == (4, 2, 5)
    assert learner.q_values([1.0, 0.0, 0.5]).mean.tolist() == [4.763157894736842, 1.5384615384615385]  # as ecf47e8 reads it
    learner.save(tmp_path / BEFORE.name, metadata={"written_by": "ecf47e8"})
    for suffix in (".json", ".npz"):
        assert (tmp_path / BEFORE.name).with_suffix(suffix).read_bytes() == BEFORE.with_suffix(suffix).read_bytes()


def test_read_checkpoint_gives_the_checked_parts(tmp_path):
    checkpoint = read_checkpoint(BEFORE)
    assert checkpoint.config == GPSarsaConfig(feature_dim=3, n_actions=2, sigma=1.0)
    assert checkpoint.counts == {"dictionary_size": 4, "per_action": [2, 2], "episodes": 2, "transitions": 5}
    assert list(checkpoint.arrays) == ["features", "actions", "alpha", "covariance", "inverse_cholesky"]
    assert checkpoint.arrays["actions"].tolist() == [0, 1, 0, 1]
    # write_checkpoint writes what it is given: the same parts give the same bytes
    write_checkpoint(tmp_path / "again", checkpoint.config, checkpoint.counts, checkpoint.arrays)
    assert (tmp_path / "again.npz").read_bytes() == BEFORE.with_suffix(".npz").read_bytes()


def test_an_inconsistent_inverse_cholesky_factor_is_refused(tmp_path):
    checkpoint = read_checkpoint(BEFORE)
    arrays = dict(checkpoint.arrays)
    arrays["inverse_cholesky"] = arrays["inverse_cholesky"].copy()
    arrays["inverse_cholesky"][1] = 0.5  # above the diagonal of action 0's factor
    write_checkpoint(tmp_path / "p", checkpoint.config, checkpoint.counts, arrays)
    with pytest.raises(CheckpointError, match=r"p\.npz: inverse Cholesky factor of action 0 is not lower triangular"):
        GPSarsa.load(tmp_path / "p")


@pytest.mark.slow
def test_save_load_round_trip_is_bit_identical(tmp_path):
    learner = run_training(5)
    stem = tmp_path / "ckpt" / "policy.v1"  # a dot in the stem is kept, not a suffix
    learner.save(stem)
    written = sorted(p.name for p in (tmp_path / "ckpt").iterdir())
    assert written == ["policy.v1.json", "policy.v1.npz"]
    loaded = GPSarsa.load(stem)
    assert loaded.config == learner.config
    assert (loaded.dictionary_size, loaded.n_episodes, loaded.n_transitions) == (
        learner.dictionary_size, learner.n_episodes, learner.n_transitions,
    )
    for name, array in learner.arrays().items():
        assert np.array_equal(array, loaded.arrays()[name]), name
    beliefs = belief_like(np.random.default_rng(0), 50, dim=30, rank=6)
    for b in beliefs:
        for got, want in zip(loaded.q_values(b), learner.q_values(b)):
            assert np.array_equal(got, want)
    # the two keep learning identically, and the same state gives the same bytes
    more = belief_like(np.random.default_rng(1), 12, dim=30, rank=6)
    for learner_ in (learner, loaded):
        for i in range(0, 12, 3):
            learner_.learn_episode(more[i : i + 3], [i % 16, 3, 5], [-1.0, -1.0, 19.0])
    for name, array in learner.arrays().items():
        assert np.array_equal(array, loaded.arrays()[name]), name
    learner.save(tmp_path / "a")
    loaded.save(tmp_path / "b")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_checkpoint_header_contents(tmp_path):
    learner = trained()
    learner.save(tmp_path / "p")
    header = json.loads((tmp_path / "p.json").read_text())
    assert header["format"] == CHECKPOINT_FORMAT == "simscore.gpsarsa"
    assert header["version"] == CHECKPOINT_VERSION == 1
    assert header["config"] == learner.config.to_dict()
    assert header["counts"] == {
        "dictionary_size": learner.dictionary_size,
        "per_action": learner.dictionary_sizes().tolist(),
        "episodes": 30,
        "transitions": learner.n_transitions,
    }
    data = (tmp_path / "p.npz").read_bytes()
    assert header["arrays"] == {
        "file": "p.npz", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
    }
    with np.load(tmp_path / "p.npz", allow_pickle=False) as archive:
        assert sorted(archive.files) == [
            "actions", "alpha", "covariance", "features", "inverse_cholesky",
        ]


def test_empty_learner_round_trips(tmp_path):
    learner = GPSarsa(GPSarsaConfig(feature_dim=3, n_actions=2))
    learner.save(tmp_path / "empty")
    loaded = GPSarsa.load(tmp_path / "empty")
    assert loaded.dictionary_size == 0
    assert np.array_equal(loaded.q_values([1.0, 0.0, 0.0]).std, [1.0, 1.0])
    loaded.learn_episode([[1.0, 0.0, 0.0]], [1], [2.0])
    assert loaded.dictionary_size == 1


def _rewrite_npz(tmp_path: Path, stem: str, change) -> None:
    """Rewrite <stem>.npz with ``change(arrays)`` applied and fix the header's checksum."""
    with np.load(tmp_path / f"{stem}.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    (tmp_path / f"{stem}.npz").write_bytes(data)
    _set_checksum(tmp_path, stem, data)


def _edit_header(tmp_path: Path, stem: str, change) -> None:
    path = tmp_path / f"{stem}.json"
    header = json.loads(path.read_text())
    change(header)
    path.write_text(json.dumps(header))


def _set_checksum(tmp_path: Path, stem: str, data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    _edit_header(tmp_path, stem, lambda h: h["arrays"].update(sha256=digest, bytes=len(data)))


def _flip_a_byte(tmp_path: Path, stem: str) -> None:
    path = tmp_path / f"{stem}.npz"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate_with_valid_checksum(tmp_path: Path, stem: str) -> None:
    path = tmp_path / f"{stem}.npz"
    data = path.read_bytes()[:100]
    path.write_bytes(data)
    _set_checksum(tmp_path, stem, data)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_flip_a_byte, r"p\.npz: checksum mismatch"),
        (_truncate_with_valid_checksum, r"p\.json: counts.dictionary_size .* imply [\d,]+ bytes of arrays, but "
                                        "arrays.bytes is 100"),
        (lambda t, s: _edit_header(t, s, lambda h: h["arrays"].update(bytes=10**6)), r"p\.npz: [\d,]+ bytes, but p\.json "
                                                                                    r"records 1,000,000"),
        (
            lambda t, s: _rewrite_npz(t, s, lambda a: a.pop("alpha")),
            r"missing array\(s\) \['alpha'\]",
        ),
        (
            lambda t, s: _rewrite_npz(t, s, lambda a: a.update(covariance=a["covariance"].ravel())),
            r"array 'covariance' has shape \(\d+,\) and dtype float64, expected shape \(\d+, \d+\)",
        ),
        (
            lambda t, s: _rewrite_npz(t, s, lambda a: a.update(alpha=a["alpha"].astype("f4"))),
            "array 'alpha' has shape .* and dtype float32",
        ),
        (
            lambda t, s: _rewrite_npz(t, s, lambda a: a["alpha"].__setitem__(0, np.nan)),
            "array 'alpha' contains non-finite values",
        ),
        (
            lambda t, s: _rewrite_npz(t, s, lambda a: a["actions"].__setitem__(0, 99)),
            r"array 'actions' has values outside \[0, 3\]",
        ),
        (
            lambda t, s: _edit_header(t, s, lambda h: h.update(version=2)),
            "unsupported format version 2",
        ),
        (lambda t, s: _edit_header(t, s, lambda h: h.update(format="other")), "format is 'other'"),
        (
            lambda t, s: _edit_header(t, s, lambda h: h["config"].update(sigma=-1.0)),
            "invalid config: sigma must be > 0",
        ),
        (
            lambda t, s: _edit_header(t, s, lambda h: h["counts"].update(episodes=-1)),
            "counts.episodes must be >= 0, got -1",
        ),
        (lambda t, s: (t / f"{s}.json").write_text("{not json"), r"p\.json: invalid JSON"),
        (lambda t, s: (t / f"{s}.json").write_text("[1, 2]"), "expected a JSON object, got an array"),
        (lambda t, s: (t / f"{s}.json").unlink(), "cannot read the checkpoint header"),
        (lambda t, s: (t / f"{s}.npz").unlink(), "cannot read the checkpoint arrays"),
    ],
)
def test_damaged_checkpoints_raise_checkpoint_error(tmp_path, damage, message):
    trained().save(tmp_path / "p")
    damage(tmp_path, "p")
    with pytest.raises(CheckpointError, match=message):
        GPSarsa.load(tmp_path / "p")


def test_a_huge_declared_array_is_refused_before_anything_is_allocated(tmp_path):
    # a 9 kB checkpoint whose header declares a 120,000-point dictionary (a 107 GiB covariance)
    trained().save(tmp_path / "p")
    m = 120_000
    _edit_header(tmp_path, "p", lambda h: h["counts"].update(dictionary_size=m, per_action=[m, 0, 0, 0]))
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match=r"dictionary_size 120,000 and config.feature_dim 5 imply 230,406,720,000 bytes of arrays, but "
                                                 r"arrays.bytes is 5,0\d\d"):
            GPSarsa.load(tmp_path / "p")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20
    # the header's arrays.bytes made to agree: the file's size does not, and nothing is read
    _edit_header(tmp_path, "p", lambda h: h["arrays"].update(bytes=10**12))
    with pytest.raises(CheckpointError, match=r"p\.npz: 5,0\d\d bytes, but p\.json records 1,000,000,000,000"):
        GPSarsa.load(tmp_path / "p")


def test_compressed_or_fortran_ordered_arrays_are_refused(tmp_path):
    trained().save(tmp_path / "p")
    with np.load(tmp_path / "p.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.comment = b" " * 60_000  # as large as the arrays need, so only the compression is wrong
    (tmp_path / "p.npz").write_bytes(buffer.getvalue())
    _set_checksum(tmp_path, "p", buffer.getvalue())
    with pytest.raises(CheckpointError, match="array 'features' is compressed"):
        GPSarsa.load(tmp_path / "p")
    _rewrite_npz(tmp_path, "p", lambda a: a.update(covariance=np.asfortranarray(a["covariance"])))
    if not np.isfortran(np.asfortranarray(arrays["covariance"])):  # a 1 x 1 matrix is both orders
        pytest.skip("too small a dictionary to tell the orders apart")
    with pytest.raises(CheckpointError, match=r"array 'covariance' .*\(Fortran order\)"):
        GPSarsa.load(tmp_path / "p")


def test_a_npy_header_that_is_not_a_literal_is_a_checkpoint_error(tmp_path):
    # found by the deep fuzz run: numpy parses the header as a Python literal (SyntaxError, TokenError)
    trained().save(tmp_path / "p")
    buffer = io.BytesIO()
    with zipfile.ZipFile(tmp_path / "p.npz") as archive, zipfile.ZipFile(buffer, "w") as damaged:
        for info in archive.infolist():
            member = archive.read(info)
            if info.filename == "features.npy":  # a valid CRC: only numpy's header parser can object
                member = member.replace(b"{'descr'", b"z'descr'", 1)
            damaged.writestr(info, member)
    (tmp_path / "p.npz").write_bytes(buffer.getvalue())
    _set_checksum(tmp_path, "p", buffer.getvalue())
    # numpy's own words differ ("('EOF in multi-line statement', ...)" with numpy 2.4 on Python 3.11,
    # "Cannot parse header: ..." with numpy 1.26 or on Python 3.12): the file and what is wrong are simscore's
    with pytest.raises(CheckpointError, match=r"p\.npz: corrupt checkpoint arrays \(.*(EOF in multi-line|parse header)"):
        GPSarsa.load(tmp_path / "p")


def test_checkpoint_error_is_a_value_error(tmp_path):
    with pytest.raises(ValueError):
        GPSarsa.load(tmp_path / "missing")


def test_checkpoint_files_are_plain_zip_of_npy(tmp_path):
    trained().save(tmp_path / "p")
    with zipfile.ZipFile(tmp_path / "p.npz") as archive:
        infos = archive.infolist()
    assert [info.filename for info in infos] == [
        "features.npy", "actions.npy", "alpha.npy", "covariance.npy", "inverse_cholesky.npy",
    ]
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
