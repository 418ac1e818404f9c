"""Agenda-based simulated user of PyDial's Environment 1 (after Schatzmann & Young 2009).

The behaviour follows PyDial's hand-crafted agenda user (``UMHdcSim`` with the sampled
parameters of Environment 1); our own implementation, restated from its rules. Every
behaviour is a named parameter of :class:`UserSimulatorConfig`, drawn uniformly from its
range at the start of every dialogue (PyDial's names in brackets).

Goal
----
For each system-requestable slot (area, food, pricerange) a value drawn uniformly from the
ontology's values plus ``dontcare``; the goal is kept only if 2–3 venues match it (so goals
are uniform over the valid combinations; most food values never occur in the database and
are rejected). The user requests ``name`` and ``n ∈ {0, 1, 2}`` slots drawn from addr, name,
phone, postcode, signature, description (PyDial's pool includes ``name``, so a third of the
draws add nothing). Patience is 4 or 5.

Agenda
------
A stack: ``inform(type=restaurant)`` on top, one ``inform(slot=value)`` per constraint (random
order, dontcare ones included), ``bye()`` at the bottom. Each turn the user pops one act and may
merge the next informs into it (``inform_combination`` [InformCombination] each). The user says
``bye()`` only when it pops it: after everything on its agenda was said.

Reactions (``receive``)
-----------------------
* Patience drops whenever the system repeats its previous act (or says nothing useful); below
  1 the user hangs up.
* ``hello()``: ``hello()`` with ``greeting`` [Greeting].
* ``request(s)``: if a venue is already accepted and a request is open, the user ignores the
  question and asks ``request(name=X, r)``; otherwise it answers from the goal (pending informs
  about ``s`` first).
* ``confirm(s=v)``: wrong values are corrected (below); right ones (a dontcare goal matches any
  value) get ``affirm()``, which may carry the next pending inform (``affirm_combination``).
* ``select(s=a,s=b)``: ``inform(s=<goal value>)``.
* ``reqmore()``: with items pending, carry on (the top inform may become an affirm,
  ``comb_affirm_with_agenda_item``); all requests answered: ``negate()`` (``no_after_reqmore``)
  else ``bye()``; a venue but open requests: request them; no venue: ``affirm()``
  (``yes_after_reqmore``) or restate every constraint.
* ``inform(...)``: the user checks only the slots the system mentions. A wrong value is
  corrected with ``negate(s=v)`` / ``deny(s!=w,s=v)`` / ``inform(s=v)`` (``correcting_act_negate``,
  ``correcting_act_deny``) after a hang-up chance ``(1 - patience/max)²``, or, with
  ``overrule_correction``, the user asks to confirm another constraint instead; every
  correction forgets the answers received so far. With ``confirm_random_constraint`` per
  checked slot the user asks to confirm a constraint the system did not mention.
  On ``inform(name=none, ...)`` the user changes its goal: one mentioned slot becomes
  ``dontcare`` (``constraint_relax``) or a new, unused value, and it says
  ``reqalts(slot=value)``. On the first offer of the dialogue it may reject the venue
  (``reqalts_after_first_offer`` [ReqAltsAfterVenRec1]: ``name != X`` joins the goal,
  ``reqalts()``) or change its goal (``change_goal_after_first_offer`` [ReqAltsAfterVenRec2],
  said with ``tell_about_change``, else a bare ``reqalts()``); otherwise it accepts the venue
  (``name = X`` joins the goal), notes the informed answers, may turn its pending informs into
  confirms (``inform_to_confirm``), say ``thankyou()`` / ``ack()`` (``thank``, ``ack``), deal
  with pending items first (``deal_with_pending``), or request the open slots (more than one
  with ``add_slot_to_request``).
* Spoken acts: an act with a ``!=`` item is said as ``reqalts()``; after a request or select a
  dontcare answer may omit its slot, ``inform(this=dontcare)`` (``no_slot_with_dontcare``); a
  request may name the venue (``add_venue_name_to_request``).

Unreachable in Environment 1 and so not modelled: PyDial's NewRequestResp1/2 (every
system-requestable slot is constrained) and Repeat/NullResp (probability 0).
``new_goal_scenarios=False`` restores PyDial's older reaction to ``inform(name=none)``
(``bye_or_start_over``: bye, else start over).

All randomness comes from the :class:`numpy.random.Generator` passed to :meth:`AgendaUser.reset`.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from contexts.domain import VENUE_FIELDS
from policies.sim.domain_cache import domain_cache
from policies.sim.userconfig import BEHAVIOURS, UserCounters, UserGoal, UserSimulatorConfig
from simscore.acts import Act, Item, shared_act
from simscore.errors import SimulationError

if TYPE_CHECKING:
    from contexts.domain import Domain

#: The goal, configuration and counters live in :mod:`policies.sim.userconfig` (re-exported here).
__all__ = ["AgendaUser", "SimulationError", "UserGoal", "UserSimulatorConfig", "UserCounters", "BEHAVIOURS"]

_DONTCARE = "dontcare"
_SPECIAL = frozenset((_DONTCARE, "none"))


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
    >>> act.intents[0] in ("hello", "inform")
    True
    """

    goal: UserGoal
    initial_goal: UserGoal

    def __init__(self, domain: Domain, *, config: UserSimulatorConfig | None = None) -> None:
        self.domain = domain
        self.config = config if config is not None else UserSimulatorConfig()
        self.index = domain_cache(domain).index
        self.goal_slots = tuple(s for s in domain.ontology.system_requestable if s in VENUE_FIELDS)
        if not self.goal_slots:
            raise SimulationError(
                f"domain {domain.name!r} has no system-requestable slot that is a venue field: nothing to search by"
            )
        self._values = {slot: tuple(domain.ontology.informable.get(slot, ())) for slot in self.goal_slots}
        self._lows = [getattr(self.config, name)[0] for name in BEHAVIOURS]
        self._ranges = [getattr(self.config, name)[1] - low for name, low in zip(BEHAVIOURS, self._lows)]
        self._valid_goals: list[dict[str, str]] | None = None
        self.finished = True

    # -- dialogue start ------------------------------------------------------------------

    def reset(self, rng: np.random.Generator, *, goal: UserGoal | None = None) -> None:
        """Start a new dialogue: draw a goal (unless given), behaviour probabilities and patience."""
        self.rng = rng
        cfg = self.config
        self.goal = goal if goal is not None else self.sample_goal(rng)
        self.initial_goal = self.goal
        # rng.uniform(lows, highs), bit for bit (numpy draws low + (high - low) * rng.random()
        # per element, in order), without its costly array broadcasting
        draws = rng.random(len(self._lows)).tolist()
        self.p = dict(zip(BEHAVIOURS, [low + width * u for low, width, u in zip(self._lows, self._ranges, draws)]))
        self.patience = self.max_patience = int(rng.integers(cfg.patience[0], cfg.patience[1] + 1))
        self.counters = UserCounters()
        self.filled: dict[str, str | None] = {slot: None for slot in self.goal.requests}
        self.used_values = {slot: {value} for slot, value in self.goal.constraints.items()}
        self.first_offer = True
        self.last_system_act: Act | None = None
        self.last_act: Act | None = None
        self.finished = False
        order = [self.goal_slots[i] for i in rng.permutation(len(self.goal_slots))]
        self.agenda: list[Act] = [_BYE]
        for slot in reversed(order):
            if slot in self.goal.constraints:
                self.agenda.append(shared_act("inform", ((slot, "=", self.goal.constraints[slot]),)))
        self.agenda.append(_INFORM_TYPE)

    def reseed(self, rng: np.random.Generator) -> None:
        """Draw every later random choice of this dialogue from ``rng``; the goal, agenda and state stay.

        Replays of a dialogue from one of its turns (:mod:`policies.sim.replay`) give every branch
        the same generator here, so the user's randomness after the branch point is common to them.
        """
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        self.rng = rng

    def sample_goal(self, rng: np.random.Generator) -> UserGoal:
        """Draw a goal that ``goal_matches`` (2–3) venues match, and the slots to request."""
        cfg = self.config
        if not self.index.venues:
            raise SimulationError(f"domain {self.domain.name!r} has no venues")
        if cfg.goal_sampling == "uniform":
            # uniform values, kept if 2-3 venues match = uniform over the valid combinations
            valid = self._uniform_goals()
            constraints = dict(valid[int(rng.integers(len(valid)))])
        else:
            constraints = self._goal_from_venue(rng)
        lo, hi = cfg.extra_requests
        k = int(rng.integers(lo, hi + 1))
        pool = cfg.request_pool
        extra = [pool[i] for i in rng.permutation(len(pool))[:k]]
        requests = ["name", *(slot for slot in extra if slot != "name")]
        return UserGoal(constraints, tuple(dict.fromkeys(requests)))

    def _goal_from_venue(self, rng: np.random.Generator) -> dict[str, str]:
        """A random venue's values, each slot dontcare with ``goal_dontcare_prob`` (rejection sampled)."""
        cfg = self.config
        low, high = cfg.goal_matches
        venues = self.index.venues
        for _ in range(cfg.goal_attempts):
            venue = venues[int(rng.integers(len(venues)))]
            draws = rng.random(len(self.goal_slots))
            constraints = {
                slot: (_DONTCARE if draw < cfg.goal_dontcare_prob else str(getattr(venue, slot)))
                for slot, draw in zip(self.goal_slots, draws)
            }
            if low <= self.index.count(constraints.items()) <= high:
                return constraints
        raise SimulationError(
            f"no goal with {low}-{high} matching venues found in {cfg.goal_attempts} attempts "
            f"(domain {self.domain.name!r}); widen UserSimulatorConfig.goal_matches"
        )

    def _uniform_goals(self) -> list[dict[str, str]]:
        """Every combination of values (or dontcare) that 2–3 (``goal_matches``) venues match."""
        if self._valid_goals is None:
            low, high = self.config.goal_matches
            options = [(*self._values[slot], _DONTCARE) for slot in self.goal_slots]
            valid = []
            for combination in itertools.product(*options):
                constraints = dict(zip(self.goal_slots, combination))
                if low <= self.index.count(constraints.items()) <= high:
                    valid.append(constraints)
            if not valid:
                raise SimulationError(
                    f"no goal has {low}-{high} matching venues in domain {self.domain.name!r}; "
                    "widen UserSimulatorConfig.goal_matches"
                )
            self._valid_goals = valid
        return self._valid_goals

    # -- state -------------------------------------------------------------------------

    @property
    def accepted(self) -> str | None:
        """The venue the user has accepted (its ``name`` request is filled), or None."""
        return self.filled.get("name")

    @property
    def all_filled(self) -> bool:
        """Whether every request has an answer."""
        return all(value is not None for value in self.filled.values())

    @property
    def done(self) -> bool:
        """Whether the task is accomplished: an accepted venue satisfying the goal, every request answered."""
        name = self.accepted
        if name is None or not self.all_filled:
            return False
        venue = self.index.venue(name)
        return venue is not None and self.goal.accepts(venue)

    def _reset_requests(self) -> None:
        self.filled = {slot: None for slot in self.goal.requests}

    def _draw(self, behaviour: str) -> bool:
        return bool(self.rng.random() < self.p[behaviour])

    # -- the user's turn -----------------------------------------------------------------

    def respond(self, system_act: Act) -> Act:
        """The user's act in reply to ``system_act``: :meth:`receive`, then pop the agenda."""
        self.receive(system_act)
        act = self._pop()
        self.last_act = act
        if act.intents == ("bye",):
            self.finished = True
        for item in act.items:
            if item.op == "=" and item.slot in self.goal.constraints:
                self.counters.informed_slots.add(item.slot)
        return act

    def receive(self, system_act: Act) -> None:
        """Update patience, goal and agenda after the system's act (PyDial's ``receive``)."""
        repeated = system_act == self.last_system_act
        useless = system_act.intents in (("null",), ("badact",))
        if (repeated and (self.last_act is None or self.last_act.intents != ("repeat",))) or useless:
            self.patience -= 1
        self.last_system_act = system_act
        if self.patience < 1:
            self._hang_up()
            return
        intent = system_act.intents[0] if len(system_act.intents) == 1 else "+".join(system_act.intents)
        handler = self._HANDLERS.get(intent)
        if handler is None:  # restart and anything unknown: say the last act again
            if self.last_act is not None and self.last_act.intents != ("bye",):
                self.agenda.append(self.last_act)
            return
        handler(self, system_act)

    def _hang_up(self) -> None:
        self.counters.hung_up = True
        self.agenda = [_BYE]

    # -- reactions -------------------------------------------------------------------------

    def _on_hello(self, act: Act) -> None:
        if not act.items and self._draw("greeting"):
            self.agenda.append(_HELLO)

    def _on_bye(self, act: Act) -> None:
        self.agenda = [_BYE]

    def _on_repeat(self, act: Act) -> None:
        if self.last_act is not None:
            self.agenda.append(self.last_act)

    def _on_request(self, act: Act) -> None:
        accepted = self.accepted
        if accepted is not None:
            open_slots = [slot for slot, value in self.filled.items() if value is None]
            if open_slots:
                self.agenda.append(shared_act("request", (("name", "=", accepted), (open_slots[0], "=", None))))
                return
        for item in act.items:
            slot = item.slot
            if slot not in self.goal.constraints:
                continue
            pending = [a for a in self.agenda if a.intents == ("inform",) and any(i.slot == slot for i in a.items)]
            if pending:  # PyDial's case 1: the pending informs about the slot come first
                self.agenda = [a for a in self.agenda if a not in pending] + pending
            self.agenda.append(shared_act("inform", ((slot, "=", self.goal.constraints[slot]),)))

    def _on_confirm(self, act: Act) -> None:
        if not self._check(act, from_confirm=True):
            return
        items: list[Item] = []
        if self.agenda[-1].intents == ("inform",) and self._draw("affirm_combination"):
            items = list(self.agenda.pop().items)
        self.agenda.append(Act("affirm", items))

    def _on_select(self, act: Act) -> None:
        for slot in dict.fromkeys(item.slot for item in act.items):
            if slot in self.goal.constraints:
                self.agenda.append(shared_act("inform", ((slot, "=", self.goal.constraints[slot]),)))
                return

    def _on_reqmore(self, act: Act) -> None:
        if len(self.agenda) > 1:
            top = self.agenda[-1]
            if (
                top.intents == ("inform",)
                and not any(i.slot == "type" for i in top.items)
                and self._draw("comb_affirm_with_agenda_item")
            ):
                self.agenda[-1] = Act("affirm", top.items)
            return
        if self.all_filled:
            if self._draw("no_after_reqmore"):
                self.agenda.append(shared_act("negate"))
            else:
                self.agenda = [_BYE]
        elif self.accepted is not None:
            for slot in reversed([s for s, value in self.filled.items() if value is None]):
                self.agenda.append(shared_act("request", ((slot, "=", None),)))
        elif self._draw("yes_after_reqmore"):
            self.agenda.append(shared_act("affirm"))
        else:
            items = [Item("type", "=", "restaurant")]
            items += [Item(s, "=", v) for s, v in self.goal.constraints.items() if v != _DONTCARE]
            self.agenda.append(Act("inform", items))

    def _on_inform(self, act: Act) -> None:
        offered: str | None = None
        listed: list[str] = []
        says_none = False
        for item in act.items:
            if item.slot != "name" or item.value is None:
                continue
            if item.op == "!=":
                listed.append(item.value)
            elif item.value == "none":
                says_none = True
            else:
                offered = item.value
        # "no venue" unless the system lists the venues it has ("none other than a, b")
        no_venue = says_none and not listed
        if offered is not None and offered != self.accepted:
            self._reset_requests()
            if self.index.venue(offered) is not None:
                self.counters.offers += 1
        if not self._check(act, from_confirm=False):
            return
        change_goal = False
        if no_venue:
            if not self.config.new_goal_scenarios:
                if self._draw("bye_or_start_over"):
                    self.agenda = [_BYE]
                else:
                    self.agenda.append(_INFORM_TYPE)
                return
            change_goal = True
        elif self.first_offer:
            self.first_offer = False
            f = self.rng.random()
            if f < self.p["reqalts_after_first_offer"]:
                if offered is not None:
                    self.goal = self.goal.excluding(offered)
                self.counters.rejected_offers += 1
                self.agenda.append(shared_act("reqalts"))
                return
            if f < self.p["reqalts_after_first_offer"] + self.p["change_goal_after_first_offer"]:
                change_goal = True
            elif offered is not None:
                self._accept(offered)
        elif offered is not None:
            self._accept(offered)
        if change_goal:
            self._change_goal(act, offered, after_no_venue=no_venue)
            return
        chosen = self._choose_listed(act, listed) if listed else None
        if chosen is not None:
            self.filled["name"] = chosen
        else:
            for item in act.items:
                if item.op == "=" and item.value is not None and item.slot in self.filled:
                    if item.slot == "name" and item.value == "none":
                        continue
                    self.filled[item.slot] = item.value
        if self._draw("inform_to_confirm"):
            self.agenda = [
                Act("confirm", a.items) if a.intents == ("inform",) and a.items and a.items[0].value != _DONTCARE else a
                for a in self.agenda
            ]
        f = self.rng.random()
        if f < self.p["thank"]:
            self.agenda.append(shared_act("thankyou"))
            return
        if f < self.p["thank"] + self.p["ack"]:
            self.agenda.append(shared_act("ack"))
            return
        if len(self.agenda) > 1 and self._draw("deal_with_pending"):
            return
        open_slots = [slot for slot, value in self.filled.items() if value is None]
        if open_slots:
            items = [Item("name", "=", chosen)] if chosen is not None else []
            items.append(Item(open_slots[0]))
            for slot in open_slots[1:]:
                if not self._draw("add_slot_to_request"):
                    break
                items.append(Item(slot))
            self.agenda.append(Act("request", items))

    _HANDLERS = {
        "hello": _on_hello,
        "bye": _on_bye,
        "repeat": _on_repeat,
        "request": _on_request,
        "confirm": _on_confirm,
        "select": _on_select,
        "reqmore": _on_reqmore,
        "inform": _on_inform,
    }

    def _accept(self, name: str) -> None:
        if name in self.goal.excluded:
            return
        self.goal = self.goal.with_name(name)

    def _check(self, act: Act, *, from_confirm: bool) -> bool:
        """PyDial's implicit confirmation: check the mentioned slots; False if the user reacted."""
        goal = self.goal
        no_venue = any(i.slot == "name" and i.op == "=" and i.value == "none" for i in act.items)
        tells_details = any(i.slot in _DETAIL_SLOTS for i in act.items)
        mentioned = {item.slot for item in act.items}
        items = list(act.items)
        if self.config.check_unmentioned_constraints and not no_venue:
            name = next((i.value for i in items if i.slot == "name" and i.op == "=" and i.value), None)
            venue = self.index.venue(name) if name else None
            if venue is not None:
                items += [Item(slot, "=", str(venue.get(slot))) for slot in goal.constraints if slot not in mentioned]
        confirmed = False
        for item in items:
            slot = item.slot
            if item.op != "=" or item.value is None:
                continue
            if slot == "name":
                if item.value == "none" or (goal.name is None and item.value not in goal.excluded):
                    continue
                if item.value in goal.excluded:
                    self._correct(item, act, correct=None)
                    return False
                if item.value != goal.name:
                    if not (tells_details or from_confirm):
                        continue  # the user silently accepts a different venue
                    self._correct(item, act, correct=goal.name)
                    return False
            elif slot in goal.constraints:
                wanted = goal.constraints[slot]
                if wanted != _DONTCARE and item.value != wanted:
                    self._correct(item, act, correct=wanted)
                    return False
            else:
                continue
            if not from_confirm and not no_venue and not confirmed and self._draw("confirm_random_constraint"):
                planned = self._planned_confirm(mentioned)
                if planned is not None:
                    self.agenda.append(planned)
                    self.counters.user_confirms += 1
                    confirmed = True
        if confirmed:
            for item in act.items:
                if item.op == "=" and item.value not in (None, "none") and item.slot in self.filled:
                    self.filled[item.slot] = item.value
            return False
        return True

    def _planned_confirm(self, mentioned: set[str]) -> Act | None:
        """``confirm(s=v)`` for a random goal constraint the system act did not mention, or None."""
        options = [(s, v) for s, v in self.goal.constraints.items() if s not in mentioned and v not in _SPECIAL]
        if self.goal.name is not None and "name" not in mentioned:
            options.append(("name", self.goal.name))
        if not options:
            return None
        slot, value = options[int(self.rng.integers(len(options)))]
        return Act("confirm", [Item(slot, "=", value)])

    def _correct(self, item: Item, act: Act, *, correct: str | None) -> None:
        """React to a wrong value: hang up, confirm something else, or correct it.

        ``correct`` is the goal's value of the slot; None when the value is one the user
        rejected (``name != X``), which is said as ``reqalts()``.
        """
        hang_up = (1.0 - self.patience / self.max_patience) ** 2
        if self.rng.random() < hang_up:
            self._hang_up()
            return
        slot = item.slot
        planned = self._planned_confirm({i.slot for i in act.items})
        if planned is not None and self._draw("overrule_correction"):
            self.agenda.append(planned)
            self.counters.user_confirms += 1
        elif correct is None:
            self.agenda.append(Act("inform", [Item(slot, "!=", item.value)]))
            self.counters.rejected_offers += 1
        else:
            f = self.rng.random()
            if f < self.p["correcting_act_negate"]:
                reply = Act("negate", [Item(slot, "=", correct)])
            elif f < self.p["correcting_act_negate"] + self.p["correcting_act_deny"]:
                reply = Act("deny", [Item(slot, "!=", item.value), Item(slot, "=", correct)])
            else:
                reply = Act("inform", [Item(slot, "=", correct)])
            self.agenda.append(reply)
            self.counters.corrections += 1
        self._reset_requests()

    def _change_goal(self, act: Act, offered: str | None, *, after_no_venue: bool) -> None:
        """Change one constraint (PyDial's new goal scenarios) and ask for alternatives."""
        goal = self.goal
        candidates = [
            i.slot for i in act.items
            if i.op == "=" and i.slot in goal.constraints and i.value != _DONTCARE
        ]
        candidates = list(dict.fromkeys(candidates)) or list(goal.constraints)
        slot = candidates[int(self.rng.integers(len(candidates)))]
        goal = goal.without_names()
        unused = [v for v in self._values[slot] if v not in self.used_values.get(slot, set())]
        if self._draw("constraint_relax") or not unused:
            value = _DONTCARE
        else:
            value = unused[int(self.rng.integers(len(unused)))]
            self.used_values.setdefault(slot, set()).add(value)
        self.goal = goal.with_constraint(slot, value)
        self.counters.goal_changes += 1
        if after_no_venue or self._draw("tell_about_change"):
            self.agenda.append(Act("reqalts", [Item(slot, "=", value)]))
            return
        self.agenda.append(shared_act("reqalts"))
        if value == _DONTCARE:
            if offered is not None:
                self.goal = self.goal.excluding(offered)
        else:
            self.goal = self.goal.with_request(slot)
            self.filled.setdefault(slot, None)

    def _choose_listed(self, act: Act, listed: list[str]) -> str | None:
        """After "no other venue than a, b": pick a listed venue that fits and drop unmentioned constraints."""
        self.goal = self.goal._replace(excluded=())
        if not any((v := self.index.venue(n)) is not None and self.goal.accepts(v) for n in listed):
            self.goal = self.goal.without_names()
        fitting = [n for n in listed if (v := self.index.venue(n)) is not None and self.goal.accepts(v)]
        if not fitting:
            return None
        chosen = fitting[int(self.rng.integers(len(fitting)))]
        mentioned = {i.slot for i in act.items}
        for slot in list(self.goal.constraints):
            if slot not in mentioned:
                self.goal = self.goal.relaxed(slot)
                self.agenda = [a for a in self.agenda if not any(i.slot == slot for i in a.items)]
        return chosen

    # -- speaking ------------------------------------------------------------------------

    def _pop(self) -> Act:
        """Pop the agenda's top act and shape it for speaking (PyDial's ``respond``)."""
        if not self.agenda:
            self.agenda.append(_BYE)
        act = self.agenda.pop()
        if any(item.op == "!=" for item in act.items) and act.intents != ("deny",):
            act = shared_act("reqalts")
        intents = act.intents
        if intents in (("inform",), ("confirm",)) or (intents in (("affirm",), ("negate",)) and act.items):
            slots = {item.slot for item in act.items}
            self.agenda = [
                a for a in self.agenda
                if not (a.intents in (("inform",), ("confirm",), ("affirm",)) and any(i.slot in slots for i in a.items))
            ]
        if intents in _SPOKEN_AS_IS:
            return act
        system = self.last_system_act
        if system is not None and system.intents == ("reqmore",):
            return act
        if (
            intents == ("inform",)
            and system is not None
            and system.intents in (("request",), ("select",))
            and act.items[0].value == _DONTCARE
            and self._draw("no_slot_with_dontcare")
        ):
            act = Act("inform", [Item("this", "=", _DONTCARE), *act.items[1:]])
        accepted = self.accepted
        if intents == ("request",) and len(act.items) == 1 and accepted is not None:
            if self._draw("add_venue_name_to_request"):
                act = Act("request", [Item("name", "=", accepted), *act.items])
        if intents in _MERGING:
            items = list(act.items)
            p = self.p["inform_combination"]
            merge_requests = intents == ("hello",)
            while self.agenda:
                top = self.agenda[-1]
                if not (top.intents == ("inform",) or (merge_requests and top.intents == ("request",))):
                    break
                if self.rng.random() >= p:
                    break
                items.extend(self.agenda.pop().items)
            if len(items) != len(act.items):  # nothing merged: the act is already canonical
                act = Act(act.intents, items)
        return act


_BYE = Act("bye")
_HELLO = Act("hello")
_INFORM_TYPE = Act("inform", [Item("type", "=", "restaurant")])
_DETAIL_SLOTS = frozenset(("addr", "phone", "postcode", "signature", "description"))
_SPOKEN_AS_IS = frozenset((("thankyou",), ("silence",), ("repeat",), ("ack",), ("deny",), ("confirm",), ("bye",)))
_MERGING = frozenset((("inform",), ("negate",), ("hello",), ("affirm",)))
