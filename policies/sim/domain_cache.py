"""Everything the policies package derives from one domain, built once and shared.

A simulated dialogue, a policy and a feature extractor all need the same few objects of a
domain: the venue index (:class:`~policies.sim._database.DatabaseIndex`), the summary actions
(:class:`~policies.sim.summary.SummaryActions`), the feature layout
(:class:`~policies.sim.features.FeatureLayout`) and the domain's fingerprint (recorded in
checkpoints). :func:`domain_cache` keeps one :class:`DomainCache` per domain object (by
identity; the eight most recent domains are kept) and the components of one dialogue ask it,
so that they share one :class:`~policies.sim.summary.SummaryActions`: the runner's action mask
and the policy's features then summarise each belief once. Everything else a cache holds is
immutable; the summary memo is the summary actions' own (see its Notes).

This module sits above :mod:`~policies.sim.summary` and :mod:`~policies.sim.features`, which
do not import it.

>>> from contexts.domain import default_domain
>>> cache = domain_cache(default_domain())
>>> cache is domain_cache(default_domain()), len(cache.space), cache.layout.size
(True, 16, 302)
"""

from __future__ import annotations

import functools
import hashlib
import threading
from typing import TYPE_CHECKING

from policies.sim._database import DatabaseIndex
from policies.sim.features import FeatureLayout
from policies.sim.summary import SummaryActions
from simscore.io import dumps

if TYPE_CHECKING:
    from contexts.domain import Domain

__all__ = ["DomainCache", "domain_cache", "domain_fingerprint"]

_KEEP = 8


class DomainCache:
    """The derived objects of one domain, each built on first use.

    Parameters
    ----------
    domain : contexts.domain.Domain
    """

    def __init__(self, domain: Domain) -> None:
        self.domain = domain

    def __repr__(self) -> str:
        return f"DomainCache({self.domain.name!r})"

    @functools.cached_property
    def index(self) -> DatabaseIndex:
        """Bit-mask index of the venue database."""
        return DatabaseIndex(self.domain)

    @functools.cached_property
    def space(self) -> SummaryActions:
        """The summary actions, their masks and master actions."""
        return SummaryActions(self.domain, index=self.index)

    @functools.cached_property
    def layout(self) -> FeatureLayout:
        """Widths and paddings of the belief feature vector."""
        return FeatureLayout(self.domain.ontology)

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of the domain's name, ontology and venue database."""
        payload = dumps(
            {
                "name": self.domain.name,
                "ontology": self.domain.ontology.to_json(),
                "venues": [venue.to_json() for venue in self.domain.venues],
            }
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


_CACHES: dict[int, DomainCache] = {}
_LOCK = threading.Lock()


def domain_cache(domain: Domain) -> DomainCache:
    """The :class:`DomainCache` of ``domain`` (one per domain object)."""
    with _LOCK:
        cache = _CACHES.get(id(domain))
        if cache is not None and cache.domain is domain:
            return cache
        cache = DomainCache(domain)
        if len(_CACHES) >= _KEEP:
            _CACHES.pop(next(iter(_CACHES)))
        _CACHES[id(domain)] = cache
        return cache


def domain_fingerprint(domain: Domain) -> str:
    """SHA-256 (hex) of a domain's name, ontology and venue database.

    A checkpoint records it; loading a checkpoint into a domain with another fingerprint is
    an error (the features and masks would mean something else).

    >>> from contexts.domain import default_domain
    >>> len(domain_fingerprint(default_domain()))
    64
    """
    return domain_cache(domain).fingerprint
