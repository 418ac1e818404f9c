"""What the model-backed text measures share about Hugging Face model folders.

Loading is :mod:`simscore.models`' (local folders only, no code, safetensors only, sizes
checked). Here: what a folder's files say (its layers, its longest input, a digest of its
content), and the embedding path: all new texts tokenized in one call of the fast tokenizer
(:func:`tokenize_flat`), then embedded in batches of texts of one exact token count
(:func:`length_batches`), which need no padding.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np

from simscore.errors import UnsupportedModelError
from simscore.io import files_digest
from simscore.models import read_model_json

__all__ = [
    "config_layers",
    "model_max_tokens",
    "tokenize_flat",
    "length_batches",
    "rows",
    "folder_digest",
]


def config_layers(model_dir: Path) -> int | None:
    """The number of layers a Hugging Face ``config.json`` declares (None if it names none)."""
    config = _json(model_dir / "config.json")
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def tokenize_flat(tokenizer: Any, texts: list[str], *, max_length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token ids of ``texts`` in one call of the (fast, Rust) tokenizer, special tokens added and
    cut at ``max_length`` (the tokenizer's own truncation): the ids of all texts one after the
    other, each text's count, and which texts were cut.

    Returns
    -------
    ids : ndarray of int64, shape (lengths.sum(),)
    lengths : ndarray of int64, shape (len(texts),)
    truncated : ndarray of bool, shape (len(texts),)
        Texts that had more than ``max_length`` tokens (found by tokenizing again, uncut,
        only the texts that reached the limit).
    """
    encoded = tokenizer(texts, add_special_tokens=True, truncation=True, max_length=max_length)["input_ids"]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    ids = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int64, count=int(lengths.sum()))
    truncated = np.zeros(len(texts), dtype=bool)
    full = np.flatnonzero(lengths >= max_length)
    if len(full):
        uncut = tokenizer([texts[i] for i in full.tolist()], add_special_tokens=True, verbose=False)["input_ids"]
        truncated[full] = [len(u) > max_length for u in uncut]
    return ids, lengths, truncated


#: model_type values whose position ids start after the padding index (2 positions unused).
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "longformer", "mpnet", "ibert", "data2vec-text"}


def model_max_tokens(model_dir: Path) -> int:
    """Most tokens, special tokens included, a model directory's model takes.

    The tokenizer's ``model_max_length`` (``tokenizer_config.json``) where it names one, as
    bert-score truncates there; never more than the model's position table
    (``config.json``'s ``max_position_embeddings``, less the 2 positions the RoBERTa family
    reserves); 512 if neither says.
    """
    config = _json(model_dir / "config.json")
    positions = config.get("max_position_embeddings")
    limit = None
    if isinstance(positions, int) and not isinstance(positions, bool) and positions > 0:
        limit = positions - (2 if config.get("model_type") in _OFFSET_POSITIONS else 0)
    tokenizer_config = model_dir / "tokenizer_config.json"
    stated = _json(tokenizer_config).get("model_max_length") if tokenizer_config.is_file() else None
    if isinstance(stated, int) and not isinstance(stated, bool) and 0 < stated < 1_000_000:
        limit = stated if limit is None else min(limit, stated)
    return 512 if limit is None else limit


def _json(path: Path) -> dict[str, Any]:
    data = read_model_json(path)  # bounded in size and nesting
    if not isinstance(data, dict):
        raise UnsupportedModelError(f"{path}: not a Hugging Face config file: expected a JSON object")
    return data


def length_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Indices of texts grouped by exact token count (ascending, stable), each group cut into
    batches of at most ``batch_size``: no batch needs padding, so no text's embedding depends
    on the lengths of others (length-bucketed batches without the padding artefact).

    >>> [b.tolist() for b in length_batches(np.array([3, 5, 3, 3, 5]), 2)]
    [[0, 2], [3], [1, 4]]
    """
    order = np.argsort(lengths, kind="stable")
    cuts = np.flatnonzero(np.diff(lengths[order])) + 1
    return [group[start : start + batch_size] for group in np.split(order, cuts)
            for start in range(0, len(group), batch_size)]


def rows(ids: np.ndarray, starts: np.ndarray, batch: np.ndarray, length: int) -> np.ndarray:
    """The ``(len(batch), length)`` matrix of the ids of texts ``batch`` (each ``length`` long)."""
    return ids[starts[batch][:, None] + np.arange(length)]


def folder_digest(model_dir: Path) -> str:
    """SHA-256 of a model directory's content: every file (recursively, in path order) but
    hidden files and READMEs, each as its relative path, size and bytes -- what the numbers
    depend on, so two copies of one model share a digest and a retrained one does not.
    Reads every byte (about 0.3 s for 90 MB); callers compute it once.
    """
    files = [p for p in sorted(p for p in model_dir.rglob("*") if p.is_file())
             if not any(part.startswith(".") for part in p.relative_to(model_dir).parts)
             and not p.name.upper().startswith("README")]
    return files_digest(model_dir, files)
