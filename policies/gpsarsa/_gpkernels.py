"""Compiled inner loops of :mod:`policies.gpsarsa` (numba).

GP-SARSA's per-decision and per-episode arithmetic is small (a dictionary of a few hundred
points, episodes of a handful of turns), so in numpy it was dominated by the cost of calling
numpy, not by the arithmetic. These loops do the same algebra compiled, with every sum
accumulated sequentially in the order written (numba without ``fastmath`` neither reassociates
nor contracts into fused multiply-adds), so the results are a function of the inputs alone:
the same on every machine and with any BLAS thread count (no BLAS is used).

The names of the mathematics are those of the :mod:`policies.gpsarsa` docstring: C̃
(``cov``, m × m, symmetric, block order), α̃ (``alpha``), ``starts``/``sizes`` of each
action's block, a belief's kernel values ``values`` against the dictionary (block order).

Compiled code is cached next to this file (``__pycache__``) or, where that is not writable,
in numba's user cache directory (``NUMBA_CACHE_DIR``, else ``~/.cache/numba``); the first use in
a fresh environment compiles (a few seconds). Where neither is writable (a system or container
install with a read-only home), the loops are compiled in memory in each process instead
(:data:`CACHED` is then false; numba would otherwise refuse to define them, and so
``import policies`` would fail): the same machine code, compiled at the first use of each
process. Setting ``NUMBA_CACHE_DIR`` to a writable folder brings the cache back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

__all__ = ["add_rows", "belief_kernel", "pack_blocks", "posterior", "select", "ald", "inverse_ldl", "learn_update", "CACHED"]

_JIT: dict[str, Any] = {"nogil": True, "error_model": "numpy"}

#: Whether the compiled loops are cached on disk (False: compiled in memory in each process,
#: because no cache folder is writable).
CACHED = True


def _compiled(function: Callable[..., Any]) -> Any:
    """``function`` compiled with numba, cached on disk where a cache folder is writable."""
    global CACHED
    if CACHED:
        try:
            return njit(cache=True, **_JIT)(function)
        except RuntimeError as exc:  # numba's "cannot cache function ...: no locator available"
            if "no locator available" not in str(exc):
                raise
            CACHED = False
            logging.getLogger(__name__).info(
                "no writable cache folder for numba (%s): compiling GP-SARSA's loops in memory; "
                "set NUMBA_CACHE_DIR to a writable folder to cache them", exc
            )
    return njit(cache=False, **_JIT)(function)


@_compiled
def add_rows(out, matrix, row0, col0, weights):  # pragma: no cover - compiled
    """``out[i] += Σ_j weights[j] · matrix[row0 + j, col0 + i]`` for ``i < len(out)``.

    The terms are added to ``out[i]`` one row at a time, in row order (the order of a plain
    loop over ``j``); rows are taken four at a time so that ``out`` is read and written once
    per four rows (the per-element arithmetic is unchanged, and vectorises).
    """
    n = out.shape[0]
    rows = weights.shape[0]
    j = 0
    while j + 4 <= rows:
        w0, w1, w2, w3 = weights[j], weights[j + 1], weights[j + 2], weights[j + 3]
        r0 = matrix[row0 + j, col0 : col0 + n]
        r1 = matrix[row0 + j + 1, col0 : col0 + n]
        r2 = matrix[row0 + j + 2, col0 : col0 + n]
        r3 = matrix[row0 + j + 3, col0 : col0 + n]
        for i in range(n):
            out[i] = (((out[i] + w0 * r0[i]) + w1 * r1[i]) + w2 * r2[i]) + w3 * r3[i]
        j += 4
    while j < rows:
        wj = weights[j]
        r0 = matrix[row0 + j, col0 : col0 + n]
        for i in range(n):
            out[i] += wj * r0[i]
        j += 1


@_compiled
def belief_kernel(features_t, b, values):  # pragma: no cover - compiled
    """``values += Fᵀ-rows · b`` over the non-zero entries of ``b`` (in order); returns ``b · b``.

    ``features_t`` is ``Fᵀ`` (feature_dim × m + 1: the dictionary's features in block order);
    ``values`` (zero on entry) receives ``b`` against every dictionary point.
    """
    norm2 = 0.0
    for d in range(b.shape[0]):
        bd = b[d]
        if bd != 0.0:
            row = features_t[d]
            for i in range(values.shape[0]):
                values[i] += bd * row[i]
            norm2 += bd * bd
    return norm2


@_compiled
def pack_blocks(cov, starts, sizes, offsets, packed):  # pragma: no cover - compiled
    """Copy each action's same-action block of C̃ into ``packed`` at ``offsets[a]`` (row-major).

    Evaluation reads only these blocks; packed together they are about a tenth of C̃ and
    contiguous, so a decision reads them from cache rather than from rows scattered over C̃.
    """
    for a in range(sizes.shape[0]):
        s, n, offset = starts[a], sizes[a], offsets[a]
        for j in range(n):
            row = cov[s + j]
            for i in range(n):
                packed[offset + j * n + i] = row[s + i]


@_compiled
def posterior(packed, alpha, starts, sizes, offsets, values, norm2, mean, var):  # pragma: no cover - compiled
    """Posterior mean and variance of every action at a belief, into ``mean`` and ``var``.

    Action ``a`` uses only its block: ``k = values[s:s+n]`` (``s, n = starts[a], sizes[a]``),
    ``mean_a = α̃_a · k`` and ``var_a = max(b·b − kᵀ C̃_a k, 0)``, with ``C̃_a k`` accumulated
    row by row of the (symmetric) block ``C̃_a``, read from ``packed`` (:func:`pack_blocks`).
    """
    n_actions = sizes.shape[0]
    width = 0
    for a in range(n_actions):
        width = max(width, sizes[a])
    buffer = np.empty(width)
    for a in range(n_actions):
        s, n, offset = starts[a], sizes[a], offsets[a]
        k = values[s : s + n]
        product = buffer[:n]
        product[:] = 0.0
        add_rows(product, packed[offset : offset + n * n].reshape((n, n)), 0, 0, k)
        mu = 0.0
        quad = 0.0
        for i in range(n):
            mu += alpha[s + i] * k[i]
        for i in range(n):
            quad += k[i] * product[i]
        mean[a] = mu
        v = norm2 - quad
        var[a] = v if v > 0.0 else 0.0


@_compiled
def select(packed, alpha, starts, sizes, offsets, values, norm2, z, scale, mask):  # pragma: no cover - compiled
    """The available action with the largest ``mean + scale·std·z`` (greedy: ``scale <= 0``).

    ``z`` holds one standard normal per action (drawn by the caller, whatever the mask);
    ties go to the lowest index. Returns -1 if no action is available.
    """
    n_actions = sizes.shape[0]
    mean = np.empty(n_actions)
    var = np.empty(n_actions)
    posterior(packed, alpha, starts, sizes, offsets, values, norm2, mean, var)
    best = -1
    best_value = -np.inf
    for a in range(n_actions):
        if not mask[a]:
            continue
        value = mean[a]
        if scale > 0.0:
            value = np.sqrt(var[a]) * scale * z[a] + mean[a]
        if best < 0 or value > best_value:
            best, best_value = a, value
    return best


@_compiled
def ald(inv_chol, n, start, rows, stacked, x, norms, nu, coef, kvec, sizes, joined):  # pragma: no cover
    """ALD-test the turns ``rows`` (in order) of one action against its block of ``n`` points.

    ``inv_chol`` is the block's inverse Cholesky factor ``G`` with room for ``len(rows)`` more
    rows; ``stacked[t, start:start + n]`` are turn ``t``'s kernel values against the block
    (``x`` the turns' features, ``norms`` their ``b·b``). A turn is tested against the block as
    it is when its turn comes: ``y = G k̃``, ``δ = b·b − y·y``. If ``δ > nu`` the point joins
    (row ``[−(Gᵀy)ᵀ/√δ, 1/√δ]`` appended to ``G``; ``a = e_n``), otherwise ``a = Gᵀ y``.
    Writes, per turn ``t``: ``kvec[t, :sizes[t]]`` (k̃ against the block's first ``sizes[t]``
    points, the later ones by ``x_t · x_u``), ``coef[t, :sizes[t]]`` (a) and ``joined[t]``.
    Returns the block's new size.
    """
    q = rows.shape[0]
    n0 = n
    y = np.empty(n0 + q)
    for i in range(q):
        t = rows[i]
        k = kvec[t]
        for j in range(n0):
            k[j] = stacked[t, start + j]
        kappa = 0.0
        for r in range(n):  # y = G k̃ (G lower triangular)
            acc = 0.0
            for j in range(r + 1):
                acc += inv_chol[r, j] * k[j]
            y[r] = acc
        for r in range(n):
            kappa += y[r] * y[r]
        delta = norms[t] - kappa
        a = coef[t]
        if delta > nu:
            root = np.sqrt(delta)
            row = inv_chol[n, : n + 1]
            row[:] = 0.0
            add_rows(row[:n], inv_chol, 0, 0, y[:n])  # Gᵀ y
            for j in range(n):
                row[j] = -row[j] / root
            row[n] = 1.0 / root
            a[n] = 1.0
            k[n] = norms[t]
            for i2 in range(i + 1, q):  # the later turns' kernel value against the new point
                t2 = rows[i2]
                acc = 0.0
                for d in range(x.shape[1]):
                    acc += x[t2, d] * x[t, d]
                kvec[t2, n] = acc
            joined[t] = True
            n += 1
            sizes[t] = n
        else:
            add_rows(a[:n], inv_chol, 0, 0, y[:n])  # a = K̃⁻¹ k̃ = Gᵀ G k̃
            sizes[t] = n
    return n


@_compiled
def inverse_ldl(gram, factor, pivots):  # pragma: no cover - compiled
    """``factor`` (M, unit lower triangular) and ``pivots`` (d) with ``M gram Mᵀ = diag(d)``.

    Row by row like the dictionary factors: row ``t`` of M is ``[−uᵀ M, 1]`` with ``y = M g``
    (``g`` the part of column ``t`` above the diagonal), ``u = y / d`` and pivot
    ``d_t = gram_tt − u·y``. Only the upper triangle of ``gram`` is read; ``factor`` must be
    zero above the diagonal on entry. Returns -1, or the first row ``t`` whose pivot is not a
    positive finite number (``pivots[t]`` holds it; the later rows are not written).
    """
    n = gram.shape[0]
    y = np.empty(n)
    u = np.empty(n)
    for t in range(n):
        for k in range(t):  # y = M[:t, :t] g with g = gram[:t, t]
            acc = 0.0
            for j in range(k + 1):
                acc += factor[k, j] * gram[j, t]
            y[k] = acc
            u[k] = acc / pivots[k]
        acc = 0.0
        for k in range(t):
            acc += u[k] * y[k]
        delta = gram[t, t] - acc
        pivots[t] = delta
        if not (delta > 0.0 and delta < np.inf):
            return t
        for j in range(t):  # row t of M: −uᵀ M[:t, :t]
            acc = 0.0
            for k in range(j, t):
                acc += u[k] * factor[k, j]
            factor[t, j] = -acc
        factor[t, t] = 1.0
    return -1


@_compiled
def learn_update(
    cov, alpha, turn_start, turn_size, turn_old, coef, kvec, returns, sigma2, pivots, packed, starts, sizes, offsets,
    block_of,
):  # pragma: no cover - compiled
    """One episode's posterior update of ``alpha`` and ``cov`` in place (see the module of gpsarsa).

    Turn ``t`` is represented on the first ``turn_size[t]`` points of its action's block
    (block order position ``turn_start[t]``) by ``coef[t]`` (a = K̃⁻¹k̃) with kernel values
    ``kvec[t]``; ``turn_old[t]`` of those points were in the dictionary before the episode
    (α̃ and C̃ are zero on the others). ``returns`` are the discounted Monte-Carlo returns.

    ``pivots`` (length T) receives the pivots of ``Ψ + σ²I``. Returns -1 on success, or the
    turn whose pivot was not positive (``pivots`` holds it; nothing else is changed then).

    Unless it is empty, ``packed`` holds the same-action blocks of C̃ (:func:`pack_blocks` with
    ``starts``, ``sizes`` and ``offsets``; ``block_of`` the action of each position) and is
    kept equal to them.
    """
    turns = returns.shape[0]
    m = alpha.shape[0]
    # gain_t = a_t − C̃ k̃_t  (over the whole dictionary; C̃ k̃_t from the old rows of t's block)
    gain = np.zeros((turns, m))
    for t in range(turns):
        s = turn_start[t]
        g = gain[t]
        add_rows(g, cov, s, 0, -kvec[t, : turn_old[t]])  # g − Σ_j k̃_j (row j of C̃)
        for j in range(turn_size[t]):
            g[s + j] += coef[t, j]
    # Ψ + σ²I, upper triangle: (Ψ)_tu = gain_t · k̃_u for t <= u (k̃_u lives on u's block)
    gram = np.zeros((turns, turns))
    for t in range(turns):
        for u in range(t, turns):
            s = turn_start[u]
            acc = 0.0
            for j in range(turn_size[u]):
                acc += gain[t, s + j] * kvec[u, j]
            gram[t, u] = acc
        gram[t, t] += sigma2
    # residual y − μ, μ_t = α̃ · k̃_t
    residual = np.empty(turns)
    for t in range(turns):
        s = turn_start[t]
        acc = 0.0
        for j in range(turn_size[t]):
            acc += alpha[s + j] * kvec[t, j]
        residual[t] = returns[t] - acc
    factor = np.zeros((turns, turns))
    failed = inverse_ldl(gram, factor, pivots)
    if failed >= 0:
        return failed
    # W = M · gain; α̃ += Wᵀ D⁻¹ M (y − μ); C̃ += Wᵀ D⁻¹ W
    w = np.zeros((turns, m))
    for t in range(turns):
        add_rows(w[t], gain, 0, 0, factor[t, : t + 1])
    step = np.zeros(m)
    for t in range(turns):
        acc = 0.0
        for k in range(t + 1):
            acc += factor[t, k] * residual[k]
        coeff = acc / pivots[t]
        root = np.sqrt(pivots[t])
        wt = w[t]
        for i in range(m):
            step[i] += wt[i] * coeff
        for i in range(m):
            wt[i] /= root
    for i in range(m):
        alpha[i] += step[i]
    # C̃ += Wᵀ W. A zero column of W (a point neither the episode's actions nor C̃ connect
    # it to) adds exact zeros to its row and column of C̃, which leaves them as they are (C̃
    # holds no −0.0): only the rows of the non-zero columns are updated, each over the span
    # from the first to the last of them. Entries (i, j) and (j, i) get the same sum of the
    # same products in the same order, so C̃ stays exactly symmetric.
    nonzero = np.zeros(m, dtype=np.bool_)
    for t in range(turns):
        for i in range(m):
            if w[t, i] != 0.0:
                nonzero[i] = True
    lo, hi = m, 0
    for i in range(m):
        if nonzero[i]:
            lo = min(lo, i)
            hi = i + 1
    write_blocks = packed.shape[0] > 0
    update = np.empty(max(hi - lo, 0))
    column = np.empty(turns)
    for i in range(lo, hi):
        if not nonzero[i]:
            continue
        update[:] = 0.0
        for t in range(turns):
            column[t] = w[t, i]
        add_rows(update, w, 0, lo, column)  # (Wᵀ W)_ij = Σ_t W_ti W_tj, j in [lo, hi)
        row = cov[i, lo:hi]
        for j in range(hi - lo):
            row[j] += update[j]
        if write_blocks:  # the same-action part of the row, into the packed blocks
            a = block_of[i]
            s, n = starts[a], sizes[a]
            base = offsets[a] + (i - s) * n - s
            for j in range(max(s, lo), min(s + n, hi)):
                packed[base + j] = cov[i, j]
    return -1
