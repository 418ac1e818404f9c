"""Replay from a context: continue a collected dialogue with two policies under common random numbers.

A context collected from a simulated dialogue (C_col from :func:`~policies.sim.simulated_contexts`
or the experiment's dialogue logs, a held-out set) is a moment of a dialogue whose user can be
rebuilt: :func:`~policies.sim.simulation.run_dialogues` draws dialogue ``i`` of the user stream
``stream`` of a run seeded with ``seed`` from :func:`~policies.sim.simulator.dialogue_seed`, and
the dialogue's id, ``s<seed>[-<stream key>...]-<i>`` (:func:`~policies.sim.simulator.stream_label`),
names all three. Given the policy that made the dialogue (its *source*, by the context's
``source_name``) and the simulated world (:class:`~policies.sim.simulator.SimulationSettings`),
:func:`replay` runs that dialogue again exactly as it ran (the same user goal, agenda,
behaviour and random stream; the same tracker), checks that the belief at every context's turn
is the context's own, and keeps the source's summary actions. From there:

1. the dialogue is rebuilt up to the context's turn ``t`` (the user's goal, agenda and random
   state, the tracker's belief and the interaction counters: the recorded actions are stepped
   again);
2. the user's and the master-act mapping's randomness are replaced by those of continuation
   ``k`` (:func:`continuation_seed`: a function of ``seed``, the context id and ``k``), the same
   in every branch (:meth:`~policies.sim.simulator.DialogueSimulator.branch`);
3. the dialogue continues (a) with policy A, (b) with policy B, (c) with A's action at turn
   ``t`` and B afterwards. Both policies get the same generator for their own randomness
   (``begin_dialogue``), and in (c) B still chooses at turn ``t`` (its choice is replaced by A's),
   so B's random draws after the branch are those of (b): with A and B the same policy, (a),
   (b) and (c) are the same dialogue.

Each continuation ends as a simulated dialogue does (success, turns counted from the
dialogue's start as PyDial counts them, interaction quality, R_TS and R_IQ:
:class:`~policies.sim.simulator.DialogueOutcome`). :meth:`Replays.flips` turns the three
replays into negative and positive flips with intervals (:func:`simscore.outcomes.flips.flip_decomposition`).

Everything is a function of the inputs and ``seed``: no global random state is read or written.

Examples
--------
>>> from policies.handcrafted import HandcraftedPolicy, RandomPolicy
>>> from policies.sim import simulated_contexts
>>> handcrafted = HandcraftedPolicy()
>>> contexts = simulated_contexts({"handcrafted": handcrafted}, 2, seed=0)
>>> replays = replay(contexts, handcrafted, RandomPolicy(seed=1), sources={"handcrafted": handcrafted},
...                  continuations=2, seed=5)
>>> len(replays) == 2 * len(contexts), bool(replays.a.success.all()), replays.names
(True, True, ('handcrafted', 'random'))
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from contexts.belief import BeliefState
from policies.sim.simulation import run_dialogues
from policies.sim.simulator import DialogueOutcome, DialogueSimulator, DialogueTrace, SimulationSettings, dialogue_seed
from policies.sim.summary import SummaryPolicy
from simscore.checks import check_int, check_seed
from simscore.errors import InvalidResponseError, ReplayError, excerpt

if TYPE_CHECKING:
    import pandas

    from simscore.outcomes.flips import FlipDecomposition, Outcomes
    from simscore.progress import Progress
    from simscore.stats import Bootstrap

__all__ = ["DialoguePosition", "ArmOutcomes", "Replays", "BranchPoints", "locate", "continuation_seed", "rebuild",
           "replay"]

#: A simulated dialogue's id: ``s<seed>``, the stream's keys, the dialogue's index (``run_dialogues``).
_DIALOGUE_ID = re.compile(r"s(\d+)((?:-\d+)*)-(\d+)")
#: The arms of a replay, in the order they run.
ARMS = ("a", "b", "c")


@dataclass(frozen=True)
class DialoguePosition:
    """Where a collected context sits: which simulated dialogue, and its turn.

    Attributes
    ----------
    source_name : str
        The source the context was collected from (whose policy made the dialogue).
    dialogue_id : str
    seed : int
        The run seed of :func:`~policies.sim.simulation.run_dialogues`.
    stream : tuple of int
        The user stream (:func:`~policies.sim.simulator.dialogue_seed`).
    index : int
        The dialogue's index in the stream.
    turn_index : int
        The decision the context is (1 for the first; turn 0 is the greeting).
    """

    source_name: str
    dialogue_id: str
    seed: int
    stream: tuple[int, ...]
    index: int
    turn_index: int


def locate(context: Any) -> DialoguePosition:
    """The simulated dialogue and turn of a collected context, from its metadata.

    Raises
    ------
    ReplayError
        The context does not say which simulated dialogue it comes from (no ``source_name``,
        ``dialogue_id`` or ``turn_index``, or a dialogue id that is not ``s<seed>[-<key>...]-<i>``,
        as of a dialogue log or a C_gen context), or it is turn 0 (the greeting, no decision).

    Examples
    --------
    >>> from contexts.context import Context
    >>> c = Context("col/x/s7-2000003-000012/3", BeliefState(),
    ...             {"source_name": "x", "dialogue_id": "s7-2000003-000012", "turn_index": 3})
    >>> locate(c)
    DialoguePosition(source_name='x', dialogue_id='s7-2000003-000012', seed=7, stream=(2000003,), index=12, turn_index=3)
    """
    context_id = getattr(context, "id", None)
    metadata = getattr(context, "metadata", None)
    if not isinstance(metadata, Mapping) or not isinstance(getattr(context, "belief", None), BeliefState):
        raise TypeError(f"expected a context (id, belief, metadata), got {type(context).__name__}")
    source, dialogue, turn = (metadata.get(k) for k in ("source_name", "dialogue_id", "turn_index"))
    where = f"context {excerpt(context_id)}"
    if not isinstance(source, str) or not isinstance(dialogue, str) or not isinstance(turn, int) or turn < 0:
        raise ReplayError(f"{where} does not name its dialogue (metadata source_name, dialogue_id and turn_index: "
                          f"{excerpt(source)}, {excerpt(dialogue)}, {excerpt(turn)}): only contexts collected from "
                          "simulated dialogues can be replayed")
    match = _DIALOGUE_ID.fullmatch(dialogue)
    if match is None:
        raise ReplayError(f"{where}: dialogue id {excerpt(dialogue)} is not a simulated dialogue's "
                          "(s<seed>[-<stream key>...]-<index>, as run_dialogues names them): the context set does "
                          "not record the seed its user was drawn from")
    if turn == 0:
        raise ReplayError(f"{where} is turn 0, the system's greeting: not a decision to replay from")
    stream = tuple(int(key) for key in match.group(2).split("-")[1:])
    return DialoguePosition(source, dialogue, int(match.group(1)), stream, int(match.group(3)), turn)


def continuation_seed(seed: int, context_id: str, k: int) -> np.random.SeedSequence:
    """The seed sequence of continuation ``k`` of the context ``context_id``.

    A function of the three alone (the context id enters through its SHA-256): the same
    continuation in every branch, every run and whatever else is replayed. Its children:
    0 the user, 1 the system's master-act mapping, 2 the policies' own randomness.

    >>> continuation_seed(0, "col/x/s0-000001/2", 3).spawn_key
    (3,)
    >>> a, b = (continuation_seed(0, c, 0).generate_state(1)[0] for c in ("col/x/s0-000001/2", "col/x/s0-000001/3"))
    >>> bool(a != b)
    True
    """
    words = np.frombuffer(hashlib.sha256(context_id.encode("utf-8")).digest()[:16], dtype="<u4")
    return np.random.SeedSequence([check_seed("seed", seed), *(int(w) for w in words)], spawn_key=(int(k),))


@dataclass(frozen=True, eq=False)
class ArmOutcomes:
    """How the continuations of one arm ended: one entry per replayed (context, continuation) (read-only arrays).

    Attributes
    ----------
    success : numpy.ndarray of bool
    turns : numpy.ndarray of int
        The dialogue's turns from its start (PyDial's count).
    iq, reward_ts, reward_iq : numpy.ndarray of float
    ended_by : tuple of str
    first_action : numpy.ndarray of int
        The summary action taken at the context's turn.
    first_act : tuple of str
        The master act said at the context's turn.
    """

    success: np.ndarray
    turns: np.ndarray
    iq: np.ndarray
    reward_ts: np.ndarray
    reward_iq: np.ndarray
    ended_by: tuple[str, ...]
    first_action: np.ndarray
    first_act: tuple[str, ...]

    def outcomes(self, reward: str = "ts") -> Outcomes:
        """As :class:`simscore.outcomes.flips.Outcomes` with the reward ``"ts"`` (R_TS) or ``"iq"`` (R_IQ)."""
        from simscore.outcomes.flips import Outcomes

        if reward not in ("ts", "iq"):
            raise ValueError(f"reward must be 'ts' or 'iq', got {excerpt(reward)}")
        return Outcomes(success=self.success, reward=self.reward_ts if reward == "ts" else self.reward_iq,
                        turns=self.turns, iq=self.iq)

    def __len__(self) -> int:
        return len(self.success)

    @classmethod
    def concatenate(cls, parts: Sequence[ArmOutcomes]) -> ArmOutcomes:
        """The rows of ``parts`` one after the other (at least one part)."""
        if not parts:
            raise ValueError("concatenate needs at least one ArmOutcomes")
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            pieces = [getattr(part, f.name) for part in parts]
            if isinstance(pieces[0], tuple):
                values[f.name] = tuple(value for piece in pieces for value in piece)
            else:
                array = np.concatenate(pieces)
                array.setflags(write=False)
                values[f.name] = array
        return cls(**values)

    def replaced(self, rows: Sequence[int] | np.ndarray, other: ArmOutcomes) -> ArmOutcomes:
        """These outcomes with the rows ``rows`` taken, in order, from ``other`` (one row of it per index).

        >>> one = ArmOutcomes(*(_readonly(v, t) for v, t in (([True, True], bool), ([5, 6], np.int64),
        ...     ([4.0, 4.0], float), ([15.0, 14.0], float), ([15.0, 10.0], float))), ("bye", "bye"),
        ...     _readonly([1, 2], np.int64), ("hello()", "hello()"))
        >>> two = one.replaced([1], ArmOutcomes(*(_readonly(v, t) for v, t in (([False], bool), ([25], np.int64),
        ...     ([1.0], float), ([-25.0], float), ([-25.0], float))), ("turns",), _readonly([3], np.int64), ("bye()",)))
        >>> two.success.tolist(), two.turns.tolist(), two.ended_by, two.first_act
        ([True, False], [5, 25], ('bye', 'turns'), ('hello()', 'bye()'))
        """
        index = np.asarray(rows, dtype=np.int64).reshape(-1)
        if len(index) != len(other):
            raise ValueError(f"rows names {len(index)} rows, other holds {len(other)}: one row of other per index")
        if len(index) and (index.min() < 0 or index.max() >= len(self)):
            raise ValueError(f"rows must lie in [0, {len(self)}), got {int(index.min())}..{int(index.max())}")
        values: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, tuple):
                merged = list(mine)
                for i, value in zip(index.tolist(), theirs):
                    merged[i] = value
                values[f.name] = tuple(merged)
            else:
                array = mine.copy()
                array[index] = theirs
                array.setflags(write=False)
                values[f.name] = array
        return ArmOutcomes(**values)


def _readonly(values: Sequence[Any], dtype: Any) -> np.ndarray:
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


class _Arm:
    """The outcomes of one arm, collected as its continuations end."""

    def __init__(self) -> None:
        self.outcomes: list[DialogueOutcome] = []
        self.first_action: list[int] = []
        self.first_act: list[str] = []

    def add(self, outcome: DialogueOutcome, first_action: int, first_act: str) -> None:
        self.outcomes.append(outcome)
        self.first_action.append(first_action)
        self.first_act.append(first_act)

    def result(self) -> ArmOutcomes:
        o = self.outcomes
        return ArmOutcomes(
            success=_readonly([x.success for x in o], bool), turns=_readonly([x.turns for x in o], np.int64),
            iq=_readonly([x.iq for x in o], np.float64), reward_ts=_readonly([x.reward_ts for x in o], np.float64),
            reward_iq=_readonly([x.reward_iq for x in o], np.float64), ended_by=tuple(x.ended_by for x in o),
            first_action=_readonly(self.first_action, np.int64), first_act=tuple(self.first_act))


@dataclass(frozen=True, eq=False)
class Replays:
    """:func:`replay`'s result: one row per (context, continuation), contexts in order, continuations inside.

    Attributes
    ----------
    names : (str, str)
        Policy A's and policy B's names.
    seed : int
    continuations : int
        K, the continuations per context.
    context_ids, source_names, dialogue_ids : tuple of str
        Per row.
    turn_index, continuation : numpy.ndarray of int
        Per row: the context's turn and the continuation's index ``k``.
    a, b, c : ArmOutcomes
        (a) A throughout, (b) B throughout, (c) A's action at the context, then B.
    """

    names: tuple[str, str]
    seed: int
    continuations: int
    context_ids: tuple[str, ...]
    source_names: tuple[str, ...]
    dialogue_ids: tuple[str, ...]
    turn_index: np.ndarray
    continuation: np.ndarray
    a: ArmOutcomes
    b: ArmOutcomes
    c: ArmOutcomes

    def __len__(self) -> int:
        return len(self.context_ids)

    @property
    def differ(self) -> np.ndarray:
        """Per row: whether A and B said different master acts at the context's turn."""
        return np.array([x != y for x, y in zip(self.a.first_act, self.b.first_act)], dtype=bool)

    def clusters(self) -> np.ndarray:
        """Per row, a code naming its dialogue (source and dialogue id): the resampling unit of the intervals."""
        keys = {key: code for code, key in enumerate(dict.fromkeys(zip(self.source_names, self.dialogue_ids)))}
        return np.array([keys[key] for key in zip(self.source_names, self.dialogue_ids)], dtype=np.int64)

    def flips(self, reward: str = "ts", *, bootstrap: Bootstrap | None = None) -> FlipDecomposition:
        """The total, action and after effects of B against A (:func:`simscore.outcomes.flips.flip_decomposition`).

        Rows are paired by (context, continuation); intervals resample dialogues.

        Parameters
        ----------
        reward : {"ts", "iq"}
            Which return is the reward: R_TS or R_IQ.
        bootstrap : simscore.stats.Bootstrap, optional
        """
        from simscore.outcomes.flips import flip_decomposition

        return flip_decomposition(self.a.outcomes(reward), self.b.outcomes(reward), self.c.outcomes(reward),
                                  differ=self.differ, clusters=self.clusters(), bootstrap=bootstrap, names=self.names,
                                  unit="dialogues")

    def to_frame(self) -> pandas.DataFrame:
        """One row per (context, continuation): its place, ``differ``, and every arm's outcome (``a_success``, ...)."""
        import pandas as pd

        columns: dict[str, Any] = {"context_id": list(self.context_ids), "source_name": list(self.source_names),
                                   "dialogue_id": list(self.dialogue_ids), "turn_index": self.turn_index,
                                   "continuation": self.continuation, "differ": self.differ}
        for arm in ARMS:
            outcomes: ArmOutcomes = getattr(self, arm)
            for name in ("success", "turns", "iq", "reward_ts", "reward_iq", "ended_by", "first_action", "first_act"):
                value = getattr(outcomes, name)
                columns[f"{arm}_{name}"] = list(value) if isinstance(value, tuple) else value
        return pd.DataFrame(columns)


# ----------------------------------------------------------------------------- the policies


def _policy_name(policy: object) -> str:
    return str(getattr(policy, "name", None) or type(policy).__name__)


def _check_policy(policy: object, role: str) -> SummaryPolicy:
    if not callable(getattr(policy, "choose", None)):
        raise TypeError(f"{role} must have a choose(belief, mask) -> int method (a SummaryPolicy), "
                        f"got {type(policy).__name__}")
    if getattr(policy, "training", False) is True:
        raise ValueError(f"{role} {_policy_name(policy)!r} is training: a replay would teach it; set training=False")
    return policy  # type: ignore[return-value]


class _Recorder:
    """A summary policy that hands on to ``policy`` and keeps the trace of the dialogue it played."""

    def __init__(self, policy: SummaryPolicy) -> None:
        self.policy = policy
        self.name = _policy_name(policy)
        self.trace: DialogueTrace | None = None

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        return self.policy.choose(belief, mask)

    def begin_dialogue(self, rng: np.random.Generator) -> None:
        begin = getattr(self.policy, "begin_dialogue", None)
        if begin is not None:
            begin(rng)

    def end_dialogue(self, trace: DialogueTrace) -> None:
        self.trace = trace
        end = getattr(self.policy, "end_dialogue", None)
        if end is not None:
            end(trace)


# ----------------------------------------------------------------------------- rebuilding


def _recorded(position: DialoguePosition, source: SummaryPolicy, settings: SimulationSettings) -> DialogueTrace:
    """The source's dialogue, run again as :func:`run_dialogues` ran it: its every decision."""
    recorder = _Recorder(source)
    run_dialogues(recorder, 1, seed=position.seed, stream=position.stream, start=position.index, settings=settings)
    assert recorder.trace is not None  # run_dialogues calls end_dialogue once per dialogue
    return recorder.trace


def _check_reached(context: Any, position: DialoguePosition, trace: DialogueTrace, source: str) -> None:
    """Refuse a context whose turn the replayed dialogue does not reach with the context's belief."""
    turn = position.turn_index
    where = f"context {excerpt(context.id)}: the replayed dialogue {position.dialogue_id} of source {source!r}"
    if turn > len(trace.actions):
        raise ReplayError(f"{where} ends after {len(trace.actions)} decisions, before turn {turn}; is it the "
                          "policy that made the dialogue, in the same simulated world?")
    if trace.beliefs[turn - 1].key() != context.belief.key():
        raise ReplayError(f"{where} reaches another belief state at turn {turn} than the context holds: the policy "
                          "given for the source, its sampling scale or the simulated world (settings: users, domain, "
                          "turn limit) are not those that made it")


def _prefix_generators(position: DialoguePosition) -> tuple[np.random.Generator, np.random.Generator]:
    """The user's and the master-act mapping's generators of the recorded dialogue (as run_dialogues makes them)."""
    children = dialogue_seed(position.seed, position.index, position.stream).spawn(3)
    return np.random.default_rng(children[0]), np.random.default_rng(children[2])


def _start(sim: DialogueSimulator, position: DialoguePosition, actions: Sequence[int]) -> None:
    """Rebuild the recorded dialogue in ``sim`` up to the decision at ``position.turn_index``."""
    user_rng, system_rng = _prefix_generators(position)
    sim.reset(user_rng, dialogue_id=position.dialogue_id, system_rng=system_rng)
    for action in actions[: position.turn_index - 1]:
        sim.step(action)


def rebuild(
    context: Any,
    source: SummaryPolicy,
    *,
    settings: SimulationSettings | None = None,
) -> DialogueSimulator:
    """The simulated dialogue of ``context`` at its decision, as it was recorded.

    The user (goal, agenda, behaviour, random state), the tracker's belief and the interaction
    counters are those of the recorded dialogue at the context's turn; the user keeps its
    recorded random stream, so stepping with the decision the source took continues the
    recorded dialogue.

    Parameters
    ----------
    context : contexts.context.Context
        A context collected from a simulated dialogue (:func:`locate`).
    source : SummaryPolicy
        The policy that made the dialogue (with the sampling scale it had then).
    settings : SimulationSettings, optional
        The simulated world the dialogue ran in.

    Returns
    -------
    DialogueSimulator
        Not done, ``sim.belief`` equal to the context's belief.

    Raises
    ------
    ReplayError
        As :func:`locate`, or when the replayed dialogue does not reach the context's belief.

    Examples
    --------
    >>> from policies.handcrafted import HandcraftedPolicy
    >>> from policies.sim import simulated_contexts
    >>> contexts = simulated_contexts({"hc": HandcraftedPolicy()}, 1, seed=0)
    >>> sim = rebuild(contexts[contexts.ids[1]], HandcraftedPolicy())
    >>> sim.belief == contexts[contexts.ids[1]].belief, sim.turn_index
    (True, 2)
    """
    position = locate(context)
    source = _check_policy(source, "source")
    settings = settings if settings is not None else SimulationSettings()
    trace = _recorded(position, source, settings)
    _check_reached(context, position, trace, position.source_name)
    sim = DialogueSimulator(settings, nlg_instance=_policy_name(source))
    _start(sim, position, trace.actions)
    return sim


def _normalised(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def _check_provenance(contexts: Any, positions: Mapping[str, DialoguePosition], settings: SimulationSettings) -> None:
    """Refuse a context set whose recorded sources name another seed, stream or user population."""
    built = getattr(contexts, "built", None)
    described = built.get("sources") if isinstance(built, Mapping) else None
    if not isinstance(described, Sequence):
        return
    recorded = {s.get("name"): s.get("provenance") for s in described if isinstance(s, Mapping)}
    users = _normalised(settings.user.to_json())
    for context_id, position in positions.items():
        provenance = recorded.get(position.source_name)
        if not isinstance(provenance, Mapping):
            continue
        checks = {"seed": (provenance.get("seed"), position.seed),
                  "stream": (provenance.get("stream"), list(position.stream)),
                  "users": (provenance.get("users"), users)}
        for key, (said, wanted) in checks.items():
            if said is not None and _normalised(said) != wanted:
                hint = "; pass settings= with those users" if key == "users" else ""
                raise ReplayError(f"context {excerpt(context_id)}: source {position.source_name!r} records {key} "
                                  f"{excerpt(said, 120)}, the replay would use {excerpt(wanted, 120)}{hint}")


# ----------------------------------------------------------------------------- the arms


def _take(policy: SummaryPolicy, sim: DialogueSimulator, name: str) -> int:
    action = policy.choose(sim.belief, sim.mask)
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < len(sim.space):
        raise InvalidResponseError(f"policy {name!r} chose {excerpt(action)} in dialogue {sim.dialogue_id} turn "
                                   f"{sim.turn_index}; expected a summary action index in [0, {len(sim.space)})")
    return int(action)


def _continue(sim: DialogueSimulator, policy: SummaryPolicy, name: str, rng: np.random.Generator,
              index: int, first: int | None) -> tuple[DialogueOutcome, int, str]:
    """Play ``policy`` from the branch point to the end (its first action replaced by ``first`` if given).

    The policy's hooks frame the continuation as one dialogue: ``begin_dialogue(rng)`` before,
    ``end_dialogue(trace)`` after, with the decisions it took.
    """
    begin = getattr(policy, "begin_dialogue", None)
    if begin is not None:
        begin(rng)
    beliefs: list[BeliefState] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    first_action, first_act = -1, ""
    while not sim.done:
        belief, mask = sim.belief, sim.mask
        action = _take(policy, sim, name)
        if not actions and first is not None:
            action = first
        beliefs.append(belief)
        masks.append(mask)
        actions.append(action)
        sim.step(action)
        if len(actions) == 1:
            first_action, first_act = action, str(sim.system_act)
    outcome = sim.outcome()
    end = getattr(policy, "end_dialogue", None)
    if end is not None:
        end(DialogueTrace(index, tuple(beliefs), tuple(masks), tuple(actions), outcome))
    return outcome, first_action, first_act


Row = tuple[str, int]
"""One replayed continuation: a context's id and the continuation's index ``k``."""


def _counted(rows: Sequence[Row], bar: Progress) -> Iterable[Row]:
    """The rows, each counted on ``bar`` once played."""
    for row in rows:
        yield row
        bar.update()


class BranchPoints:
    """Contexts made ready to branch from: located, checked, each recorded dialogue run again once.

    :func:`replay` is three calls of :meth:`play` on one of these. Built once, it also serves
    many policies on the same contexts: a policy's continuation of a context depends on the
    policy, the context, ``k`` and ``seed`` alone (:func:`continuation_seed`), never on the policy
    it is compared with, so an experiment that compares many pairs plays each policy once and pairs
    the results (:mod:`simscore.app.experiment.consequences`).

    Parameters
    ----------
    contexts : ContextSet or iterable of Context
        As for :func:`replay`.
    sources : mapping of str to SummaryPolicy
        The policy that made each source's dialogues, by ``source_name``.
    settings : SimulationSettings, optional
        The simulated world the dialogues ran in.

    Attributes
    ----------
    ids : tuple of str
        The contexts' ids, in order.
    settings : SimulationSettings

    Raises
    ------
    ReplayError
        As :func:`replay`: a context that does not record its simulated dialogue, a source
        without a policy, provenance that disagrees with the replay, a replayed dialogue that does
        not reach a context's belief.

    Examples
    --------
    >>> from policies.handcrafted import HandcraftedPolicy, RandomPolicy
    >>> from policies.sim import simulated_contexts
    >>> hc = HandcraftedPolicy()
    >>> points = BranchPoints(simulated_contexts({"hc": hc}, 1, seed=0), sources={"hc": hc})
    >>> rows = points.rows(2)
    >>> a, b = points.play(hc, rows, seed=3), points.play(hc, rows, seed=3)
    >>> len(rows) == 2 * len(points.ids), bool((a.turns == b.turns).all())
    (True, True)
    """

    def __init__(self, contexts: Iterable[Any], *, sources: Mapping[str, SummaryPolicy],
                 settings: SimulationSettings | None = None) -> None:
        if not isinstance(sources, Mapping):
            raise TypeError(f"sources must map source names to the policies that made them, got {type(sources).__name__}")
        self.settings = settings if settings is not None else SimulationSettings()
        items = list(contexts)
        positions = {context.id: locate(context) for context in items}
        missing = sorted({p.source_name for p in positions.values()} - set(sources))
        if missing:
            raise ReplayError(f"no policy for source(s) {', '.join(map(excerpt, missing[:5]))}"
                              f"{' and more' if len(missing) > 5 else ''} in sources (given: "
                              f"{', '.join(map(excerpt, list(sources)[:5])) or 'none'}): which policy made their "
                              "dialogues?")
        _check_provenance(contexts, positions, self.settings)
        traces: dict[tuple[str, str], DialogueTrace] = {}
        for context in items:
            position = positions[context.id]
            key = (position.source_name, position.dialogue_id)
            if key not in traces:
                source = _check_policy(sources[position.source_name], f"the policy of source {position.source_name!r}")
                traces[key] = _recorded(position, source, self.settings)
            _check_reached(context, position, traces[key], position.source_name)
        self.ids: tuple[str, ...] = tuple(positions)
        self._positions = positions
        self._actions = {cid: traces[(p.source_name, p.dialogue_id)].actions for cid, p in positions.items()}
        self._sim = DialogueSimulator(self.settings)

    def rows(self, continuations: int, context_ids: Iterable[str] | None = None) -> tuple[Row, ...]:
        """Every (context id, k) for ``k < continuations``: the contexts in order (default: all), k inside."""
        continuations = check_int("continuations", continuations, minimum=1, error=ValueError)
        ids = self.ids if context_ids is None else tuple(context_ids)
        unknown = [cid for cid in ids if cid not in self._positions]
        if unknown:
            raise ReplayError(f"context(s) {', '.join(map(excerpt, unknown[:5]))} are not among these branch points")
        return tuple((cid, k) for cid in ids for k in range(continuations))

    def play(self, policy: SummaryPolicy, rows: Sequence[Row], *, seed: int, first: Sequence[int] | None = None,
             name: str | None = None, progress: bool | Progress = False) -> ArmOutcomes:
        """Continue the dialogue of every row's context with ``policy`` under continuation ``k``'s randomness.

        Parameters
        ----------
        policy : SummaryPolicy
            Not training; its ``begin_dialogue`` / ``end_dialogue`` hooks frame each continuation.
        rows : sequence of (str, int)
            The (context id, k) to play (:meth:`rows`).
        seed : int
            Base seed of the continuations (:func:`continuation_seed`).
        first : sequence of int, optional
            Per row, the summary action taken at the context's turn instead of the policy's (the
            policy still chooses there, so its own random draws stay those of its own arm).
        name : str, optional
            The policy's name in errors (default: its ``name``, else its class name).
        progress : bool or simscore.progress.Progress
            Show how many rows are played: True, as a step of its own; a :class:`~simscore.progress.Progress`,
            counted on it (one unit a row), so that several arms make one step of a caller's.

        Returns
        -------
        ArmOutcomes
            One entry per row, in order.
        """
        policy = _check_policy(policy, "policy")
        seed = check_seed("seed", seed, error=ValueError)
        name = name if name is not None else _policy_name(policy)
        rows = list(rows)
        for cid, k in rows:
            if cid not in self._positions:
                raise ReplayError(f"context {excerpt(cid)} is not among these branch points")
            check_int("k", k, minimum=0, error=ValueError)
        swapped = None if first is None else [int(a) for a in first]
        if swapped is not None and len(swapped) != len(rows):
            raise ValueError(f"first has {len(swapped)} actions for {len(rows)} rows")
        from simscore.progress import Progress, track

        counted = (_counted(rows, progress) if isinstance(progress, Progress)
                   else track(rows, f"replaying {name}", unit="continuations", enabled=progress))
        arm = _Arm()
        sim = self._sim
        for i, (cid, k) in enumerate(counted):
            position = self._positions[cid]
            user, system, own = continuation_seed(seed, cid, k).spawn(3)
            _start(sim, position, self._actions[cid])
            sim.branch(np.random.default_rng(user), system_rng=np.random.default_rng(system))
            arm.add(*_continue(sim, policy, name, np.random.default_rng(own), position.index,
                               None if swapped is None else swapped[i]))
        return arm.result()

    def swap(self, policy_b: SummaryPolicy, rows: Sequence[Row], a: ArmOutcomes, b: ArmOutcomes, *, seed: int,
             name: str | None = None, progress: bool | Progress = False) -> ArmOutcomes:
        """Arm (c): A's action at the context, then ``policy_b``; ``a`` and ``b`` are the arms of A and B on ``rows``.

        Played only on the rows where A and B took different summary actions: where they took the
        same, (c) is (b) continuation for continuation (the same action, then B with the same
        random numbers), so ``b``'s row is it.
        """
        if len(a) != len(rows) or len(b) != len(rows):
            raise ValueError(f"a and b must hold one outcome per row ({len(rows)}), got {len(a)} and {len(b)}")
        differ = np.flatnonzero(a.first_action != b.first_action)
        played = self.play(policy_b, [rows[i] for i in differ.tolist()], seed=seed,
                           first=a.first_action[differ].tolist(), name=name, progress=progress)
        return b.replaced(differ, played)

    def replays(self, rows: Sequence[Row], a: ArmOutcomes, b: ArmOutcomes, c: ArmOutcomes, *,
                names: tuple[str, str], seed: int, continuations: int) -> Replays:
        """The three arms of ``rows`` as :class:`Replays` (rows in order; ``continuations``: K of the rows)."""
        if not len(a) == len(b) == len(c) == len(rows):
            raise ValueError(f"the arms must hold one outcome per row ({len(rows)}), got {len(a)}, {len(b)}, {len(c)}")
        positions = [self._positions[cid] for cid, _ in rows]
        return Replays(
            names=(str(names[0]), str(names[1])), seed=seed, continuations=continuations,
            context_ids=tuple(cid for cid, _ in rows), source_names=tuple(p.source_name for p in positions),
            dialogue_ids=tuple(p.dialogue_id for p in positions),
            turn_index=_readonly([p.turn_index for p in positions], np.int64),
            continuation=_readonly([k for _, k in rows], np.int64), a=a, b=b, c=c)


def replay(
    contexts: Iterable[Any],
    policy_a: SummaryPolicy,
    policy_b: SummaryPolicy,
    *,
    sources: Mapping[str, SummaryPolicy],
    continuations: int = 4,
    seed: int = 0,
    settings: SimulationSettings | None = None,
    names: tuple[str, str] | None = None,
    progress: bool = False,
) -> Replays:
    """Continue every context's dialogue with A, with B, and with A's action then B, over K user continuations.

    Parameters
    ----------
    contexts : ContextSet or iterable of Context
        Contexts collected from simulated dialogues (:func:`locate`). A
        :class:`~contexts.context.ContextSet` whose ``built`` records its sources' seed, stream
        or users is checked against them.
    policy_a, policy_b : SummaryPolicy
        The two policies (not training). Their ``begin_dialogue`` / ``end_dialogue`` hooks
        frame each continuation; both get the same generator for their own randomness.
    sources : mapping of str to SummaryPolicy
        The policy that made each source's dialogues, by ``source_name`` (e.g. the mapping given
        to :func:`~policies.sim.simulated_contexts`; for the experiment's C_col the runs' final
        checkpoints with the collection's sampling scale).
    continuations : int
        K >= 1, the user continuations per context.
    seed : int
        Base seed of the continuations (:func:`continuation_seed`).
    settings : SimulationSettings, optional
        The simulated world the dialogues ran in (for a held-out set: its users).
    names : (str, str), optional
        A's and B's names (default: their ``name`` attributes, else their class names).
    progress : bool
        Show the progress of the replays (each arm's continuations).

    Returns
    -------
    Replays

    Raises
    ------
    ReplayError
        A context that does not record its simulated dialogue, a source without a policy in
        ``sources``, provenance that disagrees with the replay, or a replayed dialogue that does
        not reach a context's belief.

    Notes
    -----
    The three arms are :meth:`BranchPoints.play` of A, of B, and :meth:`BranchPoints.swap`: arm
    (c) is played only where A and B took different actions (elsewhere it is (b)).
    """
    policy_a = _check_policy(policy_a, "policy_a")
    policy_b = _check_policy(policy_b, "policy_b")
    continuations = check_int("continuations", continuations, minimum=1, error=ValueError)
    seed = check_seed("seed", seed, error=ValueError)
    names = names if names is not None else (_policy_name(policy_a), _policy_name(policy_b))
    points = BranchPoints(contexts, sources=sources, settings=settings)
    rows = points.rows(continuations)
    a = points.play(policy_a, rows, seed=seed, name=names[0], progress=progress)
    b = points.play(policy_b, rows, seed=seed, name=names[1], progress=progress)
    c = points.swap(policy_b, rows, a, b, seed=seed, name=names[1], progress=progress)
    return points.replays(rows, a, b, c, names=names, seed=seed, continuations=continuations)
