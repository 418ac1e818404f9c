"""Compare two tool-calling agents on real τ²-bench transcripts: what they do, task by task.

Reads two τ²-bench results files of the same tasks (by default the two shipped in
``examples/data/tau2/``: ``gpt-4.1`` and a fine-tuned ``gpt-4.1`` on six airline tasks, the same
simulated user and seed) and prints, with intervals over tasks (the bootstrap resamples tasks)
and the chance level (A's action for one task against B's for another):

1. their **trajectories** -- every tool call of a conversation, in order, one action per task:
   the two agents answer the same task, so this is a comparison on the same contexts; TMR, DMR,
   CER and CMR under each ``calls`` mode (strict order, unordered, A's calls a subset of B's,
   a superset);
2. their **turns**, paired by task, trial and turn: the same step of the same task, the same
   history only until one agent words a reply differently (``same_history``); and where the two
   first part ways, per task (:func:`simscore.analysis.divergence.first_divergence`).

    python examples/compare_tool_agents.py [A.json B.json] [--view page.html]

``--view`` also writes the page of the turns whose actions differ (``simscore view``), the two
agents' calls side by side. A second agent that answered A's contexts themselves (replayed with
``simscore respond openai:URL``) compares on every turn as on the trajectories.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from contexts.transcripts import pair_transcripts, read_tau2_results
from simscore import compare
from simscore.analysis.chance import shuffled_chance
from simscore.analysis.divergence import first_divergence
from simscore.app.inspect.view import write_view
from simscore.measures import resolve_measures

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "tau2"
MEASURES = ("tmr", "dmr", "cer", "cmr")
MODES = ("strict", "unordered", "subset", "superset", "per_message")


def measures(calls: str) -> list:
    """The four action measures comparing turns of several calls in the way ``calls`` names."""
    return resolve_measures(list(MEASURES), options={name: {"calls": calls} for name in MEASURES})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="two tau2-bench results files of the same tasks (A.json B.json)")
    parser.add_argument("--view", metavar="PAGE", help="write the page of the differing turns here (HTML)")
    args = parser.parse_args()
    if len(args.files) not in (0, 2):
        parser.error("give two results files, or none for the shipped ones")
    a_file, b_file = args.files or (DATA / "airline_gpt-4.1_6_tasks.json", DATA / "airline_gpt-4.1-sft_6_tasks.json")

    tasks = pair_transcripts(read_tau2_results(a_file, unit="task"), read_tau2_results(b_file, unit="task"))
    print(f"A = {tasks.a.policy}\nB = {tasks.b.policy}\n")
    print(f"1. Trajectories: all calls of a conversation as one action, {len(tasks.contexts)} tasks")
    for mode in MODES:
        chosen = measures(mode)
        comparison = compare(tasks.a, tasks.b, chosen, metadata=tasks.contexts, clusters="task_id", progress=False)
        chance = shuffled_chance(comparison, tasks.a, tasks.b, chosen)
        print(f"\ncalls={mode}")
        print(comparison.format_summary())
        print(chance.format())

    turns = pair_transcripts(read_tau2_results(a_file), read_tau2_results(b_file))
    same = sum(1 for context in turns.contexts if context.metadata["same_history"])
    print(f"\n2. Turns paired by task, trial and turn: {len(turns.contexts)} turns both agents took, "
          f"{same} of them on the same history")
    chosen = measures("strict")
    comparison = compare(turns.a, turns.b, chosen, metadata=turns.contexts, clusters="task_id", progress=False)
    print(comparison.format_summary())
    print(shuffled_chance(comparison, turns.a, turns.b, chosen).format())
    parting = first_divergence(comparison, by=("task_id", "trial"))
    print()
    print(parting.format())
    for row in parting.table.itertuples(index=False):
        if not isinstance(row.context_id, str):  # they never parted in the turns both took
            print(f"task {row.task_id}: the same actions in all {row.turns} turns both took")
            continue
        a_act, b_act = turns.a[row.context_id].action, turns.b[row.context_id].action
        print(f"task {row.task_id}, turn {int(row.first)}: A {str(a_act)[:70]}  |  B {str(b_act)[:70]}")
    if args.view:
        print(f"wrote {write_view(comparison, turns.a, turns.b, args.view, contexts=turns.contexts)}")


if __name__ == "__main__":
    main()
