"""The ``simscore contexts flows`` commands: conversation-flow graphs and flow-labelled context sets.

* ``simscore contexts flows build DIALOGUES... --out graph.json`` — the flow graph of the
  training dialogues (simscore dialogue logs; ConvLab-3 ``dialogues.json`` with ``--convlab``
  and optionally ``--split train``; PyDial belief logs with ``--pydial``);
  ``--domain-agnostic`` drops the domain from slot names;
* ``simscore contexts flows label CONTEXTS --graph graph.json --dialogues DIALOGUES... --out
  labelled.jsonl`` — the contexts with flow labels and pattern tags in their metadata (the
  dialogues are those the contexts were collected from);
* ``simscore contexts flows summary [LABELLED] [--graph graph.json] [--json]`` — nodes,
  edges, the share of unseen-flow dialogues and contexts, pattern counts;
* ``simscore contexts flows sample LABELLED --out balanced.jsonl [--by flow] [--per-stratum N]
  [--seed S]`` — a seeded subset with as many contexts of each stratum;
* ``simscore contexts flows plot --graph graph.json --out flows.png [--test DIALOGUES...]`` —
  the most frequent training paths and where the test dialogues leave the graph.

Every output is checked before any work: never one of the inputs, an existing file only
with ``--force``. Each dialogue counts once: a dialogue file given twice (however spelt:
:func:`simscore.io.same_file`) or a dialogue (source name and id) in two files is an error
naming both — not de-duplicated, since two dialogues under one key may differ, and
``flows label`` finds a context's dialogue by that key. Then compare per stratum: ``simscore compare A B --contexts labelled.jsonl
--by flow``. The ``contexts`` package is imported only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from simscore.app.cli.args import checks_outputs, input_file, output_file, positive_int, seed
from simscore.errors import ConfigError, InvalidContextError

if TYPE_CHECKING:
    from contexts.flows.dialogues import FlowDialogue

__all__ = ["add_subcommands", "cmd_build", "cmd_label", "cmd_summary", "cmd_sample", "cmd_plot"]


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--convlab", action="store_true", help="the dialogues are ConvLab-3 dialogues.json files")
    kind.add_argument("--pydial", action="store_true", help="the dialogues are PyDial belief logs")
    parser.add_argument("--split", metavar="SPLIT", help="with --convlab: only dialogues of this data_split (e.g. train)")
    parser.add_argument(
        "--source-name", metavar="NAME",
        help="source name of the dialogues (default as 'contexts collect' names them: so labels find their contexts)",
    )


def _dialogues(paths: list[str], args: argparse.Namespace) -> list[FlowDialogue]:
    """The dialogues of every file, each once: a file given twice (however spelt) or a dialogue
    in two files is an error, never counted twice (a graph's counts and a context's dialogue
    are keyed by source name and dialogue id)."""
    from contexts.flows.dialogues import read_flow_dialogues
    from simscore.io import same_file

    kind = "convlab" if args.convlab else "pydial" if args.pydial else "log"
    if args.split is not None and kind != "convlab":
        raise ValueError("--split applies to --convlab input only")
    for i, path in enumerate(paths):
        earlier = next((p for p in paths[:i] if same_file(p, path)), None)
        if earlier is not None:
            raise ConfigError(f"{path} is given twice (also as {earlier}): each dialogue file once, or its dialogues "
                              "would be counted twice")
    out: list[FlowDialogue] = []
    seen: dict[tuple[str, str], int] = {}
    for i, path in enumerate(paths):
        for dialogue in read_flow_dialogues(path, kind=kind, split=args.split, source_name=args.source_name):
            first = seen.get(dialogue.key)
            if first is not None:
                where = f"both {paths[first]} and {path}" if first != i else f"{path} twice"
                raise InvalidContextError(
                    f"dialogue {dialogue.dialogue_id!r:.60} of source {dialogue.source_name!r:.60} is in {where}: a "
                    "dialogue counts once; give each dialogue once (dialogues of different sources need distinct "
                    "source names: a log's source.name, a ConvLab file's dataset)")
            seen[dialogue.key] = i
            out.append(dialogue)
    return out


@checks_outputs
def cmd_build(args: argparse.Namespace) -> int:
    """``simscore contexts flows build``: write the flow graph of training dialogues."""
    from contexts.flows import FlowGraph

    dialogues = _dialogues(args.dialogues, args)
    graph = FlowGraph.from_dialogues(
        dialogues, domain_agnostic=args.domain_agnostic, built={"files": list(args.dialogues), "split": args.split}
    )
    graph.save(args.out, overwrite=args.force)
    print(f"wrote {graph!r} to {args.out}")
    return 0


@checks_outputs
def cmd_label(args: argparse.Namespace) -> int:
    """``simscore contexts flows label``: write the contexts with flow labels and pattern tags."""
    from contexts.context import ContextSet
    from contexts.flows import FlowGraph
    from contexts.flows.labels import flow_summary, label_contexts

    graph = FlowGraph.load(args.graph)
    contexts = ContextSet.read_jsonl(args.contexts)
    labelled = label_contexts(contexts, graph, _dialogues(args.dialogues, args), name=args.name)
    labelled.to_jsonl(args.out, overwrite=args.force)
    summary = flow_summary(labelled)
    print(
        f"wrote {len(labelled)} labelled contexts to {args.out}: {summary.unseen_contexts} on unseen flows "
        f"({summary.unseen_context_share:.1%}), {summary.unseen_dialogues} of {summary.dialogues} dialogues unseen"
    )
    return 0


@checks_outputs
def cmd_summary(args: argparse.Namespace) -> int:
    """``simscore contexts flows summary``: describe a graph and / or a labelled context set."""
    from contexts.context import ContextSet
    from contexts.flows import FlowGraph
    from contexts.flows.labels import flow_summary

    if args.contexts is None and args.graph is None:
        raise ValueError("give a labelled context set, --graph, or both")
    graph = None if args.graph is None else FlowGraph.load(args.graph)
    if graph is not None and args.contexts is None:
        facts = graph.describe()
        print(json.dumps({"graph": facts}, indent=2) if args.json else f"graph: {FlowGraph.format_description(facts)}")
        return 0
    summary = flow_summary(ContextSet.read_jsonl(args.contexts), graph)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2, allow_nan=True))
    else:
        print(summary.format())
    return 0


@checks_outputs
def cmd_sample(args: argparse.Namespace) -> int:
    """``simscore contexts flows sample``: write a subset balanced between strata."""
    from contexts.context import ContextSet
    from contexts.flows.labels import sample_balanced

    sample = sample_balanced(
        ContextSet.read_jsonl(args.contexts), by=args.by, per_stratum=args.per_stratum, seed=args.seed, name=args.name
    )
    sample.to_jsonl(args.out, overwrite=args.force)
    sizes = sample.built["sampled"]["strata"]
    print(
        f"wrote {len(sample)} contexts ({sample.built['sampled']['per_stratum']} of each of "
        f"{', '.join(f'{k} ({v})' for k, v in sizes.items())}) to {args.out}"
    )
    return 0


@checks_outputs
def cmd_plot(args: argparse.Namespace) -> int:
    """``simscore contexts flows plot``: the figure of the most frequent paths and the exits of test dialogues."""
    from contexts.flows import FlowGraph
    from contexts.flows.plot import plot_flows

    graph = FlowGraph.load(args.graph)
    walks = None if not args.test else [graph.walk(d) for d in _dialogues(args.test, args)]
    plot_flows(graph, args.out, walks, top=args.top, overwrite=args.force)
    print(f"wrote {args.out}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Add ``flows`` (build / label / summary / sample / plot) to the ``contexts`` sub-commands.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["flows", "build", "train.jsonl", "--out", "g.json", "--domain-agnostic"])
    >>> args.func is cmd_build, args.dialogues, args.domain_agnostic
    (True, ['train.jsonl'], True)
    """
    parser = subparsers.add_parser("flows", help="conversation-flow graphs: seen and unseen flows, complex patterns")
    sub = parser.add_subparsers(dest="flows_command", metavar="SUBCOMMAND")
    sub.required = True

    build = sub.add_parser("build", help="build the flow graph of training dialogues")
    build.add_argument("dialogues", nargs="+", metavar="DIALOGUES", type=input_file, help="training dialogues (files)")
    build.add_argument("--out", "-o", required=True, type=output_file, help="flow-graph file (JSON)")
    build.add_argument("--domain-agnostic", action="store_true", help="drop the domain from slot names (FRAPI's nodes)")
    _add_input_options(build)
    build.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    build.set_defaults(func=cmd_build)

    label = sub.add_parser("label", help="tag each context with seen/unseen flow and complex patterns")
    label.add_argument("contexts", type=input_file, help="context-set file (JSON Lines) collected from the --dialogues")
    label.add_argument("--graph", required=True, type=input_file, help="flow-graph file of the training dialogues")
    label.add_argument("--dialogues", nargs="+", required=True, metavar="FILE", type=input_file,
                       help="the dialogues the contexts were collected from")
    label.add_argument("--out", "-o", required=True, type=output_file, help="labelled context-set file (JSON Lines)")
    label.add_argument("--name", help="name of the labelled set (default: the input's)")
    _add_input_options(label)
    label.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    label.set_defaults(func=cmd_label)

    summary = sub.add_parser("summary", help="nodes, edges, unseen-flow shares and pattern counts")
    summary.add_argument("contexts", nargs="?", type=input_file, help="labelled context-set file")
    summary.add_argument("--graph", type=input_file, help="flow-graph file")
    summary.add_argument("--json", action="store_true", help="print the summary as JSON")
    summary.set_defaults(func=cmd_summary)

    sample = sub.add_parser("sample", help="a seeded subset balanced between strata (default: seen and unseen flows)")
    sample.add_argument("contexts", type=input_file, help="labelled context-set file")
    sample.add_argument("--out", "-o", required=True, type=output_file, help="output file (JSON Lines)")
    sample.add_argument("--by", default="flow", help="metadata key of the strata (default flow; e.g. flow_prefix)")
    sample.add_argument("--per-stratum", type=positive_int, metavar="N",
                        help="contexts per stratum (default: the smallest stratum's size)")
    sample.add_argument("--seed", type=seed, default=0, help="which contexts are drawn (default 0)")
    sample.add_argument("--name", help="name of the sampled set")
    sample.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    sample.set_defaults(func=cmd_sample)

    plot = sub.add_parser("plot", help="figure: most frequent training paths, where test dialogues leave the graph")
    plot.add_argument("--graph", required=True, type=input_file, help="flow-graph file")
    plot.add_argument("--out", "-o", required=True, type=output_file, help="PNG file")
    plot.add_argument("--test", nargs="+", metavar="FILE", type=input_file, help="test dialogues whose exits are drawn")
    plot.add_argument("--top", type=positive_int, default=8, help="paths drawn (default 8, at most 8)")
    _add_input_options(plot)
    plot.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    plot.set_defaults(func=cmd_plot)
