r"""Online sparse GP-SARSA: the learning algorithm of the paper's dialogue policies.

This module is the learner only. It sees belief feature vectors, summary-action indices,
action masks and rewards, and knows nothing about dialogues; the simulated environment
and the policy that wraps this learner live in other ``policies`` modules.

Model
-----
A state-action point is ``x = (b, a)``: a belief feature vector ``b`` (``feature_dim``
float64 numbers) and a summary action ``a`` in ``0 .. n_actions-1``. Q has a zero-mean
Gaussian-process prior with the kernel

    k((b, a), (b', a')) = (b · b') · [a = a']

(linear kernel on beliefs times delta kernel on actions; Gašić & Young 2014).

One dialogue is an episode ``x_0 .. x_{T-1}`` with rewards ``r_0 .. r_{T-1}`` that ends
in a terminal state after ``x_{T-1}``. Let ``γ_t = γ`` for ``t < T-1`` and ``γ_{T-1} = 0``
(the terminal successor has Q = 0 and no noise). Engel's GPTD model with Monte-Carlo
(correlated) noise (Engel, Mannor & Meir 2005; Engel 2005, ch. 4) is

    r_t = Q(x_t) − γ_t Q(x_{t+1}) + N_t − γ_t N_{t+1},     N_t ~ iid N(0, σ²),

i.e. ``r = H q + H n`` with ``H`` the T×T upper-bidiagonal matrix (1 on the diagonal,
−γ on the superdiagonal) and noise covariance ``Σ = σ² H Hᵀ``; several episodes stack
block-diagonally.

Sparsification (approximate linear dependence, ALD)
---------------------------------------------------
The dictionary ``D = {x̃_1 .. x̃_m}`` has Gram matrix ``K̃``. A visited point ``x`` is
represented by ``a(x) = K̃⁻¹ k̃(x)`` (``k̃(x)`` the kernel vector against ``D`` at the time
``x`` is visited, zero-padded for points added later), with residual
``δ = k(x, x) − k̃(x)ᵀ a(x)``. If ``δ > ν`` the point joins ``D`` and ``a(x) = e_m``.
Because the action kernel is a delta, ``K̃`` is block-diagonal by action, so the ALD test of
``(b, a)`` only involves the dictionary points of action ``a``.

With ``A`` the matrix whose rows are the ``a(x_t)`` of all visited points and ``H̃ = H A``,
the sparse posterior is

    Q̂(x) = k̃(x)ᵀ α̃,          Var Q(x) = k(x, x) − k̃(x)ᵀ C̃ k̃(x)   (clipped at 0),
    α̃ = H̃ᵀ (H̃ K̃ H̃ᵀ + Σ)⁻¹ r,    C̃ = H̃ᵀ (H̃ K̃ H̃ᵀ + Σ)⁻¹ H̃.

Because each episode's ``H`` is square and invertible, this equals sparse GP regression on
the discounted Monte-Carlo returns ``y_t = Σ_{k≥t} γ^{k−t} r_k`` with independent noise σ²:

    α̃ = Aᵀ (A K̃ Aᵀ + σ² I)⁻¹ y,      C̃ = Aᵀ (A K̃ Aᵀ + σ² I)⁻¹ A.

The tests use both closed forms as independent oracles.

Learning: one update per episode
--------------------------------
Engel's GP-SARSA processes an episode transition by transition: each transition appends the
row ``h̃_t = a_t − γ_t a_{t+1}`` to ``H̃`` (``a_t`` short for ``a(x_t)``) and updates α̃ and
C̃ by the partitioned inverse, one rank-one update of C̃ per transition. This module makes
the same update once per episode, at its end. The noise of different episodes is
independent, so the posterior after an episode is the Gaussian update of the posterior
before it by that episode's rewards, which is (as above) GP regression on the episode's
returns ``y`` with independent noise σ²:

    μ = A K̃ α̃                     (μ_t = k̃(x_t)ᵀ α̃, the posterior mean at the episode's points)
    Ψ = A K̃ Aᵀ − A K̃ C̃ K̃ Aᵀ       (T × T, their posterior covariance)
    P = Aᵀ − C̃ K̃ Aᵀ               (m × T, column t is a_t − C̃ k̃(x_t))
    α̃ ← α̃ + P (Ψ + σ²I)⁻¹ (y − μ),      C̃ ← C̃ + P (Ψ + σ²I)⁻¹ Pᵀ

with ``A`` here the episode's rows. (Engel's episode update ``α̃ += Pₑ S⁻¹ (r − ΔKᵀ α̃)``,
``C̃ += Pₑ S⁻¹ Pₑᵀ`` with ``ΔK = K̃ H̃ᵀ``, ``Pₑ = H̃ᵀ − C̃ ΔK = P Hᵀ`` and
``S = H̃K̃H̃ᵀ − ΔKᵀ C̃ ΔK + σ²HHᵀ = H (Ψ + σ²I) Hᵀ`` is the same thing.) ``K̃ a_t`` is needed
only where it is exactly ``k̃(x_t)``: on the points the dictionary had before the episode
(α̃ and C̃ are zero on the points that join during it: the prior's zero padding), and in
``a_tᵀ K̃ a_u = a_t · k̃(x_u)`` when ``x_t`` is represented by a prefix of the block no longer
than ``x_u``'s — true for ``t <= u``, as a block only grows, so the upper triangle of Ψ is
computed and used. ``Ψ + σ²I = L D Lᵀ`` is factored row by row into ``L⁻¹`` (unit lower
triangular) and ``D`` (the construction of the dictionary factors; pivots ≥ σ² in exact
arithmetic); with ``W = D^{-1/2} L⁻¹ Pᵀ`` (T × m) the update is
``α̃ += Wᵀ D^{-1/2} L⁻¹ (y − μ)`` and one rank-T update ``C̃ += Wᵀ W``. The tests check the
result against the batch posterior of all episodes and, episode by episode, against Engel's
form with explicit ``H`` and ``Σ``; the per-transition recursion this replaced agreed with
both to the same rounding.

Numerical stability
-------------------
* ``K̃⁻¹`` is kept per action as an *inverse Cholesky factor* ``G_a = L_a⁻¹`` (lower
  triangular, ``K̃_a⁻¹ = G_aᵀ G_a``). A new point appends the row ``[−aᵀ/√δ, 1/√δ]``, which
  is the block-inverse formula ``K̃⁻¹ ← [[K̃⁻¹ + aaᵀ/δ, −a/δ], [−aᵀ/δ, 1/δ]]`` in factored
  form. Entries of ``G_a`` are written once and never updated again, so there is no
  accumulating drift, and ``K̃⁻¹`` is symmetric positive definite by construction. ALD admits a
  point only if ``δ > ν``, so every pivot of the factor is at least ``√ν``.
* ``C̃ += Wᵀ W`` updates the rows of the non-zero columns of ``W`` over the span of those
  columns (the rest of ``Wᵀ W`` is exactly zero): entries ``(i, j)`` and ``(j, i)`` are the
  same sum of the same products in the same order, so ``C̃`` stays exactly symmetric without
  re-symmetrising.
* A pivot of ``Ψ + σ²I`` that is not positive raises ``FloatingPointError``.
* :meth:`GPSarsa.diagnostics` reports ``max|K̃⁻¹K̃ − I|``, ``max|G K̃ Gᵀ − I|``, the
  asymmetry of ``C̃`` and the smallest unclipped posterior variance at a dictionary point.

Determinism
-----------
All randomness is a ``numpy.random.Generator`` passed to :meth:`GPSarsa.select_action`,
which draws exactly ``n_actions`` standard normals per sampled selection, whatever the mask.
The arithmetic of evaluation, the ALD tests and learning is compiled with numba
(:mod:`policies.gpsarsa._gpkernels`): plain loops in which every sum is accumulated in the order
written (no ``fastmath``, so no reassociation and no fused multiply-adds; vector
instructions only where they compute each element as the scalar loop would). No BLAS or
LAPACK is used (their blocked algorithms, e.g. OpenBLAS's threaded ``potrf``, change with
the thread count; the small T × T factorisation is done here), so the same inputs give
bit-identical arrays whatever the thread count, and on any machine with IEEE doubles.
Nothing depends on how a run is split: a checkpoint holds the whole state, and the derived
arrays below are rebuilt from it.

Layout and fast paths
---------------------
The dictionary is kept in *block order*: sorted by action, insertion order within an action,
so action ``a``'s points are the contiguous positions ``starts[a] .. starts[a+1] − 1`` of α̃
and C̃ (checkpoints and :meth:`GPSarsa.arrays` use insertion order).

* Evaluation (per decision; O(nnz(b)·m + Σ_a m_a²)). Beliefs are sparse (about 40 of the
  302 features are non-zero), so ``v = F b`` takes the rows of ``Fᵀ`` of the non-zero
  features only. Action ``a`` needs only its block of ``v``, α̃ and C̃ (``k̃(b, a)`` is zero
  elsewhere): the same-action blocks of C̃ are kept packed one after the other in one
  contiguous array (about a tenth of C̃; learning writes its changes through, and it is
  rebuilt when the dictionary grows), so a decision reads them from cache instead of from
  rows scattered over C̃.
* Learning (per episode). The turns of one action are ALD-tested in order against its
  block as it grows, on the kernel values evaluation already computed (:meth:`GPSarsa.act`
  returns them as the decision's :class:`Evaluation`, and a policy hands them back in its
  :class:`Episode`; otherwise they are recomputed, identically). ``C̃ k̃(x_t)`` reads only
  the rows of the points ``x_t``'s block had before the episode. The T × T algebra is
  small; the one O(m²·T) step is ``C̃ += Wᵀ W`` (T passes over C̃ — the per-transition
  recursion made T rank-one updates, each twice as expensive). ``C̃`` is kept exactly
  ``m × m`` and C-contiguous and re-allocated only when the dictionary grows (at most once
  per episode).
* :meth:`GPSarsa.act` is :meth:`GPSarsa.select_action` for a caller that decides every turn
  (the policy wrapper): it checks its inputs' types and shapes only (not the finiteness of the
  features, which a feature extractor guarantees) and returns the decision's evaluation for
  :meth:`GPSarsa.learn`.

Checkpoints
-----------
:meth:`GPSarsa.save` and :meth:`GPSarsa.load` write and read the format of
:mod:`policies.gpsarsa.checkpoint` (the arrays in a ``.npz`` with fixed timestamps, a JSON header
with the SHA-256 of the ``.npz``; each atomically, read without pickle). The learner's
configuration and the values it returns are in :mod:`policies.gpsarsa.values`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from policies.gpsarsa import _checks, _gpkernels
from policies.gpsarsa.checkpoint import read_checkpoint, write_checkpoint
from policies.gpsarsa.values import (
    Decision,
    DictionaryLayout,
    Episode,
    Evaluation,
    GPSarsaConfig,
    GPSarsaDiagnostics,
    QEstimate,
)
from simscore.checks import check_number

__all__ = ["GPSarsa", "compile_kernels"]

_INITIAL_BLOCK_CAPACITY = 8


class _ActionBlock:
    """Dictionary points of one action: insertion indices, features, inverse Cholesky factor."""

    __slots__ = ("size", "order", "features", "inv_chol")

    def __init__(self, feature_dim: int, capacity: int = _INITIAL_BLOCK_CAPACITY) -> None:
        self.size = 0
        self.order = np.zeros(capacity, dtype=np.int64)  # insertion index of each point
        self.features = np.zeros((capacity, feature_dim))
        self.inv_chol = np.zeros((capacity, capacity))

    def reserve(self, needed: int) -> None:
        """Make room for ``needed`` points (capacity doubles; the new space is zero)."""
        n = self.size
        if needed > self.order.shape[0]:
            capacity = _capacity_for(needed, self.order.shape[0])
            order = np.zeros(capacity, dtype=np.int64)
            order[:n] = self.order[:n]
            features = np.zeros((capacity, self.features.shape[1]))
            features[:n] = self.features[:n]
            inv_chol = np.zeros((capacity, capacity))
            inv_chol[:n, :n] = self.inv_chol[:n, :n]
            self.order, self.features, self.inv_chol = order, features, inv_chol


_MAX_CACHED_KERNELS = 1024
_EMPTY = np.zeros(0)


def _capacity_for(n: int, initial: int) -> int:
    capacity = initial
    while capacity < n:
        capacity *= 2
    return capacity


class GPSarsa:
    """Online sparse GP-SARSA learner over belief feature vectors and summary actions.

    Parameters
    ----------
    config : GPSarsaConfig
        Hyper-parameters.

    Notes
    -----
    The mathematics, the numerical-stability measures and the determinism guarantees are
    described in the module docstring. Action masks follow the gymnasium convention:
    a boolean array of shape ``(n_actions,)`` that is True where the action is *available*.

    Examples
    --------
    One two-turn episode (γ = 1, σ = 1) with one-hot-like beliefs: the Monte-Carlo returns
    are ``y = (-1 + 10, 10) = (9, 10)``; both points join the dictionary (different actions),
    ``K̃ = A = I``, so ``α̃ = (I + σ²I)⁻¹ y = (4.5, 5)`` and ``C̃ = I/2``.

    >>> import numpy as np
    >>> learner = GPSarsa(GPSarsaConfig(feature_dim=1, n_actions=2, sigma=1.0))
    >>> learner.learn_episode(np.array([[1.0], [1.0]]), np.array([0, 1]), np.array([-1.0, 10.0]))
    >>> learner.dictionary_size
    2
    >>> mean, std = learner.q_values(np.array([1.0]))
    >>> mean.tolist(), (std ** 2).round(12).tolist()
    ([4.5, 5.0], [0.5, 0.5])
    >>> learner.q_values(np.array([2.0])).mean.tolist()  # linear kernel: Q scales with b
    [9.0, 10.0]
    >>> learner.select_action(np.array([1.0]), scale=0)
    1
    >>> learner.select_action(np.array([1.0]), np.array([True, False]), scale=0)
    0
    """

    def __init__(self, config: GPSarsaConfig) -> None:
        if not isinstance(config, GPSarsaConfig):
            raise TypeError(f"config must be a GPSarsaConfig, got {type(config).__name__}")
        self._config = config
        self._sigma2 = config.sigma * config.sigma
        self._size = 0
        self._episodes = 0
        self._transitions = 0
        d = config.feature_dim
        self._blocks = [_ActionBlock(d) for _ in range(config.n_actions)]
        # Block order: the dictionary points sorted by action (insertion order within an
        # action); block a occupies positions _starts[a] .. _starts[a + 1] - 1 of α̃ and C̃.
        self._starts = [0] * (config.n_actions + 1)
        self._alpha = np.zeros(0)
        # C̃ is kept exactly m × m and C-contiguous (re-allocated at most once per episode).
        self._cov = np.zeros((0, 0))
        self._layout: DictionaryLayout | None = None
        self._packed: NDArray[np.float64] | None = None  # the same-action blocks of C̃ (see _posterior)
        self._all_actions = np.ones(config.n_actions, dtype=np.bool_)  # the mask "every action"
        self._no_samples = np.zeros(config.n_actions)  # the standard normals of a greedy selection

    # ------------------------------------------------------------------ properties

    @property
    def config(self) -> GPSarsaConfig:
        """The hyper-parameters."""
        return self._config

    @property
    def dictionary_size(self) -> int:
        """Number of dictionary points (all actions)."""
        return self._size

    @property
    def n_episodes(self) -> int:
        """Number of episodes learned."""
        return self._episodes

    @property
    def n_transitions(self) -> int:
        """Number of transitions (turns) learned."""
        return self._transitions

    def dictionary_sizes(self) -> NDArray[np.int64]:
        """Number of dictionary points per action, shape ``(n_actions,)``."""
        return np.array([block.size for block in self._blocks], dtype=np.int64)

    def _block_features(self) -> NDArray[np.float64]:
        """Dictionary features in block order, shape ``(m, feature_dim)``."""
        blocks = [block.features[: block.size] for block in self._blocks]
        return np.concatenate(blocks) if self._size else np.zeros((0, self._config.feature_dim))

    def _block_actions(self) -> NDArray[np.int64]:
        """Action of each dictionary point in block order."""
        return np.repeat(np.arange(self._config.n_actions, dtype=np.int64), self.dictionary_sizes())

    def arrays(self) -> dict[str, NDArray[np.float64] | NDArray[np.int64]]:
        """Copies of the learned state (the arrays a checkpoint stores).

        Returns
        -------
        dict
            ``features`` (m, feature_dim) dictionary beliefs in insertion order;
            ``actions`` (m,) their actions; ``alpha`` (m,) α̃; ``covariance`` (m, m) C̃;
            ``inverse_cholesky`` (Σ m_a²,) the per-action factors ``G_a`` (row-major,
            actions in order, each ``m_a × m_a``).
        """
        m = self._size
        # position (in block order) of each point, by insertion index
        where = np.empty(m, dtype=np.intp)
        for block, start in zip(self._blocks, self._starts):
            where[block.order[: block.size]] = np.arange(start, start + block.size)
        packed = [block.inv_chol[: block.size, : block.size].ravel() for block in self._blocks]
        return {
            "features": self._block_features()[where],
            "actions": self._block_actions()[where],
            "alpha": self._alpha[where],
            "covariance": self._cov[np.ix_(where, where)],
            "inverse_cholesky": np.concatenate(packed),
        }

    # ------------------------------------------------------------------ evaluation

    def _current_layout(self) -> DictionaryLayout:
        """The evaluation layout of the current dictionary (built on first use after a change)."""
        return self._layout if self._layout is not None else self._build_layout()

    def _build_layout(self) -> DictionaryLayout:
        cfg = self._config
        m = self._size
        features_t = np.zeros((cfg.feature_dim, m + 1))
        features_t[:, :m] = self._block_features().T
        sizes = np.array([block.size for block in self._blocks], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes * sizes)[:-1])).astype(np.int64)
        self._layout = DictionaryLayout(
            features_t, np.array(self._starts[:-1], dtype=np.int64), sizes, offsets, self._block_actions(), {}
        )
        return self._layout

    def _packed_blocks(self) -> NDArray[np.float64]:
        """The same-action blocks of C̃, packed (:func:`policies.gpsarsa._gpkernels.pack_blocks`); rebuilt after learning."""
        if self._packed is None:
            layout = self._current_layout()
            self._packed = np.empty(int((layout.sizes * layout.sizes).sum()))
            _gpkernels.pack_blocks(self._cov, layout.starts, layout.sizes, layout.offsets, self._packed)
        return self._packed

    def _kernel(self, b: NDArray[np.float64]) -> Evaluation:
        """``b`` against every dictionary point: ``v = F b`` over the non-zero features only.

        Beliefs are sparse (about 40 of 302 entries are non-zero), and in ``Fᵀ`` the rows of
        the non-zero features are contiguous, so this costs ``nnz(b) · m`` instead of ``d · m``.
        Beliefs also repeat (in the simulated restaurant domain >90% of the decisions after
        1,000 training dialogues meet a feature vector seen before), so the kernels are kept
        by the belief's bytes until the dictionary changes (at most 1,024; a cached kernel is
        the one this would compute, bit for bit).
        """
        layout = self._current_layout()
        key = b.tobytes()
        kernel = layout.kernels.get(key)
        if kernel is None:
            values = np.zeros(layout.features_t.shape[1])
            kernel = Evaluation(values, _gpkernels.belief_kernel(layout.features_t, b, values), layout)
            if len(layout.kernels) < _MAX_CACHED_KERNELS:
                layout.kernels[key] = kernel
        return kernel

    def _posterior(self, b: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Posterior mean and (clipped) variance of every action at a validated belief ``b``."""
        kernel = self._kernel(b)
        layout = kernel.layout
        n = self._config.n_actions
        mean, var = np.empty(n), np.empty(n)
        _gpkernels.posterior(
            self._packed_blocks(), self._alpha, layout.starts, layout.sizes, layout.offsets, kernel.values, kernel.norm2,
            mean, var,
        )
        return mean, var

    def q_values(self, features: ArrayLike, mask: ArrayLike | None = None) -> QEstimate:
        """Posterior mean and standard deviation of Q(b, a) for every action.

        Parameters
        ----------
        features : array_like of shape (feature_dim,)
            The belief feature vector ``b``.
        mask : array_like of bool, shape (n_actions,), optional
            True where the action is available; unavailable actions get NaN.

        Returns
        -------
        QEstimate
            ``(mean, std)``, each of shape ``(n_actions,)``.

        Examples
        --------
        >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=3))
        >>> learner.q_values([0.6, 0.8], mask=[True, False, True])  # prior: mean 0, var b·b
        QEstimate(mean=array([ 0., nan,  0.]), std=array([ 1., nan,  1.]))
        """
        b = _checks.belief(features, self._config.feature_dim)
        available = _checks.mask(mask, self._config.n_actions)
        mean, var = self._posterior(b)
        std = np.sqrt(var)
        if available is not None:
            mean = np.where(available, mean, np.nan)
            std = np.where(available, std, np.nan)
        return QEstimate(mean, std)

    def select_action(
        self,
        features: ArrayLike,
        mask: ArrayLike | None = None,
        *,
        rng: np.random.Generator | None = None,
        scale: float | None = None,
    ) -> int:
        """Choose an available action for belief ``features``.

        With ``scale > 0``, sample ``Q_a ~ N(mean_a, (scale · std_a)²)`` for every action
        (exactly ``n_actions`` standard normals are drawn from ``rng``, whatever the mask)
        and return the available action with the largest sample. With ``scale <= 0``,
        return the available action with the largest posterior mean. Ties go to the
        lowest action index.

        Parameters
        ----------
        features : array_like of shape (feature_dim,)
            The belief feature vector.
        mask : array_like of bool, shape (n_actions,), optional
            True where the action is available (default: all available).
        rng : numpy.random.Generator, optional
            Source of the samples; required when the effective scale is > 0.
        scale : float, optional
            Exploration scale; default ``config.scale``.

        Returns
        -------
        int
            The chosen action index.

        Examples
        --------
        >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=4))
        >>> learner.select_action([1.0, 0.0], [False, True, True, True], scale=0)  # all tie
        1
        >>> rng = np.random.default_rng(0)
        >>> learner.select_action([1.0, 0.0], [False, True, False, False], rng=rng)
        1
        """
        b = _checks.belief(features, self._config.feature_dim)
        available = _checks.mask(mask, self._config.n_actions)
        effective = self._config.scale if scale is None else check_number("scale", scale)
        if effective > 0.0 and not isinstance(rng, np.random.Generator):
            raise TypeError(
                "rng must be a numpy.random.Generator when scale > 0 "
                f"(scale={effective!r}), got {type(rng).__name__}"
            )
        return self._select(self._kernel(b), available, rng, effective)

    def act(
        self,
        features: NDArray[np.float64],
        mask: NDArray[np.bool_] | None,
        rng: np.random.Generator | None,
        scale: float | None = None,
    ) -> Decision:
        """:meth:`select_action` for a caller that decides every turn; also returns the evaluation.

        The same choice as ``select_action(features, mask, rng=rng, scale=scale)`` (the same
        draws from ``rng``), with cheaper checks: ``features`` must be a float64 array of shape
        ``(feature_dim,)`` whose entries are finite — *not checked*, as the features of a belief
        state are by construction — and ``mask`` None or a bool array of shape ``(n_actions,)``
        with an available action (checked, as is ``rng`` when the scale is > 0).

        Returns
        -------
        Decision
            ``(action, evaluation)``; hand the evaluations of an episode's decisions back to
            :meth:`learn` in its :class:`Episode`.

        Examples
        --------
        >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=3))
        >>> decision = learner.act(np.array([1.0, 0.0]), np.array([False, True, True]), None, scale=0)
        >>> decision.action, decision.evaluation.norm2
        (1, 1.0)
        """
        cfg = self._config
        if not (type(features) is np.ndarray and features.dtype == np.float64 and features.shape == (cfg.feature_dim,)):
            _checks.belief(features, self._config.feature_dim)  # raises: the message says what is wrong
            features = np.asarray(features, dtype=np.float64)
        if mask is not None and not (type(mask) is np.ndarray and mask.dtype == np.bool_
                                     and mask.shape == (cfg.n_actions,) and (mask[0] or mask.any())):
            mask = _checks.mask(mask, self._config.n_actions)
        effective = cfg.scale if scale is None else scale
        if effective > 0.0 and not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator when scale > 0, got {type(rng).__name__}")
        kernel = self._kernel(features)
        return Decision(self._select(kernel, mask, rng, effective), kernel)

    def _select(
        self,
        kernel: Evaluation,
        available: NDArray[np.bool_] | None,
        rng: np.random.Generator | None,
        scale: float,
    ) -> int:
        """The choice of :meth:`select_action` for a belief's kernel (inputs already checked)."""
        layout = kernel.layout
        if scale > 0.0 and rng is not None:
            samples = rng.standard_normal(self._config.n_actions)
        else:
            samples = self._no_samples
        return _gpkernels.select(
            self._packed_blocks(), self._alpha, layout.starts, layout.sizes, layout.offsets, kernel.values, kernel.norm2,
            samples, scale, self._all_actions if available is None else available,
        )

    # ------------------------------------------------------------------ learning

    def _relayout(self, old_sizes: list[int]) -> None:
        """Move α̃ and C̃ to the block order of the grown dictionary (new points get zeros)."""
        sizes = [block.size for block in self._blocks]
        starts = [0]
        for n in sizes:
            starts.append(starts[-1] + n)
        kept = np.concatenate(
            [np.arange(start, start + n) for start, n in zip(starts, old_sizes)] + [np.zeros(0, dtype=np.int64)]
        )
        m = self._size
        alpha = np.zeros(m)
        alpha[kept] = self._alpha
        cov = np.zeros((m, m))
        cov[np.ix_(kept, kept)] = self._cov
        self._alpha, self._cov, self._starts = alpha, cov, starts
        self._layout = None
        self._packed = None

    def learn_episode(self, features: ArrayLike, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Update the posterior with one complete episode (a dialogue that ended).

        Parameters
        ----------
        features : array_like of shape (T, feature_dim)
            Belief feature vector of each turn, ``T >= 1``.
        actions : array_like of int, shape (T,)
            Summary action taken at each turn.
        rewards : array_like of shape (T,)
            Reward of each turn (e.g. −1 per turn, the last one including the outcome).
            The episode ends in a terminal state after the last turn.

        Examples
        --------
        >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=2, sigma=1.0))
        >>> learner.learn_episode([[1.0, 0.0], [0.0, 1.0]], [0, 0], [-1.0, 19.0])
        >>> learner.dictionary_size, learner.n_episodes, learner.n_transitions
        (2, 1, 2)
        >>> learner.q_values([1.0, 0.0]).mean.tolist()  # returns (18, 19), shrunk by n/(n+σ²)
        [9.0, 0.0]
        """
        self.learn(Episode(features, actions, rewards))

    def learn(self, episode: Episode) -> None:
        """Update the posterior with one complete :class:`Episode` (as :meth:`learn_episode`).

        The episode's evaluations (from :meth:`act`), if given for every turn and still current,
        spare computing the kernel values again; the result is the same either way.

        Raises
        ------
        ValueError
            Naming what is wrong: shapes, non-finite features or rewards, actions outside
            ``[0, n_actions)``, evaluations for some turns only.
        """
        self._learn(*_checks.episode(episode, self._config))

    def _learn(
        self, x: NDArray[np.float64], acts: list[int], r: list[float], kernels: Sequence[Evaluation] | None = None
    ) -> None:
        """The update of :meth:`learn` on checked inputs: ``x`` (T, d) float64, Python ints and floats.

        ``kernels`` are the turns' evaluations, used if they belong to the current dictionary
        (they are what :meth:`_kernel` would compute).
        """
        cfg = self._config
        turns = len(acts)
        layout = self._current_layout()
        if kernels is None or len(kernels) != turns or any(k.layout is not layout for k in kernels):
            kernels = [self._kernel(x[t]) for t in range(turns)]
        old_sizes = [block.size for block in self._blocks]
        old_starts = self._starts
        # The ALD tests do not depend on α̃ or C̃, so the whole episode is tested first, action
        # by action, and C̃ grows once (points that join get zero rows and columns: the
        # prior's padding). Turn t ends up represented on the first sizes[t] points of its
        # action's block: coefficients a = K̃⁻¹ k̃ in coef[t], kernel values k̃ in kvec[t].
        by_action: dict[int, list[int]] = {}
        for t, action in enumerate(acts):
            by_action.setdefault(action, []).append(t)
        width = max(old_sizes[action] + len(rows) for action, rows in by_action.items())
        coef, kvec = np.zeros((2, turns, width))
        sizes = np.empty(turns, dtype=np.int64)
        joined = np.zeros(turns, dtype=np.bool_)
        stacked = np.array([kernel.values for kernel in kernels])  # equal-length rows: as np.stack, faster
        norms = np.array([kernel.norm2 for kernel in kernels])
        nu = cfg.nu
        for action, rows in by_action.items():
            block = self._blocks[action]
            n = block.size
            block.reserve(n + len(rows))
            block.size = _gpkernels.ald(
                block.inv_chol, n, old_starts[action], np.array(rows, dtype=np.int64), stacked, x, norms, nu,
                coef, kvec, sizes, joined,
            )
        if joined.any():
            # insertion indices (the checkpoint's order) follow the turns, not the actions
            index = sum(old_sizes)
            position = list(old_sizes)
            for t in np.flatnonzero(joined).tolist():
                block, at = self._blocks[acts[t]], position[acts[t]]
                block.order[at] = index
                block.features[at] = x[t]
                position[acts[t]] += 1
                index += 1
            self._size = index
            self._relayout(old_sizes)
        starts = self._starts
        gamma = cfg.gamma
        returns = np.empty(turns)  # y_t = r_t + γ y_{t+1}; the terminal successor has Q = 0
        following = 0.0
        for t in range(turns - 1, -1, -1):
            following = returns[t] = r[t] + gamma * following
        turn_start = np.array([starts[action] for action in acts], dtype=np.int64)
        turn_old = np.array([old_sizes[action] for action in acts], dtype=np.int64)
        pivots = np.empty(turns)
        # the packed same-action blocks of C̃ are updated with it (if the dictionary did not grow)
        layout = self._current_layout()
        packed = self._packed if self._packed is not None else _EMPTY
        failed = _gpkernels.learn_update(
            self._cov, self._alpha, turn_start, sizes, turn_old, coef, kvec, returns, self._sigma2, pivots,
            packed, layout.starts, layout.sizes, layout.offsets, layout.block_of,
        )
        _checks.raise_if_failed(failed, pivots)
        self._episodes += 1
        self._transitions += turns

    # ------------------------------------------------------------------ diagnostics

    def diagnostics(self) -> GPSarsaDiagnostics:
        """Measure the numerical health of the dictionary factors and of C̃.

        Costs O(Σ m_a³ + m² · feature_dim); meant for tests and occasional monitoring.

        Examples
        --------
        >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=1))
        >>> learner.learn_episode([[1.0, 0.0], [1.0, 1.0]], [0, 0], [-1.0, 1.0])
        >>> diag = learner.diagnostics()
        >>> diag.dictionary_size, diag.inverse_residual < 1e-12, diag.covariance_asymmetry
        (2, True, 0.0)
        """
        factors = [(b.features[: b.size], b.inv_chol[: b.size, : b.size]) for b in self._blocks if b.size]
        return _checks.health(factors, self._cov, self._block_features(), self._block_actions())

    # ------------------------------------------------------------------ checkpoints


    def save(
        self, path_stem: str | os.PathLike[str], *, metadata: Mapping[str, Any] | None = None, overwrite: bool = False
    ) -> None:
        """Write ``<path_stem>.npz`` and ``<path_stem>.json`` atomically (:mod:`policies.gpsarsa.checkpoint`).

        The ``.npz`` is written first; the ``.json`` names it and records its SHA-256, so
        an interrupted save is detected by :meth:`load`. The same state always gives the
        same bytes. Existing files are replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise, before anything is written).

        ``metadata`` (JSON-serialisable; e.g. what a policy wrapping the learner needs) is
        stored under the JSON's ``"metadata"`` key; :meth:`load` ignores it.

        Examples
        --------
        >>> import tempfile, os
        >>> learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=2, sigma=1.0))
        >>> learner.learn_episode([[0.5, 0.5]], [1], [3.0])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     learner.save(os.path.join(tmp, "policy"))
        ...     sorted(os.listdir(tmp))
        ...     GPSarsa.load(os.path.join(tmp, "policy")).q_values([0.5, 0.5]).mean.tolist()
        ['policy.json', 'policy.npz']
        [0.0, 1.0]
        """
        counts = {
            "dictionary_size": self._size,
            "per_action": self.dictionary_sizes().tolist(),
            "episodes": self._episodes,
            "transitions": self._transitions,
        }
        write_checkpoint(path_stem, self._config, counts, self.arrays(), metadata=metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path_stem: str | os.PathLike[str]) -> GPSarsa:
        """Read a learner written by :meth:`save` (:func:`~policies.gpsarsa.checkpoint.read_checkpoint`).

        Raises
        ------
        simscore.errors.CheckpointError
            A file is missing or corrupt, the format or version is unsupported, the
            checksum does not match, or arrays are missing or inconsistent.
        """
        checkpoint = read_checkpoint(path_stem)
        learner = cls(checkpoint.config)
        learner._restore(checkpoint.arrays, checkpoint.counts)
        return learner

    def _restore(self, arrays: Mapping[str, np.ndarray], counts: Mapping[str, Any]) -> None:
        """The state of a checkpoint's arrays, checked by :func:`~policies.gpsarsa.checkpoint.read_checkpoint`."""
        cfg = self._config
        per_action = counts["per_action"]
        acts = arrays["actions"]
        features = arrays["features"]
        packed = arrays["inverse_cholesky"]
        offset = 0
        members = [np.zeros(0, dtype=np.int64)]
        for action in range(len(self._blocks)):
            n = per_action[action]
            index = np.flatnonzero(acts == action)
            factor = packed[offset : offset + n * n].reshape(n, n)
            offset += n * n
            fresh = _ActionBlock(cfg.feature_dim, _capacity_for(max(n, 1), _INITIAL_BLOCK_CAPACITY))
            fresh.order[:n] = index
            fresh.features[:n] = features[index]
            fresh.inv_chol[:n, :n] = factor
            fresh.size = n
            self._blocks[action] = fresh
            members.append(index)
        order = np.concatenate(members)  # insertion index of each position in block order
        self._size = counts["dictionary_size"]
        self._starts = [0]
        for n in per_action:
            self._starts.append(self._starts[-1] + n)
        self._alpha = np.array(arrays["alpha"][order], dtype=np.float64)
        self._cov = np.ascontiguousarray(arrays["covariance"][np.ix_(order, order)], dtype=np.float64)
        self._episodes = counts["episodes"]
        self._transitions = counts["transitions"]
        self._layout = None
        self._packed = None



def compile_kernels(*, progress: bool = False) -> None:
    """Compile (or load from numba's on-disk cache) the learner's compiled loops now.

    The first GP-SARSA decision or update in a fresh environment compiles
    :mod:`policies.gpsarsa._gpkernels` (about 7 s) and caches the machine code on disk; later
    processes load it (well under a second). A program that starts several training processes
    calls this first, so the cache is written once, by one process, before they start.

    Parameters
    ----------
    progress : bool
        Show the compilation's progress (:mod:`simscore.progress`: away from a terminal a log
        line at least every minute; on a busy machine a first compilation has taken minutes).

    >>> compile_kernels()
    """
    from simscore.progress import Progress

    learner = GPSarsa(GPSarsaConfig(feature_dim=2, n_actions=2))
    with Progress(3, "compiling the learner's loops", unit="parts", enabled=progress, delay=1.0) as bar:
        learner.learn_episode(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 1]), np.array([-1.0, 1.0]))
        bar.update()
        learner.select_action(np.array([1.0, 1.0]), np.array([True, True]), rng=np.random.default_rng(0))
        bar.update()
        learner.q_values(np.array([1.0, 1.0]))
        bar.update()

