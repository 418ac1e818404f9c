"""What a comparison was made from, and checking a comparison against its input files.

:func:`input_record` names one side's inputs (policy, contexts, digests of the ids and of the
responses at both levels); :func:`check_inputs` says whether responses read again are those a
saved comparison was made from.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simscore.comparison.result import Comparison
from simscore.errors import InputMismatchError, MissingValueWarning
from simscore.measures.base import unique_pairs
from simscore.responses import Responses
from simscore.samples import SampledResponses

__all__ = ["input_record", "check_inputs", "inputs_of"]


def _ids_digest(ids: Sequence[str]) -> str:
    """SHA-256 of the context ids in the comparison's order (as JSON)."""
    return hashlib.sha256(json.dumps(list(ids), ensure_ascii=False).encode("utf-8")).hexdigest()


def _side_digest(ids_digest: str, levels: Sequence[tuple[list[Any], np.ndarray]]) -> str:
    """SHA-256 of one side's responses at the compared ids: per level (actions, then texts) its distinct
    values in order of first appearance (as text) and each context's rank among them.

    ``levels`` holds per level distinct values and a code per context into them, in any order
    of codes: they are ranked here, so every factorisation of the same responses gives the
    same digest.
    """
    digest = hashlib.sha256(ids_digest.encode("ascii"))
    for values, codes in levels:
        distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        shown = [None if values[d] is None else str(values[d]) for d in distinct[order]]
        digest.update(json.dumps(shown, ensure_ascii=False).encode("utf-8"))
        digest.update(rank[inverse.reshape(-1)].astype("<i8").tobytes())
    return digest.hexdigest()


def inputs_of(a: Responses, b: Responses, ids: list[str], factorised: Mapping[str, Any]) -> dict[str, Any]:
    """``info["inputs"]``: per side the policy, the number and digest of the context ids and the responses' digest."""
    ids_digest = _ids_digest(ids)
    records = {}
    for side, responses, pick in (("a", a, 1), ("b", b, 2)):
        levels = [(factorised[level][0], factorised[level][pick][factorised[level][3]]) for level in ("action", "text")]
        records[side] = {"policy": responses.policy, "contexts": len(ids), "ids_sha256": ids_digest,
                         "responses_sha256": _side_digest(ids_digest, levels)}
    return records


def input_record(responses: Responses | SampledResponses, ids: Sequence[str]) -> dict[str, Any]:
    """What :func:`~simscore.comparison.compare` records of one side (``info.inputs["a"]``) for ``responses`` at ``ids``.

    ``policy``, ``contexts`` (the number of ``ids``), ``ids_sha256`` (SHA-256 of the ids in
    order) and ``responses_sha256`` (of the responses at those ids: the actions and texts, not
    the file's bytes, so the same responses saved as JSON Lines or CSV agree). Sampled
    responses of K >= 2 samples add ``samples`` (K), and the digest covers every sample in order.

    >>> from simscore import Act, Response, compare
    >>> from simscore.stats import Bootstrap
    >>> r = Responses({"c1": Response(Act.parse("hello()")), "c2": Response(Act.parse("bye()"), "Bye.")}, policy="p")
    >>> record = input_record(r, ["c1", "c2"])
    >>> record["policy"], record["contexts"], record == compare(r, r, "tmr", bootstrap=Bootstrap(0)).info.inputs["a"]
    ('p', 2, True)
    >>> input_record(SampledResponses.from_samples([r, r]), ["c1", "c2"])["samples"]
    2
    """
    ids = list(ids)
    ids_digest = _ids_digest(ids)
    drawn = ([responses.sample(k) for k in range(responses.n_samples)] if isinstance(responses, SampledResponses)
             else [responses])
    count = len(drawn)
    levels = []
    for sample in drawn:
        for column in (sample.actions(ids), sample.texts(ids)):
            values, pair_a, _, inverse = unique_pairs(column, column)
            levels.append((values, pair_a[inverse]))
    return {"policy": responses.policy, "contexts": len(ids), "ids_sha256": ids_digest,
            **({"samples": count} if count > 1 else {}),
            "responses_sha256": _side_digest(ids_digest, levels)}


def check_inputs(comparison: Comparison, a: Responses | SampledResponses, b: Responses | SampledResponses, *,
                 names: Mapping[str, str] | None = None) -> None:
    """Refuse responses that are not the ones ``comparison`` was made from.

    Each side's responses must have the policy name, the context ids and the responses that
    :func:`compare` recorded (``info["inputs"]``). A pair given the wrong way round is named
    as such ("swapped?"). A comparison without the record (saved by simscore before 0.2.0)
    cannot be checked: a :class:`~simscore.errors.MissingValueWarning` says so.

    Parameters
    ----------
    comparison : Comparison
    a, b : Responses or SampledResponses
        The responses said to be sides A and B (sampled ones for a comparison of samples).
    names : mapping, optional
        How to name the sides in messages, e.g. ``{"a": "--a r.jsonl", "b": "--b h.jsonl"}``.

    Raises
    ------
    InputMismatchError
        Naming the side and what differs (policy, number of contexts, context ids, responses).
    """
    names = {"a": "a", "b": "b", **(names or {})}
    record = comparison.info.inputs
    if not isinstance(record, Mapping):
        warnings.warn(
            f"the comparison does not record what it was made from (saved before simscore 0.2.0): cannot check "
            f"that {names['a']} and {names['b']} are its responses",
            MissingValueWarning,
            stacklevel=2,
        )
        return
    ids = [str(i) for i in comparison.scores.index]
    if _ids_digest(ids) != record["a"]["ids_sha256"]:
        raise InputMismatchError(f"the comparison's {len(ids)} per-context scores are not of the contexts it "
                                 f"records ({record['a']['contexts']}, SHA-256): was it edited?")
    found = {side: _found(responses, ids) for side, responses in (("a", a), ("b", b))}
    problems = {side: _differences(found[side], record[side]) for side in ("a", "b")}
    if not problems["a"] and not problems["b"]:
        return
    crossed = [not _differences(found[side], record[other]) for side, other in (("a", "b"), ("b", "a"))]
    if all(crossed):
        raise InputMismatchError(
            f"{names['a']} and {names['b']} are swapped? The comparison was made from "
            f"{_short(record['a']['policy'])} as A and {_short(record['b']['policy'])} as B; {names['a']} holds "
            f"B's responses and {names['b']} A's"
        )
    parts = []
    for side, other, holds_other in (("a", "B", crossed[0]), ("b", "A", crossed[1])):
        if problems[side]:
            also = f" (it holds {other}'s responses)" if holds_other else ""
            parts.append(f"{names[side]} is not what side {side.upper()} of the comparison was made from: "
                         f"{'; '.join(problems[side])}{also}")
    raise InputMismatchError("; ".join(parts))


def _short(policy: Any) -> str:
    text = repr(str(policy))
    return text if len(text) <= 62 else text[:58] + "...'"


def _found(responses: Responses | SampledResponses, ids: list[str]) -> dict[str, Any]:
    """The record of ``responses`` at the comparison's ids (without a digest when they do not cover them)."""
    covers = len(responses) == len(ids) and all(i in responses for i in ids)
    if covers:
        return input_record(responses, ids)
    count = responses.n_samples if isinstance(responses, SampledResponses) else 1
    return {"policy": responses.policy, "contexts": len(responses), **({"samples": count} if count > 1 else {}),
            "missing": sum(i not in responses for i in ids), "extra": len(set(responses.ids) - set(ids))}


def _samples(record: Mapping[str, Any]) -> str:
    count = record.get("samples", 1)
    return "one response per context" if count == 1 else f"{count} samples per context"


def _differences(found: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    """What differs between a file's record and the comparison's record of one side (empty: nothing)."""
    out = []
    if found["policy"] != expected["policy"]:
        out.append(f"policy {_short(found['policy'])}, not {_short(expected['policy'])}")
    if found["contexts"] != expected["contexts"]:
        out.append(f"{found['contexts']} contexts, not {expected['contexts']}")
    if found.get("samples", 1) != expected.get("samples", 1):
        out.append(f"{_samples(found)}, not {_samples(expected)}")
    elif "missing" in found:
        out.append(f"context ids differ ({found['missing']} of the comparison's missing, {found['extra']} others)")
    elif found["ids_sha256"] != expected["ids_sha256"]:
        out.append("context ids differ (SHA-256)")
    elif found["responses_sha256"] != expected["responses_sha256"]:
        out.append("responses differ (SHA-256 of the actions and texts)")
    return out


