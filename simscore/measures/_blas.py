"""numpy's BLAS on one thread inside a block, so that a product's bits do not depend on the process's threads.

OpenBLAS splits a float32 matrix product of a few thousand entries or more among its threads,
and the split changes the rounding: the cosines of a BERTScore pair of 60 and 80 tokens differ in
their last bits between a process with one BLAS thread (a worker of :func:`simscore.parallel.run_jobs`
or :class:`~simscore.parallel.Beside`) and one with two. Products under :func:`one_blas_thread` are
those of a one-thread process on any machine with the same BLAS and CPU kernel. threadpoolctl sets
the thread count of the BLAS libraries numpy has loaded, and restores it on leaving.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

__all__ = ["one_blas_thread"]


@functools.cache
def _controller() -> Any:
    """threadpoolctl's view of the BLAS libraries loaded (numpy's is loaded once numpy is imported)."""
    import numpy  # noqa: F401  (its BLAS loaded before the controller looks)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run numpy's BLAS on one thread inside the block (about 20 microseconds to enter and leave).

    >>> import numpy as np
    >>> a = np.arange(12, dtype=np.float32).reshape(3, 4)
    >>> with one_blas_thread():
    ...     product = a @ a.T
    >>> float(product[2, 2])
    366.0
    """
    with _controller().limit(limits=1, user_api="blas"):
        yield
