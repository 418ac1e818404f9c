"""Two real tool-calling agents on the same τ²-bench tasks (examples/data/tau2): trajectories as
one context per task, turns paired by task and turn with ``same_history``, the chance level, the
first divergence, the command line and the view page. Golden values are counted by hand from
the two files (the calls of each task are listed in the tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from contexts.transcripts import pair_transcripts, read_chat_transcripts, read_tau2_results
from simscore import compare
from simscore.acts import Act
from simscore.analysis.chance import shuffled_chance
from simscore.analysis.divergence import first_divergence
from simscore.app.cli import main
from simscore.app.cli.transcripts import UNITS
from simscore.app.inspect.view import view_data
from simscore.errors import ContextMismatchError
from simscore.measures import resolve_measures
from tests.contexts.transcript_samples import write_chat_transcripts

DATA = Path(__file__).resolve().parents[2] / "examples" / "data" / "tau2"
GPT41 = DATA / "airline_gpt-4.1_6_tasks.json"
SFT = DATA / "airline_gpt-4.1-sft_6_tasks.json"
MEASURES = ["tmr", "dmr", "cer", "cmr"]

# The tools each agent called, task by task, in order (read off the two files): the tools only,
# since an argument differs wherever a tool does.
TOOLS_GPT41 = {
    "13": ["get_user_details", "get_reservation_details", "get_flight_status"],
    "26": ["get_user_details", "get_reservation_details", "get_reservation_details", "cancel_reservation"],
    "30": ["get_reservation_details", "search_direct_flight", "update_reservation_flights"],
    "31": ["get_user_details", "get_reservation_details", "get_reservation_details", "get_reservation_details",
           "search_direct_flight"],
    "45": ["get_reservation_details"],
    "48": ["cancel_reservation"],
}
TOOLS_SFT = {
    "13": ["get_reservation_details", "transfer_to_human_agents"],
    "26": ["get_user_details", "get_reservation_details", "transfer_to_human_agents"],
    "30": ["get_reservation_details", "search_direct_flight", "update_reservation_flights"],
    "31": ["get_user_details", "get_reservation_details", "get_reservation_details", "get_reservation_details",
           "search_direct_flight"],
    "45": ["get_reservation_details", "cancel_reservation"],
    "48": ["get_reservation_details", "get_user_details", "transfer_to_human_agents"],
}


def _measures(calls: str) -> list:
    return resolve_measures(MEASURES, options={name: {"calls": calls} for name in MEASURES})


@pytest.fixture(scope="module")
def tasks():
    return pair_transcripts(read_tau2_results(GPT41, unit="task"), read_tau2_results(SFT, unit="task"))


@pytest.fixture(scope="module")
def turns():
    return pair_transcripts(read_tau2_results(GPT41), read_tau2_results(SFT))


def test_a_task_is_one_context_whose_response_is_the_agents_calls_in_order(tasks) -> None:
    assert tasks.contexts.ids == ("13/0", "26/0", "30/0", "31/0", "45/0", "48/0")
    assert {c.id.split("/")[0]: [call.intent for call in tasks.a[c.id].action.calls] for c in tasks.contexts} == TOOLS_GPT41
    assert {c.id.split("/")[0]: [call.intent for call in tasks.b[c.id].action.calls] for c in tasks.contexts} == TOOLS_SFT
    meta = tasks.contexts["31/0"].metadata
    assert (meta["task_id"], meta["trial"], meta["reward"], meta["agent_turns"], meta["turn_index"]) == ("31", 0, 1.0, 10, 0)
    # the agent speaks first: the opening is the domain policy alone, the same for both agents
    assert [m["role"] for m in meta["messages"]] == ["system"] and meta["same_history"] is True
    assert tasks.contexts.built["unit"] == "task"
    assert str(tasks.a["48/0"].action) == "cancel_reservation(reservation_id=3RK2T9)"
    assert tasks.a["48/0"].text is None


@pytest.mark.parametrize(("calls", "tmr", "matched"), [
    ("strict", 2 / 6, "30 31"),        # the same calls in the same order
    ("unordered", 2 / 6, "30 31"),
    ("subset", 3 / 6, "30 31 45"),     # 45: gpt-4.1 looked the reservation up; the fine-tuned one also cancelled it
    ("superset", 2 / 6, "30 31"),
])
def test_trajectories_compared_in_each_calls_mode(tasks, calls: str, tmr: float, matched: str) -> None:
    comparison = compare(tasks.a, tasks.b, _measures(calls), metadata=tasks.contexts, clusters="task_id",
                         progress=False)
    assert comparison.mean("tmr") == pytest.approx(tmr)
    assert " ".join(i.split("/")[0] for i in comparison.scores.index[comparison.scores["tmr"] == 1]) == matched
    assert comparison.info.units == 6 and comparison.info.clusters == ("task_id",)


def test_the_chance_level_of_trajectories_by_hand(tasks) -> None:
    strict = compare(tasks.a, tasks.b, _measures("strict"), metadata=tasks.contexts, clusters="task_id", progress=False)
    chance = shuffled_chance(strict, tasks.a, tasks.b, _measures("strict"))
    # no two tasks' trajectories (or tool sequences) are alike: 30 ordered pairs of different tasks
    assert (chance.pairs, chance.possible, chance.apart) == (30, 30, ("task_id",))
    assert chance.means["tmr"] == 0.0 and chance.means["dmr"] == 0.0
    subset = compare(tasks.a, tasks.b, _measures("subset"), metadata=tasks.contexts, clusters="task_id", progress=False)
    # gpt-4.1's [get_reservation_details] of task 45 is among the fine-tuned agent's tools in 13, 26, 30, 31
    # and 48; its [cancel_reservation] of task 48 among those of 45: 6 of 30 pairs
    assert shuffled_chance(subset, tasks.a, tasks.b, _measures("subset")).means["dmr"] == pytest.approx(6 / 30)


def test_the_chance_level_samples_seeded_pairs_beyond_its_cap(turns) -> None:
    comparison = compare(turns.a, turns.b, ["tmr"], metadata=turns.contexts, clusters=None, progress=False)
    full = shuffled_chance(comparison, turns.a, turns.b, ["tmr"])
    assert full.apart == () and full.pairs == full.possible == 49 * 48
    one, two = (shuffled_chance(comparison, turns.a, turns.b, ["tmr"], max_pairs=500, seed=3) for _ in range(2))
    assert one == two and one.pairs == 500 and one.possible == 49 * 48
    assert "500 of 2,352 pairs, sampled" in one.format()


def test_turns_pair_by_task_and_turn_and_say_where_the_histories_agree(turns) -> None:
    # turns both agents took: 13: 9 and 7, 26: 9 and 8, 30: 10 and 10, 31: 10 and 11, 45: 8 and 10, 48: 6 and 7
    assert len(turns.contexts) == 7 + 8 + 10 + 10 + 8 + 6
    same = [c.id for c in turns.contexts if c.metadata["same_history"]]
    # the histories agree until the first reply worded differently (the greeting, or the answer after it)
    assert same == ["13/0/0", "13/0/1", "26/0/0", "30/0/0", "30/0/1", "31/0/0", "31/0/1", "45/0/0", "48/0/0"]
    assert turns.a["13/0/0"].text == turns.b["13/0/0"].text == "Hi! How can I help you today?"
    comparison = compare(turns.a, turns.b, MEASURES, metadata=turns.contexts, clusters="task_id", progress=False)
    # actions alike, by task: 13: 4 of 7, 26: 6 of 8, 30: 8 of 10, 31: 6 of 10, 45: 8 of 8, 48: 3 of 6
    assert comparison.mean("tmr") == pytest.approx(35 / 49)
    parting = first_divergence(comparison, by=("task_id", "trial"))
    # task 45: the 8 paired turns agree, then the fine-tuned agent goes on alone for two more turns
    # (counted as "never" parting before the lengths were recorded)
    assert dict(zip(parting.table["task_id"], parting.table["first"])) == {
        "13": 2, "26": 4, "30": 2, "31": 4, "45": 8, "48": 2}
    assert parting.table.set_index("task_id")["alone"].fillna("-").to_dict() == {
        "13": "-", "26": "-", "30": "-", "31": "-", "45": "b", "48": "-"}
    assert "never" not in parting.distribution["turn"].tolist()
    assert (turns.contexts["45/0/0"].metadata["turns_a"], turns.contexts["45/0/0"].metadata["turns_b"]) == (8, 10)
    # task 31: gpt-4.1 looks up three reservations in one turn, the fine-tuned agent one a turn
    assert str(turns.b["31/0/4"].action) == "get_reservation_details(reservation_id=DF89BM)"
    assert len(turns.a["31/0/4"].action.calls) == 3


def test_pairing_refuses_logs_read_differently_or_without_common_ids(tmp_path: Path) -> None:
    with pytest.raises(ContextMismatchError, match="unit 'task' and None"):
        pair_transcripts(read_tau2_results(GPT41, unit="task"), read_tau2_results(SFT))
    with pytest.raises(ContextMismatchError, match="share no context id"):
        pair_transcripts(read_tau2_results(GPT41), read_chat_transcripts(write_chat_transcripts(tmp_path / "c.jsonl")))
    # the whissle fixture shares task 13 (another agent, another simulated user): its turns pair
    whissle = Path(__file__).resolve().parents[1] / "data" / "tau2" / "airline_whissle_4_simulations.json"
    paired = pair_transcripts(read_tau2_results(GPT41), read_tau2_results(whissle))
    assert {c.metadata["task_id"] for c in paired.contexts} == {"13"}
    with pytest.raises(ValueError, match="unit must be one of 'turn', 'task', got 'turns'"):
        read_tau2_results(GPT41, unit="turns")


def test_the_command_line_writes_the_pair_and_compares_with_chance_and_divergence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = {name: tmp_path / f"{name}.jsonl" for name in ("C", "A", "B")}
    assert main(["contexts", "transcripts", str(GPT41), "--pair", str(SFT), "--per", "task", "--out-contexts",
                 str(out["C"]), "--out-responses", str(out["A"]), "--out-responses-b", str(out["B"])]) == 0
    printed = capsys.readouterr().out
    assert "wrote 6 contexts from 6 conversations" in printed
    assert "6 conversations with tool calls (4 with several), 0 without" in printed
    assert "paired by id: 6 of the 6 contexts with the same history in both logs" in printed
    assert main(["compare", str(out["A"]), str(out["B"]), "--measures", "tmr,dmr,cer,cmr", "--contexts", str(out["C"]),
                 "--cluster", "task_id", "--chance", "--measure-option", "tmr.calls=subset",
                 "--measure-option", "dmr.calls=subset"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"tmr +0\.5000 +\[", printed) and "6 clusters resampled (by task_id)" in printed
    assert "chance level: A's response vs B's response to another task_id (30 pairs)\ntmr       0.0000\n" \
           "dmr       0.2000" in printed
    # turns, with the first divergence per task
    assert main(["contexts", "transcripts", str(GPT41), "--pair", str(SFT), "--out-contexts", str(out["C"]),
                 "--out-responses", str(out["A"]), "--out-responses-b", str(out["B"]), "--force"]) == 0
    assert "paired by id: 9 of the 49 contexts" in capsys.readouterr().out
    assert main(["compare", str(out["A"]), str(out["B"]), "--measures", "tmr", "--contexts", str(out["C"]),
                 "--cluster", "task_id", "--divergence", "task_id,trial", "--out", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [row["first"] for row in document["first_divergence"]["table"]] == [2, 4, 2, 4, 8, 2]  # 45: b goes on alone
    assert [row["alone"] for row in document["first_divergence"]["table"]] == [None, None, None, None, "b", None]
    assert main(["contexts", "transcripts", str(GPT41), "--pair", str(SFT), "--out-contexts", str(tmp_path / "x"),
                 "--out-responses", str(tmp_path / "y")]) == 2
    assert "--pair B and --out-responses-b FILE go together" in capsys.readouterr().err
    assert UNITS == ("turn", "task")  # the command line's choices are the reader's
    from contexts.transcripts import UNITS as READER_UNITS
    assert UNITS == READER_UNITS


def test_the_view_shows_both_agents_calls_and_the_speakers(turns, tmp_path: Path) -> None:
    comparison = compare(turns.a, turns.b, MEASURES, metadata=turns.contexts, clusters="task_id", progress=False)
    data = view_data(comparison, turns.a, turns.b, turns.contexts)
    assert data["tool_calls"] is True
    row = next(r for r in data["rows"] if r["id"] == "31/0/4")
    assert row["a"]["calls"] == [
        {"name": "get_reservation_details", "arguments": [["reservation_id", "=", rid]]}
        for rid in ("DF89BM", "COVE6R", "IIHXDG")]
    assert row["b"]["calls"] == [{"name": "get_reservation_details", "arguments": [["reservation_id", "=", "DF89BM"]]}]
    assert row["same_history"] is False and row["belief"] is None
    assert [t["speaker"] for t in row["history"]] == [
        "assistant", "user", "assistant", "user", "assistant", "tool", "assistant", "user"]
    assert row["history"][4]["text"] == "get_user_details(user_id=daiki_lee_6144)"
    page = (tmp_path / "page.html")
    from simscore.app.inspect.view import write_view
    html = write_view(comparison, turns.a, turns.b, page, contexts=turns.contexts).read_text(encoding="utf-8")
    for piece in ('callList(r, other)', '"call" + (matched ? "" : " unmatched")', 'assistant: "Agent"',
                  "same_history: no"):
        assert piece in html, piece
    assert Act.parse(row["a"]["act"]) == turns.a["31/0/4"].action  # the act string is still there (search, filters)


@pytest.mark.parametrize("same", [("--out-contexts", "--out-responses"), ("--out-responses", "--out-responses-b")])
@pytest.mark.parametrize("force", [False, True])
def test_two_outputs_on_one_path_are_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              same: tuple[str, str], force: bool) -> None:
    paths = {"--out-contexts": tmp_path / "c.jsonl", "--out-responses": tmp_path / "a.jsonl",
             "--out-responses-b": tmp_path / "b.jsonl"}
    paths[same[1]] = tmp_path / "sub" / ".." / paths[same[0]].name  # another name of the same path
    (tmp_path / "sub").mkdir()
    argv = ["contexts", "transcripts", str(GPT41), "--pair", str(SFT)]
    for option, path in paths.items():
        argv += [option, str(path)]
    assert main(argv + (["--force"] if force else [])) == 2
    assert (f"is given for both {same[0]} and {same[1]}: each output needs a path of its own"
            in capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]  # nothing written, with --force or without
