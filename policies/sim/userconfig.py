"""What the simulated user wants and how it behaves: its goal, its configuration, its counters.

:class:`UserGoal` is the user's goal (constraints, requests, the venue it settled on);
:class:`UserSimulatorConfig` the behaviour of :class:`~policies.sim.usersim.AgendaUser` (PyDial's
Environment 1 by default; the behaviours and their PyDial names in :data:`BEHAVIOURS`);
:class:`UserCounters` what the user did and noticed during a dialogue (the inputs of the
interaction-quality estimate).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contexts import FrozenDict
from contexts.domain import VENUE_FIELDS
from simscore.checks import check_int, check_number, check_probability

if TYPE_CHECKING:
    from contexts.domain import Venue

__all__ = ["UserGoal", "UserSimulatorConfig", "UserCounters", "BEHAVIOURS"]

_DONTCARE = "dontcare"
_SPECIAL = frozenset((_DONTCARE, "none"))
_REQUEST_POOL = ("addr", "name", "phone", "postcode", "signature", "description")


@dataclass(frozen=True)
class UserGoal:
    """What the simulated user wants (immutable; the user replaces it when it changes its mind).

    Attributes
    ----------
    constraints : mapping of str to str
        Slot → wanted value or ``"dontcare"`` (stored read-only).
    requests : tuple of str
        Slots the user wants to know, ``"name"`` first.
    name : str or None
        ``name = X``: the venue the user has accepted.
    excluded : tuple of str
        ``name != X``: venues the user has rejected.

    Examples
    --------
    >>> g = UserGoal({"food": "thai", "area": "dontcare"}, ("name", "phone"))
    >>> dict(g.relaxed("food").constraints)
    {'food': 'dontcare', 'area': 'dontcare'}
    >>> g.excluding("the pot").excluded, g.with_name("the pot").name
    (('the pot',), 'the pot')
    """

    constraints: Mapping[str, str]
    requests: tuple[str, ...] = ("name",)
    name: str | None = None
    excluded: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.constraints, Mapping):
            raise TypeError(f"constraints must be a mapping of slot -> value, got {type(self.constraints).__name__}")
        object.__setattr__(self, "constraints", FrozenDict(self.constraints))
        object.__setattr__(self, "requests", tuple(self.requests))
        object.__setattr__(self, "excluded", tuple(self.excluded))

    def _replace(self, **changes: Any) -> UserGoal:
        """``dataclasses.replace`` for the methods below, whose changes are already in the stored
        form (a FrozenDict, tuples of str): the copy skips ``__post_init__``'s conversions."""
        goal = object.__new__(UserGoal)
        fields = goal.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return goal

    def with_constraint(self, slot: str, value: str) -> UserGoal:
        """A copy with ``slot`` set to ``value``."""
        constraints = dict(self.constraints)
        constraints[slot] = value
        return self._replace(constraints=FrozenDict(constraints))

    def relaxed(self, slot: str) -> UserGoal:
        """A copy with ``slot`` set to ``dontcare``."""
        return self.with_constraint(slot, _DONTCARE)

    def with_name(self, name: str | None) -> UserGoal:
        """A copy whose ``name =`` constraint is ``name`` (None removes it)."""
        return self._replace(name=name)

    def excluding(self, name: str) -> UserGoal:
        """A copy that also rejects the venue ``name``."""
        excluded = self.excluded if name in self.excluded else (*self.excluded, name)
        return self._replace(excluded=excluded)

    def without_names(self) -> UserGoal:
        """A copy without ``name =`` and ``name !=`` constraints."""
        return self._replace(name=None, excluded=())

    def with_request(self, slot: str) -> UserGoal:
        """A copy that also requests ``slot``."""
        return self if slot in self.requests else self._replace(requests=(*self.requests, slot))

    def accepts(self, venue: Venue) -> bool:
        """Whether ``venue`` satisfies every constraint, the name constraints included."""
        if venue.name in self.excluded or (self.name is not None and venue.name != self.name):
            return False
        for slot, value in self.constraints.items():
            if value not in _SPECIAL and venue.get(slot) != value:
                return False
        return True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"constraints": dict(self.constraints), "requests": list(self.requests)}
        if self.name is not None:
            out["name"] = self.name
        if self.excluded:
            out["excluded"] = list(self.excluded)
        return out


def _check_range(name: str, value: object, *, low: float, high: float, integer: bool = False) -> tuple:
    """``value`` as a ``(low, high)`` tuple of ints (``integer``) or floats within ``[low, high]``."""
    if not (isinstance(value, tuple) and len(value) == 2):
        raise ValueError(f"{name} must be a (low, high) tuple, got {value!r}")
    a, b = (
        check_int(f"{name}[{i}]", v, error=ValueError) if integer else check_number(f"{name}[{i}]", v, error=ValueError)
        for i, v in enumerate(value)
    )
    if not low <= a <= b <= high:
        raise ValueError(f"{name} must satisfy {low} <= low <= high <= {high}, got {value!r}")
    return (a, b)


#: The per-dialogue behaviour probabilities: field name → PyDial's parameter name.
BEHAVIOURS: dict[str, str] = {
    "inform_combination": "InformCombination",
    "affirm_combination": "AffirmCombination",
    "comb_affirm_with_agenda_item": "CombAffirmWithAgdItem",
    "greeting": "Greeting",
    "reqalts_after_first_offer": "ReqAltsAfterVenRec1",
    "change_goal_after_first_offer": "ReqAltsAfterVenRec2",
    "constraint_relax": "ConstraintRelax",
    "tell_about_change": "TellAboutChange",
    "bye_or_start_over": "ByeOrStartOver",
    "deal_with_pending": "DealWithPending",
    "add_slot_to_request": "AddSlotToReq",
    "add_venue_name_to_request": "AddVenueNameToRequest",
    "no_slot_with_dontcare": "NoSlotWithDontcare",
    "inform_to_confirm": "InformToConfirm",
    "confirm_random_constraint": "ConfirmRandomConstr",
    "overrule_correction": "OverruleCorrection",
    "correcting_act_negate": "CorrectingAct1",
    "correcting_act_deny": "CorrectingAct2",
    "thank": "ThankAck1",
    "ack": "ThankAck2",
    "no_after_reqmore": "NoAfterReqmore",
    "yes_after_reqmore": "YesAfterReqmore",
}


@dataclass(frozen=True)
class UserSimulatorConfig:
    """Parameters of the simulated user; the defaults are PyDial's Environment 1.

    Every behaviour probability is a ``(low, high)`` range; each dialogue draws its own value
    uniformly from it (PyDial's ``sampledUM.cfg``). Set both ends to fix a value, ``(0, 0)``
    to switch a behaviour off. :data:`BEHAVIOURS` maps the names to PyDial's; the module
    docstring says what each one does.

    Parameters
    ----------
    goal_matches : (int, int)
        A goal is kept only if this many venues (inclusive) match it.
    goal_attempts : int
        Goals to draw before giving up (:class:`SimulationError`).
    goal_sampling : {"uniform", "venue"}
        ``"uniform"`` (PyDial): each slot's value uniform over the ontology's values plus
        dontcare. ``"venue"``: a random venue's values, each slot dontcare with
        ``goal_dontcare_prob`` (simscore 0.1's easier goals).
    goal_dontcare_prob : float
        Used with ``goal_sampling="venue"`` only.
    extra_requests : (int, int)
        How many slots are drawn from ``request_pool`` besides ``name``.
    request_pool : tuple of str
        Slots the extra requests are drawn from (PyDial's includes ``name``).
    patience : (int, int)
        Patience at the start of a dialogue.
    check_unmentioned_constraints : bool
        Check an offered venue on every constraint, not only on the slots the system mentions
        (an omniscient user; PyDial's user checks only what it is told).
    new_goal_scenarios : bool
        PyDial's ``usenewgoalscenarios``: on ``inform(name=none)`` change the goal and ask for
        alternatives (True, Environment 1) or say bye / start over (``bye_or_start_over``).
    inform_combination, affirm_combination, comb_affirm_with_agenda_item, greeting, \
reqalts_after_first_offer, change_goal_after_first_offer, constraint_relax, \
tell_about_change, bye_or_start_over, deal_with_pending, add_slot_to_request, \
add_venue_name_to_request, no_slot_with_dontcare, inform_to_confirm, \
confirm_random_constraint, overrule_correction, correcting_act_negate, correcting_act_deny, \
thank, ack, no_after_reqmore, yes_after_reqmore : (float, float)
        Behaviour probabilities (see the module docstring).

    Examples
    --------
    >>> UserSimulatorConfig().greeting, UserSimulatorConfig.easy().greeting
    ((0.3, 0.7), (0.0, 0.0))
    """

    goal_matches: tuple[int, int] = (2, 3)
    goal_attempts: int = 100_000
    goal_sampling: str = "uniform"
    goal_dontcare_prob: float = 0.15
    extra_requests: tuple[int, int] = (0, 2)
    request_pool: tuple[str, ...] = _REQUEST_POOL
    patience: tuple[int, int] = (4, 5)
    check_unmentioned_constraints: bool = False
    new_goal_scenarios: bool = True
    inform_combination: tuple[float, float] = (0.2, 0.7)
    affirm_combination: tuple[float, float] = (0.2, 0.7)
    comb_affirm_with_agenda_item: tuple[float, float] = (0.01, 0.2)
    greeting: tuple[float, float] = (0.3, 0.7)
    reqalts_after_first_offer: tuple[float, float] = (0.01, 0.3)
    change_goal_after_first_offer: tuple[float, float] = (0.01, 0.3)
    constraint_relax: tuple[float, float] = (0.5, 0.8)
    tell_about_change: tuple[float, float] = (0.4, 0.6)
    bye_or_start_over: tuple[float, float] = (0.2, 0.5)
    deal_with_pending: tuple[float, float] = (0.4, 0.6)
    add_slot_to_request: tuple[float, float] = (0.2, 0.4)
    add_venue_name_to_request: tuple[float, float] = (0.01, 0.2)
    no_slot_with_dontcare: tuple[float, float] = (0.7, 0.9)
    inform_to_confirm: tuple[float, float] = (0.01, 0.2)
    confirm_random_constraint: tuple[float, float] = (0.01, 0.3)
    overrule_correction: tuple[float, float] = (0.01, 0.2)
    correcting_act_negate: tuple[float, float] = (0.3, 0.5)
    correcting_act_deny: tuple[float, float] = (0.3, 0.5)
    thank: tuple[float, float] = (0.01, 0.2)
    ack: tuple[float, float] = (0.01, 0.2)
    no_after_reqmore: tuple[float, float] = (0.8, 0.9)
    yes_after_reqmore: tuple[float, float] = (0.2, 0.3)

    def __post_init__(self) -> None:
        checked: dict[str, Any] = {
            "goal_matches": _check_range("goal_matches", self.goal_matches, low=1, high=10**9, integer=True),
            "goal_attempts": check_int("goal_attempts", self.goal_attempts, minimum=1, error=ValueError),
            "goal_dontcare_prob": check_probability("goal_dontcare_prob", self.goal_dontcare_prob, error=ValueError),
        }
        if self.goal_sampling not in ("uniform", "venue"):
            raise ValueError(f"goal_sampling must be 'uniform' or 'venue', got {self.goal_sampling!r}")
        if not isinstance(self.request_pool, tuple) or not self.request_pool:
            raise ValueError(f"request_pool must be a non-empty tuple of slot names, got {self.request_pool!r}")
        for slot in self.request_pool:
            if slot not in VENUE_FIELDS:
                raise ValueError(f"request_pool: {slot!r} is not a venue field")
        checked["extra_requests"] = _check_range(
            "extra_requests", self.extra_requests, low=0, high=len(self.request_pool), integer=True
        )
        checked["patience"] = _check_range("patience", self.patience, low=1, high=1000, integer=True)
        for name in ("check_unmentioned_constraints", "new_goal_scenarios"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in BEHAVIOURS:
            checked[name] = _check_range(name, getattr(self, name), low=0.0, high=1.0)
        for name, value in checked.items():  # ints and floats, also when given numpy numbers
            object.__setattr__(self, name, value)
        for a, b in (("reqalts_after_first_offer", "change_goal_after_first_offer"),
                     ("correcting_act_negate", "correcting_act_deny"), ("thank", "ack")):
            if getattr(self, a)[1] + getattr(self, b)[1] > 1.0:
                raise ValueError(f"{a} and {b} are alternatives: their upper ends must sum to at most 1")

    @classmethod
    def easy(cls) -> UserSimulatorConfig:
        """A cooperative, predictable user close to simscore 0.1's (the easier world).

        Goals from a venue, every constraint checked against an offer, none of PyDial's
        extra behaviours (greetings, alternatives, goal changes, thanks, confirms, pending
        items), ``bye()`` as soon as everything is known.
        """
        off = (0.0, 0.0)
        behaviours: dict[str, Any] = {
            name: off for name in BEHAVIOURS if name not in ("inform_combination", "affirm_combination",
                                                             "constraint_relax", "correcting_act_negate",
                                                             "correcting_act_deny")
        }
        return cls(
            goal_sampling="venue",
            request_pool=("addr", "phone", "postcode", "signature", "description"),
            check_unmentioned_constraints=True,
            **behaviours,
        )

    def to_json(self) -> dict[str, object]:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self)}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> UserSimulatorConfig:
        """A configuration from field values (e.g. :meth:`to_json` output or ``make`` kwargs).

        Unnamed fields keep their defaults; lists become tuples; an unknown name is an error.

        >>> UserSimulatorConfig.from_mapping({"patience": [2, 3]}).patience
        (2, 3)
        >>> UserSimulatorConfig.from_mapping({"patiense": (2, 3)})
        Traceback (most recent call last):
        ...
        ValueError: unknown user config field(s) ['patiense'] (did you mean 'patience'?)
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"user config must be a mapping of field -> value, got {type(data).__name__}")
        fields = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(fields))
        if unknown:
            close = difflib.get_close_matches(unknown[0], fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"unknown user config field(s) {unknown}{hint}")
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**values)


@dataclass
class UserCounters:
    """What the user did and noticed during a dialogue (inputs of the interaction-quality estimate).

    Attributes
    ----------
    offers : int
        Distinct venues the system offered.
    rejected_offers : int
        Offers the user turned down (asked for alternatives).
    corrections : int
        Times the user corrected a value the system got wrong.
    goal_changes : int
        Times the user changed a constraint (after "no venue" or on the first offer).
    user_confirms : int
        Times the user asked the system to confirm a constraint.
    hung_up : bool
        The user ran out of patience.
    informed_slots : set of str
        Constraint slots the user has given a value for (to count re-asked slots).
    """

    offers: int = 0
    rejected_offers: int = 0
    corrections: int = 0
    goal_changes: int = 0
    user_confirms: int = 0
    hung_up: bool = False
    informed_slots: set[str] = field(default_factory=set)
