"""PyDial's belief dict read into a :class:`~contexts.belief.BeliefState`.

The mapping is documented on :meth:`BeliefState.from_pydial <contexts.belief.BeliefState.from_pydial>`,
which calls :func:`belief_from_pydial`; it lives here so that ``belief.py`` holds the belief
itself and this module PyDial's format.
"""

from __future__ import annotations

from typing import Any

from contexts.belief import (
    _DEFAULT_DISCOURSE,
    _DEFAULT_METHOD,
    BeliefState,
    _flag,
    _is_mapping,
    _probability,
    _value_sets,
)
from contexts.domain import Ontology
from simscore.errors import InvalidContextError

__all__ = ["belief_from_pydial"]


def belief_from_pydial(
    cls: type[BeliefState], belief: Any, ontology: Ontology | None = None, *, skip_unknown_values: bool = False
) -> BeliefState:
    """:meth:`BeliefState.from_pydial <contexts.belief.BeliefState.from_pydial>` (``cls``: the class it is called on).

    >>> belief_from_pydial(BeliefState, {"food": {"thai": 1.0}}).top("food")
    ('thai', 1.0)
    """
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
