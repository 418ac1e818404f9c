"""What the report says about the context sets themselves (application layer).

A count of contexts alone misleads: C_col's contexts repeat belief states (the same opening,
the same offer), and the contexts of one dialogue are not independent. So beside every count
the report gives the distinct belief states and the dialogues, from:

* :func:`context_metadata` — a context set's metadata frame plus ``state`` (a code per
  distinct belief state) and ``user_bye`` (the user has just said bye: the simulator replaces
  the system's act by ``bye()`` there, so a policy's choice in such a context never reaches a
  user and is arbitrary);
* :func:`context_sets_table` — the ``contexts`` table: per context set (and per reward
  model's part of C_col) the contexts, distinct belief states, dialogues, user-bye contexts,
  and the first-turn contexts with their distinct belief states;
* :func:`sensitivity_table` — the ``sensitivity`` table: the seed-pair and reward-model
  means at the final checkpoint with and without the user-bye contexts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from contexts import ContextSet
    from simscore.comparison import Comparison

__all__ = ["CONTEXTS_COLUMNS", "SENSITIVITY_COLUMNS", "context_metadata", "context_sets_table", "sensitivity_table"]

#: Columns of the ``contexts`` table.
CONTEXTS_COLUMNS: tuple[str, ...] = (
    "context_set", "part", "contexts", "distinct_states", "dialogues", "user_bye", "first_turn",
    "first_turn_states",
)
#: Columns of the ``sensitivity`` table.
SENSITIVITY_COLUMNS: tuple[str, ...] = (
    "context_set", "analysis", "group", "checkpoint", "measure", "pairs", "mean_all", "contexts_all",
    "mean_without_bye", "contexts_without_bye",
)


def context_metadata(contexts: ContextSet) -> pd.DataFrame:
    """The set's metadata frame with ``state`` (distinct belief states coded 0, 1, …) and ``user_bye``.

    >>> from contexts import generate_grid
    >>> frame = context_metadata(generate_grid())
    >>> int(frame["state"].nunique()), bool(frame["user_bye"].any())
    (1296, False)
    """
    frame = contexts.metadata_frame()
    keys = [c.belief.key() for c in contexts]
    codes = pd.factorize(pd.Series(keys, dtype=object))[0]
    bye = [c.belief.discourse_act.get("bye", 0.0) > 0.5 for c in contexts]
    return frame.assign(state=codes, user_bye=np.array(bye, dtype=bool))


def _dialogues(frame: pd.DataFrame) -> int:
    if "dialogue_id" not in frame.columns or frame["dialogue_id"].isna().all():
        return 0
    source = frame["source_name"].astype(str) if "source_name" in frame.columns else ""
    return int((source + "/" + frame["dialogue_id"].astype(str)).nunique())


def _row(context_set: str, part: str, frame: pd.DataFrame) -> dict[str, Any]:
    turns = pd.to_numeric(frame["turn_index"], errors="coerce") if "turn_index" in frame.columns else None
    first = frame[turns == 1] if turns is not None else frame.iloc[:0]
    return {
        "context_set": context_set, "part": part, "contexts": len(frame), "distinct_states": int(frame["state"].nunique()),
        "dialogues": _dialogues(frame), "user_bye": int(frame["user_bye"].sum()), "first_turn": len(first),
        "first_turn_states": int(first["state"].nunique()),
    }


def context_sets_table(
    frames: Mapping[str, pd.DataFrame], parts: Mapping[str, Mapping[str, Sequence[str]]] | None = None
) -> pd.DataFrame:
    """The ``contexts`` table from each set's :func:`context_metadata` frame.

    Parameters
    ----------
    frames : mapping set name → frame
    parts : mapping set name → context ids per part, optional
        E.g. ``{"col": {"ts": [...], "iq": [...]}}``: a row per part after the set's own row.

    Examples
    --------
    >>> from contexts import generate_grid
    >>> context_sets_table({"gen": context_metadata(generate_grid())})[["contexts", "distinct_states", "dialogues"]]
       contexts  distinct_states  dialogues
    0      1296             1296          0
    """
    rows = []
    for name, frame in frames.items():
        rows.append(_row(name, "", frame))
        for part, ids in (parts or {}).get(name, {}).items():
            rows.append(_row(name, part, frame.loc[[i for i in ids if i in frame.index]]))
    return pd.DataFrame(rows, columns=list(CONTEXTS_COLUMNS))


def sensitivity_table(
    context_set: str, checkpoint: int, analyses: Mapping[str, Mapping[Any, Comparison]],
    measures: Sequence[str] = ("tmr", "dmr"),
) -> pd.DataFrame:
    """Means over each group of pairs at ``checkpoint``, with all contexts and without the user-bye ones.

    ``analyses`` maps an analysis name (``"seeds"``, ``"reward_models"``) to its comparisons
    at that checkpoint, keyed by keys with a ``group`` (or ``reward``) field; each comparison's
    scores must carry the ``user_bye`` metadata column (:func:`context_metadata`).
    """
    rows = []
    for analysis, comparisons in analyses.items():
        groups: dict[str, list[Comparison]] = {}
        for key, comparison in comparisons.items():
            group = getattr(key, "group", None) or f"{key.reward}-{key.reward}"
            groups.setdefault(str(group), []).append(comparison)
        for group, pairs in groups.items():
            for measure in measures:
                if not all(measure in c.measures for c in pairs):
                    continue
                means_all, means_kept, n_all, n_kept = [], [], [], []
                for c in pairs:
                    scores = c.scores[measure]
                    kept = scores[~c.scores["user_bye"].astype(bool)]
                    means_all.append(float(scores.mean()))
                    means_kept.append(float(kept.mean()))
                    n_all.append(int(scores.notna().sum()))
                    n_kept.append(int(kept.notna().sum()))
                rows.append({
                    "context_set": context_set, "analysis": analysis, "group": group, "checkpoint": checkpoint,
                    "measure": measure, "pairs": len(pairs), "mean_all": float(np.mean(means_all)),
                    "contexts_all": int(np.median(n_all)), "mean_without_bye": float(np.mean(means_kept)),
                    "contexts_without_bye": int(np.median(n_kept)),
                })
    return pd.DataFrame(rows, columns=list(SENSITIVITY_COLUMNS))
