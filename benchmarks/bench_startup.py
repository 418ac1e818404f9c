"""Start-up of the command line: wall time, peak memory and import set of short commands (run by hand).

Each case runs as its own process, alternating, ``--repeats`` times; the table shows the median
wall time and the largest peak resident memory (``ru_maxrss`` of the child), beside
``python -c "import numpy"`` and ``python -c "pass"`` measured in the same run. ``--import-sets``
also prints which of the heavy packages each case loaded (a second run of each case, which
reports its ``sys.modules`` at exit).

Cases: ``simscore --version``, ``simscore --help``, ``simscore compare`` on two small CSV files
of acts (the action measures), ``python -c "import simscore"``.

Usage: ``python benchmarks/bench_startup.py [--repeats 7] [--import-sets] [--before CHECKOUT]``.
``--before`` adds each simscore case run from another checkout of the repository (its folder put
first on ``PYTHONPATH``; the same environment otherwise), in the same alternating loop, so an
earlier commit stands beside this one: ``git worktree add /tmp/before <commit>``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: What a short command should not load (``compare`` on action measures: none of them).
HEAVY = ("pandas", "scipy", "scipy.stats", "numba", "torch", "matplotlib", "sklearn", "transformers",
         "contexts", "policies", "networkx", "joblib")

_REPORT = (
    "import atexit, json, os, sys\n"
    "atexit.register(lambda: open(os.environ['SIMSCORE_BENCH_MODULES'], 'w').write(json.dumps(sorted(sys.modules))))\n"
)


def _files(folder: Path) -> tuple[str, str]:
    """Two CSV response files of 200 contexts each (acts only), written by simscore's own writer."""
    from simscore.acts import Act
    from simscore.responses import Response
    from simscore.responses_csv import write_responses_csv

    acts = ["request(food)", "request(area)", "inform(food=thai,area=centre)", "hello()", "bye()"]
    a = {f"c{i}": Response(Act.parse(acts[i % 5])) for i in range(200)}
    b = {f"c{i}": Response(Act.parse(acts[(i * 7) % 5])) for i in range(200)}
    write_responses_csv(folder / "a.csv", a)
    write_responses_csv(folder / "b.csv", b)
    return str(folder / "a.csv"), str(folder / "b.csv")


def _cases(folder: Path, before: str | None) -> dict[str, Case]:
    a, b = _files(folder)
    command = [sys.executable, "-m", "simscore"]
    simscore = {
        'python -c "import simscore"': [sys.executable, "-c", "import simscore"],
        "simscore --version": [*command, "--version"],
        "simscore --help": [*command, "--help"],
        "simscore compare a.csv b.csv": [*command, "compare", a, b],
    }
    here = dict(os.environ)
    cases: dict[str, Case] = {
        'python -c "pass"': ([sys.executable, "-c", "pass"], here),
        'python -c "import numpy"': ([sys.executable, "-c", "import numpy"], here),
    }
    if before is not None:
        path = os.pathsep.join(filter(None, [str(Path(before).resolve()), os.environ.get("PYTHONPATH")]))
        cases.update({f"before: {name}": (argv, {**here, "PYTHONPATH": path}) for name, argv in simscore.items()})
    cases.update({name: (argv, here) for name, argv in simscore.items()})
    return cases


#: A command and its environment; every child runs in the benchmark's temporary folder, so that
#: ``python -c`` (which puts its working folder first on the path) imports the installed checkout.
Case = tuple[list[str], dict[str, str]]


def _run(case: Case) -> tuple[float, float]:
    """Wall seconds and peak resident MiB of one run of ``case`` (its command and environment)."""
    argv, env = case
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {errors[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def _modules(case: Case, folder: Path) -> list[str]:
    """The heavy packages of :data:`HEAVY` that ``case`` (a python command) has loaded when it exits."""
    argv, env = case
    out = folder / "modules.json"
    if argv[1] == "-c":
        code = _REPORT + argv[2]
    else:  # -m simscore ...
        code = _REPORT + "import sys; from simscore.__main__ import main\n" \
                         f"sys.argv = ['simscore', *{argv[3:]!r}]\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    env = {**env, "SIMSCORE_BENCH_MODULES": str(out)}
    subprocess.run([argv[0], "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True,
                   cwd=folder)
    loaded = set(json.loads(out.read_text()))
    return [name for name in HEAVY if name in loaded]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--import-sets", action="store_true", help="also print the heavy packages each case loads")
    parser.add_argument("--before", metavar="CHECKOUT", help="also run the simscore cases from this checkout")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = _cases(folder, args.before)
        times: dict[str, list[float]] = {name: [] for name in cases}
        memory: dict[str, float] = dict.fromkeys(cases, 0.0)
        for case in cases.values():  # one warm-up each: the page cache, .pyc files
            _run(case)
        for _ in range(args.repeats):  # alternating, so a load on the machine falls on every case alike
            for name, case in cases.items():
                wall, peak = _run(case)
                times[name].append(wall)
                memory[name] = max(memory[name], peak)
        numpy = statistics.median(times['python -c "import numpy"'])
        print(f"{'case':<40} {'median s':>9} {'x numpy':>8} {'peak MiB':>9}   (median of {args.repeats}, alternating)")
        for name in cases:
            median = statistics.median(times[name])
            print(f"{name:<40} {median:>9.3f} {median / numpy:>8.2f} {memory[name]:>9.1f}")
        if args.import_sets:
            print("\nheavy packages loaded:")
            for name, case in cases.items():
                print(f"  {name:<40} {', '.join(_modules(case, folder)) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
