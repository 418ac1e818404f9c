"""``simscore diagnose``: can a measure be fooled? (application layer: the command line).

The work is :func:`simscore.app.inspect.diagnose.diagnose`; this module parses its options.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

from simscore.app.cli.args import cache_folder, checks_outputs, input_file, measure_list, output_folder, seed
from simscore.app.inspect.diagnose import (
    DEFAULT_LEVELS,
    DEFAULT_TOLERANCE,
    OUTPUTS,
    default_contexts,
    default_real_policies,
    diagnose,
    wide_table,
    write_diagnose,
)
from simscore.checks import check_number
from simscore.measures import ALL_MEASURES, resolve_measures, with_cache_dir
from simscore.policy import run_policy
from simscore.responses import Responses
from simscore.stats import Bootstrap

logger = logging.getLogger("simscore.app.inspect.diagnose")

__all__ = ["add_subcommands", "cmd_diagnose"]


def _named_file(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name.strip(), input_file(path.strip())


def _levels(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected probabilities separated by commas, got {text!r}") from None


def _tolerance(text: str) -> float:
    try:
        return check_number("tolerance", float(text), minimum=0.0, finite=False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None


@checks_outputs
def cmd_diagnose(args: argparse.Namespace) -> int:
    """``simscore diagnose``: run the degenerate and real policies, score, write the report."""
    from contexts.context import ContextSet
    from policies.degenerate import degenerate_policies

    # fail on a bad name before any work
    measures = resolve_measures(args.measures, options=with_cache_dir(args.measures, {}, args.cache_dir))
    contexts = ContextSet.read_jsonl(args.contexts) if args.contexts else default_contexts(args.levels)
    progress = not args.quiet
    real = {}
    if not args.no_handcrafted:
        real = {name: run_policy(p, contexts, name=name, progress=progress)
                for name, p in default_real_policies().items()}
    for name, path in args.responses or ():
        if name in real:
            raise ValueError(f"--responses: the name {name!r} is used twice")
        real[name] = Responses.read_jsonl(path)
    degenerate = {name: run_policy(p, contexts, name=name, progress=progress)
                  for name, p in degenerate_policies(args.seed).items()}
    t0 = time.perf_counter()
    result = diagnose(real, degenerate, measures, tolerance=args.tolerance, bootstrap=Bootstrap(seed=args.seed),
                      progress=progress)
    logger.info("scored %d pairs in %.1f s", len(result.table) // max(1, len(measures)), time.perf_counter() - t0)
    path = write_diagnose(result, args.out, context_name=contexts.name, overwrite=args.force)
    print(wide_table(result.table).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"report: {path}")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore diagnose`` on the CLI's sub-command parsers.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_subcommands(parser.add_subparsers())
    >>> args = parser.parse_args(["diagnose", "--out", "d", "--measures", "action"])
    >>> args.func is cmd_diagnose, args.measures, args.levels, args.force
    (True, ['action'], (0.0, 0.5, 1.0), False)
    """
    p = subparsers.add_parser("diagnose", help="can a measure be fooled? degenerate policies vs real ones")
    p.add_argument("--out", "-o", required=True, type=output_folder,
                   help="output folder (diagnose.md, diagnose.csv, diagnose.png)")
    p.add_argument("--contexts", type=input_file, help="context set file (default: the generated grid at --levels)")
    p.add_argument("--levels", type=_levels, default=DEFAULT_LEVELS,
                   help="top-value levels of the default grid (default 0.0,0.5,1.0: 162 contexts)")
    p.add_argument("--responses", nargs="+", type=_named_file, metavar="NAME=FILE",
                   help="further real policies' responses files on the same contexts")
    p.add_argument("--no-handcrafted", action="store_true",
                   help="leave out the two default handcrafted policies (needs --responses)")
    p.add_argument("--measures", type=measure_list, default=list(ALL_MEASURES),
                   help="comma-separated measure names or groups ('all', 'action', 'text'); default: all eight")
    p.add_argument("--tolerance", type=_tolerance, default=DEFAULT_TOLERANCE,
                   help=f"gamed: within this of the real-vs-real mean (default {DEFAULT_TOLERANCE})")
    p.add_argument("--seed", type=seed, default=0, help="seed of the uniform policy and the bootstrap (default 0)")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.add_argument("--cache-dir", metavar="DIR", type=cache_folder,
                   help="keep the text measures' embeddings in this folder and read them back when run again "
                   "(speed only: no number changes)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_diagnose, output_names=OUTPUTS)
