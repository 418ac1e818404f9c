"""Deterministic generator of the shipped domain data (``contexts/data/*.json``).

Run ``python tools/build_domain_data.py`` from the repository to regenerate the files (``--out DIR`` writes them
elsewhere). The venue database has the shape of PyDial's Cambridge restaurants database —
110 venues with its area, price-range and food marginals — but every name, address, phone
number, postcode, signature dish and description is invented. A test checks that the
shipped files equal a fresh generation.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from contexts.domain import (
    AREAS,
    DISCOURSE_ACTS,
    FOODS,
    METHODS,
    ONTOLOGY_FORMAT,
    PRICERANGES,
    REQUESTABLE,
    SYSTEM_REQUESTABLE,
    VENUES_FORMAT,
)
from simscore.io import atomic_write_text

__all__ = ["DOMAIN_NAME", "SEED", "AREA_COUNTS", "PRICE_COUNTS", "FOOD_COUNTS", "build", "main"]

DOMAIN_NAME = "restaurants"
#: Seed of the one generator all choices are drawn from.
SEED = 20200701

#: Venue counts per area, price range and food (the reference database's marginals).
AREA_COUNTS: dict[str, int] = {"centre": 69, "west": 12, "north": 11, "east": 9, "south": 9}
PRICE_COUNTS: dict[str, int] = {"expensive": 57, "moderate": 31, "cheap": 22}
FOOD_COUNTS: dict[str, int] = {
    "indian": 22, "chinese": 17, "italian": 15, "british": 12, "european": 5,
    "modern european": 4, "international": 3, "mediterranean": 3, "thai": 3,
    "asian oriental": 3, "gastropub": 3, "french": 2, "japanese": 2, "korean": 2,
    "north american": 2, "portuguese": 2, "seafood": 2, "spanish": 2, "turkish": 2,
    "lebanese": 1, "mexican": 1, "vietnamese": 1, "african": 1,
}

_ADJECTIVES = (
    "golden", "silver", "copper", "crimson", "velvet", "crooked", "little", "old",
    "wandering", "hidden", "jolly", "amber", "painted", "humble", "lucky", "quiet",
)
_NOUNS = (
    "lantern", "kettle", "pelican", "orchard", "saffron", "compass", "fig", "harbour",
    "heron", "olive", "spoon", "thistle", "walnut", "willow", "pepper", "anchor",
)
_STREETS = (
    "mill lane", "orchard street", "kingfisher road", "market passage", "bell yard",
    "river walk", "station parade", "chapel row", "ferry lane", "barley road",
    "hawthorn way", "castle hill", "ropewalk", "tanners close", "quayside",
    "beacon street", "granary court", "meadow road", "abbey walk", "linden grove",
)
_POSTCODE_DISTRICTS = {
    "centre": ("cb2 1", "cb2 3", "cb1 1"),
    "north": ("cb4 1", "cb4 2"),
    "west": ("cb3 0", "cb3 9"),
    "south": ("cb1 7", "cb2 8"),
    "east": ("cb5 8", "cb1 3"),
}
_SIGNATURES = {
    "indian": ("lamb rogan josh", "paneer tikka", "chicken korma", "tarka dal"),
    "chinese": ("crispy aromatic duck", "mapo tofu", "salt and pepper squid", "char siu pork"),
    "italian": ("wild mushroom risotto", "osso buco", "pappardelle with ragu", "tiramisu"),
    "british": ("steak and ale pie", "fish and chips", "sunday roast beef", "sticky toffee pudding"),
    "european": ("confit duck leg", "beef goulash", "pork schnitzel"),
    "modern european": ("seared scallops with pea puree", "slow cooked pork belly"),
    "international": ("tasting platter", "lamb tagine", "chef's fusion plate"),
    "mediterranean": ("grilled halloumi", "mezze platter", "slow roast lamb shoulder"),
    "thai": ("green curry", "pad thai", "tom yum soup"),
    "asian oriental": ("teriyaki salmon", "crispy chilli beef", "laksa"),
    "gastropub": ("pork belly with cider jus", "ploughman's lunch", "beer battered haddock"),
    "french": ("coq au vin", "bouillabaisse"),
    "japanese": ("salmon sashimi", "chicken katsu"),
    "korean": ("bibimbap", "bulgogi"),
    "north american": ("smoked brisket", "buttermilk fried chicken"),
    "portuguese": ("piri piri chicken", "pastel de nata"),
    "seafood": ("dressed crab", "oysters with shallot vinegar"),
    "spanish": ("paella valenciana", "patatas bravas"),
    "turkish": ("iskender kebab", "lahmacun"),
    "lebanese": ("shish taouk",),
    "mexican": ("pork carnitas",),
    "vietnamese": ("beef pho",),
    "african": ("jollof rice",),
}
_DESCRIPTIONS = (
    "{Name} serves {food} food in the {area} of town. Prices are {price}.",
    "{A_price} {price} {food} restaurant in the {area}, {name} is known for its {signature}.",
    "{Name} is {a_food} {food} place in the {area} of the city; the {signature} is a favourite.",
)


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" and not word.startswith("eu") else "a"


def _spread(counts: dict[str, int]) -> list[str]:
    return [value for value, count in counts.items() for _ in range(count)]


def _venues() -> list[dict[str, object]]:
    n = sum(AREA_COUNTS.values())
    if sum(PRICE_COUNTS.values()) != n or sum(FOOD_COUNTS.values()) != n:
        raise ValueError("the area, price and food counts must have the same total")
    rng = np.random.default_rng(SEED)
    areas = _spread(AREA_COUNTS)
    prices = _spread(PRICE_COUNTS)
    foods = _spread(FOOD_COUNTS)
    area_order = rng.permutation(n)
    price_order = rng.permutation(n)
    food_order = rng.permutation(n)
    name_pool = [f"the {a} {b}" for a in _ADJECTIVES for b in _NOUNS]
    name_order = rng.permutation(len(name_pool))[:n]
    phone_numbers = rng.choice(900000, size=n, replace=False) + 100000
    venues: list[dict[str, object]] = []
    used_postcodes: set[str] = set()
    for index in range(n):
        area = areas[area_order[index]]
        price = prices[price_order[index]]
        food = foods[food_order[index]]
        name = name_pool[name_order[index]]
        street = _STREETS[int(rng.integers(len(_STREETS)))]
        addr = f"{int(rng.integers(1, 120))} {street}"
        while True:
            districts = _POSTCODE_DISTRICTS[area]
            letters = "".join(chr(ord("a") + int(i)) for i in rng.integers(0, 26, size=2))
            postcode = f"{districts[int(rng.integers(len(districts)))]}{letters}"
            if postcode not in used_postcodes:
                used_postcodes.add(postcode)
                break
        dishes = _SIGNATURES[food]
        signature = dishes[int(rng.integers(len(dishes)))]
        template = _DESCRIPTIONS[int(rng.integers(len(_DESCRIPTIONS)))]
        description = template.format(
            Name=name[0].upper() + name[1:], name=name, food=food, area=area, price=price,
            signature=signature, A_price=_article(price).capitalize(), a_food=_article(food),
        )
        venues.append(
            {
                "id": index,
                "name": name,
                "addr": addr,
                "area": area,
                "food": food,
                "phone": f"01223 {int(phone_numbers[index])}",
                "pricerange": price,
                "postcode": postcode,
                "signature": signature,
                "description": description,
            }
        )
    return venues


def build() -> dict[str, str]:
    """Generate the data files: file name -> file text (deterministic)."""
    venues = _venues()
    unknown = sorted(set(FOOD_COUNTS) - set(FOODS))
    if unknown:
        raise ValueError(f"database foods missing from the ontology: {unknown}")
    ontology = {
        "format": ONTOLOGY_FORMAT,
        "version": 1,
        "name": DOMAIN_NAME,
        "informable": {
            "area": list(AREAS),
            "pricerange": list(PRICERANGES),
            "food": list(FOODS),
            "name": sorted(str(v["name"]) for v in venues),
        },
        "system_requestable": list(SYSTEM_REQUESTABLE),
        "requestable": list(REQUESTABLE),
        "methods": list(METHODS),
        "discourse_acts": list(DISCOURSE_ACTS),
    }
    database = {"format": VENUES_FORMAT, "version": 1, "venues": venues}

    def dump(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=False, indent=1) + "\n"

    return {"ontology.json": dump(ontology), "venues.json": dump(database)}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the generated files into ``--out`` (default: the package's data folder)."""
    parser = argparse.ArgumentParser(prog="python tools/build_domain_data.py", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "contexts" / "data")
    args = parser.parse_args(argv)
    for name, text in build().items():
        atomic_write_text(args.out / name, text)
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
