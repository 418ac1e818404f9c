"""Loading local Hugging Face models: never a download, and a clear error for a bad folder.

Shared by the model-backed text measures (:mod:`simscore.measures.bertscore`). Models are
only ever read from a local directory: :func:`hub_offline` switches the Hugging Face Hub
client offline while one loads, so a missing file is an error, never a download.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from simscore.errors import FileFormatError

__all__ = ["hub_offline", "config_layers"]


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
