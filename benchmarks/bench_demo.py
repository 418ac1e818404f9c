"""Profile of the demo (``simscore demo``) or of a given experiment, step by step, each step beside its limit.

Runs the experiment into a temporary folder and reads each step's seconds from the run's own log
(``run.log``: the runner writes one line per step), then measures, in the same process and on the
same work, what bounds each step:

* training: the simulator alone, the handcrafted policy over as many dialogues as the runs played
  (training plus every checkpoint's evaluation), on one core (``bench_sim``'s measurement), divided
  by the workers the runs were spread over;
* embedding: the bare MiniLM forward pass over the same distinct texts (``bench_text.bare_model``:
  fast tokenizer, length-sorted batches, no cache) -- one of the three encoders the step runs, so
  the ratio is an upper bound of how far the step is from the sum of the bare models;
* figures and report: matplotlib's ``savefig`` of an empty figure of each PNG's size and dpi.

Steps without a measured limit print "-". The table: step, seconds, share of the total, limit
(what, seconds), ratio (step / limit). With more than one job, the held-out strata, the reference
policies, the consequences and explain run in a worker beside the scoring and the figures
(:mod:`simscore.app.runner`): their seconds are their own, spent beside other steps, so the
shares then add up to more than the whole.

Usage::

    python benchmarks/bench_demo.py [--config examples/paper.toml] [--dialogues 1000]
        [--measures action] [--jobs 2] [--json profile.json]

Measured (the demo, 2 cores shared with two other jobs, 2026-12-02): see
``docs/guide/development.md`` ("Benchmarks").
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_text import bare_model  # the script's folder is on sys.path when it runs

from simscore.app.experiment.analyses import read_responses
from simscore.app.experiment.config import DEMO_CONFIG, ExperimentConfig, load_config
from simscore.app.experiment.folder import COLLECTED, GENERATED, ExperimentFolder
from simscore.app.runner import run_experiment

# the runner's per-step lines in run.log: step name, pattern of its seconds
STEPS: tuple[tuple[str, str], ...] = (
    ("training", r"training: .*?([\d.]+) s$"),
    ("contexts", r"contexts: ([\d.]+) s$"),
    ("responding", r"responses: .*?([\d.]+) s$"),
    ("embedding texts", r"text measures: .*?([\d.]+) s$"),
    ("behaviour maps", r"behaviour maps \(.*?([\d.]+) s$"),
    ("held-out flow strata", r"flow strata on the held-out set.*?([\d.]+) s$"),
    ("scoring (incl. embedding, maps)", r"scoring \(all comparisons.*?([\d.]+) s$"),
    ("final/handcrafted/random policies", r"final, handcrafted and random policies.*?([\d.]+) s$"),
    ("consequences", r"consequences \(.*?([\d.]+) s$"),
    ("explain", r"explain: ([\d.]+) s"),
    ("figures", r"^figures: ([\d.]+) s$"),
    ("report", r"^report: ([\d.]+) s"),
    ("figures and report", r"figures and report: ([\d.]+) s"),  # a run that draws them again from saved tables
    ("total", r"total: ([\d.]+) s$"),
)


def step_seconds(log: str) -> dict[str, float]:
    """Each step's seconds from the messages of ``run.log`` (the last line of each kind wins)."""
    messages = [line.split("] ", 1)[-1].strip() for line in log.splitlines()]
    found: dict[str, float] = {}
    for name, pattern in STEPS:
        for message in messages:
            match = re.search(pattern, message)
            if match:
                found[name] = float(match.group(1))
    return found


def simulator_limit(dialogues: int) -> float:
    """Seconds the simulator takes for ``dialogues`` handcrafted dialogues on one core (rate of 1,000)."""
    from policies import HandcraftedPolicy, run_dialogues

    run_dialogues(HandcraftedPolicy(), 50, seed=99)  # warm caches
    n = min(dialogues, 1000)
    started = time.perf_counter()
    run_dialogues(HandcraftedPolicy(), n, seed=0)
    return (time.perf_counter() - started) * dialogues / n


def played_dialogues(folder: ExperimentFolder, config: ExperimentConfig) -> int:
    """Training dialogues plus evaluation dialogues over every run's checkpoints."""
    from policies.gpsarsa.training import list_checkpoints

    total = 0
    for run in config.runs:
        checkpoints = list_checkpoints(folder.run_dir(run))
        total += config.training.dialogues + config.training.eval_dialogues * len(checkpoints)
    return total


def distinct_texts(folder: ExperimentFolder, config: ExperimentConfig) -> list[str]:
    """The texts the scoring embeds, as it collects them (every response file of the scored sets)."""
    sets = (COLLECTED, GENERATED) if config.generated else (COLLECTED,)
    responses = read_responses(config.for_scoring, folder, sets)
    return sorted({t for s in responses.sets for r in s.all_responses() for t in r.texts() if t is not None})


def figures_limit(figures: Path) -> float:
    """Seconds of ``savefig`` of an empty figure of each PNG's pixel size, at the figures' dpi."""
    import matplotlib

    matplotlib.use("Agg")
    import io

    import matplotlib.image
    import matplotlib.pyplot as plt

    dpi = 120  # simscore.plots._canvas: savefig.dpi
    total = 0.0
    for png in sorted(figures.glob("*.png")):
        height, width = matplotlib.image.imread(png).shape[:2]
        started = time.perf_counter()
        figure = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
        figure.savefig(io.BytesIO(), format="png", dpi=dpi)
        plt.close(figure)
        total += time.perf_counter() - started
    return total


def profile(config: ExperimentConfig, out: Path, n_jobs: int | None) -> list[dict[str, Any]]:
    """Run ``config`` into ``out`` and return one row per step: seconds, share, limit, ratio."""
    run_experiment(config, out, n_jobs=n_jobs, progress=False, command="bench_demo")
    folder = ExperimentFolder(out)
    seconds = step_seconds(folder.run_log.read_text(encoding="utf-8"))
    workers = max(1, min(n_jobs or os.cpu_count() or 1, len(config.runs)))  # as simscore.parallel
    limits: dict[str, tuple[str, float]] = {}
    played = played_dialogues(folder, config)
    limits["training"] = (f"simulator alone, {played:,} dialogues / {workers} workers", simulator_limit(played) / workers)
    if "embedding texts" in seconds:
        texts = distinct_texts(folder, config)
        limits["embedding texts"] = (f"bare MiniLM forward, {len(texts):,} texts", bare_model(texts, "cpu")[0])
    drawn = "figures" if "figures" in seconds else "figures and report"
    if drawn in seconds:
        n_figures = len(list(folder.figures.glob("*.png")))
        limits[drawn] = (f"savefig of {n_figures} empty figures", figures_limit(folder.figures))
    total = seconds.get("total", sum(seconds.values()))
    rows = []
    for name, _ in STEPS:
        if name not in seconds:
            continue
        what, limit = limits.get(name, ("-", None))
        rows.append({"step": name, "seconds": seconds[name], "share": seconds[name] / total if total else 0.0,
                     "limit": what, "limit_seconds": limit,
                     "ratio": seconds[name] / limit if limit else None})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The profile as aligned text."""
    lines = [f"{'step':<36} {'s':>7} {'share':>6}  {'limit':<48} {'limit s':>7} {'ratio':>6}"]
    for r in rows:
        limit_s = "-" if r["limit_seconds"] is None else f"{r['limit_seconds']:.1f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.1f}x"
        lines.append(f"{r['step']:<36} {r['seconds']:>7.1f} {r['share']:>6.0%}  {r['limit']:<48} {limit_s:>7} {ratio:>6}")
    return "\n".join(lines)


def shrunk(config: ExperimentConfig, args: argparse.Namespace) -> ExperimentConfig:
    """``config`` with the command line's smaller settings."""
    changes: dict[str, Any] = {}
    if args.dialogues is not None:
        every = max(1, args.dialogues // 10)
        changes["training"] = dataclasses.replace(config.training, dialogues=every * 10, every=every)
    if args.measures is not None:
        changes["measures"] = tuple(args.measures.split(","))
    if args.no_generated:
        changes["generated"] = False
    if args.eval_dialogues is not None:
        training = changes.get("training", config.training)
        changes["training"] = dataclasses.replace(training, eval_dialogues=args.eval_dialogues)
    if args.resamples is not None:
        changes["n_resamples"] = args.resamples
    return dataclasses.replace(config, **changes)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="an experiment file (default: the demo's settings)")
    parser.add_argument("--dialogues", type=int, help="training dialogues per run (checkpoints every tenth)")
    parser.add_argument("--measures", help="comma-separated measures or groups (default: the config's)")
    parser.add_argument("--no-generated", action="store_true", help="score on C_col only")
    parser.add_argument("--eval-dialogues", type=int, help="evaluation dialogues per checkpoint")
    parser.add_argument("--resamples", type=int, help="bootstrap resamples")
    parser.add_argument("--jobs", type=int, default=None, help="workers (default: the runner's)")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    config = shrunk(load_config(args.config) if args.config else DEMO_CONFIG, args)
    with tempfile.TemporaryDirectory() as tmp:
        rows = profile(config, Path(tmp) / "out", args.jobs)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
