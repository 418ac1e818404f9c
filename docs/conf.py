"""Sphinx configuration of simscore's documentation.

Build (the ``docs`` extra): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
The API pages (``docs/api/*.rst``) are written here, at every build, from the packages
themselves: one section per public module (no leading underscore), its members from its
docstrings, so a new module appears without editing the docs and each object is described
once, where it is defined.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from simscore._version import __version__  # the package is installed (the test command's environment)

project = "simscore"
author = "the simscore authors"
copyright = "2026, the simscore authors"  # noqa: A001 (Sphinx's name)
release = __version__
version = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "myst_parser",
    "sphinxarg.ext",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "alabaster"
smartquotes = False  # option names such as --format stay as typed (no en dashes)
html_static_path: list[str] = []

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # Attributes sections as fields: dataclass fields are members already
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Each object where it is defined: a module's __all__ may re-export another module's names.
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True,
                           "ignore-module-all": True}
# Headings of the README (included by readme.md) and of the guide pages become link targets
myst_heading_anchors = 3
# Numpydoc types such as "ndarray, shape (n,)" make a cross-reference of every name in them; a
# name like "n" or "dialogues" then matches several attributes. Such ambiguous type references
# stay plain text instead of failing the build (missing references never warn: not nitpicky).
suppress_warnings = ["ref.python"]

#: The packages whose modules the API pages describe, with a title each.
PACKAGES = {
    "simscore": "simscore: types, measures, comparison, statistics",
    "contexts": "contexts: domain, belief states, context sets",
    "policies": "policies: adapters, simulated world, GP-SARSA",
}
#: Modules that hold no API of their own.
SKIP = {"simscore._version"}


def _public_modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if any(part.startswith("_") for part in info.name.split(".")) or info.name in SKIP:
            continue
        names.append(info.name)
    return sorted(names)


def _write_api_pages(app: object) -> None:
    out = Path(__file__).parent / "api"
    out.mkdir(exist_ok=True)
    for package, title in PACKAGES.items():
        lines = [title, "=" * len(title), ""]
        for name in _public_modules(package):
            lines += [name, "-" * len(name), "", f".. automodule:: {name}"]
            if importlib.import_module(name).__file__.endswith("__init__.py"):
                lines.append("   :no-members:")  # a package re-exports its modules' names: described there
            lines.append("")
        text = "\n".join(lines)
        page = out / f"{package}.rst"
        if not page.exists() or page.read_text() != text:
            page.write_text(text)


def setup(app: object) -> None:
    _write_api_pages(app)
