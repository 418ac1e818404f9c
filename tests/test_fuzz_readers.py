"""Fuzzing every reader of user files and the configuration loader (hypothesis).

Each reader starts from a valid file of its format, which hypothesis then damages: truncated,
bytes flipped, inserted or deleted, lines swapped or duplicated, JSON values replaced, values
nested deeply, lines made longer than :data:`simscore.io.reading.MAX_LINE_LENGTH`. Whatever the bytes,
a reader returns a result or raises one of the library's errors
(:class:`~simscore.errors.SimscoreError`: ``FileFormatError`` and the documented ones such as
``CheckpointError``, ``ConfigError``), never another exception, and it never changes its input
file. The embedding cache's shards are fuzzed too (random bytes, damaged real shards, under
their old name or under the digest of their new bytes): the cache gives the right values or a
miss, never an exception. Beyond the random inputs, every reader is fed an endless stream (``/dev/zero``, and an
endless pipe), a sparse file larger than the limits and 100,000 nested brackets, and must stop
with a ``FileFormatError`` within the named limits (a regular file's size is checked before it
is read); every reader reads its file through a FIFO (read once, from the start) as it reads
the file, damaged inputs included; and every reader given a file of another of simscore's
kinds names that kind and what belongs there.

Size: :data:`EXAMPLES_RUN` damaged inputs per reader by default (60, the same ones on every run:
about half a minute for all readers), :data:`EXAMPLES_DEEP` per reader in the deep run
marked ``exhaustive`` (a new random search each time; deselected by default: ``pytest -m exhaustive``); ``SIMSCORE_FUZZ_EXAMPLES=N`` sets the default run's
count and randomises it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simscore.io.reading
from contexts.collect import read_convlab
from contexts.context import ContextSet
from contexts.dialogue_log import read_dialogue_log
from contexts.domain import VENUE_FIELDS as VENUE_COLUMNS
from contexts.domain import default_domain, load_domain, load_ontology
from contexts.flows import FlowGraph
from contexts.flows.dialogues import read_flow_dialogues
from contexts.generate import GridSpec, generate_grid
from contexts.pydial import read_pydial_beliefs
from contexts.transcripts import read_chat_transcripts, read_tau2_results
from policies.convlab import read_convlab_states, write_convlab_states
from policies.gpsarsa.policy import GPSarsaPolicy
from policies.gpsarsa.training import EVALUATION_COLUMNS, read_evaluation
from policies.handcrafted import HandcraftedPolicy
from policies.sim.simulation import run_dialogues
from simscore.analysis.tables_io import load_tables, save_tables
from simscore.app.experiment.config import load_config
from simscore.app.inspect.view import read_comparison
from simscore.comparison import compare
from simscore.errors import SimscoreError
from simscore.io.formats import FILE_FORMATS, detect_format
from simscore.measures.disk_cache import EmbeddingCache
from simscore.outcomes.gate import read_outcome_log
from simscore.responses import Responses
from simscore.responses_csv import read_responses, read_responses_csv, write_responses_csv
from simscore.samples import SampledResponses
from tests.conftest import CONVLAB
from tests.contexts.transcript_samples import CONVERSATIONS
from tests.simscore.synthetic import META, synthetic_tables

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
ONTOLOGY = default_domain().ontology
#: Damaged inputs per reader in the default run (about 30 s for the suite); SIMSCORE_FUZZ_EXAMPLES=2000 for a long search.
EXAMPLES_RUN = int(os.environ.get("SIMSCORE_FUZZ_EXAMPLES", "60"))
DERANDOMIZE = "SIMSCORE_FUZZ_EXAMPLES" not in os.environ  # CI repeats the same inputs
#: Damaged inputs per reader in the slow-marked deep run (new ones on each run).
EXAMPLES_DEEP = 600
_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("simscore-fuzz", max_examples=EXAMPLES_RUN, deadline=None, derandomize=DERANDOMIZE,
                          suppress_health_check=_HEALTH)
settings.register_profile("simscore-fuzz-deep", max_examples=EXAMPLES_DEEP, deadline=None, derandomize=False,
                          suppress_health_check=_HEALTH)
#: Small limits while fuzzing, so a damaged line can cross them (the readers read them at each call).
SMALL_LINE, SMALL_FILE = 4096, 2**20


def _seed_files(root: Path) -> dict[str, tuple[str, Callable[[Path], Any]]]:
    """Valid files of every format (name -> (file name, reader)), written into ``root``."""
    a = Responses.read_jsonl(EXAMPLES / "responses_a.jsonl")
    b = Responses.read_jsonl(EXAMPLES / "responses_b.jsonl")
    files: dict[str, bytes] = {
        "responses.jsonl": (EXAMPLES / "responses_a.jsonl").read_bytes(),
        "paper.toml": (EXAMPLES / "paper.toml").read_bytes(),
        "convlab.json": json.dumps(CONVLAB).encode(),
        "ontology.json": json.dumps(ONTOLOGY.to_json()).encode(),
        "transcripts.jsonl": "".join(json.dumps(c) + "\n" for c in CONVERSATIONS).encode(),
        "tau2.json": (ROOT / "tests" / "data" / "tau2" / "airline_whissle_4_simulations.json").read_bytes(),
        "tau2-list.json": json.dumps(json.loads((ROOT / "tests" / "data" / "tau2" /
                                                 "airline_whissle_4_simulations.json").read_text())["simulations"],
                                     indent=1).encode("utf-8"),
        "outcomes.csv": b"task_id,trial,success,reward\n11,0,false,0.0\n13,0,true,1.0\n13,1,1,1\n\"t,4\",0,0,-2.5\n",
        "outcomes.jsonl": b'{"task_id": "11", "trial": 0, "success": false, "reward": 0.0}\n'
                          b'{"task_id": 13, "trial": 0, "success": true, "reward": 1}\n',
    }
    seed = root / "seed"
    seed.mkdir()
    generate_grid(GridSpec(levels=(0.0, 1.0))).to_jsonl(seed / "contexts.jsonl")
    compare(a, b, measures=["tmr", "dmr"]).save(seed / "comparison.json")
    write_responses_csv(seed / "responses.csv", a)
    b_in_a = b.subset([i for i in a.ids if i in b])
    SampledResponses.from_samples([a.subset(b_in_a.ids), b_in_a], policy="p").to_jsonl(seed / "sampled.jsonl")
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
    checkpoint = GPSarsaPolicy(reward="ts", seed=1, training=True)
    run_dialogues(checkpoint, 3, seed=1)
    checkpoint.save(seed / "policy")
    (seed / "venues.csv").write_bytes(_venues_csv())
    for name, data in files.items():
        (seed / name).write_bytes(data)
    for name in ("contexts.jsonl", "comparison.json", "responses.csv", "sampled.jsonl", "dialogues.jsonl", "states.jsonl", "flows.json",
                 "policy.json", "policy.npz", "venues.csv"):
        files[name] = (seed / name).read_bytes()
    files["tables.json"] = (seed / "tables" / "tables.json").read_bytes()
    files["seeds.json"] = (seed / "tables" / "seeds.json").read_bytes()

    def in_tables(name: str) -> Callable[[Path], Any]:
        def read(path: Path) -> Any:  # the damaged file is one table of an otherwise valid set
            folder = path.parent / "tables"
            folder.mkdir(exist_ok=True)
            for other in (seed / "tables").iterdir():
                (folder / other.name).unlink(missing_ok=True)  # a link to an earlier example's FIFO
                (folder / other.name).write_bytes(other.read_bytes())
            _place(path, folder / name)
            return load_tables(folder)

        return read

    def evaluation(path: Path) -> Any:
        run = path.parent / "run"
        run.mkdir(exist_ok=True)
        _place(path, run / "evaluation.csv")
        return read_evaluation(run)

    def checkpoint_header(path: Path) -> Any:  # the damaged file is the header of a valid checkpoint
        stem = path.parent / "ckpt"
        _place(path, stem.with_suffix(".json"))
        (path.parent / "ckpt.npz").write_bytes((seed / "policy.npz").read_bytes())
        return GPSarsaPolicy.load(stem)

    def checkpoint_arrays(path: Path) -> Any:  # damaged arrays, with the header's checksum and size made to match
        stem = path.parent / "ckpt"
        _place(path, stem.with_suffix(".npz"))
        header = json.loads((seed / "policy.json").read_text(encoding="utf-8"))
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            header["arrays"].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
        header["arrays"]["file"] = "ckpt.npz"
        stem.with_suffix(".json").write_text(json.dumps(header), encoding="utf-8")
        return GPSarsaPolicy.load(stem)

    def venues(path: Path) -> Any:
        return load_domain(seed / "ontology.json", path)

    readers: dict[str, tuple[str, Callable[[Path], Any]]] = {
        "responses": ("responses.jsonl", Responses.read_jsonl),
        "responses-any": ("responses.jsonl", read_responses),
        "responses-csv": ("responses.csv", read_responses_csv),
        "responses-sampled": ("sampled.jsonl", SampledResponses.read_jsonl),
        "contexts": ("contexts.jsonl", lambda p: ContextSet.read_jsonl(p, ontology=ONTOLOGY)),
        "config": ("paper.toml", load_config),
        "convlab": ("convlab.json", lambda p: read_convlab(p, ontology=ONTOLOGY)),
        "pydial": ("pydial.jsonl", lambda p: read_pydial_beliefs(p, ontology=ONTOLOGY)),
        "dialogue-log": ("dialogues.jsonl", lambda p: read_dialogue_log(p, ontology=ONTOLOGY)),
        "convlab-states": ("states.jsonl", read_convlab_states),
        "comparison": ("comparison.json", read_comparison),
        "pydial-flows": ("pydial.jsonl", lambda p: read_flow_dialogues(p, kind="pydial")),
        "tables-index": ("tables.json", in_tables("tables.json")),
        "table": ("seeds.json", in_tables("seeds.json")),
        "evaluation": ("evaluation.csv", evaluation),
        "ontology": ("ontology.json", load_ontology),
        "flow-graph": ("flows.json", FlowGraph.load),
        "flow-convlab": ("convlab.json", lambda p: read_flow_dialogues(p, kind="convlab")),
        "flow-log": ("dialogues.jsonl", read_flow_dialogues),
        "checkpoint-header": ("policy.json", checkpoint_header),
        "checkpoint-arrays": ("policy.npz", checkpoint_arrays),
        "venues-csv": ("venues.csv", venues),
        "transcripts-chat": ("transcripts.jsonl", read_chat_transcripts),
        "transcripts-tau2": ("tau2.json", read_tau2_results),
        "transcripts-tau2-task": ("tau2.json", lambda p: read_tau2_results(p, unit="task")),
        "outcome-log-csv": ("outcomes.csv", read_outcome_log),
        "outcome-log-jsonl": ("outcomes.jsonl", read_outcome_log),
        "outcome-log-tau2": ("tau2.json", read_outcome_log),  # gate --logs on τ²-bench results
        "transcripts-tau2-list": ("tau2-list.json", read_tau2_results),  # a bare list of simulations
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


DAMAGE = ("truncate", "flip", "insert", "delete", "lines", "json", "replace", "nest", "long")


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to three kinds of damage."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(DAMAGE))
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
        elif kind == "nest":  # a value wrapped in brackets, around the nesting limit or far beyond it
            depth = draw(st.sampled_from([simscore.io.reading.MAX_NESTING - 1, simscore.io.reading.MAX_NESTING + 1, 3000]))
            i = draw(st.integers(0, n))
            opening = draw(st.sampled_from([b"[", b'{"k":']))
            data = data[:i] + opening * depth + b"1" + (b"]" if opening == b"[" else b"}") * depth + data[i:]
        elif kind == "long":  # a line longer than the (fuzzing) line limit, with or without an end
            i = draw(st.integers(0, n))
            filler = draw(st.sampled_from([b"x", b" ", b"\x00", b"\xe2\x80\xae"]))
            data = data[:i] + filler * (SMALL_LINE + draw(st.integers(1, 8))) + data[i:]
    return data


def _replace_json_value(data: bytes, draw: st.DrawFn) -> bytes:
    lines = data.split(b"\n")
    i = draw(st.integers(0, len(lines) - 1))
    try:
        obj = json.loads(lines[i])
    except (ValueError, RecursionError):  # not JSON, or nested deeper than json can read (an earlier "nest")
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
    "responses", "responses-any", "responses-csv", "responses-sampled", "contexts", "config", "convlab", "pydial", "dialogue-log",
    "convlab-states", "comparison", "tables-index", "table", "evaluation", "ontology", "flow-graph", "flow-convlab",
    "flow-log", "pydial-flows", "checkpoint-header", "checkpoint-arrays", "venues-csv", "transcripts-chat",
    "transcripts-tau2", "transcripts-tau2-task", "outcome-log-csv", "outcome-log-jsonl", "outcome-log-tau2",
    "transcripts-tau2-list",
]
#: Readers of one file, which a pipe can give: a checkpoint is a pair of files found by their
#: common stem and read by name (its header twice: the learner's, then the policy's metadata).
STREAM_READERS = [name for name in READERS if not name.startswith("checkpoint-")]


def _check_reader(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    if reader_name not in seeds:
        pytest.skip(f"no seed file for {reader_name}")
    name, reader = seeds[reader_name]
    original = seeds["_bytes"][1](None)[name]
    bad = data.draw(damaged(original), label="bytes")
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        reader(_write(tmp_path, name, original))  # the undamaged seed is valid
        patch.setattr(simscore.io.reading, "MAX_LINE_LENGTH", SMALL_LINE)
        patch.setattr(simscore.io.reading, "MAX_FILE_BYTES", SMALL_FILE)
        path = _write(tmp_path, name, bad)
        _read(reader, path)
    assert path.read_bytes() == bad, "the reader changed its input"


def _read(reader: Callable[[Path], Any], path: Path) -> None:
    """Run ``reader`` to the end: a result or a library error, nothing else."""
    try:
        result = reader(path)
        if hasattr(result, "__iter__") and not isinstance(result, (str, bytes, dict)):
            list(result)  # lazy readers fail while iterating
    except SimscoreError:
        pass


@pytest.mark.parametrize("reader_name", READERS)
@settings(settings.get_profile("simscore-fuzz"))
@given(data=st.data())
def test_reader_gives_a_result_or_a_library_error(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    _check_reader(seeds, tmp_path, reader_name, data)


@pytest.mark.exhaustive
@pytest.mark.parametrize("reader_name", READERS)
@settings(settings.get_profile("simscore-fuzz-deep"))
@given(data=st.data())
def test_reader_gives_a_result_or_a_library_error_deep(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    _check_reader(seeds, tmp_path, reader_name, data)


@pytest.mark.parametrize("source", ["/dev/zero", "pipe"])
@pytest.mark.parametrize("reader_name", READERS)
def test_an_endless_stream_stops_at_a_named_limit(
    seeds: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader_name: str, source: str
) -> None:
    """``/dev/zero`` (a device), or a FIFO that a thread fills for ever (a pipe)."""
    monkeypatch.setattr(simscore.io.reading, "MAX_LINE_LENGTH", 2**16)
    monkeypatch.setattr(simscore.io.reading, "MAX_FILE_BYTES", 2**20)
    name, reader = seeds[reader_name]
    if source == "pipe" and reader_name not in STREAM_READERS:
        pytest.skip("a checkpoint is two files read by name, not a stream")
    feeder = _fifo_input(tmp_path, name, b"x" * 2**16, endless=True) if source == "pipe" else None
    path = tmp_path / f"input-{name}" if feeder is None else feeder.path
    if feeder is None:
        path.symlink_to("/dev/zero")
    try:
        with pytest.raises(SimscoreError, match=r"(line longer than 65,536 (bytes|characters) \(simscore\.io\.reading\.MAX_LINE_LENGTH\)"
                                                r"|larger than [\d,]+ bytes|0 bytes, but)") as info:
            _consume(reader(path))
    finally:
        if feeder is not None:
            feeder.finish()
    assert str(tmp_path) in str(info.value)  # the message names the file


@pytest.mark.parametrize("reader_name", READERS)
def test_deep_nesting_is_a_named_error(seeds: dict[str, Any], tmp_path: Path, reader_name: str) -> None:
    name, reader = seeds[reader_name]
    original = seeds["_bytes"][1](None)[name]
    deep = b"[" * 100_000 + b"]" * 100_000
    if name.endswith(".toml"):
        deep = b"x = " + deep
    elif name.endswith(".jsonl"):  # a record (after the valid header line) that nests too deeply
        deep = original.split(b"\n", 1)[0] + b"\n" + b'{"x": ' + deep + b"}\n"
    path = _write(tmp_path, name, deep)
    try:
        _consume(reader(path))
    except SimscoreError as exc:
        if name.endswith((".json", ".jsonl", ".toml")):
            assert "nested deeper than" in str(exc) or "expected" in str(exc) or "format" in str(exc), exc
    # no RecursionError, no MemoryError: anything else fails the test


def _consume(result: Any) -> None:
    if hasattr(result, "__iter__") and not isinstance(result, (str, bytes, dict)):
        list(result)


def _venues_csv() -> bytes:
    rows = [",".join(VENUE_COLUMNS)]
    for venue in list(default_domain().venues)[:3]:
        rows.append(",".join(_csv_cell(getattr(venue, column)) for column in VENUE_COLUMNS))
    return ("\n".join(rows) + "\n").encode()


def _csv_cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def _place(source: Path, target: Path) -> None:
    """Put ``source`` at ``target``: a link stays a link, a FIFO is linked (an endless stream is never read whole)."""
    target.unlink(missing_ok=True)  # never written through: it may link to an earlier example's FIFO
    if source.is_symlink() or stat.S_ISFIFO(os.stat(source).st_mode):
        target.symlink_to(os.readlink(source) if source.is_symlink() else source.resolve())
    else:
        target.write_bytes(source.read_bytes())


def _write(root: Path, name: str, data: bytes) -> Path:
    path = root / f"input-{name}"
    path.write_bytes(data)
    return path


# ----------------------------------------------------------------------------- pipes, sizes, kinds


class _Feeder:
    """A FIFO at ``path`` and a thread writing ``data`` (or, with ``endless``, ``data`` for ever) into it."""

    def __init__(self, path: Path, data: bytes, *, endless: bool = False) -> None:
        os.mkfifo(path)
        self.path = path
        self.thread = threading.Thread(target=self._write, args=(data, endless), daemon=True)
        self.thread.start()

    def _write(self, data: bytes, endless: bool) -> None:
        try:
            with open(self.path, "wb") as handle:
                handle.write(data)
                while endless:
                    handle.write(data)
        except BrokenPipeError:  # the reader stopped
            pass

    def read_with(self, reader: Callable[[Path], Any]) -> tuple[str, Any]:
        """:func:`_outcome` of ``reader`` on the FIFO; a reader that opens it again after the writer
        left is given an end of file after 30 s (an error, not a test that waits for ever)."""

        def release() -> None:
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

        watchdog = threading.Timer(30, release)
        watchdog.start()
        try:
            return _outcome(reader, self.path)
        finally:
            watchdog.cancel()

    def finish(self) -> None:
        """Let the writer end even if no reader opened the FIFO (open and drop a read end)."""
        try:
            os.close(os.open(self.path, os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the FIFO's writer still waits"


def _fifo_input(tmp_path: Path, name: str, data: bytes, *, endless: bool = False) -> _Feeder:
    folder = tmp_path / "fifo"
    folder.mkdir(exist_ok=True)
    return _Feeder(folder / f"input-{name}", data, endless=endless)


def _outcome(reader: Callable[[Path], Any], path: Path) -> tuple[str, Any]:
    """What reading gives: ("ok", the result's type and size) or ("error", the message without the folder)."""
    try:
        result = reader(path)
        items = list(result) if hasattr(result, "__iter__") and not isinstance(result, (str, bytes, dict)) else None
        return "ok", (type(result).__name__, None if items is None else len(items))
    except SimscoreError as exc:
        return "error", str(exc).replace(str(path.parent), "<dir>")




@pytest.mark.parametrize("reader_name", STREAM_READERS)
def test_every_reader_reads_a_fifo_as_it_reads_the_file(seeds: dict[str, Any], tmp_path: Path, reader_name: str) -> None:
    name, reader = seeds[reader_name]
    data = seeds["_bytes"][1](None)[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _outcome(reader, _write(tmp_path, name, data))
        feeder = _fifo_input(tmp_path, name, data)
        try:
            got = feeder.read_with(reader)
        finally:
            feeder.finish()
    assert expected[0] == "ok" and got == expected


def _check_reader_through_a_fifo(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    name, reader = seeds[reader_name]
    bad = data.draw(damaged(seeds["_bytes"][1](None)[name]), label="bytes")
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        patch.setattr(simscore.io.reading, "MAX_LINE_LENGTH", SMALL_LINE)
        patch.setattr(simscore.io.reading, "MAX_FILE_BYTES", SMALL_FILE)
        expected = _outcome(reader, _write(tmp_path, name, bad))
        feeder = _fifo_input(tmp_path, f"{len(list(tmp_path.glob('fifo/*')))}-{name}", bad)
        try:
            got = feeder.read_with(reader)
        finally:
            feeder.finish()
    # the same result, or the same error but for the file's name (which a reader may show)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "ok":
        assert got == expected


@pytest.mark.parametrize("reader_name", STREAM_READERS)
@settings(settings.get_profile("simscore-fuzz"), max_examples=max(5, EXAMPLES_RUN // 6))
@given(data=st.data())
def test_a_damaged_file_through_a_fifo_reads_as_the_file(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    _check_reader_through_a_fifo(seeds, tmp_path, reader_name, data)


@pytest.mark.exhaustive
@pytest.mark.parametrize("reader_name", STREAM_READERS)
@settings(settings.get_profile("simscore-fuzz-deep"), max_examples=EXAMPLES_DEEP // 3)
@given(data=st.data())
def test_a_damaged_file_through_a_fifo_reads_as_the_file_deep(seeds: dict[str, Any], tmp_path: Path, reader_name: str, data: st.DataObject) -> None:
    _check_reader_through_a_fifo(seeds, tmp_path, reader_name, data)


#: A checkpoint's arrays are read up to the size its header records (checked against the file's).
@pytest.mark.parametrize("reader_name", [name for name in READERS if name != "checkpoint-arrays"])
def test_a_sparse_file_over_the_limits_costs_no_more_than_a_line(
    seeds: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader_name: str
) -> None:
    limit = 16 * 2**20
    monkeypatch.setattr(simscore.io.reading, "MAX_LINE_LENGTH", 2**16)
    monkeypatch.setattr(simscore.io.reading, "MAX_FILE_BYTES", limit)
    name, reader = seeds[reader_name]
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as handle:
        handle.truncate(limit + 1)  # NUL bytes, on no disk block
    path = tmp_path / f"input-{name}"
    path.symlink_to(sparse)  # a link: the readers' helpers above place it unread
    tracemalloc.start()
    try:
        with pytest.raises(SimscoreError, match=r"(line longer than 65,536|larger than [\d,]+ bytes.*: 16,777,217 bytes"
                                                r"|16,777,217 bytes; flow-graph files are read up to 16,777,216)"):
            _consume(reader(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak:,} bytes to refuse a file of {limit + 1:,}"  # a whole-file reader read it all


def _kind(data: bytes) -> str | None:
    return detect_format(data[:4096].decode("utf-8", "replace"))


@pytest.mark.parametrize("reader_name", [name for name in READERS if name != "checkpoint-arrays"])  # binary arrays
def test_a_file_of_another_kind_is_named(seeds: dict[str, Any], tmp_path: Path, reader_name: str) -> None:
    """A reader given another of simscore's files says what it is, not ``invalid JSON`` at line 1."""
    name, reader = seeds[reader_name]
    files = seeds["_bytes"][1](None)
    own = _kind(files[name])
    tried = 0
    for other, data in files.items():
        found = _kind(data)
        if found is None or found == own or other == name:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome, message = _outcome(reader, _write(tmp_path, name, data))
        assert outcome == "error", (other, message)
        assert f"{FILE_FORMATS[found]} (" in message and " belongs" in message, (other, message)
        tried += 1
    assert tried >= 9


# ----------------------------------------------------------------------------- the embedding cache's shards

_CACHE_SIGNATURE = "emb_cos|model:fuzz|dtype:float32"
_CACHE_ENTRIES = {text: (np.arange(3 * k + 3, dtype=np.float32).reshape(k + 1, 3), np.full(k + 1, 0.5 + k))
                  for k, text in enumerate(["hello", "what food would you like?", "cheap"])}
_CACHE_DTYPES = (np.float32, np.float64)


@pytest.fixture(scope="module")
def cache_shard(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a real shard holding :data:`_CACHE_ENTRIES`."""
    root = tmp_path_factory.mktemp("cache-seed")
    EmbeddingCache(root).put(_CACHE_SIGNATURE, _CACHE_ENTRIES)
    (shard,) = EmbeddingCache(root).signature_folder(_CACHE_SIGNATURE).glob("*.npz")
    return shard.read_bytes()


def _check_cache_shard(cache_shard: bytes, tmp_path: Path, data: st.DataObject) -> None:
    """A damaged shard, under its old name or (passing the digest) under its own: the right values or a miss."""
    bad = data.draw(damaged(cache_shard) | st.binary(max_size=512), label="bytes")
    root = tmp_path / f"cache-{len(list(tmp_path.iterdir()))}"
    cache = EmbeddingCache(root)
    cache.put(_CACHE_SIGNATURE, {"unrelated": (np.zeros((1, 3), np.float32), np.zeros(1))})  # the folder and its signature.json
    name = (hashlib.sha256(bad).hexdigest()[:32] if data.draw(st.booleans(), label="own digest")
            else hashlib.sha256(cache_shard).hexdigest()[:32])
    (cache.signature_folder(_CACHE_SIGNATURE) / f"{name}.npz").write_bytes(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = EmbeddingCache(root).get(_CACHE_SIGNATURE, list(_CACHE_ENTRIES), _CACHE_DTYPES)
    for text, entry in found.items():  # a shard is used whole or not at all, and only what it was made of
        for got, expected in zip(entry, _CACHE_ENTRIES[text], strict=True):
            assert got.dtype == expected.dtype and np.array_equal(got, expected), text
    assert set(found) in (set(), set(_CACHE_ENTRIES))


@settings(settings.get_profile("simscore-fuzz"))
@given(data=st.data())
def test_a_damaged_cache_shard_gives_the_right_values_or_a_miss(cache_shard: bytes, tmp_path: Path, data: st.DataObject) -> None:
    _check_cache_shard(cache_shard, tmp_path, data)


@pytest.mark.exhaustive
@settings(settings.get_profile("simscore-fuzz-deep"))
@given(data=st.data())
def test_a_damaged_cache_shard_gives_the_right_values_or_a_miss_deep(cache_shard: bytes, tmp_path: Path, data: st.DataObject) -> None:
    _check_cache_shard(cache_shard, tmp_path, data)
