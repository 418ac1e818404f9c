"""A rule-based policy (like PyDial's handcrafted one) and a seeded random policy (chance level).

Both decide on summary actions (:class:`~policies.sim.summary.SummaryPolicy`); wrap them with
:class:`~policies.sim.simulation.SummaryPolicyAdapter` to get a simscore policy
(``respond(context) -> Response``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from contexts.domain import default_domain
from policies.sim.domain_cache import domain_cache
from policies.sim.summary import belief_generator
from simscore.checks import check_int, check_probability

if TYPE_CHECKING:
    from contexts.belief import BeliefState
    from contexts.domain import Domain
    from policies.sim.summary import SummaryActions

__all__ = ["HandcraftedPolicy", "RandomPolicy"]


class HandcraftedPolicy:
    """Deterministic rules over the belief state, in this order:

    1. ``bye`` if the user is finished (P(finished) > 0.5);
    2. ``inform_byname`` if the user asks about the offered venue (method byname);
    3. ``inform_alternatives`` if the user asks for alternatives (method byalternatives);
    4. ``confirm_s`` for the first system-requestable slot whose accepted top value has a
       probability below ``confirm_below``;
    5. ``select_s`` for the first slot whose top two values both exceed ``select_above``
       and whose top value is not confident (below ``confirm_below``);
    6. ``inform`` when it is allowed (constraints known well enough to offer a venue);
    7. ``request_s`` for the first system-requestable slot without an accepted value;
    8. ``reqmore`` after an offer, else ``request`` the first slot.

    Every rule only fires for an unmasked action.

    Parameters
    ----------
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    confirm_below : float
        Accepted values less probable than this are confirmed.
    select_above : float
        Both top values above this: ask the user to choose.

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> from policies.sim.summary import SummaryActions, SUMMARY_ACTIONS
    >>> from contexts.domain import default_domain
    >>> policy, space = HandcraftedPolicy(), SummaryActions(default_domain())
    >>> b = BeliefState(slots={"food": {"indian": 1.0}}, method={"byconstraints": 1.0})
    >>> SUMMARY_ACTIONS[policy.choose(b, space.mask(b))]
    'request_area'
    """

    name = "handcrafted"

    def __init__(self, domain: Domain | None = None, *, confirm_below: float = 0.8, select_above: float = 0.3) -> None:
        self.confirm_below = check_probability("confirm_below", confirm_below, error=ValueError)
        self.select_above = check_probability("select_above", select_above, error=ValueError)
        self.domain = domain if domain is not None else default_domain()
        self.space: SummaryActions = domain_cache(self.domain).space
        self.provenance = {"policy": "handcrafted", "confirm_below": self.confirm_below, "select_above": self.select_above}

    def __repr__(self) -> str:
        return f"HandcraftedPolicy(confirm_below={self.confirm_below}, select_above={self.select_above})"

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        """The rule-based summary action for ``belief`` (an unmasked one whenever possible)."""
        space = self.space
        allowed = mask.tolist() if isinstance(mask, np.ndarray) else [bool(m) for m in mask]
        if allowed[space.BYE]:
            return space.BYE
        summary = space.summarise(belief)
        method = summary.method
        if method == "byname" and allowed[space.INFORM_BYNAME]:
            return space.INFORM_BYNAME
        if method == "byalternatives" and allowed[space.INFORM_ALTERNATIVES]:
            return space.INFORM_ALTERNATIVES
        slots = space.system_requestable
        k = len(slots)
        accepted = {slot for slot, _, _ in summary.accepted}
        tops = summary.tops
        for i, slot in enumerate(slots):
            top = tops[slot]
            if slot in accepted and top[1] < self.confirm_below and allowed[k + i]:
                return k + i
        for i, slot in enumerate(slots):
            top = tops[slot]
            if top[1] < self.confirm_below and top[3] > self.select_above and allowed[2 * k + i]:
                return 2 * k + i
        if allowed[space.INFORM]:
            return space.INFORM
        for i, slot in enumerate(slots):
            if slot not in accepted and allowed[i]:
                return i
        if allowed[space.REQMORE]:
            return space.REQMORE
        return 0


class RandomPolicy:
    """Uniformly random summary actions: the chance-level baseline.

    Parameters
    ----------
    seed : int
        Seeds the choices.
    respect_mask : bool
        Choose among the unmasked actions (default) or among all actions.
    n_actions : int
        Number of summary actions when the mask is ignored (default 16).

    Notes
    -----
    Inside a simulated dialogue the runner calls :meth:`begin_dialogue` with a generator
    derived from the dialogue's seed, and the choices are drawn from it. Outside a dialogue
    (e.g. through :class:`~policies.sim.simulation.SummaryPolicyAdapter` on a context set) the
    choice is a deterministic function of ``seed`` and the belief, as the simscore policy
    protocol requires (same context, same response).

    Examples
    --------
    >>> from contexts.belief import BeliefState
    >>> b = BeliefState(slots={"food": {"indian": 1.0}})
    >>> mask = np.array([True] * 3 + [False] * 13)
    >>> p = RandomPolicy(seed=3)
    >>> p.choose(b, mask) == p.choose(b, mask) == RandomPolicy(seed=3).choose(b, mask)
    True
    >>> p.choose(b, mask) in (0, 1, 2)
    True
    """

    name = "random"

    def __init__(self, seed: int = 0, *, respect_mask: bool = True, n_actions: int = 16) -> None:
        self.seed = check_int("seed", seed, minimum=0, error=ValueError)
        self.respect_mask = bool(respect_mask)
        self.n_actions = check_int("n_actions", n_actions, minimum=1, error=ValueError)
        self._rng: np.random.Generator | None = None
        self.provenance = {"policy": "random", "seed": self.seed, "respect_mask": self.respect_mask}

    def __repr__(self) -> str:
        return f"RandomPolicy(seed={self.seed}, respect_mask={self.respect_mask})"

    def begin_dialogue(self, rng: np.random.Generator) -> None:
        """Draw this dialogue's choices from ``rng`` mixed with ``seed`` (called by the runner)."""
        self._rng = np.random.default_rng([self.seed, int(rng.integers(2**63))])

    def end_dialogue(self, trace: object) -> None:
        """Leave dialogue mode (called by the dialogue runner)."""
        self._rng = None

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        """A uniformly random (unmasked, if ``respect_mask``) action index."""
        if self.respect_mask:
            candidates = np.flatnonzero(mask)
            if candidates.size == 0:
                candidates = np.arange(len(mask))
        else:
            candidates = np.arange(len(mask) if len(mask) else self.n_actions)
        rng = self._rng
        if rng is None:
            rng = belief_generator(self.seed, belief)
        return int(candidates[int(rng.integers(candidates.size))])
