"""The ``simscore contexts`` commands: build and inspect context-set files.

* ``simscore contexts gen --out C_gen.jsonl`` — the C_gen grid (default: the paper's 1,296
  contexts; ``--levels``, ``--slots``, ``--value``, ``--methods`` change it);
* ``simscore contexts collect LOGS... --out C_col.jsonl`` — C_col from dialogue logs (or
  ConvLab-3 ``dialogues.json`` files with ``--convlab [--convlab-domain D]``, or PyDial
  belief logs with ``--pydial``); dialogues skipped for another domain are reported as a
  warning on stderr;
* ``simscore contexts info FILE`` — name, domain, size, hash and counts by source, turn and
  method (``--json`` for machine-readable output);
* ``simscore contexts export --format convlab3|convlab2 FILE --out states.jsonl`` — one
  ConvLab dialogue state per context, for a ConvLab policy run in its own environment
  (``examples/convlab_answer_states.py``; see :mod:`policies.convlab`);
* ``simscore contexts flows build|label|summary|sample|plot`` — conversation-flow graphs and
  flow-labelled context sets (:mod:`simscore.app.cli.flows`);
* ``simscore contexts transcripts FILE --out-contexts C --out-responses R`` — contexts and the
  logged agent's responses from chat transcripts or τ²-bench results (:mod:`simscore.app.cli.transcripts`).

``--ontology`` with ``--venues`` selects a user-supplied domain instead of the shipped one.
The ``contexts`` package is imported only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any

from simscore.app.cli.args import checks_outputs, convlab_domain, input_file, output_file, positive_int
from simscore.errors import InvalidContextError, SkippedDialoguesWarning
from simscore.io.untrusted import terminal_text

if TYPE_CHECKING:
    from contexts.context import ContextSet
    from contexts.domain import Domain

__all__ = ["add_subcommands", "cmd_gen", "cmd_collect", "cmd_info", "cmd_export", "context_set_summary"]


def _float_list(text: str) -> tuple[float, ...]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("expected numbers separated by commas")
    try:
        return tuple(float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def _name_list(text: str) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    if not parts:
        raise argparse.ArgumentTypeError("expected names separated by commas")
    return parts


def _slot_value(text: str) -> tuple[str, str]:
    slot, sep, value = text.partition("=")
    if not sep or not slot.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected SLOT=VALUE, got {text!r}")
    return slot.strip(), value.strip()


def _add_domain_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ontology", type=input_file, help="ontology JSON of a user-supplied domain (with --venues)")
    parser.add_argument("--venues", type=input_file, help="venues (.json, .csv or SQLite .db) of a user-supplied domain")


def _domain(args: argparse.Namespace) -> Domain:
    from contexts.domain import default_domain, load_domain

    if (args.ontology is None) != (args.venues is None):
        raise InvalidContextError("--ontology and --venues must be given together")
    if args.ontology is None:
        return default_domain()
    return load_domain(args.ontology, args.venues)


@checks_outputs
def cmd_gen(args: argparse.Namespace) -> int:
    """``simscore contexts gen``: write the C_gen grid."""
    from contexts.generate import GridSpec, generate_grid

    options: dict[str, Any] = {}
    if args.slots is not None:
        options["slots"] = args.slots
    if args.levels is not None:
        options["levels"] = args.levels
    if args.methods is not None:
        options["methods"] = args.methods
    if args.value:
        options["values"] = dict(args.value)
    spec = GridSpec(**options)
    context_set = generate_grid(spec, domain=_domain(args), name=args.name)
    context_set.to_jsonl(args.out, overwrite=args.force)
    print(f"wrote {len(context_set)} contexts to {args.out} (content hash {context_set.content_hash[:12]})")
    return 0


@checks_outputs
def cmd_collect(args: argparse.Namespace) -> int:
    """``simscore contexts collect``: write C_col from dialogue logs, ConvLab-3 files or PyDial belief logs."""
    from contexts.collect import collect_contexts, import_convlab
    from contexts.pydial import import_pydial

    if args.convlab and args.pydial:
        raise InvalidContextError("--convlab and --pydial exclude each other (one kind of input per run)")
    if args.skip_unknown_values and not (args.convlab or args.pydial):
        raise InvalidContextError("--skip-unknown-values applies to --convlab and --pydial input only")
    if args.convlab_domain is not None and not args.convlab:
        raise InvalidContextError("--convlab-domain applies to --convlab input only")
    domain = _domain(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkippedDialoguesWarning)
        if args.convlab or args.pydial:
            options: dict[str, Any] = {}
            if args.convlab and args.convlab_domain is not None:
                options["convlab_domain"] = args.convlab_domain
            importer = import_convlab if args.convlab else import_pydial
            parts = [
                importer(
                    path,
                    domain=domain,
                    name=args.name,
                    dialogues_per_source=args.dialogues_per_source,
                    deduplicate=args.deduplicate,
                    skip_unknown_values=args.skip_unknown_values,
                    **options,
                )
                for path in args.logs
            ]
            context_set = parts[0]
            for part in parts[1:]:
                context_set = context_set.union(part, name=args.name)
        else:
            context_set = collect_contexts(
                args.logs,
                dialogues_per_source=args.dialogues_per_source,
                deduplicate=args.deduplicate,
                name=args.name,
                domain=domain,
            )
    for warning in caught:
        if issubclass(warning.category, SkippedDialoguesWarning):
            print(f"simscore contexts collect: warning: {terminal_text(str(warning.message))}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    context_set.to_jsonl(args.out, overwrite=args.force)
    dialogues = len({(c.metadata.get("source_name"), c.metadata["dialogue_id"]) for c in context_set})
    print(
        f"wrote {len(context_set)} contexts from {dialogues} dialogues to {args.out} "
        f"(content hash {context_set.content_hash[:12]})"
    )
    return 0


@checks_outputs
def cmd_export(args: argparse.Namespace) -> int:
    """``simscore contexts export``: write one ConvLab state per context (the two-environment workflow)."""
    from contexts.context import ContextSet
    from policies.convlab import write_convlab_states

    context_set = ContextSet.read_jsonl(args.file, ontology=_domain(args).ontology)
    count = write_convlab_states(
        context_set,
        args.out,
        state_format=args.format,
        domain=args.convlab_domain,
        min_probability=args.min_probability,
        overwrite=args.force,
    )
    layout = {"convlab3": "ConvLab-3", "convlab2": "ConvLab-2"}[args.format]
    print(f"wrote {count} {layout} states ({args.convlab_domain!r} domain) of {args.file} to {args.out}")
    return 0


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def context_set_summary(context_set: ContextSet) -> dict[str, Any]:
    """Name, domain, size, hash and counts by source, turn index and top method.

    Turn counts are keyed by the turn index as a string (``"-"`` for contexts without one).
    """
    by_source = Counter(c.metadata["source"] for c in context_set)
    by_turn = Counter(c.metadata["turn_index"] for c in context_set)
    by_method = Counter(c.belief.top_method() for c in context_set)
    turns = sorted(t for t in by_turn if t is not None)
    turn_counts = {str(t): by_turn[t] for t in turns}
    if None in by_turn:
        turn_counts["-"] = by_turn[None]
    built = context_set.built
    return {
        "name": context_set.name,
        "domain": context_set.domain,
        "contexts": len(context_set),
        "content_hash": context_set.content_hash,
        "built_by": built.get("generator") or built.get("importer") or built.get("collector"),
        "by_source": dict(sorted(by_source.items())),
        "by_turn": turn_counts,
        "by_method": dict(by_method.most_common()),
    }


@checks_outputs
def cmd_info(args: argparse.Namespace) -> int:
    """``simscore contexts info``: describe a context-set file."""
    from contexts.context import ContextSet

    summary = context_set_summary(ContextSet.read_jsonl(args.file, ontology=_domain(args).ontology))
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{args.file}: {summary['name']!r}, domain {summary['domain']!r}, {summary['contexts']} contexts")
    print(f"content hash: {summary['content_hash']}")
    if summary["built_by"]:
        print(f"built by:     {terminal_text(str(summary['built_by']))}")
    for title, key in (("source", "by_source"), ("turn", "by_turn"), ("method", "by_method")):
        print(f"by {title}:")
        for value, count in summary[key].items():
            print(f"  {terminal_text(str(value)):<16} {count:>8}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Add the ``contexts`` command (gen / collect / info / export / flows) to an argparse sub-parser set.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["contexts", "info", "c.jsonl"])
    >>> args.func is cmd_info, args.file
    (True, 'c.jsonl')
    """
    parser = subparsers.add_parser("contexts", help="build and inspect context sets (C_gen, C_col)")
    sub = parser.add_subparsers(dest="contexts_command", metavar="SUBCOMMAND")
    sub.required = True

    gen = sub.add_parser("gen", help="generate the C_gen grid of belief states")
    gen.add_argument("--out", "-o", required=True, type=output_file, help="output file (JSON Lines)")
    gen.add_argument("--name", default="C_gen", help="name of the context set (default C_gen)")
    gen.add_argument("--levels", type=_float_list, help="top-value probabilities, e.g. 0,0.2,0.4,0.6,0.8,1")
    gen.add_argument("--slots", type=_name_list, help="grid slots (default area,pricerange,food)")
    gen.add_argument(
        "--value", type=_slot_value, action="append", metavar="SLOT=VALUE",
        help="representative value of a slot (repeatable; default: the most common value)",
    )
    gen.add_argument("--methods", type=_name_list, help="method values (default: all six)")
    gen.add_argument("--force", action="store_true", help="replace the output file if it exists")
    _add_domain_options(gen)
    gen.set_defaults(func=cmd_gen)

    collect = sub.add_parser("collect", help="collect C_col from dialogue logs, ConvLab-3 data or PyDial beliefs")
    collect.add_argument(
        "logs", nargs="+", metavar="LOG", type=input_file,
        help="dialogue-log files (JSON Lines), or ConvLab-3 dialogues.json files (--convlab), or PyDial belief logs "
        "(--pydial)",
    )
    collect.add_argument("--out", "-o", required=True, type=output_file, help="output file (JSON Lines)")
    collect.add_argument("--name", default="C_col", help="name of the context set (default C_col)")
    collect.add_argument(
        "--dialogues-per-source", type=positive_int, metavar="N", help="use the first N dialogues of each source"
    )
    collect.add_argument("--deduplicate", action="store_true", help="drop repeated belief states")
    collect.add_argument("--convlab", action="store_true", help="the inputs are ConvLab-3 dialogues.json files")
    collect.add_argument(
        "--convlab-domain", metavar="DOMAIN",
        help="with --convlab: the ConvLab domain whose dialogues and states are read (default restaurant)",
    )
    collect.add_argument(
        "--pydial", action="store_true",
        help="the inputs are PyDial belief logs (JSON Lines, format 'simscore-pydial-beliefs'; see contexts.pydial)",
    )
    collect.add_argument(
        "--skip-unknown-values", action="store_true",
        help="with --convlab or --pydial: treat values unknown to the ontology as none",
    )
    collect.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    _add_domain_options(collect)
    collect.set_defaults(func=cmd_collect)

    info = sub.add_parser("info", help="describe a context-set file")
    info.add_argument("file", type=input_file, help="context-set file (JSON Lines)")
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_domain_options(info)
    info.set_defaults(func=cmd_info)

    export = sub.add_parser(
        "export", help="write one ConvLab dialogue state per context (for a ConvLab policy in its own environment)"
    )
    export.add_argument("file", type=input_file, help="context-set file (JSON Lines)")
    export.add_argument(
        "--format", required=True, choices=("convlab3", "convlab2"),
        help="state layout: convlab3 (flat belief_state) or convlab2 (belief_state[domain]['semi'/'book'], "
        "which ConvLab-3's own rule-based MultiWOZ policy reads)",
    )
    export.add_argument("--out", "-o", required=True, type=output_file, help="states file (JSON Lines)")
    export.add_argument(
        "--convlab-domain", default="restaurant", type=convlab_domain, metavar="DOMAIN",
        help="ConvLab domain of the slots: attraction, hospital, hotel, police, restaurant (default), taxi or train"
    )
    export.add_argument(
        "--min-probability", type=_probability, default=0.0, metavar="P",
        help="write a slot's top value only if its probability exceeds P (default 0)",
    )
    export.add_argument("--force", action="store_true", help="replace the output file if it exists (never an input)")
    _add_domain_options(export)
    export.set_defaults(func=cmd_export)

    from simscore.app.cli import flows, transcripts  # they import this module's argument types

    flows.add_subcommands(sub)
    transcripts.add_subcommands(sub)
