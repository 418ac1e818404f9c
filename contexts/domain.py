"""The restaurant-search domain: ontology, venue database and database queries.

The shipped default domain is shaped like PyDial's Cambridge restaurants domain (110
venues; area, pricerange and food marginals like the reference database) with invented
names and details. It is package data (``contexts/data/*.json``) produced deterministically
by ``python tools/build_domain_data.py``. A user-supplied domain is an ontology JSON file plus
venues as JSON, CSV or an SQLite database with PyDial's CamRestaurants columns.

Examples
--------
>>> domain = default_domain()
>>> len(domain.venues), len(domain.query({"area": "centre"}))
(110, 69)
>>> len(domain.query({"area": "centre", "pricerange": "dontcare"}, exclude={"food": ["indian"]})) < 69
True
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from contexts._frozen import FrozenDict
from simscore.errors import FileFormatError, InvalidContextError
from simscore.io import read_csv_rows, read_json, read_text
from simscore.io.formats import FILE_FORMATS, detect_format, kind_mismatch

__all__ = [
    "AREAS",
    "PRICERANGES",
    "FOODS",
    "REQUESTABLE",
    "SYSTEM_REQUESTABLE",
    "METHODS",
    "DISCOURSE_ACTS",
    "SPECIAL_VALUES",
    "VENUE_FIELDS",
    "Ontology",
    "Venue",
    "Domain",
    "default_domain",
    "load_domain",
    "load_ontology",
    "load_venues",
]

#: Areas of the default ontology, in ontology order.
AREAS: tuple[str, ...] = ("centre", "north", "west", "south", "east")
#: Price ranges of the default ontology.
PRICERANGES: tuple[str, ...] = ("cheap", "moderate", "expensive")
#: Cuisines of the default ontology (alphabetical); 23 of them occur in the venue database.
FOODS: tuple[str, ...] = (
    "afghan", "african", "argentinian", "asian oriental", "australian", "austrian",
    "bangladeshi", "barbecue", "basque", "belgian", "bistro", "brazilian", "british",
    "burmese", "cajun", "cambodian", "cantonese", "caribbean", "catalan", "chinese",
    "creole", "cuban", "danish", "dim sum", "eastern european", "egyptian", "english",
    "eritrean", "ethiopian", "european", "filipino", "french", "fusion", "gastropub",
    "georgian", "german", "greek", "hawaiian", "hungarian", "indian", "indonesian",
    "international", "irish", "italian", "jamaican", "japanese", "korean", "kosher",
    "latin american", "lebanese", "malaysian", "mediterranean", "mexican",
    "middle eastern", "modern british", "modern european", "mongolian", "moroccan",
    "nepalese", "north american", "north indian", "pakistani", "pan asian", "persian",
    "peruvian", "polish", "portuguese", "russian", "scandinavian", "scottish", "seafood",
    "sichuan", "singaporean", "south african", "south indian", "spanish", "sri lankan",
    "steakhouse", "swiss", "syrian", "taiwanese", "tapas", "thai", "tibetan",
    "traditional", "turkish", "tuscan", "ukrainian", "vegan", "vegetarian", "vietnamese",
)
#: Slots the system asks the user about.
SYSTEM_REQUESTABLE: tuple[str, ...] = ("area", "food", "pricerange")
#: Slots the user can request.
REQUESTABLE: tuple[str, ...] = (
    "addr", "area", "food", "name", "phone", "pricerange", "postcode", "signature", "description",
)
#: Values of the ``method`` distribution (fixed by the belief-state model).
METHODS: tuple[str, ...] = ("none", "byconstraints", "byname", "finished", "byalternatives", "restart")
#: Values of the discourse-act distribution (fixed by the belief-state model).
DISCOURSE_ACTS: tuple[str, ...] = ("ack", "hello", "none", "repeat", "silence", "thankyou", "bye")
#: Values every informable slot takes besides its ontology values.
SPECIAL_VALUES: tuple[str, ...] = ("dontcare", "none")
#: Fields of a venue record, as in PyDial's CamRestaurants database.
VENUE_FIELDS: tuple[str, ...] = (
    "id", "name", "addr", "area", "food", "phone", "pricerange", "postcode", "signature", "description",
)

ONTOLOGY_FORMAT = "simscore-ontology"
VENUES_FORMAT = "simscore-venues"
_DATA_VERSION = 1


def _check_names(values: object, what: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    """Return ``values`` as a tuple of distinct non-empty strings or raise naming ``what``."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidContextError(f"{what} must be a list of strings, got {type(values).__name__}")
    out = tuple(values)
    if not out and not allow_empty:
        raise InvalidContextError(f"{what} must not be empty")
    seen: set[str] = set()
    for value in out:
        if not isinstance(value, str) or not value.strip():
            raise InvalidContextError(f"{what} contains {value!r}, expected a non-empty string")
        if value in seen:
            raise InvalidContextError(f"{what} contains {value!r} twice")
        seen.add(value)
    return out


@dataclass(frozen=True)
class Ontology:
    """Slots and values of a domain.

    Parameters
    ----------
    informable : mapping of str to sequence of str
        Informable slot -> its values, *not* including ``"none"`` and ``"dontcare"``
        (every informable slot takes those as well). Stored read-only, in the given order.
    system_requestable : sequence of str
        Informable slots the system asks about.
    requestable : sequence of str
        Slots the user can request.
    methods, discourse_acts : sequence of str
        The method and discourse-act values. They are fixed by the belief-state model
        (:data:`METHODS`, :data:`DISCOURSE_ACTS`); any other set is an error.

    Examples
    --------
    >>> o = Ontology({"area": ["north", "south"]}, system_requestable=["area"], requestable=["area", "phone"])
    >>> o.informable["area"], o.slot_values("area")
    (('north', 'south'), ('north', 'south', 'dontcare', 'none'))
    """

    informable: Mapping[str, tuple[str, ...]]
    system_requestable: tuple[str, ...] = SYSTEM_REQUESTABLE
    requestable: tuple[str, ...] = REQUESTABLE
    methods: tuple[str, ...] = METHODS
    discourse_acts: tuple[str, ...] = DISCOURSE_ACTS

    def __post_init__(self) -> None:
        if not isinstance(self.informable, Mapping) or not self.informable:
            raise InvalidContextError("informable must be a non-empty mapping of slot -> values")
        informable: dict[str, tuple[str, ...]] = {}
        for slot, values in self.informable.items():
            if not isinstance(slot, str) or not slot.strip():
                raise InvalidContextError(f"informable slot names must be non-empty strings, got {slot!r}")
            checked = _check_names(values, f"values of informable slot {slot!r}")
            for special in SPECIAL_VALUES:
                if special in checked:
                    raise InvalidContextError(
                        f"values of informable slot {slot!r} must not include {special!r} (it is implied)"
                    )
            informable[slot] = checked
        object.__setattr__(self, "informable", FrozenDict(informable))
        system_requestable = _check_names(self.system_requestable, "system_requestable", allow_empty=True)
        for slot in system_requestable:
            if slot not in informable:
                raise InvalidContextError(f"system_requestable slot {slot!r} is not an informable slot")
        object.__setattr__(self, "system_requestable", system_requestable)
        object.__setattr__(self, "requestable", _check_names(self.requestable, "requestable", allow_empty=True))
        for attr, expected in (("methods", METHODS), ("discourse_acts", DISCOURSE_ACTS)):
            got = _check_names(getattr(self, attr), attr)
            if set(got) != set(expected):
                raise InvalidContextError(
                    f"{attr} must be {', '.join(expected)} (fixed by the belief-state model); "
                    f"got {', '.join(got)}"
                )
            object.__setattr__(self, attr, expected)

    @property
    def slots(self) -> tuple[str, ...]:
        """The informable slot names, in ontology order."""
        return tuple(self.informable)

    def slot_values(self, slot: str) -> tuple[str, ...]:
        """Every value a belief over ``slot`` may use: ontology values, ``dontcare``, ``none``."""
        try:
            return self.informable[slot] + SPECIAL_VALUES
        except KeyError:
            raise InvalidContextError(
                f"unknown informable slot {slot!r} (known: {', '.join(self.informable)})"
            ) from None

    def to_json(self) -> dict[str, Any]:
        """The ontology as a JSON-ready dict (the format :func:`load_ontology` reads)."""
        return {
            "format": ONTOLOGY_FORMAT,
            "version": _DATA_VERSION,
            "informable": {slot: list(values) for slot, values in self.informable.items()},
            "system_requestable": list(self.system_requestable),
            "requestable": list(self.requestable),
            "methods": list(self.methods),
            "discourse_acts": list(self.discourse_acts),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Ontology:
        """Build an ontology from :meth:`to_json` output or a PyDial-style ontology dict.

        PyDial's key names ``method`` and ``discourseAct`` are accepted for ``methods`` and
        ``discourse_acts``; both may be omitted (the fixed sets are used).
        """
        if not isinstance(obj, Mapping):
            raise InvalidContextError(f"an ontology must be a JSON object, got {type(obj).__name__}")
        if "format" in obj and obj["format"] != ONTOLOGY_FORMAT:
            raise InvalidContextError(f"field 'format' is {obj['format']!r}, expected {ONTOLOGY_FORMAT!r}")
        if "version" in obj and obj["version"] != _DATA_VERSION:
            raise InvalidContextError(f"field 'version' is {obj['version']!r}, expected {_DATA_VERSION}")
        if "informable" not in obj:
            raise InvalidContextError("missing field 'informable'")
        informable = obj["informable"]
        if not isinstance(informable, Mapping):
            raise InvalidContextError("field 'informable' must be an object of slot -> list of values")
        return cls(
            informable=informable,
            system_requestable=obj.get("system_requestable", SYSTEM_REQUESTABLE),
            requestable=obj.get("requestable", REQUESTABLE),
            methods=obj.get("methods", obj.get("method", METHODS)),
            discourse_acts=obj.get("discourse_acts", obj.get("discourseAct", DISCOURSE_ACTS)),
        )


@dataclass(frozen=True, slots=True)
class Venue:
    """One venue of the database (PyDial's CamRestaurants columns).

    ``venue[slot]`` and ``venue.get(slot)`` return a field as a string (``id`` included).

    Examples
    --------
    >>> v = Venue(7, "the copper kettle", "3 mill lane", "centre", "british", "01223 000007",
    ...           "cheap", "cb2 1aa", "pie", "A cafe.")
    >>> v["food"], v["id"], v.get("nonsense", "-")
    ('british', '7', '-')
    """

    id: int
    name: str
    addr: str
    area: str
    food: str
    phone: str
    pricerange: str
    postcode: str
    signature: str
    description: str

    def __getitem__(self, slot: str) -> str:
        if slot not in VENUE_FIELDS:
            raise KeyError(f"venues have no field {slot!r} (fields: {', '.join(VENUE_FIELDS)})")
        return str(getattr(self, slot))

    def get(self, slot: str, default: str | None = None) -> str | None:
        """The field ``slot`` as a string, or ``default`` if venues have no such field."""
        if slot not in VENUE_FIELDS:
            return default
        return str(getattr(self, slot))

    def to_json(self) -> dict[str, Any]:
        """The venue as a JSON-ready dict in field order."""
        return {name: getattr(self, name) for name in VENUE_FIELDS}


@dataclass(frozen=True)
class Domain:
    """An ontology plus a venue database, with constraint queries.

    Parameters
    ----------
    name : str
        The domain's name (written into context-set and dialogue-log headers).
    ontology : Ontology
    venues : tuple of Venue
        In database order; ids and names must be unique, and every venue's value of an
        informable slot must be an ontology value of that slot.
    """

    name: str
    ontology: Ontology
    venues: tuple[Venue, ...]
    _masks: Mapping[str, Mapping[str, int]] = field(init=False, repr=False, compare=False)
    _by_name: Mapping[str, Venue] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidContextError(f"domain name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.ontology, Ontology):
            raise InvalidContextError(f"ontology must be an Ontology, got {type(self.ontology).__name__}")
        venues = tuple(self.venues)
        object.__setattr__(self, "venues", venues)
        masks: dict[str, dict[str, int]] = {name: {} for name in VENUE_FIELDS}
        by_name: dict[str, Venue] = {}
        ids: set[int] = set()
        checked_slots = [s for s in self.ontology.informable if s in VENUE_FIELDS]
        for position, venue in enumerate(venues):
            if not isinstance(venue, Venue):
                raise InvalidContextError(f"venue {position} is a {type(venue).__name__}, expected Venue")
            if venue.id in ids:
                raise InvalidContextError(f"venue id {venue.id} appears twice")
            if venue.name in by_name:
                raise InvalidContextError(f"venue name {venue.name!r} appears twice")
            for slot in checked_slots:
                value = getattr(venue, slot)
                if value not in self.ontology.informable[slot]:
                    raise InvalidContextError(
                        f"venue {venue.id} ({venue.name!r}): {slot} value {value!r} is not in the ontology"
                    )
            ids.add(venue.id)
            by_name[venue.name] = venue
            bit = 1 << position
            for name in VENUE_FIELDS:
                per_value = masks[name]
                key = str(getattr(venue, name))
                per_value[key] = per_value.get(key, 0) | bit
        object.__setattr__(self, "_masks", masks)
        object.__setattr__(self, "_by_name", by_name)

    def _mask(self, constraints: Mapping[str, str], exclude: Mapping[str, Iterable[str] | str]) -> int:
        mask = (1 << len(self.venues)) - 1
        for slot, value in constraints.items():
            per_value = self._field_masks(slot, "constraints")
            if value in SPECIAL_VALUES:
                continue
            mask &= per_value.get(value, 0)
        for slot, values in exclude.items():
            per_value = self._field_masks(slot, "exclude")
            for value in (values,) if isinstance(values, str) else values:
                mask &= ~per_value.get(value, 0)
        return mask

    def _field_masks(self, slot: str, where: str) -> Mapping[str, int]:
        try:
            return self._masks[slot]
        except KeyError:
            raise InvalidContextError(
                f"{where}: venues have no field {slot!r} (fields: {', '.join(VENUE_FIELDS)})"
            ) from None

    def query(
        self,
        constraints: Mapping[str, str] = FrozenDict(),
        *,
        exclude: Mapping[str, Iterable[str] | str] = FrozenDict(),
    ) -> tuple[Venue, ...]:
        """Venues matching every ``slot == value`` and no ``slot == v`` for v in ``exclude[slot]``.

        Parameters
        ----------
        constraints : mapping of str to str
            ``slot -> value``; the values ``"dontcare"`` and ``"none"`` match every venue.
        exclude : mapping of str to iterable of str
            The ``!=`` constraints: ``slot -> values`` a match must not have (a single
            string counts as one value).

        Returns
        -------
        tuple of Venue
            In database order.

        Examples
        --------
        >>> d = default_domain()
        >>> len(d.query({"pricerange": "expensive"})), len(d.query({"food": "afghan"}))
        (57, 0)
        >>> cheap = d.query({"pricerange": "cheap"})
        >>> len(d.query({"pricerange": "cheap"}, exclude={"name": [cheap[0].name]}))
        21
        """
        mask = self._mask(constraints, exclude)
        venues = self.venues
        out = []
        while mask:
            low = mask & -mask
            out.append(venues[low.bit_length() - 1])
            mask ^= low
        return tuple(out)

    def count(
        self,
        constraints: Mapping[str, str] = FrozenDict(),
        *,
        exclude: Mapping[str, Iterable[str] | str] = FrozenDict(),
    ) -> int:
        """The number of venues :meth:`query` would return (faster: no tuple is built).

        >>> default_domain().count({"area": "centre", "pricerange": "dontcare"})
        69
        """
        return self._mask(constraints, exclude).bit_count()

    def venue_by_name(self, name: str) -> Venue | None:
        """The venue called ``name``, or None.

        >>> d = default_domain()
        >>> d.venue_by_name(d.venues[0].name) is d.venues[0], d.venue_by_name("no such place")
        (True, None)
        """
        return self._by_name.get(name)


# ---------------------------------------------------------------------------------------
# Loading


@functools.lru_cache(maxsize=1)
def default_domain() -> Domain:
    """The shipped Cambridge-restaurants-shaped domain (read once, then cached).

    >>> d = default_domain()
    >>> d.name, d.ontology.slots, len(d.ontology.informable["food"]) > 80
    ('restaurants', ('area', 'pricerange', 'food', 'name'), True)
    """
    data = resources.files("contexts") / "data"
    ontology_obj = json.loads((data / "ontology.json").read_text(encoding="utf-8"))
    venues_obj = json.loads((data / "venues.json").read_text(encoding="utf-8"))
    ontology = Ontology.from_json(ontology_obj)
    venues = _venues_from_records(venues_obj["venues"], "contexts/data/venues.json", row_label="venue")
    return Domain(name=ontology_obj.get("name", "restaurants"), ontology=ontology, venues=venues)


def load_ontology(path: str | os.PathLike[str]) -> Ontology:
    """Read an ontology JSON file (this package's format or PyDial's ``*-rules.json`` shape).

    Raises
    ------
    FileFormatError
        Naming the file and the bad field.
    """
    p = Path(path)
    obj = _read_json(p, ONTOLOGY_FORMAT)
    found = detect_format(obj) if isinstance(obj, dict) else None
    if found in FILE_FORMATS and found != ONTOLOGY_FORMAT:
        raise FileFormatError(p, kind_mismatch(found, ONTOLOGY_FORMAT))
    try:
        return Ontology.from_json(obj)
    except InvalidContextError as exc:
        raise FileFormatError(p, str(exc)) from None


def load_venues(
    path: str | os.PathLike[str], *, table: str | None = None
) -> tuple[Venue, ...]:
    """Read venues from a JSON, CSV or SQLite file with the columns of :data:`VENUE_FIELDS`.

    Parameters
    ----------
    path : path-like
        ``.json`` (a list of objects, or an object with a ``"venues"`` list), ``.csv``
        (a header row naming the columns) or ``.db``/``.sqlite``/``.sqlite3`` (SQLite).
    table : str, optional
        SQLite table to read; default: the only table that has every venue column.

    Raises
    ------
    FileFormatError
        Naming the file, the row (the line for CSV) and the missing or bad field.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".json":
        obj = _read_json(p)
        records = obj.get("venues") if isinstance(obj, dict) else obj
        if not isinstance(records, list):
            raise FileFormatError(p, "expected a JSON list of venue objects or an object with a 'venues' list")
        return _venues_from_records(records, p, row_label="venue")
    if suffix == ".csv":
        return _read_csv(p)
    if suffix in (".db", ".sqlite", ".sqlite3"):
        return _read_sqlite(p, table)
    raise FileFormatError(p, f"unknown venue file type {suffix!r} (expected .json, .csv, .db, .sqlite or .sqlite3)")


def load_domain(
    ontology_path: str | os.PathLike[str],
    venues_path: str | os.PathLike[str],
    *,
    name: str | None = None,
    table: str | None = None,
) -> Domain:
    """Load a user-supplied domain: ontology JSON plus venues as JSON, CSV or SQLite.

    If the ontology has no ``name`` slot, one is added whose values are the venue names
    (database order). Otherwise every venue name must be one of its values.

    Parameters
    ----------
    ontology_path, venues_path : path-like
    name : str, optional
        Domain name; default: the ontology's ``"name"`` field, else the ontology file's stem.
    table : str, optional
        SQLite table name (see :func:`load_venues`).

    Raises
    ------
    FileFormatError
        For a missing or malformed file, naming the file and the field.
    """
    ontology_file = Path(ontology_path)
    venues_file = Path(venues_path)
    ontology_obj = _read_json(ontology_file)
    ontology = load_ontology(ontology_file)
    venues = load_venues(venues_file, table=table)
    if "name" not in ontology.informable:
        informable = dict(ontology.informable)
        informable["name"] = tuple(v.name for v in venues)
        ontology = Ontology(
            informable,
            system_requestable=ontology.system_requestable,
            requestable=ontology.requestable,
        )
    if name is None:
        declared = ontology_obj.get("name") if isinstance(ontology_obj, dict) else None
        name = declared if isinstance(declared, str) and declared else ontology_file.stem
    try:
        return Domain(name=name, ontology=ontology, venues=venues)
    except InvalidContextError as exc:
        raise FileFormatError(venues_file, str(exc)) from None


def _read_json(path: Path, expected: str | None = None) -> Any:
    return read_json(path, expected=expected)


def _venue_from_row(row: Mapping[str, Any], path: object, where: str, line: int | None) -> Venue:
    values: dict[str, Any] = {}
    for name in VENUE_FIELDS:
        if name not in row:
            raise FileFormatError(path, f"{where}: missing field {name!r}", line=line)
        value = row[name]
        if name == "id":
            values[name] = _venue_id(value, path, where, line)
            continue
        if value is None:
            value = ""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and name in ("phone", "postcode"):
            value = str(value)
        if not isinstance(value, str):
            raise FileFormatError(
                path, f"{where}: field {name!r} must be a string, got {type(value).__name__}", line=line
            )
        if name in ("name", "area", "food", "pricerange") and not value.strip():
            raise FileFormatError(path, f"{where}: field {name!r} is empty", line=line)
        values[name] = value
    return Venue(**values)


def _venue_id(value: Any, path: object, where: str, line: int | None) -> int:
    if isinstance(value, bool):
        raise FileFormatError(path, f"{where}: field 'id' must be an integer, got {value!r}", line=line)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise FileFormatError(path, f"{where}: field 'id' must be an integer, got {value!r}", line=line)


def _venues_from_records(records: Sequence[Any], path: object, *, row_label: str) -> tuple[Venue, ...]:
    out = []
    for index, record in enumerate(records):
        where = f"{row_label} {index}"
        if not isinstance(record, Mapping):
            raise FileFormatError(path, f"{where}: expected an object, got {type(record).__name__}")
        out.append(_venue_from_row(record, path, where, None))
    return tuple(out)


def _read_csv(path: Path) -> tuple[Venue, ...]:
    with io.StringIO(read_text(path), newline="") as handle:
        rows = (pair for pair in read_csv_rows(handle, path, expected="a venue table (CSV)") if pair[1])  # blanks skipped
        line, header = next(rows, (1, []))
        if not header:
            raise FileFormatError(path, "empty file, expected a header row", line=1)
        missing = [name for name in VENUE_FIELDS if name not in header]
        if missing:
            raise FileFormatError(path, f"header lacks column(s) {', '.join(map(repr, missing))}", line=line)
        out = []
        for index, (line, row) in enumerate(rows):
            if len(row) != len(header):
                raise FileFormatError(path, f"row {index}: wrong number of columns", line=line)
            out.append(_venue_from_row(dict(zip(header, row)), path, f"row {index}", line))
    return tuple(out)


def _read_sqlite(path: Path, table: str | None) -> tuple[Venue, ...]:
    if not path.is_file():
        raise FileFormatError(path, "file not found")
    try:
        connection = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise FileFormatError(path, f"cannot open as SQLite ({exc})") from None
    try:
        try:
            tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        except sqlite3.DatabaseError as exc:
            raise FileFormatError(path, f"not an SQLite database ({exc})") from None
        columns = {
            name: [row[1] for row in connection.execute(f'PRAGMA table_info("{name.replace(chr(34), chr(34) * 2)}")')]
            for name in tables
        }
        if table is None:
            fitting = [name for name in tables if all(c in columns[name] for c in VENUE_FIELDS)]
            if len(fitting) != 1:
                raise FileFormatError(
                    path,
                    f"expected exactly one table with the columns {', '.join(VENUE_FIELDS)}; "
                    f"found {len(fitting)} (tables: {', '.join(tables) or 'none'}); pass table=...",
                )
            table = fitting[0]
        elif table not in columns:
            raise FileFormatError(path, f"no table {table!r} (tables: {', '.join(tables) or 'none'})")
        missing = [c for c in VENUE_FIELDS if c not in columns[table]]
        if missing:
            raise FileFormatError(path, f"table {table!r} lacks column(s) {', '.join(map(repr, missing))}")
        quoted = table.replace('"', '""')
        select = ", ".join(f'"{c}"' for c in VENUE_FIELDS)
        rows = connection.execute(f'SELECT {select} FROM "{quoted}" ORDER BY rowid').fetchall()
    finally:
        connection.close()
    return tuple(
        _venue_from_row(dict(zip(VENUE_FIELDS, row)), path, f"table {table!r} row {index}", None)
        for index, row in enumerate(rows)
    )

