"""A read-only install works: with the package folder and the home folder unwritable, the compiled loops compile in memory.

numba refuses to define a ``cache=True`` function when no cache folder is writable
(``RuntimeError: cannot cache function ...: no locator available``), which made ``import
policies`` fail in a system or container install, and with it even ``simscore compare
--measures tmr``. The packages are copied to a temporary folder, made read-only with the
home folder, and used from a fresh interpreter (as an unprivileged user where the tests run
as root, since root writes through permissions).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
NOBODY = 65534


def _read_only(path: Path) -> None:
    for folder, _, files in os.walk(path):
        for name in files:
            os.chmod(Path(folder) / name, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)


@pytest.fixture()
def open_folder() -> Any:
    """A temporary folder other users may enter (pytest's tmp_path lies in a folder only its owner may)."""
    folder = Path(tempfile.mkdtemp(prefix="simscore-read-only-"))
    os.chmod(folder, 0o755)
    yield folder
    for path, _, _ in os.walk(folder):
        os.chmod(path, 0o755)
    shutil.rmtree(folder)


@pytest.mark.slow
def test_read_only_package_and_home_still_import_and_compare(open_folder: Path) -> None:
    tmp_path = open_folder
    root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    install = tmp_path / "install"
    for package in ("simscore", "contexts", "policies"):
        shutil.copytree(ROOT / package, install / package, ignore=shutil.ignore_patterns("__pycache__"))
    examples = ROOT / "examples"
    home = tmp_path / "home"
    home.mkdir()
    _read_only(install)
    _read_only(home)
    script = (
        "import policies\n"
        "from policies.gpsarsa import _gpkernels\n"
        "from policies.gpsarsa.learner import compile_kernels\n"
        "from simscore.app.cli import main\n"
        "assert not _gpkernels.CACHED\n"
        "compile_kernels()\n"
        f"raise SystemExit(main(['compare', {str(examples / 'responses_a.jsonl')!r}, "
        f"{str(examples / 'responses_b.jsonl')!r}, '--measures', 'tmr']))\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PYTHONPATH": str(install),
           "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-c", script]
    if root:  # root writes through permissions: run the child as nobody (util-linux's setpriv)
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot run a child that lacks write permission")
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tmr        0.7083  [0.5417, 0.8750]     24        0" in done.stdout
    assert not list(install.rglob("*.nbi")) and not list(home.rglob("*"))  # nothing written anywhere
