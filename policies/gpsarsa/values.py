"""The values the GP-SARSA learner takes and returns.

Its hyper-parameters (:class:`GPSarsaConfig`, which a checkpoint stores), the posterior of Q
at a belief (:class:`QEstimate`), a decision with the kernel values it computed
(:class:`Decision`, :class:`Evaluation`, :class:`DictionaryLayout`), an episode to learn
(:class:`Episode`) and the numerical health of a learner (:class:`GPSarsaDiagnostics`). The
learner itself, and the mathematics these values belong to, are in
:mod:`policies.gpsarsa.learner`; the checkpoint format in :mod:`policies.gpsarsa.checkpoint`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simscore.checks import check_int, check_number

__all__ = [
    "GPSarsaConfig",
    "QEstimate",
    "GPSarsaDiagnostics",
    "DictionaryLayout",
    "Evaluation",
    "Decision",
    "Episode",
]


@dataclass(frozen=True, kw_only=True)
class GPSarsaConfig:
    """Hyper-parameters of :class:`~policies.gpsarsa.learner.GPSarsa` (defaults: Gašić & Young 2014 / the paper).

    Parameters
    ----------
    feature_dim : int
        Length of a belief feature vector (302 in the default restaurant domain:
        :func:`policies.sim.features.feature_size`).
    n_actions : int, default 16
        Number of summary actions.
    gamma : float, default 1.0
        Discount factor, ``0 <= gamma <= 1``.
    sigma : float, default 5.0
        Standard deviation of the GPTD observation noise, ``> 0``.
    nu : float, default 0.001
        ALD threshold: a point joins the dictionary only if its residual ``δ > nu``; ``> 0``.
    scale : float, default 3.0
        Default exploration scale of :meth:`~policies.gpsarsa.learner.GPSarsa.select_action`: sample
        each action's Q from ``N(mean, (scale * std)**2)``; ``scale <= 0`` selects by the
        posterior mean.

    Examples
    --------
    >>> config = GPSarsaConfig(feature_dim=302)
    >>> config.n_actions, config.gamma, config.sigma, config.nu, config.scale
    (16, 1.0, 5.0, 0.001, 3.0)
    >>> GPSarsaConfig(feature_dim=3, sigma=0)
    Traceback (most recent call last):
    ...
    ValueError: sigma must be > 0, got 0
    """

    feature_dim: int
    n_actions: int = 16
    gamma: float = 1.0
    sigma: float = 5.0
    nu: float = 0.001
    scale: float = 3.0

    def __post_init__(self) -> None:
        values: dict[str, Any] = {
            "feature_dim": check_int("feature_dim", self.feature_dim, minimum=1),
            "n_actions": check_int("n_actions", self.n_actions, minimum=1),
            "gamma": check_number("gamma", self.gamma, minimum=0, maximum=1),
            "sigma": check_number("sigma", self.sigma, minimum=0, exclusive_minimum=True),
            "nu": check_number("nu", self.nu, minimum=0, exclusive_minimum=True),
            "scale": check_number("scale", self.scale),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-serialisable dict (field order preserved)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GPSarsaConfig:
        """Build a config from :meth:`to_dict` output; unknown or missing keys are an error.

        Examples
        --------
        >>> c = GPSarsaConfig(feature_dim=4, sigma=2.0)
        >>> GPSarsaConfig.from_dict(c.to_dict()) == c
        True
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"config must be a mapping, got {type(data).__name__}")
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown config field(s) {unknown}; known fields are {known}")
        if "feature_dim" not in data:
            raise ValueError("config field 'feature_dim' is missing")
        return cls(**dict(data))


class QEstimate(NamedTuple):
    """Posterior of Q for every action at one belief.

    Attributes
    ----------
    mean : ndarray of shape (n_actions,)
        Posterior mean; NaN for actions excluded by the mask.
    std : ndarray of shape (n_actions,)
        Posterior standard deviation (variance clipped at 0); NaN where masked.
    """

    mean: NDArray[np.float64]
    std: NDArray[np.float64]


@dataclass(frozen=True)
class GPSarsaDiagnostics:
    """Numerical health of a learner (see :meth:`~policies.gpsarsa.learner.GPSarsa.diagnostics`).

    Attributes
    ----------
    dictionary_size : int
        Number of dictionary points.
    inverse_residual : float
        ``max |K̃⁻¹ K̃ − I|`` over all action blocks, with ``K̃⁻¹ = Gᵀ G``.
    factor_residual : float
        ``max |G K̃ Gᵀ − I|`` over all action blocks (how far ``G`` is from ``L⁻¹``).
    covariance_asymmetry : float
        ``max |C̃ − C̃ᵀ|`` (0.0 by construction).
    min_dictionary_variance : float
        Smallest unclipped posterior variance ``k(x, x) − k̃ᵀ C̃ k̃`` over the dictionary
        points (non-negative in exact arithmetic); ``inf`` for an empty dictionary.
    """

    dictionary_size: int
    inverse_residual: float
    factor_residual: float
    covariance_asymmetry: float
    min_dictionary_variance: float


class DictionaryLayout(NamedTuple):
    """Evaluation arrays that depend on the dictionary only (rebuilt when it grows).

    The learner builds one for each dictionary it evaluates against; an :class:`Evaluation`
    names the layout it was computed with, so the learner sees whether it is still current
    (compared by identity). Read-only for everyone but the learner.
    """

    features_t: NDArray[np.float64]  # (feature_dim, m + 1): the features in block order, then a zero column
    starts: NDArray[np.int64]  # (n_actions,): block-order position of each action's first point
    sizes: NDArray[np.int64]  # (n_actions,): number of points of each action
    offsets: NDArray[np.int64]  # (n_actions,): where each action's block starts in the packed blocks
    block_of: NDArray[np.int64]  # (m,): the action of each position
    kernels: dict[bytes, Evaluation]  # the kernels of the beliefs seen (by their bytes; see GPSarsa._kernel)


class Evaluation(NamedTuple):
    """A belief's kernel values against the whole dictionary, as one decision computed them.

    Returned by :meth:`~policies.gpsarsa.learner.GPSarsa.act` and handed back to
    :meth:`~policies.gpsarsa.learner.GPSarsa.learn` (in an :class:`Episode`) so that learning does not
    compute them again. Valid while the dictionary is the one they were computed against;
    :meth:`~policies.gpsarsa.learner.GPSarsa.learn` recomputes stale ones (identically), so handing them
    back is never wrong, only faster.
    """

    values: NDArray[np.float64]  # (m + 1,): b · (each dictionary point), block order, then 0
    norm2: float  # b · b
    layout: DictionaryLayout  # the dictionary they belong to (replaced whenever it changes)


class Decision(NamedTuple):
    """What :meth:`~policies.gpsarsa.learner.GPSarsa.act` returns: the chosen action and the belief's
    :class:`Evaluation`."""

    action: int
    evaluation: Evaluation


@dataclass(frozen=True)
class Episode:
    """One complete episode for :meth:`~policies.gpsarsa.learner.GPSarsa.learn`.

    Attributes
    ----------
    features : ndarray of shape (T, feature_dim)
        The belief feature vector of each turn, ``T >= 1``.
    actions : sequence of int, length T
        The action taken at each turn.
    rewards : sequence of float, length T
        The reward of each turn; the episode ends in a terminal state after the last turn.
    evaluations : sequence of Evaluation, optional
        The turns' evaluations from :meth:`~policies.gpsarsa.learner.GPSarsa.act`, in order (all or
        none).
    """

    features: ArrayLike
    actions: ArrayLike
    rewards: ArrayLike
    evaluations: tuple[Evaluation, ...] | None = None
