"""Untrusted strings are inert: in the terminal, in a spreadsheet, in the page (simscore.io.untrusted and its uses)."""

from __future__ import annotations

import csv
import io
import re
import warnings
from pathlib import Path

import pytest

from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from simscore import Act, Response, Responses
from simscore.app.cli import main
from simscore.app.inspect.view_page import render_page
from simscore.io.untrusted import (
    TerminalStream,
    read_spreadsheet_cell,
    spreadsheet_cell,
    spreadsheet_frame,
    terminal_text,
)
from simscore.responses_csv import read_responses_csv, write_responses_csv

#: What a hostile file puts in a name: clear screen, set the window title, a fake result line,
#: a right-to-left override, a C1 control sequence introducer.
HOSTILE = "alpha\x1b[2J\x1b[H\x1b]0;pwned\x07\r\ntmr        1.0000\u202eevil\x9b31m"
#: What no output of a command may contain.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, ünïcödé", "plain text, ünïcödé"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\r\nb", "a\\r\\nb"),
        ("\x9b31m", "\\x9b31m"),
        ("\u202eabc\u2066\u2069\u200f", "\\u202eabc\\u2066\\u2069\\u200f"),
        ("\x00\x7f\u2028", "\\x00\\x7f\\u2028"),
    ],
)
def test_terminal_text_escapes_every_control(text: str, shown: str) -> None:
    assert terminal_text(text) == shown
    assert not ACTIVE.search(terminal_text(text))


def test_terminal_stream_keeps_lines_and_tabs() -> None:
    out = io.StringIO()
    stream = TerminalStream(out)
    print("a\tb", "\x1b[31mred", sep="\n", file=stream)  # type: ignore[arg-type]
    assert out.getvalue() == "a\tb\n\\x1b[31mred\n"


def _hostile_files(tmp_path: Path) -> tuple[Path, Path]:
    a = Responses({"c1": Response(Act.parse("hello()")), "c2": Response(Act.parse("bye()"))}, policy=HOSTILE)
    b = Responses({"c1": Response(Act.parse("hello()")), "c2": Response(Act.parse("hello()"))}, policy="beta\x1b]0;x\x07")
    a.to_jsonl(tmp_path / "a.jsonl")
    b.to_jsonl(tmp_path / "b.jsonl")
    return tmp_path / "a.jsonl", tmp_path / "b.jsonl"


def test_compare_prints_a_hostile_policy_name_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _hostile_files(tmp_path)
    assert main(["compare", str(a), str(b), "--measures", "tmr", "--resamples", "10"]) == 0
    out = capsys.readouterr().out
    assert not ACTIVE.search(out)
    heading, table = out.split("\n", 1)
    assert heading.startswith("alpha\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07\\r\\ntmr        1.0000\\u202eevil\\x9b31m  vs  beta")
    assert heading.endswith("(2 contexts)")  # one line: the name cannot print a fake result line
    assert re.search(r"^tmr +0\.5000", table, re.M) and not re.search(r"^tmr +1\.0000", table, re.M)


def test_error_messages_and_warnings_are_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _hostile_files(tmp_path)
    b = Responses({"c1": Response(Act.parse("hello()")), "\x1b[2Jc3": Response(Act.parse("bye()"))})
    b.to_jsonl(tmp_path / "other.jsonl")
    assert main(["compare", str(a), str(tmp_path / "other.jsonl"), "--measures", "tmr"]) == 2
    err = capsys.readouterr().err
    assert "simscore compare: error:" in err and not ACTIVE.search(err)



def test_warnings_shown_while_a_command_runs_are_inert(capsys: pytest.CaptureFixture[str]) -> None:
    from simscore.app.cli import _inert_terminal

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with _inert_terminal():
            warnings.warn("file says \x1b]0;title\x07", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err == "simscore: warning: UserWarning: file says \\x1b]0;title\\x07\n"
    assert not ACTIVE.search(err)


def test_contexts_info_prints_hostile_metadata_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    belief = BeliefState(method={"byconstraints": 1.0})
    hostile = ContextSet([Context("c1", belief, {"source": "col\x1b[2J\nby method:", "turn_index": 0})],
                         name="set\x1b]0;t\x07")
    hostile.to_jsonl(tmp_path / "c.jsonl")
    assert main(["contexts", "info", str(tmp_path / "c.jsonl")]) == 0
    out = capsys.readouterr().out
    assert not ACTIVE.search(out)
    assert "  col\\x1b[2J\\nby method:" in out and out.count("by method:") == 2  # the heading and the escaped value


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://evil","x")', '\'=HYPERLINK("http://evil","x")'),
        ("+1+cmd", "'+1+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("'=x", "''=x"),
        ("-1", "-1"),
        ("+2.5e3", "+2.5e3"),
        (".5", ".5"),
        ("plain", "plain"),
        ("'quoted", "'quoted"),
        ("", ""),
    ],
)
def test_spreadsheet_cells_never_run_and_read_back(cell: str, written: str) -> None:
    assert spreadsheet_cell(cell) == written
    assert read_spreadsheet_cell(written) == cell


def test_numbers_stay_numbers_in_a_frame() -> None:
    import pandas as pd

    frame = pd.DataFrame({"tmr": [-1.0, 0.5], "note": ["-x", "ok"], "turn": [1, 2]},
                         index=pd.Index(["=a()", "b"], name="context_id"))
    safe = spreadsheet_frame(frame)
    assert safe.index.tolist() == ["'=a()", "b"] and safe["note"].tolist() == ["'-x", "ok"]
    assert safe["tmr"].tolist() == [-1.0, 0.5] and safe["turn"].dtype == frame["turn"].dtype
    plain = frame.iloc[[1]]
    assert spreadsheet_frame(plain) is plain  # nothing to change: no copy


def test_csv_outputs_neutralise_formulas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ['=HYPERLINK("http://x","y")', "-1", "@cmd", "c4"]
    a = Responses({i: Response(Act.parse("hello()"), "+ 1 for that") for i in ids})
    b = Responses({i: Response(Act.parse("bye()"), "-") for i in ids})
    a.to_jsonl(tmp_path / "a.jsonl")
    b.to_jsonl(tmp_path / "b.jsonl")
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr",
                 "--out", str(tmp_path / "s.csv")]) == 0
    rows = list(csv.reader((tmp_path / "s.csv").read_text(encoding="utf-8").splitlines()))
    assert [row[0] for row in rows] == ["context_id", '\'=HYPERLINK("http://x","y")', "-1", "'@cmd", "c4"]
    assert [row[1] for row in rows[1:]] == ["0.0", "0.0", "0.0", "0.0"]  # numbers stay numbers (every digit kept)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--measures", "tmr",
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out == (tmp_path / "s.csv").read_text(encoding="utf-8")
    # the responses CSV: written inert, read back exactly
    write_responses_csv(tmp_path / "r.csv", a)
    text = (tmp_path / "r.csv").read_text(encoding="utf-8")
    assert "\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",hello(),'+ 1 for that\n" in text
    assert dict(read_responses_csv(tmp_path / "r.csv")) == dict(a)


def test_view_title_escapes_every_html_special() -> None:
    page = render_page({"a": "<b>'x'</b>", "b": '"&"', "total": 0, "measures": [], "has_contexts": False, "rows": []})
    title = re.search(r"<title>(.*?)</title>", page).group(1)  # type: ignore[union-attr]
    assert title == "simscore view: &lt;b&gt;&#x27;x&#x27;&lt;/b&gt; vs &quot;&amp;&quot;"


def test_report_title_and_command_cannot_inject_markdown() -> None:
    from simscore.app.report.document import build_report

    record = {"title": "Run <img src=x onerror=alert(1)>\n# fake heading [x](javascript:alert(1))",
              "command": "simscore run a.toml --out 'x\n```\n<script>alert(1)</script>'"}
    text = build_report({}, record)
    assert text.startswith("# Run &lt;img src=x onerror=alert(1)> # fake heading [x]\\(javascript:alert(1))\n")
    block = text[text.index("The command that produced this run:"):]
    fence = block.splitlines()[2][: -len("sh")]
    assert fence == "````" and block.splitlines()[3:6] == ["simscore run a.toml --out 'x", "```", "<script>alert(1)</script>'"]
    assert block.splitlines()[6] == fence  # the ``` inside the command does not end the block


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<b>bold</b>", "&lt;b>bold&lt;/b>"),
        ("<!-- hidden -->", "&lt;!-- hidden -->"),
        ("![](http://tracker/p.png)", "![]\\(http://tracker/p.png)"),
        ("a\r\n* item", "a * item"),
        ("x < y, [1, 2], use_cos, `code`", "x < y, [1, 2], use_cos, `code`"),
    ],
)
def test_markdown_text(text: str, shown: str) -> None:
    from simscore.io.untrusted import markdown_text

    assert markdown_text(text) == shown
