"""``simscore view``: an HTML page of the contexts where two policies differ (application layer: the command line).

The work is :func:`simscore.app.inspect.view.write_view`; this module parses its options.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from simscore.app.cli.args import checks_outputs, input_file, output_file, positive_int, responses_file, seed
from simscore.app.inspect import view
from simscore.app.inspect.view import (
    action_differences,
    differing_ids,
    read_comparison,
    select_rows,
    write_view,
)
from simscore.comparison import check_inputs
from simscore.io import prepare_output
from simscore.responses import Responses
from simscore.samples import SampledResponses

__all__ = ["add_subcommands", "cmd_view"]


@checks_outputs
def cmd_view(args: argparse.Namespace) -> int:
    """``simscore view``: write the page for a saved comparison."""
    if args.seed is not None and args.sample is None:
        raise ValueError("--seed seeds the random sample of --sample N: give --sample with it, or leave --seed out")
    out = args.out or str(Path(args.comparison).with_suffix(".html"))
    inputs = [args.comparison, args.a, args.b, *([args.contexts] if args.contexts else [])]
    if args.out is None:  # a given --out was checked with the inputs before the command began
        prepare_output(out, inputs=inputs, overwrite=args.force)
    comparison = read_comparison(args.comparison)
    a, b = _side(args.a), _side(args.b)
    check_inputs(comparison, a, b, names={"a": f"--a {args.a}", "b": f"--b {args.b}"})  # the files it was made from
    contexts = None
    if args.contexts:
        from contexts.context import ContextSet

        contexts = ContextSet.read_jsonl(args.contexts)
    shown = {"limit": args.limit, "sample": args.sample, "seed": args.seed or 0, "max_rows": None if args.all else view.MAX_ROWS}
    differing = differing_ids(comparison, a, b)
    _, selection = select_rows(differing, **shown)  # too many contexts: stop here, naming the options
    path = write_view(comparison, a, b, out, contexts=contexts, overwrite=args.force, inputs=inputs, check=False,
                      **shown)
    chosen = f"; the page shows {selection}" if selection else ""
    in_action = action_differences(differing, a, b)
    print(
        f"wrote {path} ({len(differing)} of {len(comparison.scores)} contexts differ: {in_action} in the action, "
        f"{len(differing) - in_action} in the wording only{chosen})"
    )
    return 0


def _side(path: str) -> Responses | SampledResponses:
    """A responses file: one response per context as :class:`Responses`, else its K samples."""
    from simscore.responses_csv import read_sampled_responses

    sampled = read_sampled_responses(path)
    return sampled.sample(0) if sampled.n_samples == 1 else sampled


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore view``."""
    p = subparsers.add_parser("view", help="write an HTML page of the contexts where two policies differ")
    p.add_argument("comparison", type=input_file, help="comparison saved by `simscore compare A B --out CMP.json`")
    p.add_argument("--a", required=True, type=responses_file,
                   help="responses of policy A (JSON Lines, or sampled), as given to compare")
    p.add_argument("--b", required=True, type=responses_file,
                   help="responses of policy B (JSON Lines, or sampled), as given to compare")
    p.add_argument("--contexts", type=input_file, help="the context set (JSON Lines): adds beliefs and dialogue histories")
    p.add_argument("--out", type=output_file, help="the page to write (default: COMPARISON with .html)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    show = p.add_mutually_exclusive_group()
    show.add_argument("--limit", type=positive_int, metavar="N", help="only the first N differing contexts")
    show.add_argument("--sample", type=positive_int, metavar="N", help="a seeded random sample of N differing contexts")
    show.add_argument("--all", action="store_true",
                      help=f"every differing context, even more than {view.MAX_ROWS:,} (a page of tens or hundreds of MB)")
    p.add_argument("--seed", type=seed, default=None, help="seed of --sample (default 0); only with --sample")
    p.set_defaults(func=cmd_view)
