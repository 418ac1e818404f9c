"""Task success, the interaction-quality estimate and the two reward models.

* Task success (PyDial's objective success): at the end of the dialogue the venue the user
  accepted satisfies its final goal (the ``name =`` / ``name !=`` constraints it added
  included), and every slot it requested was answered for that venue (its name by the offer).
* ``R_TS = 20 * success - T`` and ``R_IQ = 5 * (iq - 1) - T``, ``T`` the number of the
  system's decisions (one per user act, the one after the user's ``bye()`` included; the
  greeting is not counted: PyDial's count), ``iq`` in [1, 5].

Interaction quality
-------------------
The paper estimated IQ with a BiLSTM trained on expert-annotated calls (the LEGO corpus),
which is not available. :class:`RuleBasedIQ` is a transparent replacement computed from the
interaction parameters such estimators read, and, like them, from nothing else: it does not
see the user's goal, so it cannot know whether the offered venue was the right one (task
success as R_TS judges it). What a listener of the call hears, it does: whether the user hung
up, whether the system ever offered a venue, whether the dialogue ran into the turn limit,
whether the user had to ask again for something, and whether a question of the user's was
never answered. Starting from 5 it subtracts

============================================  ===================  ====================================
parameter (:class:`InteractionStats`)          penalty (default)    what the interaction shows
============================================  ===================  ====================================
decisions beyond 3 (``turns``)                 0.25 each            a long call
``system_repeats``                             1.0 each             the system said the same act again
``reasked_slots``                              0.5 each             the system asked again for a slot
                                                                    the user had already given
``confirmations``                              0.25 each            the system confirmed, or asked the
                                                                    user to choose between two values
``rejected_offers``                            0.5 each             the user rejected an offer
``no_venue_informs``                           0.25 each            "no venue matches"
``user_corrections``                           0.5 each             the user corrected a value
``goal_changes``                               0.25 each            the user changed a constraint
``user_confirms``                              0.25 each            the user asked to confirm a value
``repeated_user_requests``                     0.5 each             the user asked again for a slot it
                                                                    had asked for
``unanswered_requests``                        0.5 each             slots the user asked for that the
                                                                    system never gave
``no_venue_offered``                           1.0                  the system never offered a venue
``user_hung_up``                               1.0                  the user hung up (patience ran out)
``hit_turn_limit``                             1.0                  the turn limit ended the dialogue
============================================  ===================  ====================================

All but ``goal_changes`` are read off the acts; that one is counted by the simulated user (a
change it does not say is heard only as a request for alternatives, also counted as a
rejected offer). The sum is then rounded half up and clipped to the classes {1, ..., 5}.
The weights were set once, by
analogy (a repeated or unanswered user request weighs as a re-asked slot; a call without any
offer as a hang-up), replacing the former goal-based "task failed" term (2.0); they were not
fitted to the paper's IQ levels nor to any finding. Unlike R_TS, which only counts turns and
success, R_IQ thus rewards avoiding confirmations, repetitions and re-asked slots, and it is
noisier (the user's own behaviour lowers it). Any callable ``stats -> number in [1, 5]`` can
replace it (see :func:`checked_iq`); ``benchmarks/bench_sim.py`` prints its distribution for
the handcrafted and random policies. Measured on 4,000 simulated users: the handcrafted
policy (success 0.998 at 5.9 turns) averages 3.88 (1: 5.0 %, 2: 6.7 %, 3: 17.9 %, 4: 36.0 %,
5: 34.4 %), the random one (success 0.65 at 17.3 turns) 1.32 (1: 86 %); the paper's converged
policies average 3.7–3.9 on its estimator, a level these weights were not set to reach.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simscore.checks import check_number

if TYPE_CHECKING:
    from contexts.domain import Venue
    from policies.sim.usersim import UserGoal

__all__ = [
    "RewardModel",
    "REWARD_MODELS",
    "reward_model",
    "InteractionStats",
    "RuleBasedIQ",
    "IQEstimator",
    "task_success",
    "task_success_reward",
    "iq_reward",
    "checked_iq",
    "SUCCESS_REWARD",
    "IQ_REWARD_SCALE",
]

#: Reward for a successful dialogue in R_TS.
SUCCESS_REWARD = 20.0
#: Reward per IQ point above 1 in R_IQ.
IQ_REWARD_SCALE = 5.0


@dataclass(frozen=True)
class InteractionStats:
    """Interaction parameters of one finished dialogue (the IQ estimator's input).

    Attributes
    ----------
    turns : int
        The system's decisions (one per user act; the greeting is not counted).
    system_repeats : int
        System acts equal to the system's previous act.
    reasked_slots : int
        System requests for a slot the user had already given a value for.
    confirmations : int
        System ``confirm`` and ``select`` acts.
    rejected_offers : int
        Offers the user rejected (asked for alternatives or corrected a constraint).
    no_venue_informs : int
        System ``inform(name=none, ...)`` acts.
    user_corrections : int
        Times the user corrected a value the system got wrong.
    goal_changes : int
        Times the user changed a constraint (after "no venue", or on the first offer).
    user_confirms : int
        Times the user asked the system to confirm a constraint.
    user_hung_up : bool
        The user ran out of patience.
    hit_turn_limit : bool
        The dialogue was ended by the turn limit.
    no_venue_offered : bool
        The system never offered a venue (an ``inform`` naming one).
    repeated_user_requests : int
        User requests for a slot the user had requested before.
    unanswered_requests : int
        Slots the user requested that no offer of the system gave a value for.

    Task success is not among them: it is judged against the user's hidden goal, which an IQ
    estimator does not see.
    """

    turns: int
    system_repeats: int = 0
    reasked_slots: int = 0
    confirmations: int = 0
    rejected_offers: int = 0
    no_venue_informs: int = 0
    user_corrections: int = 0
    goal_changes: int = 0
    user_confirms: int = 0
    user_hung_up: bool = False
    hit_turn_limit: bool = False
    no_venue_offered: bool = False
    repeated_user_requests: int = 0
    unanswered_requests: int = 0

    def to_json(self) -> dict[str, int | bool]:
        return dict(self.__dict__)


#: Anything mapping interaction parameters to an IQ in [1, 5].
IQEstimator = Callable[[InteractionStats], float]


@dataclass(frozen=True)
class RuleBasedIQ:
    """The default, documented interaction-quality estimator (see the module docstring).

    Examples
    --------
    >>> iq = RuleBasedIQ()
    >>> iq(InteractionStats(turns=4))                                   # 5 - 0.25 = 4.75 -> 5
    5
    >>> iq(InteractionStats(turns=7, confirmations=2))                  # 5 - 1 - 0.5 = 3.5 -> 4
    4
    >>> iq(InteractionStats(turns=9, user_corrections=1, system_repeats=1))  # 5 - 1.5 - 1.5
    2
    >>> iq(InteractionStats(turns=6, repeated_user_requests=1, unanswered_requests=1))  # 5 - 0.75 - 1
    3
    >>> iq(InteractionStats(turns=25, hit_turn_limit=True, no_venue_offered=True))
    1
    """

    free_turns: int = 3
    per_extra_turn: float = 0.25
    per_repeat: float = 1.0
    per_reasked_slot: float = 0.5
    per_confirmation: float = 0.25
    per_rejected_offer: float = 0.5
    per_no_venue: float = 0.25
    per_user_correction: float = 0.5
    per_goal_change: float = 0.25
    per_user_confirm: float = 0.25
    per_repeated_request: float = 0.5
    per_unanswered_request: float = 0.5
    no_offer: float = 1.0
    hang_up: float = 1.0
    turn_limit: float = 1.0

    def __post_init__(self) -> None:
        for name, value in list(self.__dict__.items()):
            number = check_number(f"RuleBasedIQ.{name}", value, minimum=0.0, error=ValueError)
            if type(value) is not int:
                object.__setattr__(self, name, number)  # a float, also when given a numpy number

    def score(self, stats: InteractionStats) -> float:
        """The unrounded score: 5 minus the penalties (may leave [1, 5])."""
        penalty = (
            self.per_extra_turn * max(0, stats.turns - self.free_turns)
            + self.per_repeat * stats.system_repeats
            + self.per_reasked_slot * stats.reasked_slots
            + self.per_confirmation * stats.confirmations
            + self.per_rejected_offer * stats.rejected_offers
            + self.per_no_venue * stats.no_venue_informs
            + self.per_user_correction * stats.user_corrections
            + self.per_goal_change * stats.goal_changes
            + self.per_user_confirm * stats.user_confirms
            + self.per_repeated_request * stats.repeated_user_requests
            + self.per_unanswered_request * stats.unanswered_requests
            + (self.no_offer if stats.no_venue_offered else 0.0)
            + (self.hang_up if stats.user_hung_up else 0.0)
            + (self.turn_limit if stats.hit_turn_limit else 0.0)
        )
        return 5.0 - penalty

    def __call__(self, stats: InteractionStats) -> int:
        """IQ in {1, ..., 5}: the score rounded half up, clipped."""
        return int(min(5, max(1, math.floor(self.score(stats) + 0.5))))


def checked_iq(estimator: IQEstimator, stats: InteractionStats) -> float:
    """Run ``estimator`` and check that it returned a finite number in [1, 5].

    Raises
    ------
    ValueError
        Naming the estimator and the value it returned.
    """
    value = estimator(stats)
    try:
        number = float(value)  # numpy scalars included
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, (bool, str)) or not (math.isfinite(number) and 1.0 <= number <= 5.0):
        raise ValueError(f"IQ estimator {estimator!r} returned {value!r}, expected a number in [1, 5]")
    return number


def task_success(goal: UserGoal, venue: Venue | None, answers: Mapping[str, str | None]) -> bool:
    """PyDial's success rule: the accepted venue satisfies the final goal and every request is answered.

    Parameters
    ----------
    goal : policies.sim.usersim.UserGoal
        The user's goal at the end of the dialogue, with its ``name =`` / ``name !=``
        constraints.
    venue : contexts.domain.Venue or None
        The venue the user accepted.
    answers : mapping of str to str or None
        Requested slot → the value the system gave for ``venue`` (None while unanswered;
        ``name`` is answered by the offer).

    Examples
    --------
    >>> from contexts.domain import Venue
    >>> from policies.sim.usersim import UserGoal
    >>> v = Venue(1, "the pot", "1 main st", "north", "thai", "0123", "cheap", "cb1", "curry", "Nice.")
    >>> goal = UserGoal({"food": "thai", "area": "dontcare"}, ("name", "phone"))
    >>> task_success(goal, v, {"name": "the pot", "phone": "0123"})
    True
    >>> task_success(goal, v, {"name": "the pot", "phone": None})            # phone never given
    False
    >>> task_success(UserGoal({"food": "indian"}), v, {"name": "the pot"})  # wrong food
    False
    >>> task_success(goal.excluding("the pot"), v, {"name": "the pot", "phone": "0123"})  # rejected venue
    False
    """
    if venue is None or not goal.accepts(venue):
        return False
    return all(answers.get(slot) is not None for slot in goal.requests)


@dataclass(frozen=True)
class RewardModel:
    """One of the paper's two reward models: −1 per system turn plus an outcome bonus.

    The bonus is the one thing that differs between the reward models; every place that
    rewards a dialogue (the runner's per-turn rewards, the Gymnasium environment, the
    outcome's returns) asks this object for it.

    Attributes
    ----------
    name : {"ts", "iq"}
        Short name (configs, the CLI, checkpoints).
    long_name : {"task_success", "interaction_quality"}

    Examples
    --------
    >>> ts, iq = reward_model("ts"), reward_model("interaction_quality")
    >>> ts.bonus(success=True, iq=2.0), iq.bonus(success=True, iq=2.0)
    (20.0, 5.0)
    >>> ts.episode_return(success=True, iq=2.0, turns=5), iq.episode_return(success=False, iq=1.0, turns=10)
    (15.0, -10.0)
    """

    name: str
    long_name: str

    def bonus(self, *, success: bool, iq: float) -> float:
        """The outcome bonus: ``20 * success`` (R_TS) or ``5 * (iq - 1)`` (R_IQ)."""
        if self.name == "ts":
            return SUCCESS_REWARD * float(bool(success))
        return IQ_REWARD_SCALE * (float(iq) - 1.0)

    def episode_return(self, *, success: bool, iq: float, turns: int) -> float:
        """The dialogue's return: the bonus minus one per system turn."""
        return self.bonus(success=success, iq=iq) - float(turns)


#: The reward models by short name.
REWARD_MODELS: dict[str, RewardModel] = {
    "ts": RewardModel("ts", "task_success"),
    "iq": RewardModel("iq", "interaction_quality"),
}
_ALIASES = {model.long_name: model for model in REWARD_MODELS.values()}


def reward_model(name: str | RewardModel) -> RewardModel:
    """The reward model called ``name`` (``"ts"``/``"task_success"`` or ``"iq"``/``"interaction_quality"``).

    >>> reward_model("success")
    Traceback (most recent call last):
    ...
    ValueError: reward must be one of 'ts', 'iq', 'task_success', 'interaction_quality', got 'success'
    """
    if isinstance(name, RewardModel):
        return name
    model = REWARD_MODELS.get(name) or _ALIASES.get(name)
    if model is None:
        known = ", ".join(repr(n) for n in (*REWARD_MODELS, *_ALIASES))
        raise ValueError(f"reward must be one of {known}, got {name!r}")
    return model


def task_success_reward(success: bool, turns: int) -> float:
    """``R_TS = 20 * success - turns``.

    >>> task_success_reward(True, 5), task_success_reward(False, 25)
    (15.0, -25.0)
    """
    return REWARD_MODELS["ts"].episode_return(success=success, iq=1.0, turns=turns)


def iq_reward(iq: float, turns: int) -> float:
    """``R_IQ = 5 * (iq - 1) - turns``.

    >>> iq_reward(5, 5), iq_reward(1, 10)
    (15.0, -10.0)
    """
    return REWARD_MODELS["iq"].episode_return(success=False, iq=iq, turns=turns)
