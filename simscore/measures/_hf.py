"""Loading local Hugging Face models: never a download, and a clear error for a bad folder.

Shared by the model-backed text measures (:mod:`simscore.measures.bertscore`). Models are
only ever read from a local directory: :func:`hub_offline` switches the Hugging Face Hub
client offline while one loads, so a missing file is an error, never a download. The
embedding path is shared too: all new texts tokenized in one call of the fast tokenizer
(:func:`tokenize_flat`), then embedded in batches of texts of one exact token count
(:func:`length_batches`), which need no padding.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from simscore.errors import FileFormatError

__all__ = ["hub_offline", "config_layers", "tokenize_flat", "length_batches", "rows"]


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Forbid Hugging Face Hub downloads while a model loads; restore the settings after."""
    import huggingface_hub.constants as hub_constants
    from transformers.utils import logging as hf_logging

    saved_flag = hub_constants.HF_HUB_OFFLINE
    saved_env = os.environ.get("HF_HUB_OFFLINE")
    bars = hf_logging.is_progress_bar_enabled()
    hub_constants.HF_HUB_OFFLINE = True
    os.environ["HF_HUB_OFFLINE"] = "1"
    if bars:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hub_constants.HF_HUB_OFFLINE = saved_flag
        if saved_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved_env
        if bars:
            hf_logging.enable_progress_bar()


def config_layers(model_dir: Path) -> int | None:
    """The number of layers a Hugging Face ``config.json`` declares (None if it names none)."""
    path = model_dir / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"not a Hugging Face config file: {exc}") from exc
    if not isinstance(config, dict):
        raise FileFormatError(path, "not a Hugging Face config file: expected a JSON object")
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def tokenize_flat(tokenizer: Any, texts: list[str], *, max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of ``texts`` in one call of the (fast, Rust) tokenizer, special tokens added and
    cut at ``max_length``: the ids of all texts one after the other, and each text's count.

    Returns
    -------
    ids : ndarray of int64, shape (lengths.sum(),)
    lengths : ndarray of int64, shape (len(texts),)
    """
    encoded = tokenizer(texts, add_special_tokens=True, truncation=True, max_length=max_length)["input_ids"]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    ids = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int64, count=int(lengths.sum()))
    return ids, lengths


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
