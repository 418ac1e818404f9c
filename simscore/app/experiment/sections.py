"""The sections of an experiment's configuration that are tables of their own (application layer).

:class:`Thresholds` is the ``[findings]`` table (read by :mod:`simscore.app.report.findings`),
:class:`HeldOutConfig` the ``[held_out]`` table (run by :mod:`simscore.app.experiment.held_out`),
:class:`ConsequencesConfig` the ``[consequences]`` table (run by :mod:`simscore.app.experiment.consequences`),
:class:`MapConfig` the ``[map]`` table (run by :mod:`simscore.app.experiment.maps`).
They sit at the bottom of the application, below :class:`simscore.app.experiment.config.ExperimentConfig`
that holds them and below the steps that read them: none of them imports a step.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simscore.checks import check_bool, check_int, check_number, check_seed
from simscore.errors import ConfigError, ExperimentError
from simscore.io.config import check_keys, convert_value, from_mapping

if TYPE_CHECKING:
    from policies.sim.userconfig import UserSimulatorConfig

__all__ = ["Thresholds", "HELD_OUT_USERS", "HeldOutConfig", "held_out_users", "ConsequencesConfig", "MapConfig"]

_T = typing.TypeVar("_T")


#: Each threshold's range and what it is a bound on: (low, high, low excluded, what). A
#: threshold outside its range cannot mean what its finding says (a TMR of 5.0, an r of 2).
_RANGES: dict[str, tuple[float, float, bool, str]] = {
    "late_fraction": (0.0, 1.0, True, "a share of the training"),
    "converged_tmr": (0.0, 1.0, False, "a TMR"),
    "converged_tmr_partly": (0.0, 1.0, False, "a TMR"),
    "small_change_max": (0.0, 1.0, False, "a distance below TMR 1"),
    "seeds_margin": (0.0, 1.0, False, "a difference of two TMRs"),
    "dmr_margin": (0.0, 1.0, False, "a difference of DMR and TMR"),
    "reward_model_margin": (0.0, 1.0, False, "a difference of two TMRs"),
    "first_turn_share": (0.0, 1.0, True, "a share of seed pairs"),
    "agreement_r": (-1.0, 1.0, False, "a Pearson r"),
    "agreement_mse": (0.0, math.inf, False, "a mean squared error"),
    "nonmatching_drop": (0.0, 2.0, False, "a difference of two Pearson r"),
    "weak_r": (-1.0, 1.0, False, "a Pearson r"),
    "high_r": (-1.0, 1.0, False, "a Pearson r"),
    "small_mse": (0.0, math.inf, False, "a mean squared error"),
    "text_gap": (0.0, 1.0, False, "a distance below a text score of 1"),
    "trend_r": (-1.0, 1.0, False, "a Pearson r"),
}


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of :func:`~simscore.app.report.findings.findings` (simscore's choice), with their defaults.

    Attributes
    ----------
    late_fraction : float, default 0.25
        "Late" checkpoints: the last quarter of training, k ≥ (1 − late_fraction)·K.
    converged_tmr, converged_tmr_partly : float, default 0.9 and 0.8
        (1) Mean convergence TMR over the late checkpoints (runs pooled): holds at
        ≥ ``converged_tmr``, partly at ≥ ``converged_tmr_partly``. Paper: 0.986 (TS), 0.989 (IQ).
    small_change_max : float, default 0.1
        (2) Late convergence comparisons with TMR < 1 must exist (else: does not hold) and
        change little: the lowest late TMR ≥ 1 − ``small_change_max`` (else: partly).
        Paper: 5 of 6 (TS) and 6 of 6 (IQ) late comparisons below 1, the lowest 0.978.
    seeds_margin : float, default 0.1
        (3) Late seed-pair TMR at least this far below the late convergence TMR; partly
        when below by at least half the paper's gap (half this where the paper has no
        number). Paper: 0.639 vs 0.986 (TS), 0.455 vs 0.989 (IQ).
    dmr_margin : float, default 0.2
        (4) Late seed-pair DMR − TMR ≥ this; partly at ≥ half the paper's gap (or of this).
        Paper: 0.212 (TS), 0.388 (IQ).
    reward_model_margin : float, default 0.2
        (5) Cross-reward TMR below the within-reward TMR at the same checkpoint by at most
        this; partly when above it by at most half the paper's gap (or of this).
        Paper: 0.407 vs 0.553 (a gap of 0.146).
    first_turn_share : float, default 1.0
        (6) Share of seed pairs (final checkpoint) whose first-turn TMR is 0 or 1, and share
        whose first-turn DMR is 1, both needed; partly when one of the two. Paper: all pairs.
    agreement_r, agreement_mse : float, default 0.9 and 0.01
        (7) CER and CMR over all pairs: Pearson r ≥ ``agreement_r`` and MSE ≤
        ``agreement_mse``; partly when one of the two.
    nonmatching_drop : float, default 0.2
        (7) On the non-matching pairs the CER–CMR r falls at least this far below its value
        over all pairs; partly when lower by at least half this (the paper gives no r over all
        pairs). Paper: 0.466 on the non-matching pairs.
    weak_r : float, default 0.5
        (8) Mean Pearson r of DMR (and of BLEU-4) with every other measure ≤ this (Cohen's
        "large" correlation starts at 0.5); partly when above it but below the mean r among
        the other measures.
    high_r, small_mse : float, default 0.8 and 0.05
        (9) CER and USE cosine: r ≥ ``high_r`` and MSE ≤ ``small_mse``; partly when one.
    text_gap : float, default 0.05
        (10) Where actions match (convergence pairs with TMR = 1) every text measure's mean
        ≤ 1 − ``text_gap``; partly when some are. Paper: angular 0.871, BLEU-4 0.493,
        BERTScore 0.918.
    trend_r : float, default 0.5
        (11) Per reward model and measure, matched convergence and seed-pair rows: the mean on
        C_gen below the mean on C_col and their Pearson r ≥ ``trend_r``; partly when some
        measures pass.

    Each threshold must lie in the range of what it bounds, else ``ValueError`` naming it: the
    TMR thresholds, margins, shares, ``late_fraction`` and ``text_gap`` in [0, 1] (the shares and
    ``late_fraction`` above 0), the correlations ``agreement_r``, ``weak_r``, ``high_r`` and
    ``trend_r`` in [−1, 1], ``nonmatching_drop`` (a drop of r) in [0, 2], the MSEs ≥ 0.

    >>> Thresholds(converged_tmr=5.0)
    Traceback (most recent call last):
    ...
    ValueError: findings threshold converged_tmr must be in [0, 1] (a TMR), got 5.0
    """

    late_fraction: float = 0.25
    converged_tmr: float = 0.9
    converged_tmr_partly: float = 0.8
    small_change_max: float = 0.1
    seeds_margin: float = 0.1
    dmr_margin: float = 0.2
    reward_model_margin: float = 0.2
    first_turn_share: float = 1.0
    agreement_r: float = 0.9
    agreement_mse: float = 0.01
    nonmatching_drop: float = 0.2
    weak_r: float = 0.5
    high_r: float = 0.8
    small_mse: float = 0.05
    text_gap: float = 0.05
    trend_r: float = 0.5

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = check_number(f"findings threshold {f.name}", getattr(self, f.name), error=ValueError)
            object.__setattr__(self, f.name, value)  # a float, also when given an int or a numpy number
            low, high, open_low, what = _RANGES[f.name]
            if value < low or (open_low and value == low) or value > high:
                shown = f"{'(' if open_low else '['}{low:g}, {high:g}]" if high < math.inf else f">= {low:g}"
                verb = "be in" if high < math.inf else "be"
                raise ValueError(f"findings threshold {f.name} must {verb} {shown} ({what}), got {value!r}")
        if self.converged_tmr_partly > self.converged_tmr:
            raise ValueError(
                f"findings threshold converged_tmr_partly ({self.converged_tmr_partly!r}) must not exceed "
                f"converged_tmr ({self.converged_tmr!r})"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "findings") -> Thresholds:
        """Build from plain data (a TOML ``[findings]`` table); unknown names are errors naming them.

        >>> Thresholds.from_mapping({"converged_tmr": 0.95}).converged_tmr
        0.95
        >>> Thresholds.from_mapping({"converged": 0.95})
        Traceback (most recent call last):
        ...
        simscore.errors.ConfigError: findings: unknown key 'converged'; did you mean 'converged_tmr'? ...
        """
        return from_mapping(cls, data, source=source)

    def to_dict(self) -> dict[str, float]:
        """Every threshold by name (the ``[findings]`` table; ``meta["findings"]``)."""
        return dataclasses.asdict(self)

    def changed(self) -> dict[str, float]:
        """The thresholds that differ from their defaults, by name.

        >>> Thresholds(weak_r=0.4).changed()
        {'weak_r': 0.4}
        """
        defaults = Thresholds().to_dict()
        return {name: value for name, value in self.to_dict().items() if value != defaults[name]}


#: The default held-out population: overrides of the training users' behaviour ranges (the
#: argument for them in the docstring of :mod:`simscore.app.experiment.held_out`).
HELD_OUT_USERS: Mapping[str, Any] = {
    "inform_combination": [0.6, 0.9],
    "change_goal_after_first_offer": [0.3, 0.5],
    "inform_to_confirm": [0.3, 0.5],
    "confirm_random_constraint": [0.3, 0.5],
}


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class HeldOutConfig:
    """The ``[held_out]`` table: a held-out user population and the flow graph it is labelled against.

    Attributes
    ----------
    dialogues : int
        Dialogues of each run's final policy with the held-out users, whose decision contexts
        form the context set ``held`` (as ``[contexts] collect_dialogues`` for C_col).
    graph_dialogues : int
        Dialogues of each run's final policy with the training users; the flow graph is built
        from all runs' together.
    seed : int
        First key of both user streams (:func:`~simscore.app.experiment.held_out.held_out_stream`).
    domain_agnostic : bool
        Flow-graph nodes name slots without their domain (:meth:`contexts.flows.FlowGraph.from_dialogues`).
    n_permutations : int
        Random splits of a Monte Carlo permutation test between strata (exact tests need none).
    user : mapping of str to value
        ``[held_out.user]``: fields of :class:`~policies.sim.userconfig.UserSimulatorConfig` that
        the held-out users set differently from the training users (``[training.user]``); at
        least one, and the result must differ. Default :data:`HELD_OUT_USERS`.

    Examples
    --------
    >>> HeldOutConfig().dialogues, HeldOutConfig(user={"patience": [2, 3]}).user
    (10, {'patience': [2, 3]})
    >>> HeldOutConfig(user={})
    Traceback (most recent call last):
    ...
    simscore.errors.ExperimentError: held_out.user: name at least one user setting that the held-out users change
    """

    dialogues: int = 10
    graph_dialogues: int = 100
    seed: int = 3_000_017
    domain_agnostic: bool = False
    n_permutations: int = 10_000
    user: Mapping[str, Any] = dataclasses.field(default_factory=lambda: dict(HELD_OUT_USERS))

    def __post_init__(self) -> None:
        from policies.sim.userconfig import UserSimulatorConfig

        try:
            check_int("dialogues", self.dialogues, minimum=1, maximum=100_000)
            check_int("graph_dialogues", self.graph_dialogues, minimum=1, maximum=1_000_000)
            check_seed("seed", self.seed)
            check_bool("domain_agnostic", self.domain_agnostic)
            check_int("n_permutations", self.n_permutations, minimum=1, maximum=1_000_000)
        except (TypeError, ValueError) as exc:
            raise ExperimentError(f"held_out.{exc}") from None
        if not isinstance(self.user, Mapping):
            raise ExperimentError(f"held_out.user must be a table of user settings, got {self.user!r}")
        if not self.user:
            raise ExperimentError("held_out.user: name at least one user setting that the held-out users change")
        user = {str(k): _plain(v) for k, v in self.user.items()}
        try:
            UserSimulatorConfig.from_mapping(user)
        except (TypeError, ValueError) as exc:
            raise ExperimentError(f"held_out.user: {exc}") from None
        object.__setattr__(self, "user", user)

    #: The keys of the table besides ``[held_out.user]``.
    KEYS: typing.ClassVar[tuple[str, ...]] = ("dialogues", "graph_dialogues", "seed", "domain_agnostic",
                                              "n_permutations")

    def to_dict(self) -> dict[str, Any]:
        """The TOML table as plain data (:meth:`from_mapping` reads it back)."""
        return {**{key: getattr(self, key) for key in self.KEYS}, "user": dict(self.user)}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "config") -> HeldOutConfig:
        """Read the ``[held_out]`` table with strict types; errors name the file, table and key.

        Raises
        ------
        simscore.errors.ConfigError
        """
        from policies.sim.userconfig import UserSimulatorConfig

        check_keys(data, [*cls.KEYS, "user"], source=source, table="held_out")
        hints = typing.get_type_hints(cls)
        kwargs: dict[str, Any] = {key: convert_value(value, hints[key], source=source, table="held_out", key=key)
                                  for key, value in data.items() if key != "user"}
        if "user" in data:
            table = data["user"]
            if not isinstance(table, Mapping):
                raise ConfigError(f"{source}: [held_out.user] must be a table, got {type(table).__name__} {table!r}")
            fields = typing.get_type_hints(UserSimulatorConfig)
            check_keys(table, list(fields), source=source, table="held_out.user")
            kwargs["user"] = {key: _plain(convert_value(value, fields[key], source=source, table="held_out.user",
                                                        key=key))
                              for key, value in table.items()}
        try:
            return cls(**kwargs)
        except ExperimentError as exc:
            raise ConfigError(f"{source}: {exc}") from None


def held_out_users(held_out: HeldOutConfig, training: UserSimulatorConfig) -> UserSimulatorConfig:
    """The held-out users: the training users' configuration with the ``[held_out.user]`` overrides.

    Raises
    ------
    ValueError
        If the result is not a valid configuration or equals the training users'.
    """
    from policies.sim.userconfig import UserSimulatorConfig

    users = UserSimulatorConfig.from_mapping({**training.to_json(), **held_out.user})
    if users == training:
        raise ValueError(f"held_out.user: {held_out.user} are the training users' settings: the held-out users "
                         "must behave differently")
    return users


@dataclass(frozen=True)
class ConsequencesConfig:
    """The ``[consequences]`` table: does a difference in behaviour change how the dialogue ends?

    Read by :mod:`simscore.app.experiment.consequences`, which replays every C_col context from
    its turn with the two policies of each comparison (:mod:`policies.sim.replay`) and writes the
    table ``consequences``.

    Attributes
    ----------
    enabled : bool, default True
        Make the table (and the report's section "Does the difference matter?").
    continuations : int, default 2
        K, the user continuations per context and policy (common random numbers in every arm).
        Two keep the paper-scale run within five minutes on two cores: the step took 29 s of CPU
        at paper scale (``examples/paper.toml``); more narrow the intervals of the flip rates at
        a proportional cost.
    seed : int, default 4000037
        Base seed of the continuations (:func:`policies.sim.replay.continuation_seed`): a
        continuation is a function of this seed, the context and ``k`` alone.

    Examples
    --------
    >>> ConsequencesConfig().continuations, ConsequencesConfig(enabled=False).enabled
    (2, False)
    >>> ConsequencesConfig(continuations=0)
    Traceback (most recent call last):
    ...
    simscore.errors.ExperimentError: consequences.continuations must be >= 1, got 0
    """

    enabled: bool = True
    continuations: int = 2
    seed: int = 4_000_037

    #: The keys of the table.
    KEYS: typing.ClassVar[tuple[str, ...]] = ("enabled", "continuations", "seed")

    def __post_init__(self) -> None:
        try:
            check_bool("enabled", self.enabled)
            check_int("continuations", self.continuations, minimum=1, maximum=1_000)
            check_seed("seed", self.seed)
        except (TypeError, ValueError) as exc:
            raise ExperimentError(f"consequences.{exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """The TOML table as plain data (:meth:`from_mapping` reads it back)."""
        return {key: getattr(self, key) for key in self.KEYS}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "config") -> ConsequencesConfig:
        """Read the ``[consequences]`` table with strict types; errors name the file, table and key.

        >>> ConsequencesConfig.from_mapping({"continuations": 4}).continuations
        4
        >>> ConsequencesConfig.from_mapping({"continuation": 4}, source="x.toml")
        Traceback (most recent call last):
        ...
        simscore.errors.ConfigError: x.toml: [consequences] unknown key 'continuation'; did you mean 'continuations'? ...

        Raises
        ------
        simscore.errors.ConfigError
        """
        return _read_table(cls, cls.KEYS, data, "consequences", source)


def _read_table(cls: type[_T], keys: tuple[str, ...], data: Mapping[str, Any], table: str, source: str) -> _T:
    """A table of plain ``keys`` read with strict types into ``cls``; errors name the file, table and key."""
    check_keys(data, list(keys), source=source, table=table)
    hints = typing.get_type_hints(cls)
    kwargs = {key: convert_value(value, hints[key], source=source, table=table, key=key) for key, value in data.items()}
    try:
        return cls(**kwargs)
    except ExperimentError as exc:
        raise ConfigError(f"{source}: {exc}") from None


@dataclass(frozen=True)
class MapConfig:
    """The ``[map]`` table: who behaves like whom (:mod:`simscore.app.experiment.maps`).

    The behaviour map (:func:`simscore.analysis.behaviour_map.behaviour_map`) of the final
    policies -- every run of every reward model, the handcrafted and the random policy -- on
    each context set, with every measure scored; and, on C_col, the map of each run's
    checkpoints (the action measures), where the plateau of training starts. Tables
    ``behaviour_map``, ``behaviour_map_clusters``, ``behaviour_map_policies``,
    ``behaviour_map_groups`` and ``checkpoint_plateau``; the report's section "Who behaves
    like whom".

    Attributes
    ----------
    enabled : bool, default True
        Make the maps (and the section).
    checkpoints : bool, default True
        Also map each run's checkpoints (at most the last
        :data:`~simscore.analysis.behaviour_map.MAX_POLICIES`).

    Examples
    --------
    >>> MapConfig().enabled, MapConfig.from_mapping({"checkpoints": False}).checkpoints
    (True, False)
    >>> MapConfig(enabled=1)
    Traceback (most recent call last):
    ...
    simscore.errors.ExperimentError: map.enabled must be True or False, got int 1
    """

    enabled: bool = True
    checkpoints: bool = True

    #: The keys of the table.
    KEYS: typing.ClassVar[tuple[str, ...]] = ("enabled", "checkpoints")

    def __post_init__(self) -> None:
        try:
            check_bool("enabled", self.enabled)
            check_bool("checkpoints", self.checkpoints)
        except (TypeError, ValueError) as exc:
            raise ExperimentError(f"map.{exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """The TOML table as plain data (:meth:`from_mapping` reads it back)."""
        return {key: getattr(self, key) for key in self.KEYS}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "config") -> MapConfig:
        """Read the ``[map]`` table with strict types (:raises: simscore.errors.ConfigError)."""
        return _read_table(cls, cls.KEYS, data, "map", source)
