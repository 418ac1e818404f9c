"""``simscore view``: one self-contained HTML page of the contexts where two policies differ.

``simscore view CMP.json --a A.jsonl --b B.jsonl [--contexts C.jsonl] [--out page.html] [--force]``
reads a comparison saved by ``simscore compare A B --out CMP.json`` (which keeps scores, not
responses, hence ``--a`` / ``--b``), optionally the context set (belief summaries and dialogue
histories), and writes a page with inline CSS and JavaScript only (nothing is fetched when it
is opened). The page lists every context whose two responses differ (action or text), with both
responses and their per-context scores, and filters them by what differs (the action, or the
wording only), measure and threshold (e.g. ``tmr < 1``), turn and dialogue act; initial filters
can be given in the address
(``page.html#differs=action&measure=tmr&op=lt&threshold=1&turn=2&act=request&q=text``; a value
that is not percent-encoded properly is taken as it stands, one a menu does not offer is
ignored).

It opens on the contexts whose *actions* differ: what the policies decide is what a comparison
of behaviour is about, and two policies worded by different NLG instances differ in the wording
of most contexts where they decide alike. ``differs in: either`` shows every difference. A
context's dialogue history is shown turn by turn with its speaker: the texts of
``metadata["history"]`` are taken to alternate between user and system and to end with the
user's (the system decides after the user spoke), as :mod:`policies.prompts` and the ConvLab
export read them.

The data enters the page as JSON in a ``<script type="application/json">`` element, with
``<``, ``>``, ``&`` and the JavaScript line separators escaped; the script inserts every piece
of user data with ``textContent``. Same inputs give the same bytes.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore.app.cli_args import checks_outputs, input_file, output_file, positive_int, seed
from simscore.checks import check_int, check_seed
from simscore.compare import COMPARISON_VERSION, Comparison, check_inputs
from simscore.errors import ContextMismatchError, FileFormatError, excerpt
from simscore.formats import COMPARISON_FORMAT, FILE_FORMATS, detect_format, kind_mismatch
from simscore.io import atomic_open, format_problem, open_input, prepare_output, read_json
from simscore.measures import MEASURES
from simscore.responses import Response, Responses

if TYPE_CHECKING:
    from contexts.context import Context, ContextSet

__all__ = [
    "add_subcommands", "cmd_view", "read_comparison", "differing_ids", "action_differences", "select_rows", "view_data",
    "render_page", "write_view", "MAX_ROWS",
]

#: Values shown per slot in a belief summary (the most probable ones).
TOP_VALUES = 3

#: Differing contexts a page holds unless asked for more: about 300 bytes each (with a context
#: set about 1 kB), so a page of at most some 50 MB that a browser opens. Above it
#: :func:`write_view` stops and names the ways out: ``limit``, ``sample`` or ``max_rows=None``
#: (the command line's ``--limit N``, ``--sample N`` and ``--all``).
MAX_ROWS = 50_000

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def read_comparison(path: str | os.PathLike[str]) -> Comparison:
    """Read a comparison saved as ``.json`` by :meth:`~simscore.compare.Comparison.save`.

    Parameters
    ----------
    path : path-like
        The ``.json`` file (``simscore compare A B --out CMP.json``).

    Returns
    -------
    Comparison
        Scores (index ``context_id``), summary, signatures, policy names and info.

    Raises
    ------
    FileFormatError
        The file is missing, not JSON, or lacks the fields of a saved comparison.
    """
    p = Path(path)
    document = _comparison_document(p)
    signatures, summary, records = document["signatures"], document["summary"], document["scores"]
    scores = pd.DataFrame.from_records(records, columns=["context_id", *_record_columns(records)])
    scores = scores.set_index("context_id")
    for name in signatures:
        if name not in scores.columns:
            raise FileFormatError(p, f"scores lack the column of measure {name!r}")
        scores[name] = pd.to_numeric(scores[name], errors="coerce").astype("float64")
    summary_frame = pd.DataFrame.from_dict(summary, orient="index", columns=_SUMMARY_FIELDS)
    summary_frame.index.name = "measure"
    return Comparison(
        scores=scores,
        summary=summary_frame,
        signatures=dict(signatures),
        a=document.get("a") or "",
        b=document.get("b") or "",
        info=dict(document.get("info") or {}),
    )


_SUMMARY_FIELDS = ["mean", "count", "missing", "ci_low", "ci_high"]


def _is_number(value: Any) -> bool:
    """A JSON number (not a bool) or null: what a score or a summary statistic may be."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _comparison_document(p: Path) -> dict[str, Any]:
    """The JSON document of a saved comparison, every field checked (:func:`_check_comparison`)."""
    _refuse_other_suffix(p)
    document = read_json(p, expected=COMPARISON_FORMAT)
    if not isinstance(document, dict):
        raise FileFormatError(p, f"expected a JSON object, got {type(document).__name__}")
    found = detect_format(document)
    if found is not None and found != COMPARISON_FORMAT:
        raise FileFormatError(p, kind_mismatch(found, COMPARISON_FORMAT))
    missing = [key for key in ("simscore", "signatures", "summary", "scores") if key not in document]
    if missing:
        raise FileFormatError(p, f"not a saved comparison: missing {', '.join(missing)}")
    signatures, summary, records = document["signatures"], document["summary"], document["scores"]
    if not isinstance(signatures, dict) or not isinstance(summary, dict) or not isinstance(records, list):
        raise FileFormatError(p, "not a saved comparison: signatures/summary must be objects, scores a list")
    if "format" in document or "version" in document:  # none: version 1, before simscore 0.2.0
        problem = format_problem(document, COMPARISON_FORMAT, range(1, COMPARISON_VERSION + 1))
        if problem:
            raise FileFormatError(p, problem)
    _check_comparison(p, document)
    return document


def _refuse_other_suffix(p: Path) -> None:
    """A regular file not named ``.json`` is refused, naming its kind if it is another of simscore's
    files (a pipe's content is checked when it is read)."""
    if p.suffix.lower() == ".json" or (p.exists() and not p.is_file()):
        return
    if not p.is_file():
        raise FileFormatError(p, "expected a comparison saved as .json (simscore compare A B --out CMP.json)")
    with open_input(p) as handle:
        found = detect_format(handle.read(4096).decode("utf-8", "replace"))
    if found in FILE_FORMATS and found != COMPARISON_FORMAT:
        raise FileFormatError(p, kind_mismatch(found, COMPARISON_FORMAT), line=1)
    raise FileFormatError(p, "expected a comparison saved as .json (simscore compare A B --out CMP.json)")


def _check_comparison(path: Path, document: Mapping[str, Any]) -> None:
    """Every field of a saved comparison has the type :meth:`Comparison.to_json_dict` writes.

    A hand-edited file gets a :class:`FileFormatError` naming the field, not a traceback
    from deep inside the page builder.
    """
    for key in ("a", "b"):
        if document.get(key) is not None and not isinstance(document[key], str):
            raise _bad_field(path, key, "a string", document[key])
    if document.get("info") is not None and not isinstance(document["info"], dict):
        raise _bad_field(path, "info", "an object", document["info"])
    inputs = (document.get("info") or {}).get("inputs")
    if inputs is not None:
        _check_inputs(path, inputs)
    for name, signature in document["signatures"].items():
        if not isinstance(signature, str):
            raise _bad_field(path, f"signatures.{name}", "a string", signature)
    for name, stats in document["summary"].items():
        if not isinstance(stats, dict):
            raise _bad_field(path, f"summary.{name}", "an object", stats)
        for key, value in stats.items():
            if key not in _SUMMARY_FIELDS:
                raise FileFormatError(path, f"field summary.{name}: unknown statistic {excerpt(key, 60)}")
            if not _is_number(value):
                raise _bad_field(path, f"summary.{name}.{key}", "a number or null", value)
    _check_score_records(path, document["scores"], set(document["signatures"]))


def _bad_field(path: Path, field: str, expected: str, value: Any) -> FileFormatError:
    return FileFormatError(path, f"field {field}: expected {expected}, got {type(value).__name__} {excerpt(value, 60)}")


#: The fields of a saved comparison's record of one side's inputs (``info.inputs.a``, ``.b``).
_INPUT_FIELDS = (("policy", str, "a string"), ("contexts", int, "an integer"),
                 ("ids_sha256", str, "a SHA-256 (64 hex digits)"),
                 ("responses_sha256", str, "a SHA-256 (64 hex digits)"))


def _check_inputs(path: Path, inputs: Any) -> None:
    """``info.inputs``: per side, what the comparison was made from."""
    if not isinstance(inputs, dict):
        raise _bad_field(path, "info.inputs", "an object", inputs)
    for side in ("a", "b"):
        record = inputs.get(side)
        if not isinstance(record, dict):
            raise _bad_field(path, f"info.inputs.{side}", "an object", record)
        for key, kind, expected in _INPUT_FIELDS:
            value = record.get(key)
            digest = key.endswith("sha256")
            if not isinstance(value, kind) or isinstance(value, bool) or (
                    digest and not re.fullmatch(r"[0-9a-f]{64}", str(value))):
                raise _bad_field(path, f"info.inputs.{side}.{key}", expected, value)


def _check_score_records(path: Path, scores: Any, measures: set[str]) -> None:
    """``scores``: one record per context, a unique string id, numbers for the measures."""
    seen: set[str] = set()
    for k, record in enumerate(scores):
        if not isinstance(record, dict) or not isinstance(record.get("context_id"), str):
            raise FileFormatError(path, f"field scores[{k}]: every score record needs a string 'context_id'")
        if record["context_id"] in seen:
            raise FileFormatError(path, f"field scores[{k}]: context id {excerpt(record['context_id'])} appears twice")
        seen.add(record["context_id"])
        for key, value in record.items():
            if key in measures and not _is_number(value):
                raise _bad_field(path, f"scores[{k}].{key}", "a number or null", value)
            if isinstance(value, (dict, list)):
                raise _bad_field(path, f"scores[{k}].{key}", "a number, string, boolean or null", value)
            if key in _COUNT_COLUMNS and value is not None and (type(value) is not int or value < 0):
                raise _bad_field(path, f"scores[{k}].{key}", "a non-negative integer or null (a context's metadata)", value)
            if key in _TEXT_COLUMNS and value is not None and not isinstance(value, str):
                raise _bad_field(path, f"scores[{k}].{key}", "a string or null (a context's metadata)", value)


#: Metadata columns of a context set (``ContextSet.metadata_frame``) a comparison's records may
#: carry, with the types they have there.
_COUNT_COLUMNS = ("turn_index", "history_length")
_TEXT_COLUMNS = ("source", "dialogue_id", "method")


def _record_columns(records: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for record in records:
        seen.update((key, None) for key in record if key != "context_id")
    return list(seen)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def _response_json(response: Response) -> dict[str, Any]:
    action = response.action
    return {
        "act": None if action is None else str(action),
        "intent": None if action is None else action.intent,
        "text": response.text,
    }


def _differs(x: Response, y: Response) -> bool:
    return x.action != y.action or x.text != y.text


def _history_json(history: Iterable[str]) -> list[dict[str, str]]:
    """The dialogue so far, each text with its speaker: alternating, the last text the user's.

    >>> _history_json(["Hello.", "Thai food.", "Which area?", "North."])[-2:]
    [{'speaker': 'system', 'text': 'Which area?'}, {'speaker': 'user', 'text': 'North.'}]
    """
    texts = list(history)
    last = len(texts) - 1
    return [{"speaker": "user" if (last - k) % 2 == 0 else "system", "text": text} for k, text in enumerate(texts)]


def _belief_json(context: Context) -> dict[str, Any]:
    belief = context.belief
    slots = []
    for slot, dist in belief.slots.items():
        ranked = sorted(dist.items(), key=lambda kv: -kv[1])[:TOP_VALUES]
        slots.append({"slot": slot, "values": [[value, round(p, 4)] for value, p in ranked]})
    method = belief.top_method()
    act = belief.top_discourse_act()
    return {
        "slots": slots,
        "requested": [[slot, round(p, 4)] for slot, p in belief.requested.items()],
        "method": [method, round(belief.method[method], 4)],
        "discourse_act": [act, round(belief.discourse_act[act], 4)],
        "last_offered": belief.last_offered,
    }


def _turn(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def action_differences(differing: list[str], a: Responses, b: Responses) -> int:
    """How many of the differing contexts differ in the action; the rest differ in the wording only.

    Two policies worded by different NLG instances can agree on every act and still word it
    differently: a page that counted those as differences alone would say "1043 of 1296 contexts
    differ" at a TMR of 0.95.

    >>> from simscore import Act, Response, Responses
    >>> a = Responses({"c1": Response(Act.parse("bye()"), "Bye."), "c2": Response(Act.parse("bye()"), "Bye.")})
    >>> b = Responses({"c1": Response(Act.parse("bye()"), "Goodbye."), "c2": Response(Act.parse("hello()"), "Hi.")})
    >>> action_differences(["c1", "c2"], a, b)
    1
    """
    return sum(a[i].action != b[i].action for i in differing)


def differing_ids(comparison: Comparison, a: Responses, b: Responses) -> list[str]:
    """The compared context ids whose two responses differ (action or text), in the comparison's order.

    Raises
    ------
    ContextMismatchError
        A responses file lacks compared context ids.
    """
    ids = [str(i) for i in comparison.scores.index]
    _check_cover(ids, [("responses of A", a), ("responses of B", b)])
    return [i for i in ids if _differs(a[i], b[i])]


def _check_cover(ids: list[str], sources: list[tuple[str, Any]]) -> None:
    for label, source in sources:
        missing = [i for i in ids if i not in source]
        if missing:
            shown = ", ".join(repr(i) for i in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ContextMismatchError(f"{label} lack {len(missing)} compared context id(s): {shown}{more}")


def select_rows(differing: list[str], *, limit: int | None = None, sample: int | None = None, seed: int = 0,
                max_rows: int | None = MAX_ROWS) -> tuple[list[str], str | None]:
    """The differing ids a page shows, and how they were chosen (None: all of them).

    ``limit`` keeps the first N, ``sample`` a seeded random N (in the comparison's order);
    without either, more than ``max_rows`` is a :class:`ValueError` that names both (and
    ``max_rows=None``, the command line's ``--all``).

    >>> select_rows(["c1", "c2", "c3"], limit=2)
    (['c1', 'c2'], 'the first 2')
    >>> select_rows([f"c{i}" for i in range(10)], sample=3, seed=1)
    (['c3', 'c4', 'c7'], 'a random sample of 3 (seed 1)')
    """
    if limit is not None and sample is not None:
        raise ValueError("give a limit or a sample, not both")
    if limit is not None:
        check_int("limit", limit, minimum=1, error=ValueError)
        return differing[:limit], (f"the first {limit:,}" if limit < len(differing) else None)
    if sample is not None:
        check_int("sample", sample, minimum=1, error=ValueError)
        if sample >= len(differing):
            return differing, None
        rng = np.random.default_rng(check_seed("seed", seed, error=ValueError))
        chosen = np.sort(rng.choice(len(differing), size=sample, replace=False))
        return [differing[k] for k in chosen], f"a random sample of {sample:,} (seed {seed})"
    if max_rows is not None and len(differing) > max_rows:
        raise ValueError(
            f"{len(differing):,} contexts differ: a page of all of them would be about "
            f"{len(differing) * 300 / 2**20:,.0f} MB or more (more than {max_rows:,} contexts). Give --sample N for a "
            f"seeded random sample (e.g. --sample {max_rows // 5:,}), --limit N for the first N, or --all for every one"
        )
    return differing, None


def view_data(
    comparison: Comparison,
    a: Responses,
    b: Responses,
    contexts: ContextSet | None = None,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_rows: int | None = MAX_ROWS,
) -> dict[str, Any]:
    """The page's data: the differing contexts with responses, scores, beliefs and histories.

    Parameters
    ----------
    comparison : Comparison
        The scores (from :func:`~simscore.compare.compare` or :func:`read_comparison`).
    a, b : Responses
        The two policies' responses; they must cover every compared context id.
    contexts : ContextSet, optional
        Adds belief summaries, dialogue histories and turn indices.
    limit, sample, seed, max_rows
        Which differing contexts the page holds (:func:`select_rows`): by default all, up to
        :data:`MAX_ROWS`.

    Returns
    -------
    dict
        Plain JSON types only: titles, measures (name, level, mean, CI), counts and one row per
        context whose responses differ (in the comparison's order; ``differs`` says whether in
        the action or in the wording only, ``history`` holds ``{"speaker", "text"}`` objects),
        ``differing`` (how many differ) and ``selection`` (how the rows were chosen, or None
        for all).

    Raises
    ------
    ContextMismatchError
        A responses file or the context set lacks compared context ids.
    ValueError
        More than ``max_rows`` contexts differ and neither ``limit`` nor ``sample`` was given.
    """
    ids = [str(i) for i in comparison.scores.index]
    differing = differing_ids(comparison, a, b)
    if contexts is not None:
        _check_cover(ids, [("the context set", contexts)])
    shown, selection = select_rows(differing, limit=limit, sample=sample, seed=seed, max_rows=max_rows)
    measures = list(comparison.measures)
    scores = comparison.scores
    has_turn = "turn_index" in scores.columns
    position_of = {context_id: k for k, context_id in enumerate(ids)}
    rows = []
    for context_id in shown:
        x, y = a[context_id], b[context_id]
        values = scores.iloc[position_of[context_id]]
        row: dict[str, Any] = {
            "id": context_id,
            "a": _response_json(x),
            "b": _response_json(y),
            "scores": {m: _number(values[m]) for m in measures},
            "differs": "action" if x.action != y.action else "wording",
            "turn": _turn(values["turn_index"]) if has_turn else None,
            "dialogue": None,
            "history": [],
            "belief": None,
        }
        if contexts is not None:
            context = contexts[context_id]
            row["turn"] = context.metadata.get("turn_index")
            row["dialogue"] = context.metadata.get("dialogue_id")
            row["history"] = _history_json(context.metadata.get("history", ()))
            row["belief"] = _belief_json(context)
        rows.append(row)
    summary = comparison.summary
    measure_rows = []
    for name in measures:
        known = MEASURES.get(name)
        stats = summary.loc[name] if name in summary.index else {}
        measure_rows.append({
            "name": name,
            "level": getattr(known, "level", None),
            "higher_is_better": getattr(known, "higher_is_better", True),
            "mean": _number(stats.get("mean")),
            "ci_low": _number(stats.get("ci_low")),
            "ci_high": _number(stats.get("ci_high")),
        })
    return {
        "a": comparison.a or a.policy or "A",
        "b": comparison.b or b.policy or "B",
        "total": len(ids),
        "differing": len(differing),
        "differing_actions": action_differences(differing, a, b),
        "selection": selection,
        "measures": measure_rows,
        "has_contexts": contexts is not None,
        "rows": rows,
    }


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, ``<!--`` or line separators)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def render_page(data: Mapping[str, Any]) -> str:
    """The HTML page for :func:`view_data`'s result (inline CSS and JavaScript, no network)."""
    title = html.escape(f"simscore view: {data['a']} vs {data['b']}", quote=True)
    parts = {"TITLE": title, "CSS": _CSS, "JS": _JS, "DATA": _script_json(dict(data))}
    return re.sub(r"%(TITLE|CSS|JS|DATA)%", lambda match: parts[match.group(1)], _PAGE)


def write_view(
    comparison: Comparison,
    a: Responses,
    b: Responses,
    path: str | os.PathLike[str],
    *,
    contexts: ContextSet | None = None,
    overwrite: bool = False,
    inputs: Iterable[str | os.PathLike[str]] = (),
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    max_rows: int | None = MAX_ROWS,
    check: bool = True,
) -> Path:
    """Write the view page of a comparison, atomically.

    Parameters
    ----------
    comparison : Comparison
        From :func:`~simscore.compare.compare` or :func:`read_comparison`.
    a, b : Responses
        The two policies' responses.
    path : path-like
        The ``.html`` file to write.
    contexts : ContextSet, optional
        Adds belief summaries and dialogue histories.
    overwrite : bool
        Replace an existing file (the command line's ``--force``).
    inputs : paths
        Files read to build the page; the output is never one of them.
    limit, sample, seed, max_rows
        Which differing contexts the page holds (:func:`select_rows`); by default all of
        them, up to :data:`MAX_ROWS`.
    check : bool, default True
        Refuse ``a`` and ``b`` unless they are the responses the comparison was made from
        (:func:`simscore.compare.check_inputs`; a comparison saved before simscore 0.2.0
        cannot be checked, and a warning says so).

    Returns
    -------
    pathlib.Path
        The written page.

    Raises
    ------
    InputMismatchError
        ``a`` or ``b`` are not the comparison's responses (the message names the side and what
        differs, and a swapped pair as such).
    OutputExistsError
        ``path`` exists (and not ``overwrite``) or is one of ``inputs``.
    ContextMismatchError
        The responses or contexts lack compared context ids.
    ValueError
        More than ``max_rows`` contexts differ and neither ``limit`` nor ``sample`` was given.
    """
    target = prepare_output(path, inputs=inputs, overwrite=overwrite)
    if check:
        check_inputs(comparison, a, b)
    data = view_data(comparison, a, b, contexts, limit=limit, sample=sample, seed=seed, max_rows=max_rows)
    page = render_page(data)
    with atomic_open(target, "w") as handle:
        handle.write(page)
    return target


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
    a = Responses.read_jsonl(args.a)
    b = Responses.read_jsonl(args.b)
    check_inputs(comparison, a, b, names={"a": f"--a {args.a}", "b": f"--b {args.b}"})  # the files it was made from
    contexts = None
    if args.contexts:
        from contexts.context import ContextSet

        contexts = ContextSet.read_jsonl(args.contexts)
    shown = {"limit": args.limit, "sample": args.sample, "seed": args.seed or 0, "max_rows": None if args.all else MAX_ROWS}
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


def add_subcommands(subparsers: Any) -> None:
    """Register ``simscore view``."""
    p = subparsers.add_parser("view", help="write an HTML page of the contexts where two policies differ")
    p.add_argument("comparison", type=input_file, help="comparison saved by `simscore compare A B --out CMP.json`")
    p.add_argument("--a", required=True, type=input_file, help="responses of policy A (JSON Lines), as given to compare")
    p.add_argument("--b", required=True, type=input_file, help="responses of policy B (JSON Lines), as given to compare")
    p.add_argument("--contexts", type=input_file, help="the context set (JSON Lines): adds beliefs and dialogue histories")
    p.add_argument("--out", type=output_file, help="the page to write (default: COMPARISON with .html)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    show = p.add_mutually_exclusive_group()
    show.add_argument("--limit", type=positive_int, metavar="N", help="only the first N differing contexts")
    show.add_argument("--sample", type=positive_int, metavar="N", help="a seeded random sample of N differing contexts")
    show.add_argument("--all", action="store_true",
                      help=f"every differing context, even more than {MAX_ROWS:,} (a page of tens or hundreds of MB)")
    p.add_argument("--seed", type=seed, default=None, help="seed of --sample (default 0); only with --sample")
    p.set_defaults(func=cmd_view)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>%CSS%</style>
</head>
<body>
<header>
<div class="titles"><h1 id="title">%TITLE%</h1>
<p id="overview"></p></div>
<table id="summary"><thead><tr><th>measure</th><th>level</th><th>mean</th><th>CI</th></tr></thead>
<tbody></tbody></table>
</header>
<form id="filters" onsubmit="return false">
<label>differs in <select id="differs"><option value="action">the action</option>
<option value="wording">the wording only</option><option value="">either</option></select></label>
<label>measure <select id="measure"></select></label>
<select id="op" aria-label="comparison"><option value="any">any</option><option value="lt">&lt;</option>
<option value="le">&le;</option><option value="gt">&gt;</option><option value="ge">&ge;</option>
<option value="eq">=</option></select>
<input id="threshold" type="number" step="any" value="1" aria-label="threshold">
<label>turn <select id="turn"></select></label>
<label>dialogue act (A or B) <select id="act"></select></label>
<label>search <input id="search" type="search" placeholder="id, act or text"></label>
<span id="count" aria-live="polite"></span>
</form>
<main id="rows"></main>
<p id="more-wrap"><button id="more" type="button">show more</button></p>
<script type="application/json" id="data">%DATA%</script>
<script>%JS%</script>
</body>
</html>
"""

_CSS = """
:root { --ink: #1f2430; --muted: #5d6677; --line: #dde1e8; --bg: #f5f6f8; --a: #2563a8; --b: #b4531c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); background: var(--bg); }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 16px 24px;
         display: flex; flex-wrap: wrap; gap: 8px 48px; align-items: flex-start; }
header .titles { flex: 1 1 420px; }
h1 { font-size: 20px; margin: 0 0 4px; }
#overview { margin: 0 0 10px; color: var(--muted); }
table { border-collapse: collapse; }
#summary { font-size: 13px; }
#summary th, #summary td { padding: 1px 14px 1px 0; text-align: left; font-variant-numeric: tabular-nums; }
#summary th { color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--line); }
#filters { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: 10px 16px;
           align-items: center; padding: 10px 24px; background: #eef1f6; border-bottom: 1px solid var(--line); }
#filters select, #filters input { font: inherit; padding: 2px 4px; }
#threshold { width: 6em; }
#count { margin-left: auto; font-weight: 600; }
main { padding: 12px 24px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 0 0 12px;
        display: grid; grid-template-columns: minmax(260px, 1fr) 2fr; }
.card > h2 { grid-column: 1 / -1; margin: 0; padding: 6px 12px; font-size: 13px; font-weight: 600;
             background: #fafbfc; border-bottom: 1px solid var(--line); border-radius: 6px 6px 0 0; }
.card > h2 .meta { color: var(--muted); font-weight: 400; margin-left: 10px; }
.context { padding: 8px 12px; border-right: 1px solid var(--line); }
.context h3, .responses h3 { font-size: 11px; text-transform: uppercase; letter-spacing: .05em;
                             color: var(--muted); margin: 6px 0 3px; }
.belief { width: 100%; font-size: 12.5px; }
.belief td { padding: 1px 6px 1px 0; vertical-align: top; }
.belief td:first-child { color: var(--muted); white-space: nowrap; }
.p { color: var(--muted); font-variant-numeric: tabular-nums; }
ol.history { margin: 0; padding-left: 20px; font-size: 12.5px; }
.speaker { font-size: 11px; font-weight: 600; margin-right: 6px; color: var(--muted); }
.speaker.user { color: #3a6b35; }
.kind { font-size: 11px; padding: 0 6px; border-radius: 8px; background: #fde8e1; }
.kind.wording { background: #eef1f6; }
.responses { padding: 8px 12px; display: grid; grid-template-columns: 1fr 1fr; gap: 10px; align-content: start; }
.resp { border-left: 4px solid var(--a); padding: 2px 10px; }
.resp.b { border-color: var(--b); }
.resp .who { font-size: 11px; font-weight: 600; color: var(--a); }
.resp.b .who { color: var(--b); }
.act { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px;
       word-break: break-word; background: #f3f4f7; padding: 2px 4px; border-radius: 3px; }
.text { margin-top: 4px; }
.none { color: var(--muted); font-style: italic; }
.scores { grid-column: 1 / -1; display: flex; flex-wrap: wrap; gap: 6px; }
.chip { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #eef1f6;
        font-variant-numeric: tabular-nums; }
.chip.low { background: #fde8e1; }
.chip.high { background: #e3f3e6; }
#empty { color: var(--muted); padding: 24px 0; }
#more-wrap { text-align: center; }
@media (max-width: 800px) { .card, .responses { grid-template-columns: 1fr; }
                            .context { border-right: 0; } }
"""

_JS = r"""
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("data").textContent);
  var PAGE = 200;
  var shown = PAGE;
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(x) { return x === null || x === undefined ? "n/a" : Number(x).toFixed(3); }
  function option(select, value, label) {
    var o = el("option", null, label); o.value = value; select.appendChild(o);
  }
  function intentsOf(row) {
    var out = [];
    [row.a.intent, row.b.intent].forEach(function (i) { if (i && out.indexOf(i) < 0) out.push(i); });
    return out;
  }
  var measures = data.measures;
  var byName = {};
  measures.forEach(function (m) { byName[m.name] = m; });
  // the page opens on the action differences (what the policies decide), where it holds any
  var actionRows = data.rows.filter(function (row) { return row.differs === "action"; }).length;
  document.getElementById("overview").textContent =
    data.differing + " of " + data.total + " contexts have different responses: " + data.differing_actions +
    " in the action, " + (data.differing - data.differing_actions) + " in the wording only" +
    (data.selection ? "; this page holds " + data.selection + " of them" : "") +
    (data.has_contexts ? "." : "; no context set given, so no beliefs or histories.") +
    (actionRows && actionRows < data.rows.length ? " Shown first: the contexts whose actions differ (what the " +
      "policies decide); choose \u201ceither\u201d under \u201cdiffers in\u201d for the wording-only ones too." : "");
  var tbody = document.querySelector("#summary tbody");
  measures.forEach(function (m) {
    var tr = el("tr");
    tr.appendChild(el("td", null, m.name));
    tr.appendChild(el("td", null, m.level || ""));
    tr.appendChild(el("td", null, fmt(m.mean)));
    tr.appendChild(el("td", null, "[" + fmt(m.ci_low) + ", " + fmt(m.ci_high) + "]"));
    tbody.appendChild(tr);
  });
  var measureSel = document.getElementById("measure");
  measures.forEach(function (m) { option(measureSel, m.name, m.name); });
  var turns = [], acts = [];
  data.rows.forEach(function (row) {
    if (row.turn !== null && turns.indexOf(row.turn) < 0) turns.push(row.turn);
    intentsOf(row).forEach(function (i) { if (acts.indexOf(i) < 0) acts.push(i); });
  });
  turns.sort(function (x, y) { return x - y; });
  acts.sort();
  var turnSel = document.getElementById("turn"), actSel = document.getElementById("act");
  option(turnSel, "", "all");
  turns.forEach(function (t) { option(turnSel, String(t), String(t)); });
  option(actSel, "", "all");
  acts.forEach(function (a) { option(actSel, a, a); });
  var opSel = document.getElementById("op"), threshold = document.getElementById("threshold");
  var search = document.getElementById("search"), differsSel = document.getElementById("differs");
  if (byName.tmr) measureSel.value = "tmr";
  differsSel.value = actionRows ? "action" : "";
  // initial filters from the address, e.g. page.html#measure=tmr&op=lt&threshold=1&turn=2&act=request
  var controls = {differs: differsSel, measure: measureSel, op: opSel, threshold: threshold, turn: turnSel,
                  act: actSel, q: search};
  function decode(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }  // malformed escapes: the raw text
  }
  function offers(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }
  location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
    var k = pair.indexOf("=");
    if (k <= 0) return;
    var key = decode(pair.slice(0, k)), value = decode(pair.slice(k + 1));
    if (!Object.prototype.hasOwnProperty.call(controls, key)) return;
    var control = controls[key];
    if (control.tagName === "SELECT" && !offers(control, value)) return;  // e.g. a measure this page lacks
    control.value = value;
  });

  function keep(row) {
    if (differsSel.value !== "" && row.differs !== differsSel.value) return false;
    var op = opSel.value;
    if (op !== "any") {
      var v = row.scores[measureSel.value], t = parseFloat(threshold.value);
      if (v === null || v === undefined || isNaN(t)) return false;
      if (op === "lt" && !(v < t)) return false;
      if (op === "le" && !(v <= t)) return false;
      if (op === "gt" && !(v > t)) return false;
      if (op === "ge" && !(v >= t)) return false;
      if (op === "eq" && Math.abs(v - t) > 1e-9) return false;
    }
    if (turnSel.value !== "" && String(row.turn) !== turnSel.value) return false;
    if (actSel.value !== "" && intentsOf(row).indexOf(actSel.value) < 0) return false;
    var q = search.value.trim().toLowerCase();
    if (q) {
      var hay = [row.id, row.a.act, row.a.text, row.b.act, row.b.text].join("\n").toLowerCase();
      if (hay.indexOf(q) < 0) return false;
    }
    return true;
  }
  function response(side, name, r) {
    var box = el("div", "resp " + side);
    box.appendChild(el("div", "who", side.toUpperCase() + ": " + name));
    box.appendChild(r.act === null ? el("div", "none", "no action") : el("div", "act", r.act));
    box.appendChild(r.text === null ? el("div", "text none", "no text") : el("div", "text", r.text));
    return box;
  }
  function beliefBlock(parent, belief) {
    parent.appendChild(el("h3", null, "belief"));
    var table = el("table", "belief");
    function line(label, parts) {
      var tr = el("tr"); tr.appendChild(el("td", null, label));
      var td = el("td");
      parts.forEach(function (p, k) {
        if (k) td.appendChild(document.createTextNode(", "));
        td.appendChild(document.createTextNode(p[0] + " "));
        td.appendChild(el("span", "p", Number(p[1]).toFixed(2)));
      });
      if (!parts.length) td.appendChild(el("span", "none", "none"));
      tr.appendChild(td); table.appendChild(tr);
    }
    belief.slots.forEach(function (s) { line(s.slot, s.values); });
    line("requested", belief.requested);
    line("method", [belief.method]);
    line("discourse act", [belief.discourse_act]);
    if (belief.last_offered !== null) line("last offered", [[belief.last_offered, 1]]);
    parent.appendChild(table);
  }
  function card(row) {
    var c = el("section", "card");
    var h = el("h2", null, row.id);
    var meta = [];
    if (row.dialogue !== null) meta.push("dialogue " + row.dialogue);
    if (row.turn !== null) meta.push("turn " + row.turn);
    if (meta.length) h.appendChild(el("span", "meta", meta.join(" \u00b7 ")));
    h.appendChild(document.createTextNode(" "));
    h.appendChild(el("span", "kind " + row.differs, row.differs === "action" ? "action differs" : "wording only"));
    c.appendChild(h);
    var left = el("div", "context");
    if (row.belief) beliefBlock(left, row.belief);
    left.appendChild(el("h3", null, "dialogue so far (oldest first)"));
    if (row.history.length) {
      var ol = el("ol", "history");
      row.history.forEach(function (t) {
        var li = el("li");
        li.appendChild(el("span", "speaker " + t.speaker, t.speaker === "user" ? "User" : "System"));
        li.appendChild(el("span", "said", t.text));
        ol.appendChild(li);
      });
      left.appendChild(ol);
    } else {
      left.appendChild(el("div", "none", data.has_contexts ? "no history" : "no context set given"));
    }
    c.appendChild(left);
    var right = el("div", "responses");
    right.appendChild(response("a", data.a, row.a));
    right.appendChild(response("b", data.b, row.b));
    var chips = el("div", "scores");
    measures.forEach(function (m) {
      var v = row.scores[m.name], cls = "chip";
      if (v !== null && v !== undefined) {
        var good = m.higher_is_better ? v >= 0.999 : v <= 0.001;
        var bad = m.higher_is_better ? v < 0.5 : v > 0.5;
        cls += good ? " high" : bad ? " low" : "";
      }
      chips.appendChild(el("span", cls, m.name + " " + fmt(v)));
    });
    right.appendChild(chips);
    c.appendChild(right);
    return c;
  }
  var rowsEl = document.getElementById("rows"), countEl = document.getElementById("count");
  var more = document.getElementById("more");
  function render() {
    var kept = data.rows.filter(keep);
    while (rowsEl.firstChild) rowsEl.removeChild(rowsEl.firstChild);
    kept.slice(0, shown).forEach(function (row) { rowsEl.appendChild(card(row)); });
    if (!kept.length) rowsEl.appendChild(el("p", null, "No context matches these filters.")).id = "empty";
    countEl.textContent = kept.length + " of " + data.rows.length + " differing contexts" +
      (kept.length > shown ? " (first " + shown + " shown)" : "");
    countEl.setAttribute("data-count", String(kept.length));
    more.parentNode.style.display = kept.length > shown ? "" : "none";
  }
  function reset() { shown = PAGE; render(); }
  [differsSel, measureSel, opSel, threshold, turnSel, actSel, search].forEach(function (input) {
    input.addEventListener("input", reset); input.addEventListener("change", reset);
  });
  more.addEventListener("click", function () { shown += PAGE; render(); });
  render();
})();
"""
