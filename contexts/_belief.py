"""The canonical parts of a belief state: validated distributions that know their type.

:class:`~contexts.belief.BeliefState` stores its slot distributions, method and
discourse-act distributions and requested slots in canonical form (see :mod:`contexts.belief`),
as the frozen mapping types below, and recognises them by their type: a part built here was
validated when it was made. :class:`~contexts.belief_canonical.BeliefCanonicaliser` builds the
same parts with the same code and remembers them. Private to the belief state and its
canonicaliser: the only two modules that import it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from contexts._frozen import FrozenDict
from contexts.domain import AREAS, DISCOURSE_ACTS, FOODS, METHODS, PRICERANGES, REQUESTABLE, Ontology
from simscore.checks import check_number
from simscore.errors import InvalidContextError

#: How far a distribution's sum may be from 1 (or above 1, where the remainder is implied).
TOLERANCE = 1e-6

_SLOT_RANK = {"area": 0, "pricerange": 1, "food": 2, "name": 3}
_VALUE_RANK: dict[str, dict[str, int]] = {
    "area": {v: i for i, v in enumerate(AREAS)},
    "pricerange": {v: i for i, v in enumerate(PRICERANGES)},
    "food": {v: i for i, v in enumerate(FOODS)},
}
_REQUESTABLE_RANK = {v: i for i, v in enumerate(REQUESTABLE)}
_METHOD_SET = frozenset(METHODS)
_DISCOURSE_SET = frozenset(DISCOURSE_ACTS)
#: The fields of BeliefState, in order.
_FIELDS = (
    "slots", "method", "discourse_act", "requested", "last_offered", "offer_happened", "last_informed_no_venue",
    "last_act_offered", "offered_since_no_venue", "alternatives_requested",
)
_JSON_KEYS = frozenset(_FIELDS)


class _SlotDist(FrozenDict[str, float]):
    """A slot distribution already validated and canonical (only built in this module)."""

    __slots__ = ("_slot",)
    _slot: str

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, float]]]:  # type: ignore[override]
        return (_rebuild_slot_dist, (self._slot, dict(self)))


def _rebuild_slot_dist(slot: str, items: dict[str, float]) -> _SlotDist:
    out = _SlotDist(items)
    out._slot = slot
    return out


class _Slots(FrozenDict[str, _SlotDist]):
    """A validated, canonically ordered slots mapping."""

    __slots__ = ()


def _first_max(distribution: Mapping[str, float]) -> str:
    """The first value with the highest probability ("none" for an empty distribution)."""
    return max(distribution, key=distribution.__getitem__, default="none")


class _Distribution(FrozenDict[str, float]):
    """A validated distribution over a fixed list of values that knows its top value.

    Masks, master actions and the tracker ask for the top method of one belief several times
    a turn, and consecutive beliefs share their distribution objects while these do not
    change: the top is found once per object, when it is built.
    """

    __slots__ = ("top",)

    def __init__(self, values: Mapping[str, float]) -> None:
        super().__init__(values)
        #: The first value with the highest probability (:func:`_first_max`).
        self.top: str = _first_max(self)


class _MethodDist(_Distribution):
    """A validated method distribution over every value of METHODS."""

    __slots__ = ()


class _DiscourseDist(_Distribution):
    """A validated discourse-act distribution over every value of DISCOURSE_ACTS."""

    __slots__ = ()


class _Requested(FrozenDict[str, float]):
    """Validated, canonically ordered non-zero requested-slot probabilities."""

    __slots__ = ()


_EMPTY: FrozenDict[str, float] = FrozenDict()
_NO_REQUESTS = _Requested()


def _slot_key(slot: str) -> tuple[int, str]:
    return (_SLOT_RANK.get(slot, len(_SLOT_RANK)), slot)


def _value_key(rank: Mapping[str, int], value: str) -> tuple[int, int, str]:
    if value == "none":
        return (3, 0, "")
    if value == "dontcare":
        return (2, 0, "")
    position = rank.get(value)
    if position is None:
        return (1, 0, value)
    return (0, position, "")


def _requested_key(slot: str) -> tuple[int, str]:
    return (_REQUESTABLE_RANK.get(slot, len(_REQUESTABLE_RANK)), slot)


def _probability(value: Any, where: str) -> float:
    """``value`` as a float in [0, 1], or an error naming ``where``."""
    if type(value) is not float:
        value = check_number(f"{where}: probability", value, finite=False, error=InvalidContextError)
    if 0.0 <= value <= 1.0:
        return value
    if math.isnan(value):
        raise InvalidContextError(f"{where}: probability is NaN")
    if math.isinf(value):
        raise InvalidContextError(f"{where}: probability is infinite ({value})")
    if value < 0.0:
        raise InvalidContextError(f"{where}: probability {value!r} is negative")
    raise InvalidContextError(f"{where}: probability {value!r} is greater than 1")


def _is_mapping(value: Any) -> bool:
    cls = type(value)
    return cls is dict or cls is FrozenDict or isinstance(value, Mapping)


def _name(value: Any, what: str) -> str:
    if type(value) is not str or not value:
        if not isinstance(value, str) or not value:
            raise InvalidContextError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _slot_distribution(slot: str, dist: Any) -> _SlotDist:
    # Hot path of reading context files: checks are inlined and messages built only on error.
    if type(dist) is _SlotDist and dist._slot == slot:
        return dist
    if not _is_mapping(dist):
        raise InvalidContextError(
            f"slot {slot!r}: expected a mapping of value -> probability, got {type(dist).__name__}"
        )
    items = []
    total = 0.0
    none_given: float | None = None
    for value, p in dist.items():
        if type(value) is not str or not value:
            _name(value, f"slot {slot!r}: value name")
        if type(p) is not float or not 0.0 <= p <= 1.0:
            p = _probability(p, f"slot {slot!r} value {value!r}")
        if value == "none":
            none_given = p
            continue
        total += p
        if p > 0.0:
            items.append((value, p))
    if none_given is None:
        if total > 1.0 + TOLERANCE:
            raise InvalidContextError(
                f"slot {slot!r}: probabilities sum to {total!r}, more than 1 (tolerance {TOLERANCE})"
            )
        none = 1.0 - total if total < 1.0 else 0.0
    else:
        if abs(total + none_given - 1.0) > TOLERANCE:
            raise InvalidContextError(
                f"slot {slot!r}: probabilities (with 'none') sum to {total + none_given!r}, "
                f"expected 1 (tolerance {TOLERANCE})"
            )
        none = none_given
    if len(items) > 1:
        rank: Mapping[str, int] = _VALUE_RANK.get(slot, {})
        items.sort(key=lambda item: _value_key(rank, item[0]))
    items.append(("none", none))
    out = _SlotDist(items)
    out._slot = slot
    return out


def _full_distribution(
    dist: Any, what: str, order: tuple[str, ...], known: frozenset[str], kind: type[FrozenDict[str, float]]
) -> FrozenDict[str, float]:
    if type(dist) is kind:
        return dist
    if not _is_mapping(dist):
        raise InvalidContextError(f"{what}: expected a mapping of value -> probability, got {type(dist).__name__}")
    values = dict.fromkeys(order, 0.0)
    total = 0.0
    for value, p in dist.items():
        if value not in known:
            raise InvalidContextError(f"{what}: unknown value {value!r} (known: {', '.join(order)})")
        if type(p) is not float or not 0.0 <= p <= 1.0:
            p = _probability(p, f"{what} value {value!r}")
        values[value] = p
        total += p
    if abs(total - 1.0) > TOLERANCE:
        raise InvalidContextError(f"{what}: probabilities sum to {total!r}, expected 1 (tolerance {TOLERANCE})")
    return kind(values)


def _slots_mapping(slots: Mapping[str, Any]) -> _Slots:
    """What :class:`BeliefState` stores for ``slots`` (a mapping; validated and canonically ordered)."""
    return _Slots([(slot, _slot_distribution(slot, slots[slot])) for slot in _slot_order(tuple(slots))])


def _requested_mapping(requested: Any) -> _Requested:
    """What :class:`BeliefState` stores for ``requested`` (validated, non-zero, canonically ordered)."""
    if not _is_mapping(requested):
        raise InvalidContextError(
            f"requested: expected a mapping of slot -> probability, got {type(requested).__name__}"
        )
    kept = []
    for slot, p in requested.items():
        p = _probability(p, f"requested slot {_name(slot, 'requested slot name')!r}")
        if p > 0.0:
            kept.append((slot, p))
    if len(kept) > 1:
        kept.sort(key=lambda item: _requested_key(item[0]))
    return _Requested(kept) if kept else _NO_REQUESTS


_SLOT_ORDER_CACHE: dict[tuple[str, ...], tuple[str, ...]] = {}


def _slot_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """Slot names in canonical order (memoised: beliefs of one domain share a few layouts)."""
    order = _SLOT_ORDER_CACHE.get(names)
    if order is None:
        for slot in names:
            _name(slot, "slot name")
        order = tuple(sorted(names, key=_slot_key))
        if len(_SLOT_ORDER_CACHE) < 1024:
            _SLOT_ORDER_CACHE[names] = order
    return order


def _names(value: Any, what: str) -> tuple[str, ...]:
    """A tuple of non-empty strings (a list is taken as one), or an error naming ``what``."""
    if type(value) is not tuple:
        if not isinstance(value, (list, tuple)):
            raise InvalidContextError(f"{what} must be a list of venue names, got {value!r}")
        value = tuple(value)
    for name in value:
        _name(name, f"a venue in {what}")
    return value


def _flag(value: Any, what: str) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise InvalidContextError(f"{what} must be a bool, got {value!r}")


_DEFAULT_METHOD: FrozenDict[str, float] = _MethodDist({m: float(m == "none") for m in METHODS})
_DEFAULT_DISCOURSE: FrozenDict[str, float] = _DiscourseDist({d: float(d == "none") for d in DISCOURSE_ACTS})



@functools.lru_cache(maxsize=16)
def _value_sets(ontology: Ontology) -> dict[str | None, frozenset[str]]:
    """Per informable slot the allowed value names; key None: the requestable slots."""
    sets: dict[str | None, frozenset[str]] = {
        slot: frozenset(ontology.slot_values(slot)) for slot in ontology.informable
    }
    sets[None] = frozenset(ontology.requestable)
    return sets

