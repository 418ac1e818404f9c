"""A hand-built experiment whose similarities are known by construction (shared by several tests).

The synthetic experiment: 20 contexts (turn index 1..5, four contexts per turn), two reward
models (ts, iq) with two runs each and three checkpoints. A policy is a vector of codes, one
per context: code 0 → ``inform(name=v<i>,area=centre)``, 1 → ``inform(name=w<i>,area=centre)``
(same intent, one concept differs), 2 → ``request(area)`` (another intent), c ≥ 3 →
``inform(food=f<c>)``. TMR between two policies is the fraction of equal codes.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from simscore import Act, Response, Responses
from simscore import analysis as an

N = 20
IDS = [f"c{i:02d}" for i in range(N)]
TURNS = {cid: {"turn_index": i // 4 + 1} for i, cid in enumerate(IDS)}
BOOT = {"bootstrap": an.Bootstrap(n_resamples=200, seed=0)}


def codes(*spans: tuple[int, int, int]) -> list[int]:
    """20 zeros, then ``code`` on ``range(start, stop)`` for each (start, stop, code)."""
    codes = [0] * N
    for start, stop, code in spans:
        codes[start:stop] = [code] * (stop - start)
    return codes


# codes[(reward, run)][checkpoint]
COL = {
    ("ts", "ts-1"): {1: codes(), 2: codes((0, 4, 1)), 3: codes((0, 4, 1), (4, 6, 2))},
    ("ts", "ts-2"): {
        1: codes((10, 20, 1)),
        2: codes((10, 20, 1), (0, 2, 2)),
        3: codes((10, 20, 1), (0, 2, 2)),
    },
    ("iq", "iq-1"): {k: codes((0, 5, 2)) for k in (1, 2, 3)},
    ("iq", "iq-2"): {k: codes((0, 5, 2), (5, 20, 1)) for k in (1, 2, 3)},
}


def _gen_codes(codes: list[int], run_index: int, k: int) -> list[int]:
    """C_gen: as C_col, but contexts 18 and 19 change at every checkpoint and differ between runs."""
    out = list(codes)
    out[18] = out[19] = 3 + 2 * run_index + 10 * k
    return out


GEN = {
    key: {k: _gen_codes(c, i, k) for k, c in ck.items()} for i, (key, ck) in enumerate(COL.items())
}


def act_for(code: int, i: int) -> Act:
    if code == 0:
        return Act.parse(f"inform(name=v{i},area=centre)")
    if code == 1:
        return Act.parse(f"inform(name=w{i},area=centre)")
    if code == 2:
        return Act.parse("request(area)")
    return Act.parse(f"inform(food=f{code})")


def responses(codes: list[int], policy: str = "") -> Responses:
    return Responses({cid: Response(act_for(c, i)) for i, (cid, c) in enumerate(zip(IDS, codes))}, policy=policy)


def tmr_of(a: list[int], b: list[int]) -> float:
    return float(np.mean(np.asarray(a) == np.asarray(b)))


def checkpoints(codes_by_run, reward: str, run: str) -> dict[int, Responses]:
    return {k: responses(c, f"{run}@{k}") for k, c in codes_by_run[(reward, run)].items()}


@functools.cache
def synthetic_results(measures=("tmr", "dmr", "cer", "cmr")):
    """Every analysis of the synthetic experiment on both context sets: name → AnalysisResult.

    Cached (the plots and report tests reuse it): callers must not modify the tables.
    """
    conv, seed_results, rm, chance = [], [], [], []
    for context_set, codes, metadata in (("col", COL, TURNS), ("gen", GEN, None)):
        opts = {"context_set": context_set, "metadata": metadata, **BOOT}
        for reward, run in codes:
            conv.append(an.convergence(checkpoints(codes, reward, run), measures, run=run, reward=reward, **opts))
        for reward in ("ts", "iq"):
            runs = {run: checkpoints(codes, r, run) for r, run in codes if r == reward}
            seed_results.append(an.seeds(runs, measures, reward=reward, **opts))
        final = {
            reward: {run: responses(codes[(r, run)][3], run) for r, run in codes if r == reward}
            for reward in ("ts", "iq")
        }
        rm.append(an.reward_models(final, measures, checkpoint=3, **opts))
        random = Responses({cid: Response(Act.parse("bye()")) for cid in IDS}, policy="random")
        chance.append(
            an.chance_level(random, final["ts"]["ts-1"], measures, checkpoint=3, reward="ts", run="ts-1", **opts)
        )
    return {
        "convergence": an.combine(conv),
        "seeds": an.combine(seed_results),
        "reward_models": an.combine(rm),
        "chance": an.combine(chance),
    }


PERFORMANCE_RECORDS = [
    {"reward": reward, "run": f"{reward}-{r}", "checkpoint": k, "eval_dialogues": 100, "success_rate": s,
     "avg_iq": q, "avg_iq_sd": 1.0, "avg_length": n, "avg_length_sd": 2.0}
    for reward, base in (("ts", 0.0), ("iq", 0.05))
    for r, jitter in ((1, 0.0), (2, 0.04))
    for k, (s, q, n) in {
        1: (0.5, 2.5, 9.0), 2: (0.8, 3.5, 6.0), 3: (0.95, 4.0, 5.0)
    }.items()
    for s, q, n in [(s - base - jitter, q + jitter, n + 10 * jitter)]
]


@functools.cache
def _synthetic_tables() -> dict[str, pd.DataFrame]:
    return _build_tables()


def synthetic_tables() -> dict[str, pd.DataFrame]:
    """The tables a pipeline would save for the synthetic experiment (fresh copies)."""
    return {name: table.copy() for name, table in _synthetic_tables().items()}


def _build_tables() -> dict[str, pd.DataFrame]:
    results = synthetic_results()
    col_seeds = [c for key, c in results["seeds"].comparisons.items() if key.context_set == "col"]
    col_rm = results["reward_models"]
    per_turn = pd.concat(
        [
            an.per_turn(col_seeds, group="seed pairs (col)", **BOOT),
            an.per_turn(
                [c for key, c in col_rm.comparisons.items() if key.context_set == "col" and key.reward_a != key.reward_b],
                group="ts-iq pairs (col)",
                **BOOT,
            ),
        ],
        ignore_index=True,
    )
    everything = [*results["convergence"].comparisons.values(), *results["seeds"].comparisons.values()]
    pairs = {k: c for k, c in results["seeds"].comparisons.items() if k.context_set == "col"}
    pairs.update((k, c) for k, c in col_rm.comparisons.items() if k.context_set == "col" and k.reward_a != k.reward_b)
    return {
        "performance": an.performance_table(PERFORMANCE_RECORDS),
        "convergence": results["convergence"].table,
        "seeds": results["seeds"].table,
        "reward_models": results["reward_models"].table,
        "per_turn": per_turn,
        "first_turn": an.first_turn(pairs, **BOOT),
        "correlation": an.correlation_table(everything),
        "chance": results["chance"].table,
    }



def one_row(table: pd.DataFrame, **labels) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for column, value in labels.items():
        mask &= (table[column] == value).to_numpy()
    rows = table[mask]
    assert len(rows) == 1, labels
    return rows.iloc[0]



def col_only(tables, measures=("tmr", "dmr")):
    """A small version of the tables (one context set, two measures) that draws quickly."""
    out = {}
    for name, table in tables.items():
        if "context_set" in table.columns:
            table = table[table["context_set"] == "col"]
        if "measure" in table.columns:
            table = table[table["measure"].isin(measures)]
        if name == "correlation":
            table = table[table["measure_a"].isin(measures) & table["measure_b"].isin(measures)]
        out[name] = table.reset_index(drop=True)
    return out


#: Report metadata of the synthetic experiment (what a pipeline would save beside its tables).
META = {
    "title": "Synthetic experiment",
    "signatures": {"tmr": "tmr|simscore:0.1.0", "dmr": "dmr|simscore:0.1.0", "cer": "cer|levenshtein:x|clip:no",
                   "cmr": "cmr|simscore:0.1.0"},
    "versions": {"simscore": "0.1.0", "numpy": "2.4.6"},
    "seeds": {"training": [1, 2], "bootstrap": 0},
    "bootstrap": {"n_resamples": 100, "seed": 0},
    "findings": {"converged_tmr": 0.85},
}
