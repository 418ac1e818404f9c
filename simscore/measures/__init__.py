"""The eight similarity measures in one registry.

``MEASURES`` maps a name to a default-configured measure. Configure a variant by building
its class (``BertScore(model=..., num_layers=...)``, ``ConceptErrorRate(clip=True)``) and
passing the instance wherever a name is accepted. Text measures load their models lazily,
on first scoring, so the registry is cheap to import.

>>> list(MEASURES)
['tmr', 'dmr', 'cer', 'cmr', 'use_cos', 'use_ang', 'bleu4', 'bertscore']
>>> MEASURES["tmr"].level
'action'
>>> get_measure("bleu")
Traceback (most recent call last):
...
simscore.errors.UnknownMeasureError: unknown measure 'bleu'; did you mean 'bleu4'? (known: tmr, dmr, cer, cmr, use_cos, use_ang, bleu4, bertscore)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping

from simscore.errors import UnknownMeasureError
from simscore.measures.action import (
    ConceptErrorRate,
    ConceptMatchRate,
    DialogueActMatchRate,
    TotalMatchRate,
)
from simscore.measures.base import Measure, PairwiseMeasure
from simscore.measures._encoders import TFHubEncoder, UsemEncoder
from simscore.measures.text import (
    BertScore,
    Bleu4,
    UseAngular,
    UseCosine,
    default_text_measures,
    default_use_encoder,
)

__all__ = [
    "MEASURES",
    "ACTION_MEASURES",
    "TEXT_MEASURES",
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

ACTION_MEASURES = ("tmr", "dmr", "cer", "cmr")
TEXT_MEASURES = ("use_cos", "use_ang", "bleu4", "bertscore")


class _Registry(Mapping[str, Measure]):
    """Name → measure, with "did you mean" for unknown names."""

    def __init__(self, measures: Mapping[str, Measure]) -> None:
        self._measures = dict(measures)

    def __getitem__(self, name: str) -> Measure:
        try:
            return self._measures[name]
        except (KeyError, TypeError):
            raise _unknown(name, self._measures) from None

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
        **default_text_measures(),
    }
)


def get_measure(measure: str | Measure) -> Measure:
    """A measure by registry name, or the given measure object itself."""
    if isinstance(measure, str):
        return MEASURES[measure]
    if isinstance(measure, Measure):
        return measure
    raise _unknown(measure, MEASURES)


def resolve_measures(measures: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Turn names and measure objects into a list of measures (names must be unique)."""
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    resolved = [get_measure(m) for m in measures]
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"measures: each name may appear once, repeated: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("measures: need at least one measure")
    return resolved
