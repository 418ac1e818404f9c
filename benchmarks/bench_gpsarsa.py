"""Benchmark of GP-SARSA training runs (run by hand, single core).

Three parts:

1. **learning curves** — for each reward model (ts, iq) and 3 seeds, a training run of
   ``--curve-dialogues`` (default 3,000) dialogues with a checkpoint every ``--curve-every``
   (default 250), each evaluated greedily on ``--eval`` (default 500) dialogues of the fixed
   evaluation seed; prints success rate / average IQ / average length / dictionary size per
   checkpoint and run, and the mean over seeds. Reference points: the handcrafted and the
   random policy on the same evaluation dialogues.
2. **speed** — one ``--dialogues`` (default 40,000) dialogue run (reward ts, seed 0,
   checkpoint and 100-dialogue evaluation every ``--speed-every``): training dialogues per
   second per segment and overall, dictionary size over time, total wall time.
3. **responses** — :func:`simscore.policy.run_policy` of the speed run's last checkpoint on the
   1,296 C_gen contexts (first call and best of 3).

Targets (issue 5): task success >= 0.97 (R_TS) and >= 0.92 (R_IQ) after 2,000 dialogues
(mean of 3 seeds, 500 evaluation dialogues); 40,000 training dialogues in <= 10 minutes;
responses of one checkpoint on C_gen in <= 1 s. Issue 10: training at >= 100x PyDial's ~10 dialogues/s.

Usage: ``python benchmarks/bench_gpsarsa.py [--part all|curves|speed|responses]
[--dialogues 40000] [--curve-dialogues 3000] [--curve-every 250] [--eval 500] [--out DIR]``
"""

from __future__ import annotations

import os

# Single core: set before numpy is imported (GP-SARSA avoids BLAS anyway; this pins the rest).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from contexts import generate_grid  # noqa: E402
from policies import HandcraftedPolicy, RandomPolicy, run_dialogues  # noqa: E402
from policies.gpsarsa.training import EVAL_SEED, TrainingConfig, load_checkpoint, train  # noqa: E402
from simscore.policy import run_policy  # noqa: E402

SEEDS = (0, 1, 2)
#: GP-SARSA training speed of PyDial itself in Environment 1 (measured; see issue 10).
PYDIAL_DIALOGUES_PER_SECOND = 10.0


def _pin_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        except OSError:
            pass


def bench_curves(out: Path, dialogues: int, every: int, n_eval: int) -> dict:
    print(f"== Learning curves: {dialogues} training dialogues, greedy evaluation on {n_eval} "
          f"dialogues (eval seed {EVAL_SEED}) every {every}")
    for name, policy in (("handcrafted", HandcraftedPolicy()), ("random", RandomPolicy(seed=0))):
        r = run_dialogues(policy, n_eval, seed=EVAL_SEED)
        print(f"  reference {name:<11}: success {r.success_rate:.3f}  IQ {r.mean_iq:.2f}  length {r.mean_turns:.2f}")
    results: dict = {}
    for reward in ("ts", "iq"):
        runs = {}
        for seed in SEEDS:
            config = TrainingConfig(reward=reward, seed=seed, dialogues=dialogues, every=every, eval_dialogues=n_eval)
            started = time.perf_counter()
            result = train(config, out / f"curve-{reward}-{seed}", progress=False)
            runs[seed] = result.evaluation
            print(f"  {reward} seed {seed}: {time.perf_counter() - started:.1f} s wall "
                  f"({result.evaluation[-1].train_seconds:.1f} s training)")
        print(f"\n  reward {reward}: success / avg IQ / avg length / dictionary per checkpoint")
        header = "  dialogues " + "".join(f"| {'seed ' + str(s):<22}" for s in SEEDS) + "| mean success  IQ    length"
        print(header)
        rows = []
        for k, record in enumerate(runs[SEEDS[0]]):
            per_seed = [runs[s][k] for s in SEEDS]
            cells = "".join(
                f"| {r.success_rate:.3f} {r.avg_iq:.2f} {r.avg_length:5.2f} {r.dictionary_size:4d} " for r in per_seed
            )
            mean_success = float(np.mean([r.success_rate for r in per_seed]))
            mean_iq = float(np.mean([r.avg_iq for r in per_seed]))
            mean_len = float(np.mean([r.avg_length for r in per_seed]))
            print(f"  {record.dialogues:>9} {cells}| {mean_success:.3f}        {mean_iq:.2f}  {mean_len:.2f}")
            rows.append({
                "dialogues": record.dialogues,
                "success": [r.success_rate for r in per_seed],
                "iq": [r.avg_iq for r in per_seed],
                "length": [r.avg_length for r in per_seed],
                "dictionary": [r.dictionary_size for r in per_seed],
                "mean_success": mean_success,
                "mean_iq": mean_iq,
                "mean_length": mean_len,
            })
        results[reward] = rows
        print()
    for reward, target in (("ts", 0.97), ("iq", 0.92)):
        at = [row for row in results[reward] if row["dialogues"] == 2000]
        if at:
            value = at[0]["mean_success"]
            verdict = "met" if value >= target else "NOT met"
            print(f"  target {reward}: mean success after 2,000 dialogues {value:.3f} (>= {target}: {verdict})")
    return results


def bench_speed(out: Path, dialogues: int, every: int) -> tuple[dict, Path]:
    print(f"\n== Speed: one run of {dialogues} training dialogues (reward ts, seed 0), single core, "
          f"checkpoint + 100-dialogue evaluation every {every}")
    config = TrainingConfig(reward="ts", seed=0, dialogues=dialogues, every=every, eval_dialogues=100)
    run_dir = out / "speed-ts-0"
    started = time.perf_counter()
    result = train(config, run_dir, progress=False)
    wall = time.perf_counter() - started
    print(f"  {'dialogues':>9} {'dict':>5} {'segment dlg/s':>13} {'overall dlg/s':>13} {'train s':>8} {'success':>7}")
    previous_d, previous_t = 0, 0.0
    rows = []
    for r in result.evaluation:
        segment = (r.dialogues - previous_d) / max(r.train_seconds - previous_t, 1e-9)
        overall = r.dialogues / r.train_seconds
        rows.append({"dialogues": r.dialogues, "dictionary": r.dictionary_size, "segment_rate": segment,
                     "overall_rate": overall, "train_seconds": r.train_seconds, "success": r.success_rate})
        shown = r.dialogues in (every, 2 * every) or r.dialogues % max(every, dialogues // 10) == 0
        if shown or r is result.evaluation[-1]:
            print(f"  {r.dialogues:>9} {r.dictionary_size:>5} {segment:>13.0f} {overall:>13.0f} "
                  f"{r.train_seconds:>8.1f} {r.success_rate:>7.3f}")
        previous_d, previous_t = r.dialogues, r.train_seconds
    last = result.evaluation[-1]
    eval_total = sum(r.eval_seconds for r in result.evaluation)
    print(f"  training: {last.train_seconds:.1f} s for {last.dialogues} dialogues = "
          f"{last.dialogues / last.train_seconds:.0f} dialogues/s; evaluations {eval_total:.1f} s; "
          f"wall (incl. checkpoints) {wall:.1f} s; final dictionary {last.dictionary_size}")
    goal = 600.0 * dialogues / 40000
    print(f"  goal: {dialogues} dialogues in <= {goal:.0f} s of wall time: {'met' if wall <= goal else 'NOT met'}")
    ratio = last.dialogues / last.train_seconds / PYDIAL_DIALOGUES_PER_SECOND
    print(f"  {ratio:.0f}x PyDial's about {PYDIAL_DIALOGUES_PER_SECOND:.0f} training dialogues/s "
          f"(goal >= 100x: {'met' if ratio >= 100 else 'NOT met'})")
    return {"rows": rows, "wall_seconds": wall, "train_seconds": last.train_seconds,
            "eval_seconds": eval_total, "dictionary": last.dictionary_size}, run_dir


def bench_responses(run_dir: Path) -> dict:
    print("\n== Responses of one checkpoint on the 1,296 C_gen contexts")
    contexts = generate_grid()
    started = time.perf_counter()
    policy = load_checkpoint(run_dir)
    load_seconds = time.perf_counter() - started
    timings = []
    for _ in range(4):
        started = time.perf_counter()
        responses = run_policy(policy, contexts, progress=False)
        timings.append(time.perf_counter() - started)
    intents: dict[str, int] = {}
    for context_id in contexts.ids:
        intent = responses[context_id].action.intents[0]
        intents[intent] = intents.get(intent, 0) + 1
    print(f"  checkpoint {policy.dialogues_trained} dialogues, dictionary {policy.learner.dictionary_size}; "
          f"load {load_seconds * 1000:.0f} ms")
    print(f"  run_policy: first call {timings[0]:.3f} s, best of the next 3 {min(timings[1:]):.3f} s "
          f"(goal <= 1 s: {'met' if timings[0] <= 1.0 else 'NOT met'}); intents {intents}")
    return {"first_seconds": timings[0], "best_seconds": min(timings[1:]), "load_seconds": load_seconds,
            "intents": intents}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "curves", "speed", "responses"), default="all")
    parser.add_argument("--dialogues", type=int, default=40000, help="length of the speed run")
    parser.add_argument("--speed-every", type=int, default=1000)
    parser.add_argument("--curve-dialogues", type=int, default=3000)
    parser.add_argument("--curve-every", type=int, default=250)
    parser.add_argument("--eval", type=int, default=500, help="evaluation dialogues of the learning curves")
    parser.add_argument("--out", help="keep the run directories here (default: a temporary directory)")
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    args = parser.parse_args()
    _pin_core()

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        report: dict = {}
        if args.part in ("all", "curves"):
            report["curves"] = bench_curves(out, args.curve_dialogues, args.curve_every, args.eval)
        run_dir = out / "speed-ts-0"
        if args.part in ("all", "speed"):
            report["speed"], run_dir = bench_speed(out, args.dialogues, args.speed_every)
        if args.part in ("all", "responses"):
            if not (run_dir / "run.json").exists():
                report["speed"], run_dir = bench_speed(out, min(args.dialogues, 2000), 1000)
            report["responses"] = bench_responses(run_dir)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
