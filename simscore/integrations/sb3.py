"""stable-baselines3: a behaviour-convergence callback and trained models as simscore policies.

* :class:`SB3Policy` — a trained SB3 model (PPO, A2C, DQN, sb3-contrib's MaskablePPO, ...)
  on the restaurant-search environment (:mod:`simscore.integrations.gym`) as a simscore policy:
  greedy (``model.predict(observations, deterministic=True[, action_masks=...])``) on a whole
  context set at once, responses with the master act and its text as the GP-SARSA policy's.
* :class:`BehaviourConvergenceCallback` — every ``check_freq`` steps it answers a fixed context
  set (default C_gen, 1,296 contexts) with the current model, compares the answers with the
  previous check's (:class:`simscore.BehaviourMonitor`), logs the similarity, its bootstrap
  interval and the chance level to SB3's logger (TensorBoard, CSV, stdout: whatever the run
  configured), and stops training once the behaviour has stayed within a tolerance for
  ``patience`` checks — a stopping criterion on *what the policy does* rather than on the reward
  (SB3 issue #1222). The decision is anytime-valid by default (``rule="sequential"``): checking
  every ``check_freq`` steps for as long as training runs declares a policy that still changes by
  more than the tolerance converged with probability at most ``alpha``.

Both need the ``sb3`` extra (``pip install "simscore-dialogue[sb3]"``: stable-baselines3 and
sb3-contrib). The module imports neither; the callback class, a subclass of SB3's
``BaseCallback``, is built on first use, and a missing package raises
:class:`~simscore.errors.MissingDependencyError` naming the extra.

Example
-------
::

    import gymnasium
    from stable_baselines3 import PPO
    import simscore.integrations.gym  # registers simscore/RestaurantSearch-v0
    from simscore.integrations.sb3 import BehaviourConvergenceCallback

    model = PPO("MlpPolicy", gymnasium.make("simscore/RestaurantSearch-v0"), n_steps=1024)
    stop = BehaviourConvergenceCallback(measures=("tmr", "dmr"), check_freq=1024, threshold=0.95, patience=3)
    model.learn(200_000, callback=stop)          # returns early once behaviour has converged
    stop.history()                               # one row per check: means, intervals, chance level
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from policies.observation import ObservationPolicy
from policies.sim.domain_cache import domain_cache
from policies.sim.features import feature_size
from simscore.checks import check_int
from simscore.errors import MissingDependencyError
from simscore.integrations._behaviour import _chance_policy, _check, _checked_measures, lazy_subclass
from simscore.measures.base import Measure
from simscore.monitor import BehaviourMonitor, fixed_contexts
from simscore.stats import Bootstrap

if TYPE_CHECKING:
    import numpy as np

    from contexts.domain import Domain

__all__ = ["SB3Policy", "BehaviourConvergenceCallback", "require_sb3"]

#: What to install for this module.
INSTALL_HINT = 'pip install "simscore-dialogue[sb3]"'


def require_sb3(module: str = "stable_baselines3") -> Any:
    """Import ``module`` (stable-baselines3 or sb3-contrib), or raise a helpful error.

    Raises
    ------
    MissingDependencyError
        Naming the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = module.split(".")[0].replace("_", "-")
        raise MissingDependencyError(
            f"simscore.integrations.sb3 needs {package} ({exc}); install the extra: {INSTALL_HINT}"
        ) from None


def _accepts_action_masks(model: Any) -> bool:
    """Whether the model's class ``predict`` takes ``action_masks`` (sb3-contrib's maskable algorithms)."""
    predict = getattr(type(model), "predict", None) or getattr(model, "predict", None)
    if not callable(predict):
        return False
    try:
        return "action_masks" in inspect.signature(predict).parameters
    except (TypeError, ValueError):
        return False


class SB3Policy(ObservationPolicy):
    """A stable-baselines3 model as a simscore policy (greedy, batched).

    The model must have been trained on the restaurant-search environment's observation
    (``simscore/RestaurantSearch-v0``; shape ``(302,)`` for the default domain) and its 16
    summary actions. A context set is answered with one call
    ``model.predict(observations, deterministic=True)`` — plus ``action_masks=`` (the masks of
    the contexts' beliefs) for a model whose ``predict`` takes them (sb3-contrib's
    ``MaskablePPO``) — and observations are normalised first when the model trains on a
    ``VecNormalize`` environment. Each chosen summary action becomes a master act and a text
    (:class:`policies.observation.ObservationPolicy`, which this class extends). Answering the
    1,296 C_gen contexts again with an updated model costs one ``predict`` call plus look-ups.

    Parameters
    ----------
    model : stable_baselines3 BaseAlgorithm
        PPO, A2C, DQN, MaskablePPO, ... (anything with ``predict`` and the spaces above).
    use_masks : bool, optional
        Pass the contexts' action masks to ``predict``; default: whenever ``predict`` accepts
        ``action_masks``.
    domain : contexts.domain.Domain, optional
    name : str, optional
        Default: the algorithm's class name in lower case (``"ppo"``).
    nlg_instance : str, optional
        Who words the acts; default ``name``. Snapshots of one model (the callback) share it,
        so the same act is worded the same way and text measures follow the acts.
    text : bool
        Realise texts (default True).
    provenance : mapping, optional
        Added to ``{"adapter": "sb3", "algorithm", "num_timesteps", "stable_baselines3",
        "use_masks", "nlg_instance"}`` (read when the policy is run).

    Notes
    -----
    Also a :class:`~policies.sim.summary.SummaryPolicy`: ``policies.run_dialogues(SB3Policy(model),
    200, seed=1)`` evaluates the greedy model in simulated dialogues (task success, IQ, turns).
    """

    def __init__(
        self,
        model: Any,
        *,
        use_masks: bool | None = None,
        domain: Domain | None = None,
        name: str | None = None,
        nlg_instance: str | None = None,
        text: bool = True,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        sb3 = require_sb3()
        if not callable(getattr(model, "predict", None)):
            raise TypeError(f"model must be a stable-baselines3 model with predict(), got {type(model).__name__}")
        if use_masks is None:
            use_masks = _accepts_action_masks(model)
        elif use_masks and not _accepts_action_masks(model):
            raise ValueError(
                f"use_masks=True, but {type(model).__name__}.predict takes no action_masks (use MaskablePPO)"
            )
        self.model = model
        self._sb3_version = str(getattr(sb3, "__version__", "unknown"))
        label = name if name is not None else type(model).__name__.lower()
        super().__init__(
            self._predict,
            batched=True,
            use_masks=use_masks,
            domain=domain,
            name=label,
            nlg_instance=nlg_instance,
            text=text,
            provenance=provenance,
        )
        space = getattr(model, "observation_space", None)
        expected = (feature_size(self.domain),)
        if getattr(space, "shape", None) != expected:
            raise ValueError(
                f"model observation space has shape {getattr(space, 'shape', None)}, expected {expected}: "
                "the model must be trained on the restaurant-search environment's observation "
                "(simscore/RestaurantSearch-v0, policies.sim.features.belief_features)"
            )
        n_actions = getattr(getattr(model, "action_space", None), "n", None)
        if n_actions != len(domain_cache(self.domain).space):
            raise ValueError(
                f"model action space has {n_actions} actions, expected {len(self.space)} summary actions"
            )

    def _predict(self, observations: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        model = self.model
        normaliser = model.get_vec_normalize_env() if hasattr(model, "get_vec_normalize_env") else None
        if normaliser is not None:
            observations = normaliser.normalize_obs(observations)
        kwargs = {"action_masks": masks} if self.use_masks else {}
        actions, _ = model.predict(observations, deterministic=True, **kwargs)
        return actions

    def _facts(self) -> dict[str, Any]:
        return {
            "adapter": "sb3",
            "algorithm": type(self.model).__name__,
            "num_timesteps": int(getattr(self.model, "num_timesteps", 0)),
            "stable_baselines3": self._sb3_version,
            "use_masks": self.use_masks,
            "nlg_instance": self.nlg.instance,
        }


class _BehaviourConvergence:
    """Stop stable-baselines3 training once the policy's behaviour has converged.

    Every ``check_freq`` environment steps (counted as ``num_timesteps``, so independent of
    the number of parallel environments), and only if the model was updated since the last
    check (SB3's update counter grew: no check before DQN's ``learning_starts``, none twice
    within one PPO rollout), the callback

    1. answers the context set with the current model, greedily (:class:`SB3Policy`, batched,
       with the contexts' masks for ``MaskablePPO``);
    2. compares the answers with those of the previous check on every measure
       (:class:`simscore.BehaviourMonitor`, :func:`simscore.compare`), with a seeded bootstrap
       interval of each mean;
    3. compares them with the chance level: a seeded random policy over each context's
       unmasked actions (computed once);
    4. logs to ``self.logger`` (``<log_prefix>/<measure>``, ``..._ci_low``, ``..._ci_high``,
       ``..._cs_low``, ``..._chance``, ``<log_prefix>/stable_checks``,
       ``<log_prefix>/check_seconds``) and,
       with ``dump_logs``, writes them out at this step as SB3's ``EvalCallback`` does;
    5. returns False — SB3 stops ``learn()`` — once every measure has been stable for
       ``patience`` consecutive checks (and ``stop`` is True): by default its anytime-valid
       lower bound ``..._cs_low`` at or above ``threshold`` (``rule``).

    Parameters
    ----------
    contexts : iterable of contexts, optional
        The fixed context set; default C_gen (:func:`contexts.generate_grid`, 1,296 belief
        states).
    measures : names or Measure objects
        Default ``("tmr", "dmr")``; any of the eight (``"all"``), instances included (a text
        measure keeps its model and caches across checks).
    check_freq : int
        Environment steps between checks (at least; a check waits for a model update).
    threshold : float
        The tolerance: a check is stable when every measure's mean similarity — with
        ``rule="sequential"``, its lower bound — is at least this.
    patience : int
        Consecutive stable checks after which training stops.
    rule : {"sequential", "point"}
        The decision of :class:`simscore.BehaviourMonitor`: ``"sequential"`` (default) keeps
        the probability of stopping while the behaviour still changes by more than
        ``1 − threshold`` at most ``alpha`` over any number of checks; ``"point"`` compares the
        means with the threshold (the rule before simscore 0.2.0: with 1,296 contexts and a
        policy changing 1.2 % of its actions per check, it stops within 100 checks in 58 % of
        runs). The sequential rule needs enough contexts (C_gen's 1,296 for TMR ≥ 0.99).
    alpha : float
        The false-"converged" level of the sequential rule (default 0.05).
    require_change : bool
        Count stable checks only after the behaviour changed once (default): a freshly
        initialised network tends to answer every context the same way until learning takes
        hold, which would otherwise read as converged.
    chance_seed : int or None
        Seed of the random policy giving the chance level; None: no chance level.
    stop : bool
        Stop training when converged (default); False only logs.
    log_prefix : str
        Namespace of the logged keys.
    dump_logs : bool
        Write the logged values out at every check (``logger.dump(num_timesteps)``).
    bootstrap : simscore.stats.Bootstrap, optional
        Settings of the intervals (default ``Bootstrap()``).
    domain : contexts.domain.Domain, optional
        The environment's domain (default domain).
    name, nlg_instance : str, optional
        Passed to :class:`SB3Policy`.
    verbose : int
        1 prints one line per check and the stop.

    Attributes
    ----------
    monitor : simscore.BehaviourMonitor
        Built when training starts.
    converged : bool
    stopped_at : int or None
        ``num_timesteps`` when the callback stopped training.

    Examples
    --------
    >>> from stable_baselines3 import PPO  # doctest: +SKIP
    >>> stop = BehaviourConvergenceCallback(check_freq=1024, threshold=0.95, patience=3)  # doctest: +SKIP
    >>> PPO("MlpPolicy", "simscore.integrations.gym:simscore/RestaurantSearch-v0").learn(100_000, callback=stop)  # doctest: +SKIP
    >>> stop.stopped_at, stop.history()[["step", "tmr", "tmr_chance"]]  # doctest: +SKIP
    """

    def __init__(
        self,
        contexts: Iterable[Any] | None = None,
        measures: str | Measure | Iterable[str | Measure] = ("tmr", "dmr"),
        *,
        check_freq: int = 2048,
        threshold: float = 0.99,
        patience: int = 3,
        rule: str = "sequential",
        alpha: float = 0.05,
        require_change: bool = True,
        chance_seed: int | None = 0,
        stop: bool = True,
        log_prefix: str = "behaviour",
        dump_logs: bool = True,
        bootstrap: Bootstrap | None = None,
        domain: Domain | None = None,
        name: str | None = None,
        nlg_instance: str | None = None,
        verbose: int = 0,
    ) -> None:
        from contexts.domain import Domain

        verbose = check_int("verbose", verbose, minimum=0, error=ValueError)
        super().__init__(verbose=verbose)  # type: ignore[call-arg]  # BaseCallback, by the MRO
        check_freq = check_int("check_freq", check_freq, minimum=1, error=ValueError)
        if domain is not None and not isinstance(domain, Domain):
            raise TypeError(f"domain must be a contexts.Domain or None, got {type(domain).__name__} {domain!r:.60}")
        for key, value in (("name", name), ("nlg_instance", nlg_instance)):
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{key} must be a non-empty string or None, got {value!r:.60}")
        if chance_seed is not None:
            chance_seed = check_int("chance_seed", chance_seed, error=ValueError)
        # a given context set is checked now (at least one context, string ids, none twice), not at learn()
        self.contexts = None if contexts is None else fixed_contexts(contexts, "the callback")
        self.check_freq = check_freq
        self.chance_seed = chance_seed
        self.stop = bool(stop)
        self.log_prefix = str(log_prefix).rstrip("/")
        self.dump_logs = bool(dump_logs)
        self.domain = domain
        self.policy_name = name
        self.nlg_instance = nlg_instance
        self._monitor_args: dict[str, Any] = dict(
            rule=rule, alpha=alpha,
            measures=measures, threshold=threshold, patience=patience, require_change=require_change,
            bootstrap=bootstrap,
        )
        _checked_measures(self._monitor_args)  # fail fast on bad monitor arguments
        self.monitor: BehaviourMonitor | None = None
        self.policy: Any = None
        self.stopped_at: int | None = None
        self._last_check = -(10**18)
        self._last_updates: int | None = None
        self._seconds: dict[int, float] = {}

    # -- SB3 hooks -------------------------------------------------------------------------

    def _init_callback(self) -> None:
        if self.policy is None or self.policy.model is not self.model:  # type: ignore[attr-defined]
            measures = _checked_measures(self._monitor_args)
            self.policy = SB3Policy(
                self.model,  # type: ignore[attr-defined]
                domain=self.domain,
                name=self.policy_name,
                nlg_instance=self.nlg_instance,
                text=any(m.level == "text" for m in measures),  # texts cost half a check; only when scored
            )
        if self.monitor is None:
            if self.contexts is None:
                from contexts.generate import generate_grid

                self.contexts = list(generate_grid(domain=self.domain) if self.domain is not None else generate_grid())
            baseline = None
            if self.chance_seed is not None:
                baseline = _chance_policy(self.chance_seed, self.policy.domain, len(self.policy.space))
            self.monitor = BehaviourMonitor(self.contexts, baseline=baseline, **self._monitor_args)

    def _on_step(self) -> bool:
        timesteps = int(self.num_timesteps)  # type: ignore[attr-defined]
        if timesteps - self._last_check < self.check_freq:
            return True
        updates = getattr(self.model, "_n_updates", None)  # type: ignore[attr-defined]
        if updates is not None and self._last_updates is not None and updates == self._last_updates:
            return True  # the model has not changed since the last snapshot: wait for an update
        self._last_check, self._last_updates = timesteps, updates
        return self.check()

    # -- the check -------------------------------------------------------------------------

    def check(self) -> bool:
        """Snapshot the model now, compare, log; False once converged (and ``stop``)."""
        monitor = self.monitor
        assert monitor is not None, "the callback is initialised by SB3's learn()"
        timesteps = int(self.num_timesteps)  # type: ignore[attr-defined]
        check = _check(monitor, self.policy, timesteps, self.log_prefix)
        self._seconds[timesteps] = check.seconds
        for key, value in check.values.items():
            self.logger.record(key, value)  # type: ignore[attr-defined]
        if self.dump_logs:
            self.logger.dump(timesteps)  # type: ignore[attr-defined]
        if self.verbose >= 1:  # type: ignore[attr-defined]
            print(check.line)
        if monitor.converged and self.stop:
            self.stopped_at = timesteps
            if self.verbose >= 1:  # type: ignore[attr-defined]
                print(f"[simscore] behaviour converged: stopping at step {timesteps}")
            return False
        return True

    @property
    def converged(self) -> bool:
        """True once every measure was stable (under ``rule``) for ``patience`` consecutive checks."""
        return self.monitor is not None and self.monitor.converged

    def history(self) -> pd.DataFrame:
        """One row per check after the first (:meth:`simscore.BehaviourMonitor.history`), plus
        ``check_seconds`` (wall time of the check: answering, comparing, chance level)."""
        if self.monitor is None:
            return pd.DataFrame()
        frame = self.monitor.history()
        frame["check_seconds"] = [self._seconds.get(int(step), float("nan")) for step in frame["step"]]
        return frame


# The callback subclasses SB3's BaseCallback: built on first access.
__getattr__, __dir__ = lazy_subclass(__name__, "BehaviourConvergenceCallback", _BehaviourConvergence,
                                     lambda: require_sb3("stable_baselines3.common.callbacks").BaseCallback)


if TYPE_CHECKING:

    class BehaviourConvergenceCallback(_BehaviourConvergence):
        """:class:`_BehaviourConvergence` on SB3's ``BaseCallback`` (built at run time)."""
