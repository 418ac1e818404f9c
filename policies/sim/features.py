"""The belief feature vector GP-SARSA's linear kernel works on (PyDial's GP features, restated).

:func:`belief_features` turns a :class:`~contexts.belief.BeliefState` into a float64 vector
of fixed length for a domain. Every entry lies in [0, 1]. It is PyDial's vector
(``policy/GPPolicy.py``, ``GPState.extractSimpleBelief``, lines 1152-1211 of helloric/pydial3
34988f4; the belief's ``features`` from ``belieftracking/BeliefTracker.py``,
``_updateMactFeat``, lines 274-333), in this order (PyDial concatenates the same parts in the
alphabetical order of their names, ``slowToFastBelief``, which a dot product does not see):

1. the discourse-act distribution, in :data:`~contexts.domain.DISCOURSE_ACTS` order (7);
2. the method distribution, in :data:`~contexts.domain.METHODS` order (6);
3. per requestable slot (ontology order): ``[p, 1 - p]``, p = P(slot requested) (2 each);
4. per informable slot (ontology order): ``P(none)`` followed by the probabilities of all its
   other values (ontology values and ``dontcare``) sorted in descending order, zero-padded
   (``n + 2`` each for a slot with ``n`` ontology values; ``extractBeliefWithOther``) — the
   value *names* are dropped, so the kernel compares how certain the belief is, not what it
   is certain about;
5. two history flags, each as the pair ``[x, 1 - x]`` (``extractSingleValue``, line 1145):
   PyDial's ``offerHappened``, *the system's last act* offered a venue
   (:attr:`~contexts.belief.BeliefState.last_act_offered`); and what PyDial calls
   ``hist_lastActionInformNone`` (line 1200), which is 1 when *a venue was offered since
   the system last said that no venue matches* (``informedVenueSinceNone`` is not empty;
   :attr:`~contexts.belief.BeliefState.offered_since_no_venue`) (4);
6. 25 database flags, each as the pair ``[x, 1 - x]`` (lines 1204-1206): for k = 1..5, with
   the k most probable accepted slot values (see :mod:`policies.sim.summary`; ``dontcare``
   constrains nothing), whether the number of matching venues is 0, 1, 2-4 or more than 4,
   then whether the matches can still be told apart by a system-requestable slot without an
   accepted value (``policy/SummaryUtils.py``, ``actionSpecificInformSummary``, lines
   464-504). With fewer than k accepted values the block is that of all of them (PyDial's
   ``sorted(...)[:k]`` takes what there is): with none accepted, every block says "more
   than 4 venues, discriminable" (50).

For the default domain that is 7 + 6 + 18 + (7 + 5 + 93 + 112) + 4 + 50 = 302 numbers
(PyDial's ontology, with more venue names, gives 332). Each pair adds exactly 1 to the
squared norm whatever its flag, so the prior variance ``k(b, b) = ‖b‖²`` of the linear
kernel is about 42 rather than the 20 of single 0/1 flags. :func:`feature_names` names every
entry.

:func:`belief_features` is a pure function, for one-off use. A component that computes the
vector every turn — the GP-SARSA policy, the Gymnasium environment — owns a
:class:`BeliefFeatures` extractor instead, which gives the same vectors and remembers what it
computed: everything after the requested slots (items 4-6) depends only on the slots and the
two history flags, which repeat within and across dialogues (the tracker shares equal slots
mappings), so it is computed once per distinct ``(slots, flags)`` and copied in; computing it
reuses the parts of the slots that the tracker handed on unchanged from the previous belief
(the same objects), and the per-belief summary (accepted values, database matches) comes from
the :class:`~policies.sim.summary.SummaryActions` that also computes the action mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from policies.sim.summary import SummaryActions

if TYPE_CHECKING:
    from contexts.belief import BeliefState
    from contexts.domain import Domain, Ontology
    from policies.sim.summary import Summary

__all__ = [
    "belief_features",
    "feature_names",
    "feature_size",
    "BeliefFeatures",
    "FeatureLayout",
    "N_DATABASE_FLAGS",
    "database_flags",
]

#: Number of database flags (5 blocks of 5); each is a pair ``[x, 1 - x]`` in the vector.
N_DATABASE_FLAGS = 25
#: Number of history flags (offer in the last act; a venue offered since "no venue").
_N_HISTORY_FLAGS = 2
_MAX_ACCEPTED = 5


class FeatureLayout:
    """Slot widths and zero paddings of one ontology's feature vector (immutable)."""

    __slots__ = ("requestable", "slots", "size", "head", "zeros")

    def __init__(self, ontology: Ontology) -> None:
        self.requestable = tuple(ontology.requestable)
        # (slot, number of non-none values = n ontology values + dontcare)
        self.slots = tuple((slot, len(values) + 1) for slot, values in ontology.informable.items())
        self.size = (
            len(ontology.discourse_acts)
            + len(ontology.methods)
            + 2 * len(self.requestable)
            + sum(1 + width for _, width in self.slots)
            + 2 * (_N_HISTORY_FLAGS + N_DATABASE_FLAGS)
        )
        # discourse act, method and requested slots come before the slots
        self.head = len(ontology.discourse_acts) + len(ontology.methods) + 2 * len(self.requestable)
        self.zeros = (0.0,) * max(width for _, width in self.slots)


def feature_size(domain: Domain) -> int:
    """Length of the feature vector for ``domain``.

    >>> from contexts.domain import default_domain
    >>> feature_size(default_domain())
    302
    """
    return FeatureLayout(domain.ontology).size


def feature_names(domain: Domain) -> tuple[str, ...]:
    """A name for every entry of the feature vector, in order.

    >>> from contexts.domain import default_domain
    >>> names = feature_names(default_domain())
    >>> names[:2], names[13:15]
    (('discourse_act=ack', 'discourse_act=hello'), ('requested[addr]', 'not_requested[addr]'))
    >>> names[31:33], names[-2:]
    (('area:none', 'area:rank1'), ('db:k5:discriminable', 'not_db:k5:discriminable'))
    >>> names[248:250]
    ('history:last_act_offered', 'not_history:last_act_offered')
    >>> names[250:252]
    ('history:offered_since_no_venue', 'not_history:offered_since_no_venue')
    """
    layout = FeatureLayout(domain.ontology)
    ontology = domain.ontology
    names = [f"discourse_act={d}" for d in ontology.discourse_acts]
    names += [f"method={m}" for m in ontology.methods]
    for slot in layout.requestable:
        names += [f"requested[{slot}]", f"not_requested[{slot}]"]
    for slot, width in layout.slots:
        names.append(f"{slot}:none")
        names += [f"{slot}:rank{i + 1}" for i in range(width)]
    flags = ["history:last_act_offered", "history:offered_since_no_venue"]
    for k in range(1, _MAX_ACCEPTED + 1):
        flags += [f"db:k{k}:count=0", f"db:k{k}:count=1", f"db:k{k}:count=2-4", f"db:k{k}:count>4", f"db:k{k}:discriminable"]
    for flag in flags:
        names += [flag, f"not_{flag}"]
    return tuple(names)


def belief_features(belief: BeliefState, domain: Domain) -> np.ndarray:
    """The GP-SARSA feature vector of ``belief`` (float64, length :func:`feature_size`).

    A pure function (it builds a fresh :class:`BeliefFeatures`); code that computes many
    vectors owns an extractor instead.

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
    ((302,), dtype('float64'), [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    >>> names = feature_names(d)
    >>> start = names.index("food:none")
    >>> x[start:start + 4].round(3).tolist()
    [0.1, 0.7, 0.2, 0.0]
    >>> dict(zip(names[-50:-40:2], x[-50:-40:2].tolist()))  # indian food only: more than 4 venues, different areas
    {'db:k1:count=0': 0.0, 'db:k1:count=1': 0.0, 'db:k1:count=2-4': 0.0, 'db:k1:count>4': 1.0, 'db:k1:discriminable': 1.0}
    >>> bool((x[-40:-30] == x[-50:-40]).all())  # one accepted value: block k=2 repeats block k=1
    True
    >>> float(x[-54:] @ x[-54:])  # 27 flag pairs: each adds 1 to the squared norm
    27.0
    """
    return BeliefFeatures(domain)(belief)


class BeliefFeatures:
    """The feature extractor of one domain: ``extractor(belief)`` is :func:`belief_features`.

    It remembers what it computed (see the module docstring), so that a component computing a
    vector every turn pays for each distinct part once; the memory belongs to the extractor
    (at most ``max_entries`` bodies and database-flag blocks) and never changes a result: every
    vector equals :func:`belief_features` of the same belief, bit for bit.

    Parameters
    ----------
    domain : contexts.domain.Domain
    space : SummaryActions, optional
        The summary actions whose per-belief summary the database flags are read from; pass
        the one that also computes the action masks so both share it. Default: a new one.
    max_entries : int, default 65536
        How many database-flag blocks to remember (bodies: a sixteenth of it).

    Examples
    --------
    >>> from contexts.domain import default_domain
    >>> from contexts.belief import BeliefState
    >>> features = BeliefFeatures(default_domain())
    >>> b = BeliefState(slots={"area": {"north": 1.0}})
    >>> features.size, bool((features(b) == belief_features(b, default_domain())).all())
    (302, True)
    """

    __slots__ = ("domain", "space", "layout", "size", "max_entries", "_database_flags", "_last_slot", "_last_requested",
                 "_bodies")

    def __init__(self, domain: Domain, *, space: SummaryActions | None = None, max_entries: int = 1 << 16) -> None:
        self.domain = domain
        self.space = space if space is not None else SummaryActions(domain)
        self.layout = FeatureLayout(domain.ontology)
        self.size = self.layout.size
        self.max_entries = max_entries
        # The database flags depend only on the accepted (slot, value) pairs in order, which
        # change rarely within a dialogue.
        self._database_flags: dict[tuple[tuple[str, str], ...], list[float]] = {}
        # Per slot, the last distribution object seen and its part of the vector: the tracker
        # hands on the distributions of the slots a turn did not change as they were.
        self._last_slot: dict[str, tuple[Mapping[str, float] | None, np.ndarray]] = {}
        # Likewise the requested slots (the tracker reuses them while they do not change).
        self._last_requested: tuple[Mapping[str, float] | None, list[float]] = (None, [])
        # Everything after the requested slots depends only on the slots and the two history flags.
        self._bodies: dict[tuple[Mapping[str, Mapping[str, float]], bool, bool], np.ndarray] = {}

    def __repr__(self) -> str:
        return f"BeliefFeatures(domain={self.domain.name!r}, size={self.size})"

    def __call__(self, belief: BeliefState) -> np.ndarray:
        """The feature vector of ``belief`` (a new array)."""
        layout = self.layout
        x = np.empty(layout.size)
        head = list(belief.discourse_act.values())
        head.extend(belief.method.values())
        head.extend(self._requested_part(belief.requested))
        x[: layout.head] = head
        key = (belief.slots, belief.last_act_offered, bool(belief.offered_since_no_venue))
        body = self._bodies.get(key)
        if body is None:
            body = self._body(belief)
            if len(self._bodies) < self.max_entries >> 4:
                self._bodies[key] = body
        x[layout.head :] = body
        return x

    def _requested_part(self, requested: Mapping[str, float]) -> list[float]:
        seen, part = self._last_requested
        if seen is not requested:
            part = []
            for slot in self.layout.requestable:
                p = requested.get(slot, 0.0)
                part.append(p)
                part.append(1.0 - p)
            self._last_requested = (requested, part)
        return part

    def _body(self, belief: BeliefState) -> np.ndarray:
        """The part of the vector after the requested slots: slots, history flags, database flags."""
        layout = self.layout
        parts = []
        slots = belief.slots
        last = self._last_slot
        for slot, width in layout.slots:
            dist = slots.get(slot)
            seen = last.get(slot)
            if seen is not None and seen[0] is dist:
                part = seen[1]
            else:
                part = _slot_features(dist, width, layout.zeros)
                last[slot] = (dist, part)
            parts.append(part)
        tail = [1.0, 0.0] if belief.last_act_offered else [0.0, 1.0]
        tail += [1.0, 0.0] if belief.offered_since_no_venue else [0.0, 1.0]
        tail.extend(self._database_flags_of(belief))
        parts.append(np.array(tail))
        return np.concatenate(parts)

    def _database_flags_of(self, belief: BeliefState) -> list[float]:
        summary = self.space.summarise(belief)
        key = tuple([(slot, value) for slot, value, _ in summary.accepted])
        pairs = self._database_flags.get(key)
        if pairs is None:
            pairs = []
            for flag in database_flags(self.space, summary):
                pairs += (flag, 1.0 - flag)
            if len(self._database_flags) < self.max_entries:
                self._database_flags[key] = pairs
        return pairs


def _slot_features(dist: Mapping[str, float] | None, width: int, zeros: tuple[float, ...]) -> np.ndarray:
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


def database_flags(space: SummaryActions, summary: Summary) -> list[float]:
    """The 25 database flags (item 6 of the module docstring) of a belief's summary, 0 or 1 each.

    >>> from contexts.domain import default_domain
    >>> from contexts.belief import BeliefState
    >>> space = SummaryActions(default_domain())
    >>> database_flags(space, space.summarise(BeliefState()))[:5]  # nothing accepted: every venue
    [0.0, 0.0, 0.0, 1.0, 1.0]
    """
    accepted = summary.accepted
    index = space.index
    flags: list[float] = []
    requestable = space.system_requestable
    for k in range(1, _MAX_ACCEPTED + 1):
        if k > len(accepted) and k > 1:
            flags.extend(flags[-5:])  # PyDial's sorted(...)[:k] takes all there is: the last block again
            continue
        chosen = accepted[:k]
        if k >= len(accepted):
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
