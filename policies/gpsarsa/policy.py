"""The GP-SARSA dialogue policy: the learner of :mod:`policies.gpsarsa` wrapped for a domain.

:class:`GPSarsaPolicy` is at the same time

* a :class:`~policies.sim.summary.SummaryPolicy` the dialogue runner
  (:func:`policies.sim.simulation.run_dialogues`) trains and evaluates: ``choose(belief, mask)``
  plus the hooks ``begin_dialogue(rng)`` and ``end_dialogue(trace)``;
* a :class:`simscore.policy.Policy`: ``respond(context) -> simscore.Response``, always greedy
  and deterministic, with ``name`` and ``provenance`` for :func:`simscore.policy.run_policy`.

Two modes
---------
*Training* (``training=True``): for every unmasked action Q is sampled from
``N(mean, (scale · std)²)`` (``scale`` from the learner's config, 3 by default) and the
largest sample wins; the samples come from the generator the runner passes to
``begin_dialogue`` (derived from the dialogue's seed, so dialogue ``i`` of a run explores the
same way however the run was split or resumed). Outside a simulated dialogue the policy draws
from a generator it owns, seeded with ``seed`` (deterministic per seed, but not part of a
checkpoint). At the end of each dialogue the policy learns from it with the chosen reward:
``"ts"`` → R_TS = 20·success − T, ``"iq"`` → R_IQ = 5·(iq − 1) − T, spread over the decisions
as :meth:`policies.sim.simulation.DialogueTrace.rewards` does (see "Learning signal").

*Not training* (``training=False``): inside a simulated dialogue the policy samples with
``sampling_scale`` (PyDial evaluates with scale 1: it still samples from the posterior; the
training run's evaluation and the collection of C_col set it so); with ``sampling_scale`` 0
(the default) and outside a dialogue it takes the unmasked action with the largest
posterior mean (greedy; ties go to the lowest action index). :meth:`respond` is greedy in
every mode.

Learning signal
---------------
``reward_assignment="terminal"`` (default, PyDial's GP-SARSA): every decision but the last
gets reward 0 and the last the dialogue's whole return, so every Q(b, a) of a dialogue
regresses on its total return. ``"per_turn"``: −1 per decision and the outcome bonus on the
last (the textbook form). Both sum to R_TS or R_IQ; the decision after the user's bye is part
of the episode, as in PyDial.

Responses on contexts
---------------------
:meth:`respond` maps ``context.belief`` to a summary action, the summary action to a master
act (:class:`~policies.sim.summary.SummaryActions`) and the act to text
(:class:`~policies.sim.nlg.TemplateNLG`), through :class:`~policies.sim.simulation.SummaryPolicyAdapter`.
It works on collected contexts (C_col, whose beliefs carry the dialogue's history flags) and on
C_gen contexts, which have no history: their history is whatever the belief says, by default
(see :func:`contexts.generate.generate_grid`) no offer happened, no venue was offered last
(``last_offered`` None), the last system act neither offered a venue nor said that none
matches, and no venue was offered since. Those defaults enter the feature vector (both
history flags are 0, as the pairs ``[0, 1]``) and the action mask (``reqmore`` and
``inform_alternatives`` are masked without an offer).

NLG
---
The acts are worded by the shared template NLG (:class:`~policies.sim.nlg.TemplateNLG`) as the
policy instance ``nlg_instance`` — the policy's name, which includes its reward, seed and
checkpoint — so two checkpoints or two runs that choose the same act for the same context
may word it differently (as the paper's separately trained neural NLG models did), while
one policy always words an act the same way.

Checkpoints
-----------
:meth:`save` writes the learner's two files (``<stem>.npz`` with the arrays, ``<stem>.json``
with format, version, configuration and checksum; see :mod:`policies.gpsarsa`) and puts the
policy's own metadata into that JSON under ``"metadata"``: format
``"simscore.gpsarsa_policy"``, version, reward, seed, dialogues trained, name, the reward
assignment and
the domain (name, feature size, summary actions and a SHA-256 fingerprint of ontology and
venues). :meth:`load` never unpickles and raises :class:`~simscore.errors.CheckpointError` for a
missing, corrupt or wrong-version file and for a checkpoint of another domain.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.gpsarsa.checkpoint import read_checkpoint_json
from policies.gpsarsa.learner import GPSarsa
from policies.gpsarsa.values import Episode, Evaluation, GPSarsaConfig, QEstimate
from policies.sim.domain_cache import domain_cache, domain_fingerprint
from policies.sim.features import BeliefFeatures, feature_size
from policies.sim.rewards import REWARD_MODELS
from policies.sim.simulation import SummaryPolicyAdapter
from policies.sim.summary import SummaryActions
from simscore.checks import check_int
from simscore.errors import CheckpointError
from simscore.io import format_problem
from simscore.responses import Response

if TYPE_CHECKING:
    from contexts.domain import Domain
    from policies.sim.simulation import DialogueTrace

__all__ = [
    "REWARDS",
    "POLICY_FORMAT",
    "POLICY_VERSION",
    "REWARD_ASSIGNMENTS",
    "GPSarsaPolicy",
    "domain_fingerprint",
]

#: Reward names: the short form used in configs and the CLI → the long name.
REWARDS: dict[str, str] = {name: model.long_name for name, model in REWARD_MODELS.items()}

POLICY_FORMAT = "simscore.gpsarsa_policy"
"""Value of ``metadata.format`` in a GP-SARSA policy checkpoint's JSON file."""

POLICY_VERSION = 3
"""Version of the policy metadata written by :meth:`GPSarsaPolicy.save` (the only one read).

Version 3: PyDial's belief-feature encoding (flags as pairs ``[x, 1 - x]``, the repeated
database block, PyDial's two history flags; :mod:`policies.sim.features`, 302 numbers).
Version 2 had the simulated world and learning signal of PyDial's Environment 1 with other
belief features (275 numbers); version 1 an easier world. Older checkpoints are refused with
a message saying so: their GP was learnt on other feature vectors and cannot be converted."""

#: Why each older policy version cannot be read (the refusal names it).
_OLD_VERSIONS = {
    1: "an easier simulated world and other belief features",
    2: "belief features that are not PyDial's (275 numbers; version 3 has PyDial's 302)",
}

#: How a dialogue's return is spread over its decisions (see the module docstring).
REWARD_ASSIGNMENTS = ("terminal", "per_turn")


class _GreedyView:
    """The policy as the response adapter sees it: greedy ``choose`` only."""

    __slots__ = ("choose", "name")

    def __init__(self, policy: GPSarsaPolicy) -> None:
        self.choose = policy.greedy_action
        self.name = "gpsarsa"


class GPSarsaPolicy:
    """A GP-SARSA dialogue policy over the summary actions of one domain.

    Parameters
    ----------
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    reward : {"ts", "iq"}
        The reward the policy learns from in training mode: task success (R_TS) or
        interaction quality (R_IQ).
    seed : int
        The run seed (recorded in the provenance and the name; seeds the owned generator).
    gp_config : GPSarsaConfig, optional
        Learner hyper-parameters; default ``GPSarsaConfig(feature_dim=feature_size(domain),
        n_actions=<number of summary actions>)`` (γ = 1, σ = 5, ν = 0.001, scale = 3).
    learner : GPSarsa, optional
        An existing learner to wrap instead of a fresh one (its dimensions must fit the
        domain); excludes ``gp_config``.
    training : bool
        Start in training mode (explore and learn) rather than greedy mode.
    reward_assignment : {"terminal", "per_turn"}
        How a dialogue's return is spread over its decisions when learning (see the module
        docstring); ``"terminal"`` is PyDial's.
    dialogues_trained : int
        How many training dialogues the learner has seen (restored from checkpoints).
    name : str, optional
        Fixed name for reports; default ``"gpsarsa-<reward>-seed<seed>-<dialogues_trained>"``.

    Examples
    --------
    >>> from policies.sim.simulation import run_dialogues
    >>> policy = GPSarsaPolicy(reward="ts", seed=0, training=True)
    >>> _ = run_dialogues(policy, 20, seed=0)        # learns from 20 dialogues
    >>> policy.dialogues_trained, policy.name
    (20, 'gpsarsa-ts-seed0-20')
    >>> policy.training = False                      # greedy: evaluation and responses
    >>> from contexts import generate_grid
    >>> context = generate_grid()["gen/area=0.0/pricerange=0.0/food=0.0/method=none"]
    >>> policy.respond(context) == policy.respond(context)
    True
    """

    def __init__(
        self,
        domain: Domain | None = None,
        *,
        reward: str = "ts",
        seed: int = 0,
        gp_config: GPSarsaConfig | None = None,
        learner: GPSarsa | None = None,
        training: bool = False,
        dialogues_trained: int = 0,
        name: str | None = None,
        reward_assignment: str = "terminal",
    ) -> None:
        if reward_assignment not in REWARD_ASSIGNMENTS:
            raise ValueError(f"reward_assignment must be one of {REWARD_ASSIGNMENTS}, got {reward_assignment!r}")
        self.reward_assignment = reward_assignment
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {sorted(REWARDS)}, got {reward!r}")
        self.domain: Domain = domain if domain is not None else default_domain()
        self.space: SummaryActions = domain_cache(self.domain).space
        # the policy's own feature extractor (it remembers what it computed; shares the
        # per-belief summary with the runner's masks through the domain's summary actions)
        self.feature_extractor = BeliefFeatures(self.domain, space=self.space)
        self.seed = check_int("seed", seed, minimum=0, error=ValueError)
        self.reward = reward
        self.dialogues_trained = check_int("dialogues_trained", dialogues_trained, minimum=0, error=ValueError)
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self._name = name
        dim, n_actions = feature_size(self.domain), len(self.space)
        if learner is not None:
            if gp_config is not None:
                raise ValueError("give either learner or gp_config, not both")
            if not isinstance(learner, GPSarsa):
                raise TypeError(f"learner must be a GPSarsa, got {type(learner).__name__}")
        else:
            if gp_config is None:
                gp_config = GPSarsaConfig(feature_dim=dim, n_actions=n_actions)
            elif not isinstance(gp_config, GPSarsaConfig):
                raise TypeError(f"gp_config must be a GPSarsaConfig, got {type(gp_config).__name__}")
            learner = GPSarsa(gp_config)
        cfg = learner.config
        if (cfg.feature_dim, cfg.n_actions) != (dim, n_actions):
            raise ValueError(
                f"the learner has feature_dim={cfg.feature_dim}, n_actions={cfg.n_actions}; domain "
                f"{self.domain.name!r} needs feature_dim={dim}, n_actions={n_actions}"
            )
        self.learner = learner
        self.training = bool(training)
        self.sampling_scale = 0.0
        self._rng: np.random.Generator | None = None  # the current dialogue's generator
        self._own_rng: np.random.Generator | None = None
        # this dialogue's decisions: belief, features and the learner's evaluation (see end_dialogue)
        self._seen: list[tuple[BeliefState, np.ndarray, Evaluation]] = []
        self._adapter: SummaryPolicyAdapter | None = None

    # ------------------------------------------------------------------ description

    @property
    def reward_name(self) -> str:
        """``"task_success"`` or ``"interaction_quality"``."""
        return REWARDS[self.reward]

    @property
    def gp_config(self) -> GPSarsaConfig:
        """The learner's hyper-parameters."""
        return self.learner.config

    @property
    def nlg_instance(self) -> str:
        """Who words this policy's acts: its name (reward, seed and checkpoint)."""
        return self.name

    @property
    def name(self) -> str:
        """The policy's name in reports (changes with training unless fixed)."""
        if self._name is not None:
            return self._name
        return f"gpsarsa-{self.reward}-seed{self.seed}-{self.dialogues_trained}"

    @property
    def provenance(self) -> dict[str, Any]:
        """JSON-ready facts recorded with the policy's responses."""
        cfg = self.learner.config
        return {
            "policy": "gpsarsa",
            "reward": self.reward,
            "seed": self.seed,
            "checkpoint": self.dialogues_trained,
            "dialogues_trained": self.dialogues_trained,
            "nlg_instance": self.nlg_instance,
            "dictionary_size": self.learner.dictionary_size,
            "domain": self.domain.name,
            "gp": {"gamma": cfg.gamma, "sigma": cfg.sigma, "nu": cfg.nu, "scale": cfg.scale},
        }

    def __repr__(self) -> str:
        mode = "training" if self.training else "greedy"
        return (
            f"GPSarsaPolicy(reward={self.reward!r}, seed={self.seed}, dialogues_trained="
            f"{self.dialogues_trained}, dictionary_size={self.learner.dictionary_size}, {mode})"
        )

    # ------------------------------------------------------------------ decisions

    def features(self, belief: BeliefState) -> np.ndarray:
        """The belief feature vector (:func:`policies.sim.features.belief_features`, by the policy's extractor)."""
        return self.feature_extractor(belief)

    def q_values(self, belief: BeliefState, mask: np.ndarray | None = None) -> QEstimate:
        """Posterior mean and standard deviation of Q for every summary action (NaN where masked)."""
        return self.learner.q_values(self.feature_extractor(belief), mask)

    def greedy_action(self, belief: BeliefState, mask: np.ndarray) -> int:
        """The unmasked action with the largest posterior mean (ties: the lowest index)."""
        return self.learner.act(self.feature_extractor(belief), mask, None, scale=0.0).action

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        """Sample an action (training, or ``sampling_scale`` > 0 inside a dialogue) or take the greedy one."""
        if not self.training:
            if self.sampling_scale > 0.0 and self._rng is not None:
                return self.learner.act(self.feature_extractor(belief), mask, self._rng, self.sampling_scale).action
            return self.greedy_action(belief, mask)
        x = self.feature_extractor(belief)
        if self._rng is None:  # outside a simulated dialogue
            if self._own_rng is None:
                self._own_rng = np.random.default_rng(self.seed)
            return self.learner.act(x, mask, self._own_rng).action
        decision = self.learner.act(x, mask, self._rng)
        self._seen.append((belief, x, decision.evaluation))  # learned from in end_dialogue
        return decision.action

    # ------------------------------------------------------------------ runner hooks

    def begin_dialogue(self, rng: np.random.Generator) -> None:
        """Use ``rng`` for this dialogue's exploration (called by the dialogue runner)."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        self._rng = rng
        self._seen = []

    def end_dialogue(self, trace: DialogueTrace) -> None:
        """Learn from the finished dialogue ``trace`` (training mode only)."""
        seen, self._seen, self._rng = self._seen, [], None
        if not self.training:
            return
        self.dialogues_trained += 1
        actions = np.asarray(trace.actions, dtype=np.int64)
        rewards = trace.rewards(REWARD_MODELS[self.reward], assignment=self.reward_assignment)
        beliefs = trace.beliefs
        if not len(actions):
            return
        # The runner's trace holds the very belief objects it passed to choose, in order (the
        # SummaryPolicy protocol): those decisions' features and evaluations are reused.
        rows = []
        evaluations = []
        for k, belief in enumerate(beliefs):
            if k < len(seen) and seen[k][0] is belief:
                rows.append(seen[k][1])
                evaluations.append(seen[k][2])
            else:
                rows.append(self.feature_extractor(belief))
        reused = tuple(evaluations) if len(evaluations) == len(rows) else None
        self.learner.learn(Episode(np.array(rows), actions, rewards, reused))

    # ------------------------------------------------------------------ simscore policy

    def respond(self, context: Any) -> Response:
        """The greedy master act and its text for ``context.belief`` (deterministic).

        Greedy in both modes. Contexts without history (C_gen) are answered with the history
        flags their belief states carry (see the module docstring).
        """
        adapter = self._adapter
        if adapter is None or adapter.nlg.instance != self.nlg_instance:
            adapter = SummaryPolicyAdapter(_GreedyView(self), domain=self.domain, nlg_instance=self.nlg_instance,
                                           seed=self.seed)
            self._adapter = adapter
        return adapter.respond(context)

    # ------------------------------------------------------------------ checkpoints

    def metadata(self) -> dict[str, Any]:
        """The policy metadata a checkpoint stores next to the learner (JSON-ready)."""
        return {
            "format": POLICY_FORMAT,
            "version": POLICY_VERSION,
            "reward": self.reward,
            "seed": self.seed,
            "dialogues_trained": self.dialogues_trained,
            "name": self._name,
            "reward_assignment": self.reward_assignment,
            "domain": {
                "name": self.domain.name,
                "fingerprint": domain_fingerprint(self.domain),
                "feature_size": self.feature_extractor.size,
                "summary_actions": list(self.space.names),
            },
        }

    def save(self, path_stem: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write ``<path_stem>.npz`` and ``<path_stem>.json`` atomically (same state, same bytes).

        Existing files are replaced only with ``overwrite=True``.

        Examples
        --------
        >>> import tempfile, os
        >>> policy = GPSarsaPolicy(reward="iq", seed=3)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     policy.save(os.path.join(tmp, "p"))
        ...     again = GPSarsaPolicy.load(os.path.join(tmp, "p"))
        >>> again.reward, again.seed, again.nlg_instance == policy.nlg_instance, again.training
        ('iq', 3, True, False)
        """
        self.learner.save(path_stem, metadata=self.metadata(), overwrite=overwrite)

    @classmethod
    def load(
        cls, path_stem: str | os.PathLike[str], *, domain: Domain | None = None, training: bool = False
    ) -> GPSarsaPolicy:
        """Read a policy written by :meth:`save`.

        Parameters
        ----------
        path_stem : path-like
            The checkpoint without its ``.json`` / ``.npz`` suffix.
        domain : contexts.domain.Domain, optional
            The domain the policy was trained in (default: the shipped one); its fingerprint
            must match the checkpoint's.
        training : bool
            Return the policy in training mode (to continue training) instead of greedy mode.

        Raises
        ------
        simscore.errors.CheckpointError
            A file is missing or corrupt, a format or version is unsupported, the metadata is
            invalid, or the checkpoint belongs to another domain.
        """
        learner = GPSarsa.load(path_stem)  # validates both files and the checksum
        json_path = Path(os.fspath(path_stem) + ".json")
        header = read_checkpoint_json(json_path)
        if not isinstance(header, dict):  # changed since GPSarsa.load
            raise CheckpointError(f"{json_path}: expected a JSON object")
        meta = header.get("metadata")
        if not isinstance(meta, dict):
            raise CheckpointError(f"{json_path}: no policy metadata; not a GPSarsaPolicy checkpoint")
        problem = format_problem(meta, POLICY_FORMAT, (POLICY_VERSION,), what="policy metadata format")
        version = meta.get("version")
        old = _OLD_VERSIONS.get(version) if meta.get("format") == POLICY_FORMAT and isinstance(version, int) else None
        if old is not None:
            problem = (
                f"{problem}: version {meta['version']} was trained with {old}; the learnt GP cannot be "
                "converted. Train a new run (simscore train, or simscore run) into a new directory"
            )
        if problem:
            raise CheckpointError(f"{json_path}: {problem}")
        missing = [
            key for key in ("reward", "seed", "dialogues_trained", "domain", "reward_assignment")
            if key not in meta
        ]
        if missing:
            raise CheckpointError(f"{json_path}: policy metadata lacks the field(s) {missing}")
        domain = domain if domain is not None else default_domain()
        stored = meta.get("domain")
        if not isinstance(stored, dict):
            raise CheckpointError(f"{json_path}: metadata.domain is missing or not an object")
        fingerprint = domain_fingerprint(domain)
        if stored.get("fingerprint") != fingerprint:
            raise CheckpointError(
                f"{json_path}: the checkpoint was trained in domain {stored.get('name')!r} with "
                f"fingerprint {str(stored.get('fingerprint'))[:12]}..., but the given domain "
                f"{domain.name!r} has fingerprint {fingerprint[:12]}..."
            )
        # the learner's action k is the k-th summary action: a stored order that differs from
        # this code's would silently map every decision to another act
        names = list(domain_cache(domain).space.names)
        stored_names = stored.get("summary_actions")
        if stored_names != names:
            differ = "" if not isinstance(stored_names, list) else next(
                (f" (first difference at action {k}: {a!r} stored, {b!r} here)"
                 for k, (a, b) in enumerate(zip(stored_names, names)) if a != b),
                f" ({len(stored_names)} stored, {len(names)} here)",
            )
            raise CheckpointError(
                f"{json_path}: metadata.domain.summary_actions differ from this code's summary actions{differ}; "
                "the checkpoint was saved by another version of the policy"
            )
        try:
            return cls(
                domain,
                reward=meta.get("reward"),  # type: ignore[arg-type]
                seed=meta.get("seed"),  # type: ignore[arg-type]
                learner=learner,
                training=training,
                dialogues_trained=meta.get("dialogues_trained"),  # type: ignore[arg-type]
                name=meta.get("name"),
                reward_assignment=meta.get("reward_assignment"),  # type: ignore[arg-type]
            )
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"{json_path}: invalid policy metadata ({exc})") from None
