"""Tests of contexts.domain: the shipped database, queries, and user-supplied domains."""

from __future__ import annotations

import csv
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from contexts.domain import (
    AREAS,
    DISCOURSE_ACTS,
    METHODS,
    REQUESTABLE,
    VENUE_FIELDS,
    Domain,
    Ontology,
    Venue,
    default_domain,
    load_domain,
    load_ontology,
    load_venues,
)
from simscore.errors import FileFormatError, InvalidContextError
from tools import build_domain_data

DATA = Path(__file__).resolve().parents[2] / "contexts" / "data"


# -- the shipped domain ------------------------------------------------------------------


def test_shipped_files_equal_fresh_generation() -> None:
    generated = build_domain_data.build()
    assert sorted(generated) == ["ontology.json", "venues.json"]
    for name, text in generated.items():
        assert (DATA / name).read_text(encoding="utf-8") == text, f"{name} differs: run python tools/build_domain_data.py"


def test_build_data_main_writes_files(tmp_path: Path) -> None:
    assert build_domain_data.main(["--out", str(tmp_path)]) == 0
    assert (tmp_path / "venues.json").read_text(encoding="utf-8") == (DATA / "venues.json").read_text(encoding="utf-8")


def test_default_ontology_shape() -> None:
    ontology = default_domain().ontology
    assert ontology.slots == ("area", "pricerange", "food", "name")
    assert ontology.informable["area"] == ("centre", "north", "west", "south", "east")
    assert ontology.informable["pricerange"] == ("cheap", "moderate", "expensive")
    assert 85 <= len(ontology.informable["food"]) <= 95
    assert len(ontology.informable["name"]) == 110
    assert ontology.system_requestable == ("area", "food", "pricerange")
    assert ontology.requestable == REQUESTABLE and len(REQUESTABLE) == 9
    assert ontology.methods == METHODS == ("none", "byconstraints", "byname", "finished", "byalternatives", "restart")
    assert ontology.discourse_acts == DISCOURSE_ACTS
    assert ontology.slot_values("area") == AREAS + ("dontcare", "none")


def test_default_database_marginals() -> None:
    venues = default_domain().venues
    assert len(venues) == 110
    assert Counter(v.area for v in venues) == {"centre": 69, "west": 12, "north": 11, "east": 9, "south": 9}
    assert Counter(v.pricerange for v in venues) == {"expensive": 57, "moderate": 31, "cheap": 22}
    foods = Counter(v.food for v in venues)
    assert len(foods) == 23
    assert foods.most_common(4) == [("indian", 22), ("chinese", 17), ("italian", 15), ("british", 12)]
    assert [v.id for v in venues] == list(range(110))
    assert len({v.name for v in venues}) == 110
    assert len({v.phone for v in venues}) == 110
    assert all(v.addr and v.postcode and v.signature and v.description for v in venues)


def test_default_domain_is_cached() -> None:
    assert default_domain() is default_domain()


@pytest.mark.parametrize(
    ("constraints", "exclude", "expected"),
    [
        ({}, {}, 110),
        ({"area": "centre"}, {}, 69),
        ({"pricerange": "expensive"}, {}, 57),
        ({"food": "indian"}, {}, 22),
        ({"food": "afghan"}, {}, 0),  # in the ontology, not in the database
        ({"area": "dontcare", "food": "none"}, {}, 110),
        ({"area": "centre", "pricerange": "expensive"}, {}, 40),
        ({"area": "centre", "food": "indian"}, {}, 14),
        ({"area": "north", "pricerange": "cheap"}, {}, 4),
        ({"area": "centre", "pricerange": "expensive", "food": "indian"}, {}, 11),
        ({"food": "indian"}, {"area": ["centre"]}, 8),
        ({"food": "indian"}, {"area": "centre"}, 8),  # a single string is one value
        ({}, {"area": ["centre", "north"]}, 30),
        ({"food": "thai"}, {}, 3),
    ],
)
def test_query_counts(constraints: dict[str, str], exclude: dict[str, list[str]], expected: int) -> None:
    domain = default_domain()
    result = domain.query(constraints, exclude=exclude)
    assert len(result) == expected == domain.count(constraints, exclude=exclude)
    # Independent check by brute force over the database.
    brute = [
        v for v in domain.venues
        if all(val in ("dontcare", "none") or v[s] == val for s, val in constraints.items())
        and not any(v[s] in ([vals] if isinstance(vals, str) else vals) for s, vals in exclude.items())
    ]
    assert list(result) == brute


def test_query_database_order_and_names() -> None:
    domain = default_domain()
    thai = domain.query({"food": "thai"})
    assert [v.name for v in thai] == ["the jolly orchard", "the amber spoon", "the hidden thistle"]
    assert [v.id for v in thai] == sorted(v.id for v in thai)
    others = domain.query({"food": "thai"}, exclude={"name": ["the jolly orchard"]})
    assert [v.name for v in others] == ["the amber spoon", "the hidden thistle"]
    assert domain.venue_by_name("the amber spoon") is thai[1]
    assert domain.venue_by_name("nowhere") is None


def test_query_unknown_slot_is_error() -> None:
    with pytest.raises(InvalidContextError, match="'colour'"):
        default_domain().query({"colour": "red"})
    with pytest.raises(InvalidContextError, match="exclude.*'colour'"):
        default_domain().query({}, exclude={"colour": ["red"]})


def test_venue_item_access() -> None:
    venue = default_domain().venues[3]
    assert venue["id"] == "3" and venue.get("id") == "3"
    assert venue["area"] == venue.area
    assert venue.get("colour") is None and venue.get("colour", "x") == "x"
    with pytest.raises(KeyError, match="colour"):
        venue["colour"]
    assert list(venue.to_json()) == list(VENUE_FIELDS)


# -- ontology and domain validation ------------------------------------------------------


def test_ontology_validation() -> None:
    with pytest.raises(InvalidContextError, match="'dontcare'"):
        Ontology({"area": ["north", "dontcare"]})
    with pytest.raises(InvalidContextError, match="'north' twice"):
        Ontology({"area": ["north", "north"]})
    with pytest.raises(InvalidContextError, match="system_requestable slot 'food'"):
        Ontology({"area": ["north"]}, system_requestable=["food"])
    with pytest.raises(InvalidContextError, match="methods must be"):
        Ontology({"area": ["north"]}, system_requestable=[], methods=["none", "other"])
    with pytest.raises(InvalidContextError, match="unknown informable slot 'food'"):
        Ontology({"area": ["north"]}, system_requestable=["area"]).slot_values("food")


def _venue(i: int, name: str, area: str = "north", food: str = "thai", price: str = "cheap") -> Venue:
    return Venue(i, name, f"{i} road", area, food, "01223 0", price, "cb1 1aa", "dish", "text")


def test_domain_validation() -> None:
    ontology = Ontology(
        {"area": ["north", "south"], "pricerange": ["cheap"], "food": ["thai"], "name": ["a", "b"]}
    )
    Domain("t", ontology, (_venue(0, "a"), _venue(1, "b")))
    with pytest.raises(InvalidContextError, match="venue id 0 appears twice"):
        Domain("t", ontology, (_venue(0, "a"), _venue(0, "b")))
    with pytest.raises(InvalidContextError, match="venue name 'a' appears twice"):
        Domain("t", ontology, (_venue(0, "a"), _venue(1, "a")))
    with pytest.raises(InvalidContextError, match="area value 'east' is not in the ontology"):
        Domain("t", ontology, (_venue(0, "a", area="east"),))


# -- loading user-supplied domains ---------------------------------------------------------

ONTOLOGY = {
    "informable": {"area": ["north", "south"], "pricerange": ["cheap", "expensive"], "food": ["thai", "pizza"]},
    "system_requestable": ["area", "food", "pricerange"],
    "requestable": ["addr", "area", "food", "name", "phone", "pricerange", "postcode"],
}
ROWS = [
    {"id": 0, "name": "pie place", "addr": "1 a st", "area": "north", "food": "pizza", "phone": "01",
     "pricerange": "cheap", "postcode": "cb1", "signature": "margherita", "description": "Pizza."},
    {"id": 1, "name": "thai house", "addr": "2 b st", "area": "south", "food": "thai", "phone": "02",
     "pricerange": "expensive", "postcode": "cb2", "signature": "", "description": "Thai."},
]


@pytest.fixture()
def ontology_file(tmp_path: Path) -> Path:
    path = tmp_path / "mini-ontology.json"
    path.write_text(json.dumps(ONTOLOGY), encoding="utf-8")
    return path


def _write_csv(path: Path, rows: list[dict[str, object]], fields: tuple[str, ...] = VENUE_FIELDS) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _write_sqlite(path: Path, rows: list[dict[str, object]], table: str = "CamRestaurants") -> Path:
    connection = sqlite3.connect(path)
    columns = ", ".join(f"{c} {'INTEGER' if c == 'id' else 'TEXT'}" for c in VENUE_FIELDS)
    connection.execute(f"CREATE TABLE {table} ({columns})")
    connection.executemany(
        f"INSERT INTO {table} VALUES ({', '.join('?' * len(VENUE_FIELDS))})",
        [tuple(row[c] for c in VENUE_FIELDS) for row in rows],
    )
    connection.commit()
    connection.close()
    return path


@pytest.mark.parametrize("kind", ["json", "json-object", "csv", "sqlite"])
def test_load_domain_each_format(tmp_path: Path, ontology_file: Path, kind: str) -> None:
    if kind == "json":
        venues = tmp_path / "venues.json"
        venues.write_text(json.dumps(ROWS), encoding="utf-8")
    elif kind == "json-object":
        venues = tmp_path / "venues.json"
        venues.write_text(json.dumps({"venues": ROWS}), encoding="utf-8")
    elif kind == "csv":
        venues = _write_csv(tmp_path / "venues.csv", ROWS)
    else:
        venues = _write_sqlite(tmp_path / "venues.db", ROWS)
    domain = load_domain(ontology_file, venues)
    assert domain.name == "mini-ontology"
    assert [v.name for v in domain.venues] == ["pie place", "thai house"]
    assert domain.venues[1].id == 1 and domain.venues[1].signature == ""
    assert domain.ontology.informable["name"] == ("pie place", "thai house")  # added from the venues
    assert [v.name for v in domain.query({"food": "thai"})] == ["thai house"]
    assert domain.count({"area": "north"}, exclude={"food": ["pizza"]}) == 0
    assert load_domain(ontology_file, venues, name="mini").name == "mini"


def test_load_ontology_pydial_keys(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    obj = dict(ONTOLOGY, method=list(METHODS), discourseAct=list(DISCOURSE_ACTS))
    path.write_text(json.dumps(obj), encoding="utf-8")
    assert load_ontology(path).methods == METHODS


def test_load_ontology_errors(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    path.write_text(json.dumps({"requestable": []}), encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"o\.json.*'informable'"):
        load_ontology(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(FileFormatError, match="invalid JSON"):
        load_ontology(path)
    with pytest.raises(FileFormatError, match="file not found"):
        load_ontology(tmp_path / "missing.json")


def test_load_venues_missing_field_names_file_and_field(tmp_path: Path) -> None:
    bad = [dict(ROWS[0]), {k: v for k, v in ROWS[1].items() if k != "area"}]
    path = tmp_path / "v.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"v\.json: venue 1: missing field 'area'"):
        load_venues(path)


def test_load_venues_csv_errors(tmp_path: Path) -> None:
    path = _write_csv(tmp_path / "v.csv", ROWS, fields=tuple(f for f in VENUE_FIELDS if f != "postcode"))
    with pytest.raises(FileFormatError, match=r"v\.csv, line 1: header lacks column\(s\) 'postcode'"):
        load_venues(path)
    rows = [dict(ROWS[0]), dict(ROWS[1], id="two")]
    path = _write_csv(tmp_path / "w.csv", rows)
    with pytest.raises(FileFormatError, match=r"w\.csv, line 3: row 1: field 'id' must be an integer"):
        load_venues(path)
    path = tmp_path / "x.csv"
    path.write_text(",".join(VENUE_FIELDS) + "\n0,a,b\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 2: row 0: wrong number of columns"):
        load_venues(path)


def test_load_venues_sqlite_errors(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE other (id INTEGER, name TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(FileFormatError, match=r"v\.db: expected exactly one table"):
        load_venues(path)
    with pytest.raises(FileFormatError, match=r"table 'other' lacks column\(s\) 'addr'"):
        load_venues(path, table="other")
    not_db = tmp_path / "n.db"
    not_db.write_text("hello, not a database" * 10, encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"n\.db: not an SQLite database"):
        load_venues(not_db)


def test_load_venues_unknown_type(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="unknown venue file type '.xml'"):
        load_venues(tmp_path / "v.xml")


def test_load_domain_value_not_in_ontology(tmp_path: Path, ontology_file: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(json.dumps([dict(ROWS[0], food="sushi")]), encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"v\.json: venue 0 \('pie place'\): food value 'sushi' is not in the ontology"):
        load_domain(ontology_file, path)
