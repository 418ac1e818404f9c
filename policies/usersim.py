"""Agenda-based simulated user (after Schatzmann & Young 2009) for the restaurant-search domain.

At the start of a dialogue the user draws

* a **goal**: for each system-requestable slot (food, pricerange, area) a value or
  ``dontcare``, built from a random venue and kept only if 2-3 venues match
  (:attr:`UserSimulatorConfig.goal_matches`); plus the slots to request: always ``name``, and
  0-2 of addr, phone, postcode, signature, description;
* **behaviour probabilities** uniformly from the configured ranges (how often informs are
  merged into one turn, how often an offer is rejected in favour of alternatives, ...) and a
  **patience** (4-5);
* an **agenda**, a stack: ``inform(type=restaurant)`` on top, one inform per goal constraint
  (random order), ``bye()`` at the bottom.

Reactions to the system act:

=====================  ====================================================================
system act             user act
=====================  ====================================================================
``hello()``            pop the agenda (merging consecutive informs)
``request(s)``         inform ``s`` from the goal (``dontcare`` if unconstrained), maybe merged
                       with further informs from the agenda
``confirm(s=v)``       right: ``affirm()``; wrong: hang up with probability
                       ``(1 - patience/max_patience)**2``, else ``negate(s=goal)``,
                       ``deny(s!=v,s=goal)`` or ``inform(s=goal)``
``select(s=a,s=b)``    inform ``s`` from the goal
``inform(name=X,..)``  an offer: if X breaks a constraint, sometimes relax that constraint,
                       else ask for alternatives (``reqalts()``) or re-inform the broken
                       constraints; a good venue: sometimes ask for alternatives anyway,
                       else request the open slots (merged), or ``bye()`` when all are known
``inform(name=none)``  wrong constraints: correct them; if a good venue was offered before:
                       go on with it; else relax one constraint to ``dontcare`` or ``bye()``
``reqmore()``          ``bye()`` when done, else carry on with the agenda
``repeat()``           repeat the last user act
``restart()``          start the agenda afresh
anything else          carry on with the agenda
=====================  ====================================================================

Patience drops by one whenever the system repeats its previous act; at 0 the user hangs up
(``bye()``). All randomness comes from the :class:`numpy.random.Generator` passed to
:meth:`AgendaUser.reset`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from contexts import FrozenDict
from contexts.domain import VENUE_FIELDS
from policies.domain_cache import domain_cache
from simscore.acts import Act, Item
from simscore.errors import SimulationError

if TYPE_CHECKING:
    from contexts.domain import Domain, Venue

__all__ = ["UserGoal", "UserSimulatorConfig", "UserCounters", "AgendaUser", "SimulationError"]

_EXTRA_REQUESTS = ("addr", "phone", "postcode", "signature", "description")


@dataclass(frozen=True)
class UserGoal:
    """What the simulated user wants.

    Attributes
    ----------
    constraints : mapping of str to str
        Slot -> wanted value or ``"dontcare"``, for every goal slot (stored read-only).
    requests : tuple of str
        Slots the user wants to know, ``"name"`` first.

    Examples
    --------
    >>> g = UserGoal({"food": "thai", "area": "dontcare"}, ("name", "phone"))
    >>> dict(g.relaxed("food").constraints)
    {'food': 'dontcare', 'area': 'dontcare'}
    """

    constraints: Mapping[str, str]
    requests: tuple[str, ...] = ("name",)

    def __post_init__(self) -> None:
        if not isinstance(self.constraints, Mapping):
            raise TypeError(f"constraints must be a mapping of slot -> value, got {type(self.constraints).__name__}")
        object.__setattr__(self, "constraints", FrozenDict(self.constraints))
        object.__setattr__(self, "requests", tuple(self.requests))

    def relaxed(self, slot: str) -> UserGoal:
        """A copy with ``slot`` set to ``dontcare``."""
        constraints = dict(self.constraints)
        constraints[slot] = "dontcare"
        return UserGoal(constraints, self.requests)

    def to_json(self) -> dict[str, object]:
        return {"constraints": dict(self.constraints), "requests": list(self.requests)}


def _check_range(name: str, value: object, *, low: float, high: float, integer: bool = False) -> tuple:
    if not (isinstance(value, tuple) and len(value) == 2):
        raise ValueError(f"{name} must be a (low, high) tuple, got {value!r}")
    a, b = value
    kinds = (int,) if integer else (int, float)
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, kinds):
            raise ValueError(f"{name} must hold {'integers' if integer else 'numbers'}, got {value!r}")
    if not low <= a <= b <= high:
        raise ValueError(f"{name} must satisfy {low} <= low <= high <= {high}, got {value!r}")
    return value


@dataclass(frozen=True)
class UserSimulatorConfig:
    """Parameters of the simulated user (per-dialogue probabilities are drawn from the ranges).

    Parameters
    ----------
    goal_matches : (int, int)
        A goal is kept only if this many venues (inclusive) match it.
    goal_dontcare_prob : float
        Probability that a goal slot is ``dontcare`` when a goal is drawn.
    goal_attempts : int
        Goals to draw before giving up (:class:`SimulationError`).
    extra_requests : (int, int)
        How many slots besides ``name`` the user requests.
    request_slots : tuple of str
        The slots those are drawn from.
    merge_prob : (float, float)
        Probability of merging the next agenda inform into the current turn.
    patience : (int, int)
        Patience at the start of a dialogue.
    reqalts_good_offer_prob : (float, float)
        Probability (once per dialogue) of asking for alternatives to a good offer.
    reqalts_bad_offer_prob : (float, float)
        Probability of answering an offer that breaks the goal with ``reqalts()`` (else the
        broken constraints are informed again).
    relax_bad_offer_prob : (float, float)
        Probability of accepting an offer that breaks the goal by relaxing the broken slots.
    relax_no_venue_prob : (float, float)
        Probability of relaxing a constraint (else saying bye) when told no venue matches.
    """

    goal_matches: tuple[int, int] = (2, 3)
    goal_dontcare_prob: float = 0.15
    goal_attempts: int = 1000
    extra_requests: tuple[int, int] = (0, 2)
    request_slots: tuple[str, ...] = _EXTRA_REQUESTS
    merge_prob: tuple[float, float] = (0.2, 0.7)
    patience: tuple[int, int] = (4, 5)
    reqalts_good_offer_prob: tuple[float, float] = (0.0, 0.1)
    reqalts_bad_offer_prob: tuple[float, float] = (0.3, 0.7)
    relax_bad_offer_prob: tuple[float, float] = (0.0, 0.1)
    relax_no_venue_prob: tuple[float, float] = (0.5, 1.0)

    def __post_init__(self) -> None:
        _check_range("goal_matches", self.goal_matches, low=1, high=10**9, integer=True)
        if not isinstance(self.goal_dontcare_prob, (int, float)) or not 0.0 <= self.goal_dontcare_prob <= 1.0:
            raise ValueError(f"goal_dontcare_prob must be in [0, 1], got {self.goal_dontcare_prob!r}")
        if isinstance(self.goal_attempts, bool) or not isinstance(self.goal_attempts, int) or self.goal_attempts < 1:
            raise ValueError(f"goal_attempts must be a positive integer, got {self.goal_attempts!r}")
        if not isinstance(self.request_slots, tuple) or not all(isinstance(s, str) for s in self.request_slots):
            raise ValueError(f"request_slots must be a tuple of slot names, got {self.request_slots!r}")
        for slot in self.request_slots:
            if slot not in VENUE_FIELDS or slot == "name":
                raise ValueError(f"request_slots: {slot!r} is not a venue field other than 'name'")
        _check_range("extra_requests", self.extra_requests, low=0, high=len(self.request_slots), integer=True)
        _check_range("patience", self.patience, low=1, high=1000, integer=True)
        for name in (
            "merge_prob",
            "reqalts_good_offer_prob",
            "reqalts_bad_offer_prob",
            "relax_bad_offer_prob",
            "relax_no_venue_prob",
        ):
            _check_range(name, getattr(self, name), low=0.0, high=1.0)

    def to_json(self) -> dict[str, object]:
        return {name: (list(v) if isinstance(v, tuple) else v) for name, v in self.__dict__.items()}


@dataclass
class _Behaviour:
    merge: float
    reqalts_good: float
    reqalts_bad: float
    relax_bad: float
    relax_no_venue: float
    patience: int
    max_patience: int


@dataclass
class UserCounters:
    """What the user noticed during a dialogue (inputs of the interaction-quality estimate)."""

    rejected_offers: int = 0
    relaxed_slots: int = 0
    hung_up: bool = False
    offers: int = 0
    informed_slots: set[str] = field(default_factory=set)


class AgendaUser:
    """The simulated user of one domain (state: the current dialogue).

    Parameters
    ----------
    domain : contexts.domain.Domain
    config : UserSimulatorConfig, optional

    Examples
    --------
    >>> from contexts.domain import default_domain
    >>> user = AgendaUser(default_domain())
    >>> user.reset(np.random.default_rng(0))
    >>> act = user.respond(Act("hello"))
    >>> act.intents, ("type", "=", "restaurant") in [(i.slot, i.op, i.value) for i in act.items]
    (('inform',), True)
    """

    def __init__(self, domain: Domain, *, config: UserSimulatorConfig | None = None) -> None:
        self.domain = domain
        self.config = config if config is not None else UserSimulatorConfig()
        self.index = domain_cache(domain).index
        self.goal_slots = tuple(s for s in domain.ontology.system_requestable if s in VENUE_FIELDS)
        if not self.goal_slots:
            raise SimulationError(
                f"domain {domain.name!r} has no system-requestable slot that is a venue field: nothing to search by"
            )
        self._type_item = Item("type", "=", "restaurant")
        self.goal: UserGoal | None = None

    # -- dialogue start ------------------------------------------------------------------

    def reset(self, rng: np.random.Generator, *, goal: UserGoal | None = None) -> None:
        """Start a new dialogue: draw a goal (unless given), behaviour and patience."""
        self.rng = rng
        cfg = self.config
        self.goal = goal if goal is not None else self.sample_goal(rng)
        self.initial_goal = self.goal
        uniform = rng.uniform
        patience = int(rng.integers(cfg.patience[0], cfg.patience[1] + 1))
        self.behaviour = _Behaviour(
            merge=uniform(*cfg.merge_prob),
            reqalts_good=uniform(*cfg.reqalts_good_offer_prob),
            reqalts_bad=uniform(*cfg.reqalts_bad_offer_prob),
            relax_bad=uniform(*cfg.relax_bad_offer_prob),
            relax_no_venue=uniform(*cfg.relax_no_venue_prob),
            patience=patience,
            max_patience=patience,
        )
        self.counters = UserCounters()
        self.offered: Venue | None = None
        self.informed: dict[str, str] = {}
        self.asked_alternatives = False
        self.last_system_act: Act | None = None
        self.last_act: Act | None = None
        self.finished = False
        self._fill_agenda()

    def sample_goal(self, rng: np.random.Generator) -> UserGoal:
        """Draw a goal: a random venue's values (each slot ``dontcare`` with some probability),
        kept when the number of matching venues lies in ``goal_matches``."""
        cfg = self.config
        low, high = cfg.goal_matches
        venues = self.index.venues
        if not venues:
            raise SimulationError(f"domain {self.domain.name!r} has no venues")
        index = self.index
        slots = self.goal_slots
        for _ in range(cfg.goal_attempts):
            venue = venues[int(rng.integers(len(venues)))]
            draws = rng.random(len(slots))
            constraints = {
                slot: ("dontcare" if draw < cfg.goal_dontcare_prob else str(getattr(venue, slot)))
                for slot, draw in zip(slots, draws)
            }
            if low <= index.count(constraints.items()) <= high:
                break
        else:
            raise SimulationError(
                f"no goal with {low}-{high} matching venues found in {cfg.goal_attempts} attempts "
                f"(domain {self.domain.name!r}); widen UserSimulatorConfig.goal_matches"
            )
        lo, hi = cfg.extra_requests
        k = int(rng.integers(lo, hi + 1))
        extra = [cfg.request_slots[i] for i in rng.permutation(len(cfg.request_slots))[:k]]
        return UserGoal(constraints, ("name", *extra))

    def _fill_agenda(self) -> None:
        # A stack: the end of the list is the top.
        constraints = self.goal.constraints
        order = [self.goal_slots[i] for i in self.rng.permutation(len(self.goal_slots))]
        self.agenda: list[tuple[str, Item | None]] = [("bye", None)]
        for slot in reversed(order):
            if slot in constraints:
                self.agenda.append(("inform", Item(slot, "=", constraints[slot])))
        self.agenda.append(("inform", self._type_item))

    # -- the user's turn -----------------------------------------------------------------

    def respond(self, system_act: Act) -> Act:
        """The user's act in reply to ``system_act`` (its item values drive the reaction)."""
        repeated = system_act == self.last_system_act
        self.last_system_act = system_act
        behaviour = self.behaviour
        if repeated:
            behaviour.patience -= 1
            if behaviour.patience <= 0:
                return self._hang_up()
        intent = system_act.intents[0] if len(system_act.intents) == 1 else "+".join(system_act.intents)
        if intent == "request":
            act = self._answer([item.slot for item in system_act.items])
        elif intent == "confirm":
            act = self._confirm(system_act)
        elif intent == "select":
            act = self._answer(list(dict.fromkeys(item.slot for item in system_act.items)))
        elif intent == "inform":
            act = self._inform(system_act)
        elif intent == "reqmore":
            act = self._bye() if self.done else self._carry_on()
        elif intent == "repeat" and self.last_act is not None:
            act = self.last_act
        elif intent == "restart":
            self._fill_agenda()
            act = self._carry_on()
        else:
            act = self._carry_on()
        self.last_act = act
        if "bye" in act.intents:
            self.finished = True
        for item in act.items:
            if item.op == "=" and item.slot in self.goal.constraints:
                self.counters.informed_slots.add(item.slot)
        return act

    @property
    def done(self) -> bool:
        """Whether a goal-satisfying venue was offered and every requested slot of it informed."""
        venue = self.offered
        if venue is None or not self.index.satisfies(venue, self.goal.constraints):
            return False
        informed = self.informed
        return all(slot in informed for slot in self.goal.requests)

    def _hang_up(self) -> Act:
        self.counters.hung_up = True
        self.finished = True
        act = Act("bye")
        self.last_act = act
        return act

    def _bye(self) -> Act:
        return Act("bye")

    def _goal_item(self, slot: str) -> Item:
        return Item(slot, "=", self.goal.constraints.get(slot, "dontcare"))

    def _drop_from_agenda(self, slots: set[str]) -> None:
        self.agenda = [e for e in self.agenda if not (e[0] == "inform" and e[1] is not None and e[1].slot in slots)]

    def _merge_informs(self, items: list[Item]) -> None:
        """Pop further informs from the agenda, each with the merge probability."""
        agenda = self.agenda
        merge = self.behaviour.merge
        random = self.rng.random
        while agenda[-1][0] == "inform" and random() < merge:
            items.append(agenda.pop()[1])

    def _answer(self, slots: list[str]) -> Act:
        items = [self._goal_item(slot) for slot in slots]
        self._drop_from_agenda(set(slots))
        self._merge_informs(items)
        return Act("inform", items)

    def _carry_on(self) -> Act:
        """Next move when the system act asks for nothing specific."""
        agenda = self.agenda
        if agenda[-1][0] == "inform":
            items = [agenda.pop()[1]]
            self._merge_informs(items)
            return Act("inform", items)
        venue = self.offered
        if venue is not None and self.index.satisfies(venue, self.goal.constraints):
            return self._request_open()
        # Nothing left on the agenda but no good venue yet: restate the constraints.
        items = [Item(s, "=", v) for s, v in self.goal.constraints.items() if v != "dontcare"]
        if not items:
            items = [self._goal_item(self.goal_slots[0])]
        return Act("inform", items)

    def _request_open(self) -> Act:
        open_slots = [slot for slot in self.goal.requests if slot not in self.informed]
        if not open_slots:
            return self._bye()
        items = [Item(open_slots[0])]
        merge = self.behaviour.merge
        random = self.rng.random
        for slot in open_slots[1:]:
            if random() < merge:
                items.append(Item(slot))
            else:
                break
        return Act("request", items)

    def _confirm(self, system_act: Act) -> Act:
        wrong = []
        for item in system_act.items:
            if item.op != "=" or item.slot not in self.goal.constraints:
                continue
            if item.value != self.goal.constraints[item.slot]:
                wrong.append(item)
        if not wrong:
            return Act("affirm")
        behaviour = self.behaviour
        hang_up = (1.0 - behaviour.patience / behaviour.max_patience) ** 2
        rng = self.rng
        if rng.random() < hang_up:
            return self._hang_up()
        kind = int(rng.integers(3))
        correct = [self._goal_item(item.slot) for item in wrong]
        if kind == 0:
            return Act("negate", correct)
        if kind == 1:
            return Act("deny", [Item(i.slot, "!=", i.value) for i in wrong] + correct)
        return Act("inform", correct)

    def _inform(self, system_act: Act) -> Act:
        name = None
        for item in system_act.items:
            if item.slot == "name" and item.op == "=":
                name = item.value
                break
        if name is None:
            return self._carry_on()
        if name == "none":
            return self._no_venue(system_act)
        return self._offer(name, system_act)

    def _offer(self, name: str, system_act: Act) -> Act:
        venue = self.index.venue(name)
        goal = self.goal
        rng = self.rng
        counters = self.counters
        if venue is None:
            # Not a venue of the database: ask for something else.
            counters.rejected_offers += 1
            return Act("reqalts")
        new_offer = self.offered is None or venue.name != self.offered.name
        if new_offer:
            self.offered = venue
            self.informed = {}
            counters.offers += 1
        informed = self.informed
        for item in system_act.items:
            if item.op == "=" and item.value is not None and venue.get(item.slot) == item.value:
                informed[item.slot] = item.value
        broken = [
            slot
            for slot, value in goal.constraints.items()
            if value != "dontcare" and str(getattr(venue, slot)) != value
        ]
        behaviour = self.behaviour
        if broken:
            if rng.random() < behaviour.relax_bad:
                for slot in broken:
                    self.goal = self.goal.relaxed(slot)
                counters.relaxed_slots += len(broken)
            else:
                counters.rejected_offers += 1
                if rng.random() < behaviour.reqalts_bad:
                    return Act("reqalts")
                return Act("inform", [self._goal_item(slot) for slot in broken])
        elif new_offer and not self.asked_alternatives and rng.random() < behaviour.reqalts_good:
            self.asked_alternatives = True
            counters.rejected_offers += 1
            return Act("reqalts")
        return self._request_open()

    def _no_venue(self, system_act: Act) -> Act:
        goal = self.goal
        stated = [
            item for item in system_act.items if item.op == "=" and item.slot != "name" and item.value is not None
        ]
        wrong = [
            item.slot
            for item in stated
            if item.slot in goal.constraints and goal.constraints[item.slot] not in ("dontcare", item.value)
        ]
        if wrong:
            return Act("inform", [self._goal_item(slot) for slot in wrong])
        venue = self.offered
        if venue is not None and self.index.satisfies(venue, goal.constraints):
            return self._request_open()
        constrained = [slot for slot, value in goal.constraints.items() if value != "dontcare"]
        if constrained and self.rng.random() < self.behaviour.relax_no_venue:
            slot = constrained[int(self.rng.integers(len(constrained)))]
            self.goal = goal.relaxed(slot)
            self.counters.relaxed_slots += 1
            return Act("inform", [Item(slot, "=", "dontcare")])
        return self._bye()
