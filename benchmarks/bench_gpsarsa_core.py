"""Benchmark of the GP-SARSA learner core: action selections/s and learned episodes/s.

Synthetic 5-turn episodes with belief-like features of dimension 305 (non-negative, in
[0, 1]) in general position, so almost every visited point joins the dictionary and it grows
steadily. Rates are reported as the dictionary passes each target size.

Run: ``python benchmarks/bench_gpsarsa_core.py [--targets 100 300 500] [--seed 0]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from policies.gpsarsa.learner import GPSarsa
from policies.gpsarsa.values import GPSarsaConfig

FEATURE_DIM = 305
N_ACTIONS = 16
TURNS = 5


def _belief(rng: np.random.Generator, n: int) -> np.ndarray:
    # Distribution-shaped blocks plus binary flags, like the restaurant-domain features.
    parts = [rng.dirichlet(np.full(k, 0.3), size=n) for k in (7, 6, 6, 4, 92, 111)]
    pairs = rng.random((n, 9))
    flags = (rng.random((n, FEATURE_DIM - 226 - 18)) < 0.2).astype(float)
    return np.hstack(parts + [pairs, 1.0 - pairs, flags])


def _episode(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    features = _belief(rng, TURNS)
    actions = rng.integers(0, N_ACTIONS, TURNS)
    rewards = -np.ones(TURNS)
    rewards[-1] += 20.0 * (rng.random() < 0.8)
    return features, actions, rewards


def _selection_rate(learner: GPSarsa, rng: np.random.Generator, scale: float, n: int) -> float:
    beliefs = _belief(rng, 64)
    mask = np.ones(N_ACTIONS, dtype=bool)
    mask[[14, 15]] = False
    start = time.perf_counter()
    for i in range(n):
        learner.select_action(beliefs[i % 64], mask, rng=rng, scale=scale)
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, nargs="+", default=[100, 300, 500])
    parser.add_argument("--selections", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    learner = GPSarsa(GPSarsaConfig(feature_dim=FEATURE_DIM, n_actions=N_ACTIONS))
    print(f"feature_dim={FEATURE_DIM} n_actions={N_ACTIONS} turns/episode={TURNS}")
    print(f"{'dict':>6} {'episodes':>8} {'grow ep/s':>10} {'learn ep/s':>11} "
          f"{'select/s (scale 3)':>19} {'select/s (greedy)':>18}")
    recent: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for target in sorted(args.targets):
        episodes = 0
        learn_time = 0.0
        while learner.dictionary_size < target:
            episode = _episode(rng)
            start = time.perf_counter()
            learner.learn_episode(*episode)
            learn_time += time.perf_counter() - start
            episodes += 1
            recent = (recent + [episode])[-10:]
        grow_rate = episodes / learn_time if episodes else float("nan")
        # learning rate at this size: replay the last 10 episodes 5 times (their beliefs are
        # already in the dictionary, so it does not grow while timing)
        size = learner.dictionary_size
        start = time.perf_counter()
        for _ in range(5):
            for features, actions, rewards in recent:
                learner.learn_episode(features, actions, rewards)
        learn_rate = 5 * len(recent) / (time.perf_counter() - start)
        sampled = _selection_rate(learner, rng, 3.0, args.selections)
        greedy = _selection_rate(learner, rng, 0.0, args.selections)
        print(f"{size:>6} {learner.n_episodes:>8} {grow_rate:>10.0f} {learn_rate:>11.0f} "
              f"{sampled:>19.0f} {greedy:>18.0f}")


if __name__ == "__main__":
    main()
