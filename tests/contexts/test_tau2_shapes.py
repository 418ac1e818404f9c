"""Every shape of τ²-bench results read (issue 41 item 3, issue 42): its one-document layout and
its folder layout (results.json and simulations/), a bare list of simulations, simulations
without task_id, arguments JSON-encoded twice, tool names with dots, the hint that names the
other reader, and the memory bound that refuses many conversations for what they hold, not
for their count. The fixture is written here by hand from τ²-bench's documented data model
(``Results``, ``SimulationRun``, ``ToolCall``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import contexts.transcripts
from contexts.transcripts import read_chat_transcripts, read_tau2_results, read_transcripts
from simscore.acts import Act
from simscore.app.cli import main
from simscore.errors import FileFormatError
from simscore.io import reading
from simscore.outcomes.gate import read_outcome_log

INFO: dict[str, Any] = {
    "git_commit": "0123abc", "num_trials": 1, "max_steps": 30, "max_errors": 10, "seed": 7,
    "user_info": {"implementation": "user_simulator", "llm": "user-llm"},
    "agent_info": {"implementation": "llm_agent", "llm": "agent-llm"},
    "environment_info": {"domain_name": "shop", "policy": "You help with orders.", "tool_defs": None},
}


def _simulation(task: str, reward: float, *, name: str = "get_order", arguments: Any = None) -> dict[str, Any]:
    """One simulation: a greeting, a question, a call and its result, an answer (3 assistant turns)."""
    call = {"id": "c1", "name": name, "arguments": {"order_id": task} if arguments is None else arguments,
            "requestor": "assistant"}
    return {
        "id": f"sim-{task}", "task_id": task, "trial": 0, "seed": 7, "termination_reason": "user_stop",
        "reward_info": {"reward": reward},
        "messages": [
            {"role": "assistant", "content": "Hi! How can I help?", "turn_idx": 0},
            {"role": "user", "content": f"Where is order {task}?", "turn_idx": 1},
            {"role": "assistant", "content": None, "tool_calls": [call], "turn_idx": 2},
            {"role": "tool", "id": "c1", "content": '{"status": "shipped"}', "requestor": "assistant", "turn_idx": 3},
            {"role": "assistant", "content": "It has shipped.", "turn_idx": 4},
        ],
    }


def _document(*simulations: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:00", "info": INFO, "tasks": [],
            "simulations": list(simulations) or [_simulation("7", 1.0), _simulation("8", 0.0)]}


def _write(path: Path, value: Any, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(value, indent=indent), encoding="utf-8")
    return path


def _folder(root: Path, document: dict[str, Any]) -> Path:
    """τ²-bench's folder layout: results.json without the simulations, one file per simulation."""
    root.mkdir()
    meta = {key: value for key, value in document.items() if key != "simulations"}
    meta["format_version"] = 2
    meta["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"], "trial": s["trial"]}
                                for s in document["simulations"]]
    _write(root / "results.json", meta)
    (root / "simulations").mkdir()
    for simulation in document["simulations"]:
        _write(root / "simulations" / f"{simulation['id']}.json", simulation)
    return root


def test_every_layout_gives_the_same_contexts_and_names_its_version(tmp_path: Path) -> None:
    document = _document()
    single = read_tau2_results(_write(tmp_path / "run.json", document))
    folder = _folder(tmp_path / "run", document)
    bare = read_tau2_results(_write(tmp_path / "sims.json", document["simulations"]))
    for read in (read_tau2_results(folder), read_tau2_results(folder / "results.json"), read_transcripts(folder), bare):
        assert read.contexts.ids == single.contexts.ids == ("7/0/0", "7/0/1", "7/0/2", "8/0/0", "8/0/1", "8/0/2")
        assert [str(a) for a in read.responses.actions()] == ["reply()", "get_order(order_id=7)", "reply()",
                                                               "reply()", "get_order(order_id=8)", "reply()"]
    assert single.responses.provenance["tau2"] == {"git_commit": "0123abc"} and "layout" not in single.responses.provenance
    in_folder = read_tau2_results(folder)
    assert in_folder.responses.provenance["tau2"] == {"git_commit": "0123abc", "format_version": "2"}
    assert in_folder.responses.provenance["layout"] == "folder" and in_folder.contexts.built["layout"] == "folder"
    assert in_folder.contexts.built["git_commit"] == single.contexts.built["git_commit"] == "0123abc"
    assert in_folder.responses.policy == single.responses.policy == "agent-llm"
    # a bare list has no info: no version, no policy text, the file's stem names the agent
    assert bare.responses.provenance["layout"] == "list" and "tau2" not in bare.responses.provenance
    assert bare.responses.policy == "sims" and bare.contexts["7/0/1"].metadata["messages"][0]["role"] == "assistant"
    assert single.contexts["7/0/1"].metadata["messages"][0] == {"role": "system", "content": "You help with orders."}


def test_a_simulation_file_in_a_folder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path / "run", _document())
    broken = copy.deepcopy(_simulation("8", 0.0))
    broken["messages"] = None
    _write(folder / "simulations" / "sim-8.json", broken)
    with pytest.raises(FileFormatError) as info:
        read_tau2_results(folder)
    assert str(info.value) == (f"{folder}: simulation 2 (simulations/sim-8.json; task '8', trial 0): "
                               "'messages' must be a list, got null")
    (folder / "simulations" / "sim-8.json").write_text("{", encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"simulations/sim-8.json, line 1: invalid JSON"):
        read_tau2_results(folder)
    # all the files of a folder together are bounded like one file
    _write(folder / "simulations" / "sim-8.json", _simulation("8", 0.0))
    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 2_000)
    with pytest.raises(FileFormatError) as info:
        read_tau2_results(folder)
    assert str(info.value).startswith(f"{folder}: results.json and its 2 simulation files hold ")
    assert str(info.value).endswith(" bytes together, more than 2,000 (simscore.io.reading.MAX_FILE_BYTES)")


def test_simulations_without_a_task_take_their_position_and_say_so(tmp_path: Path) -> None:
    document = _document()
    for simulation in document["simulations"]:
        del simulation["task_id"]
    path = _write(tmp_path / "run.json", document)
    with pytest.warns(UserWarning, match=r"run.json: 2 simulation\(s\) without 'task_id' take their position in the "
                                         "file as task id"):
        read = read_tau2_results(path)
    assert read.contexts.ids == ("1/0/0", "1/0/1", "1/0/2", "2/0/0", "2/0/1", "2/0/2")
    assert read.contexts["2/0/0"].metadata["task_id"] == "2" and read.contexts["2/0/0"].metadata["dialogue_id"] == "sim-8"
    assert read.responses.provenance["ids"] == "positions: 2 simulation(s) without 'task_id'"


def test_arguments_encoded_twice_are_decoded_once_more_and_said(tmp_path: Path) -> None:
    # τ²-bench writes arguments as an object; a string holding the object's JSON is one encoding too many
    path = _write(tmp_path / "run.json", _document(_simulation("7", 1.0, arguments=json.dumps({"order_id": "7"}))))
    with pytest.warns(UserWarning, match=r"run.json: 1 tool call\(s\) hold their arguments JSON-encoded twice \(a "
                                         r"string holding JSON text; 'get_order'\): decoded once more"):
        read = read_tau2_results(path)
    assert str(read.responses["7/0/1"].action) == "get_order(order_id=7)"
    assert read.responses.provenance["arguments"] == "1 tool call(s) with arguments JSON-encoded twice, decoded again"
    # a string that is not JSON stays an error, naming the file, the simulation and the message
    path = _write(tmp_path / "bad.json", _document(_simulation("7", 1.0, arguments="order 7")))
    with pytest.raises(FileFormatError) as info:
        read_tau2_results(path)
    assert str(info.value).startswith(f"{path}: simulation 1 (task '7', trial 0), message 3: cannot read tool call ")
    assert str(info.value).endswith("the arguments of 'get_order' are not JSON (Expecting value)")
    # chat completions write JSON text; the JSON text of a string holding it is one encoding too many
    call = {"id": "c1", "type": "function",
            "function": {"name": "get_order", "arguments": json.dumps(json.dumps({"order_id": 7}))}}
    chats = tmp_path / "chats.jsonl"
    chats.write_text(json.dumps({"id": "c", "messages": [{"role": "user", "content": "Order 7?"},
                                                          {"role": "assistant", "content": None, "tool_calls": [call]}]})
                     + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="JSON-encoded twice"):
        assert str(read_chat_transcripts(chats).responses["c/0"].action) == "get_order(order_id=7)"
    plain = read_tau2_results(_write(tmp_path / "plain.json", _document()))
    assert "arguments" not in plain.responses.provenance


def test_tool_names_with_dots_are_read_and_their_acts_round_trip(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.json", _document(_simulation("7", 1.0, name="orders.get")))
    act = read_tau2_results(path).responses["7/0/1"].action
    assert str(act) == "orders.get(order_id=7)" and act is not None and act.intents == ("orders.get",)
    assert Act.parse(str(act)) == act and Act.parse(str(act), strict=True) == act
    several = Act.parse("crm.v2.find(name=Ann);orders.get(order_id=7)")
    assert str(several) == "crm.v2.find(name=Ann);orders.get(order_id=7)" and Act.parse(str(several)) == several
    with pytest.raises(FileFormatError, match="the tool name is not an identifier"):
        read_tau2_results(_write(tmp_path / "space.json", _document(_simulation("7", 1.0, name="orders get"))))


def test_each_reader_names_the_other_when_given_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _write(tmp_path / "run.json", _document())
    with pytest.raises(FileFormatError) as info:
        read_chat_transcripts(results)
    assert str(info.value).endswith("; this looks like tau2-bench results: read them with --format tau2 "
                                    "(contexts.transcripts.read_tau2_results)")
    with pytest.raises(FileFormatError, match="a folder, where OpenAI-style chat transcripts .* this looks like tau2"):
        read_chat_transcripts(_folder(tmp_path / "run", _document()))
    chats = tmp_path / "chats.json"
    chats.write_text(json.dumps({"id": "c", "messages": [{"role": "user", "content": "Hi"}]}) + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read_tau2_results(chats)
    assert str(info.value).endswith("without a list 'simulations'; this looks like chat transcripts (one conversation "
                                    "a line): read them with --format chat (read_chat_transcripts)")
    assert main(["contexts", "transcripts", str(results), "--format", "chat", "--out-contexts",
                 str(tmp_path / "c.jsonl"), "--out-responses", str(tmp_path / "r.jsonl")]) == 2
    assert "read them with --format tau2" in capsys.readouterr().err


def test_many_short_conversations_are_bounded_by_what_they_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42: 18,000 ordinary simulations were refused as "long conversations" by a total count of
    characters; the bound on a conversation's history is now per conversation, and the memory all
    contexts hold together has its own bound, named as such."""
    path = _write(tmp_path / "run.json", _document(*(_simulation(str(task), 1.0) for task in range(40))))
    monkeypatch.setattr(contexts.transcripts, "MAX_HISTORY_CHARACTERS", 2_000)  # 40 conversations hold 34,000 together
    assert len(read_tau2_results(path).contexts) == 120
    monkeypatch.setattr(contexts.transcripts, "MAX_HELD_BYTES", 300_000)  # each conversation holds about 10,900
    with pytest.raises(FileFormatError) as info:
        read_tau2_results(path)
    assert str(info.value).startswith(f"{path}: simulation 28 (task '27', trial 0): the contexts read so far (84, of "
                                      "28 conversations) would hold about 304,416 bytes in memory")
    assert str(info.value).endswith(", more than 300,000 (contexts.transcripts.MAX_HELD_BYTES): read "
                                    "the input in parts")


def test_gate_reads_every_layout_of_tau2_results(tmp_path: Path) -> None:
    document = _document()
    expected = (("7", "8"), (0, 0), [True, False])
    for path in (_write(tmp_path / "run.json", document), _folder(tmp_path / "run", document),
                 tmp_path / "run" / "results.json", _write(tmp_path / "sims.json", document["simulations"]),
                 _write(tmp_path / "compact.json", document["simulations"], indent=None)):
        log = read_outcome_log(path)
        assert (log.tasks, log.trials, log.success.tolist()) == expected, path
    broken = _write(tmp_path / "run" / "simulations" / "sim-8.json", dict(document["simulations"][1], trial=-1))
    with pytest.raises(FileFormatError, match=r"run: simulation 2 \(simulations/sim-8.json\): trial -1 is not a whole"):
        read_outcome_log(tmp_path / "run")
    assert broken.exists()
