"""How the action measures compare turns of several acts (an agent's tool calls): the ``calls`` option.

A turn of a tool-calling agent may hold several calls (an :class:`~simscore.acts.ActSequence`;
a single act is a turn of one call). Two turns are first *aligned* into pairs of calls, in one
of four modes named after agentevals' trajectory match modes (LangChain), where ``a`` is the
first side of the comparison (agentevals' outputs) and ``b`` the second (its reference):

``strict``
    the calls in the order made: pair ``k`` is the ``k``-th call of each side (a side with
    fewer calls leaves the other side's extra calls unpaired). On single acts this is the
    measures' definition in the metrics reference, unchanged.
``unordered``
    the same calls in any order: calls of the same tool are paired, most similar first
    (highest concept match, then by their text), the rest left unpaired.
``subset``
    ``a``'s calls are among ``b``'s: paired as ``unordered``, then ``b``'s unpaired calls are
    left out (``b`` may do more).
``superset``
    ``a``'s calls include ``b``'s: ``a``'s unpaired calls are left out.

On the pairs ``P`` (each ``(x, y)`` with ``x`` from ``a`` or none, ``y`` from ``b`` or none):

* TMR = 1 iff every pair holds two equal acts;
* DMR = δ = 1 iff every pair holds two acts of the same intents;
* CER = δ · (CE(h, r) + CE(r, h)) / 2 with ``h`` and ``r`` the concept tokens of ``a``'s and
  ``b``'s calls concatenated pair by pair (in ``strict`` in the order made, otherwise in the
  order of the pairs' texts);
* CMR = ``(δ + |S_a ∩ S_b|) / (1 + |S_a ∪ S_b|)`` with S the concepts of each call qualified by
  the number of its pair, so concepts count as shared only between paired calls.

``strict`` and ``unordered`` are symmetric; ``subset`` of ``(a, b)`` is ``superset`` of ``(b, a)``.
A single act against a single act of another intent: in ``strict`` they are one pair (CMR
counts their shared slots, as the metrics reference does); in the other modes two unpaired
calls (CMR 0).

>>> from simscore.acts import Act
>>> a = Act.parse("search(city=Paris);book(id=7)")
>>> b = Act.parse("book(id=7);search(city=Paris)")
>>> [scores(a, b, mode) for mode in ("strict", "unordered")]
[CallScores(tmr=0.0, dmr=0.0, cer=0.0, cmr=0.0), CallScores(tmr=1.0, dmr=1.0, cer=1.0, cmr=1.0)]
>>> scores(Act.parse("search(city=Paris)"), b, "subset"), scores(Act.parse("search(city=Paris)"), b, "superset").tmr
(CallScores(tmr=1.0, dmr=1.0, cer=1.0, cmr=1.0), 0.0)
"""

from __future__ import annotations

import difflib
from itertools import zip_longest
from typing import Literal, NamedTuple

import Levenshtein

from simscore.acts import Act
from simscore.errors import MeasureOptionError

__all__ = ["CallMode", "CALL_MODES", "check_call_mode", "align_calls", "scores", "CallScores"]

#: The ways two turns of several calls are compared (agentevals' names).
CallMode = Literal["strict", "unordered", "subset", "superset"]
CALL_MODES: tuple[str, ...] = ("strict", "unordered", "subset", "superset")

Pair = tuple[Act | None, Act | None]


class CallScores(NamedTuple):
    """The four action measures of one pair of turns."""

    tmr: float
    dmr: float
    cer: float
    cmr: float


def check_call_mode(value: object) -> str:
    """``value`` if it is one of :data:`CALL_MODES`, else a :class:`~simscore.errors.MeasureOptionError`.

    >>> check_call_mode("unorderd")
    Traceback (most recent call last):
    ...
    simscore.errors.MeasureOptionError: calls must be one of 'strict', 'unordered', 'subset', 'superset',
    got 'unorderd'; did you mean 'unordered'?
    """
    if isinstance(value, str) and value in CALL_MODES:
        return value
    close = difflib.get_close_matches(str(value), CALL_MODES, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise MeasureOptionError(f"calls must be one of {', '.join(map(repr, CALL_MODES))}, got {value!r}{hint}")


def _concept_match(x: Act, y: Act) -> float:
    sx, sy = x.concept_set(), y.concept_set()
    return (1.0 + len(sx & sy)) / (1 + len(sx | sy))


def align_calls(a: Act, b: Act, mode: str) -> list[Pair]:
    """The pairs of calls of two turns in ``mode`` (see the module).

    >>> pairs = align_calls(Act.parse("f(x=1);g()"), Act.parse("g();f(x=2)"), "unordered")
    >>> [(str(x), str(y)) for x, y in pairs]
    [('f(x=1)', 'f(x=2)'), ('g()', 'g()')]
    """
    left, right = a.calls, b.calls
    if mode == "strict":
        return list(zip_longest(left, right))
    if mode == "superset":
        return [(x, y) for y, x in align_calls(b, a, "subset")]
    texts_a, texts_b = [str(x) for x in left], [str(y) for y in right]
    candidates = sorted(
        (-_concept_match(x, y), min(texts_a[i], texts_b[j]), max(texts_a[i], texts_b[j]), i, j)
        for i, x in enumerate(left)
        for j, y in enumerate(right)
        if x.intents == y.intents
    )
    used_a: dict[int, int] = {}
    used_b: set[int] = set()
    for *_, i, j in candidates:
        if i not in used_a and j not in used_b:
            used_a[i] = j
            used_b.add(j)
    pairs: list[Pair] = [(left[i], right[j]) for i, j in used_a.items()]
    pairs.extend((x, None) for i, x in enumerate(left) if i not in used_a)
    if mode != "subset":
        pairs.extend((None, y) for j, y in enumerate(right) if j not in used_b)
    return sorted(pairs, key=lambda p: _pair_key(p))


def _pair_key(pair: Pair) -> tuple[str, str]:
    texts = ["" if act is None else str(act) for act in pair]
    return min(texts), max(texts)


def _concept_error(hyp: list[object], ref: list[object]) -> float:
    if not ref:
        return 1.0 if not hyp else 0.0
    return (len(ref) - Levenshtein.distance(hyp, ref)) / len(ref)


def _tokens(acts: list[Act | None]) -> list[object]:
    return [token for act in acts if act is not None for token in act.concept_tokens()]


def scores(a: Act, b: Act, mode: str, *, clip: bool = False) -> CallScores:
    """TMR, DMR, CER (``clip`` as :class:`~simscore.measures.action.ConceptErrorRate`'s) and CMR of two turns in ``mode``."""
    pairs = align_calls(a, b, mode)
    same = all(x is not None and y is not None and x.intents == y.intents for x, y in pairs)
    equal = same and all(x == y for x, y in pairs)
    delta = 1.0 if same else 0.0
    if same:
        hyp, ref = _tokens([x for x, _ in pairs]), _tokens([y for _, y in pairs])
        cer = (_concept_error(hyp, ref) + _concept_error(ref, hyp)) / 2.0
        cer = max(cer, 0.0) if clip else cer
    else:
        cer = 0.0
    left: set[tuple[int, object]] = set()
    right: set[tuple[int, object]] = set()
    for k, (x, y) in enumerate(pairs):
        if x is not None:
            left.update((k, concept) for concept in x.concept_set())
        if y is not None:
            right.update((k, concept) for concept in y.concept_set())
    cmr = (delta + len(left & right)) / (1 + len(left | right))
    return CallScores(1.0 if equal else 0.0, delta, cer, cmr)
