"""Every file shipped in ``examples/`` and in the packages' data is read by its reader and passes its checks.

The files are found by walking the folders, so a file added there cannot go unseen: one that no
reader below claims fails :func:`test_every_shipped_file_has_a_reader`, naming itself. JSON
Lines files are read by the reader of the format their header names, and must be in that
format's current version (a shipped file is rewritten by the library's writer when its format
changes, never left for a reader of old versions). The example scripts are claimed by
:data:`tests.examples.test_scripts.RUN_BY`, which names the test that runs each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from contexts.context import CONTEXTS_FORMAT, CONTEXTS_VERSION, ContextSet
from contexts.domain import default_domain, load_ontology, load_venues
from simscore import Responses
from simscore import responses as responses_module
from simscore.app.experiment.config import load_config
from simscore.app.inspect.view_page import render_page
from simscore.app.report import paper
from tests.examples.test_scripts import RUN_BY

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PACKAGES = ("simscore", "contexts", "policies")


def _walk(folder: Path) -> list[Path]:
    """Every file under ``folder`` but Python's caches."""
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _shipped() -> list[Path]:
    """The example files and the packages' data files (everything in a package that is not Python source)."""
    data = [p for package in PACKAGES for p in _walk(ROOT / package) if p.suffix != ".py"]
    return _walk(EXAMPLES) + data


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- readers ---------------------------------------------------------------------------------

def _read_contexts(path: Path) -> object:
    contexts = ContextSet.read_jsonl(path, ontology=default_domain().ontology)  # checks count and content_hash
    assert len(contexts) > 0
    return contexts


def _read_responses(path: Path) -> object:
    responses = Responses.read_jsonl(path)
    assert len(responses) > 0
    return responses


#: A JSON Lines file's ``format`` -> (its current version, its reader).
JSONL_READERS: dict[str, tuple[int, Callable[[Path], object]]] = {
    CONTEXTS_FORMAT: (CONTEXTS_VERSION, _read_contexts),
    responses_module.FORMAT_NAME: (responses_module.FORMAT_VERSION, _read_responses),
}


def _read_jsonl(path: Path) -> object:
    with path.open(encoding="utf-8") as handle:
        header = json.loads(handle.readline())
    kind = header.get("format") if isinstance(header, dict) else None
    if kind not in JSONL_READERS:
        pytest.fail(f"{_name(path)}: no reader for a JSON Lines file of format {kind!r}; add one to JSONL_READERS")
    version, reader = JSONL_READERS[kind]
    assert header["version"] == version, (
        f"{_name(path)} is {kind} version {header['version']}, the current version is {version}: "
        "rewrite it with the library's writer"
    )
    return reader(path)


def _example_script(path: Path) -> object:
    assert path.name in RUN_BY, f"{_name(path)}: no test runs this example; add it to RUN_BY in tests/examples/test_scripts.py"
    return RUN_BY[path.name]


def _marker(path: Path) -> object:
    """PEP 561's ``py.typed``: empty (or ``partial``)."""
    assert path.read_text(encoding="utf-8").strip() in ("", "partial")
    return path


#: The paper's files (simscore/app/data/paper/) -> the function of simscore.app.report.paper that reads and checks it.
PAPER_READERS: dict[str, Callable[[], object]] = {
    "table1_performance.csv": paper.performance,
    "table2_convergence.csv": paper.convergence,
    "table3_reward_models.csv": paper.reward_models,
    "table4_seeds_col.csv": paper.seeds,
    "facts.toml": paper.facts,
}


def _paper_file(path: Path) -> object:
    if path.name not in PAPER_READERS:
        pytest.fail(f"{_name(path)}: not a file simscore.app.report.paper reads; add its reader to PAPER_READERS")
    # the function reads this very file (the package's data as importlib.resources finds it)
    assert Path(str(resources.files("simscore.app").joinpath("data", "paper", path.name))) == path
    return PAPER_READERS[path.name]()


#: The page assets of ``simscore view`` (simscore/app/inspect/assets/) -> the element of the page that holds them.
PAGE_ASSETS = {"view.css": "style", "view.js": "script"}


def _page_asset(path: Path) -> object:
    """A file the page of ``simscore view`` inlines: the page holds exactly its text, in its element."""
    if path.name not in PAGE_ASSETS:
        pytest.fail(f"{_name(path)}: not a file simscore.app.inspect.view_page inlines; add it to PAGE_ASSETS")
    # the package's data as importlib.resources finds it is this very file
    assert Path(str(resources.files("simscore.app.inspect").joinpath("assets", path.name))) == path
    text = path.read_text(encoding="utf-8")
    page = render_page({"a": "a", "b": "b"})
    element = PAGE_ASSETS[path.name]
    assert f"<{element}>\n{text}</{element}>" in page
    return text


def _ontology(path: Path) -> object:
    ontology = load_ontology(path)
    assert ontology == default_domain().ontology
    return ontology


def _venues(path: Path) -> object:
    venues = load_venues(path)
    assert venues == default_domain().venues and len(venues) == 110
    return venues


#: The τ²-bench results of six agents on the same six airline tasks (examples/data/tau2/README.md):
#: file -> (the agent and the simulated user the file records, its τ²-bench commit, the rewards of
#: tasks 13, 26, 30, 31, 45 and 48, whether its messages keep the provider's raw_data).
TAU2_AGENTS = {
    "airline_gpt-4.1_6_tasks.json": ("gpt-4.1", "gpt-4.1", "b02b509", [1, 0, 1, 1, 1, 0], True),
    "airline_gpt-4.1-sft_6_tasks.json": ("ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm", "gpt-4.1", "b02b509",
                                         [1, 1, 1, 1, 0, 1], True),
    "airline_gpt-4o_6_tasks.json": ("azure/gpt-4o-2024-11-20", "azure/gpt-4o-2024-11-20", "b5580ae",
                                    [1, 1, 1, 1, 1, 0], False),
    "airline_claude-sonnet-4-5_6_tasks.json": ("claude-sonnet-4-5", "gpt-4.1", "8d005b0", [1, 1, 1, 1, 1, 1], False),
    "airline_qwen2.5-7b_6_tasks.json": ("ollama_chat/qwen2.5:7b", "gpt-4.1-2025-04-14", "1a7f63a",
                                        [1, 0, 0, 1, 0, 1], False),
    "airline_whissle_6_tasks.json": ("whissle", "gpt-4o", "121283b", [1, 1, 1, 1, 1, 0], False),
}
#: Where each file came from (the tau2-bench commits the README names).
TAU2_COMMITS = ("59d0fb96f4292815e1f6463fb2f139ffef47dc7f", "07c6aaca2241884938a700504bf621f10b886d33",
                "e8163a39d27782ce198010575fcdcacc0ebd7b87", "3a8b3437f40f519ae7204ffe0b8bd5192ffe2fad",
                "bbcb86ff2e6414631352a7b808b886691f419e3e")


def _tau2_results(path: Path) -> object:
    from contexts.transcripts import read_tau2_results

    agent, user, commit, rewards, raw = TAU2_AGENTS[path.name]
    read = read_tau2_results(path, unit="task")
    assert read.responses.policy == agent
    assert list(read.responses.ids) == ["13/0", "26/0", "30/0", "31/0", "45/0", "48/0"]
    assert [c.metadata["reward"] for c in read.contexts] == rewards
    document = json.loads(path.read_text(encoding="utf-8"))
    assert [t["id"] for t in document["tasks"]] == ["13", "26", "30", "31", "45", "48"]
    assert document["info"]["user_info"]["llm"] == user and document["info"]["git_commit"].startswith(commit)
    messages = [m for s in document["simulations"] for m in s["messages"]]
    assert any("raw_data" in m for m in messages) is raw  # the README: left out of five files
    return read


def _tau2_notes(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    if path.name == "LICENSE":
        assert text.startswith("MIT License") and "Sierra Research" in text
    else:  # the README names every data file beside it, and where it came from
        assert sorted(p.name for p in path.parent.glob("*.json")) == sorted(TAU2_AGENTS)
        for name in TAU2_AGENTS:
            assert f"`{name}`" in text, name
        for commit in TAU2_COMMITS:
            assert commit in text, commit
    return text


#: (where, what) -> reader: ``where`` is a folder relative to the repository (the file anywhere below
#: it), ``what`` a file name or a ``*.suffix``. The first match reads the file.
READERS: list[tuple[str, str, Callable[[Path], object]]] = [
    ("examples", "*.jsonl", _read_jsonl),
    ("examples/data/tau2", "*.json", _tau2_results),
    ("examples/data/tau2", "LICENSE", _tau2_notes),
    ("examples/data/tau2", "README.md", _tau2_notes),
    ("examples", "*.toml", load_config),
    ("examples", "*.py", _example_script),
    ("simscore/app/data/paper", "*.csv", _paper_file),
    ("simscore/app/data/paper", "*.toml", _paper_file),
    ("simscore/app/inspect/assets", "*.css", _page_asset),
    ("simscore/app/inspect/assets", "*.js", _page_asset),
    ("contexts/data", "ontology.json", _ontology),
    ("contexts/data", "venues.json", _venues),
    ("", "py.typed", _marker),
]


def _reader(path: Path) -> Callable[[Path], object] | None:
    name = _name(path)
    for where, what, reader in READERS:
        inside = not where or name.startswith(f"{where}/")
        matches = path.suffix == what[1:] if what.startswith("*.") else path.name == what
        if inside and matches:
            return reader
    return None


SHIPPED = _shipped()


def test_every_shipped_file_has_a_reader() -> None:
    unclaimed = [_name(p) for p in SHIPPED if _reader(p) is None]
    assert unclaimed == [], f"no reader for {', '.join(unclaimed)}: add one to READERS in {Path(__file__).name}"
    # the walk sees what is shipped today (a walk that found nothing would pass anything)
    names = {_name(p) for p in SHIPPED}
    assert {"examples/contexts.jsonl", "examples/paper.toml", "contexts/data/venues.json",
            "simscore/app/data/paper/facts.toml", "simscore/app/inspect/assets/view.js", "policies/py.typed"} <= names


@pytest.mark.parametrize("path", [p for p in SHIPPED if _reader(p) is not None], ids=_name)
def test_every_shipped_file_reads_and_passes_its_checks(path: Path) -> None:
    reader = _reader(path)
    assert reader is not None
    assert reader(path) is not None


def test_the_example_responses_answer_the_example_contexts() -> None:
    contexts = ContextSet.read_jsonl(EXAMPLES / "contexts.jsonl")
    for name in ("responses_a.jsonl", "responses_b.jsonl"):
        assert sorted(Responses.read_jsonl(EXAMPLES / name).ids) == sorted(contexts.ids), name


def test_an_unknown_file_is_claimed_by_no_reader() -> None:
    for name in ("examples/notes.csv", "examples/data.json", "simscore/app/data/paper/table5.txt",
                 "simscore/app/inspect/assets/view.html", "contexts/data/extra.json", "policies/weights.npz"):
        assert _reader(ROOT / name) is None, name
