"""Policies that are functions of the Gymnasium environment's observation (e.g. a trained network).

:class:`ObservationPolicy` answers a context as an agent trained in
:class:`policies.sim.env.RestaurantSearchEnv` acts on that context's belief inside a
dialogue: it sees the observation (:func:`~policies.sim.observation.observation_for`, the
belief feature vector) and optionally the action mask
(:func:`~policies.sim.observation.action_mask_for`), and its summary action becomes a master
act and a text as the GP-SARSA policy's do. stable-baselines3 models:
:class:`simscore.integrations.sb3.SB3Policy`, which extends it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from contexts.belief import BeliefState
from contexts.domain import Domain, default_domain
from policies._provenance import _check_name, _provenance, _qualified_name
from policies.sim.domain_cache import domain_cache
from policies.sim.features import BeliefFeatures
from policies.sim.nlg import TemplateNLG
from policies.sim.observation import belief_of
from policies.sim.summary import SummaryActions
from simscore.errors import InvalidResponseError
from simscore.responses import Response

__all__ = ["ObservationPolicy"]


class _Batch:
    """Observations, masks and the responses built so far for one list of contexts."""

    __slots__ = ("beliefs", "observations", "masks", "responses")

    def __init__(self, beliefs: list[BeliefState], observations: np.ndarray, masks: np.ndarray) -> None:
        self.beliefs = beliefs
        self.observations = observations
        self.masks = masks
        self.responses: list[dict[int, Response]] = [{} for _ in beliefs]

    def matches(self, beliefs: list[BeliefState]) -> bool:
        return len(beliefs) == len(self.beliefs) and all(a is b for a, b in zip(beliefs, self.beliefs))


class ObservationPolicy:
    """A simscore policy from a function of the environment's observation.

    The policy sees what an agent sees in :class:`policies.sim.env.RestaurantSearchEnv`: the
    observation of the context's belief state (:func:`observation_for`) and, if it asks for
    them, the action mask (:func:`action_mask_for`); it returns a summary action index, which
    becomes a master act (:class:`~policies.sim.summary.SummaryActions`, as in the environment)
    and a text (:class:`~policies.sim.nlg.TemplateNLG` as policy instance ``nlg_instance``), as
    the GP-SARSA policy's responses do. A masked action is carried out literally, as the
    environment does by default.

    It is also a :class:`~policies.sim.summary.SummaryPolicy` (``choose(belief, mask)``), so
    :func:`policies.sim.simulation.run_dialogues` evaluates it in simulated dialogues.

    Parameters
    ----------
    fn : callable
        ``fn(observation) -> action index``. With ``batched=True`` it gets a 2-D array of
        observations (one row per context) and returns one index per row; with
        ``use_masks=True`` it gets the action masks as a second argument (bool, one row
        per observation in a batch). ``fn`` must be deterministic (greedy) for the comparison to mean anything.
    batched : bool
        ``fn`` works on batches: :meth:`respond_batch` (used by
        :func:`simscore.policy.run_policy`) calls it once for a whole context set.
    use_masks : bool
        Pass the action masks to ``fn``.
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    name : str, optional
        Default: ``fn``'s name.
    nlg_instance : str, optional
        Who words the acts; default ``name``.
    text : bool
        Realise texts (default); False gives action-only responses.
    provenance : mapping, optional
        JSON-serialisable facts added to the adapter's own.

    Notes
    -----
    The observations and masks of the last context list are kept, and so is every response
    built for it (one per context and chosen action), so running the policy on the same
    context set again — a monitor checking a training run every few thousand steps — costs
    one call of ``fn`` plus look-ups.

    Examples
    --------
    >>> from contexts import generate_grid
    >>> from simscore.policy import run_policy
    >>> grid = generate_grid()
    >>> def first_allowed(observations, masks):
    ...     return masks.argmax(axis=1)
    >>> policy = ObservationPolicy(first_allowed, batched=True, use_masks=True)
    >>> responses = run_policy(policy, grid)
    >>> len(responses), str(responses["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"].action)
    (1296, 'request(area)')
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        batched: bool = False,
        use_masks: bool = False,
        domain: Domain | None = None,
        name: str | None = None,
        nlg_instance: str | None = None,
        text: bool = True,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable (observation -> action index), got {type(fn).__name__}")
        _check_name(name)
        self.fn = fn
        self.batched = bool(batched)
        self.use_masks = bool(use_masks)
        self.domain = domain if domain is not None else default_domain()
        self.space: SummaryActions = domain_cache(self.domain).space
        self.features = BeliefFeatures(self.domain, space=self.space)  # the policy's own extractor
        self.name: str = name if name is not None else getattr(fn, "__name__", None) or type(fn).__name__
        self.nlg = TemplateNLG(self.name if nlg_instance is None else nlg_instance)
        self.text = bool(text)
        self._extra = dict(provenance or {})
        _provenance({}, provenance)
        self._batch: _Batch | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, batched={self.batched}, use_masks={self.use_masks})"

    def _facts(self) -> dict[str, Any]:
        """The adapter's own provenance facts (subclasses describe what they wrap)."""
        return {"adapter": "observation", "function": _qualified_name(self.fn), "nlg_instance": self.nlg.instance}

    @property
    def provenance(self) -> dict[str, Any]:
        """What produced the responses (recorded by :func:`simscore.policy.run_policy`); given keys win."""
        return _provenance(self._facts(), self._extra)

    # -- deciding ----------------------------------------------------------------------------

    def _call(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Action indices for a 2-D batch of observations (validated)."""
        n = len(observations)
        if self.batched:
            actions = np.asarray(self.fn(observations, masks) if self.use_masks else self.fn(observations))
        else:
            chosen = [self.fn(o, m) if self.use_masks else self.fn(o) for o, m in zip(observations, masks)]
            actions = np.asarray([np.asarray(a).reshape(-1)[0] if np.size(a) == 1 else a for a in chosen])
        if actions.ndim == 2 and actions.shape[1] == 1:
            actions = actions[:, 0]
        if actions.shape != (n,):
            raise InvalidResponseError(
                f"policy {self.name!r}: fn returned shape {actions.shape} for {n} observation(s), "
                "expected one action index per observation"
            )
        integral = actions.dtype.kind in "iu" or (actions.dtype.kind == "f" and bool(np.all(np.mod(actions, 1) == 0)))
        if not integral:
            raise InvalidResponseError(
                f"policy {self.name!r}: fn must return integer action indices, got dtype {actions.dtype} "
                f"({actions[:3].tolist()!r}...)"
            )
        actions = actions.astype(np.int64)
        n_actions = len(self.space)
        bad = np.flatnonzero((actions < 0) | (actions >= n_actions))
        if bad.size:
            raise InvalidResponseError(
                f"policy {self.name!r} chose {int(actions[bad[0]])}; expected a summary action index in [0, {n_actions})"
            )
        return actions

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        """The summary action for ``belief`` (the :class:`~policies.sim.summary.SummaryPolicy` protocol)."""
        observation = self.features(belief)
        return int(self._call(observation[None, :], np.asarray(mask, dtype=bool)[None, :])[0])

    def actions(self, contexts: Sequence[Any]) -> np.ndarray:
        """The summary action index for every context, shape ``(len(contexts),)``."""
        batch = self._prepare(list(contexts))
        return self._call(batch.observations, batch.masks)

    # -- responding --------------------------------------------------------------------------

    def _prepare(self, contexts: list[Any]) -> _Batch:
        beliefs = [belief_of(c) for c in contexts]
        batch = self._batch
        if batch is None or not batch.matches(beliefs):
            width = self.features.size
            observations = np.empty((len(beliefs), width), dtype=np.float64)
            masks = np.empty((len(beliefs), len(self.space)), dtype=bool)
            for i, belief in enumerate(beliefs):
                observations[i] = self.features(belief)
                masks[i] = self.space.mask(belief)
            batch = self._batch = _Batch(beliefs, observations, masks)
        return batch

    def _response(self, action: int, belief: BeliefState) -> Response:
        act = self.space.master_action(action, belief)
        return Response(act, self.nlg.realise(act, belief) if self.text else None)

    def respond(self, context: Any) -> Response:
        """The master act (and text) for ``context.belief``."""
        belief = belief_of(context)
        action = self.choose(belief, self.space.mask(belief))
        return self._response(action, belief)

    def respond_batch(self, contexts: Sequence[Any]) -> list[Response]:
        """The responses to ``contexts``, in order (one call of ``fn`` if ``batched``)."""
        items = list(contexts)
        if not items:
            return []
        batch = self._prepare(items)
        actions = self._call(batch.observations, batch.masks).tolist()
        out = []
        for i, action in enumerate(actions):
            cached = batch.responses[i]
            response = cached.get(action)
            if response is None:
                response = cached[action] = self._response(action, batch.beliefs[i])
            out.append(response)
        return out
