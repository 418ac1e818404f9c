"""Contexts and the logged agent's responses from chat transcripts and tau2-bench results: the
real tau2-bench fixture (tests/data/tau2), a hand-written chat file, named errors of malformed
transcripts, and the command line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from contexts.context import ContextSet
from contexts.generate import GridSpec, generate_grid
from contexts.transcripts import read_chat_transcripts, read_tau2_results, read_transcripts
from simscore.acts import Act, ActSequence
from simscore.app.cli import main
from simscore.errors import FileFormatError, excerpt
from simscore.responses import Responses
from tests.contexts.transcript_samples import CONVERSATIONS, TOOLS, write_chat_transcripts

TAU2 = Path(__file__).resolve().parents[1] / "data" / "tau2" / "airline_whissle_4_simulations.json"


def test_tau2_results_give_one_context_per_assistant_turn() -> None:
    read = read_tau2_results(TAU2)
    ids = read.contexts.ids
    assert len(ids) == 15 and ids[:3] == ("11/0/0", "11/0/1", "11/0/2") and ids[-1] == "46/0/2"
    assert read.responses.ids == ids and read.responses.policy == "whissle"
    actions = [str(a) for a in read.responses.actions()]
    assert actions.count("reply()") == 9
    assert actions[8:11] == ["get_user_details(user_id=amelia_rossi_1297)",
                             "get_reservation_details(reservation_id=SI5UKW)",
                             actions[10]]
    assert actions[10].startswith('transfer_to_human_agents(summary="User wants to cancel a basic economy flight')
    assert read.responses["28/0/0"].text == "Hi! How can I help you today?"
    assert read.responses["28/0/2"].text is None  # a call without words
    context = read.contexts["28/0/3"]
    meta = context.metadata
    assert (meta["source"], meta["source_name"], meta["task_id"], meta["trial"], meta["reward"], meta["turn_index"]) == (
        "col", TAU2.name, "28", 0, 1.0, 3)
    assert meta["dialogue_id"] == next(s["id"] for s in json.loads(TAU2.read_text())["simulations"] if s["task_id"] == "28")
    assert meta["messages"][0]["role"] == "system" and meta["messages"][0]["content"].startswith("# Airline Agent Policy")
    assert [m["role"] for m in meta["messages"]] == ["system", "assistant", "user", "assistant", "user", "assistant", "tool"]
    assert meta["messages"][5]["tool_calls"][0]["function"] == {
        "name": "get_user_details", "arguments": '{"user_id":"amelia_rossi_1297"}'}
    assert meta["history"][-2] == "assistant: get_user_details(user_id=amelia_rossi_1297)"
    assert meta["history"][-1].startswith("tool: {")
    assert read.contexts["11/0/0"].metadata["reward"] == 0.0
    assert read.contexts.built["importer"] == "tau2" and read.contexts.built["domain"] == "airline"
    assert read.responses.provenance["format"] == "tau2-results" and read.responses.provenance["domain"] == "airline"


def test_chat_transcripts_keep_text_and_several_calls(tmp_path: Path) -> None:
    read = read_chat_transcripts(write_chat_transcripts(tmp_path / "chats.jsonl"))
    assert read.contexts.ids == ("trip-1/0", "trip-1/1", "trip-2/0", "trip-2/1")
    first = read.responses["trip-1/0"]
    assert isinstance(first.action, ActSequence)
    assert (str(first.action), first.text) == (
        "find_flight(date=2025-05-03,destination=BOS,origin=SFO);get_weather(city=Boston)", "Let me check both.")
    assert str(read.responses["trip-2/0"].action) == "get_weather(city=Boston)" and read.responses["trip-2/0"].text is None
    assert read.responses["trip-2/1"].action == Act("reply")
    meta = read.contexts["trip-1/1"].metadata
    assert meta["history"] == (
        "user: I need a flight from SFO to Boston on May 3, and is it raining there?",
        "assistant: Let me check both. find_flight(date=2025-05-03,destination=BOS,origin=SFO);get_weather(city=Boston)",
        'tool: [{"flight": "UA 12", "departs": "08:05"}]',
        'tool: {"rain": false}',
    )
    assert json.loads(json.dumps(meta["messages"])) == CONVERSATIONS[0]["messages"][:5]
    assert json.loads(json.dumps(meta["tools"])) == TOOLS
    assert (meta["task_id"], meta["trial"], meta["dialogue_id"], meta["turn_index"]) == ("trip", 0, "trip-1", 1)
    assert read.responses.policy == "chats" and read.contexts.name == "chats"
    # options: lists as sets, no act for a reply in words
    plain = read_transcripts(tmp_path / "chats.jsonl", reply_intent=None, name="x", policy="y")
    assert plain.responses["trip-2/1"].action is None and plain.contexts.name == "x" and plain.responses.policy == "y"


def test_the_files_written_read_back(tmp_path: Path) -> None:
    read = read_tau2_results(TAU2)
    read.contexts.to_jsonl(tmp_path / "c.jsonl")
    read.responses.to_jsonl(tmp_path / "r.jsonl")
    assert ContextSet.read_jsonl(tmp_path / "c.jsonl") == read.contexts
    again = Responses.read_jsonl(tmp_path / "r.jsonl")
    assert list(again.items()) == list(read.responses.items())


def _lines(*records: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def _bad_arguments() -> dict[str, Any]:
    conversation = copy.deepcopy(CONVERSATIONS[0])
    conversation["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"origin": SFO}'
    return conversation


def _robot() -> dict[str, Any]:
    conversation = copy.deepcopy(CONVERSATIONS[0])
    conversation["messages"][1]["role"] = "robot"
    return conversation


MALFORMED = [
    ("not-an-object", _lines(CONVERSATIONS[0], [1, 2]),
     "line 2: expected a conversation (a JSON object with 'id' and 'messages'), got an array"),
    ("null-id", _lines({"id": None, "messages": []}), "line 1: conversation: 'id' must be a non-empty string or an "
                                                       "integer, got null"),
    ("unknown-role", _lines(_robot()),
     "line 1: conversation 'trip-1', message 2: role 'robot' is not one of system, developer, user, assistant, tool, function"),
    ("arguments-not-json", _lines(_bad_arguments()),
     "line 1: conversation 'trip-1', message 3: cannot read tool call "
     + excerpt(_bad_arguments()["messages"][2]["tool_calls"][0])
     + ": the arguments of 'find_flight' are not JSON (Expecting value)"),
    ("same-id-twice", _lines(CONVERSATIONS[0], CONVERSATIONS[1], CONVERSATIONS[0]),
     "line 3: conversation 'trip-1' appears twice (first on line 1)"),
]


@pytest.mark.parametrize(("name", "text", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_five_malformed_transcripts_are_named(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read_chat_transcripts(path)
    assert str(info.value) == f"{path}, {message}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["simulations"][1].update(messages=None), ": simulation 2 (task '13', trial 0): 'messages' must be a list, got null"),
        (lambda d: d["simulations"][0].update(task_id=None), ": simulation 1: 'task_id' must be a non-empty string or an integer, got null"),
        (lambda d: d["simulations"].append(copy.deepcopy(d["simulations"][0])),
         ": simulation 5 (task '11', trial 0) appears twice (first simulation 1)"),
        (lambda d: d["simulations"][2]["messages"][4]["tool_calls"][0].update(arguments=[1]),
         ": simulation 3 (task '28', trial 0), message 5: cannot read tool call"),
        (lambda d: d.pop("simulations"), ": expected tau2-bench results (a JSON document with 'simulations', a list "
                                          "of simulations, or a folder of results.json and simulations/), got an "
                                          "object without a list 'simulations'"),
    ],
)
def test_malformed_tau2_results_are_named(tmp_path: Path, change: Any, message: str) -> None:
    document = json.loads(TAU2.read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FileFormatError) as info:
        read_tau2_results(path)
    assert str(info.value).startswith(f"{path}{message}")
    assert len(str(info.value)) < 1200


def test_a_file_of_another_kind_is_named(tmp_path: Path) -> None:
    contexts = tmp_path / "contexts.jsonl"
    generate_grid(GridSpec(levels=(0.0, 1.0))).to_jsonl(contexts)
    for reader in (read_chat_transcripts, read_tau2_results):
        with pytest.raises(FileFormatError, match=r"line 1: a context set \(format 'simscore-contexts', JSON Lines\) "
                                                  r"where (OpenAI-style chat transcripts|tau2-bench results)"):
            reader(contexts)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_c, out_r = tmp_path / "C.jsonl", tmp_path / "R.jsonl"
    assert main(["contexts", "transcripts", str(TAU2), "--out-contexts", str(out_c), "--out-responses", str(out_r)]) == 0
    out = capsys.readouterr().out
    assert f"wrote 15 contexts from 4 conversations to {out_c}" in out
    assert f"wrote the responses of 'whissle' to {out_r}: 6 turns with tool calls (0 with several), 9 without" in out
    assert Responses.read_jsonl(out_r).ids == ContextSet.read_jsonl(out_c).ids
    chats = write_chat_transcripts(tmp_path / "chats.jsonl")
    assert main(["contexts", "transcripts", str(chats), "--out-contexts", str(out_c), "--out-responses", str(out_r)]) == 2
    assert "exists; use --force" in capsys.readouterr().err
    assert main(["contexts", "transcripts", str(chats), "--out-contexts", str(out_c), "--out-responses", str(out_r),
                 "--force", "--lists", "set"]) == 0
    assert "2 turns with tool calls (1 with several), 2 without" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_lines({"id": None, "messages": []}), encoding="utf-8")
    assert main(["contexts", "transcripts", str(bad), "--out-contexts", str(tmp_path / "c2.jsonl"),
                 "--out-responses", str(tmp_path / "r2.jsonl")]) == 2
    assert f"{bad}, line 1: conversation: 'id' must be a non-empty string or an integer, got null" \
        in capsys.readouterr().err


def test_the_history_one_conversations_contexts_hold_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every context holds the history before it: a long conversation costs its length squared.
    The bound is per conversation (issue 42: a total over the file refused many short ones)."""
    import contexts.transcripts

    chats = write_chat_transcripts(tmp_path / "chats.jsonl")
    # trip-1's two contexts hold 147 + 631 characters of history, trip-2's 147 + 365: each conversation
    # below 800, 1,290 together (the former bound, a total, refused the file at 1,000)
    monkeypatch.setattr(contexts.transcripts, "MAX_HISTORY_CHARACTERS", 800)
    assert len(read_chat_transcripts(chats).contexts) == 4
    monkeypatch.setattr(contexts.transcripts, "MAX_HISTORY_CHARACTERS", 700)
    with pytest.raises(FileFormatError) as info:
        read_chat_transcripts(chats)
    assert str(info.value) == (
        f"{chats}, line 1: conversation 'trip-1': its contexts would hold more than 700 characters of history "
        "(contexts.transcripts.MAX_HISTORY_CHARACTERS; each holds the whole history before it, so a conversation "
        "costs the square of its length): split the long conversation"
    )


def test_a_comparison_on_transcript_contexts_keeps_their_scalar_metadata(tmp_path: Path) -> None:
    """The contexts' messages and tools stay in the context set: a saved comparison and its page hold scalars."""
    from simscore.app.inspect.view import read_comparison
    from simscore.comparison import compare

    read = read_tau2_results(TAU2)
    comparison = compare(read.responses, read.responses, measures=["tmr"], metadata=read.contexts, progress=False)
    assert "messages" not in comparison.scores.columns and "tools" not in comparison.scores.columns
    assert comparison.scores["task_id"].tolist()[:3] == ["11", "11", "11"]
    assert comparison.scores["reward"].tolist()[-1] == 1.0
    comparison.save(tmp_path / "cmp.json")
    assert read_comparison(tmp_path / "cmp.json").scores["tmr"].tolist() == [1.0] * 15


def test_the_legacy_functions_api_is_read_as_calls(tmp_path: Path) -> None:
    # an assistant message with "function_call" and content null was read as reply() with no text
    messages = [{"role": "user", "content": "Who is u1?"},
                {"role": "assistant", "content": None, "function_call": {"name": "get_user", "arguments": '{"id": "u1"}'}},
                {"role": "function", "name": "get_user", "content": '{"name": "Ann"}'},
                {"role": "assistant", "content": "It is Ann."}]
    path = tmp_path / "legacy.jsonl"
    path.write_text(json.dumps({"id": "c", "messages": messages}) + "\n", encoding="utf-8")
    read = read_chat_transcripts(path)
    assert str(read.responses["c/0"].action) == "get_user(id=u1)" and read.responses["c/0"].text is None
    assert read.contexts["c/1"].metadata["history"][-1] == 'tool: {"name": "Ann"}'
    assert read.responses["c/1"].action == Act("reply")
    both = dict(messages[1], tool_calls=[{"type": "function", "function": {"name": "x", "arguments": "{}"}}])
    path.write_text(json.dumps({"id": "c", "messages": [messages[0], both]}) + "\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 1: .*holds both 'tool_calls' and the legacy 'function_call'"):
        read_chat_transcripts(path)


def test_conversations_without_an_id_take_their_line_number_and_say_so(tmp_path: Path) -> None:
    # τ²-bench's own OpenAI fine-tuning export writes {"messages": [...]} lines, no id
    lines = [{key: value for key, value in conversation.items() if key != "id"} for conversation in CONVERSATIONS]
    path = tmp_path / "sft.jsonl"
    path.write_text("\n" + _lines(*lines), encoding="utf-8")  # a blank first line: the ids are the lines' numbers
    with pytest.warns(UserWarning, match=r"sft.jsonl: 2 conversation\(s\) without 'id' \(a fine-tuning export\?\) take "
                                         "their line number as id"):
        read = read_chat_transcripts(path)
    assert read.contexts.ids == ("2/0", "2/1", "3/0", "3/1")
    assert read.contexts["3/1"].metadata["dialogue_id"] == "3"
    assert read.responses.provenance["ids"] == "line numbers: 2 conversation(s) without 'id'"
    named = read_chat_transcripts(write_chat_transcripts(tmp_path / "named.jsonl"))
    assert "ids" not in named.responses.provenance


def _calls(n: int) -> dict[str, Any]:
    """A conversation whose agent makes ``n`` calls, one a turn, each answered."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Check every seat."}]
    for k in range(n):
        call = {"id": f"t{k}", "type": "function", "function": {"name": "check_seat", "arguments": f'{{"seat": {k}}}'}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"t{k}", "content": "free"}]
    return {"id": "long", "messages": messages}


def test_a_trajectory_is_bounded_as_a_whole_not_by_one_turns_calls(tmp_path: Path) -> None:
    # 300 calls in 300 turns: more than one turn may hold (256), far fewer than a trajectory may
    path = tmp_path / "long.jsonl"
    path.write_text(_lines(_calls(300)), encoding="utf-8")
    read = read_chat_transcripts(path, unit="task")
    action = read.responses["long"].action
    assert isinstance(action, ActSequence) and len(action.calls) == 300
    assert str(action.calls[299]) == "check_seat(seat=299)"
    assert [len(message) for message in action.messages] == [1] * 300  # one call a message, kept
    assert str(action).startswith("check_seat(seat=0);;check_seat(seat=1);;")
    # beyond the trajectory's bound: a reader error naming file, line and conversation
    from contexts.transcripts import MAX_TRAJECTORY_CALLS

    assert MAX_TRAJECTORY_CALLS == 4096
    path.write_text(_lines(_calls(4097)), encoding="utf-8")
    with pytest.raises(FileFormatError, match=r"long.jsonl, line 1: conversation 'long', its trajectory: 4,097 calls "
                                              r"together, more than 4,096 \(contexts.transcripts.MAX_TRAJECTORY_CALLS\)"):
        read_chat_transcripts(path, unit="task")


def test_a_trajectory_keeps_its_messages_and_the_responses_file_too(tmp_path: Path) -> None:
    first = {"id": "t0", "type": "function", "function": {"name": "find", "arguments": '{"city": "Paris"}'}}
    second = [{"id": f"t{k}", "type": "function", "function": {"name": name, "arguments": "{}"}}
              for k, name in ((1, "book"), (2, "pay"))]
    messages = [{"role": "user", "content": "Book it."},
                {"role": "assistant", "content": None, "tool_calls": [first]},
                {"role": "tool", "tool_call_id": "t0", "content": "ok"},
                {"role": "assistant", "content": "Booking."},  # words: no message of calls
                {"role": "assistant", "content": None, "tool_calls": second},
                {"role": "tool", "tool_call_id": "t1", "content": "ok"}, {"role": "tool", "tool_call_id": "t2", "content": "ok"}]
    path = tmp_path / "two.jsonl"
    path.write_text(_lines({"id": "c", "messages": messages}), encoding="utf-8")
    read = read_chat_transcripts(path, unit="task")
    action = read.responses["c"].action
    assert str(action) == "find(city=Paris);;book();pay()"
    assert read.responses["c"] == read_chat_transcripts(path, unit="task").responses["c"]
    out = tmp_path / "r.jsonl"
    read.responses.to_jsonl(out)
    from simscore.responses import Responses

    assert Responses.read_jsonl(out)["c"].action == action


def test_a_reply_intent_and_none_exclude_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chats = write_chat_transcripts(tmp_path / "chats.jsonl")
    with pytest.raises(SystemExit) as info:
        main(["contexts", "transcripts", str(chats), "--out-contexts", str(tmp_path / "c.jsonl"),
              "--out-responses", str(tmp_path / "r.jsonl"), "--reply-intent", "say", "--no-reply-intent"])
    assert info.value.code == 2
    assert "argument --no-reply-intent: not allowed with argument --reply-intent" in capsys.readouterr().err
    assert not (tmp_path / "c.jsonl").exists()
