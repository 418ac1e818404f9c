"""Benchmark of the simulated restaurant-search environment (run by hand, single core).

Measures and prints:

* the handcrafted policy over 1,000 seeded dialogues: task success, average length, IQ,
  rewards, and dialogues per second (best of three runs; goal >= 500/s; PyDial's simulator
  with its handcrafted policy runs at about 15/s on a machine of this kind);
* the random policy over unmasked actions (chance level) on the same dialogues;
* robustness: 10,000 dialogues with a policy choosing uniformly among all 16 actions
  (masks ignored), logged, the log read back and collected as contexts;
* determinism: the same seed twice gives byte-identical logs;
* the cost of the belief features and the action mask per call.

Usage: ``python benchmarks/bench_sim.py [--dialogues 1000] [--robust 10000]``
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import tempfile
import time

from contexts.collect import collect_contexts
from contexts.dialogue_log import read_dialogue_log
from contexts.domain import default_domain
from policies import HandcraftedPolicy, RandomPolicy, run_dialogues
from policies.sim import SummaryActions
from policies.sim.features import BeliefFeatures


def _line(label: str, value: str) -> None:
    print(f"  {label:<34} {value}")


def bench_policies(n: int) -> None:
    print(f"Handcrafted policy, {n} dialogues (seed 0)")
    run_dialogues(HandcraftedPolicy(), 50, seed=99)  # warm caches
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        result = run_dialogues(HandcraftedPolicy(), n, seed=0)
        timings.append(time.perf_counter() - start)
    best = min(timings)
    _line("task success rate", f"{result.success_rate:.3f}")
    _line("average turns (PyDial's count: decisions, greeting not counted)", f"{result.mean_turns:.2f}")
    _line("turns min / max", f"{result.turns.min()} / {result.turns.max()}")
    _line("average IQ", f"{result.mean_iq:.3f}  (levels {dict(sorted(collections.Counter(result.iq.tolist()).items()))})")
    _line("average R_TS / R_IQ", f"{result.mean_reward_ts:.2f} / {result.mean_reward_iq:.2f}")
    _line("dialogues per second", f"{n / best:,.0f}  (best of 3; {1000 * best / n:.3f} ms per dialogue)")
    _line("goal / PyDial reference", ">= 500 / about 15 dialogues per second")

    print(f"\nRandom policy over unmasked actions, {n} dialogues (seed 0)")
    start = time.perf_counter()
    rand = run_dialogues(RandomPolicy(seed=0), n, seed=0)
    elapsed = time.perf_counter() - start
    _line("task success rate", f"{rand.success_rate:.3f}")
    _line("average turns", f"{rand.mean_turns:.2f}")
    _line("average IQ", f"{rand.mean_iq:.3f}")
    _line("average R_TS / R_IQ", f"{rand.mean_reward_ts:.2f} / {rand.mean_reward_iq:.2f}")
    _line("ended by", str(dict(collections.Counter(rand.ended_by))))
    _line("dialogues per second", f"{n / elapsed:,.0f}")


def bench_robustness(n: int, directory: str) -> None:
    print(f"\nRobustness: {n} dialogues, uniformly random among all 16 actions (masks ignored)")
    path = os.path.join(directory, "robust.jsonl")
    policy = RandomPolicy(seed=0, respect_mask=False)
    start = time.perf_counter()
    result = run_dialogues(policy, n, seed=2020, log_path=path, log_source={"name": "robust"})
    elapsed = time.perf_counter() - start
    _line("completed without error", f"{len(result)} dialogues in {elapsed:.1f} s (with logging)")
    _line("turns min / mean / max", f"{result.turns.min()} / {result.mean_turns:.2f} / {result.turns.max()}")
    _line("all ended within 25 turns", str(bool((result.turns <= 25).all())))
    _line("ended by", str(dict(collections.Counter(result.ended_by))))
    _line("task success rate", f"{result.success_rate:.3f}")
    domain = default_domain()
    start = time.perf_counter()
    header, dialogues = read_dialogue_log(path, ontology=domain.ontology)
    contexts = collect_contexts([path], domain=domain)
    elapsed = time.perf_counter() - start
    turns = sum(len(d.turns) for d in dialogues)
    # the log holds the greeting turn too, which PyDial's turn count (result.turns) leaves out
    valid = len(dialogues) == n and turns == int(result.turns.sum()) + n == len(contexts)
    counts = f"{len(dialogues)} dialogues, {turns} turns, {len(contexts)} contexts"
    _line("log valid (read + collected)", f"{valid}: {counts} ({elapsed:.1f} s)")
    _line("log size", f"{os.path.getsize(path) / 1e6:.1f} MB")


def bench_determinism(directory: str) -> None:
    print("\nDeterminism: the same seed twice")
    digests = []
    summaries = []
    for k in range(2):
        path = os.path.join(directory, f"det{k}.jsonl")
        result = run_dialogues(RandomPolicy(seed=7), 500, seed=31, log_path=path, log_source={"name": "det"})
        with open(path, "rb") as handle:
            digests.append(hashlib.sha256(handle.read()).hexdigest())
        summaries.append((result.success.tolist(), result.turns.tolist(), result.reward_ts.tolist(), result.reward_iq.tolist()))
    _line("identical logs (sha256)", f"{digests[0] == digests[1]} ({digests[0][:16]}...)")
    _line("identical success/turns/rewards", str(summaries[0] == summaries[1]))


def bench_components() -> None:
    print("\nPer-call cost (GP-SARSA calls these every turn)")
    domain = default_domain()
    result = run_dialogues(HandcraftedPolicy(), 200, seed=5, keep_dialogues=True)
    beliefs = [t.belief for d in result.dialogues for t in d.turns]
    space = SummaryActions(domain)
    features_of = BeliefFeatures(domain, space=space)  # what a GP-SARSA policy owns
    start = time.perf_counter()
    for belief in beliefs:
        features_of(belief)
    features = (time.perf_counter() - start) / len(beliefs)
    start = time.perf_counter()
    for belief in beliefs:
        space.mask(belief)
    masks = (time.perf_counter() - start) / len(beliefs)
    _line("belief_features", f"{features * 1e6:.1f} us per call ({len(beliefs)} beliefs)")
    _line("action mask", f"{masks * 1e6:.1f} us per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialogues", type=int, default=1000, help="dialogues per policy (default 1000)")
    parser.add_argument("--robust", type=int, default=10_000, help="robustness dialogues (default 10000)")
    args = parser.parse_args()
    bench_policies(args.dialogues)
    with tempfile.TemporaryDirectory() as directory:
        bench_robustness(args.robust, directory)
        bench_determinism(directory)
    bench_components()


if __name__ == "__main__":
    main()
