"""``simscore map``: the behaviour map of three or more policies (application layer: the command line).

``simscore map A.jsonl B.jsonl C.jsonl ... --out DIR [--measures tmr,dmr] [--contexts C.jsonl]
[--cluster COLUMN[,COLUMN]] [--resamples N] [--seed S] [--force]`` reads each responses file (its
policy name names it; two of one name are told apart by their file names), maps them on the
contexts all of them answered (:func:`simscore.analysis.behaviour_map.behaviour_map`) and writes
to DIR. A file may hold K samples per context (``simscore respond --samples K``, format version 2),
read as ``simscore compare`` reads it (:func:`simscore.responses_csv.read_sampled_responses`): a
pair's score at a context is then the mean over the cross pairs of their samples, and a sampled
policy's diagonal its agreement with itself. The files:

* ``pairs.csv``: per measure every ordered pair's mean, interval, chance level and
  chance-corrected value;
* ``clusters.csv``: per measure the clustering's merges with their bootstrap support;
* ``neighbours.csv``: per measure and policy its nearest and second-nearest neighbour and the
  paired test;
* ``map.json``: all of it, with the policies, the samples per context of each, the matrices'
  diagonal (``diagonal``: per policy and measure, a sampled policy's agreement with itself), the
  contexts, the units and the bootstrap;
* ``map_<measure>.png``: the heatmap with its dendrogram, and the 2-D map.

With ``--contexts``, ``--cluster`` names the metadata columns of the bootstrap's unit (a
dialogue: ``source_name,dialogue_id``, which is the default where the contexts have them; a
task: ``task_id``); without them every context is a unit.

**Agent logs.** A τ²-bench results file (``.json``, or a results folder) or, with ``--format
chat``, chat transcripts (JSON Lines) is read per task (:func:`contexts.transcripts.read_transcripts`
with ``unit="task"``): each agent's response to a task and trial is its trajectory, every call
over the conversation in order, and the tasks are the bootstrap's unit (``task_id``, from the
first log's contexts, unless ``--contexts`` names another). Logs and responses files mix.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from simscore.app.cli.args import (
    checks_outputs,
    column_list,
    input_file,
    measure_list,
    output_folder,
    resamples,
    responses_file,
    seed,
)
from simscore.io import atomic_open, prepare_output
from simscore.io.output import json_records
from simscore.io.untrusted import terminal_text

__all__ = ["add_subcommands", "cmd_map"]

log = logging.getLogger(__name__)

#: The tables ``simscore map`` writes to its folder (the figures are named per measure).
TABLES = ("pairs.csv", "clusters.csv", "neighbours.csv", "map.json")
#: Metadata columns of a dialogue, the default unit where the contexts have them.
DIALOGUE = ("source_name", "dialogue_id")


def _names(paths: list[str], policies: list[str]) -> list[str]:
    """Each file's policy name, or its file name where policies share a name (or have none)."""
    taken = [p or Path(f).stem for p, f in zip(policies, paths, strict=True)]
    if len(set(taken)) == len(taken):
        return taken
    stems = [Path(f).stem for f in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [str(Path(f)) for f in paths]


@checks_outputs
def cmd_map(args: argparse.Namespace) -> int:
    """``simscore map``: read, map, write tables and figures."""
    from simscore.analysis.behaviour_map import MAX_POLICIES, behaviour_map
    from simscore.measures import resolve_measures
    from simscore.plots.behaviour_map import plot_map_page
    from simscore.stats import Bootstrap

    if not 3 <= len(args.responses) <= MAX_POLICIES:
        raise ValueError(f"give 3 to {MAX_POLICIES} responses files, got {len(args.responses)} "
                         "(for two: simscore compare A B)")
    if args.resamples < 1:
        raise ValueError("--resamples must be at least 1: the clusters' support and the neighbour test resample")
    if args.cluster and not args.contexts:
        raise ValueError("--cluster needs --contexts (the context set whose metadata names the units)")
    resolved = resolve_measures(args.measures)  # unknown names fail here, before anything is read
    out = Path(args.out)
    figures = [out / f"map_{m.name}.png" for m in resolved]
    for figure in figures:  # the output contract for the figures, whose names depend on the measures
        prepare_output(figure, inputs=args.responses, overwrite=args.force)
    sides, tasks = _read(args)
    names = _names(list(args.responses), [side.policy for side in sides])
    ids = [i for i in sides[0].ids if all(i in side for side in sides[1:])]
    clusters, unit = _units(args, ids, tasks)
    log.info("mapping %d policies on the %d contexts they share (%s)", len(sides), len(ids),
             ", ".join(m.name for m in resolved))
    bmap = behaviour_map(dict(zip(names, sides, strict=True)), resolved, clusters=clusters, unit=unit,
                         bootstrap=Bootstrap(n_resamples=args.resamples, seed=args.seed))
    out.mkdir(parents=True, exist_ok=True)
    tables = {"pairs.csv": bmap.pairs_table(), "clusters.csv": bmap.clusters_table(),
              "neighbours.csv": bmap.neighbours_table()}
    for name, table in tables.items():
        with atomic_open(out / name, "w") as handle:
            table.to_csv(handle, index=False, lineterminator="\n")
    document = {"format": "simscore-map", "version": 1, "policies": list(bmap.policies),
                "files": [str(p) for p in args.responses], "samples": bmap.samples, "measures": list(bmap.measures),
                "contexts": bmap.contexts, "unit": bmap.unit, "units": bmap.units,
                "bootstrap": bmap.bootstrap.to_dict(),
                "pairs": json_records(tables["pairs.csv"]), "clusters": json_records(tables["clusters.csv"]),
                "neighbours": json_records(tables["neighbours.csv"]),
                "diagonal": json_records(_diagonal(bmap)),
                "order": bmap.order, "coords": {m: json_records(bmap.coords[m].reset_index()) for m in bmap.measures}}
    with atomic_open(out / "map.json", "w") as handle:
        json.dump(document, handle, indent=1, allow_nan=False)
        handle.write("\n")
    for measure, figure in zip(bmap.measures, figures, strict=True):
        plot_map_page(bmap, measure, figure, overwrite=True)  # checked above, before the work
    print("\n".join(map(terminal_text, _summary(bmap).splitlines())))  # policy names come from files
    print(f"wrote {', '.join(TABLES)} and {len(figures)} figure(s) to {out}")
    return 0


def _diagonal(bmap: Any) -> Any:
    """Per policy each measure's diagonal entry: a sampled policy's agreement with itself (1 for one sample)."""
    import numpy as np
    import pandas as pd

    return pd.DataFrame({"policy": list(bmap.policies),
                         **{m: np.diag(bmap.similarity[m].to_numpy()) for m in bmap.measures}})


def _kind(path: str, chosen: str | None) -> str:
    """What a file given to ``simscore map`` holds: ``responses``, ``tau2`` or ``chat`` (``--format``, else
    τ²-bench results for a results folder or a ``.json`` file that does not open with a responses
    file's header, a responses file otherwise)."""
    from simscore.io.tau2 import is_tau2_folder

    if chosen:
        return chosen
    if is_tau2_folder(path):
        return "tau2"
    if Path(path).suffix.lower() != ".json":
        return "responses"
    from simscore.responses import FORMAT_NAME

    with open(path, "rb") as handle:  # a responses file named .json opens with its header line
        first = handle.readline(1 << 20)
    try:
        header = json.loads(first)
    except ValueError:
        return "tau2"
    return "responses" if isinstance(header, dict) and header.get("format") == FORMAT_NAME else "tau2"


def _read(args: argparse.Namespace) -> tuple[list[Any], Any]:
    """Each file's responses, and the first agent log's contexts (None when no file is a log)."""
    from contexts.transcripts import log_hint, read_transcripts
    from simscore.errors import FileFormatError
    from simscore.responses_csv import read_sampled_responses

    sides: list[Any] = []
    tasks = None
    for path in args.responses:
        kind = _kind(path, args.format)
        if kind == "responses":  # as simscore compare reads them: one sample per context is plain Responses
            try:
                drawn = read_sampled_responses(path)
            except FileFormatError as exc:  # an agent log given without --format says how to read it
                raise log_hint(exc, path) from None
            sides.append(drawn.sample(0) if drawn.n_samples == 1 else drawn)
            continue

        read = read_transcripts(path, kind=kind, unit="task")
        sides.append(read.responses)
        tasks = read.contexts if tasks is None else tasks
    return sides, tasks


def _units(args: argparse.Namespace, ids: list[str], tasks: Any = None) -> tuple[list[Any] | None, str]:
    """The bootstrap's unit of each shared context: from the context set's metadata, else the task of an
    agent log's context (None: the contexts)."""
    if not args.contexts:
        labels = None if tasks is None else [tasks[i].metadata.get("task_id") for i in ids]
        if labels is None or None in labels:  # no agent log, or conversations without a task id
            return None, "contexts"
        return labels, "task_id"
    from contexts.context import ContextSet

    metadata = ContextSet.read_jsonl(args.contexts).metadata_frame()
    columns = args.cluster or (DIALOGUE if all(c in metadata.columns for c in DIALOGUE) else None)
    if not columns:
        return None, "contexts"
    missing = [c for c in columns if c not in metadata.columns]
    if missing:
        raise ValueError(f"--cluster: the context set has no metadata column {missing[0]!r}")
    lacking = [i for i in ids if i not in metadata.index]
    if lacking:
        raise ValueError(f"the context set lacks {len(lacking)} of the shared context ids, e.g. {lacking[0]!r}")
    return [tuple(row) for row in metadata.loc[ids, list(columns)].itertuples(index=False, name=None)], ",".join(columns)


def _summary(bmap: Any) -> str:
    lines = [f"{len(bmap.policies)} policies on {bmap.contexts:,} shared contexts ({bmap.units:,} {bmap.unit} "
             f"resampled {bmap.bootstrap.n_resamples:,} times{_samples_said(bmap.samples)})"]
    for m in bmap.measures:
        lines.append(f"{m}: nearest neighbour (similarity; second nearest; p of 'not nearer')")
        for policy, row in bmap.neighbours[m].iterrows():
            lines.append(f"  {policy:<24} {row['nearest']!s:<24} {row['similarity']:.4f}; {row['second']!s} "
                         f"{row['second_similarity']:.4f}; p {row['p']:.3f}")
        inner = bmap.clusters[m][(bmap.clusters[m]["size"] > 1) & (bmap.clusters[m]["size"] < len(bmap.policies))]
        for _, row in inner.iterrows():
            lines.append(f"  cluster {row['members']} at distance {row['height']:.4f}: support {row['support']:.0%}")
    return "\n".join(lines)


def _samples_said(samples: dict[str, int]) -> str:
    """``; samples per context: 3 for r1, r2; 1 for handcrafted`` (nothing where every policy has one)."""
    if all(k == 1 for k in samples.values()):
        return ""
    by_count: dict[int, list[str]] = {}
    for name, k in samples.items():
        by_count.setdefault(k, []).append(name)
    return "; samples per context: " + "; ".join(f"{k} for {', '.join(names)}" for k, names in by_count.items())


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore map``."""
    p = subparsers.add_parser("map", help="the behaviour map of 3 or more policies: who behaves like whom")
    p.add_argument("responses", nargs="+", type=responses_file, metavar="RESPONSES",
                   help="responses files of the policies, on one context set (JSON Lines or CSV logs; a file of "
                        "simscore respond --samples K holds K samples per context), or agent logs (tau2-bench "
                        "results: a .json file or a results folder; chat transcripts with --format chat), each "
                        "read per task")
    p.add_argument("--out", required=True, type=output_folder, help="folder for the tables and figures")
    p.add_argument("--measures", type=measure_list, default=["tmr", "dmr"],
                   help="measures (default tmr,dmr), as simscore compare takes them")
    p.add_argument("--contexts", type=input_file, metavar="FILE",
                   help="the context set (JSON Lines): its metadata names the bootstrap's units")
    p.add_argument("--cluster", type=column_list, metavar="COLUMN[,COLUMN]",
                   help="with --contexts: the metadata columns of a unit (default source_name,dialogue_id where "
                        "the contexts have them; e.g. task_id)")
    p.add_argument("--format", choices=("responses", "tau2", "chat"),
                   help="what every file holds (default: tau2-bench results for a .json file or a results "
                        "folder, a responses file otherwise)")
    p.add_argument("--resamples", type=resamples, default=1000, help="bootstrap resamples (default 1000, at least 1)")
    p.add_argument("--seed", type=seed, default=0, help="bootstrap and chance seed (default 0)")
    p.add_argument("--force", action="store_true", help="replace existing outputs")
    p.set_defaults(func=cmd_map, output_names=TABLES)
