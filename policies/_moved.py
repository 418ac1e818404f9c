"""Old import paths of :mod:`policies` that keep working, with a :class:`DeprecationWarning`.

``policies`` was one flat package; it is now three rooms (the adapters at the top,
:mod:`policies.sim` and :mod:`policies.gpsarsa`), and the CSV format of simscore's own
responses files moved to :mod:`simscore.responses_csv`. Code written against the old paths
keeps working through one mechanism, in this module:

* **A moved module** (``import policies.training``, ``from policies.simulation import
  run_dialogues``): the old path is listed in :data:`MOVED_MODULES` with the modules its names
  live in now. ``import policies`` puts a finder for exactly those paths first in
  ``sys.meta_path`` (they exist as files in no version of this package since, and first
  because a stale install of an older checkout would otherwise serve its old files); importing
  an old path warns once, naming the new place, and gives a module whose every public name
  is the very object of the new module (``policies.training.train is
  policies.gpsarsa.training.train``).
* **A moved name** of a module that still exists (``policies.read_responses``,
  ``policies.adapters.ObservationPolicy``): the module's ``__getattr__`` is
  :func:`moved_names`, which warns on every access and returns the object from its new place.

The package itself never uses an old path (``python -W error::DeprecationWarning -c
"import policies; from policies import *"`` is silent); ``tests/policies/test_moved.py``
imports every old path and checks the warning and the identity of the objects.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["MOVED_MODULES", "install", "moved_names"]

#: Old module path -> the modules its public names live in now (searched in this order).
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "policies.domain_cache": ("policies.sim.domain_cache",),
    "policies.features": ("policies.sim.features",),
    "policies.summary": ("policies.sim.summary",),
    "policies.tracker": ("policies.sim.tracker",),
    "policies.usersim": ("policies.sim.usersim", "policies.sim.userconfig"),
    "policies.nlg": ("policies.sim.nlg", "policies.sim.templates"),
    "policies.rewards": ("policies.sim.rewards",),
    "policies.simulation": ("policies.sim.simulation", "policies.sim.simulator"),
    "policies.env": ("policies.sim.env",),
    "policies.gpsarsa_policy": ("policies.gpsarsa.policy",),
    "policies.training": ("policies.gpsarsa.training", "policies.gpsarsa.evaluation"),
}

_INTERNAL = frozenset((__file__, importlib.__file__))


def _warn(message: str) -> None:
    """Warn at the code that imported or used the old path (not at this module or importlib)."""
    # warnings itself skips importlib's bootstrap frames; this module and importlib.import_module
    # are skipped here.
    frame = sys._getframe(0).f_back
    level = 2
    while frame is not None and (frame.f_code.co_filename in _INTERNAL or "_bootstrap" in frame.f_code.co_filename):
        if frame.f_code.co_filename in _INTERNAL:
            level += 1
        frame = frame.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def _resolve(name: str, modules: Sequence[str]) -> Any:
    for module_name in modules:
        module = importlib.import_module(module_name)
        if name in getattr(module, "__all__", ()) or (not name.startswith("_") and hasattr(module, name)):
            return getattr(module, name)
    raise AttributeError(name)


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of :data:`MOVED_MODULES` (and nothing else)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        old = module.__name__
        targets = MOVED_MODULES[old]
        where = " and ".join(targets)
        package = ".".join(targets[0].split(".")[:2])
        _warn(f"{old} is deprecated: it moved to {where}; import from there (or from {package})")
        names: list[str] = []
        for target in targets:
            names += [n for n in getattr(importlib.import_module(target), "__all__", ()) if n not in names]

        def __getattr__(name: str) -> Any:
            try:
                return _resolve(name, targets)
            except AttributeError:
                raise AttributeError(f"module {old!r} (moved to {where}) has no attribute {name!r}") from None

        module.__dict__.update(
            __doc__=f"Deprecated alias: the names of {where}.", __all__=names, __getattr__=__getattr__,
            __dir__=lambda: sorted(names),
        )


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Put the finder of the old module paths first in ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)


def moved_names(module: str, moved: Mapping[str, str], fallback: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that moved: ``name -> new module``, warning on each access.

    ``fallback(name)`` handles the names that did not move (e.g. lazily loaded ones); without it
    they raise :class:`AttributeError`.

    >>> getattr_ = moved_names("demo", {"dumps": "simscore.io"})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     from simscore.io import dumps
    ...     getattr_("dumps") is dumps, str(caught[0].message)
    (True, 'demo.dumps is deprecated: it moved to simscore.io; import it from there')
    """

    def __getattr__(name: str) -> Any:
        new = moved.get(name)
        if new is not None:
            _warn(f"{module}.{name} is deprecated: it moved to {new}; import it from there")
            return getattr(importlib.import_module(new), name)
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
