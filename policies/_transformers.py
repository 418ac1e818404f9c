"""transformers made quiet while a local model loads, generates or is saved.

Shared by the generative policies (:mod:`policies.generative`) and the tiny models written for
tests (:mod:`policies.tiny_models`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' progress bars and warnings for the block; restore both settings after.

    Loading shows progress bars; generating warns that ``input_ids`` "may be padded" whenever a
    finished row is filled with pad tokens after its end (transformers drops an all-ones
    attention mask, then sees the pads): nothing attends to those, and the attention mask of a
    padded prompt is always passed.
    """
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    if bars:
        hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
