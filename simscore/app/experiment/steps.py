"""What each step of an experiment receives: its own typed piece of the configuration (application layer).

The runner (:mod:`simscore.app.runner`) hands every step only the settings it reads, built from
the one validated :class:`~simscore.app.experiment.config.ExperimentConfig` by its ``for_*``
properties, so a step can be read, called and tested alone:

* training (one run): :class:`policies.gpsarsa.training.TrainingConfig`, from
  ``config.run_config(reward, seed)``;
* collecting the contexts: :class:`CollectionSettings`, from ``config.for_collection``;
* the held-out users: :class:`HeldOutSettings`, from ``config.for_held_out`` (None: none);
* scoring: :class:`ScoringSettings`, from ``config.for_scoring``;
* the reference policies: :class:`ReferenceSettings`, from ``config.for_reference``;
* the consequences: :class:`ConsequencesSettings`, from ``config.for_consequences`` (None: off);
* the findings: :class:`~simscore.app.experiment.sections.Thresholds`, ``config.findings``.

Responding needs only the runs and ``[chance] random_seed``, which it gets as they are. The
classes hold values that :class:`~simscore.app.experiment.config.ExperimentConfig` has already
checked; built by hand (in a test), they are taken as given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from simscore.app.experiment.folder import RunId
from simscore.app.experiment.sections import HeldOutConfig, MapConfig
from simscore.stats import Bootstrap

if TYPE_CHECKING:
    from policies.sim import SimulationSettings

__all__ = ["CollectionSettings", "ConsequencesSettings", "HeldOutSettings", "ReferenceSettings", "ScoringSettings",
           "rewards_of"]


def rewards_of(runs: tuple[RunId, ...]) -> tuple[str, ...]:
    """The runs' reward models, each once, in the order of the runs.

    >>> rewards_of((RunId("ts", 1), RunId("ts", 2), RunId("iq", 1)))
    ('ts', 'iq')
    """
    return tuple(dict.fromkeys(run.reward for run in runs))


@dataclass(frozen=True)
class CollectionSettings:
    """Collecting C_col (``[contexts]``): each run's final policy in its own simulated dialogues.

    Attributes
    ----------
    runs : tuple of RunId
        The training runs, rewards first.
    dialogues, seed : int
        ``collect_dialogues`` and ``collect_seed``: dialogues per run, and the seed of their users.
    scale : float
        ``collect_scale``: the policies' posterior sampling scale in those dialogues.
    generated : bool
        Also make the C_gen grid.
    simulation : policies.sim.SimulationSettings
        The simulated world of the training runs (``[training.user]``, the IQ estimator, the
        turn limit).
    """

    runs: tuple[RunId, ...]
    dialogues: int
    seed: int
    scale: float
    generated: bool
    simulation: SimulationSettings

    @property
    def rewards(self) -> tuple[str, ...]:
        """The runs' reward models (:func:`rewards_of`)."""
        return rewards_of(self.runs)


@dataclass(frozen=True)
class HeldOutSettings:
    """The held-out users and the flow graph (``[held_out]``, :mod:`simscore.app.experiment.held_out`).

    Attributes
    ----------
    runs : tuple of RunId
    held_out : HeldOutConfig
        The ``[held_out]`` table.
    scale : float
        ``[contexts] collect_scale``: the policies sample as in C_col's dialogues.
    simulation : policies.sim.SimulationSettings
        The training runs' simulated world; the held-out users change its ``user``.
    bootstrap : Bootstrap
        ``[scoring]``: the intervals of the flow strata.
    """

    runs: tuple[RunId, ...]
    held_out: HeldOutConfig
    scale: float
    simulation: SimulationSettings
    bootstrap: Bootstrap = field(default_factory=Bootstrap)


@dataclass(frozen=True)
class ScoringSettings:
    """Scoring (``[scoring]`` and ``[measures.<name>]``): which measures, with which options and intervals.

    Attributes
    ----------
    runs : tuple of RunId
    measures : tuple of str
        Measure names or groups.
    measure_options : mapping of str to mapping
        Options of a measure, by its name.
    bootstrap : Bootstrap
        Every interval's resamples, coverage and seed.
    maps : MapConfig
        ``[map]``: the behaviour maps of the final policies and of each run's checkpoints.
    """

    runs: tuple[RunId, ...]
    measures: tuple[str, ...]
    measure_options: Mapping[str, Mapping[str, Any]]
    bootstrap: Bootstrap
    maps: MapConfig = MapConfig(enabled=False)

    @property
    def rewards(self) -> tuple[str, ...]:
        """The runs' reward models (:func:`rewards_of`)."""
        return rewards_of(self.runs)


@dataclass(frozen=True)
class ReferenceSettings:
    """The ``policies`` table (:mod:`simscore.app.experiment.reference`): the final policies, the
    handcrafted and the random policy on each run's final evaluation users.

    Attributes
    ----------
    runs : tuple of RunId
    random_seed : int
        ``[chance] random_seed``.
    eval_seed, eval_dialogues : int
        ``[training]``: the evaluation users' seed and their number per run.
    eval_scale : float
        ``[training]``: the trained policies' sampling scale in evaluation.
    simulation : policies.sim.SimulationSettings
        The training runs' simulated world.
    """

    runs: tuple[RunId, ...]
    random_seed: int
    eval_seed: int
    eval_dialogues: int
    eval_scale: float
    simulation: SimulationSettings


@dataclass(frozen=True)
class ConsequencesSettings:
    """The ``consequences`` table (``[consequences]``, :mod:`simscore.app.experiment.consequences`).

    Made by ``config.for_consequences`` only while ``[consequences] enabled`` is true. Everything
    the table depends on besides its input files (:meth:`to_dict`) is here.

    Attributes
    ----------
    runs : tuple of RunId
        The training runs, rewards first: their last two checkpoints and their C_col.
    continuations : int
        ``[consequences] continuations``: K, the user continuations per context and policy.
    seed : int
        ``[consequences] seed``: the continuations' base seed.
    random_seed : int
        ``[chance] random_seed``: the random policy of the comparisons "trained vs random".
    simulation : policies.sim.SimulationSettings
        The training runs' simulated world (C_col's dialogues ran in it).
    collect_scale : float
        ``[contexts] collect_scale``: the final policies' sampling scale in C_col's dialogues,
        with which the replay runs them again to rebuild each context.
    bootstrap : Bootstrap
        ``[scoring]``: the intervals of the flip rates.

    Examples
    --------
    >>> from simscore.app.experiment.config import DEMO_CONFIG
    >>> DEMO_CONFIG.for_consequences.to_dict()["continuations"]
    2
    """

    runs: tuple[RunId, ...]
    continuations: int
    seed: int
    random_seed: int
    simulation: SimulationSettings
    collect_scale: float
    bootstrap: Bootstrap = field(default_factory=Bootstrap)

    def to_dict(self) -> dict[str, Any]:
        """What determines the table besides its input files, as plain data (a digest's part).

        The simulated world enters by its users and turn limit; its domain and IQ estimator come
        with ``[training]``, which a folder never changes (the run stops first).
        """
        return {"runs": [run.name for run in self.runs], "continuations": self.continuations, "seed": self.seed,
                "random_seed": self.random_seed, "collect_scale": self.collect_scale,
                "users": self.simulation.user.to_json(), "max_turns": self.simulation.max_turns,
                "bootstrap": [self.bootstrap.n_resamples, self.bootstrap.confidence, self.bootstrap.seed]}
