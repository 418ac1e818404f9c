"""Simulated dialogues: a policy against the agenda-based user, and the simscore policy adapter.

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

:func:`run_dialogues` runs N dialogues. Dialogue ``i`` uses generators derived from
``numpy.random.SeedSequence(seed, spawn_key=(i,))`` (child 0: the user, child 1: the
policy's :meth:`begin_dialogue` hook), so it is the same whatever ``n`` and ``start`` are.
It can write the dialogues as a :mod:`contexts.dialogue_log` file (the C_col input): one
line per dialogue, turn 0 (the greeting) and one turn per decision with the belief at the
system's decision time; a user act that no decision follows (after the turn limit) is kept
in the outcome.

:class:`SummaryPolicyAdapter` turns any summary policy into a simscore policy
(``respond(context) -> Response``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from contexts.belief import BeliefState
from contexts.collect import collect_contexts
from contexts.dialogue_log import Dialogue, DialogueTurn, write_dialogue_log
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
from policies.sim.summary import SummaryActions, SummaryPolicy
from policies.sim.tracker import FocusTracker
from policies.sim.usersim import AgendaUser, UserGoal, UserSimulatorConfig
from simscore.acts import Act
from simscore.checks import check_int
from simscore.errors import InvalidContextError, InvalidResponseError
from simscore.io import prepare_output
from simscore.responses import Response

if TYPE_CHECKING:
    import pandas

    from contexts.context import ContextSet
    from contexts.domain import Domain

__all__ = [
    "MAX_TURNS",
    "SimulationSettings",
    "DialogueOutcome",
    "DialogueTrace",
    "DialogueSimulator",
    "SimulationResult",
    "run_dialogues",
    "dialogue_seed",
    "simulated_contexts",
    "SummaryPolicyAdapter",
]

#: Default turn limit (system turns, the greeting included).
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
        Turn limit (system turns, greeting included).

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


def dialogue_seed(seed: int, index: int) -> np.random.SeedSequence:
    """The seed sequence of dialogue ``index`` of a run seeded with ``seed``.

    >>> dialogue_seed(7, 3).spawn_key
    (3,)
    """
    return np.random.SeedSequence(seed, spawn_key=(index,))


def _child_generator(seed: int, index: int, child: int) -> np.random.Generator:
    """``np.random.default_rng(dialogue_seed(seed, index).spawn(2)[child])``, built directly.

    ``spawn`` gives child ``k`` the spawn key ``(index, k)`` and the parent's entropy and pool
    size, and ``default_rng`` wraps a seed sequence in a ``PCG64``: the generator is the same,
    without building the parent and its spawn list (once per simulated dialogue).
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(index, child))))


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
        System turns ``T``, the greeting included.
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
        self.done = True
        self._mask: np.ndarray | None = None

    # -- state -----------------------------------------------------------------------------

    @property
    def mask(self) -> np.ndarray:
        """The action mask of the current belief (computed once per turn)."""
        if self._mask is None:
            self._mask = self.space.mask(self.belief)
        return self._mask

    def reset(self, rng: np.random.Generator, *, goal: UserGoal | None = None, dialogue_id: str = "") -> BeliefState:
        """Start a dialogue: user goal, greeting, the user's first act; returns the first belief.

        Parameters
        ----------
        rng : numpy.random.Generator
            All of the user's randomness in this dialogue.
        goal : UserGoal, optional
            A fixed goal instead of a random one.
        dialogue_id : str
        """
        self.dialogue_id = dialogue_id
        self.user.reset(rng, goal=goal)
        self.tracker.reset()
        self.turns_log: list[_Turn] = []
        self.turn_index = 0
        self.turns = 0
        self.ended_by = ""
        self.hit_turn_limit = False
        self._repeats = 0
        self._reasked = 0
        self._confirmations = 0
        self._no_venue = 0
        self._final_user: tuple[Act, str] | None = None
        self.done = False
        self.belief: BeliefState = self.tracker.belief
        self._mask = None
        self.user_act: Act | None = None
        self._user_text: str | None = None
        self._say(_HELLO)
        self._hear(_HELLO)
        return self.belief

    @property
    def system_text(self) -> str:
        """The text of the system's last act (realised on first use: training never needs it)."""
        if self._system_text is None:
            self._system_text = self.nlg.realise(self.system_act, self._system_belief)
        return self._system_text

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

    def _hear(self, act: Act) -> None:
        """The user answers ``act``; the tracker folds the exchange into the belief."""
        user_act = self.user.respond(act)
        self.turn_index += 1
        self.belief = self.tracker.update(act, user_act)
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
        act = _BYE if user_left else self.space.master_action(action, self.belief, offered=self.tracker.offered)
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
            self._hear(act)
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
            success=success,
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


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Per-dialogue results of :func:`run_dialogues` (arrays are read-only).

    Attributes
    ----------
    policy : str
    seed, start : int
    dialogue_ids : tuple of str
    success : numpy.ndarray of bool
    iq : numpy.ndarray of float
    turns : numpy.ndarray of int
    reward_ts, reward_iq : numpy.ndarray of float
    ended_by : tuple of str
    dialogues : tuple of contexts.dialogue_log.Dialogue
        The logged dialogues when ``keep_dialogues`` or ``log_path`` was given, else empty.
    """

    policy: str
    seed: int
    start: int
    dialogue_ids: tuple[str, ...]
    success: np.ndarray
    iq: np.ndarray
    turns: np.ndarray
    reward_ts: np.ndarray
    reward_iq: np.ndarray
    ended_by: tuple[str, ...]
    dialogues: tuple[Dialogue, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.dialogue_ids)

    @property
    def success_rate(self) -> float:
        return float(self.success.mean()) if len(self) else float("nan")

    @property
    def mean_turns(self) -> float:
        return float(self.turns.mean()) if len(self) else float("nan")

    @property
    def mean_iq(self) -> float:
        return float(self.iq.mean()) if len(self) else float("nan")

    @property
    def mean_reward_ts(self) -> float:
        return float(self.reward_ts.mean()) if len(self) else float("nan")

    @property
    def mean_reward_iq(self) -> float:
        return float(self.reward_iq.mean()) if len(self) else float("nan")

    def summary(self) -> dict[str, Any]:
        """Means over the dialogues (JSON-ready)."""
        return {
            "policy": self.policy,
            "seed": self.seed,
            "start": self.start,
            "dialogues": len(self),
            "success_rate": self.success_rate,
            "mean_turns": self.mean_turns,
            "mean_iq": self.mean_iq,
            "mean_reward_ts": self.mean_reward_ts,
            "mean_reward_iq": self.mean_reward_iq,
        }

    def to_frame(self) -> pandas.DataFrame:
        """One row per dialogue (index ``dialogue_id``)."""
        import pandas as pd

        frame = pd.DataFrame(
            {
                "success": self.success,
                "iq": self.iq,
                "turns": self.turns,
                "reward_ts": self.reward_ts,
                "reward_iq": self.reward_iq,
                "ended_by": list(self.ended_by),
            },
            index=pd.Index(list(self.dialogue_ids), name="dialogue_id"),
        )
        return frame


def _readonly(values: Sequence[Any], dtype: Any) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


def _check_policy(policy: object) -> Callable[[BeliefState, np.ndarray], int]:
    choose = getattr(policy, "choose", None)
    if not callable(choose):
        raise TypeError(
            f"policy must have a choose(belief, mask) -> int method (a SummaryPolicy), got {type(policy).__name__}"
        )
    return choose


def run_dialogues(
    policy: SummaryPolicy,
    n: int,
    *,
    seed: int,
    settings: SimulationSettings | None = None,
    nlg_instance: str | None = None,
    start: int = 0,
    log_path: str | os.PathLike[str] | None = None,
    log_source: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    keep_dialogues: bool = False,
    progress: bool = False,
    on_dialogue: Callable[[DialogueOutcome], None] | None = None,
) -> SimulationResult:
    """Run ``policy`` against the simulated user for ``n`` dialogues.

    Parameters
    ----------
    policy : SummaryPolicy
        ``choose(belief, mask) -> int``; optional hooks ``begin_dialogue(rng)`` and
        ``end_dialogue(trace)`` (see :class:`~policies.sim.summary.SummaryPolicy`).
    n : int
        Number of dialogues.
    seed : int
        Run seed; dialogue ``i`` draws from :func:`dialogue_seed` ``(seed, i)``.
    settings : SimulationSettings, optional
        The simulated world (domain, user, IQ estimator, turn limit).
    nlg_instance : str, optional
        Who words the system's acts (:class:`~policies.sim.nlg.TemplateNLG`); default the
        policy's ``nlg_instance`` attribute, else its name.
    start : int
        Index of the first dialogue (training in batches continues the sequence).
    log_path : path-like, optional
        Write the dialogues as a dialogue log (atomically) to this file.
    log_source : mapping, optional
        Provenance for the log header (``policy``, ``seed``, ``nlg_instance`` are added).
    overwrite : bool
        Replace an existing ``log_path`` (checked before any dialogue runs;
        :class:`~simscore.errors.OutputExistsError` otherwise).
    keep_dialogues : bool
        Return the logged dialogues in :attr:`SimulationResult.dialogues`.
    progress : bool
        Show a progress bar.
    on_dialogue : callable, optional
        Called with each dialogue's :class:`DialogueOutcome` once it has ended (after the
        policy's ``end_dialogue`` hook), e.g. to advance a progress bar of the caller.

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> from policies.handcrafted import HandcraftedPolicy, RandomPolicy
    >>> r = run_dialogues(HandcraftedPolicy(), 20, seed=0)
    >>> len(r), r.success_rate > 0.9, 3 <= r.mean_turns <= 8
    (20, True, True)
    >>> run_dialogues(RandomPolicy(seed=1), 20, seed=0).mean_reward_ts < r.mean_reward_ts - 10
    True
    """
    n = check_int("n", n, minimum=0, error=ValueError)
    seed = check_int("seed", seed, minimum=0, error=ValueError)
    start = check_int("start", start, minimum=0, error=ValueError)
    choose = _check_policy(policy)
    begin = getattr(policy, "begin_dialogue", None)
    end = getattr(policy, "end_dialogue", None)
    if log_path is not None:
        prepare_output(log_path, overwrite=overwrite)
    record = keep_dialogues or log_path is not None
    name = str(getattr(policy, "name", None) or type(policy).__name__)
    if nlg_instance is None:
        nlg_instance = str(getattr(policy, "nlg_instance", None) or name)
    sim = DialogueSimulator(settings, nlg_instance=nlg_instance, record=record)
    n_actions = len(sim.space)
    ids: list[str] = []
    success: list[bool] = []
    iqs: list[float] = []
    turns: list[int] = []
    rewards_ts: list[float] = []
    rewards_iq: list[float] = []
    ended: list[str] = []
    dialogues: list[Dialogue] = []
    indices = range(int(start), int(start) + int(n))
    if progress:
        from tqdm.auto import tqdm

        indices = tqdm(indices, desc=f"simulating ({name})", leave=False)
    for i in indices:
        dialogue_id = f"s{seed}-{i:06d}"
        sim.reset(_child_generator(seed, i, 0), dialogue_id=dialogue_id)
        if begin is not None:
            begin(_child_generator(seed, i, 1))
        tracing = end is not None
        beliefs: list[BeliefState] = []
        masks: list[np.ndarray] = []
        actions: list[int] = []
        while not sim.done:
            belief = sim.belief
            mask = sim.mask
            action = choose(belief, mask)
            # deliberately inline, not check_int: this runs once per simulated turn
            if type(action) is not int or not 0 <= action < n_actions:
                if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < n_actions:
                    raise InvalidResponseError(
                        f"policy {name!r} chose {action!r} in dialogue {dialogue_id} turn {sim.turn_index}; "
                        f"expected a summary action index in [0, {n_actions})"
                    )
                action = int(action)
            if tracing:
                beliefs.append(belief)
                masks.append(mask)
                actions.append(action)
            sim.step(action)
        outcome = sim.outcome()
        if end is not None:
            end(DialogueTrace(i, tuple(beliefs), tuple(masks), tuple(actions), outcome))
        if on_dialogue is not None:
            on_dialogue(outcome)
        ids.append(dialogue_id)
        success.append(outcome.success)
        iqs.append(outcome.iq)
        turns.append(outcome.turns)
        rewards_ts.append(outcome.reward_ts)
        rewards_iq.append(outcome.reward_iq)
        ended.append(outcome.ended_by)
        if record:
            dialogues.append(sim.dialogue(outcome))
    if log_path is not None:
        source = dict(log_source or {})
        source.setdefault("policy", name)
        source.setdefault("seed", int(seed))
        source.setdefault("start", int(start))
        source.setdefault("nlg_instance", nlg_instance)
        provenance = getattr(policy, "provenance", None)
        if isinstance(provenance, Mapping):
            source.setdefault("policy_provenance", dict(provenance))
        write_dialogue_log(log_path, dialogues, domain=sim.domain, source=source, overwrite=overwrite)
    return SimulationResult(
        policy=name,
        seed=int(seed),
        start=int(start),
        dialogue_ids=tuple(ids),
        success=_readonly(success, bool),
        iq=_readonly(iqs, np.float64),
        turns=_readonly(turns, np.int64),
        reward_ts=_readonly(rewards_ts, np.float64),
        reward_iq=_readonly(rewards_iq, np.float64),
        ended_by=tuple(ended),
        dialogues=tuple(dialogues) if keep_dialogues else (),
    )


def simulated_contexts(
    policies: Mapping[str, SummaryPolicy],
    n: int,
    *,
    seed: int,
    settings: SimulationSettings | None = None,
    name: str = "C_col",
) -> ContextSet:
    """C_col from simulated dialogues: every decision point of ``n`` dialogues per policy.

    The dialogues run as in :func:`run_dialogues` (dialogue ``i`` of every policy meets the
    same simulated user); the contexts are collected as from a dialogue log
    (:func:`contexts.collect_contexts`), one per system decision (the fixed greeting at turn 0
    is left out), with ids ``col/<policy name>/<dialogue id>/<turn>``. Unlike the C_gen grid,
    these beliefs carry dialogue history (offers, requested slots, the user's bye), so a
    policy's behaviour after an offer is compared too.

    Parameters
    ----------
    policies : mapping of str to SummaryPolicy
        Source name → policy (e.g. ``{"handcrafted": HandcraftedPolicy(), "random": RandomPolicy(seed=1)}``).
    n : int
        Dialogues per policy.
    seed : int
    settings : SimulationSettings, optional
    name : str
        Name of the context set.

    Examples
    --------
    >>> from policies.handcrafted import HandcraftedPolicy
    >>> contexts = simulated_contexts({"handcrafted": HandcraftedPolicy()}, 3, seed=0)
    >>> contexts.name, len(contexts) > 6, contexts.ids[0]
    ('C_col', True, 'col/handcrafted/s0-000000/1')
    """
    if not isinstance(policies, Mapping) or not policies:
        raise ValueError("policies must be a non-empty mapping of source name -> summary policy")
    domain = (settings or SimulationSettings()).domain
    logs = []
    for source, policy in policies.items():
        result = run_dialogues(policy, n, seed=seed, settings=settings, keep_dialogues=True)
        logs.append(({"source": {"name": source}, "domain": domain.name}, result.dialogues))
    collected = collect_contexts(logs, name=name, domain=domain)
    return collected.filter(lambda context: (context.metadata.get("turn_index") or 0) > 0, name=name)


class SummaryPolicyAdapter:
    """A simscore policy (``respond(context) -> Response``) from any summary policy.

    The summary action is chosen on ``context.belief`` and its mask, mapped to a master act
    with the belief and the domain (a context carries no dialogue history: the belief's
    history flags and ``last_offered`` are all there is), and realised by the template NLG.

    Parameters
    ----------
    policy : SummaryPolicy
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    name : str, optional
        Policy name for reports (default: the policy's ``name`` or class name).
    nlg_instance : str, optional
        Who words the acts (:class:`~policies.sim.nlg.TemplateNLG`); default ``name``. Two
        instances word the same act in the same context independently.

    Examples
    --------
    >>> from contexts.context import Context
    >>> from policies.handcrafted import HandcraftedPolicy
    >>> adapter = SummaryPolicyAdapter(HandcraftedPolicy())
    >>> c = Context("c1", BeliefState(slots={"food": {"indian": 1.0}}, method={"byconstraints": 1.0}),
    ...             {"source": "gen"})
    >>> r = adapter.respond(c)
    >>> str(r.action), r == adapter.respond(c), "?" in r.text
    ('request(area)', True, True)
    """

    def __init__(
        self,
        policy: SummaryPolicy,
        *,
        domain: Domain | None = None,
        name: str | None = None,
        nlg_instance: str | None = None,
    ) -> None:
        self._choose = _check_policy(policy)
        self.policy = policy
        self.domain = domain if domain is not None else default_domain()
        self.space: SummaryActions = domain_cache(self.domain).space
        self.name = name or str(getattr(policy, "name", None) or type(policy).__name__)
        self.nlg = TemplateNLG(self.name if nlg_instance is None else nlg_instance)
        inner = getattr(policy, "provenance", None)
        self.provenance: dict[str, Any] = dict(inner) if isinstance(inner, Mapping) else {}
        self.provenance["nlg_instance"] = self.nlg.instance

    def __repr__(self) -> str:
        return f"SummaryPolicyAdapter({self.policy!r}, nlg_instance={self.nlg.instance!r})"

    def respond(self, context: Any) -> Response:
        """The master act and text for ``context.belief``.

        Raises
        ------
        InvalidContextError
            The belief names a slot, value or venue the domain does not have.
        """
        belief = getattr(context, "belief", None)
        if not isinstance(belief, BeliefState):
            raise TypeError(
                f"context {getattr(context, 'id', context)!r} has no BeliefState 'belief' "
                f"(got {type(belief).__name__})"
            )
        try:
            belief.validate(self.domain.ontology)  # a slot or value of another domain is no context of ours
        except InvalidContextError as exc:
            raise InvalidContextError(
                f"context {getattr(context, 'id', context)!r} does not fit domain {self.domain.name!r}: {exc}"
            ) from None
        mask = self.space.mask(belief)
        action = self._choose(belief, mask)
        try:
            action = check_int("the summary action index", action, minimum=0, maximum=len(self.space) - 1)
        except (TypeError, ValueError) as exc:  # the message is built only on error: this runs per context
            where = f"policy {self.name!r}, context {getattr(context, 'id', '?')!r}"
            raise InvalidResponseError(f"{where}: {exc}") from None
        act = self.space.master_action(action, belief)
        return Response(act, self.nlg.realise(act, belief))
