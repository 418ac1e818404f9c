"""The architecture's rules, checked on the import graph of the source (every import, also local ones).

* ``simscore`` ← ``contexts`` ← ``policies``: contexts never imports policies, and the core of
  simscore imports neither; only the outer layers wire all three together: the application
  ``simscore.app`` and the RL integrations ``simscore.integrations``.
* Nothing outside ``simscore.app`` imports the application layer; nothing in the core,
  contexts or policies imports the integrations (they import optional packages).
* No package imports another package's private module or private name (a name starting with
  ``_``, e.g. ``from contexts.belief import _trusted_belief``): a fast path is a public seam.
* Inside a package, no module imports a private name from another public module (modules that
  share private names share them through a private module of their room), and no import circle
  at any dotted level (modules, rooms, ...), counting imports inside functions: for
  ``contexts`` and ``policies`` without exception; simscore's remaining ones are listed by name.
* Inside ``policies``, the rooms point one way: the adapters at the top may import
  ``policies.sim`` and ``policies.gpsarsa``; ``policies.gpsarsa`` imports ``policies.sim`` (and
  nothing at the top); ``policies.sim`` imports neither.
* Every exception and warning class lives in ``simscore.errors``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Container, Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simscore", "contexts", "policies")


def _modules() -> tuple[dict[str, ast.Module], frozenset[str]]:
    """The syntax tree of every module of PACKAGES by dotted name, and the names that are packages."""
    out = {}
    packages = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
                packages.add(".".join(parts))
            out[".".join(parts)] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return out, frozenset(packages)


MODULES, PACKAGE_NAMES = _modules()


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
    assert {"simscore.comparison", "simscore.app.cli", "simscore.integrations.sb3", "contexts.belief",
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
                                              "simscore.app.cli.main", "simscore.io.untrusted",
                                              "simscore.io.untrusted.terminal_text", "simscore.parallel",
                                              "simscore.parallel.wait_passively"}


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


def test_the_faces_are_small_and_load_only_what_they_need():
    # A package's __init__ exports what a user starts from (at most 30 names); GP-SARSA's room
    # (numba) loads when one of its names is first used.
    code = (
        "import sys, contexts, policies\n"
        "print(len(contexts.__all__), len(policies.__all__))\n"
        "print(sorted(m for m in ('policies.gpsarsa', 'numba', 'gymnasium', 'torch') if m in sys.modules))\n"
        "from policies import GPSarsaPolicy, train\n"
        "print('policies.gpsarsa' in sys.modules, [n for n in contexts.__all__ + policies.__all__ "
        "if getattr(contexts, n, None) is None and getattr(policies, n, None) is None])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    sizes, loaded, lazy = out.stdout.splitlines()
    assert all(int(size) <= 30 for size in sizes.split()), sizes
    assert loaded == "[]"
    assert lazy == "True []"


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


#: The rooms of policies, lowest first: each may import only the rooms before it. The two private
#: modules of the top (the check that the import names are ours, provenance) and the seeds serve every room.
ROOMS = ("policies._own", "policies._provenance", "policies.seeding", "policies.sim", "policies.gpsarsa", "policies.lm", "policies")


def _room(module: str) -> int:
    return next(i for i, room in enumerate(ROOMS) if _in(module, room))


def test_the_rooms_of_policies_point_one_way():
    def upward(module: str, target: str) -> bool:
        return _in(module, "policies") and _in(target, "policies") and _room(target) > _room(module)

    assert _violations(upward) == []
    assert {"policies.sim.env", "policies.gpsarsa.policy", "policies.lm.generative", "policies.observation"} <= set(MODULES)


#: The core of simscore by tiers, lowest first: a module imports only its own tier and those below.
#: The plumbing every room needs; the file rooms; the types; the measures; the statistics; the
#: entry points and how dialogues end; the analyses; the figures. The faces (``simscore``, its
#: ``__main__``) and the outer layers (the application, the integrations) stand above all.
CORE_TIERS: tuple[tuple[str, ...], ...] = (
    ("simscore.errors", "simscore.checks", "simscore.progress", "simscore._version", "simscore.ownership",
     "simscore.parallel"),
    ("simscore.io", "simscore.models"),
    ("simscore.tool_arguments", "simscore.acts", "simscore.responses", "simscore.policy", "simscore.samples",
     "simscore.responses_csv"),
    ("simscore.measures",),
    ("simscore.stats",),
    ("simscore.comparison", "simscore.scoring", "simscore.monitor", "simscore.outcomes"),
    ("simscore.analysis",),
    ("simscore.plots",),
)


def _tier(module: str) -> int | None:
    return next((i for i, tier in enumerate(CORE_TIERS) for room in tier if _in(module, room)), None)


def test_the_core_is_in_rooms_that_point_one_way():
    flat = sorted(m.split(".")[1] for m in MODULES if m.count(".") == 1 and _in(m, "simscore") and m not in PACKAGE_NAMES)
    rooms = sorted(m.split(".")[1] for m in PACKAGE_NAMES if m.count(".") == 1 and _in(m, "simscore"))
    assert rooms == ["analysis", "app", "comparison", "integrations", "io", "measures", "models", "outcomes", "plots", "stats"]
    assert len(flat) <= 15, flat  # the types, the entry points, the plumbing, __main__ and _version
    placed = {m for m in MODULES if _in(m, "simscore") and not _outer(m) and m not in ("simscore", ENTRY_POINT)}
    assert [m for m in sorted(placed) if _tier(m) is None] == [], "every module of the core has a tier"

    def upward(module: str, target: str) -> bool:
        here, there = _tier(module), _tier(target)
        return here is not None and there is not None and there > here

    assert _violations(upward) == []


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


# -- inside a package: no circle at any dotted level, no private name of another module -----

# The two rules below hold in every package, at every dotted level (modules, rooms), without exception.


def _imported(module: str, tree: ast.Module, modules: Container[str], packages: Container[str]) -> Iterator[tuple[str, str | None]]:
    """``(imported module, name or None)`` for every import statement of ``module``: at the top, in
    functions, under ``TYPE_CHECKING``; relative ones resolved. ``from a.b import c`` imports the
    module ``a.b.c`` if there is one, else the name ``c`` of ``a.b``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = module.split(".") if module in packages else module.split(".")[:-1]
                source = ".".join([*base[: len(base) - node.level + 1], *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{source}.{alias.name}"
                yield (full, None) if full in modules else (source, alias.name)


def _import_graph(modules: Mapping[str, ast.Module], packages: Container[str]) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports (by every import statement).

    A submodule's import also runs its parents' ``__init__``: that is Python's order of
    initialisation, not an arrow of this graph. Arrows between packages are the rules above.
    """
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, tree in modules.items():
        for target, _ in _imported(module, tree, modules, packages):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]  # a name imported from a module, or a module's attribute
            if target in modules and target != module and target.split(".")[0] == module.split(".")[0]:
                graph[module].add(target)
    return graph


def _reachable(graph: Mapping[str, set[str]], start: str) -> set[str]:
    """The nodes a path of one or more arrows leads to from ``start``."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for successor in graph.get(todo.pop(), ()):
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return seen


def _strongly_connected(graph: Mapping[str, set[str]]) -> list[tuple[str, ...]]:
    """The circles of ``graph``: its strongly connected components of more than one node.

    A node is on a circle when it reaches itself; its circle is every node it reaches that
    reaches it back (the graphs are a few hundred modules: quadratic is fine).
    """
    reach = {node: _reachable(graph, node) for node in graph}
    circles = {tuple(sorted(m for m in reach[node] if node in reach.get(m, ()))) for node in graph if node in reach[node]}
    return sorted(circles)


def _circles(modules: Mapping[str, ast.Module], packages: Container[str]) -> set[tuple[str, ...]]:
    """Every import circle at every dotted level: of modules, and of their rooms (``a.b`` for ``a.b.c``)."""
    graph = _import_graph(modules, packages)
    found: set[tuple[str, ...]] = set()
    for level in range(1, max(name.count(".") for name in graph) + 2):
        collapsed: dict[str, set[str]] = {}
        for module, targets in graph.items():
            here = ".".join(module.split(".")[:level])
            there = {".".join(target.split(".")[:level]) for target in targets}
            collapsed.setdefault(here, set()).update(there - {here})
        found.update(_strongly_connected(collapsed))
    return found


def _private_names_of_other_modules(modules: Mapping[str, ast.Module], packages: Container[str]) -> set[str]:
    """``"m imports t._name"`` for every private name m imports from another public module t of its package."""
    found = set()
    for module, tree in modules.items():
        for target, name in _imported(module, tree, modules, packages):
            public = target in modules and not any(part.startswith("_") for part in target.split(".")[1:])
            if (name is not None and _private(name) and public and target != module
                    and target.split(".")[0] == module.split(".")[0]):
                found.add(f"{module} imports {target}.{name}")
    return found


def test_no_import_circle_at_any_dotted_level():
    assert sorted(_circles(MODULES, PACKAGE_NAMES)) == []


def test_no_private_name_of_another_module_of_the_package():
    assert sorted(_private_names_of_other_modules(MODULES, PACKAGE_NAMES)) == []


def test_the_circle_and_private_name_rules_see_violations():
    sources = {
        "p": "from p.rooms.a import run\n",  # the face
        "p.rooms": "",
        "p.rooms.a": "from p.rooms.b import helper\n",
        "p.rooms.b": "def helper():\n    from p.rooms import a  # inside a function\n",
        "p.sim": "",
        "p.sim.x": "from p.gp.y import _fast\n",  # a private name of a public module
        "p.gp": "",
        "p.gp.y": "from ..sim import x\n",  # relative: p.sim.x; rooms p.sim <-> p.gp
        "p.gp._z": "from p.gp.y import _fast\n",
        "p.ok": "from p.gp import _z\nfrom p.sim import _private_module\n",
        "p.sim._private_module": "",
    }
    modules = {name: ast.parse(text) for name, text in sources.items()}
    packages = {"p", "p.rooms", "p.sim", "p.gp"}
    assert _circles(modules, packages) == {
        ("p.rooms.a", "p.rooms.b"),  # modules, through an import inside a function
        ("p.gp.y", "p.sim.x"),
        ("p.gp", "p.sim"),  # their rooms
    }
    assert _private_names_of_other_modules(modules, packages) == {
        "p.sim.x imports p.gp.y._fast", "p.gp._z imports p.gp.y._fast",
    }


def test_the_application_is_in_rooms_and_strict():
    # simscore.app: at most six modules flat beside its rooms; the rules above hold there at every level
    flat = sorted(m for m in MODULES if _in(m, "simscore.app") and m.count(".") == 2 and m not in PACKAGE_NAMES)
    assert len(flat) <= 6, flat
    assert {"simscore.app.experiment", "simscore.app.report", "simscore.app.inspect", "simscore.app.cli"} <= PACKAGE_NAMES
