"""Simulated dialogues in bulk: a policy against the simulated user, N times; and the simscore policy adapter.

One dialogue runs in :class:`~policies.sim.simulator.DialogueSimulator` (how a turn goes, the
turn limit, the rewards: :mod:`policies.sim.simulator`).

:func:`run_dialogues` runs N dialogues. Dialogue ``i`` uses generators derived from
``numpy.random.SeedSequence(seed, spawn_key=(*stream, i))`` (child 0: the user, child 1: the
policy's :meth:`begin_dialogue` hook, child 2: the system's master-act mapping), so it is the
same whatever ``n`` and ``start`` are; their states are computed many dialogues at a time
(:mod:`policies.sim._seeds`, the same generators as numpy's, bit for bit).
It can write the dialogues as a :mod:`contexts.dialogue_log` file (the C_col input): one
line per dialogue, turn 0 (the greeting) and one turn per decision with the belief at the
system's decision time; a user act that no decision follows (after the turn limit) is kept
in the outcome.

:class:`SummaryPolicyAdapter` turns any summary policy into a simscore policy
(``respond(context) -> Response``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from contexts.belief import BeliefState
from contexts.collect import collect_contexts
from contexts.dialogue_log import Dialogue, write_dialogue_log
from contexts.domain import default_domain
from policies.sim._seeds import DialogueGenerators
from policies.sim.domain_cache import domain_cache
from policies.sim.nlg import TemplateNLG
from policies.sim.simulator import (
    MAX_TURNS,
    DialogueOutcome,
    DialogueSimulator,
    DialogueTrace,
    SimulationSettings,
    dialogue_seed,
    stream_label,
)
from policies.sim.summary import SummaryActions, SummaryPolicy
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
    "stream_label",
    "simulated_contexts",
    "SummaryPolicyAdapter",
]


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Per-dialogue results of :func:`run_dialogues` (arrays are read-only).

    Attributes
    ----------
    policy : str
    seed, start : int
    stream : tuple of int
        The user stream of the run seeded with ``seed`` (:func:`dialogue_seed`; ``()``: its
        training users).
    dialogue_ids : tuple of str
    success : numpy.ndarray of bool
    iq : numpy.ndarray of float
    turns : numpy.ndarray of int
        Turns as PyDial counts them: the system's decisions (greeting not counted, the
        decision after the user's ``bye()`` counted).
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
    stream: tuple[int, ...] = ()

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
            "stream": list(self.stream),
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
    stream: Sequence[int] = (),
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
        Run seed; dialogue ``i`` draws from :func:`dialogue_seed` ``(seed, i, stream)``.
    stream : sequence of int
        Which of the run's user streams (:func:`dialogue_seed`): ``()`` (default) its training
        users, e.g. ``(eval_seed, checkpoint)`` the evaluation users after a checkpoint.
        Dialogue ids are ``s<seed>[-<key>...]-<i>`` (:func:`stream_label`).
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
    stream = tuple(check_int("a stream key", key, minimum=0, error=ValueError) for key in stream)
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
    outcomes = _Outcomes()
    dialogues: list[Dialogue] = []
    indices: Iterable[int] = range(start, start + n)
    if progress:
        from simscore.progress import track

        indices = track(indices, f"simulating ({name})", total=n, unit="dialogues", leave=False)
    label = stream_label(seed, stream)
    seeds = DialogueGenerators(seed, stream, start, start + n)
    for i in indices:
        dialogue_id = f"{label}-{i:06d}"
        user_rng, policy_rng, system_rng = seeds.generators(i)
        sim.reset(user_rng, dialogue_id=dialogue_id, system_rng=system_rng)
        if begin is not None:
            begin(policy_rng)
        beliefs, masks, actions = _play(sim, choose, name, tracing=end is not None)
        outcome = sim.outcome()
        if end is not None:
            end(DialogueTrace(i, beliefs, masks, actions, outcome))
        if on_dialogue is not None:
            on_dialogue(outcome)
        outcomes.add(dialogue_id, outcome)
        if record:
            dialogues.append(sim.dialogue(outcome))
    if log_path is not None:
        source = dict(log_source or {})
        source.setdefault("policy", name)
        source.setdefault("seed", seed)
        if stream:
            source.setdefault("stream", list(stream))
        source.setdefault("start", start)
        source.setdefault("nlg_instance", nlg_instance)
        provenance = getattr(policy, "provenance", None)
        if isinstance(provenance, Mapping):
            source.setdefault("policy_provenance", dict(provenance))
        write_dialogue_log(log_path, dialogues, domain=sim.domain, source=source, overwrite=overwrite)
    return outcomes.result(name, seed, start, tuple(dialogues) if keep_dialogues else (), stream)


def _play(
    sim: DialogueSimulator, choose: Callable[[BeliefState, np.ndarray], int], name: str, *, tracing: bool
) -> tuple[tuple[BeliefState, ...], tuple[np.ndarray, ...], tuple[int, ...]]:
    """Run the started dialogue of ``sim`` to its end; the decisions (belief, mask, action) if ``tracing``."""
    n_actions = len(sim.space)
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
                    f"policy {name!r} chose {action!r} in dialogue {sim.dialogue_id} turn {sim.turn_index}; "
                    f"expected a summary action index in [0, {n_actions})"
                )
            action = int(action)
        if tracing:
            beliefs.append(belief)
            masks.append(mask)
            actions.append(action)
        sim.step(action)
    return tuple(beliefs), tuple(masks), tuple(actions)


class _Outcomes:
    """The per-dialogue columns of a :class:`SimulationResult`, collected as dialogues end."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.success: list[bool] = []
        self.iq: list[float] = []
        self.turns: list[int] = []
        self.reward_ts: list[float] = []
        self.reward_iq: list[float] = []
        self.ended_by: list[str] = []

    def add(self, dialogue_id: str, outcome: DialogueOutcome) -> None:
        self.ids.append(dialogue_id)
        self.success.append(outcome.success)
        self.iq.append(outcome.iq)
        self.turns.append(outcome.turns)
        self.reward_ts.append(outcome.reward_ts)
        self.reward_iq.append(outcome.reward_iq)
        self.ended_by.append(outcome.ended_by)

    def result(
        self, policy: str, seed: int, start: int, dialogues: tuple[Dialogue, ...], stream: tuple[int, ...]
    ) -> SimulationResult:
        return SimulationResult(
            policy=policy,
            seed=seed,
            start=start,
            dialogue_ids=tuple(self.ids),
            success=_readonly(self.success, bool),
            iq=_readonly(self.iq, np.float64),
            turns=_readonly(self.turns, np.int64),
            reward_ts=_readonly(self.reward_ts, np.float64),
            reward_iq=_readonly(self.reward_iq, np.float64),
            ended_by=tuple(self.ended_by),
            dialogues=dialogues,
            stream=stream,
        )


def simulated_contexts(
    policies: Mapping[str, SummaryPolicy],
    n: int,
    *,
    seed: int,
    settings: SimulationSettings | None = None,
    name: str = "C_col",
    progress: bool = False,
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
    progress : bool
        Show each policy's dialogues as a step (:func:`run_dialogues`'s ``progress``).

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
        result = run_dialogues(policy, n, seed=seed, settings=settings, keep_dialogues=True, progress=progress)
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
    seed : int, optional
        The policy's seed, from which the master-act mapping draws its one random choice (the
        slot an ``inform_byname`` adds when nothing was requested) as a function of the seed
        and the context (:func:`~policies.sim.summary.belief_generator`): checkpoints of one
        run choose alike, runs with other seeds may not (PyDial draws from its run's random
        stream). Default: the policy's ``seed`` attribute, else 0.

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
        seed: int | None = None,
    ) -> None:
        self._choose = _check_policy(policy)
        if seed is None:
            seed = getattr(policy, "seed", 0)
        self.seed = check_int("seed", seed, minimum=0, error=ValueError)
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
        act = self.space.master_action(action, belief, rng=self.seed)
        return Response(act, self.nlg.realise(act, belief))
