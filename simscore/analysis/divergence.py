"""Where two policies part ways: per dialogue, the first turn at which their actions differ.

Two agents answering the prefixes of the same dialogues (the contexts of
:func:`contexts.transcripts.read_chat_transcripts` or of a collected context set, compared with
``compare(a, b, ..., metadata=contexts)``) agree on some turns and differ on others. Where
they first differ says how far they behave alike: :func:`first_divergence` gives, for every
dialogue (by default its ``source_name`` and ``dialogue_id``; a task and trial for τ²-bench
results), the first ``turn_index`` whose action measure (TMR by default) is below 1, and the
distribution of those turns over dialogues -- how many part at turn 0, 1, ..., and how many
never do. Where the metadata says how many turns each agent made in a dialogue (``turns_a`` and
``turns_b``, as :func:`contexts.transcripts.pair_transcripts` records them) and one went on after
the other stopped, the dialogue parts at the first turn only one of them made, though no paired
turn differs. The per-turn rates themselves are the comparison's strata
(:meth:`~simscore.comparison.Comparison.by_stratum` with ``"turn_index"``).

Examples
--------
>>> import pandas as pd
>>> from simscore.comparison import Comparison
>>> scores = pd.DataFrame({"tmr": [1.0, 0.0, 1.0, 1.0, 1.0], "source_name": ["s"] * 5,
...                        "dialogue_id": ["d1", "d1", "d1", "d2", "d2"], "turn_index": [0, 1, 2, 0, 1]},
...                       index=pd.Index(["d1/0", "d1/1", "d1/2", "d2/0", "d2/1"], name="context_id"))
>>> result = first_divergence(Comparison(scores, pd.DataFrame(), {"tmr": "tmr"}))
>>> result.table[["dialogue_id", "turns", "first"]].to_string(index=False)
'dialogue_id  turns  first\\n         d1      3    1.0\\n         d2      2    NaN'
>>> result.table["context_id"][0]
'd1/1'
>>> print(result.format())
first turn at which the actions differ (tmr < 1), over 2 dialogues:
turn      dialogues   share  cumulative
1                 1  0.5000      0.5000
never             1  0.5000      1.0000
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from simscore.errors import MetadataColumnError

if TYPE_CHECKING:
    from simscore.comparison import Comparison

__all__ = ["FirstDivergence", "first_divergence", "DIALOGUE_KEYS"]

#: The metadata columns that name a dialogue by default (those of collected and transcript contexts).
DIALOGUE_KEYS = ("source_name", "dialogue_id")
#: The metadata columns of each agent's number of turns in a dialogue (paired transcripts).
LENGTH_COLUMNS = ("turns_a", "turns_b")


@dataclass(frozen=True)
class FirstDivergence:
    """Per dialogue, the first turn at which two policies' actions differ (:func:`first_divergence`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per dialogue, in the order of its first context: the key columns, ``turns``
        (its scored turns), ``first`` (the first turn index whose score is below 1, or the first
        turn only one agent made; NaN when neither is), ``context_id`` (that turn's context;
        missing when none, or when only one agent made it) and ``alone`` (``"a"`` or ``"b"``:
        which agent went on alone at ``first``; missing otherwise).
    distribution : pandas.DataFrame
        One row per first turn (ascending), then ``never``: ``dialogues``, ``share`` (of the
        dialogues) and ``cumulative`` (share that has parted by then).
    measure : str
        The action measure read.
    """

    table: pd.DataFrame
    distribution: pd.DataFrame
    measure: str

    def format(self) -> str:
        """The distribution as a short text table."""
        lines = [f"first turn at which the actions differ ({self.measure} < 1), over {len(self.table)} dialogues:",
                 f"{'turn':<8} {'dialogues':>9} {'share':>7} {'cumulative':>11}"]
        for row in self.distribution.itertuples(index=False):
            lines.append(f"{row.turn!s:<8} {row.dialogues:>9d} {row.share:>7.4f} {row.cumulative:>11.4f}")
        return "\n".join(lines)


def first_divergence(comparison: Comparison, *, measure: str = "tmr", by: Sequence[str] = DIALOGUE_KEYS,
                     turn: str = "turn_index") -> FirstDivergence:
    """Per dialogue, the first turn at which ``comparison``'s two policies' actions differ.

    Parameters
    ----------
    comparison : Comparison
        Made with the contexts' metadata (``compare(a, b, ..., metadata=contexts)``), so that
        its scores carry the dialogue (``by``) and ``turn`` columns.
    measure : str
        An action measure of the comparison that is 1 where the two actions are the same
        (``tmr`` by default, ``dmr`` for the intents only). A context it did not score (NaN: no
        action on a side) is left out.
    by : sequence of str
        The metadata columns that together name a dialogue (e.g. ``("task_id", "trial")``).
    turn : str
        The metadata column of the turn's index in its dialogue.

    Returns
    -------
    FirstDivergence

    Raises
    ------
    MetadataColumnError
        A column is missing (the message names those there are), or the measure is not in the
        comparison.
    """
    scores = comparison.scores
    keys = list(by)
    if not keys:
        raise MetadataColumnError("by names no column: give the metadata columns that name a dialogue")
    missing = [c for c in (*keys, turn) if c not in scores.columns]
    if missing:
        raise MetadataColumnError(
            f"the comparison's scores have no column {', '.join(map(repr, missing))} (they have "
            f"{', '.join(map(str, scores.columns))}); compare with the contexts' metadata: compare(a, b, ..., "
            "metadata=contexts)")
    if measure not in comparison.measures and measure not in scores.columns:
        raise MetadataColumnError(f"the comparison has no measure {measure!r} (it has {', '.join(comparison.measures)})")
    lengths = [c for c in LENGTH_COLUMNS if c in scores.columns]
    frame = scores[[*keys, turn, measure, *lengths]].copy()
    frame["context_id"] = scores.index.astype(str)
    frame = frame[frame[measure].notna()]
    turns = pd.to_numeric(frame[turn], errors="coerce")
    if turns.isna().any():
        raise MetadataColumnError(f"column {turn!r} holds values that are not turn numbers "
                                  f"(e.g. {frame.loc[turns.isna(), turn].iloc[0]!r})")
    frame[turn] = turns
    rows = []
    for key, group in frame.groupby(keys, sort=False, dropna=False):
        group = group.sort_values(turn, kind="stable")
        differ = group[group[measure] < 1.0]
        first = float(differ[turn].iloc[0]) if len(differ) else np.nan
        context_id = differ["context_id"].iloc[0] if len(differ) else None
        alone = None
        if len(lengths) == 2:  # one agent went on after the other stopped: they part at the first turn only one made
            made = {side: int(group[column].max()) for side, column in zip("ab", LENGTH_COLUMNS)}
            shorter = min(made.values())
            if made["a"] != made["b"] and (np.isnan(first) or shorter < first):
                first, context_id, alone = float(shorter), None, "a" if made["a"] > made["b"] else "b"
        values = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(keys, values)), "turns": len(group), "first": first, "context_id": context_id,
                     "alone": alone})
    table = pd.DataFrame(rows, columns=[*keys, "turns", "first", "context_id", "alone"])
    return FirstDivergence(table, _distribution(table["first"]), measure)


def _distribution(first: pd.Series) -> pd.DataFrame:
    n = len(first)
    counts = first.dropna().astype(int).value_counts().sort_index()
    rows: list[tuple[int | str, int]] = [(int(t), int(c)) for t, c in counts.items()]
    never = int(first.isna().sum())
    if never:
        rows.append(("never", never))
    dialogues = np.array([c for _, c in rows], dtype=float)
    share = dialogues / n if n else dialogues
    return pd.DataFrame({"turn": [t for t, _ in rows], "dialogues": [c for _, c in rows], "share": share,
                         "cumulative": np.cumsum(share)})
