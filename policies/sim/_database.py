"""A fast constraint index over a domain's venue database, shared by the simulation modules.

Every turn of a simulated dialogue asks the database a few questions (how many venues match
the accepted values, can the matches still be told apart, which venue to offer). The index
answers them with per-value bit masks (bit ``i`` set = venue ``i`` of the database has that
value), so a query is a handful of integer ANDs. Results agree with
:meth:`contexts.domain.Domain.query` (same matches, same database order); the tests check it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from contexts.domain import VENUE_FIELDS

if TYPE_CHECKING:
    from contexts.domain import Domain, Venue

__all__ = ["DatabaseIndex"]

_SPECIAL = frozenset(("dontcare", "none"))
_FIELDS = frozenset(VENUE_FIELDS)


class DatabaseIndex:
    """Bit-mask index of one domain's venues.

    Parameters
    ----------
    domain : contexts.domain.Domain
        The domain; its venues are indexed for every informable slot that is a venue field.

    Notes
    -----
    Constraints on informable slots that are not venue fields cannot be checked against the
    database and are ignored (they match every venue).
    """

    __slots__ = ("domain", "venues", "full", "masks", "values", "by_name", "_slot_ok")

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.venues: tuple[Venue, ...] = domain.venues
        self.full = (1 << len(self.venues)) - 1
        slots = [s for s in domain.ontology.informable if s in _FIELDS]
        masks: dict[str, dict[str, int]] = {s: {} for s in slots}
        values: dict[str, list[str]] = {s: [] for s in slots}
        for position, venue in enumerate(self.venues):
            bit = 1 << position
            for slot in slots:
                value = str(getattr(venue, slot))
                per_value = masks[slot]
                per_value[value] = per_value.get(value, 0) | bit
                values[slot].append(value)
        self.masks = masks
        self.values = values
        self.by_name = {venue.name: position for position, venue in enumerate(self.venues)}
        self._slot_ok = frozenset(slots)

    def mask(self, constraints: Iterable[tuple[str, str]], exclude_names: Iterable[str] = ()) -> int:
        """Bit mask of the venues matching every ``(slot, value)`` and none of ``exclude_names``.

        ``dontcare`` and ``none`` values, and slots that are not venue fields, match everything;
        a value that no venue has matches nothing.
        """
        mask = self.full
        masks = self.masks
        for slot, value in constraints:
            if value in _SPECIAL or slot not in self._slot_ok:
                continue
            mask &= masks[slot].get(value, 0)
        for name in exclude_names:
            position = self.by_name.get(name)
            if position is not None:
                mask &= ~(1 << position)
        return mask

    def count(self, constraints: Iterable[tuple[str, str]]) -> int:
        """Number of matching venues (see :meth:`mask`)."""
        return self.mask(constraints).bit_count()

    def first(self, mask: int) -> Venue | None:
        """The first venue (database order) in ``mask``, or None if it is empty."""
        if not mask:
            return None
        return self.venues[(mask & -mask).bit_length() - 1]

    def matches(self, mask: int) -> list[Venue]:
        """The venues in ``mask``, in database order."""
        out = []
        venues = self.venues
        while mask:
            low = mask & -mask
            out.append(venues[low.bit_length() - 1])
            mask ^= low
        return out

    def contains(self, mask: int, name: str | None) -> bool:
        """Whether the venue called ``name`` is in ``mask``."""
        if name is None:
            return False
        position = self.by_name.get(name)
        return position is not None and bool(mask >> position & 1)

    def discriminable(self, mask: int, slots: Iterable[str]) -> bool:
        """Whether the venues in ``mask`` differ in the value of at least one of ``slots``.

        False for fewer than two venues. All matches share a slot's value exactly when the
        mask is a subset of that value's mask, so each slot costs one AND.
        """
        if mask & (mask - 1) == 0:  # zero or one venue
            return False
        position = (mask & -mask).bit_length() - 1
        for slot in slots:
            per_value = self.masks.get(slot)
            if per_value is None:
                continue
            if mask & per_value[self.values[slot][position]] != mask:
                return True
        return False

    def venue(self, name: str) -> Venue | None:
        """The venue called ``name``, or None."""
        position = self.by_name.get(name)
        return None if position is None else self.venues[position]

    def satisfies(self, venue: Venue, constraints: Mapping[str, str]) -> bool:
        """Whether ``venue`` has every constrained value (``dontcare``/``none`` match anything)."""
        for slot, value in constraints.items():
            if value in _SPECIAL or slot not in self._slot_ok:
                continue
            if str(getattr(venue, slot)) != value:
                return False
        return True
