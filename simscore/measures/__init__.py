"""The eight similarity measures in one registry.

``MEASURES`` maps a name to a default-configured measure. Configure a variant by building
its class (``BertScore(model=..., num_layers=...)``, ``ConceptErrorRate(clip=True)``) and
passing the instance wherever a name is accepted. Text measures load their models lazily,
on first scoring, so the registry is cheap to import.

Which measures an entry point uses when none are given is chosen on purpose: the library's
functions (:func:`~simscore.compare.compare`, :func:`~simscore.monitor.similarity`,
:class:`~simscore.monitor.BehaviourMonitor`, the analyses) default to
:data:`DEFAULT_MEASURES`, the four action measures, which need no model and cost
microseconds; the command line and the experiment, where a person wants the full picture,
default to :data:`ALL_MEASURES`. Everywhere a measure list is accepted, ``"all"``,
``"action"`` and ``"text"`` name those groups.

>>> list(MEASURES) == list(ALL_MEASURES)
True
>>> [m.name for m in resolve_measures("action")]
['tmr', 'dmr', 'cer', 'cmr']
>>> MEASURES["tmr"].level
'action'
>>> get_measure("bleu")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simscore.errors.UnknownMeasureError: unknown measure 'bleu'; did you mean 'bleu4'? (known: tmr, dmr, ...)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping

from simscore.errors import UnknownMeasureError
from simscore.measures._encoders import TFHubEncoder, UsemEncoder, default_use_encoder
from simscore.measures.action import (
    ConceptErrorRate,
    ConceptMatchRate,
    DialogueActMatchRate,
    TotalMatchRate,
)
from simscore.measures.base import Measure, PairwiseMeasure
from simscore.measures.bertscore import BertScore
from simscore.measures.bleu import Bleu4
from simscore.measures.use import UseAngular, UseCosine

__all__ = [
    "MEASURES",
    "ACTION_MEASURES",
    "TEXT_MEASURES",
    "ALL_MEASURES",
    "DEFAULT_MEASURES",
    "MEASURE_GROUPS",
    "Measure",
    "PairwiseMeasure",
    "get_measure",
    "resolve_measures",
    "TotalMatchRate",
    "DialogueActMatchRate",
    "ConceptErrorRate",
    "ConceptMatchRate",
    "UseCosine",
    "UseAngular",
    "Bleu4",
    "BertScore",
    "UsemEncoder",
    "TFHubEncoder",
    "default_use_encoder",
]

#: The four action-level measures (no model needed).
ACTION_MEASURES: tuple[str, ...] = ("tmr", "dmr", "cer", "cmr")
#: The four text-level measures (sentence models shipped in PyPI packages).
TEXT_MEASURES: tuple[str, ...] = ("use_cos", "use_ang", "bleu4", "bertscore")
#: All eight measures of the paper, in its order.
ALL_MEASURES: tuple[str, ...] = ACTION_MEASURES + TEXT_MEASURES
#: The library's default (see the module docstring): the action measures.
DEFAULT_MEASURES: tuple[str, ...] = ACTION_MEASURES
#: Names that stand for a group of measures wherever a measure list is accepted.
MEASURE_GROUPS: dict[str, tuple[str, ...]] = {"all": ALL_MEASURES, "action": ACTION_MEASURES, "text": TEXT_MEASURES}


class _Registry(Mapping[str, Measure]):
    """Name → measure, with "did you mean" for unknown names.

    A value may be a measure class, built on first use: the text measures need the ``text``
    extra, so without it ``import simscore`` still works and only using one raises
    :class:`~simscore.errors.MissingDependencyError` naming the extra.
    """

    def __init__(self, measures: Mapping[str, Measure | type]) -> None:
        self._measures = dict(measures)

    def __getitem__(self, name: str) -> Measure:
        try:
            measure = self._measures[name]
        except (KeyError, TypeError):
            raise _unknown(name, self._measures) from None
        if isinstance(measure, type):  # (Measure is a protocol a class would satisfy too)
            measure = self._measures[name] = measure()
        return measure

    def __iter__(self) -> Iterator[str]:
        return iter(self._measures)

    def __len__(self) -> int:
        return len(self._measures)

    def __repr__(self) -> str:
        return f"MEASURES({', '.join(self._measures)})"


def _unknown(name: object, known: Iterable[str]) -> UnknownMeasureError:
    names = list(known)
    close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return UnknownMeasureError(f"unknown measure {name!r}{hint} (known: {', '.join(names)})")


MEASURES: Mapping[str, Measure] = _Registry(
    {
        "tmr": TotalMatchRate(),
        "dmr": DialogueActMatchRate(),
        "cer": ConceptErrorRate(),
        "cmr": ConceptMatchRate(),
        "use_cos": UseCosine,
        "use_ang": UseAngular,
        "bleu4": Bleu4,
        "bertscore": BertScore,
    }
)
assert tuple(MEASURES) == ALL_MEASURES


def get_measure(measure: str | Measure) -> Measure:
    """A measure by registry name, or the given measure object itself."""
    if isinstance(measure, str):
        return MEASURES[measure]
    if isinstance(measure, Measure):
        return measure
    raise _unknown(measure, MEASURES)


def resolve_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Turn names, group names and measure objects into a list of measures (names must be unique).

    ``"all"``, ``"action"`` and ``"text"`` expand to their groups (:data:`MEASURE_GROUPS`).

    >>> [m.name for m in resolve_measures(["tmr", "text"])]
    ['tmr', 'use_cos', 'use_ang', 'bleu4', 'bertscore']
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    expanded: list[str | Measure] = []
    for m in measures:
        if isinstance(m, str) and m in MEASURE_GROUPS:
            expanded.extend(MEASURE_GROUPS[m])
        else:
            expanded.append(m)
    resolved = [get_measure(m) for m in expanded]
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"measures: each name may appear once, repeated: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("measures: need at least one measure")
    return resolved
