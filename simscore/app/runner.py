"""The paper's experiment end to end (application layer: wires simscore, contexts and policies).

Steps, each reusing what a previous (possibly interrupted, even killed) run already finished
in the output folder, once it is checked to be made with this run's settings
(:mod:`simscore.app.experiment.provenance`: what each piece is made with, and which pieces are made again
and which stop the run when a setting changes):

1. **train** GP-SARSA for every reward model and seed (``runs/<reward>-<seed>/``: checkpoints
   every ``every`` dialogues and an evaluation table; an interrupted run resumes);
2. **contexts**: C_col from ``collect_dialogues`` simulated dialogues of each final policy
   (``logs/<run>.jsonl``), per reward and their union, and the C_gen grid
   (``contexts/{col,col-<reward>,gen}.jsonl``);
3. **respond**: every checkpoint of every run, and a seeded random policy (chance level), on
   every context set (``responses/<set>/<run>/ckpt-<dialogues>.jsonl``, skipped when present);
4. **score** with all measures (:mod:`simscore.app.experiment.analyses`): convergence, seeds, reward
   models, per turn, correlation, chance level, absolute performance and (``[consequences]``, on by
   default) whether the differences change how the dialogues end
   (:mod:`simscore.app.experiment.consequences`: every C_col context replayed), written into the
   folder itself as CSV/JSON tables with the run's record (:class:`simscore.app.experiment.record.RunRecord`),
   PNG figures (``figures/``) and a Markdown report (``report.md``) by :mod:`simscore.app.report.document`;
   ``simscore report DIR`` rebuilds figures and report from those tables.

Every path of the folder comes from :class:`simscore.app.experiment.folder.ExperimentFolder`; the folder is
locked while a run writes it. A re-run of a finished folder is quick: finished training runs and
responses are skipped before any worker starts, the text measures read their embeddings from the
folder's ``cache/embeddings/`` (:mod:`simscore.measures.disk_cache`; no model loads), and the
tables, ``explain/``, figures and report are kept when what made them is unchanged
(:class:`simscore.app.experiment.provenance.MadeFrom`).

Steps 1 and 3 are independent jobs run through :func:`simscore.parallel.run_jobs` (local
processes, or a Dask cluster). In step 4 the pieces that wait on no score -- the flow strata of
the held-out set, the reference policies, the consequences' replays and explain -- run in one
worker process beside this one (:class:`simscore.parallel.Beside`) from when the texts are
embedded (the held set's too): what is left of the scoring, and then the figures, keep about one
core busy. A piece the worker has not begun when this process needs it is taken back and run
here. The tables, figures and report are the same, byte for byte, as when everything runs in this
process (``n_jobs=1``, or with a Dask scheduler). Configuration: :class:`ExperimentConfig`, from a TOML file
(``simscore run experiment.toml``) or the embedded small default (``simscore demo``).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import logging
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pandas as pd

from policies.gpsarsa import compile_kernels
from policies.gpsarsa.training import TrainingConfig, is_trained
from simscore._version import __version__
from simscore.app.experiment.config import ExperimentConfig
from simscore.app.experiment.folder import COLLECTED, GENERATED, HELD_OUT, ExperimentFolder, RunId
from simscore.app.experiment.provenance import (
    MadeFrom,
    check_collected,
    check_folder_settings,
    check_log,
    digest_of,
    stale_random_responses,
    upstream_digest,
)
from simscore.app.experiment.record import RunRecord
from simscore.app.experiment.steps import CollectionSettings, ConsequencesSettings, HeldOutSettings
from simscore.errors import SimscoreError
from simscore.io import atomic_write_text, is_temporary
from simscore.measures import Measure, resolve_measures, with_cache_dir
from simscore.parallel import Beside, run_jobs, stop_on_signals
from simscore.progress import LineClock, track

__all__ = ["run_experiment", "collection_stream"]


# --------------------------------------------------------------------------------- jobs
# Module-level functions: they run in worker processes (or on Dask workers).


def _train_job(config: TrainingConfig, run_dir: str) -> dict[str, Any]:
    from policies.gpsarsa.training import train

    start = time.perf_counter()
    train(config, run_dir, progress=False)
    return {"run_dir": run_dir, "seconds": time.perf_counter() - start}


def _response_files(folder: ExperimentFolder, run: RunId | None, context_sets: tuple[str, ...],
                    final_only: bool) -> dict[int | None, dict[str, Path]]:
    """The responses files of one run (checkpoint -> set -> path; the random policy's under None)."""
    if run is None:
        return {None: {name: folder.random_responses(name) for name in context_sets}}
    from policies.gpsarsa.training import list_checkpoints

    checkpoints = list_checkpoints(folder.run_dir(run))
    return {c.dialogues: {name: folder.responses(name, run, c.dialogues) for name in context_sets}
            for c in (checkpoints[-1:] if final_only else checkpoints)}


def _responses_missing(folder: ExperimentFolder, run: RunId | None, context_sets: tuple[str, ...], random_seed: int,
                       final_only: bool = False) -> bool:
    """Whether :func:`_respond_job` has a file to write (same arguments)."""
    return not all(path.exists() for paths in _response_files(folder, run, context_sets, final_only).values()
                   for path in paths.values())


def _respond_job(folder: ExperimentFolder, run: RunId | None, context_sets: tuple[str, ...], random_seed: int,
                 final_only: bool = False) -> int:
    """Write the responses of every checkpoint (or of the final one) of one run, or of the random policy
    (``run=None``), once."""
    from contexts import ContextSet
    from simscore.policy import run_policy

    sets = {name: ContextSet.read_jsonl(folder.contexts(name)) for name in context_sets}
    written = 0
    for checkpoint, targets in _response_files(folder, run, context_sets, final_only).items():
        if all(path.exists() for path in targets.values()):
            continue
        if run is None or checkpoint is None:
            from policies import RandomPolicy, SummaryPolicyAdapter

            policy: Any = SummaryPolicyAdapter(RandomPolicy(seed=random_seed), name="random")
            name_of = "random"
        else:
            from policies.gpsarsa.training import load_checkpoint

            policy, name_of = load_checkpoint(folder.run_dir(run), checkpoint), f"{run.name}@{checkpoint}"
        for name, path in targets.items():
            if not path.exists():
                run_policy(policy, sets[name], name=name_of).to_jsonl(path)
                written += 1
    return written


# ----------------------------------------------------------------------------- pipeline


logger = logging.getLogger("simscore.app.experiment")  # the logger of every step of the experiment
_LOG_FORMAT = "[%(asctime)s] %(message)s"
_LOG_DATE_FORMAT = "%H:%M:%S"


@contextlib.contextmanager
def _run_log(path: Path) -> Iterator[None]:
    """Copy the messages of the ``simscore`` loggers into ``path`` (the run log) while inside."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_LOG_FORMAT, _LOG_DATE_FORMAT))
    handler.setLevel(logging.INFO)
    handler.addFilter(LineClock())  # its messages count as lines for the steps' minute
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
        Local worker processes for training, responding and the consequences' replays (default:
        one per core); with more than one, and more than one core, the steps that wait on no
        score run in a worker beside the scoring. 1 runs everything in this process.
    scheduler : str, optional
        Dask scheduler address (``tcp://host:port``) to run those jobs on instead.
    progress : bool
        Show how far each long step is (see Notes).
    command : str, optional
        The command line that started the run (``simscore demo --out DIR``), recorded in the
        run record for the report's "Reproduce" section; None when run from Python.

    Notes
    -----
    Progress messages go to the logger ``simscore.app.experiment`` (INFO) and, while the run
    lasts, into ``out_dir/run.log``; the command line also shows them on stderr. With
    ``progress``, every long step shows how far it is (:mod:`simscore.progress`: a bar on a
    terminal, else a line on the logger ``simscore.progress`` at least every minute, which
    ``run.log`` gets too).

    One run at a time: the folder is locked while the run lasts (``simscore.lock``: process,
    host, command; a second run is refused with
    :class:`~simscore.errors.FolderInUseError`), and the lock of a run that was killed is
    taken over. SIGTERM stops the run like Ctrl-C (:class:`~simscore.errors.RunStopped`): its
    worker processes end, no file is left half-written, and running it again continues.

    Raises
    ------
    simscore.errors.FolderInUseError
        Another process writes the folder.
    simscore.errors.ExperimentError
        The folder holds pieces made with other settings that this run cannot remake.
    """
    # a measure whose extra is missing stops the run here, naming the extra, before any file is written
    resolve_measures(list(config.measures), options=config.measure_options)
    folder = ExperimentFolder(out_dir)
    folder.root.mkdir(parents=True, exist_ok=True)
    with stop_on_signals(), folder.lock(command or "run_experiment (Python)") as lock, _run_log(folder.run_log):
        if lock.taken_over is not None:
            held = lock.taken_over
            logger.warning("taking over the lock of %s (process %s on %s, since %s), which ended without releasing it",
                           held.get("command", "?"), held.get("pid"), held.get("host"), held.get("since"))
        for path in folder.remove_leftovers():
            logger.info("removed %s, left by a write that was interrupted", folder.link(path))
        check_folder_settings(folder, config)
        atomic_write_text(
            folder.experiment_file,
            json.dumps({"simscore": __version__, "config": config.to_dict()}, indent=1) + "\n",
        )
        return _run(config, folder, n_jobs=n_jobs, scheduler=scheduler, progress=progress, command=command)


def _run(config: ExperimentConfig, folder: ExperimentFolder, *, n_jobs: int | None, scheduler: str | None,
         progress: bool, command: str | None) -> Path:
    started = time.perf_counter()
    logger.info(
        "experiment %r: %d runs x %d dialogues, output %s", config.name, len(config.runs), config.training.dialogues,
        folder.root,
    )

    # one set of instances: loaded ahead (while training runs), then scoring; the text measures keep their
    # embeddings in the folder's cache, where a later run (or stage) finds them
    measures = _measures(config, folder)

    # 1. training of the runs not finished yet (the learner's compiled loops are compiled or loaded here
    # first, so that a fresh environment's numba cache is written by this process, not by several workers)
    t0 = time.perf_counter()
    train_jobs = [(config.run_config(run.reward, run.seed), str(folder.run_dir(run))) for run in config.runs]
    train_jobs = [job for job in train_jobs if not is_trained(*job)]
    if train_jobs:  # models load beside the training (with nothing to train, only if some text is new)
        _preload_text_models(measures)
        compile_kernels(progress=progress)
    run_jobs(_train_job, train_jobs, n_jobs=n_jobs, scheduler=scheduler, desc="training", unit="runs",
             progress=progress)
    logger.info("training: %d runs trained, %d had finished, %.1f s", len(train_jobs),
                len(config.runs) - len(train_jobs), time.perf_counter() - t0)

    # 2. contexts
    t0 = time.perf_counter()
    context_sets = _build_contexts(config.for_collection, config.for_held_out, folder, progress)
    logger.info("contexts: %.1f s", time.perf_counter() - t0)

    # 3. responses
    t0 = time.perf_counter()
    for remade in stale_random_responses(folder, context_sets, config.random_seed):
        logger.info("%s", remade)
    runs: list[RunId | None] = [*config.runs, None]  # None: the random policy
    respond_jobs: list[tuple[Any, ...]] = [(folder, run, context_sets, config.random_seed) for run in runs]
    if config.held_out is not None:  # the final checkpoints only
        for remade in stale_random_responses(folder, (HELD_OUT,), config.random_seed):
            logger.info("%s", remade)
        respond_jobs += [(folder, run, (HELD_OUT,), config.random_seed, True) for run in runs]
    respond_jobs = [job for job in respond_jobs if _responses_missing(*job)]
    written = sum(run_jobs(_respond_job, respond_jobs, n_jobs=n_jobs, scheduler=scheduler, desc="responding",
                           unit="policies", progress=progress))
    logger.info("responses: %d new response files, %.1f s", written, time.perf_counter() - t0)

    # 4. scoring, tables, explain, figures, report: each made again only when what made it changed. The steps that
    # wait on no score (the held-out strata, the reference policies, consequences, explain) run beside the scoring
    # in one worker process from when the texts are embedded, since what is left of the scoring keeps about one
    # core busy
    made = MadeFrom(folder)
    upstream = upstream_digest(folder)
    record = _record(config, measures, command)
    evaluations = _evaluation_records(config, folder)
    tables_digest = digest_of("tables", {k: v for k, v in record.to_meta().items() if k != "date"}, upstream,
                              evaluations.to_csv())
    explain_digest = digest_of("explain", upstream, record.versions, config.bootstrap_seed, list(context_sets))
    tables_kept = made.current("tables", tables_digest)
    with contextlib.nullcontext() if tables_kept else _beside(n_jobs, scheduler) as beside:
        explain: _Step | None = None
        if made.current("explain", explain_digest):
            logger.info("explain: kept (made by an earlier run from the same responses and settings)")
        else:
            made.forget("explain")
            job = functools.partial(_explain_job, folder.root, tuple(context_sets), config.bootstrap_seed)
            explain = _Step(beside, "the scoring and the figures", functools.partial(job, n_jobs, progress),
                            functools.partial(job, 1, False))
        tables: dict[str, pd.DataFrame] | None = None
        figures: dict[str, Path] | None = None
        if tables_kept:
            logger.info("tables: kept (made by an earlier run from the same responses and settings)")
        else:
            made.forget("tables")
            tables, record, table_files = _score(config, measures, folder, context_sets, evaluations, command,
                                                 progress, made=made, n_jobs=n_jobs, scheduler=scheduler,
                                                 beside=beside, explain=explain)
            made.record("tables", tables_digest, table_files)
            made.forget("report")  # the tables are new: so are the figures, drawn while explain may still run
            figures = _figures(folder, tables, record, progress)
        if explain is not None and _explained(explain):
            made.record("explain", explain_digest, _files(folder.explain))
    report_digest = digest_of("report", tables_digest, explain_digest if made.current("explain", explain_digest)
                              else None)
    if made.current("report", report_digest):
        path = folder.report
        logger.info("figures and report: kept (made by an earlier run from the same tables)")
    else:
        made.forget("report")
        path = _report(folder, tables, record, progress, figures)
        made.record("report", report_digest, [path, *_files(folder.figures)])
    logger.info("total: %.1f s", time.perf_counter() - started)
    return path


class _Step:
    """A step of the run that waits on no score: run here when its result is asked for, or, once started,
    by the worker beside this process (``beside``: what it runs beside, for the log). ``there``: the step as the
    worker runs it (one job, no progress bar), when not ``function``. A step the worker has not begun when its
    result is asked for is taken back and run here."""

    def __init__(self, worker: Beside | None, beside: str, function: Callable[[], Any],
                 there: Callable[[], Any] | None = None) -> None:
        self.worker, self.beside, self.function = worker, beside, function
        self.there = function if there is None else there
        self.future: Future[Any] | None = None
        self.ran: tuple[Any, float, str] | None = None  # what take_back ran here

    def start(self) -> None:
        if self.worker is not None and self.future is None:
            self.future = self.worker.submit(self.there)

    def take_back(self) -> None:
        """Run the step here now if the worker has not begun it (rather than wait behind the one it runs)."""
        if self.future is not None and self.worker is not None and self.worker.take_back(self.future):
            start = time.perf_counter()
            self.future, self.ran = None, (self.function(), time.perf_counter() - start, "")

    def result(self) -> tuple[Any, float, str]:
        """Its value, its own seconds and, for the log, what it ran beside ("" when it ran here)."""
        if self.ran is not None:
            return self.ran
        if self.future is None or (self.worker is not None and self.worker.take_back(self.future)):
            start = time.perf_counter()
            return self.function(), time.perf_counter() - start, ""
        value, seconds = Beside.result(self.future)
        return value, seconds, f"beside {self.beside}"


def _beside(n_jobs: int | None, scheduler: str | None) -> contextlib.AbstractContextManager[Beside | None]:
    """The worker beside this process: none with one job (everything in this process), on a Dask cluster
    (whose workers run the jobs) or on one core."""
    if n_jobs == 1 or scheduler is not None or (os.cpu_count() or 1) < 2:
        return contextlib.nullcontext()
    return Beside()


def _score(config: ExperimentConfig, measures: Sequence[Measure], folder: ExperimentFolder,
           context_sets: Sequence[str], evaluations: pd.DataFrame, command: str | None,
           progress: bool, *, made: MadeFrom, n_jobs: int | None, scheduler: str | None, beside: Beside | None,
           explain: _Step | None) -> tuple[dict[str, pd.DataFrame], RunRecord, list[Path]]:
    """Score every comparison and save the tables (the index last); the tables, their record and files. The
    held-out strata, the reference policies, the consequences and ``explain`` are started ``beside`` once the texts
    are embedded; when the scoring is done, those the tables need that the worker has not begun are run here."""
    t0 = time.perf_counter()
    from simscore.app.experiment.analyses import score_experiment
    from simscore.app.experiment.reference import reference_policies

    record = _record(config, measures, command)
    held_out = config.for_held_out
    held: _Step | None = None
    first: Callable[[], None] | None = None  # what this process does before the worker starts
    if held_out is not None:
        from simscore.app.experiment.flow_strata import flow_strata_tables

        if beside is not None:  # the held set's texts are embedded here, for the worker
            first = functools.partial(_embed_held_out, held_out, measures, folder)
        held = _Step(beside, "the scoring", functools.partial(flow_strata_tables, held_out, measures, folder,
                                                              progress=progress),
                     functools.partial(_held_out_job, config, folder.root))
    reference = _Step(beside, "the scoring", *(functools.partial(
        reference_policies, config.for_reference, folder, progress=shown) for shown in (progress, False)))
    replayed = config.for_consequences
    consequences = (None if replayed is None else
                    _consequences(replayed, folder, made, record.versions, beside=beside, n_jobs=n_jobs,
                                  scheduler=scheduler, progress=progress))
    # in the order this process asks for their results (the last ones are taken back if the worker is behind)
    steps = [step for step in (held, reference, consequences and consequences[0], explain) if step is not None]

    def embedded() -> None:
        if first is not None:
            first()
        for step in steps:
            step.start()

    tables = score_experiment(config.for_scoring, measures, folder, context_sets, evaluations, progress, embedded)
    for step in steps[:-1] if explain is not None else steps:  # what the tables need and the worker has not begun
        step.take_back()  # is done here, not waited for behind the step it runs (explain runs beside the figures)
    if held is not None:
        strata, seconds, where = held.result()
        tables.update(strata)
        logger.info("flow strata on the held-out set%s: %.1f s", f" ({where})" if where else "", seconds)
    logger.info("scoring (all comparisons, %d measures): %.1f s", len(record.signatures), time.perf_counter() - t0)
    tables["policies"], seconds, where = reference.result()
    logger.info("final, handcrafted and random policies on the final evaluation users%s: %.1f s",
                f" ({where})" if where else "", seconds)
    if consequences is not None:
        tables["consequences"] = consequences[1]()
    from simscore.analysis.tables_io import save_tables

    # the index and the report are written last: while the tables are replaced, there is neither
    folder.report.unlink(missing_ok=True)
    folder.tables_index.unlink(missing_ok=True)
    written = save_tables(folder.root, tables, record.to_meta())
    return tables, record, [folder.tables_index, *written.values(), *(p.with_suffix(".csv") for p in written.values())]


def _consequences(settings: ConsequencesSettings, folder: ExperimentFolder, made: MadeFrom,
                  versions: Mapping[str, str], *, beside: Beside | None, n_jobs: int | None, scheduler: str | None,
                  progress: bool) -> tuple[_Step | None, Callable[[], pd.DataFrame]]:
    """The step that makes the ``consequences`` table (None: the table kept in ``cache/consequences/`` while what
    made it stays), and what gives the table (made: saved there with what made it)."""
    from simscore.analysis.tables_io import INDEX_FILE, load_tables, save_tables
    from simscore.app.experiment.consequences import POOLED, consequences_table, input_files
    from simscore.io import files_digest

    digest = digest_of("consequences", settings.to_dict(), versions,
                       files_digest(folder.root, input_files(settings, folder)))
    cache = folder.consequences_cache
    if made.current("consequences", digest):
        logger.info("consequences: kept (made by an earlier run from the same checkpoints, contexts and settings)")
        kept = load_tables(cache).tables["consequences"]
        return None, lambda: kept
    made.forget("consequences")
    step = _Step(beside, "the scoring", functools.partial(
        consequences_table, settings, folder, n_jobs=n_jobs, scheduler=scheduler, progress=progress),
                 functools.partial(consequences_table, settings, folder, n_jobs=1, scheduler=None, progress=False))

    def saved() -> pd.DataFrame:
        table, seconds, where = step.result()
        written = save_tables(cache, {"consequences": table}, {"digest": digest})["consequences"]
        made.record("consequences", digest, [cache / INDEX_FILE, written, written.with_suffix(".csv")])
        logger.info("consequences (%d comparisons, %d continuations per context%s): %.1f s",
                    table.loc[table["pair"] != POOLED, "pair"].nunique(), settings.continuations,
                    f", {where}" if where else "", seconds)
        return table

    return step, saved


def _figures(folder: ExperimentFolder, tables: dict[str, pd.DataFrame], record: RunRecord,
             progress: bool) -> dict[str, Path]:
    """Draw the report's figures from ``tables`` (the report itself waits for explain); their paths."""
    from simscore.app.report import document as report

    start = time.perf_counter()
    figures = report.draw_figures(folder.root, tables, record, progress=progress)
    logger.info("figures: %.1f s", time.perf_counter() - start)
    return figures


def _report(folder: ExperimentFolder, tables: dict[str, pd.DataFrame] | None, record: RunRecord,
            progress: bool, figures: dict[str, Path] | None) -> Path:
    """Write the report, from ``tables`` (with its ``figures``, drawn unless given) or (None) from the saved
    tables, whose figures are drawn again."""
    from simscore.app.report import document as report

    t0 = time.perf_counter()
    path = (report.write_report(folder.root, tables, record, figures=figures, progress=progress) if tables is not None
            else report.rebuild_report(folder.root, progress=progress))
    logger.info("%s: %.1f s -> %s", "report" if figures is not None else "figures and report",
                time.perf_counter() - t0, path)
    return path


def _files(directory: Path) -> list[Path]:
    """The finished files in ``directory`` (none of a write in progress)."""
    return sorted(p for p in directory.rglob("*") if p.is_file() and not is_temporary(p.name)) \
        if directory.is_dir() else []


def _preload_text_models(measures: Sequence[Measure]) -> None:
    """Load the text measures' models in a background thread.

    Training and responding run in worker processes while this process waits, so loading
    the models here (about 7 s: torch, transformers, MiniLM, USE) takes them off the
    critical path. The scoring gets the same measure instances and waits for a load in
    progress (each model loads under its lock); a failure here is left to the scoring,
    which raises it with its own message.
    """
    loaders = [load for m in measures if callable(load := getattr(m, "load", None))]

    def load_all() -> None:
        for load in loaders:
            try:
                load()
            except Exception:  # noqa: BLE001 - reported by the scoring, which loads again
                logger.debug("preloading a text model failed; the scoring will report it", exc_info=True)

    if loaders:
        threading.Thread(target=load_all, name="simscore-preload", daemon=True).start()


def _measures(config: ExperimentConfig, folder: ExperimentFolder) -> list[Measure]:
    """The experiment's measures; the text measures keep their embeddings in the folder's cache, where a later
    run (or stage, or the worker beside the scoring) finds them."""
    options = with_cache_dir(config.measures, config.measure_options, folder.embedding_cache)
    return resolve_measures(list(config.measures), options=options)


def _embed_held_out(settings: HeldOutSettings, measures: Sequence[Measure], folder: ExperimentFolder) -> None:
    """Embed the held set's texts here, by themselves as the held-out step embeds them, so that the worker that
    runs it beside the scoring reads them from the folder's cache (and needs no model)."""
    from simscore.app.experiment.flow_strata import held_out_responses, prepare_texts

    t0 = time.perf_counter()
    answers, random = held_out_responses(settings, folder)
    prepare_texts(measures, [*answers.values(), random])
    logger.debug("held out: texts embedded for the worker, %.1f s", time.perf_counter() - t0)


def _held_out_job(config: ExperimentConfig, root: Path) -> dict[str, pd.DataFrame]:
    """The held-out set's stratified tables, in the worker beside the scoring (its texts are in the cache)."""
    from simscore.app.experiment.flow_strata import flow_strata_tables

    folder = ExperimentFolder(root)
    settings = config.for_held_out
    assert settings is not None
    return flow_strata_tables(settings, _measures(config, folder), folder)


def _explain_job(root: Path, context_sets: tuple[str, ...], seed: int, n_jobs: int | None, progress: bool) -> Path:
    """``simscore explain`` of the scored context sets into ``explain/`` (the run records the piece itself)."""
    from simscore.app.inspect.explain import explain

    return explain(root, seed=seed, n_jobs=n_jobs, context_sets=context_sets, progress=progress, as_run=True)


def _explained(step: _Step) -> bool:
    """Wait for explain's step (a failure is logged, not raised); whether it was written."""
    try:
        path, seconds, where = step.result()
    except (SimscoreError, ValueError) as exc:
        logger.warning("explain skipped: %s", exc)
        return False
    logger.info("explain: %.1f s -> %s%s", seconds, path, f" ({where})" if where else "")
    return True


def _build_contexts(settings: CollectionSettings, held_out: HeldOutSettings | None, folder: ExperimentFolder,
                    progress: bool) -> tuple[str, ...]:
    """Collect C_col (and make C_gen, and the held-out set) where missing; returns the names of the context sets
    to score."""
    from contexts import ContextSet, collect_contexts, generate_grid
    from policies import run_dialogues
    from policies.gpsarsa.training import list_checkpoints, load_checkpoint

    logs: dict[str, list[Path]] = {reward: [] for reward in settings.rewards}
    for run in track(settings.runs, "collecting", unit="runs", enabled=progress):
        path = folder.log(run)
        if path.exists():
            check_log(folder, run, settings, list_checkpoints(folder.run_dir(run))[-1].dialogues)
        else:
            policy = load_checkpoint(folder.run_dir(run))
            policy.sampling_scale = settings.scale  # PyDial's evaluation dialogues sample (scale 1)
            run_dialogues(policy, settings.dialogues, seed=run.seed,
                          stream=collection_stream(settings.seed, run.reward),
                          log_path=path, settings=settings.simulation, log_source={
                              "name": run.name, "reward": run.reward, "purpose": "C_col",
                              "collect_seed": settings.seed, "sampling_scale": settings.scale})
        logs[run.reward].append(path)
    # each file on its own (each is made from the logs alone), so a run stopped between two of them resumes
    for reward, paths in logs.items():
        if folder.collected(reward).exists():
            check_collected(folder, folder.collected(reward), [r for r in settings.runs if r.reward == reward], settings)
        else:
            _decisions(collect_contexts(paths, name=f"C_col^{reward.upper()}")).to_jsonl(folder.collected(reward))
    if folder.collected().exists():
        check_collected(folder, folder.collected(), settings.runs, settings)
    else:
        everything = [p for paths in logs.values() for p in paths]
        _decisions(collect_contexts(everything, name="C_col")).to_jsonl(folder.collected())
    names = [COLLECTED]
    if settings.generated:
        if not folder.generated.exists():
            generate_grid().to_jsonl(folder.generated)
        names.append(GENERATED)
    if held_out is not None:
        from simscore.app.experiment.held_out import build_held_out

        build_held_out(held_out, folder, _decisions)
    sizes = {name: len(ContextSet.read_jsonl(folder.contexts(name), verify_hash=False)) for name in names}
    logger.info("context sets: %s", ", ".join(f"{name} {n}" for name, n in sizes.items()))
    return tuple(names)


def collection_stream(collect_seed: int, reward: str) -> tuple[int, int]:
    """The user stream of a run's C_col dialogues (with the run's training seed): its own users.

    The reward's name is part of it, so runs of two reward models with the same seed meet
    different users, as the paper's trials did.

    >>> collection_stream(2_000_003, "ts")
    (2000003, 3280375435)
    """
    return (collect_seed, zlib.crc32(reward.encode("utf-8")))


def _decisions(contexts: Any) -> Any:
    """Only the policy's decision points: turn 0 of a simulated dialogue is the fixed greeting."""
    return contexts.filter(lambda context: (context.metadata.get("turn_index") or 0) > 0, name=contexts.name)


def _record(config: ExperimentConfig, measures: Sequence[Measure], command: str | None) -> RunRecord:
    """What the tables are made with, saved beside them (``command``: None when started from Python)."""
    from simscore.analysis.tables_io import collect_versions

    return RunRecord(
        title=f"simscore experiment {config.name!r}",
        signatures={m.name: m.signature() for m in measures},
        config=config,
        versions=collect_versions(),
        seeds={"training": list(config.seeds), "evaluation": config.training.eval_seed,
               "collection": config.collect_seed, "random_policy": config.random_seed,
               "bootstrap": config.bootstrap_seed,
               **({"held_out": config.held_out.seed} if config.held_out is not None else {})},
        bootstrap=config.bootstrap,
        findings=config.findings,
        # the day the run was scored: written once, so `simscore report DIR` rebuilds the same text
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
        command=command,
        command_recorded=True,
    )


def _evaluation_records(config: ExperimentConfig, folder: ExperimentFolder) -> pd.DataFrame:
    from policies.gpsarsa.training import read_evaluation

    rows = [
        {"reward": run.reward, "run": run.name, "checkpoint": record.dialogues, "eval_dialogues": record.eval_dialogues,
         "success_rate": record.success_rate, "avg_iq": record.avg_iq, "avg_iq_sd": record.avg_iq_sd,
         "avg_length": record.avg_length, "avg_length_sd": record.avg_length_sd}
        for run in config.runs
        for record in read_evaluation(folder.run_dir(run))
    ]
    return pd.DataFrame(rows)
