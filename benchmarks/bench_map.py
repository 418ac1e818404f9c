"""Benchmark: the behaviour map of N policies against the N(N-1)/2 separate ``compare`` calls it replaces.

Workload (deterministic): ``--policies`` policies (default 20) x ``--contexts`` contexts (default
1,500), responses drawn from ``bench_measures.response_pool`` (about 600 realistic restaurant
responses): four families, each a base policy of its own, whose members keep their family's
response at a context with probability 0.8 and otherwise take a random one. Both sides score the
same measures (``--measures``, default the four action measures, BLEU-4, USE and BERTScore:
``tmr,dmr,cer,cmr,bleu4,use_cos,bertscore``; the embedding measures' models load before
anything is timed).

Side by side in one run, alternating ``--repeat`` times (the best of each reported): the map
(``behaviour_map`` with ``--resamples`` resamples: its matrix, intervals, chance levels,
clustering with support, 2-D map and neighbour tests), and the loop a user writes: ``compare(a,
b, measures)`` for every pair with ``Bootstrap(n_resamples)`` and fresh measure instances per
call (each call re-aligns and re-scores; the embedding measures' shared encoders keep their
models); and ``--cli-pairs`` runs of the command line, ``simscore compare A B`` as its own
process (reading the files, loading the models), scaled to every pair. Printed: the times, the
ratios (goal >= 10x) and the largest difference between the map's matrix and the pairs' means
(0: the same floats).

Run by hand:  python benchmarks/bench_map.py [--policies 20] [--contexts 1500] [--measures ...]
              [--resamples 1000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np
from bench_measures import response_pool  # the script's folder is on sys.path when it runs

from simscore import Responses, compare
from simscore.analysis.behaviour_map import behaviour_map
from simscore.measures import resolve_measures
from simscore.stats import Bootstrap


def policies(n: int, contexts: int, seed: int = 0) -> dict[str, Responses]:
    """``n`` policies in four families (see the module)."""
    rng = np.random.default_rng(seed)
    pool = response_pool(rng, size=600)
    bases = [rng.integers(len(pool), size=contexts) for _ in range(4)]
    out = {}
    for k in range(n):
        base = bases[k % 4]
        own = np.where(rng.random(contexts) < 0.8, base, rng.integers(len(pool), size=contexts))
        out[f"p{k:02d}"] = Responses({f"c{i}": pool[int(j)] for i, j in enumerate(own)}, policy=f"p{k:02d}")
    return out


def _cli_calls(sides: dict[str, Responses], names: list[str], count: int) -> float:
    """Seconds per pair of `simscore compare A B --measures ...` as separate processes (the mean of ``count``)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, side in sides.items():
            paths[name] = Path(folder) / f"{name}.jsonl"
            side.to_jsonl(paths[name])
        pairs = list(itertools.combinations(sides, 2))[:count]
        start = time.perf_counter()
        for a, b in pairs:
            subprocess.run([sys.executable, "-m", "simscore", "compare", str(paths[a]), str(paths[b]), "--measures",
                            ",".join(names), "--score-only"], check=True, capture_output=True)
        return (time.perf_counter() - start) / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", type=int, default=20)
    parser.add_argument("--contexts", type=int, default=1500)
    parser.add_argument("--measures", default="tmr,dmr,cer,cmr,bleu4,use_cos,bertscore")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cli-pairs", type=int, default=3,
                        help="also time this many `simscore compare` processes and scale to every pair (0: skip)")
    args = parser.parse_args()
    names = args.measures.split(",")
    sides = policies(args.policies, args.contexts)
    print(f"load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    # load the models and embed every distinct text before timing (the encoders are shared per process)
    ids = [f"{p}/{i}" for p, side in sides.items() for i in side.ids]
    every = [side[i] for side in sides.values() for i in side.ids]
    # every response against another one (a response against itself is 1 by rule: nothing embedded)
    compare(Responses(dict(zip(ids, every, strict=True))), Responses(dict(zip(ids, every[1:] + every[:1], strict=True))),
            names, bootstrap=Bootstrap(1))
    bootstrap = Bootstrap(args.resamples)
    times: dict[str, list[float]] = {"map": [], "compare": []}
    for _ in range(args.repeat):
        start = time.perf_counter()
        bmap = behaviour_map(sides, resolve_measures(names), bootstrap=bootstrap)
        times["map"].append(time.perf_counter() - start)
        start = time.perf_counter()
        means = {}
        for a, b in itertools.combinations(sides, 2):
            result = compare(sides[a], sides[b], resolve_measures(names), bootstrap=bootstrap)
            means[(a, b)] = {m: result.mean(m) for m in names}
        times["compare"].append(time.perf_counter() - start)
    cli = _cli_calls(sides, names, args.cli_pairs) if args.cli_pairs else None
    largest = max(abs(bmap.similarity[m].at[a, b] - value) for (a, b), row in means.items() for m, value in row.items())
    t_map, t_compare = min(times["map"]), min(times["compare"])
    pairs = len(means)
    print(f"{args.policies} policies x {args.contexts:,} contexts, {len(names)} measures ({args.measures}), "
          f"{args.resamples:,} resamples")
    print(f"  behaviour_map: {t_map:8.1f} s   ({pairs} pairs, clustering with support, map, neighbour tests)")
    print(f"  {pairs} x compare: {t_compare:8.1f} s   -> the map is {t_compare / t_map:.1f}x faster (goal >= 10x)")
    if cli is not None:
        print(f"  {pairs} x the command line `simscore compare A B` (one process each, reading its files, loading "
              f"its models; {args.cli_pairs} run, scaled): {cli * pairs:8.1f} s -> the map is "
              f"{cli * pairs / t_map:.1f}x faster")
    print(f"  largest |map - compare| over every pair and measure: {largest:.1e}")
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
