"""Time per replayed continuation, and the flip table of handcrafted against random; run by hand.

C_col of 10 simulated dialogues per policy (handcrafted, random seed 1); of it 50 contexts:
every context of the first five handcrafted dialogues and the first five turns of the first five
random ones (10 dialogues). Each is replayed with K continuations in three arms (A handcrafted,
B random seed 7; :func:`policies.sim.replay.replay`), twice, to time it and to check that the
numbers repeat bit for bit; then the flips of B against A (R_TS, dialogues resampled) are printed.
The numbers in ``docs/replay.rst`` come from here.

    python benchmarks/bench_replay.py [--continuations 4] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from policies import HandcraftedPolicy, RandomPolicy
from policies.sim import replay, simulated_contexts
from simscore.stats import Bootstrap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--continuations", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    handcrafted = HandcraftedPolicy()
    sources = {"handcrafted": handcrafted, "random": RandomPolicy(seed=1)}
    collected = simulated_contexts(sources, 10, seed=0)

    def kept(context) -> bool:
        meta = context.metadata
        first_five = int(meta["dialogue_id"].rsplit("-", 1)[1]) < 5
        return first_five and (meta["source_name"] == "handcrafted" or meta["turn_index"] <= 5)

    contexts = collected.filter(kept, name="C_col-50")
    runs = []
    for _ in range(2):
        start = time.perf_counter()
        runs.append(replay(contexts, handcrafted, RandomPolicy(seed=7), sources=sources,
                           continuations=args.continuations, seed=0))
        seconds = time.perf_counter() - start
        n = 3 * len(runs[-1])
        print(f"{len(contexts)} contexts, K={args.continuations}: {n} continuations in {seconds:.2f} s, "
              f"{1000 * seconds / n:.2f} ms per replayed continuation")
    first, again = runs
    same = all(np.array_equal(getattr(getattr(first, arm), name), getattr(getattr(again, arm), name))
               for arm in "abc" for name in ("success", "turns", "iq", "reward_ts", "reward_iq"))
    print(f"identical numbers: {same}; actions differ in {int(first.differ.sum())} of {len(first)} pairs")
    flips = first.flips("ts", bootstrap=Bootstrap(n_resamples=args.resamples, seed=0))
    for name in ("total", "action", "after"):
        print(f"== {name}\n{getattr(flips, name)}")


if __name__ == "__main__":
    main()
