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
user's (the system decides after the user spoke), as :mod:`policies.lm.prompts` and the ConvLab
export read them; the contexts of agent transcripts (:mod:`contexts.transcripts`) name each
line's speaker (``user``, ``assistant``, ``tool``), and have no belief state to show.

Tool calls are shown call by call: a response whose action is a turn of tool calls (an
:class:`~simscore.acts.ActSequence`, or one call) lists each call's tool and its arguments, one
``name = value`` a line, A's and B's side by side, and marks a call the other side did not make
alike. A paired context (``simscore contexts transcripts --pair``) whose second agent was given
another history (``same_history`` false) says so: the history shown is the first agent's.

**Sampled responses** (``simscore respond --samples K``, compared with ``simscore compare``):
each side shows its distinct responses with how many of the K samples gave each (the most
frequent first), the scores are the comparison's (each the mean over the K x K cross pairs),
and a context differs where the two sides' samples differ as multisets (same responses in
other numbers count as a difference; ``action`` where the actions' multisets differ).

The data enters the page as JSON in a ``<script type="application/json">`` element, with
``<``, ``>``, ``&`` and the JavaScript line separators escaped; the script inserts every piece
of user data with ``textContent``. Same inputs give the same bytes.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simscore.acts import Act, ActSequence
from simscore.app.inspect.view_page import render_page
from simscore.checks import check_int, check_seed
from simscore.comparison import COMPARISON_VERSION, Comparison, ComparisonInfo, check_inputs
from simscore.errors import ContextMismatchError, FileFormatError, excerpt, json_excerpt, json_kind
from simscore.io import atomic_open, format_problem, open_input, prepare_output, read_json
from simscore.io.formats import COMPARISON_FORMAT, FILE_FORMATS, detect_format, kind_mismatch
from simscore.measures import MEASURES
from simscore.responses import Response, Responses
from simscore.samples import SampledResponses

if TYPE_CHECKING:
    from contexts.context import Context, ContextSet

__all__ = [
    "read_comparison", "differing_ids", "action_differences", "select_rows", "view_data",
    "write_view", "MAX_ROWS",
]

#: One policy's responses on a page: one per context, or K samples per context.
Side = Responses | SampledResponses

#: Values shown per slot in a belief summary (the most probable ones).
TOP_VALUES = 3

#: Differing contexts a page holds unless asked for more: about 300 bytes each (with a context
#: set about 1 kB), so a page of at most some 50 MB that a browser opens. Above it
#: :func:`write_view` stops and names the ways out: ``limit``, ``sample`` or ``max_rows=None``
#: (the command line's ``--limit N``, ``--sample N`` and ``--all``).
MAX_ROWS = 50_000



def read_comparison(path: str | os.PathLike[str]) -> Comparison:
    """Read a comparison saved as ``.json`` by :meth:`~simscore.comparison.Comparison.save`.

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
    try:
        info = ComparisonInfo.from_dict(document.get("info") or {})
    except ValueError as exc:
        raise FileFormatError(p, str(exc)) from None
    return Comparison(
        scores=scores,
        summary=summary_frame,
        signatures=dict(signatures),
        a=document.get("a") or "",
        b=document.get("b") or "",
        info=info,
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
        raise FileFormatError(p, f"expected a JSON object, got {json_kind(document)}")
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
    got = json_kind(value) if value is None else f"{json_kind(value)} {json_excerpt(value, 60)}"
    return FileFormatError(path, f"field {field}: expected {expected}, got {got}")


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
        "calls": None if action is None else _calls_json(action),
    }


def _calls_json(action: Act) -> list[dict[str, Any]] | None:
    """Each call of an action (a turn of tool calls) as its name and arguments; None for a multi-intent act.

    >>> for call in _calls_json(Act.parse("get_user(id=u7);pay(amount=5,card.last4=1234)")):
    ...     print(call)
    {'name': 'get_user', 'arguments': [['id', '=', 'u7']]}
    {'name': 'pay', 'arguments': [['amount', '=', '5'], ['card.last4', '=', '1234']]}
    >>> _calls_json(Act.parse("inform+request(area=north,food)")) is None  # which item is whose is unknown
    True
    """
    calls = action.calls if isinstance(action, ActSequence) else (action,)
    if any(len(call.intents) != 1 for call in calls):
        return None
    return [{"name": call.intent, "arguments": [[item.slot, item.op, item.value] for item in call.items]}
            for call in calls]


def _drawn(responses: Side, context_id: str) -> tuple[Response, ...]:
    """A context's responses on one side: its K samples, or the one response."""
    found = responses[context_id]
    return found if isinstance(found, tuple) else (found,)


def _difference(x: tuple[Response, ...], y: tuple[Response, ...]) -> str | None:
    """``"action"``, ``"wording"`` or None: how two sides' responses at a context differ, as multisets.

    >>> from simscore import Act
    >>> hi, bye = Response(Act.parse("hello()"), "Hi."), Response(Act.parse("bye()"), "Bye.")
    >>> _difference((hi, bye), (bye, hi)), _difference((hi, hi), (hi, bye)), _difference((hi,), (Response(hi.action, "Hey."),))
    (None, 'action', 'wording')
    """
    if Counter(r.action for r in x) != Counter(r.action for r in y):
        return "action"
    return "wording" if Counter(r.text for r in x) != Counter(r.text for r in y) else None


def _side_json(drawn: tuple[Response, ...]) -> dict[str, Any]:
    """One side's response as the page shows it; sampled: the most frequent, and ``samples`` with each distinct one's count."""
    if len(drawn) == 1:
        return _response_json(drawn[0])
    counts = Counter((r.action, r.text) for r in drawn)
    order = sorted(counts, key=lambda key: -counts[key])  # stable: ties keep the order of first appearance
    distinct = [{**_response_json(Response(action, text)), "count": counts[(action, text)]} for action, text in order]
    return {**{k: v for k, v in distinct[0].items() if k != "count"}, "samples": distinct}


def _history_json(history: Iterable[str]) -> list[dict[str, str]]:
    """The dialogue so far, each text with its speaker: alternating, the last text the user's.

    >>> _history_json(["Hello.", "Thai food.", "Which area?", "North."])[-2:]
    [{'speaker': 'system', 'text': 'Which area?'}, {'speaker': 'user', 'text': 'North.'}]
    """
    texts = list(history)
    last = len(texts) - 1
    return [{"speaker": "user" if (last - k) % 2 == 0 else "system", "text": text} for k, text in enumerate(texts)]


#: The speakers of a transcript context's history lines (``role: text``), as the page names them.
_ROLES = ("user", "assistant", "tool")


def _transcript_history_json(history: Iterable[str]) -> list[dict[str, str]]:
    """A transcript context's history: each line's speaker is its role (``role: text``).

    >>> _transcript_history_json(["assistant: Hi!", "user: Cancel 7.", "assistant: get(id=7)", 'tool: {"ok": 1}'])[2:]
    [{'speaker': 'assistant', 'text': 'get(id=7)'}, {'speaker': 'tool', 'text': '{"ok": 1}'}]
    """
    out = []
    for line in history:
        role, _, text = line.partition(": ")
        out.append({"speaker": role, "text": text} if role in _ROLES else {"speaker": "system", "text": line})
    return out


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


def action_differences(differing: list[str], a: Side, b: Side) -> int:
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
    return sum(_difference(_drawn(a, i), _drawn(b, i)) == "action" for i in differing)


def differing_ids(comparison: Comparison, a: Side, b: Side) -> list[str]:
    """The compared context ids whose two responses differ (action or text), in the comparison's order.

    Raises
    ------
    ContextMismatchError
        A responses file lacks compared context ids.
    """
    ids = [str(i) for i in comparison.scores.index]
    _check_cover(ids, [("responses of A", a), ("responses of B", b)])
    return [i for i in ids if _difference(_drawn(a, i), _drawn(b, i)) is not None]


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
    a: Side,
    b: Side,
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
        The scores (from :func:`~simscore.comparison.compare` or :func:`read_comparison`).
    a, b : Responses or SampledResponses
        The two policies' responses (sampled ones for a comparison of samples); they must
        cover every compared context id.
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
        the action or in the wording only, ``history`` holds ``{"speaker", "text"}`` objects,
        each response's ``calls`` its tool calls as ``{"name", "arguments": [[slot, op, value],
        ...]}``, ``same_history`` the paired context's flag or None), ``tool_calls`` (whether the
        page shows the responses call by call: some action is a turn of several calls, or the
        contexts come with tools),
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
        x, y = _drawn(a, context_id), _drawn(b, context_id)
        values = scores.iloc[position_of[context_id]]
        row: dict[str, Any] = {
            "id": context_id,
            "a": _side_json(x),
            "b": _side_json(y),
            "scores": {m: _number(values[m]) for m in measures},
            "differs": _difference(x, y),
            "turn": _turn(values["turn_index"]) if has_turn else None,
            "dialogue": None,
            "history": [],
            "belief": None,
            "same_history": None,
        }
        if contexts is not None:
            context = contexts[context_id]
            row["turn"] = context.metadata.get("turn_index")
            row["dialogue"] = context.metadata.get("dialogue_id")
            if "messages" in context.metadata:  # a transcript's context: its lines name their speakers
                row["history"] = _transcript_history_json(context.metadata.get("history", ()))
            else:
                row["history"] = _history_json(context.metadata.get("history", ()))
                row["belief"] = _belief_json(context)
            same = context.metadata.get("same_history")
            row["same_history"] = same if isinstance(same, bool) else None
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
        "samples": comparison.info.samples,
        "tool_calls": any(isinstance(r.action, ActSequence) for i in shown for r in (*_drawn(a, i), *_drawn(b, i)))
        or (contexts is not None and any("tools" in contexts[i].metadata for i in shown)),
        "rows": rows,
    }


def write_view(
    comparison: Comparison,
    a: Side,
    b: Side,
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
        From :func:`~simscore.comparison.compare` or :func:`read_comparison`.
    a, b : Responses or SampledResponses
        The two policies' responses (sampled ones for a comparison of samples).
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
        (:func:`simscore.comparison.check_inputs`; a comparison saved before simscore 0.2.0
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
