"""One simulated dialogue: a policy's decisions against the agenda-based user (PyDial's Environment 1).

One dialogue (:class:`DialogueSimulator`) runs as in PyDial's Environment 1: at turn 0 the
system greets (``hello()``, not a policy decision); then, turn by turn, the user answers the
system's last act, the focus tracker updates the belief, the policy picks a summary action
from the belief and its mask, the summary action becomes a master act
(:class:`~policies.sim.summary.SummaryActions`) and a text (:class:`~policies.sim.nlg.TemplateNLG`).
The policy also decides after the user's ``bye()`` (PyDial consults it there too); that last
act is replaced by ``bye()`` and ends the dialogue. A dialogue also ends when the policy
itself says ``bye()`` or after the 25th decision (the turn limit; the user still hears that
last act, so it can still complete the task).

``T`` counts the policy's decisions, one per user act, the last one included (PyDial's
count; the greeting is not counted). ``R_TS = 20 * success - T``,
``R_IQ = 5 * (iq - 1) - T`` (:mod:`policies.sim.rewards`). Success is judged on the venue the
user accepted and its final goal (:func:`policies.sim.rewards.task_success`).

Many dialogues, their dialogue log and the simscore policy adapter: :mod:`policies.sim.simulation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from contexts.belief import BeliefState
from contexts.dialogue_log import Dialogue, DialogueTurn
from contexts.domain import default_domain
from policies.sim.domain_cache import domain_cache
from policies.sim.features import BeliefFeatures
from policies.sim.nlg import TemplateNLG
from policies.sim.rewards import (
    REWARD_MODELS,
    InteractionStats,
    IQEstimator,
    RewardModel,
    RuleBasedIQ,
    checked_iq,
    reward_model,
    task_success,
)
from policies.sim.summary import SummaryActions
from policies.sim.tracker import FocusTracker
from policies.sim.usersim import AgendaUser, UserGoal, UserSimulatorConfig
from simscore.acts import Act
from simscore.checks import check_int

if TYPE_CHECKING:

    from contexts.domain import Domain

__all__ = [
    "MAX_TURNS",
    "SimulationSettings",
    "DialogueOutcome",
    "DialogueTrace",
    "DialogueSimulator",
    "dialogue_seed",
    "stream_label",
]

#: Default turn limit: the system's decisions (the greeting is not one; PyDial's 25 turns).
MAX_TURNS = 25

_HELLO = Act("hello")
_BYE = Act("bye")


@dataclass(frozen=True)
class SimulationSettings:
    """The simulated world a dialogue runs in: everything but the policy and the seeds.

    One object travels from a training configuration to the simulator, so the runner, the
    evaluation and the Gymnasium environment see the same world.

    Parameters
    ----------
    domain : contexts.domain.Domain, optional
        Ontology and venues; default :func:`contexts.domain.default_domain`.
    user : UserSimulatorConfig
        The simulated user's parameters.
    iq_estimator : callable
        ``InteractionStats -> iq in [1, 5]``; default :class:`~policies.sim.rewards.RuleBasedIQ`.
    max_turns : int
        Turn limit: the most decisions of the system in a dialogue (the greeting is not one).

    Examples
    --------
    >>> SimulationSettings(max_turns=10).max_turns, SimulationSettings().domain.name
    (10, 'restaurants')
    """

    domain: Domain = field(default_factory=default_domain, repr=False)
    user: UserSimulatorConfig = field(default_factory=UserSimulatorConfig)
    iq_estimator: IQEstimator = field(default_factory=RuleBasedIQ)
    max_turns: int = MAX_TURNS

    def __post_init__(self) -> None:
        if self.domain is None:
            object.__setattr__(self, "domain", default_domain())
        if self.user is None:
            object.__setattr__(self, "user", UserSimulatorConfig())
        if self.iq_estimator is None:
            object.__setattr__(self, "iq_estimator", RuleBasedIQ())
        object.__setattr__(self, "max_turns", check_int("max_turns", self.max_turns, minimum=2, error=ValueError))
        if not callable(self.iq_estimator):
            raise TypeError(f"iq_estimator must be callable, got {type(self.iq_estimator).__name__}")
        if not isinstance(self.user, UserSimulatorConfig):
            raise TypeError(f"user must be a UserSimulatorConfig, got {type(self.user).__name__}")


def dialogue_seed(seed: int, index: int, stream: tuple[int, ...] = ()) -> np.random.SeedSequence:
    """The seed sequence of dialogue ``index`` of the user stream ``stream`` of a run seeded with ``seed``.

    A run's training dialogues form the stream ``()``: dialogue ``i`` is
    ``SeedSequence(seed, spawn_key=(i,))``. Other dialogues of the same run — its evaluation
    users after a checkpoint, the dialogues C_col is collected from — form streams named by a
    key (e.g. ``(eval_seed, checkpoint)``): ``SeedSequence(seed, spawn_key=(*stream, i))``.
    Spawn keys of different lengths never coincide, so no stream repeats a training user,
    and two streams of one run are as independent as two runs (PyDial draws its evaluation
    users from the run's one random stream after the training dialogues).

    >>> dialogue_seed(7, 3).spawn_key, dialogue_seed(7, 3, (20200701, 1000)).spawn_key
    ((3,), (20200701, 1000, 3))
    """
    return np.random.SeedSequence(seed, spawn_key=(*stream, index))


def stream_label(seed: int, stream: tuple[int, ...] = ()) -> str:
    """The prefix of the dialogue ids of a stream: ``s<seed>`` and the stream's keys.

    >>> stream_label(3), stream_label(3, (2000003,))
    ('s3', 's3-2000003')
    """
    return "-".join((f"s{seed}", *(str(k) for k in stream)))


@dataclass(frozen=True)
class DialogueOutcome:
    """How one simulated dialogue went.

    Attributes
    ----------
    dialogue_id : str
    success : bool
        Task success (:func:`policies.sim.rewards.task_success` on the final goal).
    iq : float
        Interaction quality in [1, 5].
    turns : int
        Turns ``T`` as PyDial counts them: the system's decisions, one per user act, the
        greeting not counted, the decision after the user's ``bye()`` counted.
    reward_ts, reward_iq : float
        ``20 * success - T`` and ``5 * (iq - 1) - T``.
    ended_by : str
        ``"user"`` (bye), ``"user_hung_up"`` (out of patience), ``"system"`` (bye) or
        ``"turn_limit"``.
    stats : InteractionStats
    goal : UserGoal
        The user's goal at the end (constraints may have been relaxed to dontcare).
    initial_goal : UserGoal
    """

    dialogue_id: str
    success: bool
    iq: float
    turns: int
    reward_ts: float
    reward_iq: float
    ended_by: str
    stats: InteractionStats
    goal: UserGoal
    initial_goal: UserGoal

    def to_json(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "iq": self.iq,
            "turns": self.turns,
            "reward_ts": self.reward_ts,
            "reward_iq": self.reward_iq,
            "ended_by": self.ended_by,
            "stats": self.stats.to_json(),
            "goal": self.goal.to_json(),
            "initial_goal": self.initial_goal.to_json(),
        }


@dataclass(frozen=True, eq=False)
class DialogueTrace:
    """Every policy decision of one dialogue, for learning policies (``end_dialogue`` hook).

    ``beliefs[k]``, ``masks[k]`` and ``actions[k]`` are the k-th decision (turns 1, 2, ...),
    the decision after the user's ``bye()`` included (its act was replaced by ``bye()``).
    ``len(actions) == outcome.turns``.
    """

    dialogue_index: int
    beliefs: tuple[BeliefState, ...]
    masks: tuple[np.ndarray, ...]
    actions: tuple[int, ...]
    outcome: DialogueOutcome

    def rewards(self, reward: str | RewardModel = "task_success", *, assignment: str = "per_turn") -> np.ndarray:
        """Per-decision rewards whose sum is the dialogue's R_TS or R_IQ.

        Parameters
        ----------
        reward : str or RewardModel
            ``"ts"``/``"task_success"``, ``"iq"``/``"interaction_quality"`` (see
            :func:`policies.sim.rewards.reward_model`).
        assignment : {"per_turn", "terminal"}
            ``"per_turn"``: each decision gets −1 and the last one also the outcome bonus
            (``20 * success`` or ``5 * (iq - 1)``), as in :class:`policies.sim.env.RestaurantSearchEnv`.
            ``"terminal"``: 0 for every decision but the last, which gets the whole return
            (PyDial's GP-SARSA learns from this).
        """
        bonus = reward_model(reward).bonus(success=self.outcome.success, iq=self.outcome.iq)
        n = len(self.actions)
        if assignment == "per_turn":
            out = np.full(n, -1.0)
            if n:
                out[-1] += bonus
        elif assignment == "terminal":
            out = np.zeros(n)
            if n:
                out[-1] = bonus - float(n)
        else:
            raise ValueError(f"assignment must be 'per_turn' or 'terminal', got {assignment!r}")
        return out

    def features(self, domain: Domain) -> np.ndarray:
        """The belief feature vectors of the decisions, shape ``(len(actions), feature_size)``."""
        features = BeliefFeatures(domain, space=domain_cache(domain).space)
        if not self.beliefs:
            return np.zeros((0, features.size))
        return np.stack([features(b) for b in self.beliefs])


@dataclass
class _Turn:
    turn_index: int
    user_act: Act | None
    user_text: str | None
    belief: BeliefState
    system_act: Act
    system_text: str


class DialogueSimulator:
    """One simulated dialogue at a time, step by step (the runner and the gym env use it).

    Parameters
    ----------
    settings : SimulationSettings, optional
        Domain, user, IQ estimator and turn limit (default: :class:`SimulationSettings`).
    nlg_instance : str
        The policy instance whose template NLG words the system's acts
        (:class:`~policies.sim.nlg.TemplateNLG`).
    record : bool
        Keep every turn (needed for :meth:`dialogue`, i.e. for logs).

    Examples
    --------
    >>> from policies.handcrafted import HandcraftedPolicy
    >>> sim = DialogueSimulator()
    >>> policy = HandcraftedPolicy()
    >>> belief = sim.reset(np.random.default_rng(1))
    >>> while not sim.done:
    ...     _ = sim.step(policy.choose(sim.belief, sim.mask))
    >>> outcome = sim.outcome()
    >>> outcome.success, outcome.turns == sim.turns
    (True, True)
    """

    def __init__(
        self, settings: SimulationSettings | None = None, *, nlg_instance: str = "", record: bool = False
    ) -> None:
        settings = settings if settings is not None else SimulationSettings()
        if not isinstance(settings, SimulationSettings):
            raise TypeError(f"settings must be a SimulationSettings, got {type(settings).__name__}")
        self.settings = settings
        self.domain = settings.domain
        self.space: SummaryActions = domain_cache(self.domain).space
        self.user = AgendaUser(self.domain, config=settings.user)
        self.tracker = FocusTracker(self.domain.ontology)
        self.nlg = TemplateNLG(nlg_instance)
        self.iq_estimator: IQEstimator = settings.iq_estimator
        self.max_turns = settings.max_turns
        self.record = record
        # the state of the current dialogue (set by reset)
        self.done = True
        self.dialogue_id = ""
        self.turns_log: list[_Turn] = []
        self.turn_index = 0
        self.turns = 0
        self.ended_by = ""
        self.hit_turn_limit = False
        self._repeats = 0
        self._reasked = 0
        self._confirmations = 0
        self._no_venue = 0
        self._offered_venue = False
        self._system_informed: set[str] = set()
        self._user_requested: set[str] = set()
        self._repeated_requests = 0
        self._final_user: tuple[Act, str] | None = None
        self.belief: BeliefState = self.tracker.belief
        self._mask: np.ndarray | None = None
        self.user_act: Act | None = None
        self._user_text: str | None = None
        self.system_act: Act = _HELLO
        self._system_belief: BeliefState = self.belief
        self._system_text: str | None = None
        self._system_rng: np.random.Generator | None = None

    # -- state -----------------------------------------------------------------------------

    @property
    def mask(self) -> np.ndarray:
        """The action mask of the current belief (computed once per turn)."""
        if self._mask is None:
            self._mask = self.space.mask(self.belief)
        return self._mask

    def reset(
        self,
        rng: np.random.Generator,
        *,
        goal: UserGoal | None = None,
        dialogue_id: str = "",
        system_rng: np.random.Generator | None = None,
    ) -> BeliefState:
        """Start a dialogue: user goal, greeting, the user's first act; returns the first belief.

        Parameters
        ----------
        rng : numpy.random.Generator
            All of the user's randomness in this dialogue.
        goal : UserGoal, optional
            A fixed goal instead of a random one.
        dialogue_id : str
        system_rng : numpy.random.Generator, optional
            The system's randomness in mapping summary to master acts (the slot an
            ``inform_byname`` adds when nothing was requested); without it that slot is a
            function of the belief (:func:`policies.sim.summary.belief_generator` with seed 0).
        """
        self._system_rng = system_rng
        self.dialogue_id = dialogue_id
        self.user.reset(rng, goal=goal)
        self.tracker.reset()
        self.turns_log = []
        self.turn_index = 0
        self.turns = 0
        self.ended_by = ""
        self.hit_turn_limit = False
        self._repeats = 0
        self._reasked = 0
        self._confirmations = 0
        self._no_venue = 0
        self._offered_venue = False
        self._system_informed = set()
        self._user_requested = set()
        self._repeated_requests = 0
        self._final_user = None
        self.done = False
        self.belief = self.tracker.belief
        self._mask = None
        self.user_act = None
        self._user_text = None
        self._say(_HELLO)
        self._hear(_HELLO)
        return self.belief

    def branch(self, rng: np.random.Generator, *, system_rng: np.random.Generator | None = None) -> None:
        """From now on the user draws from ``rng`` and the master-act mapping from ``system_rng``.

        The dialogue so far — the user's goal, agenda and behaviour, the belief, the counters —
        stays as it is: continuations of one dialogue state that get the same generators here
        meet the same user randomness after the branch point (common random numbers;
        :mod:`policies.sim.replay`).

        Parameters
        ----------
        rng : numpy.random.Generator
            The user's randomness for the rest of the dialogue.
        system_rng : numpy.random.Generator, optional
            The system's randomness in mapping summary to master acts (as in :meth:`reset`).
        """
        if self.done:
            raise RuntimeError("the dialogue has ended; call reset() first")
        if system_rng is not None and not isinstance(system_rng, np.random.Generator):
            raise TypeError(f"system_rng must be a numpy.random.Generator, got {type(system_rng).__name__}")
        self.user.reseed(rng)
        self._system_rng = system_rng

    @property
    def system_text(self) -> str:
        """The text of the system's last act (realised on first use: training never needs it)."""
        text = self._system_text
        if text is None:
            text = self._system_text = self.nlg.realise(self.system_act, self._system_belief)
        return text

    @property
    def user_text(self) -> str | None:
        """The text of the user's last act (realised on first use)."""
        if self._user_text is None and self.user_act is not None:
            self._user_text = TemplateNLG.realise_user(self.user_act, TemplateNLG.context_key(self._system_belief))
        return self._user_text

    def _say(self, act: Act) -> None:
        """The system says ``act`` at the current turn (recorded with the belief it was chosen on)."""
        self.system_act = act
        self._system_belief = self.belief
        self._system_text = None
        if self.record:
            self.turns_log.append(
                _Turn(self.turn_index, self.user_act, self.user_text, self.belief, act, self.system_text)
            )

    def _hear(self, act: Act, *, answered_alternatives: bool = False) -> None:
        """The user answers ``act``; the tracker folds the exchange into the belief."""
        user_act = self.user.respond(act)
        if "request" in user_act.intents:  # what the user asked for, and asked again for
            for item in user_act.items:
                if item.value is None:
                    if item.slot in self._user_requested:
                        self._repeated_requests += 1
                    self._user_requested.add(item.slot)
        self.turn_index += 1
        self.belief = self.tracker.update(act, user_act, answered_alternatives=answered_alternatives)
        self._mask = None
        self.user_act = user_act
        self._user_text = None

    def step(self, action: int) -> bool:
        """The system's decision ``action`` (a summary action index); returns whether the dialogue ended.

        After the user's ``bye()`` the decision is taken and counted but the system says
        ``bye()``; after the 25th decision (``max_turns``) the user hears the act and the
        dialogue ends at the turn limit.
        """
        if self.done:
            raise RuntimeError("the dialogue has ended; call reset() first")
        user_left = self.user.finished
        act = _BYE if user_left else self.space.master_action(action, self.belief, rng=self._system_rng)
        self.turns += 1
        if not user_left:
            self._count(act)
        self._say(act)
        if user_left:
            self.done = True
            self.ended_by = "user_hung_up" if self.user.counters.hung_up else "user"
        elif act.intents == ("bye",):
            self.done = True
            self.ended_by = "system"
        elif self.turns >= self.max_turns:
            final = self.user.respond(act)  # the user still hears the last act (PyDial's 26th user turn)
            self._final_user = (final, TemplateNLG.realise_user(final, TemplateNLG.context_key(self.belief)))
            self.done = True
            self.hit_turn_limit = True
            self.ended_by = "turn_limit"
        else:
            self._hear(act, answered_alternatives=action == self.space.INFORM_ALTERNATIVES)
        return self.done

    def _count(self, act: Act) -> None:
        """Interaction parameters of the system's act (inputs of the interaction-quality estimate)."""
        if act == self.system_act:
            self._repeats += 1
        intent = act.intents[0]
        if intent == "request":
            informed = self.user.counters.informed_slots
            self._reasked += sum(1 for item in act.items if item.slot in informed)
        elif intent in ("confirm", "select"):
            self._confirmations += 1
        elif intent == "inform":
            if any(i.slot == "name" and i.op == "=" and i.value == "none" for i in act.items):
                self._no_venue += 1
            elif any(i.slot == "name" and i.op == "=" for i in act.items):  # an offer answers what it names
                self._offered_venue = True
                self._system_informed.update(i.slot for i in act.items if i.op == "=" and i.value is not None)

    # -- results ---------------------------------------------------------------------------

    def outcome(self) -> DialogueOutcome:
        """The outcome of the finished dialogue (success, IQ, rewards, statistics)."""
        if not self.done:
            raise RuntimeError("the dialogue has not ended yet")
        user = self.user
        accepted = user.accepted
        venue = self.space.index.venue(accepted) if accepted is not None else None
        success = task_success(user.goal, venue, user.filled)
        counters = user.counters
        stats = InteractionStats(
            turns=self.turns,
            system_repeats=self._repeats,
            reasked_slots=self._reasked,
            confirmations=self._confirmations,
            rejected_offers=counters.rejected_offers,
            no_venue_informs=self._no_venue,
            user_corrections=counters.corrections,
            goal_changes=counters.goal_changes,
            user_confirms=counters.user_confirms,
            user_hung_up=counters.hung_up,
            hit_turn_limit=self.hit_turn_limit,
            no_venue_offered=not self._offered_venue,
            repeated_user_requests=self._repeated_requests,
            unanswered_requests=len(self._user_requested - self._system_informed),
        )
        iq = checked_iq(self.iq_estimator, stats)
        return DialogueOutcome(
            dialogue_id=self.dialogue_id,
            success=success,
            iq=iq,
            turns=self.turns,
            reward_ts=REWARD_MODELS["ts"].episode_return(success=success, iq=iq, turns=self.turns),
            reward_iq=REWARD_MODELS["iq"].episode_return(success=success, iq=iq, turns=self.turns),
            ended_by=self.ended_by,
            stats=stats,
            goal=user.goal,
            initial_goal=user.initial_goal,
        )

    def dialogue(self, outcome: DialogueOutcome | None = None) -> Dialogue:
        """The finished dialogue in the :mod:`contexts.dialogue_log` form (needs ``record=True``)."""
        if not self.record:
            raise RuntimeError("the simulator was created with record=False: no turns were kept")
        outcome = outcome if outcome is not None else self.outcome()
        turns = tuple(
            DialogueTurn(
                turn_index=t.turn_index,
                belief=t.belief,
                user_act=None if t.user_act is None else str(t.user_act),
                user_text=t.user_text,
                system_act=str(t.system_act),
                system_text=t.system_text,
            )
            for t in self.turns_log
        )
        info = outcome.to_json()
        if self._final_user is not None:
            info["final_user_act"] = str(self._final_user[0])
            info["final_user_text"] = self._final_user[1]
        return Dialogue(self.dialogue_id or "dialogue", turns, info)
