"""Interpretable features of contexts, for explaining where and why two policies differ.

:func:`context_features` turns every belief of a :class:`~contexts.context.ContextSet` into a
row of numbers a person can read (top-value probability and entropy per informable slot,
number of requested slots, the top method and discourse act one-hot, turn index, source,
grid cell); :func:`context_groups` gives a few categorical columns to group per-context
scores by (see :func:`simscore.analysis.disagreement.disagreement_by`).

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.context import Context, ContextSet
>>> b = BeliefState(slots={"area": {"north": 0.8}}, method={"byconstraints": 1.0}, requested={"phone": 0.9})
>>> cs = ContextSet([Context("c1", b, {"source": "col", "turn_index": 3})], name="demo")
>>> row = context_features(cs).loc["c1"]
>>> float(row["area_top_p"]), bool(row["area_above_half"]), int(row["n_requested"]), int(row["method=byconstraints"])
(0.8, True, 1, 1)
>>> context_groups(cs).loc["c1"].tolist()
['3-4', 'byconstraints', 'none', 'area', 'n/a', 'col']
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from contexts.domain import DISCOURSE_ACTS, METHODS

if TYPE_CHECKING:
    import pandas

__all__ = ["context_features", "context_groups", "grid_cell", "TURN_BUCKETS"]

#: Turn buckets of :func:`context_groups` as (label, first turn, last turn or None).
TURN_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0", 0, 0),
    ("1", 1, 1),
    ("2", 2, 2),
    ("3-4", 3, 4),
    ("5-9", 5, 9),
    ("10+", 10, None),
)
_NOT_APPLICABLE = "n/a"
_NO_SLOT = "none"


def _check(contexts: object) -> ContextSet:
    if not isinstance(contexts, ContextSet):
        raise TypeError(f"contexts must be a ContextSet, got {type(contexts).__name__}")
    return contexts


def _slots(contexts: ContextSet) -> list[str]:
    """Informable slots of any belief, in order of first appearance (beliefs are canonically ordered)."""
    return list(dict.fromkeys(slot for context in contexts for slot in context.belief.slots))


def _entropy(dist: Mapping[str, float] | None) -> float:
    """Shannon entropy in bits of a slot distribution (0 for an absent slot: all mass on none)."""
    if not dist:
        return 0.0
    return float(-sum(p * math.log2(p) for p in dist.values() if p > 0.0)) + 0.0


def grid_cell(context: Context) -> str | None:
    """The C_gen grid cell of a generated context, e.g. ``"area=0.4/pricerange=0.2/food=1.0/method=byname"``.

    The cell is the context's id without the ``gen/`` prefix (ids of
    :func:`~contexts.generate.generate_grid` name the levels and the method); None for a
    context that did not come from the grid (source not ``"gen"`` or no ``level_<slot>`` metadata).

    >>> from contexts.generate import generate_grid
    >>> grid_cell(generate_grid()["gen/area=0.4/pricerange=0.2/food=1.0/method=byname"])
    'area=0.4/pricerange=0.2/food=1.0/method=byname'
    """
    if context.metadata["source"] != "gen" or not any(key.startswith("level_") for key in context.metadata):
        return None
    return context.id[4:] if context.id.startswith("gen/") else context.id


def _above_half(belief: BeliefState, slots: list[str]) -> list[str]:
    return [slot for slot in slots if belief.top(slot)[1] > 0.5]


def context_features(contexts: ContextSet) -> pandas.DataFrame:
    """One row of interpretable features per context.

    Parameters
    ----------
    contexts : ContextSet

    Returns
    -------
    pandas.DataFrame
        Index ``context_id`` (the set's order). Columns, per informable slot ``s`` of any
        belief (canonical slot order): ``s_top_p`` (probability of the most probable value
        other than ``none``, :meth:`~contexts.belief.BeliefState.top`), ``s_entropy``
        (Shannon entropy in bits of the slot's distribution, ``none`` included) and
        ``s_above_half`` (bool: ``s_top_p > 0.5``); then ``n_requested`` (number of
        requestable slots requested with probability > 0.5), ``offer_happened`` and
        ``last_informed_no_venue`` (bool), ``method=<m>`` for every method and
        ``discourse_act=<d>`` for every discourse act (0/1 ints: the belief's top value is 1),
        ``turn_index`` (float, NaN where absent; the column exists only when some context
        has a turn index), ``source`` (str) and ``grid_cell`` (str, see :func:`grid_cell`;
        None for contexts not from the grid).

    Raises
    ------
    TypeError
        If ``contexts`` is not a ContextSet.
    """
    import pandas as pd

    contexts = _check(contexts)
    slots = _slots(contexts)
    rows = []
    has_turn = False
    for context in contexts:
        belief = context.belief
        row: dict[str, object] = {}
        for slot in slots:
            top_p = belief.top(slot)[1]
            row[f"{slot}_top_p"] = top_p
            row[f"{slot}_entropy"] = _entropy(belief.slots.get(slot))
            row[f"{slot}_above_half"] = top_p > 0.5
        row["n_requested"] = sum(1 for p in belief.requested.values() if p > 0.5)
        row["offer_happened"] = belief.offer_happened
        row["last_informed_no_venue"] = belief.last_informed_no_venue
        top_method, top_act = belief.top_method(), belief.top_discourse_act()
        row.update((f"method={m}", int(m == top_method)) for m in METHODS)
        row.update((f"discourse_act={d}", int(d == top_act)) for d in DISCOURSE_ACTS)
        turn = context.metadata["turn_index"]
        has_turn = has_turn or turn is not None
        row["turn_index"] = math.nan if turn is None else float(turn)
        row["source"] = context.metadata["source"]
        row["grid_cell"] = grid_cell(context)
        rows.append(row)
    frame = pd.DataFrame(rows, index=pd.Index(list(contexts.ids), name="context_id", dtype=object))
    if not rows:
        columns = [f"{s}_{k}" for s in slots for k in ("top_p", "entropy", "above_half")]
        columns += ["n_requested", "offer_happened", "last_informed_no_venue"]
        columns += [f"method={m}" for m in METHODS] + [f"discourse_act={d}" for d in DISCOURSE_ACTS]
        frame = pd.DataFrame(columns=columns + ["source", "grid_cell"], index=frame.index)
    elif not has_turn:
        frame = frame.drop(columns="turn_index")
    return frame


def _turn_bucket(turn: int | None) -> str:
    if turn is None:
        return _NOT_APPLICABLE
    for label, first, last in TURN_BUCKETS:
        if turn >= first and (last is None or turn <= last):
            return label
    raise AssertionError(turn)  # pragma: no cover - buckets cover every int >= 0


def _above_key(label: str) -> tuple[int, int, str]:
    """Order of ``slots_above_half`` labels: none first, then by number of slots, then by name."""
    return (label != _NO_SLOT, label.count("+"), label)


def context_groups(contexts: ContextSet) -> pandas.DataFrame:
    """Categorical columns to group per-context scores by.

    Parameters
    ----------
    contexts : ContextSet

    Returns
    -------
    pandas.DataFrame
        Index ``context_id``; ordered categorical columns ``turn`` (the turn index bucketed
        as in :data:`TURN_BUCKETS`, ``"n/a"`` without one), ``method`` (the most probable
        user method), ``discourse_act`` (the most probable user discourse act),
        ``slots_above_half`` (the informable slots whose top value has probability > 0.5,
        joined with ``+`` in canonical slot order, ``"none"`` if there is none; categories:
        ``"none"``, then fewer slots first, then alphabetically),
        ``grid_cell`` (see :func:`grid_cell`; ``"n/a"`` for contexts not from the grid) and
        ``source``.

    Raises
    ------
    TypeError
        If ``contexts`` is not a ContextSet.
    """
    import pandas as pd

    contexts = _check(contexts)
    slots = _slots(contexts)
    turn, method, act, above, cell, source = [], [], [], [], [], []
    for context in contexts:
        belief = context.belief
        turn.append(_turn_bucket(context.metadata["turn_index"]))
        method.append(belief.top_method())
        act.append(belief.top_discourse_act())
        above.append("+".join(_above_half(belief, slots)) or _NO_SLOT)
        cell.append(grid_cell(context) or _NOT_APPLICABLE)
        source.append(context.metadata["source"])
    turn_order = [label for label, _, _ in TURN_BUCKETS] + [_NOT_APPLICABLE]

    def categorical(values: list[str], order: list[str]) -> pd.Categorical:
        present = set(values)
        return pd.Categorical(values, categories=[v for v in order if v in present], ordered=True)

    def first_seen(values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))

    return pd.DataFrame(
        {
            "turn": categorical(turn, turn_order),
            "method": categorical(method, list(METHODS)),
            "discourse_act": categorical(act, list(DISCOURSE_ACTS)),
            "slots_above_half": categorical(above, sorted(first_seen(above), key=_above_key)),
            "grid_cell": categorical(cell, first_seen(cell)),
            "source": categorical(source, first_seen(source)),
        },
        index=pd.Index(list(contexts.ids), name="context_id", dtype=object),
    )
