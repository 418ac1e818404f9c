"""The architecture's rules, checked on the import graph of the source (every import, also local ones).

* ``simscore`` ← ``contexts`` ← ``policies``: contexts never imports policies, and the core of
  simscore imports neither; only the outer layers wire all three together: the application
  ``simscore.app`` and the RL integrations ``simscore.integrations``.
* Nothing outside ``simscore.app`` imports the application layer; nothing in the core,
  contexts or policies imports the integrations (they import optional packages).
* No package imports another package's private module or private name (a name starting with
  ``_``, e.g. ``from contexts.belief import _trusted_belief``): a fast path is a public seam.
* Inside ``policies``, the rooms point one way: the adapters at the top may import
  ``policies.sim`` and ``policies.gpsarsa``; ``policies.gpsarsa`` imports ``policies.sim`` (and
  nothing at the top); ``policies.sim`` imports neither.
* Every exception and warning class lives in ``simscore.errors``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simscore", "contexts", "policies")


def _modules() -> dict[str, ast.Module]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return out


MODULES = _modules()


def _imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in PACKAGES}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(rule) -> list[str]:
    return sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        for target in _imports(tree)
        if rule(module, target)
    )


def test_the_modules_were_found():
    assert {"simscore.compare", "simscore.app.cli", "simscore.integrations.sb3", "contexts.belief",
            "policies.sim.simulation"} <= set(MODULES)


OUTER = ("simscore.app", "simscore.integrations")


def _outer(module: str) -> bool:
    return any(_in(module, layer) for layer in OUTER)


def test_core_and_contexts_never_reach_up():
    def upward(module: str, target: str) -> bool:
        if _outer(module):
            return False
        if _in(module, "simscore"):
            return _in(target, "contexts") or _in(target, "policies")
        if _in(module, "contexts"):
            return _in(target, "policies")
        return False

    assert _violations(upward) == []


#: The command's entry point: it imports the command line so that a PackageClashError raised by
#: importing simscore.app ends the command with its one-line message (simscore/__main__.py).
ENTRY_POINT = "simscore.__main__"


def test_only_the_application_layer_imports_it():
    def outside(module: str, target: str) -> bool:
        return _in(target, "simscore.app") and not _in(module, "simscore.app") and module != ENTRY_POINT

    assert _violations(outside) == []
    assert _imports(MODULES[ENTRY_POINT]) == {"simscore.errors", "simscore.errors.PackageClashError", "simscore.app.cli",
                                              "simscore.app.cli.main", "simscore.untrusted",
                                              "simscore.untrusted.terminal_text"}


def test_only_outer_layers_import_the_integrations():
    assert _violations(lambda m, t: _in(t, "simscore.integrations") and not _outer(m)) == []


def test_importing_simscore_imports_no_rl_library():
    code = (
        "import sys, simscore, simscore.integrations\n"
        "heavy = ('torch', 'gymnasium', 'stable_baselines3', 'sb3_contrib', 'contexts', 'policies')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_no_private_module_of_another_package():
    def private_elsewhere(module: str, target: str) -> bool:
        if target not in MODULES:  # a name imported from a module, not a module
            return False
        private = any(part.startswith("_") for part in target.split(".")[1:])
        return private and target.split(".")[0] != module.split(".")[0]

    assert _violations(private_elsewhere) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_names(tree: ast.Module) -> set[str]:
    """``module.name`` of every private name imported with ``from module import name``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in PACKAGES:
                found.update(f"{node.module}.{alias.name}" for alias in node.names if _private(alias.name))
    return found


def test_no_private_name_of_another_package():
    found = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        for target in _private_names(tree)
        if target.split(".")[0] != module.split(".")[0] and target not in MODULES  # private modules: above
    )
    assert found == []


def test_the_private_name_rule_sees_a_violation():
    tree = ast.parse("from contexts.belief import _trusted_belief, BeliefState\nfrom simscore import __version__\n")
    assert _private_names(tree) == {"contexts.belief._trusted_belief"}


#: The rooms of policies, lowest first: each may import only the rooms before it.
ROOMS = ("policies.sim", "policies.gpsarsa", "policies")


def _room(module: str) -> int:
    return next(i for i, room in enumerate(ROOMS) if _in(module, room))


def test_the_rooms_of_policies_point_one_way():
    def upward(module: str, target: str) -> bool:
        return _in(module, "policies") and _in(target, "policies") and _room(target) > _room(module)

    assert _violations(upward) == []
    assert {"policies.sim.env", "policies.gpsarsa.policy", "policies.observation"} <= set(MODULES)


def test_exceptions_live_in_the_errors_module():
    defined = sorted(
        f"{module}.{node.name}"
        for module, tree in MODULES.items()
        if module != "simscore.errors"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(base, ast.Name) and base.id.endswith(("Error", "Warning", "Exception")) for base in node.bases)
    )
    assert defined == [], "exceptions belong in simscore.errors"
