"""simscore's TMR against agentevals' trajectory match (LangChain), case by case.

Each case is written by hand from agentevals' documented semantics (``create_trajectory_match_evaluator``:
``trajectory_match_mode`` × ``tool_args_match_mode``, ``tool_args_match_overrides``): two trajectories
(lists of assistant messages, each a list of calls), what agentevals answers, and whether simscore's
TMR with the matching options (1.0 ⇔ match) answers the same. Where it does not, the case says why;
the guide (docs/guide/tool-agents.md, "simscore and agentevals") lists those differences and the counts,
which a test here keeps true.

agentevals' ``strict`` is simscore's ``calls="per_message"``; ``unordered``, ``subset``, ``superset``
keep their names (the calls of every message together); ``tool_args_match_mode`` is ``args``,
``tool_args_match_overrides`` (a mode per tool) is ``args_for``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from simscore import Act
from simscore.acts import ActSequence
from simscore.measures import TotalMatchRate

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "tool-agents.md"
MODES = {"strict": "per_message", "unordered": "unordered", "subset": "subset", "superset": "superset"}


def c(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


class Case(NamedTuple):
    mode: str  # agentevals' trajectory_match_mode
    args: str  # tool_args_match_mode
    outputs: list[list[dict[str, Any]]]  # messages of calls (an empty one: a reply in words)
    reference: list[list[dict[str, Any]]]
    agentevals: bool  # what agentevals answers
    differs: str = ""  # why simscore answers otherwise; empty where it agrees
    args_for: dict[str, str] | None = None  # tool_args_match_overrides


F1, F2, G = c("f", a=1), c("f", a=2), c("g", b=2)
F1B2 = c("f", a=1, b=2)
QUOTED = "agentevals compares JSON values as Python does: '1' is not 1 (simscore's values are text: one)"
TRUE_IS_1 = "agentevals compares JSON values as Python does: true == 1 (simscore: two values)"
GREEDY = ("agentevals takes the first call that matches, in order, and does not try another pairing; "
          "simscore pairs as many as can be")
WORDS = ("agentevals' strict compares every message, a reply in words too; simscore's trajectory holds "
         "the messages with calls")
TWO_WAY = ("agentevals' unordered checks superset both ways, the argument mode once in each direction "
           "(so subset and superset also ask the reverse); simscore applies it to the first side's calls")
REVERSED = ("agentevals' trajectory subset applies the argument mode reference-to-output (subset asks the "
            "reference's arguments to be among the output's); simscore's args always read first side against second")

CASES = [
    # strict (per_message): messages in order, calls within a message in any order
    Case("strict", "exact", [[F1]], [[F1]], True),
    Case("strict", "exact", [[F1, G]], [[G, F1]], True),
    Case("strict", "exact", [[F1], [G]], [[G], [F1]], False),
    Case("strict", "exact", [[F1, G]], [[F1], [G]], False),
    Case("strict", "exact", [[F1]], [[F2]], False),
    Case("strict", "exact", [[F1]], [[c("f", a=1.0)]], True),
    Case("strict", "exact", [[c("f", a="1")]], [[F1]], False, QUOTED),
    Case("strict", "exact", [[c("f", a=True)]], [[F1]], True, TRUE_IS_1),
    Case("strict", "exact", [[c("f", a=[1, 2])]], [[c("f", a=[2, 1])]], False),
    Case("strict", "exact", [[c("f", a={"b": 1})]], [[c("f", **{"a.b": 1})]], False),
    Case("strict", "exact", [[c("f")]], [[c("g")]], False),
    Case("strict", "exact", [[F1], [F1]], [[F1]], False),
    Case("strict", "exact", [[c("f")]], [[c("f")]], True),
    Case("strict", "exact", [[F1, F1]], [[F1, F2]], False),
    Case("strict", "exact", [[c("f", p=[{"n": "A"}])]], [[c("f", p=[{"n": "A"}])]], True),
    Case("strict", "ignore", [[F1]], [[F2]], True),
    Case("strict", "ignore", [[F1]], [[c("g", a=1)]], False),
    Case("strict", "ignore", [[F1, c("g")]], [[c("g", x=5), c("f")]], True),
    Case("strict", "ignore", [[F1], [G]], [[G], [F1]], False),
    Case("strict", "subset", [[F1]], [[F1B2]], True),
    Case("strict", "subset", [[F1B2]], [[F1]], False),
    Case("strict", "subset", [[c("f", p={"x": 1})]], [[c("f", p={"x": 1, "y": 2})]], False),
    Case("strict", "subset", [[c("f")]], [[F1]], True),
    Case("strict", "subset", [[F1, F1B2]], [[F1B2, c("f", a=1, c=3)]], False, GREEDY),
    Case("strict", "superset", [[F1B2]], [[F1]], True),
    Case("strict", "superset", [[F1]], [[F1B2]], False),
    Case("strict", "exact", [[F1, G]], [[F2, G]], True, args_for={"f": "ignore"}),
    Case("strict", "exact", [[F1, G]], [[F2, c("g", b=3)]], False, args_for={"f": "ignore"}),
    Case("strict", "ignore", [[F1, G]], [[F2, G]], False, args_for={"f": "exact"}),
    Case("strict", "exact", [[F1], []], [[F1]], False, WORDS),
    # unordered: the calls of all messages, in any order, as many on each side
    Case("unordered", "exact", [[F1], [G]], [[G, F1]], True),
    Case("unordered", "exact", [[F1]], [[F1], [c("g")]], False),
    Case("unordered", "exact", [[F1], [F1]], [[F1]], False),
    Case("unordered", "exact", [[F1, F2]], [[F2], [F1]], True),
    Case("unordered", "exact", [[c("f", a=[1, 2])]], [[c("f", a=[2, 1])]], False),
    Case("unordered", "exact", [[c("f", a=["x"])]], [[c("f", a={"0": "x"})]], False),
    Case("unordered", "exact", [[c("f", p={"x": 1.0})]], [[c("f", p={"x": 1})]], True),
    Case("unordered", "ignore", [[F1], [c("g")]], [[c("g", z=1)], [c("f", a=9)]], True),
    Case("unordered", "ignore", [[c("f")]], [[c("g")]], False),
    Case("unordered", "exact", [[F1], [G]], [[G], [c("f", a=3)]], True, args_for={"f": "ignore"}),
    Case("unordered", "subset", [[F1]], [[F1B2]], False, TWO_WAY),
    Case("unordered", "superset", [[F1B2]], [[F1]], False, TWO_WAY),
    Case("unordered", "subset", [[F1]], [[F1]], True),
    # subset: every output call among the reference's (distinct ones)
    Case("subset", "exact", [[F1]], [[F1, c("g")]], True),
    Case("subset", "exact", [[F1, c("g")]], [[F1]], False),
    Case("subset", "exact", [[F1], [F1]], [[F1]], False),
    Case("subset", "ignore", [[F1]], [[F2, c("g")]], True),
    Case("subset", "exact", [[c("h")]], [[c("f"), c("g")]], False),
    Case("subset", "exact", [[c("g"), F1]], [[F1], [c("x")], [c("g")]], True),
    Case("subset", "subset", [[F1]], [[F1B2]], False, REVERSED),
    Case("subset", "superset", [[F1]], [[F1B2]], True, REVERSED),
    Case("subset", "exact", [[F2]], [[F1, c("g")]], True, args_for={"f": "ignore"}),
    # superset: every reference call among the output's (distinct ones)
    Case("superset", "exact", [[F1, c("g")]], [[F1]], True),
    Case("superset", "exact", [[F1]], [[F1, c("g")]], False),
    Case("superset", "exact", [[F1]], [[F2]], False),
    Case("superset", "exact", [[F1]], [[F1], [F1]], False),
    Case("superset", "ignore", [[F1], [c("g")]], [[F2]], True),
    Case("superset", "superset", [[F1B2, c("g")]], [[F1]], True),
    Case("superset", "subset", [[F1]], [[F1B2]], True),
    Case("superset", "subset", [[F1B2]], [[F1]], False),
    Case("superset", "superset", [[F1B2, c("f", a=1, c=3)]], [[F1], [F1B2]], False, GREEDY),
]


def trajectory(messages: list[list[dict[str, Any]]]) -> Act:
    """The act of a trajectory as ``contexts transcripts --per task`` reads it: its messages of calls."""
    with_calls = [message for message in messages if message]
    act = Act.from_tool_calls([call for message in with_calls for call in message])
    return act if len(with_calls) < 2 else ActSequence(act.calls, message_sizes=[len(m) for m in with_calls])


def _name(case: Case) -> str:
    return f"{case.mode}-{case.args}" + (f"-{'-'.join(f'{k}={v}' for k, v in case.args_for.items())}"
                                          if case.args_for else "")


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_name(case)}" for i, case in enumerate(CASES)])
def test_tmr_answers_as_agentevals_where_the_definitions_agree(case: Case) -> None:
    measure = TotalMatchRate(calls=MODES[case.mode], args=case.args, args_for=case.args_for)
    matched = measure.score_pairs([trajectory(case.outputs)], [trajectory(case.reference)])[0] == 1.0
    assert matched == (case.agentevals if not case.differs else not case.agentevals)


def test_the_guide_counts_the_cases() -> None:
    differ = sum(bool(case.differs) for case in CASES)
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    found = re.search(r"Of (\d+) cases .*?, simscore answers as agentevals in (\d+); (\d+) differ", text)
    assert found is not None, "the guide's agentevals paragraph is missing"
    assert tuple(map(int, found.groups())) == (len(CASES), len(CASES) - differ, differ)
