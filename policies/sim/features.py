"""The belief feature vector GP-SARSA's linear kernel works on (PyDial's GP features, restated).

:func:`belief_features` turns a :class:`~contexts.belief.BeliefState` into a float64 vector
of fixed length for a domain. Every entry lies in [0, 1]. Layout, in order:

1. the discourse-act distribution, in :data:`~contexts.domain.DISCOURSE_ACTS` order (7);
2. the method distribution, in :data:`~contexts.domain.METHODS` order (6);
3. per requestable slot (ontology order): ``[p, 1 - p]``, p = P(slot requested) (2 each);
4. per informable slot (ontology order): ``P(none)`` followed by the probabilities of all its
   other values (ontology values and ``dontcare``) sorted in descending order, zero-padded
   (``n + 2`` each for a slot with ``n`` ontology values) — the value *names* are dropped,
   so the kernel compares how certain the belief is, not what it is certain about;
5. two history flags: an offer happened; the last system action informed that no venue
   matches (2);
6. 25 database flags: for k = 1..5, with the k most probable accepted slot values
   (see :mod:`policies.sim.summary`; ``dontcare`` constrains nothing), one-hot whether the number
   of matching venues is 0, 1, 2-4 or more than 4, then whether the matches can still be
   told apart by a system-requestable slot without an accepted value (5 per k; all zero when
   fewer than k values are accepted).

For the default domain that is 7 + 6 + 18 + (7 + 5 + 93 + 112) + 2 + 25 = 275 numbers
(PyDial's ontology, with more venue names, gives 305). :func:`feature_names` names
every entry.

The function is called at every turn of GP-SARSA training, so it fills one preallocated array
from a few Python lists and one memoised array: everything after the requested slots (items
4-6) depends only on the slots and the two history flags, which repeat within and across
dialogues (the tracker shares equal slots mappings), so it is computed once per distinct
``(slots, flags)`` (a bounded memo per domain) and copied in. Computing it reuses the parts of
the slots that the tracker handed on unchanged from the previous belief (the same objects)
and shares the per-belief summary (accepted values, database matches) with the action mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from policies.sim.domain_cache import domain_cache

if TYPE_CHECKING:
    from contexts.belief import BeliefState
    from contexts.domain import Domain, Ontology
    from policies.sim.domain_cache import DomainCache
    from policies.sim.summary import SummaryActions, _Summary

__all__ = ["belief_features", "feature_names", "feature_size", "FeatureLayout", "N_DATABASE_FLAGS"]

#: Number of database flags at the end of the vector (5 blocks of 5).
N_DATABASE_FLAGS = 25
_MAX_ACCEPTED = 5
_MAX_MEMO = 1 << 16
_MAX_BODIES = 1 << 12


class FeatureLayout:
    """Slot widths and zero paddings of one ontology's feature vector (see :mod:`policies.sim.domain_cache`)."""

    __slots__ = (
        "requestable", "slots", "size", "head", "zeros", "database_flags", "last_slot_features", "last_requested",
        "bodies",
    )

    def __init__(self, ontology: Ontology) -> None:
        self.requestable = tuple(ontology.requestable)
        # (slot, number of non-none values = n ontology values + dontcare)
        self.slots = tuple((slot, len(values) + 1) for slot, values in ontology.informable.items())
        self.size = (
            len(ontology.discourse_acts)
            + len(ontology.methods)
            + 2 * len(self.requestable)
            + sum(1 + width for _, width in self.slots)
            + 2
            + N_DATABASE_FLAGS
        )
        # discourse act, method and requested slots come before the slots
        self.head = len(ontology.discourse_acts) + len(ontology.methods) + 2 * len(self.requestable)
        self.zeros = [0.0] * max([width for _, width in self.slots] + [N_DATABASE_FLAGS])
        # The database flags depend only on the accepted (slot, value) pairs in order, which
        # change rarely within a dialogue: memoised (up to _MAX_MEMO keys).
        self.database_flags: dict[tuple[tuple[str, str], ...], list[float]] = {}
        # Per slot, the last distribution object seen and its part of the vector: the tracker
        # hands on the distributions of the slots a turn did not change as they were.
        self.last_slot_features: dict[str, tuple[Mapping[str, float] | None, np.ndarray]] = {}
        # Likewise the requested slots (the tracker reuses them while they do not change).
        self.last_requested: tuple[Mapping[str, float] | None, list[float]] = (None, [])
        # Everything after the requested slots depends only on the slots and the two history
        # flags: memoised by them (up to _MAX_BODIES keys; the tracker shares equal slots).
        self.bodies: dict[tuple[Mapping[str, Mapping[str, float]], bool, bool], np.ndarray] = {}


def feature_size(domain: Domain) -> int:
    """Length of the feature vector for ``domain``.

    >>> from contexts.domain import default_domain
    >>> feature_size(default_domain())
    275
    """
    return domain_cache(domain).layout.size


def feature_names(domain: Domain) -> tuple[str, ...]:
    """A name for every entry of the feature vector, in order.

    >>> from contexts.domain import default_domain
    >>> names = feature_names(default_domain())
    >>> names[:2], names[13:15]
    (('discourse_act=ack', 'discourse_act=hello'), ('requested[addr]', 'not_requested[addr]'))
    >>> names[31:33], names[-2:]
    (('area:none', 'area:rank1'), ('db:k5:count>4', 'db:k5:discriminable'))
    """
    layout = domain_cache(domain).layout
    ontology = domain.ontology
    names = [f"discourse_act={d}" for d in ontology.discourse_acts]
    names += [f"method={m}" for m in ontology.methods]
    for slot in layout.requestable:
        names += [f"requested[{slot}]", f"not_requested[{slot}]"]
    for slot, width in layout.slots:
        names.append(f"{slot}:none")
        names += [f"{slot}:rank{i + 1}" for i in range(width)]
    names += ["history:offer_happened", "history:last_informed_no_venue"]
    for k in range(1, _MAX_ACCEPTED + 1):
        names += [f"db:k{k}:count=0", f"db:k{k}:count=1", f"db:k{k}:count=2-4", f"db:k{k}:count>4", f"db:k{k}:discriminable"]
    return tuple(names)


def belief_features(belief: BeliefState, domain: Domain) -> np.ndarray:
    """The GP-SARSA feature vector of ``belief`` (float64, length :func:`feature_size`).

    Parameters
    ----------
    belief : contexts.belief.BeliefState
    domain : contexts.domain.Domain

    Returns
    -------
    numpy.ndarray
        Shape ``(feature_size(domain),)``, dtype float64, every entry in [0, 1].

    Examples
    --------
    >>> from contexts.domain import default_domain
    >>> from contexts.belief import BeliefState
    >>> d = default_domain()
    >>> b = BeliefState(slots={"food": {"indian": 0.7, "thai": 0.2}}, method={"byconstraints": 1.0},
    ...                 requested={"phone": 1.0})
    >>> x = belief_features(b, d)
    >>> x.shape, x.dtype, x[:7].tolist(), x[7:13].tolist()
    ((275,), dtype('float64'), [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    >>> names = feature_names(d)
    >>> start = names.index("food:none")
    >>> x[start:start + 4].round(3).tolist()
    [0.1, 0.7, 0.2, 0.0]
    >>> dict(zip(names[-25:-20], x[-25:-20].tolist()))  # indian food only: more than 4 venues, different areas
    {'db:k1:count=0': 0.0, 'db:k1:count=1': 0.0, 'db:k1:count=2-4': 0.0, 'db:k1:count>4': 1.0, 'db:k1:discriminable': 1.0}
    """
    cache = domain_cache(domain)
    layout = cache.layout
    x = np.empty(layout.size)
    head = list(belief.discourse_act.values())
    head.extend(belief.method.values())
    requested = belief.requested
    seen_requested, part = layout.last_requested
    if seen_requested is not requested:
        part = []
        for slot in layout.requestable:
            p = requested.get(slot, 0.0)
            part.append(p)
            part.append(1.0 - p)
        layout.last_requested = (requested, part)
    head.extend(part)
    x[: layout.head] = head
    slots = belief.slots
    bodies = layout.bodies
    key = (slots, belief.offer_happened, belief.last_informed_no_venue)
    body = bodies.get(key)
    if body is None:
        body = _body(cache, belief)
        if len(bodies) < _MAX_BODIES:
            bodies[key] = body
    x[layout.head :] = body
    return x


def _body(cache: DomainCache, belief: BeliefState) -> np.ndarray:
    """The part of the vector after the requested slots: slots, history flags, database flags."""
    layout = cache.layout
    parts = []
    slots = belief.slots
    last = layout.last_slot_features
    for slot, width in layout.slots:
        dist = slots.get(slot)
        seen = last.get(slot)
        if seen is not None and seen[0] is dist:
            part = seen[1]
        else:
            part = _slot_features(dist, width, layout.zeros)
            last[slot] = (dist, part)
        parts.append(part)
    tail = [1.0 if belief.offer_happened else 0.0, 1.0 if belief.last_informed_no_venue else 0.0]
    tail.extend(_database_flags(cache.space, belief, layout.database_flags))
    parts.append(tail)
    return np.concatenate(parts)


def _slot_features(dist: Mapping[str, float] | None, width: int, zeros: list[float]) -> np.ndarray:
    """``P(none)`` and the other probabilities of a slot, descending, zero-padded to ``width``."""
    if dist is None:
        return np.array([1.0, *zeros[:width]])
    out = [dist.get("none", 0.0)]
    values = [p for value, p in dist.items() if value != "none"]
    if len(values) > 1:
        values.sort(reverse=True)
    if len(values) >= width:
        out.extend(values[:width])
    else:
        out.extend(values)
        out.extend(zeros[: width - len(values)])
    return np.array(out, dtype=np.float64)


def _database_flags(
    space: SummaryActions, belief: BeliefState, memo: dict[tuple[tuple[str, str], ...], list[float]]
) -> list[float]:
    summary = space.summarise(belief)
    accepted = summary.accepted
    key = tuple([(slot, value) for slot, value, _ in accepted])
    flags = memo.get(key)
    if flags is None:
        flags = _compute_database_flags(space, summary)
        if len(memo) < _MAX_MEMO:
            memo[key] = flags
    return flags


def _compute_database_flags(space: SummaryActions, summary: _Summary) -> list[float]:
    accepted = summary.accepted
    index = space.index
    flags: list[float] = []
    requestable = space.system_requestable
    for k in range(1, _MAX_ACCEPTED + 1):
        if k > len(accepted):
            flags.extend((0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        chosen = accepted[:k]
        if k == len(accepted):
            mask = summary.match_mask
            discriminable = not summary.informable_ok
        else:
            mask = index.mask([(slot, value) for slot, value, _ in chosen])
            constrained = {slot for slot, _, _ in chosen}
            discriminable = index.discriminable(mask, [s for s in requestable if s not in constrained])
        n = mask.bit_count()
        flags.extend(
            (
                1.0 if n == 0 else 0.0,
                1.0 if n == 1 else 0.0,
                1.0 if 2 <= n <= 4 else 0.0,
                1.0 if n > 4 else 0.0,
                1.0 if discriminable else 0.0,
            )
        )
    return flags
