"""Are the import names ``contexts`` and ``policies`` ours?

simscore-dialogue installs three top-level packages, ``simscore``, ``contexts`` and
``policies``. The last two names are also used by unrelated distributions on PyPI ("Contexts",
a test framework, and "policies"); installing one of them beside simscore-dialogue writes its
files over ours in the same folder, and the failure that follows (an ``ImportError`` deep
inside simscore, or a foreign module answering to ``import policies``) says nothing about why.

Each of our two packages carries a marker line, ``__simscore_distribution__ =
"simscore-dialogue"``, in its ``__init__.py``. :func:`require_own_packages` finds the package
an import would load (without running it) and checks for the marker: a package without it
raises :class:`~simscore.errors.PackageClashError` naming the distributions that install that
name and what to do. The code that imports ``contexts`` or ``policies`` (``simscore.app``,
``simscore.integrations`` and ``policies`` itself) calls it first; the ``simscore`` command
(:mod:`simscore.__main__`) prints the error's message on one line and exits with code 2.

>>> require_own_packages("contexts", "policies")
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from simscore.errors import PackageClashError

__all__ = ["DISTRIBUTION", "MARKER", "require_own_packages", "distributions_providing"]

#: The name of our distribution on PyPI.
DISTRIBUTION = "simscore-dialogue"
#: The attribute (and the line in the package's ``__init__.py``) that marks our packages.
MARKER = "__simscore_distribution__"

_checked: set[str] = set()


def distributions_providing(name: str) -> list[str]:
    """Installed distributions whose files hold the top-level import name ``name`` (sorted)."""
    from importlib.metadata import packages_distributions

    return sorted(set(packages_distributions().get(name, [])))


def _is_ours(name: str) -> bool:
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, MARKER, None) == DISTRIBUTION
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith("__init__.py"):
        return False
    try:
        source = Path(spec.origin).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return f'{MARKER} = "{DISTRIBUTION}"' in source


def require_own_packages(*names: str) -> None:
    """Raise :class:`~simscore.errors.PackageClashError` unless each name imports our package.

    Cheap: the package is found, not imported (one small file read, once per name and process).
    """
    for name in names:
        if name in _checked:
            continue
        if not _is_ours(name):
            spec = importlib.util.find_spec(name) if name not in sys.modules else None
            where = getattr(sys.modules.get(name), "__file__", None) or (spec.origin if spec else None)
            others = [d for d in distributions_providing(name) if d.lower().replace("_", "-") != DISTRIBUTION]
            owner = f"the distribution {', '.join(map(repr, others))}" if others else "another package"
            found = f" ({where})" if where else " (nothing found)"
            raise PackageClashError(
                f"'import {name}' does not load {DISTRIBUTION}'s package{found}: it belongs to {owner}. "
                f"{DISTRIBUTION} installs the top-level packages simscore, contexts and policies, and an "
                f"unrelated distribution with the import name {name!r} overwrites ours. Use separate "
                f"virtual environments, or uninstall it and reinstall ours: "
                f"pip uninstall {others[0] if others else name}; pip install --force-reinstall {DISTRIBUTION}"
            )
        _checked.add(name)
