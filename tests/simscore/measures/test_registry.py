"""The measure registry answers questions about measures without building them (bare installs)."""

from __future__ import annotations

from simscore.measures import _Registry, measure_options


def test_registry_membership_and_option_listing_build_no_measure():
    # the command line's help lists every measure's options: in a bare install building BERTScore
    # to answer "in MEASURES" raised MissingDependencyError, so build_parser() failed
    built = []

    class Costly:
        options: dict = {}

        def __init__(self) -> None:
            built.append(1)

    registry = _Registry({"costly": Costly})
    assert "costly" in registry and "other" not in registry and 5 not in registry
    assert registry.classes["costly"] is Costly and built == []
    assert isinstance(registry["costly"], Costly) and built == [1]


def test_measure_options_of_every_registered_measure_without_building_it():
    # what compare's --measure-option help lists; BERTScore's options are known without its model package
    assert "num_layers" in measure_options("bertscore") and list(measure_options("bleu4")) == ["tokenize", "lowercase"]
