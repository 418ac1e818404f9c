"""Cost of one BehaviourConvergenceCallback check on C_gen (1,296 contexts); run by hand.

A check answers the context set with the current model (one batched ``predict``), compares
the answers with the previous check's and with the chance level (a seeded random policy), and
logs the means with bootstrap intervals. Between checks the model's weights are perturbed so
that, as in training, part of the answers change (new responses are built, the rest come from
the adapter's cache). Targets (issue 13): ≤ 0.1 s with the four action measures, ≤ 1 s warm
with all eight.

    python benchmarks/bench_callback.py [--algorithm ppo|maskable_ppo] [--checks 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.logger import configure

import simscore.integrations.gym  # noqa: F401  (registers the environment)
from contexts import generate_grid
from simscore.integrations.sb3 import BehaviourConvergenceCallback


def _perturb(model: PPO, rng: np.random.Generator, scale: float) -> None:
    """Nudge the action head so a few percent of the greedy answers change (as training does)."""
    with torch.no_grad():
        for parameter in model.policy.action_net.parameters():
            parameter.add_(torch.as_tensor(rng.normal(0.0, scale, parameter.shape), dtype=parameter.dtype))


def _callback(model: PPO, contexts, measures) -> BehaviourConvergenceCallback:
    callback = BehaviourConvergenceCallback(contexts, measures, check_freq=1, stop=False, dump_logs=False)
    callback.init_callback(model)
    return callback


CPU: list[float] = []  # process CPU seconds of every timed check (the machine may be shared)


def _time_checks(model, callback, n: int, rng: np.random.Generator, scale: float) -> list[float]:
    times = []
    for _ in range(n):
        _perturb(model, rng, scale)
        model.num_timesteps += 1024
        callback.num_timesteps = model.num_timesteps
        start, cpu = time.perf_counter(), time.process_time()
        callback.check()
        times.append(time.perf_counter() - start)
        CPU.append(time.process_time() - cpu)
    return times


def _cpu(n: int) -> str:
    return f"CPU median {statistics.median(CPU[-n:]):.4f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algorithm", choices=("ppo", "maskable_ppo"), default="ppo")
    parser.add_argument("--checks", type=int, default=10)
    parser.add_argument("--scale", type=float, default=0.002,
                        help="weight noise between checks (0.002: a few to 30 percent of the answers change)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    algorithm = PPO if args.algorithm == "ppo" else MaskablePPO
    model = algorithm("MlpPolicy", gymnasium.make("simscore/RestaurantSearch-v0"), seed=0)
    model.set_logger(configure(None, []))
    contexts = generate_grid()
    rng = np.random.default_rng(0)
    print(f"{args.algorithm}, C_gen: {len(contexts)} contexts, torch threads {torch.get_num_threads()}")

    start = time.perf_counter()
    callback = _callback(model, contexts, "action")
    setup = time.perf_counter() - start
    first = _time_checks(model, callback, 1, rng, args.scale)[0]
    steady = _time_checks(model, callback, args.checks, rng, 0.0)
    warm = _time_checks(model, callback, args.checks, rng, args.scale)
    changed = callback.history()["tmr"].iloc[-args.checks:]
    print(f"action measures: set-up (chance responses) {setup:.3f} s, first check {first:.3f} s (features, masks)")
    print(f"  warm check, behaviour unchanged: median {statistics.median(steady):.4f} s, max {max(steady):.4f} s")
    print(f"  warm check, behaviour changing:  median {statistics.median(warm):.4f} s, max {max(warm):.4f} s, "
          f"{_cpu(len(warm))} (TMR vs previous {changed.min():.3f}-{changed.max():.3f}) over {len(warm)} checks each")

    callback = _callback(model, contexts, "all")
    cold = _time_checks(model, callback, 2, rng, args.scale)  # the first compare loads the text models
    steady = _time_checks(model, callback, args.checks, rng, 0.0)
    warm = _time_checks(model, callback, args.checks, rng, args.scale)
    print(f"all eight measures: first check {cold[0]:.2f} s, first comparing check {cold[1]:.2f} s "
          "(loads the USE and BERTScore models, embeds the chance level's texts)")
    changed = callback.history()["tmr"].iloc[-args.checks:]
    print(f"  warm check, behaviour unchanged: median {statistics.median(steady):.3f} s, max {max(steady):.3f} s")
    print(f"  warm check, behaviour changing:  median {statistics.median(warm):.3f} s, max {max(warm):.3f} s, "
          f"{_cpu(len(warm))} (TMR vs previous {changed.min():.3f}-{changed.max():.3f})")


if __name__ == "__main__":
    main()
