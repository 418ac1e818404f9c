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
import time
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from simscore._version import __version__
from simscore.app.findings import Thresholds
from simscore.errors import ExperimentError
from simscore.io import atomic_write_text
from simscore.measures import ALL_MEASURES
from simscore.parallel import run_jobs
from simscore.responses import Responses

__all__ = ["ExperimentConfig", "ExperimentError", "DEMO_CONFIG", "run_experiment", "load_config"]



@dataclass(frozen=True)
class ExperimentConfig:
    """What an experiment trains, collects and scores (TOML sections in brackets).

    Attributes
    ----------
    name : str
        Shown in the report title.
    rewards : tuple of str
        [training] Reward models, ``"ts"`` (task success) and/or ``"iq"`` (interaction quality).
    seeds : tuple of int
        [training] One GP-SARSA run per reward and seed.
    dialogues, every : int
        [training] Training dialogues per run, and a checkpoint every ``every`` dialogues.
    eval_dialogues, eval_seed : int
        [training] Greedy evaluation dialogues after each checkpoint, on fixed simulated users.
    collect_dialogues, collect_seed : int
        [contexts] Dialogues of each final policy collected as C_col, on fixed simulated users.
    collect_scale : float
        [contexts] Posterior sampling scale of the policies in those dialogues (PyDial's
        evaluation dialogues, from which the paper collected C_col, sample with scale 1; 0 is
        greedy). Responses on context sets are always greedy.
    generated : bool
        [contexts] Also score on the C_gen grid (1,296 contexts).
    measures : tuple of str
        [scoring] Measure names.
    n_resamples, bootstrap_seed : int
        [scoring] Bootstrap resamples and seed of every confidence interval.
    random_seed : int
        [chance] Seed of the random policy compared with trained ones.
    findings : Thresholds
        [findings] Thresholds of the paper's findings in the report (names and defaults:
        :class:`simscore.app.findings.Thresholds`); a mapping is accepted and converted.
    """

    name: str = "demo"
    rewards: tuple[str, ...] = ("ts", "iq")
    seeds: tuple[int, ...] = (1, 2, 3)
    dialogues: int = 5000
    every: int = 500
    eval_dialogues: int = 100
    eval_seed: int = 1_000_003
    collect_dialogues: int = 10
    collect_seed: int = 2_000_003
    collect_scale: float = 1.0
    generated: bool = True
    measures: tuple[str, ...] = ALL_MEASURES
    n_resamples: int = 1000
    bootstrap_seed: int = 0
    random_seed: int = 0
    findings: Thresholds = dataclasses.field(default_factory=Thresholds)

    _SECTIONS = {
        "training": ("rewards", "seeds", "dialogues", "every", "eval_dialogues", "eval_seed"),
        "contexts": ("collect_dialogues", "collect_seed", "collect_scale", "generated"),
        "scoring": ("measures", "n_resamples", "bootstrap_seed"),
        "chance": ("random_seed",),
    }

    def __post_init__(self) -> None:
        if isinstance(self.findings, Mapping):
            object.__setattr__(self, "findings", _thresholds(self.findings, "[findings]"))
        elif not isinstance(self.findings, Thresholds):
            raise ExperimentError(f"findings must be a Thresholds or a mapping, got {type(self.findings).__name__}")
        for reward in self.rewards:
            if reward not in ("ts", "iq"):
                raise ExperimentError(f"rewards: unknown reward model {reward!r} (use 'ts' or 'iq')")
        if not self.rewards or len(set(self.rewards)) != len(self.rewards):
            raise ExperimentError(f"rewards: need distinct reward models, got {list(self.rewards)}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ExperimentError(f"seeds: need distinct seeds, got {list(self.seeds)}")
        for name in ("dialogues", "every", "eval_dialogues", "collect_dialogues", "n_resamples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ExperimentError(f"{name} must be a positive integer, got {value!r}")
        if self.dialogues % self.every:
            raise ExperimentError(
                f"dialogues ({self.dialogues}) must be a multiple of every ({self.every})"
            )
        from simscore.measures import resolve_measures

        resolve_measures(list(self.measures))

    @property
    def runs(self) -> list[tuple[str, int, str]]:
        """``(reward, seed, run name)`` of every training run."""
        return [(reward, seed, f"{reward}-{seed}") for reward in self.rewards for seed in self.seeds]

    def to_dict(self) -> dict[str, Any]:
        """The TOML structure as plain data (sections as in :meth:`from_dict`)."""
        out: dict[str, Any] = {"name": self.name}
        for section, keys in self._SECTIONS.items():
            out[section] = {
                key: list(v) if isinstance(v := getattr(self, key), tuple) else v for key in keys
            }
        out["findings"] = self.findings.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "config") -> ExperimentConfig:
        """Build from the TOML structure; unknown sections or keys are errors naming them."""
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key == "name":
                kwargs["name"] = str(value)
                continue
            if key not in (*cls._SECTIONS, "findings"):
                known = ", ".join(["name", *cls._SECTIONS, "findings"])
                raise ExperimentError(f"{source}: unknown entry {key!r} (known: {known})")
            if not isinstance(value, Mapping):
                raise ExperimentError(f"{source}: [{key}] must be a table")
            if key == "findings":
                kwargs["findings"] = _thresholds(value, f"{source}: [findings]")
                continue
            for option, setting in value.items():
                if option not in cls._SECTIONS[key]:
                    raise ExperimentError(
                        f"{source}: unknown option {option!r} in [{key}] "
                        f"(known: {', '.join(cls._SECTIONS[key])})"
                    )
                kwargs[option] = tuple(setting) if isinstance(setting, list) else setting
        try:
            return cls(**kwargs)
        except ExperimentError as exc:
            raise ExperimentError(f"{source}: {exc}") from None


def _thresholds(data: Mapping[str, Any], source: str) -> Thresholds:
    try:
        return Thresholds.from_mapping(data, source=source)
    except (TypeError, ValueError) as exc:
        raise ExperimentError(str(exc) if str(exc).startswith(source) else f"{source}: {exc}") from None


#: ``simscore demo``: three seeds per reward, 5,000 dialogues, a checkpoint every 500.
DEMO_CONFIG = ExperimentConfig()


def load_config(path: str | os.PathLike[str]) -> ExperimentConfig:
    """Read an experiment configuration from a TOML file."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExperimentError(f"{p}: configuration file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"{p}: invalid TOML ({exc})") from None
    return ExperimentConfig.from_dict(data, source=str(p))


# --------------------------------------------------------------------------------- jobs
# Module-level functions: they run in worker processes (or on Dask workers).


def _train_job(config: dict[str, Any], reward: str, seed: int, run_dir: str) -> dict[str, Any]:
    from policies.training import TrainingConfig, train

    training = TrainingConfig(
        reward=reward,
        seed=seed,
        dialogues=config["dialogues"],
        every=config["every"],
        eval_dialogues=config["eval_dialogues"],
        eval_seed=config["eval_seed"],
    )
    start = time.perf_counter()
    train(training, run_dir, progress=False)
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
    plain = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    started = time.perf_counter()
    logger.info("experiment %r: %d runs x %d dialogues, output %s", config.name, len(config.runs), config.dialogues, out)

    # 1. training
    t0 = time.perf_counter()
    train_jobs = [(plain, reward, seed, str(out / "runs" / run)) for reward, seed, run in config.runs]
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
    tables, meta = _score(config, out, context_files, progress)
    meta["command"] = command
    logger.info(
        "scoring (all comparisons, %d measures, model loading included): %.1f s",
        len(config.measures), time.perf_counter() - t0,
    )
    t0 = time.perf_counter()
    from simscore.app import report
    from simscore.tables_io import save_tables

    save_tables(out, tables, meta)
    path = report.write_report(out, tables, meta, figures=None)
    logger.info("tables, figures and report: %.1f s -> %s", time.perf_counter() - t0, path)
    logger.info("total: %.1f s", time.perf_counter() - started)
    return path


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
                          log_source={"name": run, "reward": reward, "purpose": "C_col",
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


def _score(config: ExperimentConfig, out: Path, context_files: Mapping[str, str],
           progress: bool) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    from contexts import ContextSet
    from policies.training import list_checkpoints
    from simscore import analysis as an
    from simscore.measures import resolve_measures
    from simscore.tables_io import collect_versions

    measures = resolve_measures(list(config.measures))
    bootstrap = {"n_resamples": config.n_resamples, "seed": config.bootstrap_seed}
    sets = {name: ContextSet.read_jsonl(path) for name, path in context_files.items()}
    reward_ids = {reward: set(ContextSet.read_jsonl(out / "contexts" / f"col-{reward}.jsonl").ids)
                  for reward in config.rewards}
    checkpoints = {run: [c.dialogues for c in list_checkpoints(out / "runs" / run)] for _, _, run in config.runs}
    final = min(ck[-1] for ck in checkpoints.values())

    def responses(cs: str, run: str, checkpoint: int, ids: set[str] | None = None) -> Responses:
        loaded = Responses.read_jsonl(out / "responses" / cs / run / f"ckpt-{checkpoint:06d}.jsonl")
        return loaded if ids is None else loaded.subset([i for i in loaded.ids if i in ids])

    conv, seeds, rm, chance, turn_tables, first_turns = [], [], [], [], [], []
    from tqdm.auto import tqdm

    steps = len(sets) * (2 * len(config.runs) + len(config.rewards) + 1)
    bar = tqdm(total=steps, desc="scoring", unit="analysis", disable=not progress)
    for cs, contexts in sets.items():
        metadata = contexts.metadata_frame()
        common = {"context_set": cs, "metadata": metadata, **bootstrap}
        ck: dict[str, dict[str, dict[int, Responses]]] = {}
        seeds_here: list[an.AnalysisResult] = []
        for reward, _, run in config.runs:
            ids = reward_ids[reward] if cs == "col" else None
            ck.setdefault(reward, {})[run] = {k: responses(cs, run, k, ids) for k in checkpoints[run]}
        for reward, runs in ck.items():
            for run, by_checkpoint in runs.items():
                conv.append(an.convergence(by_checkpoint, measures, run=run, reward=reward, **common))
                bar.update()
            if len(runs) > 1:
                seeds_here.append(an.seeds(runs, measures, reward=reward, **common))
            bar.update()
        seeds.extend(seeds_here)
        union = {reward: {run: responses(cs, run, final) for run in runs} for reward, runs in ck.items()}
        rm.append(an.reward_models(union, measures, checkpoint=final, **common))
        bar.update()
        random = Responses.read_jsonl(out / "responses" / cs / "random" / "random.jsonl")
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
        "seeds": {"training": list(config.seeds), "evaluation": config.eval_seed,
                  "collection": config.collect_seed, "random_policy": config.random_seed,
                  "bootstrap": config.bootstrap_seed},
        "bootstrap": {**bootstrap, "confidence": 0.95},
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
