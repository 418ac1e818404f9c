"""The checks of the GP-SARSA learner: of its inputs at its public methods, and of its arithmetic.

Inputs are checked once, where they enter :class:`~policies.gpsarsa.learner.GPSarsa` (a belief
feature vector, an action mask, an episode), with messages naming what is wrong. The compiled
factorisations report a pivot that is not positive by the turn it happened at
(:func:`raise_if_failed`), and :func:`health` measures how far the learner's factors are from
exact (:meth:`GPSarsa.diagnostics <policies.gpsarsa.learner.GPSarsa.diagnostics>`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from policies.gpsarsa import _gpkernels
from policies.gpsarsa.values import Episode, Evaluation, GPSarsaConfig, GPSarsaDiagnostics


def belief(features: ArrayLike, feature_dim: int, name: str = "features") -> NDArray[np.float64]:
    """``features`` as a float64 vector of length ``feature_dim`` with finite entries, or a ValueError."""
    b = np.asarray(features, dtype=np.float64)
    if b.shape != (feature_dim,):
        raise ValueError(f"{name} must have shape ({feature_dim},), got {b.shape}")
    if not np.isfinite(b).all():
        raise ValueError(f"{name} must be finite, got non-finite values")
    return b


def mask(mask: ArrayLike | None, n_actions: int) -> NDArray[np.bool_] | None:
    """``mask`` as ``n_actions`` booleans with at least one True (None stays None), or a ValueError."""
    if mask is None:
        return None
    arr = np.asarray(mask)
    if arr.shape != (n_actions,):
        raise ValueError(f"mask must have shape ({n_actions},), got {arr.shape}")
    if arr.dtype != np.bool_:
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            raise ValueError(
                "mask must be booleans (True = action available), "
                f"got dtype {arr.dtype} with values {np.unique(arr).tolist()}"
            )
        arr = arr.astype(np.bool_)
    if not arr.any():
        raise ValueError("mask excludes every action; at least one must be available")
    return arr


def episode(
    episode: Episode, config: GPSarsaConfig
) -> tuple[NDArray[np.float64], list[int], list[float], tuple[Evaluation, ...] | None]:
    """An episode's features (T, feature_dim) float64, actions and rewards as Python lists, and evaluations.

    Raises
    ------
    ValueError
        Naming what is wrong: shapes, non-finite features or rewards, actions outside
        ``[0, n_actions)``, evaluations for some turns only.
    """
    x = np.asarray(episode.features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != config.feature_dim or x.shape[0] < 1:
        raise ValueError(
            f"features must have shape (T, {config.feature_dim}) with T >= 1, got {x.shape}"
        )
    if not np.isfinite(x).all():
        raise ValueError("features must be finite, got non-finite values")
    turns = x.shape[0]
    acts = np.asarray(episode.actions)
    if acts.shape != (turns,):
        raise ValueError(f"actions must have shape ({turns},) like features, got {acts.shape}")
    if acts.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers, got dtype {acts.dtype}")
    if turns and (acts.min() < 0 or acts.max() >= config.n_actions):
        bad = acts[(acts < 0) | (acts >= config.n_actions)][0]
        raise ValueError(f"actions must be in [0, {config.n_actions - 1}], got {int(bad)}")
    r = np.asarray(episode.rewards, dtype=np.float64)
    if r.shape != (turns,):
        raise ValueError(f"rewards must have shape ({turns},) like features, got {r.shape}")
    if not np.isfinite(r).all():
        raise ValueError("rewards must be finite, got non-finite values")
    evaluations = episode.evaluations
    if evaluations is not None and len(evaluations) != turns:
        raise ValueError(f"evaluations must be given for all {turns} turns or none, got {len(evaluations)}")
    return x, acts.tolist(), r.tolist(), evaluations


def raise_if_failed(turn: int, pivots: NDArray[np.float64]) -> None:
    """A FloatingPointError if a compiled factorisation failed at ``turn`` (``-1``: it did not)."""
    if turn >= 0:
        raise FloatingPointError(
            f"GP-SARSA update lost positive definiteness at turn {turn} of the episode "
            f"(pivot {float(pivots[turn])!r}); the episode was not learned"
        )


def inverse_ldl(gram: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``M`` unit lower triangular and ``d`` with ``M gram Mᵀ = diag(d)`` (``gram = L D Lᵀ``, ``M = L⁻¹``).

    For a small symmetric positive definite matrix (only its upper triangle is read); see
    :func:`policies.gpsarsa._gpkernels.inverse_ldl`. A pivot that is not positive raises
    ``FloatingPointError``.
    """
    n = gram.shape[0]
    factor = np.zeros((n, n))
    pivots = np.empty(n)
    raise_if_failed(_gpkernels.inverse_ldl(np.ascontiguousarray(gram, dtype=np.float64), factor, pivots), pivots)
    return factor, pivots


def health(
    factors: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]],
    cov: NDArray[np.float64],
    features: NDArray[np.float64],
    actions: NDArray[np.int64],
) -> GPSarsaDiagnostics:
    """The :class:`GPSarsaDiagnostics` of a learner's dictionary and C̃ (see there).

    ``factors``: per action with points, its points' features ``(m_a, d)`` and inverse Cholesky
    factor ``G_a``; ``cov``: C̃ in block order; ``features`` and ``actions``: the dictionary
    points in block order. Costs O(Σ m_a³ + m² · feature_dim).
    """
    inverse_residual = factor_residual = 0.0
    for feats, inv_chol in factors:
        n = feats.shape[0]
        gram = feats @ feats.T
        eye = np.eye(n)
        inverse_residual = max(
            inverse_residual, float(np.abs(inv_chol.T @ inv_chol @ gram - eye).max())
        )
        factor_residual = max(
            factor_residual, float(np.abs(inv_chol @ gram @ inv_chol.T - eye).max())
        )
    m = features.shape[0]
    asym = float(np.abs(cov - cov.T).max()) if m else 0.0
    if m:
        kern = (features @ features.T) * (actions[:, None] == actions[None, :])
        variances = np.diag(kern) - ((kern @ cov) * kern).sum(axis=1)  # kern is symmetric
        min_var = float(variances.min())
    else:
        min_var = math.inf
    return GPSarsaDiagnostics(m, inverse_residual, factor_residual, asym, min_var)
