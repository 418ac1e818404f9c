"""The four action-level measures: TMR, DMR, CER and CMR (metrics reference, "Action level").

Every measure scores each distinct pair of actions once (the shared factorisation in
:class:`~simscore.measures.base.PairwiseMeasure`), so a million pairs drawn from a few hundred
distinct actions cost a few hundred Python-level comparisons plus numpy indexing.

Inputs are :class:`~simscore.acts.Act` objects, or plain data converted at the boundary:
PyDial act strings (:meth:`Act.parse <simscore.acts.Act.parse>`) and ConvLab turns, lists of
``[intent, domain, slot, value]`` (:meth:`Act.from_convlab <simscore.acts.Act.from_convlab>`);
each distinct input is converted once, and inputs that convert to equal acts score as equal.

A turn of several acts (an :class:`~simscore.acts.ActSequence`: a language-model agent's tool
calls) is compared call by call in the way the measures' ``calls`` option names: ``strict``
(default: in the order made), ``unordered``, ``subset`` or ``superset``, agentevals' trajectory
match modes, or ``per_message`` (a trajectory message by message, agentevals' ``strict``), the
arguments of paired calls as ``args`` and ``args_for`` say (:mod:`simscore.measures.calls`).
On single acts ``strict`` is the definition of the metrics reference.

>>> TotalMatchRate().score_pairs(["inform(food=thai,area=north)"], ["inform(area=north,food=thai)"])
array([1.])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import Levenshtein
import numpy as np

from simscore.acts import Act, ActSequence
from simscore.checks import check_bool
from simscore.errors import InvalidResponseError
from simscore.measures.base import PairwiseMeasure, dist_version, unique_pairs
from simscore.measures.calls import ArgumentMatch, check_call_mode, scores
from simscore.measures.options import MeasureOption

__all__ = [
    "TotalMatchRate",
    "DialogueActMatchRate",
    "ConceptErrorRate",
    "ConceptMatchRate",
    "concept_error",
    "concept_match",
]


def concept_error(h: Act, r: Act) -> float:
    """``CE(h, r) = (|r| − dist(h, r)) / |r|`` over concept tokens (1 or 0 when ``|r| = 0``).

    Not symmetric and not clipped: it is negative when ``h`` has many more concepts than ``r``.

    >>> concept_error(Act.parse("inform(area=north)"), Act.parse("inform(area=north,food=thai)"))
    0.5
    >>> concept_error(Act.parse("inform(a=1,b=2,c=3)"), Act.parse("inform(a=1)"))
    -1.0
    """
    ref = r.concept_tokens()
    hyp = h.concept_tokens()
    if not ref:
        return 1.0 if not hyp else 0.0
    return (len(ref) - Levenshtein.distance(hyp, ref)) / len(ref)


def concept_match(a: Act, b: Act) -> float:
    """``CM(a, b) = (δ(act, act') + Σ_{γ∈S̃} m(γ)) / (1 + |S̃|)``.

    >>> concept_match(Act.parse("hello()"), Act.parse("bye()"))
    0.0
    >>> concept_match(Act.parse("request(food)"), Act.parse("request(area)"))
    0.2
    """
    sa, sb = a.concept_set(), b.concept_set()
    union = sa | sb
    same_intent = 1.0 if a.intents == b.intents else 0.0
    return (same_intent + len(sa & sb)) / (1 + len(union))


_CALLS_OPTION = MeasureOption(
    "str", "how turns of several acts (tool calls) compare: strict (default, in order), unordered, subset, superset, "
    "per_message (a trajectory message by message: agentevals' strict)"
)
_ARGS_OPTION = MeasureOption(
    "str", "how paired calls' arguments compare: exact (default), ignore (tool names only), subset (the first "
    "side's among the second's), superset"
)
_ARGS_FOR_OPTION = MeasureOption(
    "str", "args per tool, overriding args: TOOL=MODE,TOOL=MODE (a table in an experiment file)"
)
_CALL_OPTIONS = {"calls": _CALLS_OPTION, "args": _ARGS_OPTION, "args_for": _ARGS_FOR_OPTION}


class _ActionMeasure(PairwiseMeasure):
    level: Literal["action", "text"] = "action"
    higher_is_better = True
    symmetric = True
    bounds = (0.0, 1.0)
    _missing_what = "action"
    _pair_score: Callable[[Act, Act], float]
    options = _CALL_OPTIONS

    def __init__(self, *, calls: str = "strict", args: str = "exact", args_for: Mapping[str, str] | str | None = None,
                 ) -> None:
        self.calls = check_call_mode(calls)
        self.args = ArgumentMatch.of(args, args_for)
        self.symmetric = self.calls in ("strict", "unordered", "per_message") and self.args.symmetric

    def _calls_signature(self) -> str:
        return ("" if self.calls == "strict" else f"|calls:{self.calls}") + self.args.signature()

    def _plain(self, values: Sequence[Any]) -> bool:
        """Whether single acts in ``strict`` mode, arguments exact: the definitions of the metrics reference apply."""
        return self.calls == "strict" and self.args.exact and not any(type(v) is ActSequence for v in values)

    def _check_value(self, value: object) -> None:
        if not isinstance(value, Act):
            raise InvalidResponseError(
                f"{self.name}: expected simscore.Act, an act string, a ConvLab act list or None, "
                f"got {type(value).__name__} {value!r}"
            )

    def _factorise(self, a: Sequence[Any], b: Sequence[Any]) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
        try:
            return unique_pairs(a, b)
        except TypeError:
            # ConvLab turns given as lists cannot be factorised (unhashable): convert them first
            if not any(isinstance(v, list) for side in (a, b) for v in side):
                raise
            return unique_pairs(_convlab_lists_to_acts(a), _convlab_lists_to_acts(b))

    def score_distinct(self, values: list[Any], pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
        if any(v is not None and type(v) is not Act for v in values):
            values, codes = _canonical_acts(values)
            pair_a, pair_b = codes[pair_a], codes[pair_b]
        return super().score_distinct(values, pair_a, pair_b)

    def _score_distinct(self, left: list[Act], right: list[Act]) -> np.ndarray:
        score = self._pair_score if self._plain(left) and self._plain(right) else self._turn_score
        return np.fromiter(map(score, left, right), dtype=np.float64, count=len(left))

    def _turn_score(self, a: Act, b: Act) -> float:
        """The score of two turns of any number of calls, in the ``calls`` mode."""
        return float(getattr(scores(a, b, self.calls, clip=bool(getattr(self, "clip", False)), args=self.args),
                             self.name))


def _to_act(value: Any) -> Act | None:
    if value is None or isinstance(value, Act):
        return value
    if isinstance(value, str):
        return Act.parse(value)
    if isinstance(value, (list, tuple)):
        return Act.from_convlab(value)
    return value  # left for _check_value to reject with the measure's name


def _convlab_lists_to_acts(values: Sequence[Any]) -> list[Any]:
    return [Act.from_convlab(v) if isinstance(v, list) else v for v in values]


def _canonical_acts(values: list[Any]) -> tuple[list[Any], np.ndarray]:
    """Convert distinct inputs to acts and merge those that became equal.

    Returns the distinct acts (None kept) and, per input value, its index among them, so the
    index-level shortcuts (equal index = equal act) stay valid.
    """
    lookup: dict[Any, int] = {}
    distinct: list[Any] = []
    codes = np.empty(len(values), dtype=np.int64)
    for i, value in enumerate(values):
        act = _to_act(value)
        key = (type(act), act) if isinstance(act, Act) or act is None else (type(act), id(act))
        code = lookup.get(key)
        if code is None:
            code = lookup[key] = len(distinct)
            distinct.append(act)
        codes[i] = code
    return distinct, codes


class TotalMatchRate(_ActionMeasure):
    """TMR: 1 iff the two canonical actions are equal.

    >>> TotalMatchRate().score_pairs([Act.parse("request(food)")], [Act.parse("request(food)")])
    array([1.])
    """

    name = "tmr"

    @staticmethod
    def _pair_score(a: Act, b: Act) -> float:
        return 1.0 if a == b else 0.0

    def _score_indexed(self, values: list[Act], pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
        if self.calls != "strict" or not self.args.exact or any(len(v.messages) > 1 for v in values if v is not None):
            return super()._score_indexed(values, pair_a, pair_b)
        # the distinct values are distinct acts, so equal acts have the same index (strict compares the
        # calls in order, whatever the messages: sequences that differ only in them are distinct values)
        return (pair_a == pair_b).astype(np.float64)

    def signature(self) -> str:
        return "tmr|canonical-act-equality" + self._calls_signature()


class DialogueActMatchRate(_ActionMeasure):
    """DMR: 1 iff the dialogue-act identities (sorted distinct intents) are equal.

    >>> DialogueActMatchRate().score_pairs([Act.parse("request(food)")], [Act.parse("request(area)")])
    array([1.])
    """

    name = "dmr"

    @staticmethod
    def _pair_score(a: Act, b: Act) -> float:
        return 1.0 if a.intents == b.intents else 0.0

    def _score_indexed(self, values: list[Act], pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray:
        if not self._plain(values):
            return super()._score_indexed(values, pair_a, pair_b)
        lookup: dict[object, int] = {}
        codes = np.array([lookup.setdefault(None if v is None else v.intents, len(lookup)) for v in values])
        return (codes[pair_a] == codes[pair_b]).astype(np.float64)

    def signature(self) -> str:
        return "dmr|intent-equality" + self._calls_signature()


class ConceptErrorRate(_ActionMeasure):
    """CER as a similarity: δ(act, act') · (CE(a, a') + CE(a', a)) / 2.

    Parameters
    ----------
    clip : bool, default False
        Clip the symmetric CẼ at 0. Off by default, faithful to the paper, where CE can be
        negative when one action has far more concepts than the other; the documented
        lower bound is then −∞ in principle (``bounds`` reports it).
    calls : {"strict", "unordered", "subset", "superset", "per_message"}, default "strict"
        How turns of several acts compare (:mod:`simscore.measures.calls`); every action
        measure has this option, and ``args`` (``exact``, ``ignore``, ``subset``, ``superset``:
        how paired calls' arguments compare) and ``args_for`` (per tool, overriding ``args``).

    >>> a, b = Act.parse("inform(a=1,b=2,c=3)"), Act.parse("inform(a=1)")
    >>> ConceptErrorRate().score_pairs([a], [b]), ConceptErrorRate(clip=True).score_pairs([a], [b])
    (array([-0.33333333]), array([0.]))
    """

    name = "cer"

    options = {
        "clip": MeasureOption("bool", "clip the symmetric CE at 0 (default: no, as in the paper)"),
        **_CALL_OPTIONS,
    }

    def __init__(self, *, clip: bool = False, calls: str = "strict", args: str = "exact",
                 args_for: Mapping[str, str] | str | None = None) -> None:
        super().__init__(calls=calls, args=args, args_for=args_for)
        self.clip = check_bool("clip", clip)
        self.bounds = (0.0, 1.0) if self.clip else (-np.inf, 1.0)

    def _pair_score(self, a: Act, b: Act) -> float:
        if a.intents != b.intents:
            return 0.0
        value = (concept_error(a, b) + concept_error(b, a)) / 2.0
        return max(value, 0.0) if self.clip else value

    def signature(self) -> str:
        return (
            f"cer|levenshtein:{dist_version('Levenshtein')}|tokens:slot-value|sym:mean|gate:intent"
            f"|clip:{'yes' if self.clip else 'no'}{self._calls_signature()}"
        )


class ConceptMatchRate(_ActionMeasure):
    """CMR: ``(δ(act, act') + |shared concepts|) / (1 + |all concepts|)``.

    >>> ConceptMatchRate().score_pairs([Act.parse("hello()")], [Act.parse("hello()")])
    array([1.])
    """

    name = "cmr"

    @staticmethod
    def _pair_score(a: Act, b: Act) -> float:
        return concept_match(a, b)

    def signature(self) -> str:
        return "cmr|concepts:slots+triples" + self._calls_signature()
