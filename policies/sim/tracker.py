"""The focus belief tracker: turns the dialogue so far into a :class:`~contexts.belief.BeliefState`.

The rules are those of PyDial's focus tracker with its semantic-input conventions
(Environment 1, restated). At every system decision point the tracker folds the last system
act and the user's act (an n-best list of ``(act, confidence)`` hypotheses; Environment 1 has
no semantic errors, so the simulator passes one hypothesis with confidence 1) into the belief.

**Reading the user's act.** Each hypothesis becomes single-slot informs, requests and a few
bare acts, as PyDial's semantic input does:

* every ``slot=value`` item of an act other than ``request``, ``confirm`` and ``deny`` is an
  inform (``hello(food=x)``, ``reqalts(area=dontcare)``, ``affirm(food=x)``,
  ``negate(food=x)``); ``deny(s!=x,s=y)`` informs ``s=y``; items of slots that are not
  informable (``type``) are dropped, so ``inform(type=restaurant)`` alone tells nothing;
* a bare ``affirm()`` answering ``confirm(s=v)`` informs ``s=v`` (so does an affirm with
  items, besides its items);
* ``request(r)`` requests r; ``request(name=X, r)`` also informs ``name=X``; a user
  ``confirm(s=v)`` requests s;
* a slotless dontcare, ``inform(this=dontcare)``, belongs to the slot of the system's last
  request, select or confirm (dropped if there was none).

Denials are not evidence: PyDial's focus tracker ignores them.

**Informable slot** s, with ``u(v)`` the summed confidence of this turn's informs ``s = v``:
``q = max(0, 1 - sum_v u(v))``, ``b(v) = q * b_prev(v) + u(v)``, renormalised only if the
values sum to more than 1; ``P(none) = 1 - sum``. Values outside the ontology are ignored.

**Method** of a hypothesis (first rule that applies): ``reqalts`` → byalternatives; ``bye``
→ finished; any inform → byname if one informs ``name``, else byconstraints; ``restart`` →
restart; a request or confirm (without informs) → byname if a venue has been offered; else
none. Non-none methods keep ``M_prev(m) * turn_none + turn(m)``, ``turn_none`` the turn's
none mass; ``P(none)`` is the remainder (with one hypothesis: the last non-none method wins).

**Discourse act**: this turn's only (silence, repeat, thankyou, ack, hello, bye, else none).

**Requested slot** r: ``p(r) = clip((1 - [the system's last act informed r]) * p_prev(r) + u(r), 0, 1)``,
where only the information part of an offer counts (its venue name does not) and
``inform(name=none, ...)`` informs nothing.

**History** (PyDial's belief ``features``, ``BeliefTracker._updateMactFeat``): the last
offered venue, whether an offer happened in the dialogue, whether the last system act offered
a venue (an ``inform`` naming one), whether it was ``inform(name=none, ...)``, and the venues
offered since the last such act; and, for the action mask, PyDial's sticky
``alternatives_requested`` flag (``policy/SummaryAction.py`` lines 170-171 and 320): raised
after a decision whose belief asked for alternatives
(:func:`policies.sim.summary.asks_for_alternatives`), lowered when the system answered with
``inform_alternatives`` (the caller says so: :meth:`FocusTracker.update`'s
``answered_alternatives``). A system ``restart()`` resets everything.

Examples
--------
>>> from contexts.domain import default_domain
>>> from simscore.acts import Act
>>> tracker = FocusTracker(default_domain().ontology)
>>> b = tracker.update(Act("hello"), Act.parse("inform(type=restaurant,food=indian)"))
>>> b.top("food"), b.top_method()
(('indian', 1.0), 'byconstraints')
>>> b = tracker.update(Act.parse("request(area)"), [(Act.parse("inform(area=north)"), 0.6),
...                                                 (Act.parse("inform(area=south)"), 0.3)])
>>> {value: round(p, 6) for value, p in b.slots["area"].items()}
{'north': 0.6, 'south': 0.3, 'none': 0.1}
>>> tracker.update(Act.parse("confirm(area=north)"), Act("affirm")).top("area")
('north', 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from contexts.belief import BeliefState
from contexts.belief_canonical import BeliefCanonicaliser
from policies.sim.summary import asks_for_alternatives
from simscore.acts import Act

if TYPE_CHECKING:
    from contexts.domain import Ontology

__all__ = ["FocusTracker", "Hypotheses"]

#: An n-best list of user-act hypotheses with confidences (summing to at most 1).
Hypotheses = Sequence[tuple[Act, float]]

_DISCOURSE = {
    "null": "silence",
    "silence": "silence",
    "repeat": "repeat",
    "thankyou": "thankyou",
    "ack": "ack",
    "hello": "hello",
    "bye": "bye",
}
#: PyDial's precedence when a turn carries several discourse acts.
_DISCOURSE_ORDER = tuple(_DISCOURSE)
#: At most this many readings of user acts (and evidences, and discourse distributions) are memoised per tracker.
_MAX_READINGS = 1 << 14


class FocusTracker:
    """Focus belief tracker over one ontology (state: the current dialogue).

    Parameters
    ----------
    ontology : contexts.domain.Ontology
        Informable slots and values, requestable slots.

    Attributes
    ----------
    belief : contexts.belief.BeliefState
        The belief after the last :meth:`update` (the initial belief after :meth:`reset`).
    offered : tuple of str
        The venues the system offered since it last said that no venue matches, in order.
    """

    def __init__(self, ontology: Ontology) -> None:
        self.ontology = ontology
        self._informable = tuple(ontology.informable)
        self._allowed = {slot: frozenset(values) | {"dontcare"} for slot, values in ontology.informable.items()}
        self._requestable = frozenset(ontology.requestable)
        # Beliefs are built every turn from small mappings that repeat within and across
        # dialogues: the canonical parts are remembered by this tracker's canonicaliser.
        self._canon = BeliefCanonicaliser()
        # (user act, this_slot, confirmed item, offer happened) -> what _read makes of the act
        self._readings: dict[tuple[Act, str | None, tuple[str, str] | None, bool], _Reading] = {}
        # the same key -> the evidence of that act heard with confidence 1 (the simulated user's
        # turns): shared, never changed by the steps that read it
        self._certain: dict[tuple[Act, str | None, tuple[str, str] | None, bool], _Evidence] = {}
        # a turn's discourse-act evidence -> the belief's discourse-act distribution
        self._discourse: dict[tuple[tuple[str, float], ...], Mapping[str, float]] = {}
        # the state of the current dialogue (set by reset)
        self._slots: dict[str, dict[str, float]] = {}
        # The canonical distribution of each slot that has not changed since the last belief.
        self._canonical: dict[str, Mapping[str, float]] = {}
        self._method: dict[str, float] = {}
        self._requested: dict[str, float] = {}
        self._method_built: list[tuple[str, float]] | None = None  # self._method's items when last built
        self._last_offered: str | None = None
        self._offered: tuple[str, ...] = ()
        self._last_no_venue = False
        self._last_act_offered = False
        self._alternatives_requested = False
        self._initial: BeliefState | None = None
        self.belief: BeliefState = self.reset()

    def reset(self) -> BeliefState:
        """Start a new dialogue; returns the turn-0 belief (all mass on none)."""
        self._slots = {slot: {} for slot in self._informable}
        self._canonical = {}
        self._method = {}
        self._requested = {}
        self._method_built = None
        self._last_offered = None
        self._offered = ()
        self._last_no_venue = False
        self._last_act_offered = False
        self._alternatives_requested = False
        initial = self._initial
        if initial is None:  # the turn-0 belief is always the same: built once
            initial = self._initial = self._build({})
        else:  # what _build records about the belief it builds
            self._canonical = dict(initial.slots)
            self._method_built = []
        self.belief = initial
        return initial

    @property
    def offered(self) -> tuple[str, ...]:
        return self._offered

    def update(
        self, system_act: Act | None, user: Act | Hypotheses | None, *, answered_alternatives: bool = False
    ) -> BeliefState:
        """Fold one exchange into the belief and return the new belief.

        Parameters
        ----------
        system_act : simscore.Act or None
            The system's previous act (None if the user spoke first).
        user : simscore.Act, sequence of (Act, float), or None
            The user's act (confidence 1), an n-best list, or None for silence.
        answered_alternatives : bool
            ``system_act`` was the summary action ``inform_alternatives`` (it lowers the
            ``alternatives_requested`` flag; the act alone cannot tell, an ``inform`` offers
            alike).

        Raises
        ------
        ValueError
            If a confidence is not in [0, 1] or the confidences sum to more than 1.
        """
        hypotheses = _hypotheses(user)
        # PyDial raises the flag when it computes the mask of the previous belief and lowers it
        # when it converts inform_alternatives (SummaryAction.py lines 170-171, 320).
        self._alternatives_requested = (
            self._alternatives_requested or asks_for_alternatives(self.belief)
        ) and not answered_alternatives
        informed, this_slot, confirmed = self._hear_system(system_act)
        evidence = self._evidence(hypotheses, this_slot, confirmed, self._last_offered is not None)
        self._update_slots(evidence.informs)
        self._update_method(evidence.methods)
        self._update_requested(informed, evidence.requests)
        self.belief = self._build(evidence.discourse)
        return self.belief

    # -- the steps of an update -------------------------------------------------------------

    def _hear_system(self, system_act: Act | None) -> tuple[set[str], str | None, tuple[str, str] | None]:
        """Fold the system's last act into the history; returns the slots it informed, the slot it
        asked about (request, select, confirm) and the one item it confirmed (None unless exactly one)."""
        informed: set[str] = set()
        confirmed: list[tuple[str, str]] = []
        this_slot: str | None = None
        self._last_no_venue = False
        self._last_act_offered = False
        if system_act is None:
            return informed, this_slot, None
        intents = system_act.intents
        if "restart" in intents:
            self.reset()
        if "inform" in intents:
            no_venue = any(i.slot == "name" and i.op == "=" and i.value == "none" for i in system_act.items)
            for item in system_act.items:
                if item.op != "=" or item.value is None:
                    continue
                if item.slot == "name":
                    self._hear_offer(item.value)
                elif not no_venue:
                    informed.add(item.slot)
        elif intents[0] in ("request", "select", "confirm") and system_act.items:
            this_slot = system_act.items[0].slot
            if "confirm" in intents:
                confirmed = [(i.slot, i.value) for i in system_act.items if i.op == "=" and i.value is not None]
        return informed, this_slot, confirmed[0] if len(confirmed) == 1 else None

    def _hear_offer(self, name: str) -> None:
        # PyDial, belieftracking/BeliefTracker.py (helloric/pydial3 34988f4), _updateMactFeat,
        # lines 296-326: a system act with name=none ("canthelp") empties informedVenueSinceNone
        # and sets lastActionInformNone; one naming a venue ("offer") appends it and sets
        # offerHappened, which is about the last system act only.
        if name == "none":
            self._last_no_venue = True
            self._offered = ()
        else:
            self._last_offered = name
            self._last_act_offered = True
            self._offered = (*self._offered, name)

    def _evidence(
        self, hypotheses: Hypotheses, this_slot: str | None, confirmed: tuple[str, str] | None, offer_happened: bool
    ) -> _Evidence:
        """The confidence-weighted informs, requests, methods and discourse acts of the user's hypotheses."""
        if len(hypotheses) == 1 and hypotheses[0][1] == 1.0:  # one act, heard for sure
            key = (hypotheses[0][0], this_slot, confirmed, offer_happened)
            evidence = self._certain.get(key)
            if evidence is None:
                evidence = _Evidence()
                evidence.add(self._reading(key), 1.0)
                if len(self._certain) < _MAX_READINGS:
                    self._certain[key] = evidence
            return evidence
        evidence = _Evidence()
        for act, p in hypotheses:
            if p > 0.0:
                evidence.add(self._reading((act, this_slot, confirmed, offer_happened)), p)
        return evidence

    def _reading(self, key: tuple[Act, str | None, tuple[str, str] | None, bool]) -> _Reading:
        """:meth:`_read` of ``key`` = (act, this_slot, confirmed, offer_happened), remembered."""
        readings = self._readings
        reading = readings.get(key)
        if reading is None:
            reading = self._read(*key)
            if len(readings) < _MAX_READINGS:
                readings[key] = reading
        return reading

    def _update_slots(self, informs: dict[str, dict[str, float]]) -> None:
        """The focus update of every informable slot this turn informed."""
        slots = self._slots
        for slot, per_value in informs.items():
            dist = slots[slot]
            q = 1.0 - sum(per_value.values())
            if q <= 0.0:
                new = dict(per_value)
            else:
                new = {value: q * p for value, p in dist.items()}
                for value, p in per_value.items():
                    new[value] = new.get(value, 0.0) + p
            total = sum(new.values())
            if total > 1.0:
                new = {value: p / total for value, p in new.items()}
            slots[slot] = {value: p for value, p in new.items() if p > 0.0}
            self._canonical.pop(slot, None)

    def _update_method(self, turn_method: dict[str, float]) -> None:
        if not turn_method:  # the update would multiply every probability by 1.0
            return
        turn_none = 1.0 - sum(turn_method.values())
        if turn_none < 0.0:
            turn_none = 0.0
        method_dist = {m: p * turn_none for m, p in self._method.items()}
        for m, p in turn_method.items():
            method_dist[m] = method_dist.get(m, 0.0) + p
        self._method = {m: p for m, p in method_dist.items() if p > 0.0}

    def _update_requested(self, informed: set[str], requests: dict[str, float]) -> None:
        if not informed and not requests:  # nothing to drop, nothing to add
            return
        requested: dict[str, float] = {}
        for slot, p in self._requested.items():
            if slot not in informed:
                requested[slot] = p
        for slot, p in requests.items():
            requested[slot] = min(1.0, requested.get(slot, 0.0) + p)
        self._requested = requested

    def _read(self, act: Act, this_slot: str | None, confirmed: tuple[str, str] | None, offer_happened: bool) -> _Reading:
        """What one user act says: its informs and requested slots (both kept only if the ontology
        knows them), its method and its discourse act (see the module docstring).

        A function of its arguments (``confirmed``: the system's only confirmed item, else None),
        so :meth:`update` memoises it.
        """
        intents = act.intents
        informs: list[tuple[str, str]] = []
        requested: list[str] = []
        for item in act.items:
            slot, value = item.slot, item.value
            if value is None:
                if "request" in intents:
                    requested.append(slot)
                continue
            if slot == "this":
                if this_slot is None:
                    continue
                slot = this_slot
            if item.op != "=":
                continue  # denials are not evidence
            if "confirm" in intents and "inform" not in intents:
                requested.append(slot)
            elif "request" in intents and slot != "name" and "inform" not in intents:
                requested.append(slot)
            else:
                informs.append((slot, value))
        if "affirm" in intents and confirmed is not None:
            informs.append(confirmed)
        allowed = self._allowed
        informs = [(slot, value) for slot, value in informs if slot in allowed and value in allowed[slot]]
        method = _method_of(intents, informs, bool(requested) and offer_happened)
        name = next((_DISCOURSE[c] for c in _DISCOURSE_ORDER if c in intents), "none")
        requestable = self._requestable
        return tuple(informs), tuple(slot for slot in requested if slot in requestable), method, name

    def _build(self, discourse: dict[str, float]) -> BeliefState:
        canon = self._canon
        # The method distribution follows from self._method (its values in its order): when
        # that is what the last belief was built from, so is the distribution.
        method_items = list(self._method.items())
        if method_items == self._method_built:
            method_dist = self.belief.method
        else:
            method = dict(self._method)
            rest = 1.0 - sum(method.values())
            method["none"] = rest if rest > 0.0 else 0.0
            total = sum(method.values())
            if total > 1.0:
                method = {m: p / total for m, p in method.items()}
            method_dist = canon.method(method)
            self._method_built = method_items
        key = tuple(discourse.items())
        discourse_dist = self._discourse.get(key)
        if discourse_dist is None:
            turn = dict(discourse)
            rest = 1.0 - sum(turn.values())
            turn["none"] = rest if rest > 0.0 else 0.0
            discourse_dist = canon.discourse_act(turn)
            if len(self._discourse) < _MAX_READINGS:
                self._discourse[key] = discourse_dist
        canonical = self._canonical
        if len(canonical) == len(self._slots):  # no slot changed: reuse the last belief's slots
            slots: Mapping[str, Mapping[str, float]] = self.belief.slots
        else:  # canonicalise only the distributions that changed
            parts = {}
            for slot, dist in self._slots.items():
                part = canonical.get(slot)
                parts[slot] = part if part is not None else canon.slot(slot, dist)
            slots = canon.slots(parts)
            self._canonical = dict(slots)
        return canon.belief(
            slots,
            method_dist,
            discourse_dist,
            canon.requested(self._requested),
            last_offered=self._last_offered,
            offer_happened=self._last_offered is not None,
            last_informed_no_venue=self._last_no_venue,
            last_act_offered=self._last_act_offered,
            offered_since_no_venue=self._offered,
            alternatives_requested=self._alternatives_requested,
        )


#: What one user act says: (informs, requested slots, method, discourse act).
_Reading = tuple[tuple[tuple[str, str], ...], tuple[str, ...], str, str]


class _Evidence:
    """This turn's summed confidences: per slot and value informed, per slot requested, per
    method and per discourse act."""

    __slots__ = ("informs", "requests", "methods", "discourse")

    def __init__(self) -> None:
        self.informs: dict[str, dict[str, float]] = {}
        self.requests: dict[str, float] = {}
        self.methods: dict[str, float] = {}
        self.discourse: dict[str, float] = {}

    def add(self, reading: _Reading, p: float) -> None:
        informs, requested_slots, method, name = reading
        for slot, value in informs:
            per_value = self.informs.setdefault(slot, {})
            per_value[value] = per_value.get(value, 0.0) + p
        for slot in requested_slots:
            self.requests[slot] = self.requests.get(slot, 0.0) + p
        if method != "none":
            self.methods[method] = self.methods.get(method, 0.0) + p
        if name != "none":
            self.discourse[name] = self.discourse.get(name, 0.0) + p


def _hypotheses(user: Act | Hypotheses | None) -> Hypotheses:
    """The user's turn as an n-best list (validated when it is one)."""
    if user is None:
        return ((_SILENCE, 1.0),)
    if isinstance(user, Act):
        return ((user, 1.0),)
    total = 0.0
    for position, entry in enumerate(user):
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], Act)):
            raise ValueError(f"user hypothesis {position} must be an (Act, confidence) pair, got {entry!r}")
        p = entry[1]
        if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"user hypothesis {position} ({entry[0]}): confidence must be in [0, 1], got {p!r}")
        total += p
    if total > 1.0 + 1e-9:
        raise ValueError(f"user hypotheses: confidences sum to {total!r}, more than 1")
    return user


def _method_of(intents: tuple[str, ...], informs: list[tuple[str, str]], asked_after_offer: bool) -> str:
    """The method of one user act (the first rule of the module docstring that applies)."""
    if "reqalts" in intents:
        return "byalternatives"
    if "bye" in intents:
        return "finished"
    if informs:
        return "byname" if any(slot == "name" for slot, _ in informs) else "byconstraints"
    if "restart" in intents:
        return "restart"
    if asked_after_offer:
        return "byname"
    return "none"


_SILENCE = Act("null")
