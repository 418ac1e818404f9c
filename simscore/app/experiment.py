"""The paper's experiment end to end (application layer: wires simscore, contexts and policies).

Steps, each reusing what a previous (possibly interrupted) run of the same configuration
already finished in the output folder:

1. **train** GP-SARSA for every reward model and seed (``runs/<reward>-<seed>/``: checkpoints
   every ``every`` dialogues and an evaluation table; an interrupted run resumes);
2. **contexts**: C_col from ``collect_dialogues`` simulated dialogues of each final policy
   (``logs/<run>.jsonl``), per reward and their union, and the C_gen grid
   (``contexts/{col,col-<reward>,gen}.jsonl``);
3. **respond**: every checkpoint of every run, and a seeded random policy (chance level), on
   every context set (``responses/<set>/<run>/ckpt-<dialogues>.jsonl``, skipped when present);
4. **score** with all measures: convergence, seeds, reward models, per turn, correlation,
   chance level and absolute performance, written into the folder itself as CSV/JSON tables,
   PNG figures (``figures/``) and a Markdown report (``report.md``) by :mod:`simscore.app.report`;
   ``simscore report DIR`` rebuilds figures and report from those tables.

Steps 1 and 3 are independent jobs run through :func:`simscore.parallel.run_jobs` (local
processes, or a Dask cluster). Configuration: :class:`ExperimentConfig`, from a TOML file
(``simscore run experiment.toml``) or the embedded small default (``simscore demo``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import logging
import os
import threading
import time
import tomllib
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from policies.gpsarsa import compile_kernels
from policies.training import TrainingConfig
from simscore._version import __version__
from simscore.app.findings import Thresholds
from simscore.checks import check_bool, check_int, check_number, check_seed
from simscore.config import check_keys, convert_value, from_mapping, to_mapping
from simscore.errors import ConfigError, ExperimentError, SimscoreError
from simscore.io import atomic_write_text
from simscore.measures import ALL_MEASURES, Measure, resolve_measures
from simscore.parallel import run_jobs
from simscore.responses import Responses
from simscore.stats import MAX_RESAMPLES

__all__ = ["ExperimentConfig", "ExperimentError", "DEMO_CONFIG", "run_experiment", "load_config"]



def _demo_training() -> TrainingConfig:
    return TrainingConfig(dialogues=5000, every=500)


@dataclass(frozen=True)
class ExperimentConfig:
    """What an experiment trains, collects and scores: one object, validated on construction.

    TOML tables in brackets. Everything is checked when the object is built (so a bad
    configuration fails before anything is written or trained) and then passed down unchanged:
    each training run's configuration is ``training.for_run(reward, seed)``.

    Attributes
    ----------
    name : str
        Shown in the report title (and the default output folder ``simscore-<name>``).
    rewards : tuple of str
        [training] Reward models, ``"ts"`` (task success) and/or ``"iq"`` (interaction quality).
    seeds : tuple of int
        [training] One GP-SARSA run per reward and seed.
    training : policies.training.TrainingConfig
        [training] The template of every run: schedule (``dialogues``, ``every``), evaluation
        (``eval_dialogues``, ``eval_seed``, ``eval_scale``), GP-SARSA (``gamma``, ``sigma``,
        ``nu``, ``scale``, ``reward_assignment``), ``max_turns``, the simulated user
        ([training.user], :class:`~policies.usersim.UserSimulatorConfig`) and the IQ estimator
        ([training.iq], :class:`~policies.rewards.RuleBasedIQ`). Its ``reward`` and ``seed``
        come from ``rewards`` and ``seeds``.
    collect_dialogues, collect_seed : int
        [contexts] Dialogues of each final policy collected as C_col, on fixed simulated users.
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
        :class:`simscore.app.findings.Thresholds`).
    measure_options : mapping of str to mapping
        [measures.<name>] Options of a measure, one table per measure, e.g.
        ``[measures.bertscore]`` with ``model = "/models/roberta-large"``, ``num_layers = 17``,
        ``device = "cuda"`` (:func:`simscore.measures.measure_options` lists them); checked
        with the measures, before any work, and recorded in the signatures.
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

    #: TOML table → the fields read from it (``training`` also takes every field of the template).
    SECTIONS: ClassVar[dict[str, tuple[str, ...]]] = {
        "training": ("rewards", "seeds"),
        "contexts": ("collect_dialogues", "collect_seed", "collect_scale", "generated"),
        "scoring": ("measures", "n_resamples", "bootstrap_seed", "confidence"),
        "chance": ("random_seed",),
    }

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or any(c in self.name for c in "/\\\0"):
            raise ExperimentError(f"name must be a non-empty string without path separators, got {self.name!r}")
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
        if not isinstance(self.training, TrainingConfig):
            raise ExperimentError(f"training must be a TrainingConfig, got {type(self.training).__name__}")
        if not isinstance(self.findings, Thresholds):
            raise ExperimentError(f"findings must be a Thresholds, got {type(self.findings).__name__}")
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
            resolve_measures(list(self.measures), options=self.measure_options)
        except (TypeError, ValueError, KeyError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise ExperimentError(message) from None
        if self.training.dialogues % self.training.every:
            raise ExperimentError(
                f"dialogues ({self.training.dialogues}) must be a multiple of every ({self.training.every})"
            )

    @property
    def runs(self) -> list[tuple[str, int, str]]:
        """``(reward, seed, run name)`` of every training run."""
        return [(reward, seed, f"{reward}-{seed}") for reward in self.rewards for seed in self.seeds]

    def run_config(self, reward: str, seed: int) -> TrainingConfig:
        """The training configuration of one run: the template with its reward and seed."""
        return self.training.for_run(reward, seed)

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
        check_keys(data, ["name", *cls.SECTIONS, "findings", "measures"], source=source)
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
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: configuration file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{p}: is a directory, expected a TOML file") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}, line {line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML ({exc})") from None
    return ExperimentConfig.from_dict(data, source=str(p))


# --------------------------------------------------------------------------------- jobs
# Module-level functions: they run in worker processes (or on Dask workers).


def _train_job(config: TrainingConfig, run_dir: str) -> dict[str, Any]:
    from policies.training import train

    start = time.perf_counter()
    train(config, run_dir, progress=False)
    return {"run_dir": run_dir, "seconds": time.perf_counter() - start}


def _respond_job(run_dir: str | None, run: str, context_files: dict[str, str], out_dir: str,
                 random_seed: int) -> int:
    """Write the responses of every checkpoint of one run (or of the random policy) once."""
    from contexts import ContextSet
    from simscore.policy import run_policy

    sets = {name: ContextSet.read_jsonl(path) for name, path in context_files.items()}
    written = 0
    if run_dir is None:
        from policies import RandomPolicy, SummaryPolicyAdapter

        chance = SummaryPolicyAdapter(RandomPolicy(seed=random_seed), name="random")
        for name, contexts in sets.items():
            path = Path(out_dir) / name / run / "random.jsonl"
            if not path.exists():
                run_policy(chance, contexts, name="random").to_jsonl(path)
                written += 1
        return written
    from policies.training import list_checkpoints, load_checkpoint

    for checkpoint in (c.dialogues for c in list_checkpoints(run_dir)):
        targets = {name: Path(out_dir) / name / run / f"ckpt-{checkpoint:06d}.jsonl" for name in sets}
        if all(path.exists() for path in targets.values()):
            continue
        policy = load_checkpoint(run_dir, checkpoint)
        for name, path in targets.items():
            if not path.exists():
                run_policy(policy, sets[name], name=f"{run}@{checkpoint}").to_jsonl(path)
                written += 1
    return written


# ----------------------------------------------------------------------------- pipeline


logger = logging.getLogger(__name__)
_LOG_FORMAT = "[%(asctime)s] %(message)s"
_LOG_DATE_FORMAT = "%H:%M:%S"


@contextlib.contextmanager
def _run_log(path: Path) -> Iterator[None]:
    """Copy the messages of the ``simscore`` loggers into ``path`` (the run log) while inside."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_LOG_FORMAT, _LOG_DATE_FORMAT))
    handler.setLevel(logging.INFO)
    root = logging.getLogger("simscore")
    previous_level = root.level
    if root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(previous_level)
        handler.close()


def _check_folder(out: Path, config: ExperimentConfig) -> None:
    """Refuse to mix two different training set-ups in one folder."""
    saved = out / "experiment.json"
    if not saved.exists():
        return
    try:
        previous = json.loads(saved.read_text(encoding="utf-8"))["config"]
    except (ValueError, KeyError, TypeError):
        raise ExperimentError(f"{saved}: unreadable experiment record; use a new output folder") from None
    if previous.get("training") != config.to_dict()["training"] or previous.get("contexts") != config.to_dict()["contexts"]:
        raise ExperimentError(
            f"{out} holds an experiment with other [training]/[contexts] settings; "
            "use a new output folder (or delete this one)"
        )


def run_experiment(
    config: ExperimentConfig,
    out_dir: str | os.PathLike[str],
    *,
    n_jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    command: str | None = None,
) -> Path:
    """Run (or continue) the experiment in ``out_dir``; returns the report's path.

    Parameters
    ----------
    config : ExperimentConfig
    out_dir : path-like
        Output folder; finished pieces already in it are reused.
    n_jobs : int, optional
        Local worker processes for training and responding (default: one per core).
    scheduler : str, optional
        Dask scheduler address (``tcp://host:port``) to run those jobs on instead.
    progress : bool
        Progress bars.
    command : str, optional
        The command line that started the run (``simscore demo --out DIR``), recorded as
        ``meta["command"]`` for the report's "Reproduce" section; None when run from Python.

    Progress messages go to the logger ``simscore.app.experiment`` (INFO) and, while the run
    lasts, into ``out_dir/run.log``; the command line also shows them on the terminal.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _check_folder(out, config)
    atomic_write_text(
        out / "experiment.json",
        json.dumps({"simscore": __version__, "config": config.to_dict()}, indent=1) + "\n",
    )
    with _run_log(out / "run.log"):
        return _run(config, out, n_jobs=n_jobs, scheduler=scheduler, progress=progress, command=command)


def _run(config: ExperimentConfig, out: Path, *, n_jobs: int | None, scheduler: str | None, progress: bool,
         command: str | None) -> Path:
    started = time.perf_counter()
    logger.info(
        "experiment %r: %d runs x %d dialogues, output %s", config.name, len(config.runs), config.training.dialogues, out
    )

    # one set of instances: loaded ahead, then scoring
    measures = resolve_measures(list(config.measures), options=config.measure_options)
    _preload_text_models(measures)

    # 1. training (the learner's compiled loops are compiled or loaded here first, so that a
    # fresh environment's numba cache is written by this process, not by several workers at once)
    t0 = time.perf_counter()
    compile_kernels()
    train_jobs = [(config.run_config(reward, seed), str(out / "runs" / run)) for reward, seed, run in config.runs]
    run_jobs(_train_job, train_jobs, n_jobs=n_jobs, scheduler=scheduler, desc="training", progress=progress)
    logger.info("training: %.1f s", time.perf_counter() - t0)

    # 2. contexts
    t0 = time.perf_counter()
    context_files = _build_contexts(config, out)
    logger.info("contexts: %.1f s", time.perf_counter() - t0)

    # 3. responses
    t0 = time.perf_counter()
    respond_jobs: list[tuple[str | None, str, dict[str, str], str, int]] = [
        (str(out / "runs" / run), run, context_files, str(out / "responses"), config.random_seed)
        for _, _, run in config.runs
    ]
    respond_jobs.append((None, "random", context_files, str(out / "responses"), config.random_seed))
    written = sum(run_jobs(_respond_job, respond_jobs, n_jobs=n_jobs, scheduler=scheduler, desc="responding",
                           progress=progress))
    logger.info("responses: %d new response files, %.1f s", written, time.perf_counter() - t0)

    # 4. scoring, tables, figures, report
    t0 = time.perf_counter()
    tables, meta = _score(config, measures, out, context_files, progress)
    meta["command"] = command
    logger.info(
        "scoring (all comparisons, %d measures): %.1f s",
        len(meta["signatures"]), time.perf_counter() - t0,
    )
    t0 = time.perf_counter()
    from simscore.app import report
    from simscore.tables_io import save_tables

    save_tables(out, tables, meta)
    _explain(out, config.bootstrap_seed, n_jobs)
    path = report.write_report(out, tables, meta, figures=None)
    logger.info("tables, figures and report: %.1f s -> %s", time.perf_counter() - t0, path)
    logger.info("total: %.1f s", time.perf_counter() - started)
    return path


def _preload_text_models(measures: Sequence[Measure]) -> None:
    """Load the text measures' models in a background thread.

    Training and responding run in worker processes while this process waits, so loading
    the models here (about 7 s: torch, transformers, MiniLM, USE) takes them off the
    critical path. The scoring gets the same measure instances and waits for a load in
    progress (each model loads under its lock); a failure here is left to the scoring,
    which raises it with its own message.
    """
    loaders = [m.load for m in measures if callable(getattr(m, "load", None))]

    def load_all() -> None:
        for load in loaders:
            try:
                load()
            except Exception:  # noqa: BLE001 - reported by the scoring, which loads again
                logger.debug("preloading a text model failed; the scoring will report it", exc_info=True)

    if loaders:
        threading.Thread(target=load_all, name="simscore-preload", daemon=True).start()


def _explain(out: Path, seed: int, n_jobs: int | None) -> None:
    """``simscore explain`` into ``out/explain`` (reads responses only; a failure is logged, not raised)."""
    from simscore.app.explain import explain

    t0 = time.perf_counter()
    try:
        path = explain(out, seed=seed, n_jobs=n_jobs)
    except (SimscoreError, ValueError) as exc:
        logger.warning("explain skipped: %s", exc)
        return
    logger.info("explain: %.1f s -> %s", time.perf_counter() - t0, path)


def _build_contexts(config: ExperimentConfig, out: Path) -> dict[str, str]:
    from contexts import ContextSet, collect_contexts, generate_grid
    from policies import run_dialogues
    from policies.training import load_checkpoint

    logs: dict[str, list[Path]] = {reward: [] for reward in config.rewards}
    for reward, _, run in config.runs:
        path = out / "logs" / f"{run}.jsonl"
        if not path.exists():
            policy = load_checkpoint(out / "runs" / run)
            policy.sampling_scale = config.collect_scale  # PyDial's evaluation dialogues sample (scale 1)
            run_dialogues(policy, config.collect_dialogues, seed=config.collect_seed, log_path=path,
                          settings=config.training.simulation(), log_source={
                              "name": run, "reward": reward, "purpose": "C_col",
                              "sampling_scale": config.collect_scale})
        logs[reward].append(path)
    files: dict[str, str] = {}
    target = out / "contexts"
    col = target / "col.jsonl"
    if not col.exists():
        for reward, paths in logs.items():
            _decisions(collect_contexts(paths, name=f"C_col^{reward.upper()}")).to_jsonl(
                target / f"col-{reward}.jsonl"
            )
        _decisions(collect_contexts([p for paths in logs.values() for p in paths], name="C_col")).to_jsonl(col)
    files["col"] = str(col)
    if config.generated:
        gen = target / "gen.jsonl"
        if not gen.exists():
            generate_grid().to_jsonl(gen)
        files["gen"] = str(gen)
    sizes = {name: len(ContextSet.read_jsonl(path, verify_hash=False)) for name, path in files.items()}
    logger.info("context sets: %s", ", ".join(f"{name} {n}" for name, n in sizes.items()))
    return files


def _decisions(contexts: Any) -> Any:
    """Only the policy's decision points: turn 0 of a simulated dialogue is the fixed greeting."""
    return contexts.filter(lambda context: (context.metadata.get("turn_index") or 0) > 0, name=contexts.name)


def _score(config: ExperimentConfig, measures: Sequence[Measure], out: Path, context_files: Mapping[str, str],
           progress: bool) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    from contexts import ContextSet
    from policies.training import list_checkpoints
    from simscore import analysis as an
    from simscore.tables_io import collect_versions

    bootstrap = {"n_resamples": config.n_resamples, "confidence": config.confidence, "seed": config.bootstrap_seed}
    sets = {name: ContextSet.read_jsonl(path) for name, path in context_files.items()}
    reward_ids = {reward: set(ContextSet.read_jsonl(out / "contexts" / f"col-{reward}.jsonl").ids)
                  for reward in config.rewards}
    checkpoints = {run: [c.dialogues for c in list_checkpoints(out / "runs" / run)] for _, _, run in config.runs}
    final = min(ck[-1] for ck in checkpoints.values())

    # Every responses file read once: per context set, reward and run, the responses of each
    # checkpoint (on C_col only the contexts collected with that reward), the final
    # checkpoint on the whole set, and the random policy.
    by_checkpoint: dict[str, dict[str, dict[str, dict[int, Responses]]]] = {}
    finals: dict[str, dict[str, dict[str, Responses]]] = {}
    randoms: dict[str, Responses] = {}
    for cs in sets:
        for reward, _, run in config.runs:
            ids = reward_ids[reward] if cs == "col" else None
            whole = {k: Responses.read_jsonl(out / "responses" / cs / run / f"ckpt-{k:06d}.jsonl")
                     for k in checkpoints[run]}
            by_checkpoint.setdefault(cs, {}).setdefault(reward, {})[run] = {
                k: r if ids is None else r.subset([i for i in r.ids if i in ids]) for k, r in whole.items()}
            finals.setdefault(cs, {}).setdefault(reward, {})[run] = whole[final]
        randoms[cs] = Responses.read_jsonl(out / "responses" / cs / "random" / "random.jsonl")

    conv, seeds, rm, chance, turn_tables, first_turns = [], [], [], [], [], []
    from tqdm.auto import tqdm

    steps = len(sets) * (2 * len(config.runs) + len(config.rewards) + 1)
    bar = tqdm(total=steps, desc="scoring", unit="analysis", disable=not progress)
    text_measures = [m for m in measures if m.level == "text" and hasattr(m, "prepare")]
    if text_measures:
        # The models work best on full batches: every text the analyses below will score,
        # embedded once up front, instead of a few new ones per comparison.
        t0 = time.perf_counter()
        bar.set_postfix_str("embedding the texts")
        everything = [r for cs in sets for runs in by_checkpoint[cs].values() for ks in runs.values()
                      for r in ks.values()]
        everything += [r for cs in sets for runs in finals[cs].values() for r in runs.values()]
        everything += list(randoms.values())
        texts = {t for r in everything for t in r.texts() if t is not None}
        for measure in text_measures:
            measure.prepare(texts)
        bar.set_postfix_str("")
        logger.info("text measures: %d distinct texts embedded up front, %.1f s", len(texts), time.perf_counter() - t0)
    for cs, contexts in sets.items():
        metadata = contexts.metadata_frame()
        common = {"context_set": cs, "metadata": metadata, **bootstrap}
        ck = by_checkpoint[cs]
        seeds_here: list[an.AnalysisResult] = []
        for reward, runs in ck.items():
            for run, run_checkpoints in runs.items():
                conv.append(an.convergence(run_checkpoints, measures, run=run, reward=reward, **common))
                bar.update()
            if len(runs) > 1:
                seeds_here.append(an.seeds(runs, measures, reward=reward, **common))
            bar.update()
        seeds.extend(seeds_here)
        union = finals[cs]
        rm.append(an.reward_models(union, measures, checkpoint=final, **common))
        bar.update()
        random = randoms[cs]
        for reward, final_runs in union.items():
            for run, trained in final_runs.items():
                chance.append(an.chance_level(random, trained, measures, checkpoint=final, reward=reward,
                                              run=run, **common))
                bar.update()
        if cs == "col":
            seed_pairs = [c for r in seeds_here for c in r.select(checkpoint=final)]
            if seed_pairs:
                turn_tables.append(an.per_turn(seed_pairs, group="seed pairs (final checkpoint)"))
            cross = [c for key, c in rm[-1].comparisons.items() if key.reward_a != key.reward_b]
            if cross:
                turn_tables.append(an.per_turn(cross, group="reward models (final checkpoint)"))
            pairs = {k: c for r in seeds_here for k, c in r.comparisons.items()}
            pairs.update((k, c) for k, c in rm[-1].comparisons.items() if k.reward_a != k.reward_b)
            first_turns.append(an.first_turn(pairs, n_resamples=config.n_resamples, seed=config.bootstrap_seed))
        logger.info("scored context set %r", cs)
    bar.close()

    conv_r, rm_r, chance_r = an.combine(conv), an.combine(rm), an.combine(chance)
    seeds_r = an.combine(seeds) if seeds else None
    cross = [c for key, c in rm_r.comparisons.items() if key.reward_a != key.reward_b]
    pooled = [*conv_r.comparisons.values(), *cross]
    if seeds_r is not None:
        pooled.extend(seeds_r.comparisons.values())
    tables: dict[str, pd.DataFrame] = {
        "performance": an.performance_table(_evaluation_records(config, out)),
        "convergence": conv_r.table,
        "reward_models": rm_r.table,
        "correlation": an.correlation_table(pooled),
        "chance": chance_r.table,
    }
    if seeds_r is not None:
        tables["seeds"] = seeds_r.table
    if turn_tables:
        tables["per_turn"] = pd.concat(turn_tables, ignore_index=True)
    if first_turns:
        tables["first_turn"] = pd.concat(first_turns, ignore_index=True)
    if any(m.level == "text" for m in measures):
        analyses: dict[str, Mapping[Any, Any]] = {"convergence": conv_r.comparisons}
        if seeds_r is not None:
            analyses["seeds"] = seeds_r.comparisons
        analyses["reward_models"] = {k: c for k, c in rm_r.comparisons.items() if k.reward_a != k.reward_b}
        tables["text_at_matching_actions"] = an.text_at_matching_actions(
            analyses, measures=[m.name for m in measures if m.level == "text"], n_resamples=config.n_resamples,
            seed=config.bootstrap_seed)
    meta = {
        "title": f"simscore experiment {config.name!r}",
        "signatures": {m.name: m.signature() for m in measures},
        "config": config.to_dict(),
        "versions": collect_versions(),
        "seeds": {"training": list(config.seeds), "evaluation": config.training.eval_seed,
                  "collection": config.collect_seed, "random_policy": config.random_seed,
                  "bootstrap": config.bootstrap_seed},
        "bootstrap": bootstrap,
        "findings": config.findings.to_dict(),
        # the day the run was scored: written once, so `simscore report DIR` rebuilds the same text
        "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
    }
    return tables, meta


def _evaluation_records(config: ExperimentConfig, out: Path) -> pd.DataFrame:
    from policies.training import read_evaluation

    rows = [
        {"reward": reward, "run": run, "checkpoint": record.dialogues, "success_rate": record.success_rate,
         "avg_iq": record.avg_iq, "avg_length": record.avg_length}
        for reward, _, run in config.runs
        for record in read_evaluation(out / "runs" / run)
    ]
    return pd.DataFrame(rows)
