"""The focus belief tracker: turns the dialogue so far into a :class:`~contexts.belief.BeliefState`.

At every system decision point the tracker folds the last system act and the user's act
(an n-best list of ``(act, confidence)`` hypotheses; Environment 1 has no semantic errors,
so the simulator passes one hypothesis with confidence 1) into the belief:

* **Informable slot** s, with ``u(v)`` the summed confidence of the hypotheses that give
  ``s = v`` this turn: ``q = max(0, 1 - sum_v u(v))``, ``b(v) = q * b_prev(v) + u(v)``,
  renormalised only if the values sum to more than 1; ``P(none) = 1 - sum``.
  Evidence comes from every ``slot=value`` item of a user act other than ``request`` (so
  ``inform``, ``negate(food=thai)``, ``reqalts(area=north)``, ...). A bare ``affirm()`` after
  the system's ``confirm(s=v)`` is evidence for ``s = v``. Negative evidence (items
  ``slot!=value``, or a bare ``negate()`` after ``confirm(s=v)``) multiplies ``b_prev(v)`` by
  ``1 - confidence`` first (an extension for n-best input; the simulator does not need it).
  Values outside the ontology (and slots that are not informable, like ``type``) are ignored.
* **Method**: each hypothesis has a turn method — ``reqalts`` -> byalternatives, ``bye`` ->
  finished, ``restart`` -> restart, ``inform`` (or any slot evidence) -> byname if it names
  a venue, else byconstraints; a ``request`` after an offer -> byname; anything else none.
  Non-none methods keep ``M_prev(m) * turn_none + turn(m)``, ``turn_none`` the turn's
  none mass; ``P(none)`` is the remainder.
* **Discourse act**: this turn's only (hello, bye, thankyou, ack, repeat, silence or none).
* **Requested slot** r: ``p(r) = clip((1 - [system informed r last turn]) * p_prev(r) + u(r), 0, 1)``.
* **History**: the last offered venue, whether an offer happened, whether the last system
  act was ``inform(name=none, ...)``. A system ``restart()`` resets everything.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from contexts.belief import BeliefState
from simscore.acts import Act

if TYPE_CHECKING:
    from contexts.domain import Ontology

__all__ = ["FocusTracker", "Hypotheses"]

#: An n-best list of user-act hypotheses with confidences (summing to at most 1).
Hypotheses = Sequence[tuple[Act, float]]

_DISCOURSE = {
    "hello": "hello",
    "bye": "bye",
    "thankyou": "thankyou",
    "ack": "ack",
    "repeat": "repeat",
    "silence": "silence",
    "null": "silence",
}
_NOT_EVIDENCE = frozenset(("request", "confirm"))
_SPECIAL = frozenset(("none", "dontcare"))


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
        Every venue name the system offered in this dialogue, in order.
    """

    def __init__(self, ontology: Ontology) -> None:
        self.ontology = ontology
        self._informable = tuple(ontology.informable)
        self._allowed = {slot: frozenset(values) | {"dontcare"} for slot, values in ontology.informable.items()}
        self._requestable = frozenset(ontology.requestable)
        self.reset()

    def reset(self) -> BeliefState:
        """Start a new dialogue; returns the turn-0 belief (all mass on none)."""
        self._slots: dict[str, dict[str, float]] = {slot: {} for slot in self._informable}
        self._method: dict[str, float] = {}
        self._requested: dict[str, float] = {}
        self._last_offered: str | None = None
        self._offered: list[str] = []
        self._last_no_venue = False
        self.belief = self._build({})
        return self.belief

    @property
    def offered(self) -> tuple[str, ...]:
        return tuple(self._offered)

    def update(self, system_act: Act | None, user: Act | Hypotheses | None) -> BeliefState:
        """Fold one exchange into the belief and return the new belief.

        Parameters
        ----------
        system_act : simscore.Act or None
            The system's previous act (None if the user spoke first).
        user : simscore.Act, sequence of (Act, float), or None
            The user's act (confidence 1), an n-best list, or None for silence.

        Raises
        ------
        ValueError
            If a confidence is not in [0, 1] or the confidences sum to more than 1.
        """
        if user is None:
            hypotheses: Sequence[tuple[Act, float]] = ((_SILENCE, 1.0),)
        elif isinstance(user, Act):
            hypotheses = ((user, 1.0),)
        else:
            hypotheses = user
            total = 0.0
            for position, entry in enumerate(hypotheses):
                if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], Act)):
                    raise ValueError(f"user hypothesis {position} must be an (Act, confidence) pair, got {entry!r}")
                p = entry[1]
                if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
                    raise ValueError(f"user hypothesis {position} ({entry[0]}): confidence must be in [0, 1], got {p!r}")
                total += p
            if total > 1.0 + 1e-9:
                raise ValueError(f"user hypotheses: confidences sum to {total!r}, more than 1")

        # -- the system's last act: history, requested-slot resets, confirmed values -----
        informed: set[str] = set()
        confirmed: list[tuple[str, str]] = []
        self._last_no_venue = False
        if system_act is not None:
            intents = system_act.intents
            if "restart" in intents:
                self.reset()
            if "inform" in intents:
                for item in system_act.items:
                    if item.op != "=":
                        continue
                    informed.add(item.slot)
                    if item.slot == "name" and item.value is not None:
                        if item.value == "none":
                            self._last_no_venue = True
                        else:
                            self._last_offered = item.value
                            self._offered.append(item.value)
            elif "confirm" in intents:
                confirmed = [(i.slot, i.value) for i in system_act.items if i.op == "=" and i.value is not None]
        offer_happened = bool(self._offered)

        # -- evidence from the user's hypotheses ------------------------------------------
        evidence: dict[str, dict[str, float]] = {}
        negative: list[tuple[str, str, float]] = []
        requests: dict[str, float] = {}
        turn_method: dict[str, float] = {}
        discourse: dict[str, float] = {}
        allowed = self._allowed
        for act, p in hypotheses:
            if p <= 0.0:
                continue
            intents = act.intents
            gave_value = False
            named_venue = False
            for item in act.items:
                slot, value = item.slot, item.value
                if value is None:
                    if slot in self._requestable and "request" in intents:
                        requests[slot] = requests.get(slot, 0.0) + p
                    continue
                if slot not in allowed or value not in allowed[slot]:
                    continue
                if item.op == "!=":
                    negative.append((slot, value, p))
                    continue
                if _NOT_EVIDENCE.isdisjoint(intents) or "inform" in intents:
                    per_value = evidence.setdefault(slot, {})
                    per_value[value] = per_value.get(value, 0.0) + p
                    gave_value = True
                    if slot == "name" and value not in _SPECIAL:
                        named_venue = True
            if confirmed and not act.items:
                if "affirm" in intents:
                    for slot, value in confirmed:
                        if slot in allowed and value in allowed[slot]:
                            per_value = evidence.setdefault(slot, {})
                            per_value[value] = per_value.get(value, 0.0) + p
                elif "negate" in intents or "deny" in intents:
                    negative.extend((slot, value, p) for slot, value in confirmed if slot in allowed)
            if "reqalts" in intents:
                method = "byalternatives"
            elif "bye" in intents:
                method = "finished"
            elif "restart" in intents:
                method = "restart"
            elif "inform" in intents or gave_value:
                method = "byname" if named_venue else "byconstraints"
            elif "request" in intents and offer_happened:
                method = "byname"
            else:
                method = "none"
            if method != "none":
                turn_method[method] = turn_method.get(method, 0.0) + p
            if "bye" in intents:
                name = "bye"
            else:
                name = "none"
                for intent in intents:
                    mapped = _DISCOURSE.get(intent)
                    if mapped is not None:
                        name = mapped
                        break
            if name != "none":
                discourse[name] = discourse.get(name, 0.0) + p

        # -- informable slots: negative evidence, then the focus update ------------------------
        slots = self._slots
        for slot, value, p in negative:
            dist = slots[slot]
            if value in dist:
                kept = dist[value] * (1.0 - p)
                if kept > 0.0:
                    dist[value] = kept
                else:
                    del dist[value]
        for slot, per_value in evidence.items():
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

        # -- method ----------------------------------------------------------------------------
        turn_none = 1.0 - sum(turn_method.values())
        if turn_none < 0.0:
            turn_none = 0.0
        method_dist = {m: p * turn_none for m, p in self._method.items()}
        for m, p in turn_method.items():
            method_dist[m] = method_dist.get(m, 0.0) + p
        self._method = {m: p for m, p in method_dist.items() if p > 0.0}

        # -- requested slots ----------------------------------------------------------------
        requested: dict[str, float] = {}
        for slot, p in self._requested.items():
            if slot not in informed:
                requested[slot] = p
        for slot, p in requests.items():
            requested[slot] = min(1.0, requested.get(slot, 0.0) + p)
        self._requested = requested

        self.belief = self._build(discourse)
        return self.belief

    def _build(self, discourse: dict[str, float]) -> BeliefState:
        method = dict(self._method)
        rest = 1.0 - sum(method.values())
        method["none"] = rest if rest > 0.0 else 0.0
        total = sum(method.values())
        if total > 1.0:
            method = {m: p / total for m, p in method.items()}
        turn = dict(discourse)
        rest = 1.0 - sum(turn.values())
        turn["none"] = rest if rest > 0.0 else 0.0
        return BeliefState(
            slots=self._slots,
            method=method,
            discourse_act=turn,
            requested=self._requested,
            last_offered=self._last_offered,
            offer_happened=bool(self._offered),
            last_informed_no_venue=self._last_no_venue,
        )


_SILENCE = Act("null")
