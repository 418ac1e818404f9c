"""The import names contexts and policies are shared with unrelated PyPI distributions: a clash is named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simscore.errors import PackageClashError
from simscore.ownership import DISTRIBUTION, require_own_packages

ROOT = Path(__file__).resolve().parents[2]


def test_our_packages_pass():
    require_own_packages("contexts", "policies")


def test_a_missing_package_is_named():
    with pytest.raises(PackageClashError, match=r"'import no_such_package_xyz' does not load .*\(nothing found\)"):
        require_own_packages("no_such_package_xyz")


def _foreign(tmp_path: Path, name: str, distribution: str) -> Path:
    """A site folder where another distribution owns ``name`` (as pip would leave it)."""
    site = tmp_path / "site"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text('"""Not simscore\'s."""\nVALUE = 1\n')
    info = site / f"{distribution}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    return site


@pytest.mark.parametrize(
    ("name", "distribution", "statement"),
    [
        ("contexts", "Contexts", "import simscore.app"),
        ("policies", "policies", "import simscore.integrations"),
        ("contexts", "Contexts", "import policies"),
    ],
)
def test_a_foreign_package_is_named_at_import(tmp_path, name, distribution, statement):
    site = _foreign(tmp_path, name, distribution)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", statement], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("simscore.errors.PackageClashError: ")
    assert f"'import {name}' does not load {DISTRIBUTION}'s package ({site / name / '__init__.py'})" in last
    assert f"it belongs to the distribution '{distribution}'" in last
    assert f"pip uninstall {distribution}; pip install --force-reinstall {DISTRIBUTION}" in last


def _console_script() -> str:
    """The ``simscore`` command as pip writes it from pyproject's entry point."""
    import tomllib

    entry = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["simscore"]
    module, function = entry.split(":")
    return f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n"


@pytest.mark.parametrize(("name", "distribution"), [("policies", "policies"), ("contexts", "Contexts")])
@pytest.mark.parametrize("how", ["console script", "python -m simscore"])
def test_the_command_names_a_clash_in_one_line_and_exits_2(tmp_path, name, distribution, how):
    site = _foreign(tmp_path, name, distribution)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    if how == "console script":
        script = tmp_path / "simscore"
        script.write_text(_console_script(), encoding="utf-8")
        command = [sys.executable, str(script), "compare", "a.jsonl", "b.jsonl"]
    else:
        command = [sys.executable, "-m", "simscore", "compare", "a.jsonl", "b.jsonl"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"simscore: error: 'import {name}' does not load {DISTRIBUTION}'s package ({site / name / '__init__.py'}): it "
        f"belongs to the distribution '{distribution}'. {DISTRIBUTION} installs the top-level packages simscore, "
        f"contexts and policies, and an unrelated distribution with the import name '{name}' overwrites ours. Use "
        f"separate virtual environments, or uninstall it and reinstall ours: pip uninstall {distribution}; "
        f"pip install --force-reinstall {DISTRIBUTION}\n"
    )


@pytest.mark.slow
def test_the_command_runs_without_a_clash(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = tmp_path / "simscore"
    script.write_text(_console_script(), encoding="utf-8")
    for command in ([sys.executable, str(script), "--version"], [sys.executable, "-m", "simscore", "--version"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path)
        assert (done.returncode, done.stdout.split()[0], done.stderr) == (0, "simscore", "")


def test_import_simscore_works_beside_a_clash(tmp_path):
    """The core never imports contexts or policies: it keeps working (the outer layers refuse)."""
    site = _foreign(tmp_path, "policies", "policies")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    code = "import simscore; print(simscore.score(['hello()', 'bye()'], ['hello()', 'bye()']).means['tmr'])"
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env, capture_output=True, text=True,
                          cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "1.0\n", "")
