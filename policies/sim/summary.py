"""Summary actions: the small action set a dialogue policy learns over, their masks and master actions.

A policy in the simulated restaurant-search domain (PyDial's "Environment 1" shape) decides
on one of 16 *summary actions*; the runner maps the choice to a full (*master*) semantic
action with the belief state, the venue database and the dialogue history.

Index order (fixed: it is part of the GP-SARSA checkpoint format)
------------------------------------------------------------------
For the default domain (system-requestable slots ``area, food, pricerange``):

====  =====================  ==========================================================
 idx  summary action         master action
====  =====================  ==========================================================
  0   request_area           ``request(area)``
  1   request_food           ``request(food)``
  2   request_pricerange     ``request(pricerange)``
  3   confirm_area           ``confirm(area="top")``
  4   confirm_food           ``confirm(food="top")``
  5   confirm_pricerange     ``confirm(pricerange="top")``
  6   select_area            ``select(area="top",area="second")``
  7   select_food            ``select(food="top",food="second")``
  8   select_pricerange      ``select(pricerange="top",pricerange="second")``
  9   inform                 offer a venue matching the accepted values, or ``inform(name=none, ...)``
 10   inform_byname          ``inform(name="X", <requested slots>)`` about the venue under discussion
 11   inform_alternatives    offer a matching venue not offered before, or ``inform(name=none, name!=...)``
 12   bye                    ``bye()``
 13   repeat                 ``repeat()``
 14   reqmore                ``reqmore()``
 15   restart                ``restart()``
====  =====================  ==========================================================

A domain with other system-requestable slots gets ``request_s`` for each slot in ontology
order, then ``confirm_s``, then ``select_s``, then the seven actions from ``inform`` on, in
this order (``3·k + 7`` actions for ``k`` slots).

Accepted values
---------------
As PyDial's ``SummaryUtils.getTopBeliefs`` (``policy/SummaryUtils.py`` lines 169-191 of
helloric/pydial3 34988f4), only the system-requestable slots have accepted values (not
``name``), and a slot's most probable value — ``none`` included, which loses ties — is
*accepted* when it is not ``none`` and its probability exceeds ``1 / (n - 0.1)``, ``n`` the
number of the slot's ontology values (0.204 for area, 0.345 for pricerange): a value of 0.4
with ``P(none) = 0.6`` is not accepted. ``dontcare`` can be accepted; it constrains nothing.
Accepted values are ordered by probability; ties keep the ontology order (PyDial's order is
that of its ontology file: food, pricerange, area).

Masks (Environment 1)
---------------------
As PyDial's ``SummaryAction.getNonExecutable`` (``policy/SummaryAction.py`` lines 158-263 of
helloric/pydial3 34988f4) with its global summary (``SummaryUtils.globalSummary``, lines
79-117), which classifies the top method: ``byalternatives`` and ``byname`` as they are,
``finished`` and ``restart`` only with probability above 0.5, and *everything else* —
``byconstraints``, ``none``, an unsure ``finished`` — as ``byconstraints``.
``repeat`` and ``restart`` are always masked; ``request_s`` never; ``confirm_s`` needs a
non-zero top value; ``select_s`` non-zero top two values; ``inform`` needs the global method
``byconstraints`` (so also the method ``none``) and matching venues that can no longer be told
apart (fewer than two, or equal in every system-requestable slot without an accepted value);
``inform_byname`` needs method ``byname`` and a known venue (the top ``name`` value or the
last offered venue); ``bye`` needs P(method = finished) > 0.5; ``reqmore`` needs an earlier
offer. ``inform_alternatives`` needs an earlier offer and PyDial's *sticky*
``alternatives_requested`` flag (lines 109-110, 170-171, 199-203, 320): it is raised whenever
the global method is ``byalternatives`` and the top discourse act is not a sure ``thankyou``
or ``ack`` (:func:`asks_for_alternatives`), and lowered only when the system answers with
``inform_alternatives``; the belief carries it from earlier turns
(:attr:`~contexts.belief.BeliefState.alternatives_requested`, kept by the focus tracker).

An action chosen against its mask is still mapped as literally as possible (``confirm``
without a top value confirms ``none``): the simulation never fails on it, the simulated user
just reacts badly.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from policies.sim._database import DatabaseIndex
from simscore.acts import Act, Item, shared_act

if TYPE_CHECKING:
    from contexts.belief import BeliefState
    from contexts.domain import Domain, Ontology, Venue

__all__ = [
    "SUMMARY_ACTIONS",
    "GLOBAL_ACTIONS",
    "SummaryPolicy",
    "SummaryActions",
    "summary_action_names",
    "action_mask",
    "master_action",
    "acceptance_threshold",
    "global_method",
    "asks_for_alternatives",
    "belief_generator",
]

#: The summary actions that do not depend on a slot, in index order after the slot actions.
GLOBAL_ACTIONS: tuple[str, ...] = (
    "inform",
    "inform_byname",
    "inform_alternatives",
    "bye",
    "repeat",
    "reqmore",
    "restart",
)

#: How many accepted slots an offer mentions at most.
_MAX_OFFER_SLOTS = 5
#: How many summaries SummaryActions memoises by slots.
_MAX_SLOT_SUMMARIES = 1 << 13


def summary_action_names(system_requestable: Sequence[str]) -> tuple[str, ...]:
    """The summary action names for the given system-requestable slots, in index order.

    >>> summary_action_names(("area", "food"))[:6]
    ('request_area', 'request_food', 'confirm_area', 'confirm_food', 'select_area', 'select_food')
    """
    slots = tuple(system_requestable)
    return (
        tuple(f"request_{s}" for s in slots)
        + tuple(f"confirm_{s}" for s in slots)
        + tuple(f"select_{s}" for s in slots)
        + GLOBAL_ACTIONS
    )


#: The 16 summary actions of the default domain, in index order (part of the checkpoint format).
SUMMARY_ACTIONS: tuple[str, ...] = summary_action_names(("area", "food", "pricerange"))


def acceptance_threshold(n_values: int) -> float:
    """Probability a top value must exceed to be accepted: ``1 / (n_values - 0.1)``.

    >>> round(acceptance_threshold(5), 4), round(acceptance_threshold(3), 4)
    (0.2041, 0.3448)
    """
    if n_values < 1:
        raise ValueError(f"n_values must be at least 1, got {n_values}")
    return 1.0 / (n_values - 0.1)


def global_method(belief: BeliefState) -> str:
    """PyDial's global summary of the method (``SummaryUtils.globalSummary``, lines 97-106).

    The top method if it is ``byalternatives`` or ``byname``, or ``finished`` / ``restart``
    with probability above 0.5; otherwise ``byconstraints`` (also for the method ``none``).

    >>> from contexts.belief import BeliefState
    >>> global_method(BeliefState()), global_method(BeliefState(method={"finished": 0.5, "none": 0.5}))
    ('byconstraints', 'byconstraints')
    >>> global_method(BeliefState(method={"byname": 0.6, "finished": 0.4}))
    'byname'
    """
    top = belief.top_method()
    if top in ("byalternatives", "byname"):
        return top
    if top in ("finished", "restart") and belief.method[top] > 0.5:
        return top
    return "byconstraints"


def asks_for_alternatives(belief: BeliefState) -> bool:
    """Whether this turn raises PyDial's ``alternatives_requested`` flag (``SummaryAction.py`` lines 170-171).

    The global method is ``byalternatives`` and the top discourse act is not ``thankyou`` or
    ``ack`` with probability above 0.5.

    >>> from contexts.belief import BeliefState
    >>> asks_for_alternatives(BeliefState(method={"byalternatives": 1.0}))
    True
    >>> asks_for_alternatives(BeliefState(method={"byalternatives": 1.0}, discourse_act={"thankyou": 1.0}))
    False
    """
    if global_method(belief) != "byalternatives":
        return False
    act = belief.top_discourse_act()
    return not (act in ("thankyou", "ack") and belief.discourse_act[act] > 0.5)


def belief_generator(seed: int, belief: BeliefState) -> np.random.Generator:
    """A generator that is a function of ``seed`` and ``belief``: how a seeded policy draws on a context.

    Responses on contexts must be deterministic (same context, same response), so outside a
    simulated dialogue a random choice is drawn from this generator (CRC-32 of the belief's
    canonical key, mixed with the seed).

    >>> from contexts.belief import BeliefState
    >>> b = BeliefState(slots={"food": {"thai": 1.0}})
    >>> int(belief_generator(1, b).integers(1000)) == int(belief_generator(1, b).integers(1000))
    True
    """
    digest = zlib.crc32(repr(belief.key()).encode("utf-8"))
    return np.random.default_rng([seed, digest])


@runtime_checkable
class SummaryPolicy(Protocol):
    """A policy that decides on a summary action from a belief state.

    ``choose`` gets the belief and the boolean action mask (``True`` = allowed, length = the
    number of summary actions) and returns a summary action index. It computes whatever it
    needs from the belief itself (a GP-SARSA policy calls
    :func:`policies.sim.features.belief_features`): the runner never computes features a policy
    does not use, which keeps the handcrafted policy fast.

    Optional hooks the dialogue runner calls when present:

    * ``begin_dialogue(rng: numpy.random.Generator) -> None`` before each simulated dialogue,
      with a generator derived from that dialogue's seed (stochastic policies draw from it,
      so dialogue ``i`` is the same whatever else was run);
    * ``end_dialogue(trace: policies.sim.simulation.DialogueTrace) -> None`` after it, with every
      decision (belief, mask, action) and the outcome (learning policies learn here).
      ``trace.beliefs[k]`` is the very object the runner passed to the dialogue's ``k``-th
      ``choose`` call, so a policy may keep what it computed for a decision and find it again
      by identity (the GP-SARSA policy keeps its features and evaluations so).
    """

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        """The summary action index for ``belief`` (respecting ``mask`` is the policy's job)."""
        ...


class Summary:
    """What the masks, master actions and database features need from one belief, computed once
    (:meth:`SummaryActions.summarise`): per slot the top two values, the accepted values, the
    top method, the database constraints and matches."""

    __slots__ = ("belief", "tops", "accepted", "method", "global_method", "constraints", "match_mask",
                 "informable_ok")

    def __init__(self, belief: BeliefState, space: SummaryActions) -> None:
        self.belief = belief
        tops: dict[str, tuple[str, float, str, float]] = {}
        accepted: list[tuple[str, str, float]] = []
        slots = belief.slots
        accepting = space._accepting
        for slot, threshold in space._thresholds.items():
            best, best_p, second, second_p = "none", 0.0, "none", 0.0
            dist = slots.get(slot)
            if dist is not None:
                for value, p in dist.items():
                    if value == "none" or p <= 0.0:
                        continue
                    if p > best_p:
                        second, second_p = best, best_p
                        best, best_p = value, p
                    elif p > second_p:
                        second, second_p = value, p
            tops[slot] = (best, best_p, second, second_p)
            if best != "none" and best_p > threshold and slot in accepting and best_p >= _none(dist):
                accepted.append((slot, best, best_p))
        if len(accepted) > 1:
            accepted.sort(key=_negative_probability)  # stable: ties keep ontology order
        self.tops = tops
        self.accepted = accepted
        self.method = belief.top_method()
        self.global_method = global_method(belief)
        self.constraints = [(slot, value) for slot, value, _ in accepted if value != "dontcare"]
        self.match_mask = space.index.mask(self.constraints)
        constrained = {slot for slot, _, _ in accepted}
        self.informable_ok = not space.index.discriminable(
            self.match_mask, [s for s in space.system_requestable if s not in constrained]
        )

    def for_belief(self, belief: BeliefState) -> Summary:
        """The summary of ``belief``, whose slots are this one's (the same object): only the method is new."""
        out = Summary.__new__(Summary)
        out.belief = belief
        out.tops = self.tops
        out.accepted = self.accepted
        out.method = belief.top_method()
        out.global_method = global_method(belief)
        out.constraints = self.constraints
        out.match_mask = self.match_mask
        out.informable_ok = self.informable_ok
        return out


def _negative_probability(item: tuple[str, str, float]) -> float:
    return -item[2]


def _none(dist: Mapping[str, float] | None) -> float:
    """P(none) of a slot distribution (an absent slot: 1)."""
    return 1.0 if dist is None else dist.get("none", 0.0)


class SummaryActions:
    """The summary actions of one domain: names, masks and the mapping to master actions.

    Parameters
    ----------
    domain : contexts.domain.Domain
        Ontology and venue database.
    index : DatabaseIndex, optional
        The domain's venue index, if one is at hand (:attr:`policies.sim.domain_cache.DomainCache.index`);
        default: built here.

    Notes
    -----
    :meth:`summarise` remembers the summary of the last belief and, by slots, up to 8,192
    others (a belief's summary depends on its slots and method only, and the tracker shares
    equal slots mappings); the memory belongs to this object and never changes a result. The
    dialogue runner, a policy's features and its masks share one object per domain
    (:func:`policies.sim.domain_cache.domain_cache`), so one belief is summarised once.

    Examples
    --------
    >>> from contexts.domain import default_domain
    >>> from contexts.belief import BeliefState
    >>> space = SummaryActions(default_domain())
    >>> space.names == SUMMARY_ACTIONS, space.index_of("inform")
    (True, 9)
    >>> b = BeliefState(slots={"food": {"afghan": 1.0}}, method={"byconstraints": 1.0})
    >>> [space.names[i] for i in np.flatnonzero(space.mask(b))]  # doctest: +NORMALIZE_WHITESPACE
    ['request_area', 'request_food', 'request_pricerange', 'confirm_food', 'inform']
    >>> str(space.master_action("inform", b))
    'inform(food=afghan,name=none)'
    """

    def __init__(self, domain: Domain, *, index: DatabaseIndex | None = None) -> None:
        ontology = domain.ontology
        self.domain = domain
        self.ontology: Ontology = ontology
        self.index: DatabaseIndex = index if index is not None else DatabaseIndex(domain)
        self.system_requestable: tuple[str, ...] = tuple(ontology.system_requestable)
        self.names: tuple[str, ...] = summary_action_names(self.system_requestable)
        self._positions = {name: i for i, name in enumerate(self.names)}
        self._thresholds = {
            slot: acceptance_threshold(len(values)) for slot, values in ontology.informable.items()
        }
        self._accepting = frozenset(self.system_requestable)
        k = len(self.system_requestable)
        self.n_slot_actions = 3 * k
        base = 3 * k
        self.INFORM = base
        self.INFORM_BYNAME = base + 1
        self.INFORM_ALTERNATIVES = base + 2
        self.BYE = base + 3
        self.REPEAT = base + 4
        self.REQMORE = base + 5
        self.RESTART = base + 6
        self._requested_order = tuple(s for s in ontology.requestable if s != "name")
        self._cache: Summary | None = None
        self._by_slots: dict[Mapping[str, Mapping[str, float]], Summary] = {}
        # Acts without arguments are immutable: build them once.
        self._fixed = {
            self.BYE: Act("bye"),
            self.REPEAT: Act("repeat"),
            self.REQMORE: Act("reqmore"),
            self.RESTART: Act("restart"),
        }
        self._requests = [Act("request", [Item(s)]) for s in self.system_requestable]

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"SummaryActions(domain={self.domain.name!r}, n={len(self.names)})"

    def index_of(self, action: int | str) -> int:
        """The index of a summary action given by name or index (validated)."""
        if isinstance(action, str):
            try:
                return self._positions[action]
            except KeyError:
                raise ValueError(
                    f"unknown summary action {action!r} (known: {', '.join(self.names)})"
                ) from None
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            index = int(action)
            if 0 <= index < len(self.names):
                return index
        raise ValueError(f"action must be a summary action name or an index in [0, {len(self.names)}), got {action!r}")

    def summarise(self, belief: BeliefState) -> Summary:
        """Top values, accepted values and database matches of ``belief``.

        Cached for the last belief; all but the method depend on the slots alone, so they are
        also memoised by slots (the tracker shares equal slots mappings; at most
        ``_MAX_SLOT_SUMMARIES`` are kept).
        """
        cached = self._cache
        if cached is not None:
            if cached.belief is belief:
                return cached
            if cached.belief.slots is belief.slots:  # the tracker kept the slots: so do the tops
                summary = cached.for_belief(belief)
                self._cache = summary
                return summary
        by_slots = self._by_slots
        known = by_slots.get(belief.slots)
        if known is not None:
            summary = known.for_belief(belief)
        else:
            summary = Summary(belief, self)
            if len(by_slots) < _MAX_SLOT_SUMMARIES:
                by_slots[belief.slots] = summary
        self._cache = summary
        return summary

    def accepted(self, belief: BeliefState) -> list[tuple[str, str, float]]:
        """Accepted ``(slot, value, probability)`` triples, most probable first (ties: ontology order).

        >>> from contexts.domain import default_domain
        >>> from contexts.belief import BeliefState
        >>> b = BeliefState(slots={"area": {"north": 0.2}, "pricerange": {"cheap": 0.9}})
        >>> SummaryActions(default_domain()).accepted(b)
        [('pricerange', 'cheap', 0.9)]
        """
        return list(self.summarise(belief).accepted)

    def mask(self, belief: BeliefState) -> np.ndarray:
        """The Environment-1 action mask of ``belief``: bool array, True = allowed."""
        s = self.summarise(belief)
        tops = s.tops
        confirm = []
        select = []
        for slot in self.system_requestable:
            top = tops[slot]
            confirm.append(top[1] > 0.0)
            select.append(top[1] > 0.0 and top[3] > 0.0)
        method = s.global_method
        offered = belief.offer_happened
        known_venue = belief.last_offered is not None or tops.get("name", ("none",))[0] not in ("none", "dontcare")
        allowed = (
            [True] * len(self.system_requestable)
            + confirm
            + select
            + [
                method == "byconstraints" and s.informable_ok,
                method == "byname" and known_venue,
                offered and (belief.alternatives_requested or asks_for_alternatives(belief)),
                method == "finished",
                False,
                offered,
                False,
            ]
        )
        return np.array(allowed, dtype=bool)

    def master_action(
        self,
        action: int | str,
        belief: BeliefState,
        *,
        offered: Sequence[str] | None = None,
        rng: np.random.Generator | int | None = None,
    ) -> Act:
        """Map a summary action to a master :class:`~simscore.acts.Act`.

        Parameters
        ----------
        action : int or str
            Summary action index or name.
        belief : contexts.belief.BeliefState
            The belief the action was chosen on.
        offered : sequence of str, optional
            Names of the venues offered since the system last said that no venue matches (for
            ``inform_alternatives``); default: the belief's ``offered_since_no_venue``.
        rng : numpy.random.Generator or int, optional
            Where ``inform_byname`` draws the slot it adds when the user requested nothing
            (PyDial adds a random requestable slot; see :meth:`_inform_byname`): a generator
            (a simulated dialogue's), or a seed (a policy's), then the slot is a function of
            the seed and the belief (:func:`belief_generator`); default seed 0.

        Returns
        -------
        simscore.Act
        """
        if type(action) is int and 0 <= action < len(self.names):
            index = action
        else:
            index = self.index_of(action)
        fixed = self._fixed.get(index)
        if fixed is not None:
            return fixed
        k = len(self.system_requestable)
        if index < k:
            return self._requests[index]
        s = self.summarise(belief)
        if index < 2 * k:
            slot = self.system_requestable[index - k]
            return shared_act("confirm", ((slot, "=", s.tops[slot][0]),))
        if index < 3 * k:
            slot = self.system_requestable[index - 2 * k]
            top = s.tops[slot]
            return shared_act("select", ((slot, "=", top[0]), (slot, "=", top[2])))
        if index == self.INFORM:
            venue = None
            mask = s.match_mask
            if mask:
                last = belief.last_offered
                venue = self.index.venue(last) if last is not None and self.index.contains(mask, last) else None
                if venue is None:
                    venue = self.index.first(mask)
            return self._offer(venue, s)
        if index == self.INFORM_BYNAME:
            return self._inform_byname(belief, s, rng)
        # inform_alternatives
        if offered is None:
            offered = belief.offered_since_no_venue
        matches = s.match_mask
        if not matches:
            return self._offer(None, s)
        others = self.index.mask(s.constraints, offered)
        if others:
            return self._offer(self.index.first(others), s)
        # every match was offered already: say so, naming them all (PyDial's "no other venue")
        items = [Item("name", "=", "none")]
        items.extend(Item(slot, "=", value) for slot, value, _ in s.accepted if slot != "name")
        items.extend(Item("name", "!=", venue.name) for venue in self.index.matches(matches))
        return Act("inform", items)

    def _offer(self, venue: Venue | None, s: Summary) -> Act:
        if venue is None:
            items = [("name", "=", "none")]
            items.extend((slot, "=", value) for slot, value in s.constraints if slot != "name")
            return shared_act("inform", tuple(items))
        items = [("name", "=", venue.name)]
        shown = 0
        for slot, _, _ in s.accepted:
            if slot == "name" or shown >= _MAX_OFFER_SLOTS:
                continue
            value = venue.get(slot)
            if value is not None:
                items.append((slot, "=", value))
                shown += 1
        return shared_act("inform", tuple(items))

    def _inform_byname(self, belief: BeliefState, s: Summary, rng: np.random.Generator | int | None) -> Act:
        """The venue under discussion with the requested slots' values (``SummaryUtils.getInformRequestedSlots``).

        When the user requested no slot at all (none above 0.5, ``name`` included), PyDial
        adds one requestable slot other than ``name`` drawn uniformly with its global random
        generator (``SummaryUtils._getInformRequestedSlotsForEntity``, lines 350-365; its
        CamRestaurants venues have no ``type``, so that branch is taken): here drawn from
        ``rng``.
        """
        name_top = s.tops.get("name", ("none", 0.0, "none", 0.0))
        name = name_top[0] if name_top[0] not in ("none", "dontcare") else belief.last_offered
        if name is None:
            return shared_act("inform", (("name", "=", "none"),))
        venue = self.index.venue(name)
        items = [("name", "=", name)]
        if venue is not None:
            requested = belief.requested
            if not any(p > 0.5 for p in requested.values()):
                generator = rng if isinstance(rng, np.random.Generator) else belief_generator(rng or 0, belief)
                slots = self._requested_order
                slot = slots[int(generator.integers(len(slots)))]
                value = venue.get(slot)
                if value is not None:
                    items.append((slot, "=", value))
            for slot in self._requested_order:
                if requested.get(slot, 0.0) > 0.5:
                    value = venue.get(slot)
                    if value is not None:
                        items.append((slot, "=", value))
        return shared_act("inform", tuple(items))


def action_mask(belief: BeliefState, domain: Domain) -> np.ndarray:
    """The Environment-1 mask of ``belief`` in ``domain`` (see :meth:`SummaryActions.mask`; for
    many beliefs, hold a :class:`SummaryActions`).

    >>> from contexts.domain import default_domain
    >>> from contexts.belief import BeliefState
    >>> action_mask(BeliefState.initial(default_domain().ontology), default_domain()).astype(int)
    array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    """
    return SummaryActions(domain).mask(belief)


def master_action(
    action: int | str,
    belief: BeliefState,
    domain: Domain,
    *,
    offered: Sequence[str] | None = None,
    rng: np.random.Generator | int | None = None,
) -> Act:
    """Map a summary action to a master act (see :meth:`SummaryActions.master_action`; for many
    beliefs, hold a :class:`SummaryActions`).

    >>> from contexts.domain import default_domain
    >>> from contexts.belief import BeliefState
    >>> b = BeliefState(slots={"area": {"north": 0.6, "south": 0.3}})
    >>> str(master_action("select_area", b, default_domain()))
    'select(area=north,area=south)'
    """
    return SummaryActions(domain).master_action(action, belief, offered=offered, rng=rng)
