"""Peak memory of ``simscore compare --out x.json`` against the scoring's own, on millions of contexts.

Writes two responses files of N contexts (default 2,000,000; actions drawn from 20 acts, so
they repeat as real policies' do), then runs, each in a fresh process, and reports the peak
resident memory (``ru_maxrss``):

* ``score``: ``simscore compare A B --measures action`` (reading, scoring the four action
  measures, the summary);
* ``json``:  the same with ``--out x.json`` (everything, per-context records included);
* ``csv``:   the same with ``--out x.csv``.

The goal (issue 21): ``json`` within 1.5 x of ``score``. ``--code PATH`` runs another checkout
(e.g. ``--code /work/main`` for the numbers before streaming). Not a timed test: the seconds
are printed for orientation only.

    python benchmarks/bench_compare_memory.py [--contexts 2000000] [--work DIR] [--code PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ACTS = [
    "hello()", "bye()", "request(food)", "request(area)", "request(pricerange)", "confirm(food=thai)",
    "confirm(area=centre)", "inform(name=\\\"la mimosa\\\",food=thai)", "inform(name=\\\"pizza hut\\\",area=south)",
    "reqmore()", "repeat()", "select(area=north,area=south)", "inform(name=none,food=korean)",
    "confirm(pricerange=cheap)", "request(name)", "inform(name=\\\"the gandhi\\\",pricerange=moderate)",
    "offer(name=\\\"zizzi\\\")", "inform(phone=\\\"01223 123456\\\")", "deny(food=thai)", "restart()",
]

MEASURE = """
import resource, sys, time
from simscore.app.cli import main
start = time.perf_counter()
code = main(sys.argv[1:])
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
import simscore
print(f"PEAK {peak_kib} {time.perf_counter() - start:.1f} {simscore.__file__}", file=sys.stderr)
raise SystemExit(code)
"""


def write_responses(path: Path, n: int, policy: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(ACTS), size=n)
    header = f'{{"format":"simscore-responses","version":1,"policy":"{policy}","provenance":{{}}}}\n'
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(header)
        block = 100_000
        for start in range(0, n, block):
            handle.write("".join(
                f'{{"context_id":"c{i:08d}","action":"{ACTS[picks[i]]}","text":null}}\n'
                for i in range(start, min(n, start + block))
            ))


def run(code: Path, argv: list[str], work: Path) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(code))
    # run in the work folder: with -c the current folder comes first on sys.path, before PYTHONPATH
    done = subprocess.run([sys.executable, "-c", MEASURE, *argv], env=env, capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        raise SystemExit(f"simscore {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    line = next(line for line in done.stderr.splitlines() if line.startswith("PEAK "))
    _, kib, seconds, where = line.split()
    if not where.startswith(str(code)):
        raise SystemExit(f"ran {where}, not the code in {code}")
    return int(kib) / 2**20, float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=2_000_000)
    parser.add_argument("--measures", default="action", help="as simscore compare's (default: the four action measures)")
    parser.add_argument("--work", type=Path, help="folder for the responses files (kept and reused)")
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1], help="checkout to run")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="simscore-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    a, b = work / f"a-{args.contexts}.jsonl", work / f"b-{args.contexts}.jsonl"
    for path, policy, seed in ((a, "A", 1), (b, "B", 2)):
        if not path.exists():
            write_responses(path, args.contexts, policy, seed)
    base = ["compare", str(a), str(b), "--measures", args.measures]
    print(f"{args.contexts:,} contexts, measures {args.measures}, code {args.code}")
    results = {}
    for label, extra in (("score", []), ("json", ["--out", str(work / "x.json"), "--force"]),
                         ("csv", ["--out", str(work / "x.csv"), "--force"])):
        gib, seconds = run(args.code, base + extra, work)
        results[label] = gib
        print(f"{label:<6} peak {gib:6.2f} GiB  ({seconds:.0f} s)")
    print(f"json / score = {results['json'] / results['score']:.2f}, csv / score = {results['csv'] / results['score']:.2f}")


if __name__ == "__main__":
    main()
