"""The statistical unit of a context set: which contexts the bootstrap and the tests move together.

Contexts collected from one dialogue (C_col) are not independent: every interval and test on
such a set moves whole dialogues. :func:`dialogue_clusters` says which metadata columns name
the dialogues of a context set (:data:`DIALOGUE_COLUMNS`, or none: each context is a unit),
:func:`resolve_clusters` turns a ``clusters`` argument (``"auto"``, column names or None) into
columns, and :func:`cluster_codes` gives every context the code of its unit. One rule for
:func:`~simscore.comparison.compare`, :func:`~simscore.stats.strata.stratify`, the analyses, the
experiment's report and ``simscore explain``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import TypeAlias

import numpy as np
import pandas as pd

from simscore.errors import MetadataColumnError, MissingValueWarning

__all__ = ["AUTO", "Clusters", "DIALOGUE_COLUMNS", "dialogue_clusters", "resolve_clusters", "unit_name", "cluster_codes",
           "check_column"]

#: The metadata columns that name the dialogue of a collected context (the source it was collected
#: from and its dialogue id): contexts of one dialogue are not independent, so every interval on
#: such a set resamples dialogues (:func:`dialogue_clusters`).
DIALOGUE_COLUMNS = ("source_name", "dialogue_id")
#: The default of every ``clusters`` argument: the context set's dialogues when its contexts name
#: one (:func:`dialogue_clusters`), else the contexts themselves.
AUTO = "auto"

#: A ``clusters`` argument: :data:`AUTO`, metadata column name(s) whose values together name a
#: context's cluster, or None (or ``()``): every context is a unit of its own.
Clusters: TypeAlias = str | Sequence[str] | None


def dialogue_clusters(meta: pd.DataFrame | None) -> tuple[str, ...] | None:
    """The cluster columns of a context set's metadata: its dialogues when its contexts name one, else None.

    Collected contexts (C_col) carry :data:`DIALOGUE_COLUMNS`; generated ones (C_gen) have no
    dialogue id, and each of them is a unit of its own.

    >>> dialogue_clusters(pd.DataFrame({"source_name": ["sim"], "dialogue_id": ["d0"]}))
    ('source_name', 'dialogue_id')
    >>> dialogue_clusters(pd.DataFrame({"source_name": [None], "dialogue_id": [None]})) is None
    True
    """
    if meta is None or not all(c in meta.columns for c in DIALOGUE_COLUMNS):
        return None
    return DIALOGUE_COLUMNS if bool(meta["dialogue_id"].notna().any()) else None


def resolve_clusters(clusters: Clusters, meta: pd.DataFrame | None) -> tuple[str, ...]:
    """The cluster columns a ``clusters`` argument names for the metadata ``meta`` (``()``: contexts).

    >>> meta = pd.DataFrame({"source_name": ["x"], "dialogue_id": ["d0"], "flow": ["seen"]})
    >>> resolve_clusters("auto", meta), resolve_clusters(None, meta), resolve_clusters("flow", meta)
    (('source_name', 'dialogue_id'), (), ('flow',))
    >>> resolve_clusters("auto", None)
    ()
    """
    if isinstance(clusters, str):
        return (dialogue_clusters(meta) or ()) if clusters == AUTO else (clusters,)
    if clusters is None:
        return ()
    if not isinstance(clusters, Iterable):
        raise TypeError(f"clusters must be 'auto', a column name, a sequence of them or None, got {clusters!r:.60}")
    columns = tuple(clusters)
    bad = [c for c in columns if not isinstance(c, str)]
    if bad:
        raise TypeError(f"clusters must name metadata columns (strings), got {bad[0]!r:.60}")
    return columns


def unit_name(columns: Iterable[str]) -> str:
    """What the units of ``columns`` are called in outputs: ``dialogues``, ``clusters`` or ``contexts``.

    >>> unit_name(DIALOGUE_COLUMNS), unit_name(["dialogue_id"]), unit_name(["user"]), unit_name(())
    ('dialogues', 'dialogues', 'clusters', 'contexts')
    """
    columns = tuple(columns)
    if not columns:
        return "contexts"
    return "dialogues" if "dialogue_id" in columns else "clusters"


def cluster_codes(meta: pd.DataFrame | None, columns: Iterable[str], *, check: bool = False,
                  stacklevel: int = 1) -> np.ndarray | None:
    """One code per row naming its cluster: the distinct values of the ``columns`` together.

    A row without a value in one of the columns is a cluster of its own (a generated context
    in a set that also holds collected ones has no dialogue); None without columns.

    With ``check`` (what :func:`~simscore.comparison.compare` and :func:`~simscore.stats.strata.stratify` do with the
    clusters they are given) columns where *no* row has a value are refused — they would make
    every context one unit, an interval of zero width and p = 1 without a word — and rows
    without a value are counted in a :class:`~simscore.errors.MissingValueWarning`.

    >>> frame = pd.DataFrame({"source_name": ["a", "a", "b", None], "dialogue_id": ["d1", "d1", "d1", "d2"]})
    >>> cluster_codes(frame, ["source_name", "dialogue_id"]).tolist()
    [0, 0, 1, 2]

    Raises
    ------
    MetadataColumnError
        A column is not in ``meta`` (the message names those there are) or, with ``check``,
        has no value at all.
    """
    columns = tuple(columns)
    if not columns:
        return None
    if meta is None:
        raise ValueError(f"clusters {list(columns)} need the contexts' metadata (metadata=...)")
    for column in columns:
        check_column(meta, column, role="clusters")
    keys = meta[list(columns)].astype(object).where(meta[list(columns)].notna(), None)
    labels = [tuple(row) for row in keys.itertuples(index=False, name=None)]
    alone = np.array([any(v is None for v in label) for label in labels], dtype=bool)
    if check:
        _check_cluster_values(columns, int(alone.sum()), len(labels), stacklevel=stacklevel + 3)
    codes = pd.factorize(pd.Series(labels, dtype=object))[0]
    codes[alone] = codes.max(initial=-1) + 1 + np.arange(int(alone.sum()))  # no cluster: a unit of its own
    return np.unique(codes, return_inverse=True)[1].reshape(-1)


def check_column(frame: pd.DataFrame, column: str, *, role: str, where: str = "the metadata", hint: str = "") -> None:
    """Raise :class:`~simscore.errors.MetadataColumnError` if ``frame`` has no column ``column``.

    The message names the role the column was asked for in (``--by``, ``clusters``), where it
    was looked for, and the columns there are (at most 20, long names shortened).

    >>> check_column(pd.DataFrame({"flow": [], "dialogue_id": []}), "flw", role="by")
    Traceback (most recent call last):
    ...
    simscore.errors.MetadataColumnError: by 'flw': the metadata has no such column (it has: flow, dialogue_id)
    """
    if column in frame.columns:
        return
    names = [str(c) if len(str(c)) <= 40 else str(c)[:37] + "..." for c in frame.columns]
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    named = column if len(str(column)) <= 60 else str(column)[:57] + "..."
    raise MetadataColumnError(f"{role} {named!r}: {where} has no such column (it has: {shown or 'none'}){hint}")


def _check_cluster_values(columns: tuple[str, ...], without: int, total: int, *, stacklevel: int) -> None:
    """Refuse cluster columns no context has a value in; warn (naming how many) when some lack one.

    Why a warning and not an error for some: a context without a dialogue is most often one
    that was not collected from a dialogue (C_gen united with C_col), for which being a unit of
    its own is right; lumping those together would make unrelated contexts one dialogue. The
    warning says how many, so that a file that lost its ids does not pass unseen.
    """
    if not total or not without:
        return
    named = ", ".join(columns)
    if without == total:
        raise MetadataColumnError(
            f"clusters {named}: none of the {total} contexts has a value, so all of them would be one unit "
            "(an interval of zero width and p = 1); give a column that names each context's dialogue, "
            "or no clusters (--no-cluster on the command line, None in Python)"
        )
    warnings.warn(
        f"clusters {named}: {without} of {total} contexts have no value; each of them is a unit of its own",
        MissingValueWarning,
        stacklevel=stacklevel,
    )
