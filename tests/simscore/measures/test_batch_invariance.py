"""A pair's score does not depend on the batch: the same 1,000 pairs scored with batch sizes
1, 7, 64 and 256, in calls of that many pairs and in shuffled orders, agree to 1e-6 (CPU;
the CUDA counterpart runs where a GPU is present).

Embeddings differ with the batch only through the rounding of matrix products, which BLAS
and MKL pick by shape (OpenBLAS's Haswell kernels, forced here by ``OPENBLAS_CORETYPE`` on
some machines, round a row by its position), hence a tolerance rather than equality.
"""

from __future__ import annotations

import numpy as np
import pytest

from simscore.measures._encoders import UsemEncoder
from simscore.measures.bertscore import BertScore
from simscore.measures.use import UseCosine
from tests.simscore.measures.corpus import MANY, ODD, PROMPTS

#: the models of the text extra: skipped, naming it, in an install without it
pytestmark = pytest.mark.extra("text")

TOLERANCE = 1e-6
SIZES = (1, 7, 64, 256)

try:
    import torch

    HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    HAS_CUDA = False


def _thousand_pairs() -> tuple[list[str], list[str]]:
    pool = sorted(set(MANY + PROMPTS + ODD))
    rng = np.random.default_rng(25)
    i, j = rng.integers(0, len(pool), (2, 1000))
    return [pool[k] for k in i], [pool[k] for k in j]


def _in_calls(measure, a: list[str], b: list[str], size: int, seed: int) -> np.ndarray:
    """Score the pairs in a shuffled order, ``size`` pairs per call; back in the original order."""
    order = np.random.default_rng(seed).permutation(len(a))
    out = np.empty(len(a))
    for lo in range(0, len(a), size):
        part = order[lo : lo + size]
        out[part] = measure.score_pairs([a[k] for k in part], [b[k] for k in part])
    return out


@pytest.mark.slow
def test_bertscore_batch_sizes_1_7_64_256_agree_to_1e6_on_the_cpu():
    a, b = _thousand_pairs()
    # one thread: as fast as two on a busy machine, and the thread count is not what is tested
    results = {size: _in_calls(BertScore(batch_size=size, threads=1), a, b, size, seed=size) for size in SIZES}
    reference = BertScore(batch_size=64, threads=1).score_pairs(a, b)  # one call, the given order
    for size, got in results.items():
        gap = float(np.abs(got - reference).max())
        assert gap <= TOLERANCE, f"batch size {size}: {gap:.2e}"
    assert 0.2 < reference.mean() < 0.9 and np.ptp(reference) > 0.5


@pytest.mark.slow
def test_use_in_calls_of_1_7_64_256_pairs_agrees_to_1e6():
    a, b = _thousand_pairs()
    reference = UseCosine(encoder=UsemEncoder()).score_pairs(a, b)
    for size in SIZES:
        got = _in_calls(UseCosine(encoder=UsemEncoder()), a, b, size, seed=size)
        gap = float(np.abs(got - reference).max())
        assert gap <= TOLERANCE, f"{size} pairs per call: {gap:.2e}"


@pytest.mark.slow
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device (none here)")
def test_bertscore_on_cuda_batch_sizes_agree_to_1e6_and_with_the_cpu_to_1e5():
    a, b = _thousand_pairs()
    cpu = BertScore().score_pairs(a, b)
    results = {size: _in_calls(BertScore(batch_size=size, device="cuda"), a, b, size, seed=size) for size in SIZES}
    reference = BertScore(device="cuda").score_pairs(a, b)
    assert "|device:cuda(" in BertScore(device="cuda").signature()
    for size, got in results.items():
        assert float(np.abs(got - reference).max()) <= TOLERANCE, size
    assert float(np.abs(reference - cpu).max()) <= 1e-5
