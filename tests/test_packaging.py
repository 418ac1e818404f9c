"""The package's papers agree with each other: version, citation, changelog, floors, license, lint exceptions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from simscore._version import __version__

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            package, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", package).lower()] = version
    return pins


def _minor(version: str) -> tuple[int, int]:
    release = Version(version).release + (0, 0)
    return release[0], release[1]


def test_version_citation_and_changelog_agree():
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert f'\nversion: "{__version__}"\n' in citation
    assert "title: \"Similarity Scoring for Dialogue Behaviour Comparison\"" in citation
    assert "start: 311" in citation and "end: 322" in citation
    assert re.search(rf"^## {re.escape(__version__)} — ", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)


def test_license():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n\nCopyright (c) 2026 the simscore authors")


def test_lowest_constraints_hold_every_floor():
    """constraints-lowest.txt pins each direct dependency at its declared floor (torch: see there)."""
    lowest = _pins("constraints-lowest.txt")
    project = PYPROJECT["project"]
    extras = [e for name, group in project["optional-dependencies"].items() if name != "docs" for e in group]
    for text in [*project["dependencies"], *extras]:
        requirement = Requirement(text)
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        floors = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if name == "torch" or not floors:
            continue
        pinned = lowest.get(name)
        assert pinned is not None, f"{name} is not in constraints-lowest.txt"
        floor = floors[0]
        # a floor written as 2.3 is met by the lowest release at or above it (e.g. 2.3.0, or 2.3.2 where
        # 2.3.0 and 2.3.1 cannot be installed); it must not be a later minor release
        assert requirement.specifier.contains(pinned), (name, pinned)
        assert _minor(pinned) == _minor(floor), (name, pinned, floor)


def test_the_text_extra_installs_what_a_plain_trainer_needs():
    # transformers.Trainer (the callback's home, simscore.integrations.hf) needs accelerate of at least
    # this version; the text extra must bring it, not only the serve extra
    transformers_utils = pytest.importorskip("transformers.utils")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = {Requirement(r).name: Requirement(r) for r in project["optional-dependencies"]["text"]}
    assert "accelerate" in text
    floor = min(Version(s.version) for s in text["accelerate"].specifier if s.operator == ">=")
    assert floor >= Version(transformers_utils.ACCELERATE_MIN_VERSION)


def test_every_pin_is_within_the_declared_ranges():
    pinned = _pins("constraints.txt")
    project = PYPROJECT["project"]
    for text in [*project["dependencies"], *(e for group in project["optional-dependencies"].values() for e in group)]:
        requirement = Requirement(text)
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        if name in pinned:
            assert requirement.specifier.contains(pinned[name], prereleases=True), (name, pinned[name])


def _ruff() -> str | None:
    """ruff of this environment, else of the PATH (None: not installed)."""
    return shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


def test_the_complexity_exceptions_name_exactly_the_functions_above_the_limit():
    # pyproject.toml lists, per exempt file, its functions above the limit with their complexity:
    # a file leaves the list when none is left, an exempt file gains no new one, none grows.
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed here (.ci/run installs it and runs this test)")
    listed: dict[str, dict[str, int]] = {}
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r'"([^"]+)" = \["C901"\]  # (.+)', line)
        if match:
            listed[match[1]] = {name: int(n) for name, n in re.findall(r"([\w.]+) \((\d+)\)", match[2])}
    assert len(listed) == len(PYPROJECT["tool"]["ruff"]["lint"]["per-file-ignores"]) - 1  # and "tests/**" (E501)
    out = subprocess.run(
        [ruff, "check", "--select", "C901", "--config", "lint.per-file-ignores={}", "--output-format", "json",
         "--exit-zero", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, check=True,
    )
    found: dict[str, dict[str, int]] = {}
    for problem in json.loads(out.stdout):
        name, complexity = re.fullmatch(r"`(.+)` is too complex \((\d+) > \d+\)", problem["message"]).groups()
        found.setdefault(Path(problem["filename"]).relative_to(ROOT).as_posix(), {})[name] = int(complexity)
    assert {file: set(names) for file, names in found.items()} == {file: set(names) for file, names in listed.items()}
    grown = [f"{file}: {name} {found[file][name]} > {n}" for file, names in listed.items() for name, n in names.items()
             if found[file][name] > n]
    assert not grown
