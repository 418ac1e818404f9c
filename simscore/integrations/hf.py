"""Hugging Face ``Trainer`` and TRL: a behaviour callback for language-model training.

:class:`BehaviourCallback` is a ``transformers.TrainerCallback``. When training begins and then
every ``check_freq`` optimizer steps it

1. answers a fixed context set with **the model being trained** — the object itself, on its
   device, greedily, in batches, in evaluation mode under ``torch.no_grad``, every submodule's
   training flag restored after (:meth:`policies.lm.generative.GenerativePolicy.from_model`; the
   prompts and chat templates of :mod:`policies.lm.prompts`);
2. compares the answers with those of the previous check on every measure
   (:class:`simscore.BehaviourMonitor`, the same monitor, rule and bootstrap settings as the
   stable-baselines3 callback of :mod:`simscore.integrations.sb3`), with a seeded random policy
   (the chance level) and, optionally, with a reference policy — ``reference="initial"`` is the
   model as training began;
3. logs ``behaviour/<measure>`` with ``..._ci_low``, ``..._ci_high``, ``..._cs_low``,
   ``..._chance`` (and ``..._reference...``), ``behaviour/stable_checks`` and
   ``behaviour/check_seconds`` through ``trainer.log``: they join ``state.log_history`` and reach
   every ``report_to`` integration (TensorBoard, W&B, ...) as the trainer's own losses do;
4. sets ``control.should_training_stop`` once every measure has been stable for ``patience``
   consecutive checks (and ``stop``), under the anytime-valid rule by default.

Works with ``transformers.Trainer`` and TRL's trainers (``SFTTrainer``, ``DPOTrainer``,
``GRPOTrainer``, ...), which subclass it. The callback holds the trainer, as TRL's own logging
callbacks do: a callback's ``on_log`` runs after the reporting integrations, so values it added
there would reach ``log_history`` and no logger; ``trainer.log`` is the path that reaches all.

Greedy decoding draws no random numbers and the model is in evaluation mode (no dropout) while
answering, so a check leaves torch's, numpy's and Python's global generators as it found them:
a run with the callback trains exactly as one without it (the tests check both).

Needs torch and transformers (the ``text`` extra); TRL is optional (the ``trl`` extra). The module
imports none of them: the callback class, a subclass of ``TrainerCallback``, is built on first
use, and a missing package raises :class:`~simscore.errors.MissingDependencyError` naming the
extra.

Example
-------
::

    from trl import SFTConfig, SFTTrainer
    from contexts import generate_grid
    from simscore.integrations.hf import BehaviourCallback

    trainer = SFTTrainer(model=model, args=SFTConfig(output_dir="out", report_to="tensorboard"),
                         train_dataset=dataset, processing_class=tokenizer)
    watch = BehaviourCallback(trainer, list(generate_grid())[:256], check_freq=50, max_new_tokens=20,
                              threshold=0.9, patience=3, reference="initial")
    trainer.add_callback(watch)
    trainer.train()                 # stops early once the answers have settled
    watch.history()                 # one row per check: means, intervals, chance level, reference
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

from simscore.checks import check_bool, check_int, check_seed
from simscore.errors import MissingDependencyError
from simscore.integrations._behaviour import _chance_policy, _check, _checked_measures, lazy_subclass
from simscore.measures.action import ConceptErrorRate, ConceptMatchRate, DialogueActMatchRate, TotalMatchRate
from simscore.measures.base import Measure
from simscore.monitor import BehaviourMonitor, fixed_contexts
from simscore.responses import Responses
from simscore.stats import Bootstrap

if TYPE_CHECKING:
    from policies.lm.generative import GenerativePolicy
    from policies.lm.prompts import PromptTemplate as PromptTemplateType

__all__ = ["BehaviourCallback", "require_transformers"]

#: What to install for this module (TRL's trainers need the ``trl`` extra as well).
INSTALL_HINT = 'pip install "simscore-dialogue[text]"'


#: The measures that compare the responses' actions (the callback's model answers in text unless act_output).
_ACTION_MEASURES = (TotalMatchRate, DialogueActMatchRate, ConceptErrorRate, ConceptMatchRate)


def require_transformers(module: str = "transformers") -> Any:
    """Import ``module`` (transformers, or trl), or raise a helpful error.

    Raises
    ------
    MissingDependencyError
        Naming the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = module.split(".")[0]
        hint = 'pip install "simscore-dialogue[text,trl]"' if package == "trl" else INSTALL_HINT
        raise MissingDependencyError(f"simscore.integrations.hf needs {package} ({exc}); install the extra: {hint}"
                                     ) from None


def _tokenizer_of(trainer: Any) -> Any:
    """The trainer's tokenizer: ``processing_class`` (transformers >= 4.46) or ``tokenizer``; a processor's own."""
    found = getattr(trainer, "processing_class", None) or getattr(trainer, "tokenizer", None)
    if found is not None and not callable(getattr(found, "batch_decode", None)):
        found = getattr(found, "tokenizer", None)
    return found


class _BehaviourCallback:
    """Watch a language model's behaviour while a ``transformers.Trainer`` (or a TRL trainer) trains it.

    See the module docstring for what a check does. The first check is when training begins
    (the model before its first step); then one every ``check_freq`` optimizer steps
    (``state.global_step``).

    Parameters
    ----------
    trainer : transformers.Trainer
        The trainer the callback is added to (``trainer.add_callback(callback)``); values are
        logged through its ``log``.
    contexts : iterable of contexts
        The fixed context set (e.g. a slice of :func:`contexts.generate_grid`, or C_col): each
        check answers all of them, so its size sets the cost of a check.
    measures : names or Measure objects, optional
        Default ``("bleu4",)`` for text answers, ``("tmr", "dmr")`` with ``act_output``.
    check_freq : int
        Optimizer steps between checks.
    threshold, patience, rule, alpha, require_change, bootstrap
        The stopping rule and intervals of :class:`simscore.BehaviourMonitor` (defaults 0.99,
        3, ``"sequential"``, 0.05, True, ``Bootstrap()``). The sequential rule needs many
        contexts to certify a small change; with a few dozen, use a lower ``threshold`` or
        ``rule="point"``.
    chance_seed : int or None
        Seed of the random policy (template-worded random summary actions over each context's
        unmasked ones) giving ``..._chance``; None: no chance level. Needs belief contexts.
    reference : "initial", Policy, Responses or None
        Also compare every check with this, with an interval (``..._reference``): ``"initial"``
        is the model as training begins (answered once more at the first check), or any policy
        (e.g. a :class:`~policies.lm.generative.GenerativePolicy` of the base model's folder) or
        its responses. It does not enter the stopping decision.
    stop : bool
        Stop training once converged (default); False only logs.
    log_prefix : str
        Namespace of the logged keys (default ``"behaviour"``).
    template : policies.lm.prompts.PromptTemplate, optional
        How contexts become prompts (default ``PromptTemplate()``; the tokenizer's chat template
        is applied where it has one).
    act_output : bool
        Ask for one act in simscore's act syntax and score the parsed acts.
    max_new_tokens : int
        Tokens generated per answer at most (default 40).
    batch_size : int
        Prompts generated together (default 8).
    tokenizer : optional
        Default: the trainer's ``processing_class`` (or ``tokenizer``).
    verbose : int
        1 prints one line per check and the stop.

    Attributes
    ----------
    monitor : simscore.BehaviourMonitor or None
        Built when training begins.
    policy : policies.lm.generative.GenerativePolicy or None
        The trained model as a policy (:meth:`~policies.lm.generative.GenerativePolicy.from_model`).
    stopped_at : int or None
        ``state.global_step`` when the callback stopped training.
    logged : list of dict
        What each check passed to ``trainer.log`` (with its ``step``).

    Examples
    --------
    >>> watch = BehaviourCallback(trainer, contexts, check_freq=10, threshold=0.9, patience=2)  # doctest: +SKIP
    >>> trainer.add_callback(watch); trainer.train()  # doctest: +SKIP
    >>> watch.stopped_at, watch.history()[["step", "bleu4", "bleu4_chance"]]  # doctest: +SKIP
    """

    def __init__(
        self,
        trainer: Any,
        contexts: Iterable[Any],
        measures: str | Measure | Iterable[str | Measure] | None = None,
        *,
        check_freq: int = 100,
        threshold: float = 0.99,
        patience: int = 3,
        rule: str = "sequential",
        alpha: float = 0.05,
        require_change: bool = True,
        chance_seed: int | None = 0,
        reference: Any = None,
        stop: bool = True,
        log_prefix: str = "behaviour",
        template: PromptTemplateType | None = None,
        act_output: bool = False,
        max_new_tokens: int = 40,
        batch_size: int = 8,
        tokenizer: Any = None,
        bootstrap: Bootstrap | None = None,
        verbose: int = 0,
    ) -> None:
        from policies.lm.generative import Decoding
        from policies.lm.prompts import PromptTemplate

        if not callable(getattr(trainer, "log", None)) or not hasattr(trainer, "state"):
            raise TypeError(f"trainer must be a transformers Trainer (or a TRL trainer), got {type(trainer).__name__}")
        self.trainer = trainer
        self.contexts = fixed_contexts(contexts, "the callback")
        self.check_freq = check_int("check_freq", check_freq, minimum=1, error=ValueError)
        self.verbose = check_int("verbose", verbose, minimum=0, error=ValueError)
        self.chance_seed = None if chance_seed is None else check_seed("chance_seed", chance_seed, error=ValueError)
        if not (reference is None or reference == "initial" or isinstance(reference, Responses)
                or callable(getattr(reference, "respond", None))):
            raise TypeError(f"reference must be 'initial', a policy, Responses or None, got {reference!r:.60}")
        self.reference = reference
        self.stop = bool(stop)
        if not isinstance(log_prefix, str) or not log_prefix.strip("/ "):
            raise ValueError(f"log_prefix must name the logged values (e.g. 'behaviour'), got {log_prefix!r:.60}")
        self.log_prefix = log_prefix.rstrip("/")
        self.tokenizer = tokenizer
        if measures is None:
            measures = ("tmr", "dmr") if act_output else ("bleu4",)
        self._monitor_args: dict[str, Any] = dict(
            measures=measures, threshold=threshold, patience=patience, rule=rule, alpha=alpha,
            require_change=require_change, bootstrap=bootstrap,
        )
        checked = _checked_measures(self._monitor_args)  # fail fast on bad monitor arguments
        if not act_output:  # the model's responses are texts: a measure of actions would score nothing
            on_actions = [m.name for m in checked if isinstance(m, _ACTION_MEASURES)]
            if on_actions:
                raise ValueError(f"{', '.join(on_actions)} compare the responses' actions, and with act_output=False "
                                 "the model answers in text: pass act_output=True, or a text measure (e.g. bleu4)")
        if template is not None and not isinstance(template, PromptTemplate):
            raise TypeError(f"template must be a PromptTemplate, got {type(template).__name__}")
        self._policy_args: dict[str, Any] = dict(
            template=template, act_output=check_bool("act_output", act_output),
            batch_size=check_int("batch_size", batch_size, minimum=1, error=ValueError),
            decoding=Decoding(max_new_tokens=check_int("max_new_tokens", max_new_tokens, minimum=1, error=ValueError)),
        )
        self.monitor: BehaviourMonitor | None = None
        self.policy: GenerativePolicy | None = None
        self.stopped_at: int | None = None
        self.logged: list[dict[str, float]] = []
        self._last_check: int | None = None
        self._seconds: dict[int, float] = {}

    # -- Trainer hooks ----------------------------------------------------------------------

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        from policies.lm.generative import GenerativePolicy

        if state is not self.trainer.state:
            raise ValueError("this BehaviourCallback was built for another trainer: pass the trainer it is added to "
                             "(its values are logged through that trainer's log)")
        model = model if model is not None else self.trainer.model
        tokenizer = self.tokenizer if self.tokenizer is not None else _tokenizer_of(self.trainer)
        if tokenizer is None:
            raise ValueError("the trainer has no tokenizer (processing_class): pass tokenizer= to BehaviourCallback")
        if self.policy is None or self.policy.model is not model:
            self.policy = GenerativePolicy.from_model(model, tokenizer, name="trained", **self._policy_args)
        if self.monitor is None:
            from simscore.policy import run_policy

            baseline = None if self.chance_seed is None else _chance_policy(self.chance_seed)
            reference = self.reference
            if reference == "initial":
                reference = run_policy(self.policy, self.contexts, name="initial")
            self.monitor = BehaviourMonitor(self.contexts, baseline=baseline, reference=reference,
                                            **self._monitor_args)
        self._run_check(state, control)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        step = int(state.global_step)
        if step % self.check_freq == 0 and step != self._last_check:
            self._run_check(state, control)

    # -- the check --------------------------------------------------------------------------

    def _run_check(self, state: Any, control: Any) -> None:
        monitor = self.monitor
        assert monitor is not None, "the callback is initialised by on_train_begin"
        step = int(state.global_step)
        self._last_check = step
        check = _check(monitor, self.policy, step, self.log_prefix)
        self._seconds[step] = check.seconds
        if self.verbose >= 1:
            print(check.line)
        if len(check.values) > 1:  # more than the first snapshot's time
            self.logged.append({**check.values, "step": step})
            self.trainer.log(dict(check.values))
        if monitor.converged and self.stop:
            self.stopped_at = step
            control.should_training_stop = True
            if self.verbose >= 1:
                print(f"[simscore] behaviour converged: stopping at step {step}")

    @property
    def converged(self) -> bool:
        """True once every measure was stable (under ``rule``) for ``patience`` consecutive checks."""
        return self.monitor is not None and self.monitor.converged

    def history(self) -> pd.DataFrame:
        """One row per check after the first (:meth:`simscore.BehaviourMonitor.history`), plus
        ``check_seconds`` (wall time of the check: answering, comparing, chance level, reference)."""
        if self.monitor is None:
            return pd.DataFrame()
        frame = self.monitor.history()
        frame["check_seconds"] = [self._seconds.get(int(step), float("nan")) for step in frame["step"]]
        return frame

    def check_seconds(self) -> dict[int, float]:
        """Wall time of every check, the first snapshot's included, by step."""
        return dict(self._seconds)


# The callback subclasses transformers' TrainerCallback: built on first access.
__getattr__, __dir__ = lazy_subclass(__name__, "BehaviourCallback", _BehaviourCallback,
                                     lambda: require_transformers().TrainerCallback)


if TYPE_CHECKING:

    class BehaviourCallback(_BehaviourCallback):
        """:class:`_BehaviourCallback` on transformers' ``TrainerCallback`` (built at run time)."""
