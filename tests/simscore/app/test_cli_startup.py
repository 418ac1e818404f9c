"""The command line imports only what a command uses (times and memory: benchmarks/bench_startup.py)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from simscore.acts import Act
from simscore.app.cli import COMMANDS, build_parser
from simscore.responses import Response
from simscore.responses_csv import write_responses_csv

#: Packages no short command loads (``compare`` on action measures included): the simulated
#: world and its compiler, the text models, the figures, the statistics of the analyses.
HEAVY = ("contexts", "policies", "numba", "torch", "transformers", "tensorflow", "matplotlib", "scipy.stats",
         "sklearn", "networkx", "joblib")


def _loaded(code: str, cwd: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (in ``cwd``, so the installed packages load)."""
    report = "import atexit, json, sys\natexit.register(lambda: print(json.dumps(sorted(sys.modules))))\n"
    done = subprocess.run([sys.executable, "-c", report + code], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.splitlines()[-1]))


def _command(*argv: str) -> str:
    return ("from simscore.__main__ import main\nimport contextlib, io\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main({list(argv)!r})\n"
            "    except SystemExit:\n        pass\n")


def _choices(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {action.dest: action.help for action in sub._choices_actions}


def test_the_table_of_commands_is_what_their_modules_register() -> None:
    full = build_parser()
    assert _choices(full) == {name: summary for name, (_, summary) in COMMANDS.items()}
    assert build_parser("").format_help() == full.format_help()  # `simscore --help` lists every command alike


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_built_alone_has_all_its_options(command: str) -> None:
    alone = build_parser(command)
    sub = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction))
    full = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sub.choices[command].format_help() == full.choices[command].format_help()


def test_import_simscore_loads_no_pandas_and_short_commands_load_nothing_heavy(tmp_path: Path) -> None:
    assert not {"pandas", "numpy", *HEAVY} & _loaded("import simscore", tmp_path)
    assert "pandas" in _loaded("import simscore\nsimscore.compare", tmp_path)  # where a frame is made
    for argv in (["--version"], ["--help"]):
        assert not {"pandas", "numpy", *HEAVY} & _loaded(_command(*argv), tmp_path), argv
    assert not set(HEAVY) & _loaded(_command("compare", "--help"), tmp_path)  # the measures' registry: numpy


def test_compare_on_two_csv_files_of_acts_loads_nothing_heavy(tmp_path: Path) -> None:
    acts = ["request(food)", "hello()", "inform(food=thai)"]
    write_responses_csv(tmp_path / "a.csv", {f"c{i}": Response(Act.parse(acts[i % 3])) for i in range(30)})
    write_responses_csv(tmp_path / "b.csv", {f"c{i}": Response(Act.parse(acts[i % 2])) for i in range(30)})
    loaded = _loaded(_command("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--out",
                              str(tmp_path / "c.json")), tmp_path)
    assert (tmp_path / "c.json").is_file()  # it ran
    assert sorted(set(HEAVY) & loaded) == []
