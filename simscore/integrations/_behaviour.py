"""What the training callbacks of :mod:`simscore.integrations` share, whatever the training library.

A callback of stable-baselines3 (:mod:`~simscore.integrations.sb3`) or of Hugging Face's
``Trainer`` (:mod:`~simscore.integrations.hf`) checks its monitor's arguments when it is built,
builds the chance-level policy, and at each check times :meth:`simscore.BehaviourMonitor.update`,
turns its row into logged numbers (:meth:`~simscore.BehaviourMonitor.scalars`) and prints one
line. Only the hooks and the logger differ.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simscore.monitor import BehaviourMonitor

if TYPE_CHECKING:
    from contexts.domain import Domain
    from simscore.measures.base import Measure


class _Probe:
    id = "probe"


def _checked_measures(monitor_args: dict[str, Any]) -> list[Measure]:
    """The monitor's measures, its arguments checked now (before a long training run starts)."""
    return list(BehaviourMonitor([_Probe()], **monitor_args).measures)


def _chance_policy(seed: int, domain: Domain | None = None, n_actions: int | None = None) -> Any:
    """The seeded random policy over each context's unmasked summary actions, worded by the template NLG."""
    from policies.handcrafted import RandomPolicy
    from policies.sim.simulation import SummaryPolicyAdapter

    random_policy = RandomPolicy(seed=seed) if n_actions is None else RandomPolicy(seed=seed, n_actions=n_actions)
    return SummaryPolicyAdapter(random_policy, domain=domain, name="chance", nlg_instance=f"random-{seed}")


@dataclass(frozen=True)
class _Check:
    """One check: the numbers to log (empty at the first snapshot), its wall time, its line."""

    values: dict[str, float]
    seconds: float
    line: str


def _check(monitor: BehaviourMonitor, policy: Any, step: int, prefix: str) -> _Check:
    """Snapshot ``policy`` at ``step``, compare, and say what to log and print."""
    start = time.perf_counter()
    comparison = monitor.update(policy, step)
    seconds = time.perf_counter() - start
    values = monitor.scalars(prefix) if comparison is not None else {}
    values[f"{prefix}/check_seconds"] = seconds
    row = monitor.latest
    if comparison is None or row is None:
        line = f"[simscore] step {step}: first behaviour snapshot ({len(monitor.contexts)} contexts)"
    else:
        scores = ", ".join(f"{m.name}={row[m.name]:.3f}" for m in monitor.measures)
        line = f"[simscore] step {step}: {scores} vs previous; stable {monitor.stable_updates}/{monitor.patience}"
    return _Check(values, seconds, line)


def lazy_subclass(module: str, name: str, mixin: type, base: Callable[[], type]
                  ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module's ``__getattr__`` and ``__dir__`` giving class ``name``: ``mixin`` on ``base()``, built on
    first access, so the training library behind ``base`` is imported only when the callback is used."""
    built: dict[str, type] = {}

    def module_getattr(attribute: str) -> Any:
        if attribute != name:
            raise AttributeError(f"module {module!r} has no attribute {attribute!r}")
        if name not in built:
            built[name] = type(name, (mixin, base()), {"__module__": module, "__doc__": mixin.__doc__,
                                                       "__qualname__": name})
        return built[name]

    def module_dir() -> list[str]:
        return sorted([*vars(sys.modules[module]), name])

    return module_getattr, module_dir
