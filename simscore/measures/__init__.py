"""The eight similarity measures of the paper, and two more, in one registry.

Beside the paper's eight, ``emb_cos`` and ``emb_ang`` (:mod:`simscore.measures.embedding`)
score texts with any local sentence-embedding model; they are named on their own, never
part of ``"all"`` or ``"text"``, which keep the paper's measures.

``MEASURES`` maps a name to a default-configured measure. Configure a variant with
options by name -- ``resolve_measures(["bertscore"], options={"bertscore": {"model": DIR,
"num_layers": 17}})``, the same options the command line (``--measure-option
bertscore.model=DIR``) and the experiment file (``[measures.bertscore]``) pass, checked before
any work (:mod:`simscore.measures.options`) -- or by building its class
(``BertScore(model=..., num_layers=...)``, ``ConceptErrorRate(clip=True)``) and passing the
instance wherever a name is accepted. Text measures load their models lazily, on first
scoring, so the registry is cheap to import.

Which measures an entry point uses when none are given is chosen on purpose: the library's
functions (:func:`~simscore.comparison.compare`, :func:`~simscore.monitor.similarity`,
:class:`~simscore.monitor.BehaviourMonitor`, the analyses) default to
:data:`DEFAULT_MEASURES`, the four action measures, which need no model and cost
microseconds; the command line and the experiment, where a person wants the full picture,
default to :data:`ALL_MEASURES`. Everywhere a measure list is accepted, ``"all"``,
``"action"`` and ``"text"`` name those groups.

>>> list(MEASURES) == [*ALL_MEASURES, *EMBEDDING_MEASURES]
True
>>> [m.name for m in resolve_measures("action")]
['tmr', 'dmr', 'cer', 'cmr']
>>> MEASURES["tmr"].level
'action'
>>> get_measure("bleu")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simscore.errors.UnknownMeasureError: unknown measure 'bleu'; did you mean 'bleu4'? (known: tmr, dmr, ...)
>>> resolve_measures(["cer"], options={"cer": {"clip": True}})[0].signature().endswith("clip:yes")
True
>>> resolve_measures(["cer"], options={"cer": {"clp": True}})
Traceback (most recent call last):
...
simscore.errors.MeasureOptionError: cer has no option 'clp'; did you mean 'clip'? (options: clip, calls, args, args_for)
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from simscore.errors import MeasureOptionError, UnknownMeasureError
from simscore.measures._encoders import TFHubEncoder, UsemEncoder, default_use_encoder
from simscore.measures._torch import check_device
from simscore.measures.action import (
    ConceptErrorRate,
    ConceptMatchRate,
    DialogueActMatchRate,
    TotalMatchRate,
)
from simscore.measures.base import Measure, PairwiseMeasure
from simscore.measures.bertscore import BertScore
from simscore.measures.bleu import Bleu4
from simscore.measures.embedding import EmbeddingAngular, EmbeddingCosine
from simscore.measures.options import MeasureOption, check_option_names, parse_assignment, parse_value
from simscore.measures.use import UseAngular, UseCosine

__all__ = [
    "MEASURES",
    "ACTION_MEASURES",
    "TEXT_MEASURES",
    "ALL_MEASURES",
    "EMBEDDING_MEASURES",
    "DEFAULT_MEASURES",
    "MEASURE_GROUPS",
    "Measure",
    "PairwiseMeasure",
    "get_measure",
    "resolve_measures",
    "measure_options",
    "configure_measure",
    "with_device",
    "check_device",
    "with_cache_dir",
    "options_from_assignments",
    "MeasureOption",
    "TotalMatchRate",
    "DialogueActMatchRate",
    "ConceptErrorRate",
    "ConceptMatchRate",
    "UseCosine",
    "UseAngular",
    "Bleu4",
    "BertScore",
    "EmbeddingCosine",
    "EmbeddingAngular",
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
#: Sentence-embedding similarity with any local model (not in the paper, not in "all").
EMBEDDING_MEASURES: tuple[str, ...] = ("emb_cos", "emb_ang")
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
        #: the class of each entry, to build configured variants without the default one
        self.classes: dict[str, Any] = {
            name: m if isinstance(m, type) else type(m) for name, m in self._measures.items()
        }

    def __getitem__(self, name: str) -> Measure:
        try:
            measure = self._measures[name]
        except (KeyError, TypeError):
            raise _unknown(name, self._measures) from None
        if isinstance(measure, type):  # (Measure is a protocol a class would satisfy too)
            measure = self._measures[name] = measure()
        return measure

    def __contains__(self, name: object) -> bool:
        # by name only: Mapping's default builds the measure, which without its extra raises
        return name in self._measures

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


MEASURES: _Registry = _Registry(
    {
        "tmr": TotalMatchRate(),
        "dmr": DialogueActMatchRate(),
        "cer": ConceptErrorRate(),
        "cmr": ConceptMatchRate(),
        "use_cos": UseCosine,
        "use_ang": UseAngular,
        "bleu4": Bleu4,
        "bertscore": BertScore,
        "emb_cos": EmbeddingCosine,
        "emb_ang": EmbeddingAngular,
    }
)
assert tuple(MEASURES) == ALL_MEASURES + EMBEDDING_MEASURES


def get_measure(measure: str | Measure) -> Measure:
    """A measure by registry name, or the given measure object itself."""
    if isinstance(measure, str):
        return MEASURES[measure]
    if isinstance(measure, Measure):
        return measure
    raise _unknown(measure, MEASURES)


def measure_options(name: str) -> Mapping[str, MeasureOption]:
    """The options a registered measure takes (name -> kind and help).

    >>> list(measure_options("bleu4"))
    ['tokenize', 'lowercase']
    """
    if not isinstance(name, str) or name not in MEASURES:
        raise _unknown(name, MEASURES)
    return MEASURES.classes[name].options


def configure_measure(name: str, options: Mapping[str, Any] | None = None, *,
                      shared: dict[Any, Any] | None = None) -> Measure:
    """A registered measure with ``options``; without options, the shared default instance.

    Option names are checked (the closest known one is suggested); the values are checked by
    the measure's constructor, which loads no model. ``shared`` lets measures configured alike
    share a model (one dictionary per set of measures, as :func:`resolve_measures` passes).

    >>> configure_measure("bleu4", {"lowercase": True}).signature().endswith("lc:yes")
    True
    """
    if not options:
        return MEASURES[name]
    check_option_names(name, options, measure_options(name))
    cls = MEASURES.classes[name]
    try:
        return cls.from_options(dict(options), {} if shared is None else shared)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, UnknownMeasureError):
            raise
        raise MeasureOptionError(f"{name}: {exc}") from exc


def with_device(measures: Iterable[str], options: Mapping[str, Mapping[str, Any]] | None,
                device: str | None) -> dict[str, dict[str, Any]]:
    """``options`` with ``device`` added for every named measure (groups expanded) that has a
    ``device`` option and none given (what ``--device`` means); the others run where they
    always run (USE and BLEU on the CPU).

    >>> with_device(["action", "bleu4", "bertscore"], {}, "cuda:1")
    {'bertscore': {'device': 'cuda:1'}}
    """
    return _with_option(measures, options, "device", device)


def with_cache_dir(measures: Iterable[str], options: Mapping[str, Mapping[str, Any]] | None,
                   cache_dir: str | os.PathLike[str] | None) -> dict[str, dict[str, Any]]:
    """``options`` with ``cache_dir`` added for every named measure (groups expanded) that keeps
    embeddings (:mod:`simscore.measures.disk_cache`) and has none given (what ``--cache-dir``
    means, and what an experiment does with its folder's ``cache/embeddings``). No number
    changes: the cache is in no signature.

    >>> with_cache_dir(["action", "bleu4", "use_cos", "bertscore"], {"bertscore": {"cache_dir": "b"}}, "a")
    {'bertscore': {'cache_dir': 'b'}, 'use_cos': {'cache_dir': 'a'}}
    """
    return _with_option(measures, options, "cache_dir", None if cache_dir is None else os.fspath(cache_dir))


def _with_option(measures: Iterable[str], options: Mapping[str, Mapping[str, Any]] | None, option: str,
                 value: Any) -> dict[str, dict[str, Any]]:
    out = {name: dict(values) for name, values in (options or {}).items()}
    if value is not None:
        for name in _expand([measures] if isinstance(measures, str) else measures):
            if isinstance(name, str) and option in measure_options(name):
                out.setdefault(name, {}).setdefault(option, value)
    return out


def options_from_assignments(assignments: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Options from ``MEASURE.OPTION=VALUE`` texts (the command line's ``--measure-option``),
    each value read as its option's kind says (:func:`~simscore.measures.options.parse_value`).

    >>> options_from_assignments(["bertscore.num_layers=4", "bertscore.idf=no", "cer.clip=yes"])
    {'bertscore': {'num_layers': 4, 'idf': False}, 'cer': {'clip': True}}
    """
    out: dict[str, dict[str, Any]] = {}
    for text in assignments:
        measure, option, value = parse_assignment(text)
        known = measure_options(measure)
        check_option_names(measure, [option], known)
        if option in out.get(measure, {}):
            raise MeasureOptionError(f"{measure}.{option} is given twice")
        out.setdefault(measure, {})[option] = parse_value(f"{measure}.{option}", known[option].kind, value)
    return out


def resolve_measures(
    measures: str | Measure | Iterable[str | Measure],
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Measure]:
    """Turn names, group names and measure objects into a list of measures (names must be unique).

    ``"all"``, ``"action"`` and ``"text"`` expand to their groups (:data:`MEASURE_GROUPS`).
    ``options`` maps a measure name to its options (:func:`configure_measure`); every name in
    it must be one of the measures named (a measure object is configured already).

    >>> [m.name for m in resolve_measures(["tmr", "text"])]
    ['tmr', 'use_cos', 'use_ang', 'bleu4', 'bertscore']
    >>> resolve_measures(["tmr"], options={"bleu4": {"lowercase": True}})
    Traceback (most recent call last):
    ...
    simscore.errors.MeasureOptionError: options given for bleu4, which is not among the measures (tmr)
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    expanded = _expand(measures)
    options = _check_options_table(options, expanded)
    shared: dict[Any, Any] = {}
    resolved = [
        configure_measure(m, options.get(m), shared=shared) if isinstance(m, str) else get_measure(m)
        for m in expanded
    ]
    names = [m.name for m in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"measures: each name may appear once, repeated: {', '.join(duplicates)}")
    if not resolved:
        raise ValueError("measures: need at least one measure")
    return resolved


def _expand(measures: Iterable[str | Measure]) -> list[str | Measure]:
    """Group names replaced by their measures' names."""
    expanded: list[str | Measure] = []
    for m in measures:
        if isinstance(m, str) and m in MEASURE_GROUPS:
            expanded.extend(MEASURE_GROUPS[m])
        else:
            expanded.append(m)
    return expanded


def _check_options_table(options: Any, expanded: list[str | Measure]) -> dict[str, Mapping[str, Any]]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise MeasureOptionError(f"options must map measure names to options, got {type(options).__name__}")
    by_name = [m for m in expanded if isinstance(m, str)]
    for name, values in options.items():
        if name not in MEASURES:
            raise _unknown(name, MEASURES)
        if not isinstance(values, Mapping):
            raise MeasureOptionError(f"options of {name} must map option names to values, got {values!r}")
        if name not in by_name:
            objects = [m for m in expanded if not isinstance(m, str) and getattr(m, "name", None) == name]
            if objects:
                raise MeasureOptionError(f"options given for {name}, which is given as a configured object")
            raise MeasureOptionError(
                f"options given for {name}, which is not among the measures ({', '.join(map(str, by_name))})"
            )
    return dict(options)
