"""Belief states: what a dialogue policy knows when it has to decide.

A :class:`BeliefState` holds, per informable slot, a probability distribution over the slot's
values (ontology values plus ``"dontcare"`` and ``"none"``), the distribution over the
user's *method* and over the *discourse act*, the probability that each requestable slot
was requested, and the history policies need: the last offered venue, whether an offer
happened in the dialogue, whether the system's last act offered a venue, whether it said that
no venue matches, the venues offered since it last said so (PyDial's ``features``), and
whether the user's request for alternatives is still unanswered (PyDial's summary-action
flag).
:meth:`BeliefState.from_pydial` reads PyDial's belief dicts (its focus tracker's output).

Canonical form
--------------
Beliefs are validated once, when built, and stored canonically so that equal beliefs
compare (and hash, and serialise) equal:

* slot distributions keep only values with non-zero probability, plus ``"none"``, which
  is always present (given, or the implied remainder ``1 - sum(others)``);
* ``method`` and ``discourse_act`` hold every value of :data:`~contexts.domain.METHODS` /
  :data:`~contexts.domain.DISCOURSE_ACTS` (omitted ones are 0), in that order;
* ``requested`` keeps only non-zero probabilities (read it with ``.get(slot, 0.0)``);
* order: slots ``area, pricerange, food, name`` then any others alphabetically; values in
  the default ontology's order (other values alphabetically), then ``dontcare``, ``none``;
  requestable slots in the default ontology's order, others alphabetically.

A distribution sums to 1 within ``TOLERANCE`` (1e-6). The canonical parts are built, and
recognised by their types, in the private ``contexts._belief``, which
:class:`~contexts.belief_canonical.BeliefCanonicaliser` shares.

Examples
--------
>>> b = BeliefState(slots={"area": {"north": 0.8}}, method={"byconstraints": 1.0})
>>> dict(b.slots["area"])
{'north': 0.8, 'none': 0.19999999999999996}
>>> b.top("area"), b.top("food"), b.top_method()
(('north', 0.8), ('none', 0.0), 'byconstraints')
>>> BeliefState.from_json(b.to_json()) == b
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from contexts._belief import (
    _DEFAULT_DISCOURSE,
    _DEFAULT_METHOD,
    _DISCOURSE_SET,
    _EMPTY,
    _JSON_KEYS,
    _METHOD_SET,
    _NO_REQUESTS,
    TOLERANCE,
    _DiscourseDist,
    _Distribution,
    _flag,
    _full_distribution,
    _is_mapping,
    _MethodDist,
    _name,
    _names,
    _probability,
    _Requested,
    _requested_mapping,
    _Slots,
    _slots_mapping,
    _value_sets,
)
from contexts.domain import DISCOURSE_ACTS, METHODS, Ontology
from simscore.errors import InvalidContextError

__all__ = ["BeliefState", "TOLERANCE"]


@dataclass(frozen=True)
class BeliefState:
    """A belief state at the system's decision time (validated and stored canonically).

    Parameters
    ----------
    slots : mapping of str to mapping of str to float
        Informable slot -> {value: probability}; values are ontology values, ``"dontcare"``
        and ``"none"``. ``"none"`` may be omitted: it is the implied remainder (then the
        others may sum to at most 1 + 1e-6); if given, the whole distribution must sum to 1
        within 1e-6. A slot that is absent has all its mass on ``"none"``.
    method : mapping of str to float, default {"none": 1.0}
        Distribution over :data:`~contexts.domain.METHODS`; omitted values are 0; sums to 1.
    discourse_act : mapping of str to float, default {"none": 1.0}
        Distribution over :data:`~contexts.domain.DISCOURSE_ACTS`; as ``method``.
    requested : mapping of str to float, default {}
        Requestable slot -> probability that the user requested it (independent; omitted = 0).
    last_offered : str or None
        Name of the last venue the system offered (PyDial's ``lastInformedVenue``).
    offer_happened : bool
        Whether the system has offered a venue in this dialogue.
    last_informed_no_venue : bool
        Whether the system's last action said that no venue matches (PyDial's
        ``lastActionInformNone``).
    last_act_offered : bool
        Whether the system's last action offered a venue (PyDial's ``offerHappened``).
    offered_since_no_venue : tuple of str
        The venues the system offered since it last said that no venue matches, in order
        (PyDial's ``informedVenueSinceNone``; a list is taken as a tuple).
    alternatives_requested : bool
        Whether the user asked for alternatives at an earlier decision and the system has not
        answered with ``inform_alternatives`` since (PyDial keeps this flag in its summary-action
        mapper, ``SummaryAction.alternatives_requested``; the action mask also raises it for the
        current turn, see :mod:`policies.sim.summary`).

    Raises
    ------
    InvalidContextError
        A probability that is not a finite number in [0, 1], a distribution that does not
        sum to 1, an unknown method or discourse-act value — the message names the slot and
        value. Slot and value names are checked against an ontology by :meth:`validate`.

    Notes
    -----
    Parts already in canonical form — the fields of another belief state, or what a
    :class:`~contexts.belief_canonical.BeliefCanonicaliser` returns — are recognised by their type and stored as they are
    (they were validated when they were made): a belief tracker builds its beliefs from them.

    Examples
    --------
    >>> BeliefState(slots={"food": {"thai": 0.5, "none": 0.6}})
    Traceback (most recent call last):
    ...
    simscore.errors.InvalidContextError: slot 'food': probabilities (with 'none') sum to 1.1, expected 1 (tolerance 1e-06)
    >>> BeliefState(slots={"area": {"north": float("nan")}})
    Traceback (most recent call last):
    ...
    simscore.errors.InvalidContextError: slot 'area' value 'north': probability is NaN
    """

    slots: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    method: Mapping[str, float] = _DEFAULT_METHOD
    discourse_act: Mapping[str, float] = _DEFAULT_DISCOURSE
    requested: Mapping[str, float] = field(default_factory=dict)
    last_offered: str | None = None
    offer_happened: bool = False
    last_informed_no_venue: bool = False
    last_act_offered: bool = False
    offered_since_no_venue: tuple[str, ...] = ()
    alternatives_requested: bool = False

    def __post_init__(self) -> None:
        slots = self.slots
        setattr_ = object.__setattr__
        if type(slots) is not _Slots:
            if not _is_mapping(slots):
                raise InvalidContextError(
                    f"slots: expected a mapping of slot -> distribution, got {type(slots).__name__}"
                )
            setattr_(self, "slots", _slots_mapping(slots))
        if self.method is not _DEFAULT_METHOD:
            setattr_(self, "method", _full_distribution(self.method, "method", METHODS, _METHOD_SET, _MethodDist))
        if self.discourse_act is not _DEFAULT_DISCOURSE:
            setattr_(
                self,
                "discourse_act",
                _full_distribution(
                    self.discourse_act, "discourse_act", DISCOURSE_ACTS, _DISCOURSE_SET, _DiscourseDist
                ),
            )
        requested = self.requested
        if type(requested) is not _Requested:
            setattr_(self, "requested", _requested_mapping(requested))
        if self.last_offered is not None:
            _name(self.last_offered, "last_offered")
        setattr_(self, "offer_happened", _flag(self.offer_happened, "offer_happened"))
        setattr_(self, "last_informed_no_venue", _flag(self.last_informed_no_venue, "last_informed_no_venue"))
        setattr_(self, "last_act_offered", _flag(self.last_act_offered, "last_act_offered"))
        setattr_(self, "offered_since_no_venue", _names(self.offered_since_no_venue, "offered_since_no_venue"))
        setattr_(self, "alternatives_requested", _flag(self.alternatives_requested, "alternatives_requested"))

    # -- construction ------------------------------------------------------------------

    @classmethod
    def initial(cls, ontology: Ontology) -> BeliefState:
        """The belief at turn 0: all slot mass on none, method and discourse act none.

        >>> from contexts.domain import default_domain
        >>> b = BeliefState.initial(default_domain().ontology)
        >>> list(b.slots), dict(b.slots["food"]), b.top_method(), dict(b.requested)
        (['area', 'pricerange', 'food', 'name'], {'none': 1.0}, 'none', {})
        """
        return cls(slots={slot: {"none": 1.0} for slot in ontology.informable})

    # -- queries -----------------------------------------------------------------------

    def prob(self, slot: str, value: str) -> float:
        """P(slot = value); 0 for values not stored, and P(none) = 1 for an absent slot.

        >>> BeliefState(slots={"area": {"north": 0.25}}).prob("area", "north")
        0.25
        """
        dist = self.slots.get(slot)
        if dist is None:
            return 1.0 if value == "none" else 0.0
        return dist.get(value, 0.0)

    def top(self, slot: str) -> tuple[str, float]:
        """The most probable value of ``slot`` other than ``"none"`` and its probability.

        Ties go to the value earlier in canonical (ontology) order; ``("none", 0.0)`` if
        all mass is on none or the slot is absent.

        >>> BeliefState(slots={"area": {"north": 0.3, "centre": 0.3}}).top("area")
        ('centre', 0.3)
        """
        best = "none"
        best_p = 0.0
        for value, p in self.slots.get(slot, _EMPTY).items():
            if p > best_p and value != "none":
                best, best_p = value, p
        return best, best_p

    def top_two(self, slot: str) -> tuple[tuple[str, float], tuple[str, float]]:
        """The two most probable values other than ``"none"`` (padded with ``("none", 0.0)``).

        >>> BeliefState(slots={"food": {"thai": 0.2, "indian": 0.5}}).top_two("food")
        (('indian', 0.5), ('thai', 0.2))
        """
        ranked = sorted(
            ((v, p) for v, p in self.slots.get(slot, _EMPTY).items() if v != "none" and p > 0.0),
            key=lambda item: -item[1],
        )
        ranked += [("none", 0.0)] * (2 - len(ranked))
        return ranked[0], ranked[1]

    def top_method(self) -> str:
        """The most probable method (ties: order of :data:`~contexts.domain.METHODS`)."""
        return cast(_Distribution, self.method).top  # __post_init__ made it one

    def top_discourse_act(self) -> str:
        """The most probable discourse act (ties: order of :data:`~contexts.domain.DISCOURSE_ACTS`)."""
        return cast(_Distribution, self.discourse_act).top

    # -- checks and identity -----------------------------------------------------------

    def validate(self, ontology: Ontology) -> None:
        """Check slot, value and requestable names (and ``last_offered``) against ``ontology``.

        Raises
        ------
        InvalidContextError
            Naming the unknown slot or value.

        Examples
        --------
        >>> from contexts.domain import default_domain
        >>> BeliefState(slots={"colour": {"red": 1.0}}).validate(default_domain().ontology)
        Traceback (most recent call last):
        ...
        simscore.errors.InvalidContextError: unknown informable slot 'colour' (known: area, pricerange, food, name)
        """
        sets = _value_sets(ontology)
        for slot, dist in self.slots.items():
            allowed = sets.get(slot)
            if allowed is None:
                raise InvalidContextError(
                    f"unknown informable slot {slot!r} (known: {', '.join(ontology.informable)})"
                )
            for value in dist:
                if value not in allowed:
                    raise InvalidContextError(f"slot {slot!r}: unknown value {value!r}")
        requestable = sets[None]
        for slot in self.requested:
            if slot not in requestable:
                raise InvalidContextError(
                    f"unknown requestable slot {slot!r} (known: {', '.join(ontology.requestable)})"
                )
        names = sets.get("name")
        if self.last_offered is not None and names is not None and self.last_offered not in names:
            raise InvalidContextError(f"last_offered {self.last_offered!r} is not a venue name of the ontology")
        for venue in self.offered_since_no_venue:
            if names is not None and venue not in names:
                raise InvalidContextError(f"offered_since_no_venue: {venue!r} is not a venue name of the ontology")

    def key(self) -> tuple[Any, ...]:
        """A hashable canonical form: equal for equal beliefs (used to de-duplicate).

        >>> BeliefState(slots={"area": {"north": 1.0}}).key() == BeliefState(
        ...     slots={"area": {"none": 0.0, "north": 1.0}}, requested={"phone": 0.0}).key()
        True
        """
        return (
            tuple((slot, tuple(dist.items())) for slot, dist in self.slots.items()),
            tuple(self.method.values()),
            tuple(self.discourse_act.values()),
            tuple(self.requested.items()),
            self.last_offered,
            self.offer_happened,
            self.last_informed_no_venue,
            self.last_act_offered,
            self.offered_since_no_venue,
            self.alternatives_requested,
        )

    # -- JSON --------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (method and discourse-act values of probability 0 left out).

        >>> BeliefState(slots={"area": {"north": 1.0}}).to_json()  # doctest: +NORMALIZE_WHITESPACE
        {'slots': {'area': {'north': 1.0, 'none': 0.0}}, 'method': {'none': 1.0},
         'discourse_act': {'none': 1.0}, 'requested': {}, 'last_offered': None,
         'offer_happened': False, 'last_informed_no_venue': False, 'last_act_offered': False,
         'offered_since_no_venue': [], 'alternatives_requested': False}
        """
        return {
            "slots": {slot: dict(dist) for slot, dist in self.slots.items()},
            "method": {k: p for k, p in self.method.items() if p},
            "discourse_act": {k: p for k, p in self.discourse_act.items() if p},
            "requested": dict(self.requested),
            "last_offered": self.last_offered,
            "offer_happened": self.offer_happened,
            "last_informed_no_venue": self.last_informed_no_venue,
            "last_act_offered": self.last_act_offered,
            "offered_since_no_venue": list(self.offered_since_no_venue),
            "alternatives_requested": self.alternatives_requested,
        }

    @classmethod
    def from_json(cls, obj: Any, ontology: Ontology | None = None) -> BeliefState:
        """Rebuild a belief from :meth:`to_json` output; validate against ``ontology`` if given.

        ``slots`` is required; the other keys default as in the constructor (files written
        before ``last_act_offered``, ``offered_since_no_venue`` and ``alternatives_requested``
        existed read with no such history). Unknown keys are an error naming them.
        """
        if not _is_mapping(obj):
            raise InvalidContextError(f"a belief state must be a JSON object, got {type(obj).__name__}")
        if not _JSON_KEYS.issuperset(obj):
            unknown = sorted(set(obj) - _JSON_KEYS)
            raise InvalidContextError(f"belief state has unknown field(s) {', '.join(map(repr, unknown))}")
        if "slots" not in obj:
            raise InvalidContextError("belief state lacks the field 'slots'")
        belief = cls(
            slots=obj["slots"],
            method=obj.get("method", _DEFAULT_METHOD),
            discourse_act=obj.get("discourse_act", _DEFAULT_DISCOURSE),
            requested=obj.get("requested", _NO_REQUESTS),
            last_offered=obj.get("last_offered"),
            offer_happened=obj.get("offer_happened", False),
            last_informed_no_venue=obj.get("last_informed_no_venue", False),
            last_act_offered=obj.get("last_act_offered", False),
            offered_since_no_venue=obj.get("offered_since_no_venue", ()),
            alternatives_requested=obj.get("alternatives_requested", False),
        )
        if ontology is not None:
            belief.validate(ontology)
        return belief


    @classmethod
    def from_pydial(
        cls, belief: Any, ontology: Ontology | None = None, *, skip_unknown_values: bool = False
    ) -> BeliefState:
        """A belief state from PyDial's belief dict (its focus tracker's output).

        ``belief`` is either PyDial's whole belief (``{"beliefs": {...}, "features": {...},
        "userActs": [...]}``) or only its ``beliefs`` dict. The mapping:

        * every key of ``beliefs`` other than ``method``, ``discourseAct`` and ``requested``
          is an informable slot: ``{value: probability}`` over the ontology's values, with
          ``"**NONE**"`` (or ``"none"``, not both) -> ``"none"`` and ``"dontcare"`` kept;
          values of probability 0 are dropped, as in every belief;
        * ``method`` -> :attr:`method`, ``discourseAct`` -> :attr:`discourse_act` (the same
          value names; PyDial's tracker may also use ``bye``, which simscore has too),
          ``requested`` -> :attr:`requested` (PyDial's integer 1 is fine);
        * ``features["lastInformedVenue"]`` -> :attr:`last_offered` (``""`` -> None);
        * ``features["lastActionInformNone"]`` -> :attr:`last_informed_no_venue` (both mean
          the system's last act said that no venue matches);
        * ``features["offerHappened"]`` -> :attr:`last_act_offered` (both mean the system's
          *last* act offered a venue);
        * ``features["informedVenueSinceNone"]`` -> :attr:`offered_since_no_venue`;
        * :attr:`offer_happened` (an offer happened in the dialogue) is true if
          ``offerHappened`` is or if ``lastInformedVenue`` names a venue (PyDial keeps it
          until the dialogue ends).

        :attr:`alternatives_requested` stays False: PyDial keeps that flag in its policy, not
        in the belief. Not mapped: ``features["inform_info"]`` (simscore's policies derive the database
        flags from the belief and their own database), and ``userActs`` (not a part of the belief;
        :func:`contexts.pydial.import_pydial` keeps them in the context metadata).
        PyDial lower-cases values; they are taken as they are.

        Parameters
        ----------
        belief : mapping
            PyDial's belief dict, or its ``beliefs`` dict.
        ontology : Ontology, optional
            If given, slot, value, requestable and venue names are checked against it.
        skip_unknown_values : bool, default False
            With an ontology: move the probability of an unknown value to ``"none"``, drop
            unknown slots and requested slots, and forget an unknown last venue, instead of
            raising.

        Raises
        ------
        InvalidContextError
            Naming the slot and value at fault (and suggesting ``skip_unknown_values``).

        Examples
        --------
        >>> pydial = {
        ...     "beliefs": {
        ...         "area": {"centre": 0.9, "north": 0.0, "dontcare": 0.0, "**NONE**": 0.1},
        ...         "food": {"thai": 1.0, "chinese": 0.0, "**NONE**": 0.0},
        ...         "method": {"none": 0.0, "byconstraints": 1.0},
        ...         "discourseAct": {"none": 1.0},
        ...         "requested": {"phone": 1, "addr": 0.0}},
        ...     "features": {"lastInformedVenue": "", "offerHappened": False, "lastActionInformNone": False,
        ...                  "informedVenueSinceNone": [], "inform_info": [False] * 25},
        ...     "userActs": [["inform(food=thai,area=centre)", 0.9]]}
        >>> b = BeliefState.from_pydial(pydial)
        >>> dict(b.slots["area"]), b.top("food"), b.top_method(), dict(b.requested)
        ({'centre': 0.9, 'none': 0.1}, ('thai', 1.0), 'byconstraints', {'phone': 1.0})
        >>> b.offer_happened, b.last_offered
        (False, None)
        """
        return _belief_from_pydial(cls, belief, ontology, skip_unknown_values=skip_unknown_values)



def _belief_from_pydial(
    cls: type[BeliefState], belief: Any, ontology: Ontology | None = None, *, skip_unknown_values: bool = False
) -> BeliefState:
    """:meth:`BeliefState.from_pydial` (``cls``: the class it is called on)."""
    if not _is_mapping(belief):
        raise InvalidContextError(f"a PyDial belief must be a mapping, got {type(belief).__name__}")
    if "beliefs" in belief:
        beliefs, features = belief["beliefs"], belief.get("features", {})
    else:
        beliefs, features = belief, {}
    if not _is_mapping(beliefs):
        raise InvalidContextError(f"PyDial 'beliefs' must be a mapping, got {type(beliefs).__name__}")
    if not _is_mapping(features):
        raise InvalidContextError(f"PyDial 'features' must be a mapping, got {type(features).__name__}")
    sets = None if ontology is None else _value_sets(ontology)
    hint = " (pass skip_unknown_values=True to leave it out, or the ontology the beliefs belong to)"
    slots: dict[str, dict[str, Any]] = {}
    for slot, dist in beliefs.items():
        if slot in _PYDIAL_NON_SLOTS:
            continue
        if sets is not None and slot not in sets:
            if skip_unknown_values:
                continue
            raise InvalidContextError(f"unknown informable slot {slot!r}{hint}")
        slots[slot] = _pydial_distribution(slot, dist, None if sets is None else sets[slot], skip_unknown_values)
    requested = beliefs.get("requested", {})
    if not _is_mapping(requested):
        raise InvalidContextError(f"PyDial 'requested' must be a mapping, got {type(requested).__name__}")
    if sets is not None:
        unknown = [slot for slot, p in requested.items() if slot not in sets[None] and p]
        if unknown and not skip_unknown_values:
            raise InvalidContextError(f"unknown requestable slot {unknown[0]!r}{hint}")
        requested = {slot: p for slot, p in requested.items() if slot in sets[None]}
    venue = features.get("lastInformedVenue", "")
    if venue is None:
        venue = ""
    if not isinstance(venue, str):
        raise InvalidContextError(f"PyDial feature 'lastInformedVenue' must be a string, got {venue!r}")
    names = None if sets is None else sets.get("name")
    if venue and names is not None and venue not in names:
        if not skip_unknown_values:
            raise InvalidContextError(f"lastInformedVenue {venue!r} is not a venue name of the ontology{hint}")
        venue_known = None
    else:
        venue_known = venue or None
    since_none = features.get("informedVenueSinceNone", [])
    if not isinstance(since_none, (list, tuple)) or not all(isinstance(v, str) for v in since_none):
        raise InvalidContextError(f"PyDial feature 'informedVenueSinceNone' must be a list of names, got {since_none!r}")
    if names is not None:
        unknown = [v for v in since_none if v not in names]
        if unknown and not skip_unknown_values:
            raise InvalidContextError(
                f"informedVenueSinceNone: {unknown[0]!r} is not a venue name of the ontology{hint}"
            )
        since_none = [v for v in since_none if v in names]
    last_act_offered = _flag(features.get("offerHappened", False), "PyDial feature 'offerHappened'")
    return cls(
        slots=slots,
        method=beliefs.get("method", _DEFAULT_METHOD),
        discourse_act=beliefs.get("discourseAct", _DEFAULT_DISCOURSE),
        requested=requested,
        last_offered=venue_known,
        offer_happened=last_act_offered or bool(venue),
        last_informed_no_venue=_flag(
            features.get("lastActionInformNone", False), "PyDial feature 'lastActionInformNone'"
        ),
        last_act_offered=last_act_offered,
        offered_since_no_venue=tuple(since_none),
    )


#: Keys of PyDial's ``beliefs`` dict that are not informable slots.
_PYDIAL_NON_SLOTS = frozenset(("method", "discourseAct", "requested"))


def _pydial_distribution(
    slot: str, dist: Any, allowed: frozenset[str] | None, skip_unknown_values: bool
) -> dict[str, Any]:
    """A PyDial slot distribution with ``**NONE**`` renamed (and unknown values handled)."""
    if not _is_mapping(dist):
        raise InvalidContextError(
            f"slot {slot!r}: expected a mapping of value -> probability, got {type(dist).__name__}"
        )
    if "**NONE**" in dist and "none" in dist:
        raise InvalidContextError(f"slot {slot!r}: has both '**NONE**' and 'none' (PyDial uses one of them)")
    out: dict[str, Any] = {}
    moved = 0.0
    for value, p in dist.items():
        name = "none" if value == "**NONE**" else value
        if allowed is not None and name not in allowed and p:
            if not skip_unknown_values:
                raise InvalidContextError(
                    f"slot {slot!r}: unknown value {value!r} (pass skip_unknown_values=True to treat it as none, "
                    "or the ontology the beliefs belong to)"
                )
            moved += _probability(p, f"slot {slot!r} value {value!r}")
            continue
        out[name] = p
    if moved:
        if "none" in out:
            out["none"] = _probability(out["none"], f"slot {slot!r} value 'none'") + moved
        # without an explicit none the moved mass is part of the implied remainder
    return out
