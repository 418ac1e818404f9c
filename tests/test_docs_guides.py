"""Every python block of the README and of the guide pages (``docs/guide/*.md``) runs, and prints what the page says.

Each block runs on its own in a fresh interpreter (``python -c BLOCK``) from the repository's
root, so it sees what a reader who pastes it sees: the checkout's packages, the shipped example
files (``examples/...``) and nothing the other blocks defined. It must exit 0 without a
traceback, and leave the repository as it found it (a block writes only into a temporary folder).

A block is marked by HTML comments on the lines right above its opening fence, one a line:

* ``<!-- not run: REASON -->`` — not run here (a model download, minutes of training, a server,
  a fragment of the reader's own program); the reason is required, and only a few blocks may
  carry it (:data:`MAX_NOT_RUN`);
* ``<!-- extra: NAME -->`` — needs the optional extra NAME (``conftest.EXTRAS``): skipped, naming
  it, where it is not installed;
* ``<!-- slow -->`` — takes more than a few seconds (model loading, training): the ``slow`` mark.

A ``text`` block marked ``<!-- output -->`` right after a python block (blank lines between
allowed) is what that block prints: its standard output must be exactly that, line for line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md")))

#: At most this many blocks may be marked ``not run``: the rest of the documentation is tested.
MAX_NOT_RUN = 4
#: Seconds one block may take (the slowest, loading the text measures' models, takes about 20).
TIMEOUT = 300

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARK = re.compile(r"^<!--\s*(not run|extra|slow|output)\s*(?::\s*(.*?))?\s*-->\s*$")
_COMMENT = re.compile(r"^<!--.*-->\s*$")


@dataclass
class Block:
    """One python block of a page: where it starts, its code, its marks and the output the page states."""

    page: Path
    line: int  # of the opening fence, 1-based
    code: str
    marks: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{_shown(self.page)}:{self.line}"


def _shown(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


def _marks_above(lines: list[str], fence: int, problems: list[str], where: str) -> dict[str, str]:
    """The marks in the comment lines directly above line index ``fence``."""
    marks: dict[str, str] = {}
    k = fence - 1
    while k >= 0 and _COMMENT.match(lines[k]):
        match = _MARK.match(lines[k])
        if match is None:
            if not re.match(r"^<!--\s*(main|test|docs)-command\s*-->", lines[k]):
                problems.append(f"{where}: unknown mark {lines[k].strip()!r}")
        else:
            key, value = match.group(1), (match.group(2) or "").strip()
            if key in marks:
                problems.append(f"{where}: mark {key!r} given twice")
            marks[key] = value
        k -= 1
    return marks


def _closing(lines: list[str], start: int, where: str) -> int:
    for k in range(start + 1, len(lines)):
        if lines[k].startswith("```"):
            return k
    raise AssertionError(f"{where}: a block that never closes")


def blocks_of(page: Path) -> list[Block]:
    """Every python block of ``page`` with its marks and its stated output."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    python_end = None  # the line index of the last python block's closing fence
    k = 0
    while k < len(lines):
        fence = _FENCE.match(lines[k])
        if fence is None:
            k += 1
            continue
        where = f"{_shown(page)}:{k + 1}"
        end = _closing(lines, k, where)
        problems: list[str] = []
        marks = _marks_above(lines, k, problems, where)
        if fence.group(1) == "python":
            if "output" in marks:
                problems.append(f"{where}: <!-- output --> marks a text block, not a python block")
            if "not run" in marks and not marks["not run"]:
                problems.append(f"{where}: <!-- not run --> without a reason")
            found.append(Block(page, k + 1, "\n".join(lines[k + 1:end]) + "\n", marks, problems=problems))
            python_end = end
        elif "output" in marks:
            right_after = python_end is not None and all(
                not line.strip() or _COMMENT.match(line) for line in lines[python_end + 1:k])
            if fence.group(1) != "text" or not right_after or len(marks) > 1:
                problems.append(f"{where}: <!-- output --> must mark a text block right after a python block")
                found.append(Block(page, k + 1, "", problems=problems))  # reported, never run
            else:
                found[-1].output = "\n".join(lines[k + 1:end]) + "\n"
        elif marks:
            problems.append(f"{where}: marks on a {fence.group(1) or 'plain'} block, which is never run")
            found.append(Block(page, k + 1, "", problems=problems))
        if fence.group(1) != "python":
            python_end = None
        k = end + 1
    return found


BLOCKS = [block for page in PAGES for block in blocks_of(page)]
RUNNABLE = [block for block in BLOCKS if block.code]


def _params() -> list:
    params = []
    for block in RUNNABLE:
        marks = []
        if "not run" in block.marks:
            marks.append(pytest.mark.skip(reason=f"not run: {block.marks['not run']}"))
        if "slow" in block.marks:
            marks.append(pytest.mark.slow)
        if block.marks.get("extra"):
            marks.append(pytest.mark.extra(*[name.strip() for name in block.marks["extra"].split(",")]))
        params.append(pytest.param(block, marks=marks, id=block.name))
    return params


def test_the_pages_and_their_blocks_are_found():
    assert (ROOT / "docs" / "guide").is_dir() and len(PAGES) > 10
    assert len(RUNNABLE) >= 8, [block.name for block in RUNNABLE]


def test_every_mark_is_known_and_in_its_place():
    assert [problem for block in BLOCKS for problem in block.problems] == []


def test_only_a_few_blocks_are_not_run_and_each_says_why():
    not_run = {block.name: block.marks["not run"] for block in RUNNABLE if "not run" in block.marks}
    assert len(not_run) <= MAX_NOT_RUN, not_run
    assert all(len(reason.split()) >= 3 for reason in not_run.values()), not_run


def test_the_readme_example_states_what_it_prints():
    readme = [block for block in RUNNABLE if block.page.name == "README.md"]
    assert readme and all("not run" not in block.marks for block in readme)
    assert any(block.output for block in readme), "the README's API example states its output"


def test_the_marks_are_read_as_the_module_says(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("\n".join([
        "<!-- not run: needs a server running -->", "```python", "ask()", "```", "",
        "<!-- extra: text -->", "<!-- slow -->", "```python", "print(1)", "```", "",
        "<!-- output -->", "```text", "1", "```", "",
        "<!-- not run -->", "```python", "x = 1", "```", "Words between.",
        "<!-- output -->", "```text", "2", "```",
        "<!-- typo -->", "```python", "y = 2", "```",
        "<!-- slow -->", "```bash", "ls", "```", "",
    ]), encoding="utf-8")
    first, second, third, stray, fourth, bash = blocks_of(page)
    assert (first.marks, first.output, first.problems) == ({"not run": "needs a server running"}, None, [])
    assert (second.marks, second.output, second.problems) == ({"extra": "text", "slow": ""}, "1\n", [])
    assert third.problems == ["page.md:18: <!-- not run --> without a reason"]
    assert stray.problems == ["page.md:23: <!-- output --> must mark a text block right after a python block"]
    assert fourth.problems == ["page.md:27: unknown mark '<!-- typo -->'"]
    assert bash.problems == ["page.md:31: marks on a bash block, which is never run"]


def _untracked() -> set[str] | None:
    """The repository's untracked files (ignored ones aside), or None outside a git checkout."""
    if not (ROOT / ".git").exists():
        return None
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None
    return {line[3:] for line in done.stdout.splitlines() if line.startswith("??")}


@pytest.mark.parametrize("block", _params())
def test_the_block_runs_and_prints_what_the_page_says(block: Block):
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    before = _untracked()
    done = subprocess.run([sys.executable, "-c", block.code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    after = _untracked()
    assert done.returncode == 0 and "Traceback" not in done.stderr, (
        f"{block.name} exited with {done.returncode}:\n{done.stderr[-4000:]}")
    if before is not None and after is not None:
        assert sorted(after - before) == [], f"{block.name} wrote into the repository"
    if block.output is not None:
        printed = [line.rstrip() for line in done.stdout.rstrip("\n").split("\n")]
        stated = [line.rstrip() for line in block.output.rstrip("\n").split("\n")]
        assert printed == stated, f"{block.name} printed:\n{done.stdout}"
