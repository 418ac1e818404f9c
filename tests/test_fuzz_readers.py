"""Fuzzing every reader of user files and the configuration loader (hypothesis).

Each reader starts from a valid file of its format, which hypothesis then damages: truncated,
bytes flipped, inserted or deleted, lines swapped or duplicated, JSON values replaced. Whatever
the bytes, a reader returns a result or raises one of the library's errors
(:class:`~simscore.errors.SimscoreError`), never another exception, and it never changes its
input file.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contexts.collect import read_convlab
from contexts.context import ContextSet
from contexts.dialogue_log import read_dialogue_log
from contexts.domain import default_domain, load_ontology
from contexts.flow_dialogues import read_flow_dialogues
from contexts.flows import FlowGraph
from contexts.generate import GridSpec, generate_grid
from contexts.pydial import read_pydial_beliefs
from policies.convlab import read_convlab_states, write_convlab_states
from policies.gpsarsa.training import EVALUATION_COLUMNS, read_evaluation
from policies.handcrafted import HandcraftedPolicy
from policies.sim.simulation import run_dialogues
from simscore.app.experiment import load_config
from simscore.app.view import read_comparison
from simscore.compare import compare
from simscore.errors import SimscoreError
from simscore.responses import Responses
from simscore.responses_csv import read_responses, read_responses_csv, write_responses_csv
from simscore.tables_io import load_tables, save_tables
from tests.conftest import CONVLAB
from tests.simscore.synthetic import META, synthetic_tables

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
ONTOLOGY = default_domain().ontology
#: Damaged inputs per reader (about 30 s for the suite); SIMSCORE_FUZZ_EXAMPLES=2000 for a long search.
EXAMPLES_RUN = int(os.environ.get("SIMSCORE_FUZZ_EXAMPLES", "60"))
DERANDOMIZE = "SIMSCORE_FUZZ_EXAMPLES" not in os.environ  # CI repeats the same inputs


def _seed_files(root: Path) -> dict[str, tuple[str, Callable[[Path], Any]]]:
    """Valid files of every format (name -> (file name, reader)), written into ``root``."""
    a = Responses.read_jsonl(EXAMPLES / "responses_a.jsonl")
    b = Responses.read_jsonl(EXAMPLES / "responses_b.jsonl")
    files: dict[str, bytes] = {
        "responses.jsonl": (EXAMPLES / "responses_a.jsonl").read_bytes(),
        "paper.toml": (EXAMPLES / "paper.toml").read_bytes(),
        "convlab.json": json.dumps(CONVLAB).encode(),
        "ontology.json": json.dumps(ONTOLOGY.to_json()).encode(),
    }
    seed = root / "seed"
    seed.mkdir()
    generate_grid(GridSpec(levels=(0.0, 1.0))).to_jsonl(seed / "contexts.jsonl")
    compare(a, b, measures=["tmr", "dmr"]).save(seed / "comparison.json")
    write_responses_csv(seed / "responses.csv", a)
    save_tables(seed / "tables", synthetic_tables(), META)
    pydial = [
        {"format": "simscore-pydial-beliefs", "version": 1, "source": {"name": "pd"}},
        {"dialogue_id": "d", "turn_index": 0, "belief": {"beliefs": {"food": {"thai": 1.0}}}, "user_text": "Thai."},
    ]
    files["pydial.jsonl"] = "".join(json.dumps(line) + "\n" for line in pydial).encode()
    values = {"checkpoint": "ckpt-000010", "dialogues": 10, "eval_dialogues": 20, "dictionary_size": 7}
    row = [str(values.get(column, 0.5)) for column in EVALUATION_COLUMNS]
    files["evaluation.csv"] = (",".join(EVALUATION_COLUMNS) + "\n" + ",".join(row) + "\n").encode()
    run_dialogues(HandcraftedPolicy(), 2, seed=0, log_path=seed / "dialogues.jsonl")
    write_convlab_states(list(generate_grid(GridSpec(levels=(0.0, 1.0))))[:3], seed / "states.jsonl")
    FlowGraph.from_dialogues(read_flow_dialogues(seed / "dialogues.jsonl")).save(seed / "flows.json")
    for name, data in files.items():
        (seed / name).write_bytes(data)
    for name in ("contexts.jsonl", "comparison.json", "responses.csv", "dialogues.jsonl", "states.jsonl", "flows.json"):
        files[name] = (seed / name).read_bytes()
    files["tables.json"] = (seed / "tables" / "tables.json").read_bytes()
    files["seeds.json"] = (seed / "tables" / "seeds.json").read_bytes()

    def in_tables(name: str) -> Callable[[Path], Any]:
        def read(path: Path) -> Any:  # the damaged file is one table of an otherwise valid set
            folder = path.parent / "tables"
            folder.mkdir(exist_ok=True)
            for other in (seed / "tables").iterdir():
                (folder / other.name).write_bytes(other.read_bytes())
            (folder / name).write_bytes(path.read_bytes())
            return load_tables(folder)

        return read

    def evaluation(path: Path) -> Any:
        run = path.parent / "run"
        run.mkdir(exist_ok=True)
        (run / "evaluation.csv").write_bytes(path.read_bytes())
        return read_evaluation(run)

    readers: dict[str, tuple[str, Callable[[Path], Any]]] = {
        "responses": ("responses.jsonl", Responses.read_jsonl),
        "responses-any": ("responses.jsonl", read_responses),
        "responses-csv": ("responses.csv", read_responses_csv),
        "contexts": ("contexts.jsonl", lambda p: ContextSet.read_jsonl(p, ontology=ONTOLOGY)),
        "config": ("paper.toml", load_config),
        "convlab": ("convlab.json", lambda p: read_convlab(p, ontology=ONTOLOGY)),
        "pydial": ("pydial.jsonl", lambda p: read_pydial_beliefs(p, ontology=ONTOLOGY)),
        "dialogue-log": ("dialogues.jsonl", lambda p: read_dialogue_log(p, ontology=ONTOLOGY)),
        "convlab-states": ("states.jsonl", read_convlab_states),
        "comparison": ("comparison.json", read_comparison),
        "tables-index": ("tables.json", in_tables("tables.json")),
        "table": ("seeds.json", in_tables("seeds.json")),
        "evaluation": ("evaluation.csv", evaluation),
        "ontology": ("ontology.json", load_ontology),
        "flow-graph": ("flows.json", FlowGraph.load),
        "flow-convlab": ("convlab.json", lambda p: read_flow_dialogues(p, kind="convlab")),
        "flow-log": ("dialogues.jsonl", read_flow_dialogues),
    }
    return {key: (name, reader) for key, (name, reader) in readers.items() if name in files} | {
        "_bytes": ("", lambda p: files)  # type: ignore[dict-item]
    }


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _seed_files(tmp_path_factory.mktemp("fuzz"))


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
        st.text(max_size=8), st.sampled_from(["", "inform(food=thai)", "nan", "1e999", "-1"]),
    )
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to three kinds of damage."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "lines", "json", "replace"]))
        n = len(data)
        if kind == "truncate" and n:
            data = data[: draw(st.integers(0, n - 1))]
        elif kind == "flip" and n:
            i = draw(st.integers(0, n - 1))
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
        elif kind == "insert":
            i = draw(st.integers(0, n))
            data = data[:i] + draw(st.binary(min_size=1, max_size=8)) + data[i:]
        elif kind == "delete" and n:
            i = draw(st.integers(0, n - 1))
            data = data[:i] + data[i + draw(st.integers(1, 16)) :]
        elif kind == "lines":
            lines = data.split(b"\n")
            if len(lines) > 1:
                i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i] if draw(st.booleans()) else lines[i]
                data = b"\n".join(lines)
        elif kind == "json":
            data = _replace_json_value(data, draw)
        elif kind == "replace":
            data = draw(st.binary(max_size=64))
    return data


def _replace_json_value(data: bytes, draw: st.DrawFn) -> bytes:
    lines = data.split(b"\n")
    i = draw(st.integers(0, len(lines) - 1))
    try:
        obj = json.loads(lines[i])
    except ValueError:
        return data
    if isinstance(obj, dict) and obj:
        key = draw(st.sampled_from(sorted(obj)))
        obj[key] = draw(_json_values())
    elif isinstance(obj, list) and obj:
        obj[draw(st.integers(0, len(obj) - 1))] = draw(_json_values())
    else:
        obj = draw(_json_values())
    lines[i] = json.dumps(obj, allow_nan=True).encode()
    return b"\n".join(lines)


READERS = [
    "responses", "responses-any", "responses-csv", "contexts", "config", "convlab", "pydial", "dialogue-log",
    "convlab-states", "comparison", "tables-index", "table", "evaluation", "ontology", "flow-graph", "flow-convlab",
    "flow-log",
]


@pytest.mark.parametrize("reader_name", READERS)
@settings(max_examples=EXAMPLES_RUN, deadline=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_reader_gives_a_result_or_a_library_error(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    if reader_name not in seeds:
        pytest.skip(f"no seed file for {reader_name}")
    name, reader = seeds[reader_name]
    original = seeds["_bytes"][1](None)[name]
    bad = data.draw(damaged(original), label="bytes")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader(_write(tmp_path, name, original))  # the undamaged seed is valid
        path = _write(tmp_path, name, bad)
        try:
            result = reader(path)
            if hasattr(result, "__iter__") and not isinstance(result, (str, bytes, dict)):
                list(result)  # lazy readers fail while iterating
        except SimscoreError:
            pass
    assert path.read_bytes() == bad, "the reader changed its input"


def _write(root: Path, name: str, data: bytes) -> Path:
    path = root / f"input-{name}"
    path.write_bytes(data)
    return path
