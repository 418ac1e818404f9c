"""The experiment's configuration (application layer): :class:`ExperimentConfig`, its TOML file, the demo.

:class:`ExperimentConfig` is what an experiment trains, collects and scores, validated on
construction; :func:`load_config` reads it from a TOML file (``simscore run experiment.toml``,
the keys in ``docs/experiment-file.rst``) and :data:`DEMO_CONFIG` is the small default of
``simscore demo``. It sits at the bottom of the application: its tables of their own are in
:mod:`simscore.app.experiment.sections`, and every step of the experiment
(:mod:`simscore.app.runner`) reads it; it imports none of them.
"""

from __future__ import annotations

import dataclasses
import os
import typing
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from policies.gpsarsa.training import TrainingConfig
from simscore.app.experiment.folder import RunId
from simscore.app.experiment.sections import ConsequencesConfig, HeldOutConfig, MapConfig, Thresholds, held_out_users
from simscore.app.experiment.steps import (
    CollectionSettings,
    ConsequencesSettings,
    HeldOutSettings,
    ReferenceSettings,
    ScoringSettings,
)
from simscore.checks import check_bool, check_int, check_number, check_seed
from simscore.errors import ConfigError, ExperimentError, FileFormatError, MissingDependencyError
from simscore.io import parse_toml, read_bytes
from simscore.io.config import check_keys, convert_value, from_mapping, to_mapping
from simscore.io.reading import MAX_LINE_LENGTH
from simscore.measures import ALL_MEASURES, MEASURE_GROUPS, resolve_measures
from simscore.stats import MAX_RESAMPLES, Bootstrap

__all__ = ["ExperimentConfig", "DEMO_CONFIG", "MAX_NAME", "load_config"]


def _demo_training() -> TrainingConfig:
    return TrainingConfig(dialogues=5000, every=500)


def _check_schedule(dialogues: int, every: int) -> None:
    """Training's schedule as the experiment needs it: checkpoints at multiples of ``every``, at
    least two of them (convergence compares consecutive ones), checked before any training."""
    if dialogues % every:
        raise ExperimentError(f"dialogues ({dialogues}) must be a multiple of every ({every})")
    if dialogues // every < 2:
        raise ExperimentError(
            f"dialogues ({dialogues}) / every ({every}) gives {dialogues // every} checkpoint: convergence compares "
            "consecutive checkpoints and needs at least two (e.g. every = dialogues / 2)"
        )


@dataclass(frozen=True)
class ExperimentConfig:
    """What an experiment trains, collects and scores: one object, validated on construction.

    TOML tables in brackets. Everything is checked when the object is built (so a bad
    configuration fails before anything is written or trained) and then passed down unchanged:
    each training run's configuration is ``training.for_run(reward, seed)``.

    Attributes
    ----------
    name : str
        Shown in the report title and the log, and the default output folder
        ``simscore-<name>``: 1 to :data:`MAX_NAME` printable characters (letters, digits,
        punctuation, symbols, spaces inside), no path separator (``/``, ``\\``), no control,
        format or other invisible character (they would change what a terminal or the report
        shows), no space at either end.
    rewards : tuple of str
        [training] Reward models, ``"ts"`` (task success) and/or ``"iq"`` (interaction quality).
        With one, every analysis runs but the reward-model comparison, which the report and
        the findings mark "not assessed: one reward model in this run".
    seeds : tuple of int
        [training] One GP-SARSA run per reward and seed.
    training : policies.gpsarsa.training.TrainingConfig
        [training] The template of every run: schedule (``dialogues``, ``every``), evaluation
        (``eval_dialogues``, ``eval_seed``, ``eval_scale``), GP-SARSA (``gamma``, ``sigma``,
        ``nu``, ``scale``, ``reward_assignment``), ``max_turns``, the simulated user
        ([training.user], :class:`~policies.sim.userconfig.UserSimulatorConfig`) and the IQ estimator
        ([training.iq], :class:`~policies.sim.rewards.RuleBasedIQ`). Its ``reward`` and ``seed``
        come from ``rewards`` and ``seeds``.
    collect_dialogues, collect_seed : int
        [contexts] Dialogues of each final policy collected as C_col, each run on its own
        simulated users, as the paper took 10 evaluation dialogues from each trial's own
        stream: run ``<reward>-<seed>`` meets the users of its training seed's stream
        ``(collect_seed, CRC-32 of <reward>)`` (:func:`policies.sim.simulation.dialogue_seed`;
        :func:`collection_stream`), reproducible and met by no training or evaluation dialogue
        nor by another run.
    collect_scale : float
        [contexts] Posterior sampling scale of the policies in those dialogues (PyDial's
        evaluation dialogues, from which the paper collected C_col, sample with scale 1; 0 is
        greedy). Responses on context sets are always greedy.
    generated : bool
        [contexts] Also score on the C_gen grid (1,296 contexts).
    measures : tuple of str
        [scoring] Measure names or groups (``"all"``, ``"action"``, ``"text"``).
    n_resamples, bootstrap_seed, confidence
        [scoring] Bootstrap resamples, seed and coverage of every confidence interval.
    random_seed : int
        [chance] Seed of the random policy compared with trained ones.
    findings : Thresholds
        [findings] Thresholds of the paper's findings in the report (names and defaults:
        :class:`simscore.app.report.findings.Thresholds`).
    measure_options : mapping of str to mapping
        [measures.<name>] Options of a measure, one table per measure, e.g.
        ``[measures.bertscore]`` with ``model = "/models/roberta-large"``, ``num_layers = 17``,
        ``device = "cuda"`` (:func:`simscore.measures.measure_options` lists them); checked
        with the measures, before any work, and recorded in the signatures.
    held_out : HeldOutConfig or None
        [held_out] Optional: a held-out user population (``[held_out.user]``: the training
        users' settings it changes) and a flow graph of the training users' dialogues; adds the
        flow-labelled context set ``held`` and the tables ``flow_strata``,
        ``flow_strata_tests`` and ``flow_graph`` (:mod:`simscore.app.experiment.held_out`). None (default): none
        of it.
    consequences : ConsequencesConfig
        [consequences] Whether a difference in behaviour changes how the dialogue ends: every
        C_col context replayed with the two policies of each comparison, the table
        ``consequences`` (:mod:`simscore.app.experiment.consequences`). On by default
        (``enabled = true``, ``continuations = 2``).
    maps : MapConfig
        [map] Who behaves like whom: the behaviour map of the final policies on each context set
        and of each run's checkpoints on C_col (:mod:`simscore.app.experiment.maps`). On by
        default (``enabled = true``, ``checkpoints = true``).
    """

    name: str = "demo"
    rewards: tuple[str, ...] = ("ts", "iq")
    seeds: tuple[int, ...] = (1, 2, 3)
    training: TrainingConfig = dataclasses.field(default_factory=_demo_training)
    collect_dialogues: int = 10
    collect_seed: int = 2_000_003
    collect_scale: float = 1.0
    generated: bool = True
    measures: tuple[str, ...] = ALL_MEASURES
    n_resamples: int = 1000
    bootstrap_seed: int = 0
    confidence: float = 0.95
    random_seed: int = 0
    findings: Thresholds = dataclasses.field(default_factory=Thresholds)
    measure_options: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    held_out: HeldOutConfig | None = None
    consequences: ConsequencesConfig = dataclasses.field(default_factory=ConsequencesConfig)
    maps: MapConfig = dataclasses.field(default_factory=MapConfig)

    #: TOML table → the fields read from it (``training`` also takes every field of the template).
    SECTIONS: ClassVar[dict[str, tuple[str, ...]]] = {
        "training": ("rewards", "seeds"),
        "contexts": ("collect_dialogues", "collect_seed", "collect_scale", "generated"),
        "scoring": ("measures", "n_resamples", "bootstrap_seed", "confidence"),
        "chance": ("random_seed",),
    }

    def __post_init__(self) -> None:
        _check_name(self.name)
        if isinstance(self.rewards, str) or not isinstance(self.rewards, tuple):
            raise ExperimentError(f"rewards must be a list of reward models, got {self.rewards!r}")
        for reward in self.rewards:
            if reward not in ("ts", "iq"):
                raise ExperimentError(f"rewards: unknown reward model {reward!r} (use 'ts' or 'iq')")
        if not self.rewards or len(set(self.rewards)) != len(self.rewards):
            raise ExperimentError(f"rewards: need distinct reward models, got {list(self.rewards)}")
        if isinstance(self.seeds, (str, int)) or not isinstance(self.seeds, tuple):
            raise ExperimentError(f"seeds must be a list of seeds, got {self.seeds!r}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ExperimentError(f"seeds: need distinct seeds, got {list(self.seeds)}")
        for name, kind in (("training", TrainingConfig), ("findings", Thresholds), ("consequences", ConsequencesConfig),
                           ("maps", MapConfig)):
            if not isinstance(getattr(self, name), kind):
                raise ExperimentError(f"{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}")
        if self.held_out is not None:
            if not isinstance(self.held_out, HeldOutConfig):
                raise ExperimentError(f"held_out must be a HeldOutConfig, got {type(self.held_out).__name__}")
            try:
                held_out_users(self.held_out, self.training.user)
            except (TypeError, ValueError) as exc:
                raise ExperimentError(str(exc)) from None
        try:
            for i, seed in enumerate(self.seeds):
                check_seed(f"seeds[{i}]", seed)
            check_int("collect_dialogues", self.collect_dialogues, minimum=1, maximum=100_000)
            for name in ("collect_seed", "bootstrap_seed", "random_seed"):
                check_seed(name, getattr(self, name))
            check_number("collect_scale", self.collect_scale, minimum=0.0)
            check_bool("generated", self.generated)
            check_int("n_resamples", self.n_resamples, minimum=1, maximum=MAX_RESAMPLES)
            check_number("confidence", self.confidence, minimum=0.0, maximum=1.0, exclusive_minimum=True)
            if self.confidence >= 1.0:
                raise ValueError(f"confidence must be < 1, got {self.confidence!r}")
            if isinstance(self.measures, str) or not isinstance(self.measures, tuple):
                raise ValueError(
                    f"measures must be a list of measure names or groups (e.g. ['tmr', 'dmr'] or ['all']), "
                    f"got {self.measures!r}"
                )
            object.__setattr__(self, "measure_options", _plain_options(self.measure_options))
            _check_measures(self.measures, self.measure_options)
        except (TypeError, ValueError, KeyError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise ExperimentError(message) from None
        _check_schedule(self.training.dialogues, self.training.every)

    @property
    def runs(self) -> list[RunId]:
        """Every training run (reward model and seed; ``.name`` is ``<reward>-<seed>``), rewards first."""
        return [RunId(reward, seed) for reward in self.rewards for seed in self.seeds]

    @property
    def bootstrap(self) -> Bootstrap:
        """The [scoring] bootstrap settings of every interval, as one value."""
        return Bootstrap(n_resamples=self.n_resamples, confidence=self.confidence, seed=self.bootstrap_seed)

    def run_config(self, reward: str, seed: int) -> TrainingConfig:
        """The training configuration of one run: the template with its reward and seed."""
        return self.training.for_run(reward, seed)

    @property
    def for_collection(self) -> CollectionSettings:
        """What collecting the contexts reads (:mod:`simscore.app.experiment.steps`)."""
        return CollectionSettings(tuple(self.runs), self.collect_dialogues, self.collect_seed, self.collect_scale,
                                  self.generated, self.training.simulation())

    @property
    def for_held_out(self) -> HeldOutSettings | None:
        """What the held-out users read; None without a ``[held_out]`` table."""
        if self.held_out is None:
            return None
        return HeldOutSettings(tuple(self.runs), self.held_out, self.collect_scale, self.training.simulation(),
                               self.bootstrap)

    @property
    def for_scoring(self) -> ScoringSettings:
        """What scoring reads."""
        return ScoringSettings(tuple(self.runs), self.measures, self.measure_options, self.bootstrap, self.maps)

    @property
    def for_reference(self) -> ReferenceSettings:
        """What the ``policies`` table (final, handcrafted and random policies) reads."""
        training = self.training
        return ReferenceSettings(tuple(self.runs), self.random_seed, training.eval_seed, training.eval_dialogues,
                                 training.eval_scale, training.simulation())

    @property
    def for_consequences(self) -> ConsequencesSettings | None:
        """What the ``consequences`` table reads; None when ``[consequences] enabled`` is false."""
        if not self.consequences.enabled:
            return None
        return ConsequencesSettings(tuple(self.runs), self.consequences.continuations, self.consequences.seed,
                                    self.random_seed, self.training.simulation(), self.collect_scale, self.bootstrap)

    def to_dict(self) -> dict[str, Any]:
        """The TOML structure as plain data (tables as in :meth:`from_dict`)."""
        out: dict[str, Any] = {"name": self.name}
        for section, keys in self.SECTIONS.items():
            out[section] = {key: list(v) if isinstance(v := getattr(self, key), tuple) else v for key in keys}
        template = to_mapping(self.training)
        for key in ("reward", "seed"):
            template.pop(key)
        out["training"].update(template)
        out["findings"] = self.findings.to_dict()
        if self.measure_options:
            out["measures"] = {name: dict(values) for name, values in self.measure_options.items()}
        if self.held_out is not None:
            out["held_out"] = self.held_out.to_dict()
        out["consequences"] = self.consequences.to_dict()
        out["map"] = self.maps.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "config") -> ExperimentConfig:
        """Build from the TOML structure with strict types; every error names the file, table and key.

        Raises
        ------
        simscore.errors.ConfigError
            An unknown table or key, a value of the wrong type, or a value out of range.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: expected a table, got {type(data).__name__}")
        check_keys(data, ["name", *cls.SECTIONS, "findings", "measures", *_OWN_TABLES], source=source)
        hints = typing.get_type_hints(cls)
        kwargs: dict[str, Any] = {}
        if "name" in data:
            kwargs["name"] = convert_value(data["name"], str, source=source, table="", key="name")
        for section, value in data.items():
            if section == "name":
                continue
            if not isinstance(value, Mapping):
                raise ConfigError(f"{source}: [{section}] must be a table, got {type(value).__name__} {value!r}")
            if section == "findings":
                kwargs["findings"] = from_mapping(Thresholds, value, source=source, table="findings")
                continue
            if section == "measures":
                kwargs["measure_options"] = _read_measure_options(value, source=source)
                continue
            if section in _OWN_TABLES:  # [held_out], [consequences], [map]: a class of their own reads them
                kwargs[_FIELDS.get(section, section)] = _OWN_TABLES[section].from_mapping(value, source=source)
                continue
            own = cls.SECTIONS[section]
            if section == "training":
                for key in ("reward", "seed"):
                    if key in value:
                        plural = {"reward": "rewards", "seed": "seeds"}[key]
                        raise ConfigError(f"{source}: [training] {key}: give the list {plural!r} instead")
                template = {k: v for k, v in value.items() if k not in own}
                kwargs["training"] = from_mapping(TrainingConfig, template, source=source, table="training")
                value = {k: v for k, v in value.items() if k in own}
            else:
                check_keys(value, own, source=source, table=section)
            for key, setting in value.items():
                kwargs[key] = convert_value(setting, hints[key], source=source, table=section, key=key)
        try:
            return cls(**kwargs)
        except ExperimentError as exc:
            raise ConfigError(f"{source}: {exc}") from None


#: The tables of :class:`ExperimentConfig` read by a class of their own, by table (and field) name.
_OWN_TABLES: dict[str, type[HeldOutConfig] | type[ConsequencesConfig] | type[MapConfig]] = {
    "held_out": HeldOutConfig, "consequences": ConsequencesConfig, "map": MapConfig,
}
#: The field of a table whose name differs (``map`` is a builtin's name).
_FIELDS = {"map": "maps"}


#: The longest experiment name: ``simscore-<name>`` stays a valid file name (255 bytes) even in
#: four-byte characters.
MAX_NAME = 60


def _check_name(name: Any) -> None:
    """The rules of :attr:`ExperimentConfig.name`; the error says which one ``name`` breaks."""
    if not isinstance(name, str) or not name:
        raise ExperimentError(f"name must be a non-empty string, got {name!r}")
    shown = repr(name) if len(name) <= MAX_NAME else f"{name[:MAX_NAME]!r}... ({len(name):,} characters)"
    why = "it names the output folder simscore-<name> and heads the report"
    if len(name) > MAX_NAME:
        raise ExperimentError(f"name must be at most {MAX_NAME} characters ({why}), got {shown}")
    for i, c in enumerate(name):
        if c in "/\\":
            raise ExperimentError(f"name must not contain a path separator ({why}), got {c!r} at position {i} "
                                  f"in {shown}")
        if not c.isprintable():
            raise ExperimentError(f"name must hold printable characters only ({why}), got U+{ord(c):04X} "
                                  f"({unicodedata.name(c, 'a control character').lower()}) at position {i} in {shown}")
    if name != name.strip():
        raise ExperimentError(f"name must not start or end with a space ({why}), got {shown}")


def _read_measure_options(tables: Mapping[str, Any], *, source: str) -> dict[str, dict[str, Any]]:
    """``[measures.<name>]`` tables: known measure and option names (values: the measures check them)."""
    from simscore.measures import MEASURES, measure_options

    check_keys(tables, list(MEASURES), source=source, table="measures")
    out: dict[str, dict[str, Any]] = {}
    for name, options in tables.items():
        if not isinstance(options, Mapping):
            raise ConfigError(f"{source}: [measures.{name}] must be a table of options, got {options!r}")
        check_keys(options, list(measure_options(name)), source=source, table=f"measures.{name}")
        out[name] = dict(options)
    return out


def _plain_options(options: Any) -> dict[str, dict[str, Any]]:
    """Measure options as plain data (paths as str, sequences as lists), as TOML and JSON hold them."""
    if not isinstance(options, Mapping):
        raise ValueError(f"measure_options must map measure names to options, got {type(options).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for name, values in options.items():
        if not isinstance(values, Mapping):
            raise ValueError(f"measure_options[{name!r}] must map option names to values, got {values!r}")
        out[name] = {key: os.fspath(v) if isinstance(v, os.PathLike) else list(v) if isinstance(v, tuple) else v
                     for key, v in values.items()}
    return out


def _check_measures(measures: Sequence[str], options: Mapping[str, Mapping[str, Any]]) -> None:
    """Every name a known measure or group, each measure once, its options known and valid.

    A known measure whose optional packages are missing passes: the configuration is valid
    (``DEMO_CONFIG`` names all eight measures and must import in a bare install); the run
    resolves its measures before any work and then names the extra to install.
    """
    for name in measures:
        members = MEASURE_GROUPS.get(name, (name,))
        try:
            resolve_measures([name], options={m: options[m] for m in members if m in options})
        except MissingDependencyError:
            pass
    try:  # options for a measure that is not selected
        resolve_measures(list(measures), options=options)
    except MissingDependencyError:
        pass
    expanded = [member for name in measures for member in MEASURE_GROUPS.get(name, (name,))]
    repeated = sorted({name for name in expanded if expanded.count(name) > 1})
    if repeated:
        raise ValueError(f"measures: each name may appear once, repeated: {', '.join(repeated)}")
    if not expanded:
        raise ValueError("measures: need at least one measure")


#: ``simscore demo``: three seeds per reward, 5,000 dialogues, a checkpoint every 500.
DEMO_CONFIG = ExperimentConfig()


def load_config(path: str | os.PathLike[str]) -> ExperimentConfig:
    """Read and validate an experiment configuration from a TOML file (nothing is run).

    Raises
    ------
    simscore.errors.ConfigError
        The file is missing, not UTF-8, not TOML, or holds an unknown key or a bad value
        (the message names the file, table and key).
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: configuration file not found")
    if p.is_dir():
        raise ConfigError(f"{p}: is a directory, expected a TOML file")
    try:  # bounded: a configuration is at most simscore.io.reading.MAX_LINE_LENGTH bytes, nested at most MAX_NESTING
        raw = read_bytes(p, limit=MAX_LINE_LENGTH)
        text = raw.decode("utf-8")
        data = parse_toml(text, p, expected="an experiment configuration (TOML)")
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}, line {line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    except FileFormatError as exc:
        raise ConfigError(str(exc)) from None
    return ExperimentConfig.from_dict(data, source=str(p))
