"""False-"converged" rate and power of the monitor's two rules, by simulation; run by hand (about 15 s on the 2-core machine).

A policy is checked at every callback (``check_freq=2048``: 100 checks are 204,800 steps) on
C_gen's 1,296 contexts with TMR ≥ 0.99 (a tolerance of 1 % changed actions), patience 3,
``alpha=0.05`` — the callback's defaults. Each row simulates a scenario of change rates per
check (:func:`simscore.stats.sequential.simulate_monitor`, the monitor's own decision code) over many
seeded replications and reports, per rule, the share of runs declared converged within 10 and
within 100 checks and the median check of the declaration.

* Not converged (every declaration is false): the behaviour changes by 1.0 % (the boundary of
  the null), 1.1 %, 1.2 % or 1.5 % of the contexts per check; a change that decays towards the
  tolerance but stays above it; the same 1.1 % of the contexts flipping at every check; 300
  contexts with TMR ≥ 0.95 and 6 % changing.
* Converged (every declaration is right; the share is the power): 0 %, 0.1 %, 0.25 %, 0.5 %
  per check from the first check, and 5 % for 20 checks then 0 % or 0.1 % (converged at
  check 21: the median check minus 20 is the delay).

    python benchmarks/bench_monitor_rules.py [--replications 10000] [--checks 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simscore.stats.sequential import simulate_monitor


def _scenarios(checks: int) -> list[tuple[str, str, np.ndarray, int, float, bool]]:
    k = np.arange(1, checks + 1)
    flat = np.ones(checks)
    late = np.where(k <= 20, 0.05, 1.0)
    return [
        # (kind, label, change rates per check, contexts, threshold, volatile)
        ("not converged", "1.0 % per check (the boundary)", 0.010 * flat, 1296, 0.99, False),
        ("not converged", "1.1 % per check", 0.011 * flat, 1296, 0.99, False),
        ("not converged", "1.2 % per check", 0.012 * flat, 1296, 0.99, False),
        ("not converged", "1.5 % per check", 0.015 * flat, 1296, 0.99, False),
        ("not converged", "1 % + 1 % x 0.97^k (decaying)", 0.01 + 0.01 * 0.97**k, 1296, 0.99, False),
        ("not converged", "the same 1.1 % flip each check", 0.011 * flat, 1296, 0.99, True),
        ("not converged", "300 contexts, TMR >= 0.95, 6 %", 0.06 * flat, 300, 0.95, False),
        ("converged", "0 % per check", 0.0 * flat, 1296, 0.99, False),
        ("converged", "0.1 % per check", 0.001 * flat, 1296, 0.99, False),
        ("converged", "0.25 % per check", 0.0025 * flat, 1296, 0.99, False),
        ("converged", "0.5 % per check", 0.005 * flat, 1296, 0.99, False),
        ("converged", "5 % for 20 checks, then 0 %", np.where(late == 1.0, 0.0, late), 1296, 0.99, False),
        ("converged", "5 % for 20 checks, then 0.1 %", np.where(late == 1.0, 0.001, late), 1296, 0.99, False),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=10_000)
    parser.add_argument("--checks", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"{args.replications:,} replications, {args.checks} checks, patience 3, alpha 0.05\n")
    last = args.checks
    print(f"| scenario | kind | point ≤10 | point ≤{last} | point median | sequential ≤10 | sequential ≤{last} "
          "| sequential median |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for kind, label, rates, n, threshold, volatile in _scenarios(args.checks):
        sim = simulate_monitor(rates, n, threshold=threshold, patience=3, alpha=0.05,
                               replications=args.replications, seed=args.seed, volatile=volatile)
        cells = []
        for rule in ("point", "sequential"):
            median = sim.median_check(rule)
            cells += [f"{sim.rate(rule, 10):.3f}", f"{sim.rate(rule):.3f}", "never" if np.isnan(median) else f"{median:g}"]
        print(f"| {label} | {kind} | " + " | ".join(cells) + " |")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
