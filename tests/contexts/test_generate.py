"""Tests of contexts.generate: the C_gen grid."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from contexts.context import ContextSet
from contexts.domain import METHODS, Domain, Ontology, Venue, default_domain
from contexts.generate import GridSpec, format_level, generate_grid, grid_id
from simscore.errors import InvalidContextError

ONTOLOGY = default_domain().ontology


@pytest.fixture(scope="module")
def grid() -> ContextSet:
    return generate_grid()


def test_default_grid_size_and_composition(grid: ContextSet) -> None:
    assert len(grid) == 1296 == 6**4
    assert grid.name == "C_gen" and grid.domain == "restaurants"
    assert Counter(c.belief.top_method() for c in grid) == {m: 216 for m in METHODS}
    for slot in ("area", "pricerange", "food"):
        levels = Counter(round(c.belief.top(slot)[1], 10) for c in grid)
        assert levels == {level: 216 for level in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)}
    assert len({c.belief.key() for c in grid}) == 1296  # all distinct


def test_every_generated_belief_validates(grid: ContextSet) -> None:
    for context in grid:
        belief = context.belief
        belief.validate(ONTOLOGY)
        for dist in belief.slots.values():
            assert math.isclose(math.fsum(dist.values()), 1.0, abs_tol=1e-9)
            assert all(0.0 <= p <= 1.0 for p in dist.values())
        assert sum(belief.method.values()) == 1.0 and max(belief.method.values()) == 1.0


def test_grid_context_contents(grid: ContextSet) -> None:
    context = grid["gen/area=0.4/pricerange=0.2/food=1.0/method=byname"]
    belief = context.belief
    assert dict(belief.slots["area"]) == {"centre": 0.4, "none": 0.6}
    assert dict(belief.slots["pricerange"]) == {"expensive": 0.2, "none": 0.8}
    assert dict(belief.slots["food"]) == {"indian": 1.0, "none": 0.0}
    assert dict(belief.slots["name"]) == {"none": 1.0}
    assert belief.top_method() == "byname" and belief.method["byname"] == 1.0
    assert belief.discourse_act["none"] == 1.0 and dict(belief.requested) == {}
    assert (belief.last_offered, belief.offer_happened, belief.last_informed_no_venue) == (None, False, False)
    assert dict(context.metadata) == {
        "source": "gen", "dialogue_id": None, "turn_index": None, "history": (),
        "level_area": 0.4, "level_pricerange": 0.2, "level_food": 1.0,
    }
    zero = grid["gen/area=0.0/pricerange=0.0/food=0.0/method=none"].belief
    assert all(dict(d) == {"none": 1.0} for d in zero.slots.values())
    assert grid.ids[:2] == ("gen/area=0.0/pricerange=0.0/food=0.0/method=none",
                            "gen/area=0.0/pricerange=0.0/food=0.0/method=byconstraints")


def test_grid_is_deterministic(grid: ContextSet) -> None:
    again = generate_grid()
    assert again == grid and again.content_hash == grid.content_hash


@pytest.mark.parametrize(
    ("spec", "size"),
    [
        (GridSpec(levels=(0.0, 0.5, 1.0)), 3**3 * 6),
        (GridSpec(slots=("area", "food"), methods=("byconstraints", "byname")), 6 * 6 * 2),
        (GridSpec(slots=("food",), levels=(1.0,), methods=("none",)), 1),
        (GridSpec(slots=("area", "pricerange"), levels={"area": (0.1, 0.9), "pricerange": (0.0, 0.3, 0.6, 0.9)}), 2 * 4 * 6),
        (GridSpec(levels=tuple(i / 10 for i in range(11))), 11**3 * 6),
    ],
)
def test_other_parameterisations_count(spec: GridSpec, size: int) -> None:
    assert spec.size == size
    generated = generate_grid(spec)
    assert len(generated) == size
    for context in generated.contexts[:: max(1, size // 50)]:
        context.belief.validate(ONTOLOGY)


def test_parameters_reach_beliefs() -> None:
    name = ONTOLOGY.informable["name"][0]
    spec = GridSpec(
        slots=("food",), levels=(0.5,), values={"food": "thai"}, methods=("byalternatives",),
        discourse_act={"thankyou": 1.0}, requested={"phone": 1.0}, last_offered=name,
        offer_happened=True, last_informed_no_venue=True,
    )
    (context,) = generate_grid(spec, name="mine")
    assert context.id == "gen/food=0.5/method=byalternatives"
    b = context.belief
    assert dict(b.slots["food"]) == {"thai": 0.5, "none": 0.5}
    assert dict(b.slots["area"]) == {"none": 1.0}
    assert b.top_discourse_act() == "thankyou" and dict(b.requested) == {"phone": 1.0}
    assert (b.last_offered, b.offer_happened, b.last_informed_no_venue) == (name, True, True)
    built = generate_grid(spec, name="mine").built
    assert built["spec"]["values"] == {"food": "thai"} and built["values"] == {"food": "thai"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"levels": (0.0, 1.5)}, "levels: level must be <= 1.0, got 1.5"),
        ({"levels": (0.2, 0.2)}, "the same level twice"),
        ({"levels": ()}, "levels must not be empty"),
        ({"levels": (float("nan"),)}, "levels: level must be a finite number, got nan"),
        ({"levels": ("0.5",)}, "levels: level must be a number, got str '0.5'"),
        ({"methods": ("byname", "sideways")}, "unknown method 'sideways'"),
        ({"slots": ()}, "slots must be a non-empty"),
        ({"slots": ("area", "area")}, "slot twice"),
        ({"values": {"colour": "red"}}, "slot 'colour' is not in slots"),
        ({"discourse_act": {"shout": 1.0}}, "discourse_act: unknown value 'shout'"),
        ({"requested": {"phone": 3.0}}, "greater than 1"),
        ({"levels": {"area": (0.5,)}}, "levels lacks slot"),
    ],
)
def test_bad_specs(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidContextError, match=message):
        GridSpec(**kwargs)  # type: ignore[arg-type]


def test_spec_checked_against_domain() -> None:
    with pytest.raises(InvalidContextError, match="grid slot 'colour' is not an informable slot"):
        generate_grid(GridSpec(slots=("colour",)))
    with pytest.raises(InvalidContextError, match="representative value 'sushi' is not a value of slot 'food'"):
        generate_grid(GridSpec(values={"food": "sushi"}))
    with pytest.raises(InvalidContextError, match="unknown requestable slot 'parking'"):
        generate_grid(GridSpec(requested={"parking": 1.0}))


def test_custom_domain_representatives() -> None:
    ontology = Ontology({"area": ["north", "south"], "pricerange": ["cheap"], "food": ["thai", "pizza"]})
    venues = tuple(
        Venue(i, f"v{i}", "a", area, food, "p", "cheap", "pc", "s", "d")
        for i, (area, food) in enumerate([("south", "pizza"), ("south", "thai"), ("north", "pizza")])
    )
    domain = Domain("mini", ontology, venues)
    grid = generate_grid(GridSpec(levels=(1.0,), methods=("none",)), domain=domain)
    assert grid.ids == ("gen/area=1.0/pricerange=1.0/food=1.0/method=none",)
    assert grid.domain == "mini"
    assert grid.built["values"] == {"area": "south", "pricerange": "cheap", "food": "pizza"}


def test_ids_helpers() -> None:
    assert format_level(0.0) == "0.0" and format_level(1) == "1.0" and format_level(0.6000000000000001) == "0.6"
    assert grid_id({"area": 0.4}, "none") == "gen/area=0.4/method=none"


def test_grid_file_header_records_spec(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    generate_grid(GridSpec(levels=(0.0, 1.0), methods=("byname",))).to_jsonl(path)
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["built"]["generator"] == "contexts.generate_grid"
    assert header["built"]["spec"]["levels"] == [0.0, 1.0] and header["count"] == 8
    assert len(ContextSet.read_jsonl(path, ontology=ONTOLOGY)) == 8
