"""``simscore compare A B [--measures ...] [--out PATH|-] [--format text|json|csv] [--score-only]``: score two
response logs against each other (application layer: the command line).
Errors print ``simscore compare: error: ...`` on stderr and exit with code 2.

``--contexts C.jsonl`` joins the context set's metadata onto the per-context scores; on
collected contexts (C_col) the intervals then resample whole dialogues, as the experiment's
report does (``--cluster COLUMN[,COLUMN]`` names other columns, ``--no-cluster`` makes every
context a unit; the summary says what was resampled). ``--by COLUMN`` then reports every
measure per stratum of that metadata column (e.g. ``flow`` = seen/unseen, see ``simscore
contexts flows``) with bootstrap intervals, and the difference between strata with a
permutation test (:mod:`simscore.stats.strata`) that moves the same units. ``--chance`` adds the chance
level (A's response to one context against B's to another, of another cluster:
:mod:`simscore.analysis.chance`), ``--divergence COLUMN[,COLUMN]`` the first turn at which the two part
ways in each dialogue those columns name (:mod:`simscore.analysis.divergence`). An existing ``--out``
file is replaced only with ``--force``, and never one of the inputs.

**Sampled responses.** Files of ``simscore respond --samples K`` (K >= 2 samples per context,
the same K on both sides: :mod:`simscore.samples`) are compared sample against sample: each
context's score is the mean over its K² cross pairs, and a second table gives per measure each
policy's agreement with itself (within A, within B), the agreement between them, the
normalised agreement ``between / mean(within A, within B)``, the gap and the one-sided
permutation test of "A and B differ more than each differs from itself" (``--permutations``
relabellings), the chance level with ``--chance-responses RANDOM.jsonl``, and per policy the distinct
actions and the act entropy per context (:mod:`simscore.stats.consistency`); ``--format json`` adds
it as ``"consistency"``.

``compare`` reads simscore's JSON Lines responses files and the CSV response logs of
:func:`simscore.responses_csv.read_responses_csv` (by suffix: ``.csv``; ``.jsonl``, ``.json``,
``.ndjson``; otherwise by content: JSON Lines if the file starts with ``{``). What it writes:

* ``--format text`` — the summary table (mean, confidence interval, counts per measure),
  headed by the two policies' names; ``--signatures`` adds every measure's signature;
* ``--format json`` — everything: the policies, provenance, bootstrap settings, the
  signatures, the summary and the per-context scores (:meth:`Comparison.to_json_dict
  <simscore.comparison.Comparison.to_json_dict>`; NaN is ``null``);
* ``--format csv`` — the per-context scores, one row per context.

Where: without ``--out`` to stdout (default format ``text``); with ``--out -`` to stdout
(default format ``json``), nothing else on stdout; with ``--out PATH`` to the file (format
from ``--format``, else from the suffix ``.json`` / ``.csv``), and the text summary and
``wrote PATH`` on stdout as before. ``--score-only`` prints only the mean of each measure,
one bare number per line in the order of ``--measures`` (``nan`` when undefined), for
scripts: ``read tmr dmr < <(simscore compare a.csv b.csv --measures tmr,dmr --score-only)``;
it combines with ``--out PATH`` but not with ``--out -`` or a ``--format`` for stdout.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import IO, TYPE_CHECKING, Any

from simscore.app.cli.args import (
    cache_folder,
    checks_outputs,
    column_list,
    input_file,
    installed_measures,
    measure_list,
    output_file,
    permutations,
    resamples,
    responses_file,
    seed,
)
from simscore.io.output import json_records
from simscore.io.untrusted import terminal_text
from simscore.stats import Bootstrap

if TYPE_CHECKING:
    from simscore.analysis.chance import ChanceLevel
    from simscore.analysis.divergence import FirstDivergence
    from simscore.comparison import Comparison
    from simscore.measures.base import Measure
    from simscore.responses import Responses
    from simscore.stats.strata import StratifiedComparison

__all__ = ["add_subcommands"]

logger = logging.getLogger("simscore.app.cli")


_SUFFIX_FORMATS = {".json": "json", ".csv": "csv"}


def _compare_output(args: argparse.Namespace) -> tuple[str | None, str]:
    """(file path or None for stdout, format) of ``compare``, with the flags checked."""
    to_stdout = args.out is None or args.out == "-"
    if args.score_only and to_stdout and (args.out == "-" or args.format is not None):
        raise ValueError(
            "--score-only prints only the scores on stdout; it cannot be combined with --out - or --format "
            "(give --out PATH to also write a file)"
        )
    if to_stdout:
        return None, args.format or ("json" if args.out == "-" else "text")
    if args.format is not None:
        return args.out, args.format
    suffix = os.path.splitext(args.out)[1].lower()
    if suffix not in _SUFFIX_FORMATS:
        raise ValueError(f"output path must end in .csv or .json (or give --format), got {args.out!r}")
    return args.out, _SUFFIX_FORMATS[suffix]


def _write(
    handle: IO[str], comparison: Comparison, fmt: str, heading: str, signatures: bool,
    strata: StratifiedComparison | None = None, chance: ChanceLevel | None = None,
    divergence: FirstDivergence | None = None,
) -> None:
    """Write the comparison in ``fmt`` to an open file; JSON and CSV are written as they are made."""
    if fmt == "json":
        extra: dict[str, Any] = {}
        if strata is not None:
            extra["strata"] = strata.to_json_dict()
        if chance is not None:
            extra["chance"] = {"means": chance.means, "pairs": chance.pairs, "possible": chance.possible,
                               "apart": list(chance.apart)}
        if divergence is not None:
            extra["first_divergence"] = {"measure": divergence.measure,
                                         "table": json_records(divergence.table),
                                         "distribution": json_records(divergence.distribution)}
        comparison.write_json(handle, extra=extra or None)
    elif fmt == "csv":
        comparison.write_csv(handle)
    else:
        handle.write(_text(comparison, heading, signatures, strata, chance, divergence))


def _text(comparison: Comparison, heading: str, signatures: bool, strata: StratifiedComparison | None,
          chance: ChanceLevel | None = None, divergence: FirstDivergence | None = None) -> str:
    lines = [heading, comparison.format_summary()]
    if comparison.consistency is not None:
        lines += ["", *map(terminal_text, comparison.consistency.format().splitlines())]
    if chance is not None:
        lines += ["", chance.format()]
    if divergence is not None:
        lines += ["", divergence.format()]
    if strata is not None:
        lines += ["", strata.format()]
    if signatures:
        lines.append("")
        lines += [f"{name:<9} {signature}" for name, signature in comparison.signatures.items()]
    return "\n".join(lines) + "\n"


def _default_measures() -> list[str]:
    """compare's default: every measure whose packages are installed; the log names what the text extra adds."""
    usable, missing = installed_measures()
    if missing:
        logger.info(
            "measures %s left out: their packages are not installed (pip install 'simscore-dialogue[text]'); "
            "scoring %s", ", ".join(missing), ", ".join(usable),
        )
    return usable


def _read_sides(args: argparse.Namespace) -> tuple[Any, Any, int, Any]:
    """A's and B's responses (one sample each: plain :class:`Responses`, compared as ever, byte for byte), the
    samples per context, and ``--chance-responses``' file (sampled responses only)."""
    from simscore.responses_csv import read_sampled_responses

    sampled_a, sampled_b = read_sampled_responses(args.a), read_sampled_responses(args.b)
    samples = max(sampled_a.n_samples, sampled_b.n_samples)
    chance = None if args.chance_responses is None else read_sampled_responses(args.chance_responses)
    if chance is not None and samples == 1:
        raise ValueError("--chance-responses applies to sampled responses (files of simscore respond --samples K, "
                         "K >= 2); for single responses --chance pairs A's and B's responses across contexts")
    if args.chance and samples > 1:
        raise ValueError("--chance pairs single responses across contexts; sampled responses take the chance level "
                         "of a random policy's responses: --chance-responses FILE")
    if samples == 1:
        return sampled_a.sample(0), sampled_b.sample(0), samples, None
    return sampled_a, sampled_b, samples, chance


@checks_outputs
def _cmd_compare(args: argparse.Namespace) -> int:
    from simscore.comparison import compare
    from simscore.io import atomic_open

    path, fmt = _compare_output(args)  # fail on bad flags and bad names before reading files
    if (args.by is not None or args.cluster is not None or args.divergence is not None) and args.contexts is None:
        raise ValueError("--by, --cluster and --divergence need --contexts (the context set whose metadata holds "
                         "the strata, clusters or dialogues)")
    measures = _compare_measures(args)
    a, b, samples, chance = _read_sides(args)
    metadata = None
    if args.contexts is not None:
        from contexts.context import ContextSet
        from simscore.stats.clusters import check_column

        metadata = ContextSet.read_jsonl(args.contexts).metadata_frame()
        columns = [("--by", args.by), *(("--cluster", c) for c in args.cluster or ()),
                   *(("--divergence", c) for c in args.divergence or ())]
        for option, column in columns:
            if column is not None:  # before any scoring
                check_column(metadata, column, role=option, where=f"the context set {args.contexts}")
    # collected contexts: whole dialogues resampled (the default, "auto"), as the experiment's report does
    clusters = None if args.no_cluster else args.cluster or "auto"
    bootstrap = Bootstrap(n_resamples=args.resamples, seed=args.seed)
    comparison = compare(a, b, measures, metadata=metadata, bootstrap=bootstrap, progress=not args.quiet,
                         clusters=clusters, chance=chance, n_permutations=args.permutations)
    strata = None
    if args.by is not None:  # the strata move the comparison's units
        strata = comparison.by_stratum(
            args.by, n_resamples=args.resamples, n_permutations=args.permutations, seed=args.seed,
        )
    chance, divergence = _chance_and_divergence(args, comparison, a, b, measures)
    names = [terminal_text(response.policy or path) for response, path in ((a, args.a), (b, args.b))]
    each = "" if samples == 1 else f", {samples} samples each"
    heading = f"{names[0]}  vs  {names[1]}  ({len(comparison.scores)} contexts{each})"
    if path is not None:
        with atomic_open(path, "w") as handle:
            _write(handle, comparison, fmt, heading, args.signatures, strata, chance, divergence)
    if args.score_only:
        sys.stdout.write("".join(f"{comparison.mean(name)!r}\n" for name in comparison.measures))
    elif path is None:
        _write(sys.stdout, comparison, fmt, heading, args.signatures, strata, chance, divergence)
    else:
        sys.stdout.write(_text(comparison, heading, args.signatures, strata, chance, divergence))
        print(f"wrote {path}")
    return 0


def _chance_and_divergence(
    args: argparse.Namespace, comparison: Comparison, a: Responses, b: Responses, measures: list[Measure],
) -> tuple[ChanceLevel | None, FirstDivergence | None]:
    """``--chance``'s level (same measures, pairs across the comparison's clusters) and ``--divergence``'s table."""
    chance = divergence = None
    if args.chance:
        from simscore.analysis.chance import shuffled_chance

        chance = shuffled_chance(comparison, a, b, measures, seed=args.seed)
    if args.divergence is not None:
        from simscore.analysis.divergence import first_divergence

        divergence = first_divergence(comparison, by=args.divergence, measure=comparison.measures[0])
    return chance, divergence


def _options_help() -> str:
    from simscore.measures import MEASURES, measure_options

    return "; ".join(f"{name}: {', '.join(measure_options(name))}" for name in MEASURES if measure_options(name))


def _compare_measures(args: argparse.Namespace) -> list[Measure]:
    """The measures of ``compare`` with ``--measure-option``, ``--device`` and ``--cache-dir``, checked before any work.

    ``--device`` is checked whichever measures run (a device torch cannot see is an error);
    given for measures that run no model, it changes nothing, and a warning says so.
    """
    from simscore.measures import (
        check_device,
        measure_options,
        options_from_assignments,
        resolve_measures,
        with_cache_dir,
        with_device,
    )

    device = None if args.device is None else check_device(args.device, name="--device")
    names = args.measures if args.measures is not None else _default_measures()
    options = with_device(names, options_from_assignments(args.measure_option), device)
    measures = resolve_measures(names, options=with_cache_dir(names, options, args.cache_dir))
    if device is not None and not any("device" in measure_options(m.name) for m in measures):
        logger.warning(
            "--device %s is not used: no measure here runs a model (%s); it applies to bertscore, emb_cos and emb_ang",
            args.device, ", ".join(m.name for m in measures),
        )
    return measures


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore compare`` on the CLI's sub-command parsers."""
    p = subparsers.add_parser("compare", help="score two response logs against each other")
    p.add_argument("a", type=responses_file, help="responses of policy A (simscore's JSON Lines responses file, or CSV)")
    p.add_argument("b", type=responses_file, help="responses of policy B (JSON Lines or CSV)")
    p.add_argument(
        "--measures",
        type=measure_list,
        default=None,
        help="comma-separated measure names or groups ('all', 'action', 'text'); default: every measure whose "
        "packages are installed (all eight with the text extra, else the action measures and bleu4; the log "
        "names the extra). The API's compare() defaults to the action measures instead: no model is loaded "
        "unless asked for",
    )
    p.add_argument(
        "--out", type=output_file,
        help="write the result to this file (format from --format, else .json: everything, .csv: per-context "
        "scores), or '-' for stdout (default format json)",
    )
    p.add_argument(
        "--format", choices=("text", "json", "csv"),
        help="text: the summary table; json: signatures, summary and per-context scores; csv: per-context scores "
        "(default: text on stdout, json for --out -, else by the --out suffix)",
    )
    p.add_argument(
        "--score-only", action="store_true",
        help="print only each measure's mean, one bare number per line in the order of --measures (nan if undefined)",
    )
    p.add_argument("--seed", type=seed, default=0, help="bootstrap and permutation seed (default 0)")
    p.add_argument("--resamples", type=resamples, default=1000, help="bootstrap resamples (default 1000; 0: no intervals)")
    p.add_argument("--signatures", action="store_true", help="also print every measure's signature (text format)")
    p.add_argument(
        "--contexts", metavar="FILE", type=input_file,
        help="the context set (JSON Lines) the responses answer: its metadata joins the per-context scores",
    )
    p.add_argument(
        "--by", metavar="COLUMN",
        help="with --contexts: every measure per stratum of this metadata column (e.g. flow, flow_prefix, "
        "pattern_repeat), with bootstrap intervals and a permutation test between strata",
    )
    units = p.add_mutually_exclusive_group()
    units.add_argument(
        "--cluster", metavar="COLUMN[,COLUMN]", type=column_list,
        help="with --contexts: the bootstrap (and with --by the permutation test) moves whole groups of contexts "
        "whose values in these metadata columns agree (default: the dialogues of collected contexts, "
        "source_name,dialogue_id; generated contexts are units of their own)",
    )
    units.add_argument(
        "--no-cluster", action="store_true",
        help="every context is a unit, also on collected contexts (turns the default clustering by dialogue off)",
    )
    p.add_argument(
        "--permutations", type=permutations, default=10_000,
        help="random splits of a Monte Carlo permutation test (default 10000; exact tests need none); also the "
        "relabellings of the self-consistency test of sampled responses",
    )
    p.add_argument(
        "--chance-responses", metavar="FILE", type=responses_file,
        help="sampled responses only: a random policy's responses (e.g. simscore respond random ...) over the same "
        "contexts, whose agreement with A's and B's samples is the chance level of the self-consistency table",
    )
    p.add_argument(
        "--divergence", metavar="COLUMN[,COLUMN]", type=column_list,
        help="with --contexts: per dialogue named by these metadata columns (e.g. task_id,trial), the first turn "
        "(turn_index) at which the first measure is below 1 -- where the two policies part ways -- and its "
        "distribution (simscore.analysis.divergence)",
    )
    p.add_argument(
        "--chance", action="store_true",
        help="also the chance level: A's response to one context vs B's to another (of another cluster: dialogue or "
        "task), over every such pair (a seeded sample beyond 100000), with the same measures (simscore.analysis.chance)",
    )
    p.add_argument("--force", action="store_true", help="replace the --out file if it exists (never an input)")
    p.add_argument(
        "--measure-option", action="append", default=[], metavar="MEASURE.OPTION=VALUE",
        help="configure one measure (repeatable; checked before any work, recorded in the signatures), e.g. "
        "bertscore.model=DIR bertscore.num_layers=17; the options: " + _options_help(),
    )
    p.add_argument(
        "--device", metavar="cpu|cuda|cuda:N",
        help="torch device of every model-backed measure (bertscore, emb_cos, emb_ang); checked before any work, "
        "whichever measures run (a device torch cannot see is an error; with no model-backed measure a warning says "
        "it is not used) (default: cpu)",
    )
    p.add_argument(
        "--cache-dir", metavar="DIR", type=cache_folder,
        help="keep the text measures' embeddings in this folder and read them back in later runs (speed only: "
        "no number changes; e.g. an experiment's DIR/cache/embeddings)",
    )
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (one appears on a terminal when embedding takes more than a second)")
    p.set_defaults(func=_cmd_compare)
