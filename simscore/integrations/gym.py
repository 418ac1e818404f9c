"""Gymnasium: the registered restaurant-search environment and similarity as a reward.

Registration
------------
Importing this module registers :data:`ENV_ID` (``"simscore/RestaurantSearch-v0"``) with a
*string* entry point (:data:`ENTRY_POINT`), so the environment module is imported only by
``make``; importing it again does not re-register. Gymnasium 1.x has no plugin entry
points, so there are two ways in:

>>> import gymnasium
>>> import simscore.integrations.gym  # registers
>>> env = gymnasium.make("simscore/RestaurantSearch-v0", reward="iq", max_turns=15)
>>> env.spec.kwargs
{'reward': 'iq', 'max_turns': 15}

or, without any import, ``gymnasium.make("simscore.integrations.gym:simscore/RestaurantSearch-v0")``
(Gymnasium imports the module before the look-up). The ``make`` kwargs are the keyword
arguments of :class:`policies.sim.env.RestaurantSearchEnv`: ``reward`` (``"task_success"`` /
``"ts"``, ``"interaction_quality"`` / ``"iq"`` or a ``RewardModel``), ``user_config`` (a
:class:`~policies.sim.usersim.UserSimulatorConfig` or a dict of its fields), ``max_turns``,
``enforce_masks``, ``nlg_instance``, ``iq_estimator``, ``domain``, ``render_mode``. The
environment counts its own turns, so no ``max_episode_steps`` is registered. ``make`` wraps
it (``OrderEnforcing``, the passive env checker); the environment's own methods, e.g.
``action_masks()`` for ``MaskablePPO``, are reached through ``env.get_wrapper_attr(...)`` or
``env.unwrapped`` (sb3-contrib's helpers do this themselves).

>>> obs, info = env.reset(seed=0)
>>> env.unwrapped.action_masks().shape, env.get_wrapper_attr("action_masks")().dtype, obs.shape
((16,), dtype('bool'), (302,))

Observation, masks, info: see :mod:`policies.sim.env`; a context's observation is
:func:`policies.sim.observation.observation_for`.

Similarity as a reward
----------------------
:class:`SimilarityReward` adds ``weight * measure(agent's master act, reference act)`` to
every step's reward, where the reference act is what a reference simscore policy (e.g. the
handcrafted policy) answers on the belief the agent decided on: imitation (large weight,
or the environment's reward switched off) or regularisation toward a reference behaviour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium

from simscore.acts import Act
from simscore.checks import check_number
from simscore.errors import InvalidResponseError
from simscore.measures import get_measure
from simscore.measures.base import Measure

if TYPE_CHECKING:
    from contexts.belief import BeliefState
    from simscore.policy import Policy

__all__ = ["ENV_ID", "ENTRY_POINT", "register_envs", "SimilarityReward"]

#: The id the environment is registered under.
ENV_ID = "simscore/RestaurantSearch-v0"
#: Where ``make`` finds the environment class (imported only by ``make``).
ENTRY_POINT = "policies.sim.env:RestaurantSearchEnv"


def register_envs() -> None:
    """Register :data:`ENV_ID` with Gymnasium unless it is registered already (idempotent).

    Called when this module is imported; call it again after clearing Gymnasium's registry.
    """
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=ENTRY_POINT, nondeterministic=False)


register_envs()


class _Decision:
    """The context a reference policy answers: the belief the agent is deciding on."""

    __slots__ = ("id", "belief", "metadata")

    def __init__(self, turn: int, belief: BeliefState) -> None:
        self.id = f"turn-{turn}"
        self.belief = belief
        self.metadata: dict[str, Any] = {"source": "env", "turn_index": turn}


class SimilarityReward(gymnasium.Wrapper):
    """Add similarity to a reference policy's behaviour to the reward.

    At every step the reference policy answers the belief state the agent decides on (the
    belief behind the current observation); after the step, the agent's master act (the act
    its summary action became) is scored against the reference act with an action
    ``measure``, and ``weight * score`` is added to the reward. The episode's return is then
    no longer R_TS / R_IQ alone; ``info`` reports the parts: ``similarity`` (the score),
    ``similarity_reward`` (``weight * score``) and ``reference_act``.

    Uses: imitation of a reference policy (a large ``weight``, e.g. ``reward="ts"`` and
    ``weight=1``: up to one point per turn) or regularisation toward it (a small weight).
    Scores of equal act pairs are cached, so a step costs one reference decision.

    Parameters
    ----------
    env : gymnasium.Env
        :class:`policies.sim.env.RestaurantSearchEnv`, possibly wrapped (``gymnasium.make``).
    reference : simscore Policy
        ``respond(context) -> Response`` with an action, e.g.
        ``policies.SummaryPolicyAdapter(policies.HandcraftedPolicy())``, a GP-SARSA policy or an
        :class:`~simscore.integrations.sb3.SB3Policy`. It must be deterministic.
    measure : str or Measure
        An action measure (``"tmr"``, ``"dmr"``, ``"cer"``, ``"cmr"`` or a configured one);
        default ``"cmr"``, which gives partial credit for shared slots and values.
    weight : float
        Multiplies the score (negative: a penalty for similarity).

    Examples
    --------
    >>> import gymnasium
    >>> from policies import HandcraftedPolicy, SummaryPolicyAdapter
    >>> env = SimilarityReward(gymnasium.make(ENV_ID), SummaryPolicyAdapter(HandcraftedPolicy()), weight=2.0)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)  # request(area)
    >>> info["reference_act"], info["similarity"], reward == -1.0 + 2.0 * info["similarity"]
    ('request(area)', 1.0, True)
    """

    def __init__(self, env: gymnasium.Env, reference: Policy, *, measure: str | Measure = "cmr", weight: float = 1.0):
        from policies.sim.env import RestaurantSearchEnv

        super().__init__(env)
        if not isinstance(env.unwrapped, RestaurantSearchEnv):
            raise TypeError(
                f"SimilarityReward wraps the restaurant-search environment ({ENV_ID}), got {type(env.unwrapped).__name__}"
            )
        if not callable(getattr(reference, "respond", None)):
            raise TypeError(f"reference must be a simscore policy with respond(context), got {type(reference).__name__}")
        resolved = get_measure(measure)
        if resolved.level != "action":
            raise ValueError(f"measure must be an action measure (tmr, dmr, cer, cmr), got {resolved.name!r} ({resolved.level})")
        self.reference = reference
        self.measure = resolved
        self.weight = check_number("weight", weight, error=ValueError)
        self._scores: dict[tuple[Act, Act], float] = {}

    def _score(self, agent: Act, reference: Act) -> float:
        key = (agent, reference)
        value = self._scores.get(key)
        if value is None:
            value = self._scores[key] = float(self.measure.score_pairs([agent], [reference])[0])
        return value

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the environment and add ``weight * similarity`` to the reward."""
        base: Any = self.env.unwrapped  # a RestaurantSearchEnv (checked in __init__)
        decision = _Decision(base.sim.turn_index, base.belief)
        response = self.reference.respond(decision)
        reference_act = getattr(response, "action", None)
        if not isinstance(reference_act, Act):
            raise InvalidResponseError(
                f"reference policy {getattr(self.reference, 'name', type(self.reference).__name__)!r} "
                f"returned no action for turn {decision.id}; SimilarityReward needs actions"
            )
        obs, reward, terminated, truncated, info = self.env.step(action)
        similarity = self._score(base.sim.system_act, reference_act)
        bonus = self.weight * similarity
        info["similarity"] = similarity
        info["similarity_reward"] = bonus
        info["reference_act"] = str(reference_act)
        return obs, float(reward) + bonus, terminated, truncated, info
