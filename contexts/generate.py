"""C_gen: a grid of belief states over the parts of the state that matter most.

The default grid is the paper's: the top-value probability of area, pricerange and food in
{0.0, 0.2, ..., 1.0} (the remaining mass on ``none``), crossed with the six method values
(one-hot) -> 6 x 6 x 6 x 6 = 1,296 contexts. Which value carries the probability does not
matter for the comparison (the paper notes this), so each slot uses one fixed
representative value: by default the value most venues of the domain have.

Examples
--------
>>> grid = generate_grid()
>>> len(grid), grid.ids[0], grid.ids[-1]
(1296, 'gen/area=0.0/pricerange=0.0/food=0.0/method=none', 'gen/area=1.0/pricerange=1.0/food=1.0/method=restart')
>>> small = generate_grid(GridSpec(slots=("area",), levels=(0.5, 1.0), methods=("byname",)))
>>> small.ids
('gen/area=0.5/method=byname', 'gen/area=1.0/method=byname')
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from contexts._bulk import gc_paused
from contexts._frozen import FrozenDict
from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from contexts.domain import METHODS, VENUE_FIELDS, Domain, default_domain
from simscore.checks import check_probability
from simscore.errors import InvalidContextError

__all__ = ["GridSpec", "generate_grid", "grid_id", "format_level", "representative_values"]

_DEFAULT_LEVELS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def format_level(level: float) -> str:
    """A level as it appears in context ids: shortest round-trip form, always with a point.

    >>> format_level(0.4), format_level(1), format_level(0.25), format_level(0.1 + 0.2)
    ('0.4', '1.0', '0.25', '0.3')
    """
    text = format(float(level), ".10g")
    if "." not in text and "e" not in text:
        text += ".0"
    return text


def grid_id(levels: Mapping[str, float], method: str) -> str:
    """The id of a grid context: ``gen/<slot>=<level>/.../method=<method>``.

    >>> grid_id({"area": 0.4, "pricerange": 0.2, "food": 1.0}, "byname")
    'gen/area=0.4/pricerange=0.2/food=1.0/method=byname'
    """
    parts = [f"{slot}={format_level(level)}" for slot, level in levels.items()]
    return "/".join(["gen", *parts, f"method={method}"])


def _check_levels(levels: Any, where: str) -> tuple[float, ...]:
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        raise InvalidContextError(f"{where} must be a sequence of numbers, got {levels!r}")
    out = []
    for level in levels:
        if not isinstance(level, Real) and hasattr(level, "__float__"):
            level = float(level)  # e.g. a Decimal
        out.append(check_probability(f"{where}: level", level, error=InvalidContextError))
    if not out:
        raise InvalidContextError(f"{where} must not be empty")
    labels = [format_level(v) for v in out]
    if len(set(labels)) != len(labels):
        raise InvalidContextError(f"{where} contains the same level twice: {', '.join(labels)}")
    return tuple(out)


@dataclass(frozen=True)
class GridSpec:
    """Parameters of the C_gen grid (the defaults reproduce the paper's 1,296 contexts).

    Parameters
    ----------
    slots : tuple of str
        Informable slots whose top-value probability varies (default area, pricerange, food).
    levels : tuple of float, or mapping of slot to tuple of float
        Probabilities of each slot's representative value (the rest of the slot's mass is on
        ``none``); one tuple for every slot, or one per slot. Default 0.0, 0.2, ..., 1.0.
    values : mapping of str to str, optional
        Representative value per slot; a slot not given gets the value most venues of the
        domain have (ties: ontology order; the first ontology value for a slot that is no
        venue field).
    methods : tuple of str
        Method values, each used one-hot (default: all six).
    discourse_act : mapping of str to float
        The discourse-act distribution of every context (default ``none`` = 1).
    requested : mapping of str to float
        Requested-slot probabilities of every context (default: nothing requested).
    last_offered : str or None
        Default None (no venue offered).
    offer_happened, last_informed_no_venue : bool
        Default False.

    Every informable slot of the ontology that is not in ``slots`` (e.g. ``name``) has all
    its mass on ``none``.
    """

    slots: tuple[str, ...] = ("area", "pricerange", "food")
    levels: tuple[float, ...] | Mapping[str, tuple[float, ...]] = _DEFAULT_LEVELS
    values: Mapping[str, str] = field(default_factory=FrozenDict)
    methods: tuple[str, ...] = METHODS
    discourse_act: Mapping[str, float] = field(default_factory=lambda: FrozenDict({"none": 1.0}))
    requested: Mapping[str, float] = field(default_factory=FrozenDict)
    last_offered: str | None = None
    offer_happened: bool = False
    last_informed_no_venue: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.slots, str) or not self.slots:
            raise InvalidContextError(f"slots must be a non-empty sequence of slot names, got {self.slots!r}")
        slots = tuple(self.slots)
        if len(set(slots)) != len(slots):
            raise InvalidContextError(f"slots contains a slot twice: {', '.join(slots)}")
        object.__setattr__(self, "slots", slots)
        if isinstance(self.levels, Mapping):
            unknown = [s for s in self.levels if s not in slots]
            if unknown:
                raise InvalidContextError(f"levels given for slot(s) not in slots: {', '.join(map(repr, unknown))}")
            missing = [s for s in slots if s not in self.levels]
            if missing:
                raise InvalidContextError(f"levels lacks slot(s) {', '.join(map(repr, missing))}")
            levels: Any = FrozenDict({s: _check_levels(self.levels[s], f"levels[{s!r}]") for s in slots})
        else:
            levels = _check_levels(self.levels, "levels")
        object.__setattr__(self, "levels", levels)
        if not isinstance(self.values, Mapping):
            raise InvalidContextError(f"values must be a mapping of slot -> value, got {self.values!r}")
        for slot, value in self.values.items():
            if slot not in slots:
                raise InvalidContextError(f"values: slot {slot!r} is not in slots")
            if not isinstance(value, str) or value in ("none", ""):
                raise InvalidContextError(f"values: representative value of {slot!r} must be a value name, got {value!r}")
        object.__setattr__(self, "values", FrozenDict(self.values))
        if isinstance(self.methods, str) or not self.methods:
            raise InvalidContextError(f"methods must be a non-empty sequence, got {self.methods!r}")
        methods = tuple(self.methods)
        for method in methods:
            if method not in METHODS:
                raise InvalidContextError(f"methods: unknown method {method!r} (known: {', '.join(METHODS)})")
        if len(set(methods)) != len(methods):
            raise InvalidContextError(f"methods contains a method twice: {', '.join(methods)}")
        object.__setattr__(self, "methods", methods)
        # Build one belief now so that bad discourse acts, requests or flags fail here.
        probe = BeliefState(
            discourse_act=self.discourse_act,
            requested=self.requested,
            last_offered=self.last_offered,
            offer_happened=self.offer_happened,
            last_informed_no_venue=self.last_informed_no_venue,
        )
        object.__setattr__(self, "discourse_act", probe.discourse_act)
        object.__setattr__(self, "requested", probe.requested)

    def levels_of(self, slot: str) -> tuple[float, ...]:
        """The levels of ``slot``."""
        if isinstance(self.levels, Mapping):
            return self.levels[slot]
        return self.levels

    @property
    def size(self) -> int:
        """The number of contexts of the grid.

        >>> GridSpec().size, GridSpec(levels=(0.0, 0.5, 1.0), methods=("byname", "none")).size
        (1296, 54)
        """
        return math.prod(len(self.levels_of(s)) for s in self.slots) * len(self.methods)

    def to_json(self) -> dict[str, Any]:
        """The parameters as JSON values (recorded in the context file's header)."""
        return {
            "slots": list(self.slots),
            "levels": (
                {s: list(v) for s, v in self.levels.items()}
                if isinstance(self.levels, Mapping)
                else list(self.levels)
            ),
            "values": dict(self.values),
            "methods": list(self.methods),
            "discourse_act": {k: p for k, p in self.discourse_act.items() if p},
            "requested": dict(self.requested),
            "last_offered": self.last_offered,
            "offer_happened": self.offer_happened,
            "last_informed_no_venue": self.last_informed_no_venue,
        }


def representative_values(spec: GridSpec, domain: Domain) -> dict[str, str]:
    """The representative value of each grid slot (``spec.values`` or the most common).

    >>> representative_values(GridSpec(), default_domain())
    {'area': 'centre', 'pricerange': 'expensive', 'food': 'indian'}
    """
    ontology = domain.ontology
    out: dict[str, str] = {}
    for slot in spec.slots:
        if slot not in ontology.informable:
            raise InvalidContextError(
                f"grid slot {slot!r} is not an informable slot of domain {domain.name!r} "
                f"(known: {', '.join(ontology.informable)})"
            )
        if slot in spec.values:
            value = spec.values[slot]
            if value not in ontology.slot_values(slot):
                raise InvalidContextError(f"representative value {value!r} is not a value of slot {slot!r}")
            out[slot] = value
            continue
        candidates = ontology.informable[slot]
        if slot in VENUE_FIELDS:
            # max() keeps the first of equal counts, i.e. ontology order decides ties.
            out[slot] = max(candidates, key=lambda v: domain.count({slot: v}))
        else:
            out[slot] = candidates[0]
    return out


def generate_grid(
    spec: GridSpec | None = None, *, domain: Domain | None = None, name: str = "C_gen"
) -> ContextSet:
    """Generate the C_gen context set.

    Parameters
    ----------
    spec : GridSpec, optional
        Grid parameters; default ``GridSpec()`` (the paper's 1,296 contexts).
    domain : Domain, optional
        Default: :func:`~contexts.domain.default_domain`. Every belief is validated against
        its ontology.
    name : str
        Name of the returned set.

    Returns
    -------
    ContextSet
        Contexts in grid order (the first slot varies slowest, the method fastest), ids
        ``gen/<slot>=<level>/.../method=<method>``; metadata ``source="gen"``,
        ``dialogue_id=None``, ``turn_index=None``, ``history=()`` plus ``level_<slot>`` per
        grid slot. Defaults of the rest of each belief (see :class:`GridSpec`): no offer,
        no last venue, ``last_informed_no_venue`` False, discourse act ``none`` = 1, nothing
        requested, and every other informable slot (``name``) all mass on ``none``.
    """
    spec = GridSpec() if spec is None else spec
    if not isinstance(spec, GridSpec):
        raise InvalidContextError(f"spec must be a GridSpec, got {type(spec).__name__}")
    domain = default_domain() if domain is None else domain
    ontology = domain.ontology
    values = representative_values(spec, domain)
    # Every belief is a combination of a few parts: build and validate each part once and
    # let the beliefs share them (BeliefState accepts its own canonical parts unchecked).
    others = {slot: {"none": 1.0} for slot in ontology.informable if slot not in values}
    template = BeliefState(
        slots=others,
        discourse_act=spec.discourse_act,
        requested=spec.requested,
        last_offered=spec.last_offered,
        offer_happened=spec.offer_happened,
        last_informed_no_venue=spec.last_informed_no_venue,
    )
    template.validate(ontology)
    per_slot = []
    for slot in spec.slots:
        value = values[slot]
        options = []
        for level in spec.levels_of(slot):
            dist = {value: level, "none": round(1.0 - level, 12)} if level > 0.0 else {"none": 1.0}
            part = BeliefState(slots={slot: dist})
            part.validate(ontology)
            options.append((slot, level, format_level(level), part.slots[slot]))
        per_slot.append(options)
    method_parts = [(m, f"method={m}", BeliefState(method={m: 1.0}).method) for m in spec.methods]
    contexts = []
    with gc_paused():
        for combination in itertools.product(*per_slot):
            slots: dict[str, Any] = {slot: dist for slot, _, _, dist in combination}
            slots.update(template.slots)
            prefix = "/".join(["gen", *(f"{slot}={label}" for slot, _, label, _ in combination)])
            metadata: dict[str, Any] = {"source": "gen", "dialogue_id": None, "turn_index": None, "history": ()}
            metadata.update((f"level_{slot}", level) for slot, level, _, _ in combination)
            for _, suffix, method_dist in method_parts:
                belief = BeliefState(
                    slots=slots,
                    method=method_dist,
                    discourse_act=template.discourse_act,
                    requested=template.requested,
                    last_offered=template.last_offered,
                    offer_happened=template.offer_happened,
                    last_informed_no_venue=template.last_informed_no_venue,
                )
                contexts.append(Context(f"{prefix}/{suffix}", belief, metadata))
    built = {
        "generator": "contexts.generate_grid",
        "spec": spec.to_json(),
        "values": values,
    }
    return ContextSet(contexts, name=name, domain=domain.name, built=built)
