"""Benchmark of the contexts package (run by hand: ``python benchmarks/bench_contexts.py``).

Goal (issue 3): generating C_gen, and writing / reading a 100,000-context file, each take
well under a second per 10,000 contexts. Measured on two kinds of sets:

* ``grid``: a C_gen grid with 26 levels per slot (26**3 * 6 = 105,456 contexts, no history);
* ``collected``: contexts collected from a synthetic dialogue log (10 turns per dialogue,
  so histories of up to 19 texts), about ``--n`` contexts.

Prints seconds per 10,000 contexts (best of ``--repeat`` runs) for each step.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contexts import (
    BeliefState,
    ContextSet,
    Dialogue,
    DialogueTurn,
    GridSpec,
    collect_contexts,
    default_domain,
    generate_grid,
    read_dialogue_log,
    write_dialogue_log,
)


def _best(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _synthetic_dialogues(n_contexts: int, turns: int = 10) -> list[Dialogue]:
    ontology = default_domain().ontology
    areas = ontology.informable["area"]
    foods = ontology.informable["food"]
    dialogues = []
    for d in range(max(1, n_contexts // turns)):
        area, food = areas[d % len(areas)], foods[d % len(foods)]
        dialogue_turns = []
        for t in range(turns):
            p = min(1.0, 0.1 * t)
            belief = BeliefState(
                slots={"area": {area: p}, "food": {food: p / 2, "dontcare": p / 2}, "pricerange": {}, "name": {}},
                method={"byconstraints": 1.0 - p / 2, "byname": p / 2},
                requested={"phone": p} if t > 5 else {},
                offer_happened=t > 4,
            )
            dialogue_turns.append(
                DialogueTurn(
                    turn_index=t,
                    user_act=None if t == 0 else f"inform(area={area})",
                    user_text=None if t == 0 else f"I would like {food} food in the {area}, turn {t}.",
                    belief=belief,
                    system_act="request(pricerange)",
                    system_text="What price range would you like?",
                )
            )
        dialogues.append(Dialogue(f"d{d}", tuple(dialogue_turns), {"success": True}))
    return dialogues


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="contexts of the collected set (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per step; the best counts (default 3)")
    args = parser.parse_args(argv)
    per = 10_000
    rows: list[tuple[str, int, float]] = []

    seconds, paper = _best(args.repeat, generate_grid)
    rows.append(("generate C_gen (paper default)", len(paper), seconds))
    big_spec = GridSpec(levels=tuple(i / 25 for i in range(26)))
    seconds, grid = _best(args.repeat, lambda: generate_grid(big_spec))
    rows.append(("generate C_gen (26 levels)", len(grid), seconds))

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for label, context_set in (("grid", grid), ("collected", None)):
            if context_set is None:
                log = folder / "log.jsonl"
                write_dialogue_log(log, _synthetic_dialogues(args.n), domain=default_domain(), source={"name": "bench"})
                seconds, loaded = _best(1, lambda log=log: read_dialogue_log(log))
                seconds, context_set = _best(args.repeat, lambda loaded=loaded: collect_contexts([loaded]))
                rows.append(("collect C_col from a log (parsed)", len(context_set), seconds))
            path = folder / f"{label}.jsonl"
            def write(cs=context_set, path=path) -> None:
                ContextSet(cs, name=cs.name, domain=cs.domain, built=cs.built).to_jsonl(path)

            seconds, _ = _best(args.repeat, write)
            rows.append((f"write {label} (incl. content hash)", len(context_set), seconds))
            size = path.stat().st_size
            seconds, read = _best(args.repeat, lambda path=path: ContextSet.read_jsonl(path))
            rows.append((f"read {label} (verify hash)", len(read), seconds))
            seconds, read = _best(args.repeat, lambda path=path: ContextSet.read_jsonl(path, verify_hash=False))
            rows.append((f"read {label} (no hash check)", len(read), seconds))
            if read != context_set:
                raise SystemExit(f"round trip of {label} failed")
            print(f"{label}: {len(context_set)} contexts, file {size / 1e6:.1f} MB ({size / len(context_set):.0f} B/context)")

    print(f"\n{'step':<38} {'contexts':>9} {'seconds':>8} {'s / 10k':>8}")
    for label, count, seconds in rows:
        print(f"{label:<38} {count:>9} {seconds:>8.3f} {seconds / count * per:>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
