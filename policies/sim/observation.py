"""What the Gymnasium environment shows a policy for a belief state: its observation and action mask.

:class:`policies.sim.env.RestaurantSearchEnv` observes the belief feature vector
(:mod:`policies.sim.features`) and masks summary actions as :class:`~policies.sim.summary.SummaryActions`
does; both are functions of the belief state alone, so every context has exactly one
observation and one mask. These functions give them without an environment (and without
gymnasium): for a model trained in the environment that answers contexts
(:class:`policies.observation.ObservationPolicy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.sim.domain_cache import domain_cache
from policies.sim.features import BeliefFeatures
from simscore.errors import InvalidContextError

if TYPE_CHECKING:
    from contexts.domain import Domain

__all__ = ["belief_of", "observation_for", "action_mask_for"]


def belief_of(context_or_belief: Any) -> BeliefState:
    """The belief state of a context (anything with a ``belief``), or the belief state itself.

    Raises
    ------
    InvalidContextError
        For anything else, naming its type.

    >>> belief_of(BeliefState()) == BeliefState()
    True
    """
    belief = context_or_belief if isinstance(context_or_belief, BeliefState) else getattr(context_or_belief, "belief", None)
    if not isinstance(belief, BeliefState):
        raise InvalidContextError(
            f"expected a context with a BeliefState 'belief' or a BeliefState, got {type(context_or_belief).__name__}"
        )
    return belief


def observation_for(context_or_belief: Any, domain: Domain | None = None) -> np.ndarray:
    """The observation :class:`policies.sim.env.RestaurantSearchEnv` shows for a belief state.

    The environment's observation is the belief feature vector
    (:func:`policies.sim.features.belief_features`), a function of the belief state alone, so a
    context has exactly one observation: the one the environment returns whenever its tracker
    holds the context's belief.

    Parameters
    ----------
    context_or_belief : Context or BeliefState
        A context (anything with a ``belief``) or a belief state.
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.

    Returns
    -------
    numpy.ndarray
        Shape ``(feature_size(domain),)`` (302 for the default domain), float64 in [0, 1].

    Examples
    --------
    >>> from contexts import generate_grid
    >>> observation_for(generate_grid()["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"]).shape
    (302,)
    """
    domain = domain if domain is not None else default_domain()
    return BeliefFeatures(domain, space=domain_cache(domain).space)(belief_of(context_or_belief))


def action_mask_for(context_or_belief: Any, domain: Domain | None = None) -> np.ndarray:
    """The environment's action mask for a belief state: bool, shape ``(n_actions,)``, True = allowed.

    >>> from contexts import generate_grid
    >>> from policies.sim.summary import SUMMARY_ACTIONS
    >>> mask = action_mask_for(generate_grid()["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"])
    >>> [SUMMARY_ACTIONS[i] for i in mask.nonzero()[0]]
    ['request_area', 'request_food', 'request_pricerange', 'confirm_area']
    """
    space = domain_cache(domain if domain is not None else default_domain()).space
    return space.mask(belief_of(context_or_belief))
