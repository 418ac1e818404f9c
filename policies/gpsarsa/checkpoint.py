"""The checkpoint format of the GP-SARSA learner: two files, written atomically, read without pickle.

:meth:`GPSarsa.save <policies.gpsarsa.learner.GPSarsa.save>` writes ``<stem>.npz`` (the arrays;
a zip of ``.npy`` files with fixed timestamps, so the same state gives the same bytes) and then
``<stem>.json`` (format name, version, configuration, counts and the SHA-256 of the ``.npz``),
each atomically. :meth:`GPSarsa.load <policies.gpsarsa.learner.GPSarsa.load>` reads them without
pickle and raises :class:`~simscore.errors.CheckpointError` on any inconsistency.

The header is one JSON line::

    {"format": "simscore.gpsarsa", "version": 1, "config": {<GPSarsaConfig.to_dict()>},
     "counts": {"dictionary_size": m, "per_action": [m_0, m_1, ...], "episodes": ..., "transitions": ...},
     "arrays": {"file": "<stem>.npz", "sha256": "...", "bytes": ...},
     "metadata": {...}}

(``metadata`` is optional: what a policy wrapping the learner stores, e.g.
:meth:`GPSarsaPolicy.metadata <policies.gpsarsa.policy.GPSarsaPolicy.metadata>`). The ``.npz``
holds the arrays of :meth:`GPSarsa.arrays <policies.gpsarsa.learner.GPSarsa.arrays>`, named in
:data:`ARRAY_NAMES`, uncompressed, in that order.

This module is the format only: :func:`write_checkpoint` writes the arrays and counts it is
given; :func:`read_checkpoint` checks both files (sizes before anything is read, the checksum,
every array's header before it is loaded, then the arrays' consistency) and returns them; the
learner builds itself from them.
"""

from __future__ import annotations

import hashlib
import io
import os
import tokenize
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import simscore.io.reading
from policies.gpsarsa.values import GPSarsaConfig
from simscore.checks import check_int
from simscore.errors import CheckpointError, FileFormatError
from simscore.io import atomic_open, dumps, format_problem, prepare_output, read_bytes, read_json

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "ARRAY_NAMES",
    "Checkpoint",
    "write_checkpoint",
    "read_checkpoint",
    "read_checkpoint_json",
]

CHECKPOINT_FORMAT = "simscore.gpsarsa"
"""Value of the ``"format"`` field of a GP-SARSA checkpoint's JSON file."""

CHECKPOINT_VERSION = 1
"""Checkpoint format version written by this module (and the only one it reads)."""

ARRAY_NAMES = ("features", "actions", "alpha", "covariance", "inverse_cholesky")
"""The arrays of a checkpoint's ``.npz`` (each stored as ``<name>.npy``), in the order written."""

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class Checkpoint(NamedTuple):
    """What :func:`read_checkpoint` returns, every part checked.

    Attributes
    ----------
    config : GPSarsaConfig
        The learner's hyper-parameters.
    counts : dict
        ``dictionary_size``, ``per_action`` (a list of ``n_actions`` sizes), ``episodes``,
        ``transitions``.
    arrays : dict of str to ndarray
        The arrays of :data:`ARRAY_NAMES`, with the shapes and dtypes the counts imply.
    """

    config: GPSarsaConfig
    counts: dict[str, Any]
    arrays: dict[str, np.ndarray]


def _paths(path_stem: str | os.PathLike[str]) -> tuple[Path, Path]:
    stem = os.fspath(path_stem)
    return Path(stem + ".json"), Path(stem + ".npz")


def write_checkpoint(
    path_stem: str | os.PathLike[str],
    config: GPSarsaConfig,
    counts: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray],
    *,
    metadata: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> None:
    """Write ``<path_stem>.npz`` and then ``<path_stem>.json``, each atomically.

    The ``.json`` names the ``.npz`` and records its SHA-256, so an interrupted save is
    detected by :func:`read_checkpoint`. The same arrays always give the same bytes. Existing
    files are replaced only with ``overwrite=True``
    (:class:`~simscore.errors.OutputExistsError` otherwise, before anything is written).

    Parameters
    ----------
    path_stem : path-like
        The two files' path without the suffix (a dot in the stem is kept).
    config : GPSarsaConfig
    counts : mapping
        ``dictionary_size``, ``per_action``, ``episodes``, ``transitions`` (written in that order).
    arrays : mapping of str to ndarray
        The arrays of :data:`ARRAY_NAMES`, in that order (as
        :meth:`GPSarsa.arrays <policies.gpsarsa.learner.GPSarsa.arrays>` returns them).
    metadata : mapping, optional
        JSON-serialisable; stored under the header's ``"metadata"`` key.
    overwrite : bool
        Replace existing files.
    """
    json_path, npz_path = _paths(path_stem)
    prepare_output(json_path, overwrite=overwrite)
    prepare_output(npz_path, overwrite=overwrite)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            payload = io.BytesIO()
            np.lib.format.write_array(payload, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            archive.writestr(info, payload.getvalue())
    data = buffer.getvalue()
    with atomic_open(npz_path, "wb") as handle:
        handle.write(data)
    header = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "config": config.to_dict(),
        "counts": {key: counts[key] for key in ("dictionary_size", "per_action", "episodes", "transitions")},
        "arrays": {
            "file": npz_path.name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        },
    }
    if metadata is not None:
        header["metadata"] = dict(metadata)
    with atomic_open(json_path, "w") as handle:
        handle.write(dumps(header))
        handle.write("\n")


def read_checkpoint(path_stem: str | os.PathLike[str]) -> Checkpoint:
    """Read and check the two files written by :func:`write_checkpoint`.

    Raises
    ------
    simscore.errors.CheckpointError
        A file is missing or corrupt, the format or version is unsupported, the
        checksum does not match, or arrays are missing or inconsistent.

    Examples
    --------
    >>> import os, tempfile
    >>> from policies.gpsarsa.learner import GPSarsa
    >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=2, sigma=1.0))
    >>> learner.learn_episode([[0.5, 0.5]], [1], [3.0])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     learner.save(os.path.join(tmp, "policy"))
    ...     checkpoint = read_checkpoint(os.path.join(tmp, "policy"))
    >>> checkpoint.counts, checkpoint.arrays["alpha"].tolist()
    ({'dictionary_size': 1, 'per_action': [0, 1], 'episodes': 1, 'transitions': 1}, [2.0])
    """
    json_path, npz_path = _paths(path_stem)
    header = _read_header(json_path)
    try:
        config = GPSarsaConfig.from_dict(header["config"])
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{json_path}: invalid config: {exc}") from None
    counts = header["counts"]
    expected = _expected_arrays(config, counts)
    # what the header implies is checked against the file's size before anything is read
    needed = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in expected.values())
    size = header["arrays"]["bytes"]
    if needed > size:
        raise CheckpointError(
            f"{json_path}: counts.dictionary_size {counts['dictionary_size']:,} and config.feature_dim "
            f"{config.feature_dim:,} imply {needed:,} bytes of arrays, but arrays.bytes is {size:,}"
        )
    try:
        actual = npz_path.stat().st_size
        if actual != size:
            raise CheckpointError(
                f"{npz_path}: {actual:,} bytes, but {json_path.name} records {size:,} "
                "(the file is corrupt or from another save)"
            )
        data = read_bytes(npz_path, limit=size)
    except (OSError, FileFormatError) as exc:
        raise CheckpointError(
            f"{npz_path}: cannot read the checkpoint arrays ({exc})"
        ) from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != header["arrays"]["sha256"]:
        raise CheckpointError(
            f"{npz_path}: checksum mismatch (sha256 {digest}, but {json_path.name} "
            f"records {header['arrays']['sha256']}); the file is corrupt or from another save"
        )
    arrays = _read_arrays(npz_path, data, expected)
    _check_arrays(arrays, config, counts, npz_path)
    return Checkpoint(config, counts, arrays)


def read_checkpoint_json(json_path: str | os.PathLike[str], *, what: str = "checkpoint header") -> Any:
    """The JSON document of a checkpoint file (a header, a run description), read within bounds.

    Read by :func:`simscore.io.read_json` with a limit of
    :data:`simscore.io.reading.MAX_LINE_LENGTH` bytes (a header is one line of a few kB).

    Raises
    ------
    simscore.errors.CheckpointError
        The file cannot be read, is too large, not UTF-8 or not JSON (naming the file and ``what``).
    """
    if not Path(json_path).exists():
        raise CheckpointError(f"{json_path}: cannot read the {what} (no such file)")
    try:
        return read_json(json_path, limit=simscore.io.reading.MAX_LINE_LENGTH)
    except FileFormatError as exc:
        raise CheckpointError(f"{json_path}: {exc.reason}") from None
    except OSError as exc:
        raise CheckpointError(f"{json_path}: cannot read the {what} ({exc})") from None


def _read_header(json_path: Path) -> dict[str, Any]:
    header = read_checkpoint_json(json_path)
    problem = format_problem(header, CHECKPOINT_FORMAT, (CHECKPOINT_VERSION,))
    if problem:
        raise CheckpointError(f"{json_path}: {problem}")
    for key in ("config", "counts", "arrays"):
        if not isinstance(header.get(key), dict):
            raise CheckpointError(f"{json_path}: field {key!r} is missing or not an object")
    counts = header["counts"]
    for key in ("dictionary_size", "episodes", "transitions"):
        check_int(f"{json_path}: counts.{key}", counts.get(key), minimum=0, error=CheckpointError)
    per_action = counts.get("per_action")
    if not (
        isinstance(per_action, list)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in per_action)
        and sum(per_action) == counts["dictionary_size"]
    ):
        raise CheckpointError(
            f"{json_path}: counts.per_action must be non-negative integers summing to "
            f"counts.dictionary_size, got {per_action!r}"
        )
    n_actions = header["config"].get("n_actions")
    if len(per_action) != n_actions:
        raise CheckpointError(
            f"{json_path}: counts.per_action has {len(per_action)} entries, "
            f"config.n_actions is {n_actions!r}"
        )
    digest = header["arrays"].get("sha256")
    if not isinstance(digest, str):
        raise CheckpointError(f"{json_path}: arrays.sha256 is missing")
    check_int(f"{json_path}: arrays.bytes", header["arrays"].get("bytes"), minimum=0, error=CheckpointError)
    return header


def _expected_arrays(config: GPSarsaConfig, counts: Mapping[str, Any]) -> dict[str, tuple[tuple[int, ...], type]]:
    """Shape and dtype of every stored array, as the header's counts and config imply."""
    m = counts["dictionary_size"]
    return {
        "features": ((m, config.feature_dim), np.float64),
        "actions": ((m,), np.int64),
        "alpha": ((m,), np.float64),
        "covariance": ((m, m), np.float64),
        "inverse_cholesky": ((sum(n * n for n in counts["per_action"]),), np.float64),
    }


def _read_arrays(
    npz_path: Path, data: bytes, expected: Mapping[str, tuple[tuple[int, ...], type]]
) -> dict[str, np.ndarray]:
    """The arrays of a checkpoint's ``.npz``, each one's header checked before it is loaded.

    Every member must be stored uncompressed (as :func:`write_checkpoint` writes it), with the
    shape and dtype ``expected`` and as many bytes as they take: nothing is allocated that the
    file does not hold.
    """
    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = set(archive.namelist())
            missing = [name for name in ARRAY_NAMES if f"{name}.npy" not in members]
            if missing:
                raise CheckpointError(f"{npz_path}: missing array(s) {missing}")
            for name, (shape, dtype) in expected.items():
                info = archive.getinfo(f"{name}.npy")
                if info.compress_type != zipfile.ZIP_STORED:
                    raise CheckpointError(f"{npz_path}: array {name!r} is compressed; checkpoints store arrays as written")
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    if version not in ((1, 0), (2, 0)):
                        raise CheckpointError(f"{npz_path}: array {name!r} has .npy format version {version}")
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    stored_shape, fortran, stored_dtype = read_header(member)
                    if stored_shape != shape or stored_dtype != np.dtype(dtype) or fortran:
                        raise CheckpointError(
                            f"{npz_path}: array {name!r} has shape {stored_shape} and dtype {stored_dtype}"
                            f"{' (Fortran order)' if fortran else ''}, expected shape {shape} and dtype "
                            f"{np.dtype(dtype)}"
                        )
                    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
                    held = info.file_size - member.tell()
                    if held != nbytes:
                        raise CheckpointError(
                            f"{npz_path}: array {name!r} holds {held:,} bytes of data, its shape needs {nbytes:,}"
                        )
                    member.seek(0)
                    arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
    except CheckpointError:
        raise
    # numpy reads a .npy header as a Python literal: a damaged one is also a SyntaxError or a TokenError
    except (OSError, ValueError, EOFError, SyntaxError, tokenize.TokenError, zipfile.BadZipFile) as exc:
        raise CheckpointError(f"{npz_path}: corrupt checkpoint arrays ({exc})") from None
    return arrays


def _check_arrays(
    arrays: Mapping[str, np.ndarray], config: GPSarsaConfig, counts: Mapping[str, Any], where: Path
) -> None:
    """The arrays' values agree with each other and with the counts (their shapes were checked on reading)."""

    def bad(message: str) -> CheckpointError:
        return CheckpointError(f"{where}: {message}")

    for name in ARRAY_NAMES:
        arr = arrays[name]
        if arr.dtype == np.float64 and not np.isfinite(arr).all():
            raise bad(f"array {name!r} contains non-finite values")
    acts = arrays["actions"]
    if counts["dictionary_size"] and (acts.min() < 0 or acts.max() >= config.n_actions):
        raise bad(f"array 'actions' has values outside [0, {config.n_actions - 1}]")
    if np.bincount(acts, minlength=config.n_actions).tolist() != list(counts["per_action"]):
        raise bad("array 'actions' does not match the per-action dictionary sizes")
    cov = arrays["covariance"]
    if not np.array_equal(cov, cov.T):
        raise bad("array 'covariance' is not symmetric")
    packed = arrays["inverse_cholesky"]
    offset = 0
    for action, n in enumerate(counts["per_action"]):
        factor = packed[offset : offset + n * n].reshape(n, n)
        offset += n * n
        if n and (np.triu(factor, 1).any() or not (np.diag(factor) > 0).all()):
            raise bad(f"inverse Cholesky factor of action {action} is not lower triangular "
                      "with a positive diagonal")
