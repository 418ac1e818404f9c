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
``per_message``
    message by message (an :class:`~simscore.acts.ActSequence` that keeps its messages, a
    trajectory read with ``unit="task"``): the ``k``-th message of each side paired, their calls
    as ``unordered``; a side with more messages leaves their calls unpaired. This is agentevals'
    ``strict`` on a whole trajectory (the messages in order, the calls within one in any order);
    on a turn (one message) it is ``unordered``.

The paired calls' arguments compare as the ``args`` option says (agentevals'
``tool_args_match_mode``; :class:`ArgumentMatch`), ``args_for`` overriding it per tool
(``tool_args_match_overrides``): ``exact`` (default), ``ignore`` (the tools' names alone),
``subset`` (``a``'s top-level arguments, each whole, are among ``b``'s) or ``superset``. A pair
then counts as the two calls seen so (``subset``: of ``b``'s arguments those ``a`` has), and
calls pair up so that as many as can be are equal so.

On the pairs ``P`` (each ``(x, y)`` with ``x`` from ``a`` or none, ``y`` from ``b`` or none):

* TMR = 1 iff every pair holds two equal acts;
* DMR = δ = 1 iff every pair holds two acts of the same intents;
* CER = δ · (CE(h, r) + CE(r, h)) / 2 with ``h`` and ``r`` the concept tokens of ``a``'s and
  ``b``'s calls concatenated pair by pair (in ``strict`` in the order made, otherwise in the
  order of the pairs' texts);
* CMR = ``(δ + |S_a ∩ S_b|) / (1 + |S_a ∪ S_b|)`` with S the concepts of each call qualified by
  the number of its pair, so concepts count as shared only between paired calls.

``strict``, ``unordered`` and ``per_message`` are symmetric (with ``args`` ``exact`` or
``ignore``); ``subset`` of ``(a, b)`` is ``superset`` of ``(b, a)``, ``args`` flipped too.
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
>>> c = Act.parse("book(id=7);search(city=Rome)")
>>> [scores(a, c, "unordered", args=ArgumentMatch.of(mode)).tmr for mode in ("exact", "ignore")]
[0.0, 1.0]
>>> scores(a, c, "unordered", args=ArgumentMatch.of("exact", {"search": "ignore"})).tmr
1.0
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal, NamedTuple

import Levenshtein

from simscore.acts import Act
from simscore.errors import MeasureOptionError

__all__ = [
    "CallMode", "CALL_MODES", "check_call_mode", "ArgsMode", "ARGS_MODES", "ArgumentMatch", "align_calls", "scores",
    "CallScores",
]

#: The ways two turns of several calls are compared (agentevals' names; ``per_message`` is its
#: ``strict`` on a whole trajectory).
CallMode = Literal["strict", "unordered", "subset", "superset", "per_message"]
CALL_MODES: tuple[str, ...] = ("strict", "unordered", "subset", "superset", "per_message")
#: The ways two paired calls' arguments are compared (agentevals' ``tool_args_match_mode``).
ArgsMode = Literal["exact", "ignore", "subset", "superset"]
ARGS_MODES: tuple[str, ...] = ("exact", "ignore", "subset", "superset")

Pair = tuple[Act | None, Act | None]


class CallScores(NamedTuple):
    """The four action measures of one pair of turns."""

    tmr: float
    dmr: float
    cer: float
    cmr: float


def _check_choice(option: str, value: object, choices: tuple[str, ...]) -> str:
    if isinstance(value, str) and value in choices:
        return value
    close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise MeasureOptionError(f"{option} must be one of {', '.join(map(repr, choices))}, got {value!r}{hint}")


def check_call_mode(value: object) -> str:
    """``value`` if it is one of :data:`CALL_MODES`, else a :class:`~simscore.errors.MeasureOptionError`.

    >>> check_call_mode("unorderd")
    Traceback (most recent call last):
    ...
    simscore.errors.MeasureOptionError: calls must be one of 'strict', 'unordered', 'subset', 'superset',
    'per_message', got 'unorderd'; did you mean 'unordered'?
    """
    return _check_choice("calls", value, CALL_MODES)


_FLIPPED = {"subset": "superset", "superset": "subset", "exact": "exact", "ignore": "ignore"}


@dataclass(frozen=True)
class ArgumentMatch:
    """How two paired calls' arguments compare: ``mode`` for every tool, ``per_tool`` overriding it
    for the tools it names (agentevals' ``tool_args_match_mode`` and ``tool_args_match_overrides``).

    ``exact``: all the arguments; ``ignore``: none (the tools' names alone); ``subset``: the first
    side's arguments are among the second's (each top-level argument whole, as agentevals compares
    them: its name and its whole value); ``superset``: the second side's among the first's.

    >>> ArgumentMatch.of("exact", "search=ignore, book=subset").per_tool
    (('book', 'subset'), ('search', 'ignore'))
    >>> ArgumentMatch.of("subsett")
    Traceback (most recent call last):
    ...
    simscore.errors.MeasureOptionError: args must be one of 'exact', 'ignore', 'subset', 'superset', got 'subsett';
    did you mean 'subset'?
    >>> ArgumentMatch.of("exact", "search")
    Traceback (most recent call last):
    ...
    simscore.errors.MeasureOptionError: args_for: expected TOOL=MODE entries separated by commas
    (e.g. search=ignore,book=subset), got 'search'
    """

    mode: str = "exact"
    per_tool: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, mode: object = "exact", per_tool: object = None) -> ArgumentMatch:
        """Checked: ``mode`` one of :data:`ARGS_MODES`; ``per_tool`` None, a mapping tool -> mode or the
        text ``"TOOL=MODE,TOOL=MODE"`` (the command line's form)."""
        mode = _check_choice("args", mode, ARGS_MODES)
        if per_tool is None or per_tool == "":
            return cls(mode)
        if isinstance(per_tool, str):
            entries = {}
            for entry in per_tool.split(","):
                tool, sep, value = entry.partition("=")
                if not sep or not tool.strip():
                    raise MeasureOptionError(
                        "args_for: expected TOOL=MODE entries separated by commas (e.g. search=ignore,book=subset), "
                        f"got {per_tool!r}"
                    )
                if tool.strip() in entries:
                    raise MeasureOptionError(f"args_for: tool {tool.strip()!r} is given twice")
                entries[tool.strip()] = value.strip()
            per_tool = entries
        if not isinstance(per_tool, Mapping):
            raise MeasureOptionError(f"args_for: expected a mapping of tool names to modes, got {type(per_tool).__name__}")
        checked = []
        for tool, value in per_tool.items():
            if not isinstance(tool, str) or not tool:
                raise MeasureOptionError(f"args_for: tool names must be non-empty strings, got {tool!r}")
            checked.append((tool, _check_choice(f"args_for[{tool!r}]", value, ARGS_MODES)))
        return cls(mode, tuple(sorted(checked)))

    def mode_for(self, tool: str) -> str:
        """The mode that compares the arguments of calls of ``tool``."""
        return dict(self.per_tool).get(tool, self.mode)

    @property
    def exact(self) -> bool:
        """Whether every tool's arguments compare exactly (the measures' definitions as they are)."""
        return self.mode == "exact" and all(mode == "exact" for _, mode in self.per_tool)

    @property
    def symmetric(self) -> bool:
        """Whether the comparison of arguments does not depend on the sides' order."""
        return all(mode in ("exact", "ignore") for mode in (self.mode, *dict(self.per_tool).values()))

    def flipped(self) -> ArgumentMatch:
        """The same comparison with the sides swapped (``subset`` becomes ``superset``)."""
        return ArgumentMatch(_FLIPPED[self.mode], tuple((tool, _FLIPPED[mode]) for tool, mode in self.per_tool))

    def signature(self) -> str:
        """What the signature of a measure adds (nothing for ``exact`` everywhere)."""
        if self.exact:
            return ""
        extra = ",".join(f"{tool}={mode}" for tool, mode in self.per_tool)
        return f"|args:{self.mode}" + (f"|args_for:{extra}" if extra else "")

    def view(self, x: Act, y: Act) -> tuple[Act, Act]:
        """The two calls of a pair as their arguments compare: ``ignore`` drops the arguments,
        ``subset`` keeps of ``y``'s arguments those ``x`` has, ``superset`` of ``x``'s those ``y`` has
        (calls of two tools: each as :meth:`single` sees it).

        >>> match = ArgumentMatch("subset")
        >>> [str(c) for c in match.view(Act.parse("f(a=1)"), Act.parse("f(a=1,b.c=2)"))]
        ['f(a=1)', 'f(a=1)']
        """
        if x.intents != y.intents:  # two tools (a pair in strict): each call as its own tool's mode leaves it
            return self.single(x), self.single(y)
        mode = self.mode_for(x.intent)
        if mode == "exact":
            return x, y
        if mode == "ignore":
            return _without_arguments(x), _without_arguments(y)
        if mode == "subset":
            return x, _only(y, _arguments(x))
        return _only(x, _arguments(y)), y

    def single(self, x: Act) -> Act:
        """A call left unpaired as it counts: without its arguments where they are ignored."""
        return _without_arguments(x) if self.mode_for(x.intent) == "ignore" else x


EXACT = ArgumentMatch()


def _argument(slot: str) -> str:
    """The top-level argument of a slot ``name.inner`` or ``name[0]`` (names are percent-encoded)."""
    cut = min((i for i in (slot.find("."), slot.find("[")) if i >= 0), default=len(slot))
    return slot[:cut]


def _arguments(x: Act) -> frozenset[str]:
    return frozenset(_argument(item.slot) for item in x.items)


def _only(x: Act, names: frozenset[str]) -> Act:
    return Act(x.intents, [item for item in x.items if _argument(item.slot) in names])


def _without_arguments(x: Act) -> Act:
    return Act(x.intents) if x.items else x


def _concept_match(x: Act, y: Act) -> float:
    sx, sy = x.concept_set(), y.concept_set()
    return (1.0 + len(sx & sy)) / (1 + len(sx | sy))


def align_calls(a: Act, b: Act, mode: str, args: ArgumentMatch = EXACT) -> list[Pair]:
    """The pairs of calls of two turns in ``mode`` (see the module), the arguments compared as ``args`` says.

    >>> pairs = align_calls(Act.parse("f(x=1);g()"), Act.parse("g();f(x=2)"), "unordered")
    >>> [(str(x), str(y)) for x, y in pairs]
    [('f(x=1)', 'f(x=2)'), ('g()', 'g()')]
    >>> pairs = align_calls(Act.parse("f(x=1);;g();h()"), Act.parse("f(x=1);;h();g()"), "per_message")
    >>> [(str(x), str(y)) for x, y in pairs]
    [('f(x=1)', 'f(x=1)'), ('g()', 'g()'), ('h()', 'h()')]
    """
    if mode == "strict":
        return list(zip_longest(a.calls, b.calls))
    if mode == "superset":
        return [(x, y) for y, x in align_calls(b, a, "subset", args.flipped())]
    if mode == "per_message":
        return [pair for left, right in zip_longest(a.messages, b.messages, fillvalue=())
                for pair in _pair_up(left, right, args, keep_right=True)]
    return _pair_up(a.calls, b.calls, args, keep_right=mode != "subset")


def _pair_up(left: tuple[Act, ...], right: tuple[Act, ...], args: ArgumentMatch, *, keep_right: bool) -> list[Pair]:
    """Calls of the same tool paired, most similar first (as their arguments compare), the rest unpaired."""
    texts_a, texts_b = [str(x) for x in left], [str(y) for y in right]
    candidates = sorted(
        (-_concept_match(*args.view(x, y)), min(texts_a[i], texts_b[j]), max(texts_a[i], texts_b[j]), i, j)
        for i, x in enumerate(left)
        for j, y in enumerate(right)
        if x.intents == y.intents
    )
    used_a: dict[int, int] = {} if args.exact else _most_matches(candidates)
    used_b: set[int] = set(used_a.values())
    for *_, i, j in candidates:
        if i not in used_a and j not in used_b:
            used_a[i] = j
            used_b.add(j)
    pairs: list[Pair] = [(left[i], right[j]) for i, j in used_a.items()]
    pairs.extend((x, None) for i, x in enumerate(left) if i not in used_a)
    if keep_right:
        pairs.extend((None, y) for j, y in enumerate(right) if j not in used_b)
    return sorted(pairs, key=lambda p: _pair_key(p))


def _most_matches(candidates: list[tuple[float, str, str, int, int]]) -> dict[int, int]:
    """As many pairs of matching calls as there can be (augmenting paths), where matching is not an
    equivalence (``subset``: most similar first does not always find them all)."""
    edges: dict[int, list[int]] = {}
    for score, _, _, i, j in candidates:
        if score == -1.0:  # the two calls are equal as their arguments compare
            edges.setdefault(i, []).append(j)
    owner: dict[int, int] = {}  # right call -> left call

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in edges:
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _pair_key(pair: Pair) -> tuple[str, str]:
    texts = ["" if act is None else str(act) for act in pair]
    return min(texts), max(texts)


def _concept_error(hyp: list[object], ref: list[object]) -> float:
    if not ref:
        return 1.0 if not hyp else 0.0
    return (len(ref) - Levenshtein.distance(hyp, ref)) / len(ref)


def _tokens(acts: list[Act | None]) -> list[object]:
    return [token for act in acts if act is not None for token in act.concept_tokens()]


def _as_compared(pair: Pair, args: ArgumentMatch) -> Pair:
    x, y = pair
    if x is not None and y is not None:
        return args.view(x, y)
    return (None if x is None else args.single(x)), (None if y is None else args.single(y))


def scores(a: Act, b: Act, mode: str, *, clip: bool = False, args: ArgumentMatch = EXACT) -> CallScores:
    """TMR, DMR, CER (``clip`` as :class:`~simscore.measures.action.ConceptErrorRate`'s) and CMR of two
    turns in ``mode``, the paired calls' arguments compared as ``args`` says."""
    pairs = align_calls(a, b, mode, args)
    if not args.exact:
        pairs = [_as_compared(pair, args) for pair in pairs]
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
