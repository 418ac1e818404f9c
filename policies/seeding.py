"""Seeds for one context, and global random state made deterministic for third-party policies.

:func:`context_seed` derives the seed of one context from a run seed (the generative policies
and the endpoint draw per context with it); :func:`reseeded` seeds the global generators
(``random``, numpy's, torch's) for one call and restores them, for policies that draw from them
(ConvLab's rule-based policies, :class:`policies.adapters.ConvLabPolicy`).
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from simscore.checks import check_int

__all__ = ["context_seed", "reseeded"]


def context_seed(seed: int, context_id: str) -> int:
    """The seed for one context of a run seeded with ``seed``: a number in [0, 2**32).

    The first four bytes (big-endian) of the SHA-256 of ``f"{seed}:{context_id}"`` (UTF-8):
    a different stream for every context, the same one however often and in whatever order
    the contexts are answered, and easy to compute anywhere (the ConvLab-side script
    ``examples/convlab_answer_states.py`` does it without simscore).

    >>> context_seed(0, "c1") == context_seed(0, "c1") != context_seed(1, "c1")
    True
    """
    seed = check_int("seed", seed)
    if not isinstance(context_id, str):
        raise TypeError(f"context_id must be a str, got {context_id!r}")
    return int.from_bytes(hashlib.sha256(f"{seed}:{context_id}".encode()).digest()[:4], "big")


@contextlib.contextmanager
def reseeded(seed: int) -> Iterator[None]:
    """Seed the global random generators for the ``with`` block, then restore their states.

    Seeds the ``random`` module (``random.seed(seed)``), numpy's global generator
    (``numpy.random.seed(seed)``) and, if ``torch`` has been imported, torch's default CPU
    generator (``torch.default_generator.manual_seed(seed)``) and, if CUDA is initialised,
    every CUDA generator. On leaving the block (also on an exception) every state is set
    back to what it was, so the caller's random streams go on as if the block had not run.

    simscore's own code never touches global random state; this exists for third-party
    policies that draw from it (ConvLab's rule policies use ``random``), which can only be
    made deterministic this way. torch is not imported here: a policy that uses torch has
    imported it when it was built.

    Examples
    --------
    >>> import random
    >>> random.seed(7); expected = [random.random(), random.random()]
    >>> random.seed(7); first = random.random()
    >>> with reseeded(0):
    ...     inside = random.random()
    >>> [first, random.random()] == expected, inside == random.Random(0).random()
    (True, True)
    """
    seed = check_int("seed", seed, minimum=0, maximum=2**32 - 1, error=ValueError)
    python_state = random.getstate()
    numpy_state = np.random.get_state()
    torch = sys.modules.get("torch")
    generator = getattr(torch, "default_generator", None)
    torch_state = generator.get_state() if generator is not None else None
    cuda: Any = getattr(torch, "cuda", None)
    cuda_states = cuda.get_rng_state_all() if cuda is not None and cuda.is_initialized() else None
    try:
        random.seed(seed)
        np.random.seed(seed)
        if generator is not None:
            generator.manual_seed(seed)
        if cuda_states is not None:
            cuda.manual_seed_all(seed)
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        if generator is not None:
            generator.set_state(torch_state)
        if cuda_states is not None:
            cuda.set_rng_state_all(cuda_states)
