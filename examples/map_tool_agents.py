"""Who behaves like whom among six τ²-bench agents: the behaviour map of real airline logs, task by task.

Reads the six τ²-bench results files shipped in ``examples/data/tau2/`` (the same six airline
tasks, one trial each; their sources and licence: ``examples/data/tau2/README.md``): gpt-4.1
and its fine-tune on τ²-bench trajectories, gpt-4o, claude-sonnet-4-5, qwen2.5:7b and whissle.
Each agent's response to a task is its trajectory (every tool call of the conversation, in
order). The map (:func:`simscore.analysis.behaviour_map.behaviour_map`) scores every pair of
agents on the tasks all of them ran, with intervals from one bootstrap of the tasks shared by
all pairs, each pair's chance level (one agent's trajectory for a task against the other's for
another task), the clustering with each cluster's bootstrap support and each agent's nearest
neighbour with a paired test. It prints

1. the tasks, trials and users in common (the map's limits);
2. per measure (TMR, DMR, CER, CMR; calls in order), the matrix's range against the chance
   level, the clusters with their support and the fine-tune's nearest neighbour;
3. CMR again with ``calls=unordered`` (the same calls in any order count as the same): whether
   "the fine-tune is nearest its base" holds when the order of the calls does not count.

    python examples/map_tool_agents.py [--out DIR] [--resamples 1000]

``--out`` also writes each measure's figure (``map_<measure>.png``: the heatmap ordered by the
clustering under its dendrogram, and the 2-D map). ``simscore map examples/data/tau2/*.json
--measures tmr,dmr,cer,cmr --out DIR`` draws the same map from the command line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from contexts.transcripts import read_tau2_results
from simscore.analysis.behaviour_map import BehaviourMap, behaviour_map
from simscore.measures import resolve_measures
from simscore.plots.behaviour_map import plot_map_page
from simscore.stats import Bootstrap

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "tau2"
#: Each shipped file -> the agent's short name (the files record the models' full names).
AGENTS = {
    "airline_gpt-4.1_6_tasks.json": "gpt-4.1",
    "airline_gpt-4.1-sft_6_tasks.json": "gpt-4.1-sft",
    "airline_gpt-4o_6_tasks.json": "gpt-4o",
    "airline_claude-sonnet-4-5_6_tasks.json": "claude-sonnet-4-5",
    "airline_qwen2.5-7b_6_tasks.json": "qwen2.5:7b",
    "airline_whissle_6_tasks.json": "whissle",
}
FINE_TUNE, BASE = "gpt-4.1-sft", "gpt-4.1"
MEASURES = ("tmr", "dmr", "cer", "cmr")


def off_diagonal(frame) -> np.ndarray:
    """The values of an N x N frame off its diagonal."""
    values = frame.to_numpy()
    return values[~np.eye(len(values), dtype=bool)]


def report(bmap: BehaviourMap, measure: str) -> list[str]:
    """The lines of one measure: the range against chance, the clusters and the fine-tune's neighbours."""
    similarity, chance = off_diagonal(bmap.similarity[measure]), off_diagonal(bmap.chance[measure])
    lines = [f"{measure}: pairs {similarity.min():.3f} to {similarity.max():.3f}; "
             f"chance {chance.min():.3f} to {chance.max():.3f}"]
    inner = bmap.clusters[measure][(bmap.clusters[measure]["size"] > 1)
                                   & (bmap.clusters[measure]["size"] < len(bmap.policies))]
    for row in inner.itertuples(index=False):
        lines.append(f"  cluster {row.members}: at {row.height:.3f}, support {row.support:.0%}")
    near = bmap.neighbours[measure].loc[FINE_TUNE]
    low, high = bmap.ci_low[measure].at[FINE_TUNE, near["nearest"]], bmap.ci_high[measure].at[FINE_TUNE, near["nearest"]]
    lines.append(f"  {FINE_TUNE}'s nearest: {near['nearest']} {near['similarity']:.3f} [{low:.3f}, {high:.3f}], "
                 f"then {near['second']} {near['second_similarity']:.3f}; p {near['p']:.3f}"
                 f" (its base {BASE}: {bmap.similarity[measure].at[FINE_TUNE, BASE]:.3f})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the figures map_<measure>.png to this folder")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the tasks (default 1000)")
    args = parser.parse_args()

    logs = {name: read_tau2_results(DATA / file, unit="task") for file, name in AGENTS.items()}
    sides = {name: log.responses for name, log in logs.items()}
    shared = [i for i in sides[BASE].ids if all(i in side for side in sides.values())]
    first = logs[BASE].contexts
    tasks = [first[i].metadata["task_id"] for i in shared]
    trials = sorted({first[i].metadata["trial"] for i in shared})
    print(f"{len(sides)} agents on {len(set(tasks))} shared airline tasks ({', '.join(tasks)}), trial(s) {trials}")
    for (file, name), log in zip(AGENTS.items(), logs.values(), strict=True):
        user = json.loads((DATA / file).read_text(encoding="utf-8"))["info"]["user_info"]["llm"]
        rewards = [log.contexts[i].metadata["reward"] for i in shared]
        print(f"  {name:<18} {log.responses.policy} (user {user}): reward {sum(rewards):.0f} of {len(rewards)}")

    bootstrap = Bootstrap(n_resamples=args.resamples, seed=0)
    strict = behaviour_map(sides, resolve_measures(list(MEASURES)), clusters=tasks, unit="task_id",
                           bootstrap=bootstrap)
    print(f"\nTrajectories, calls in order ({strict.units} tasks resampled {args.resamples:,} times):")
    for measure in MEASURES:
        print("\n".join(report(strict, measure)))
    unordered = behaviour_map(sides, resolve_measures(["cmr"], options={"cmr": {"calls": "unordered"}}),
                              clusters=tasks, unit="task_id", bootstrap=bootstrap)
    print("\nThe same calls in any order (calls=unordered):")
    print("\n".join(report(unordered, "cmr")))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for measure in MEASURES:
            print(f"wrote {plot_map_page(strict, measure, args.out / f'map_{measure}.png', overwrite=True)}")


if __name__ == "__main__":
    main()
