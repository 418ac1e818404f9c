"""Strings from files made inert where they are shown: a terminal, a spreadsheet, a web page.

A responses file, a context set or a dialogue log is data from someone else. Its strings
(policy names, context ids, acts, texts, metadata) reach places where some characters are
instructions:

* **a terminal** runs escape sequences: ``ESC [ 2 J`` clears the screen, ``ESC ] 0 ; ... BEL``
  sets the window title, a carriage return or a line break in a name prints a fake line, and
  the bidirectional overrides (U+202A-U+202E, U+2066-U+2069) show text in another order than
  it is stored. :func:`terminal_text` writes every C0 and C1 control character, DEL and those
  format characters as visible escapes (``\\x1b``, ``\\u202e``); the ``simscore`` command
  passes everything it prints through it (:class:`TerminalStream`).
* **a spreadsheet** runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some,
  a tab or a carriage return) as a formula: ``=HYPERLINK("http://...")`` in a context id
  becomes a live link. :func:`spreadsheet_cell` prefixes such a text cell with an apostrophe,
  which spreadsheets read as "this is text" and do not show; a cell that is a plain number
  (``-1``, ``+2.5e3``) stays as it is, and numbers in numeric columns are never touched.
  :func:`read_spreadsheet_cell` removes the apostrophe again, so simscore's own CSV files
  read back exactly (a text that itself starts with apostrophes and then one of those
  characters gets one more apostrophe, and loses one on reading).
* **a web page** runs markup: :func:`html.escape` (with quotes) for text in HTML, and JSON
  with ``<``, ``>``, ``&`` escaped inside ``<script>`` (see :mod:`simscore.app.inspect.view_page`).
* **Markdown** (``report.md``, ``explain.md``, opened in a viewer that renders HTML) runs what
  a table title or a cell brings: an HTML tag or comment, a link or an image (which a viewer
  loads), a line break that starts a heading or a list. :func:`markdown_text` writes ``<``
  before a tag as ``&lt;``, breaks the ``](`` of links and images, escapes ``|`` and makes the
  text one line; ordinary text (``TMR < 1``, ``[0.88, 1.00]``, ``use_cos``) is unchanged.
  :func:`code_fence` gives a fenced code block a fence that its text cannot close.

Examples
--------
>>> print(terminal_text("alpha\\x1b[2J\\x1b]0;pwned\\x07\\ntmr 1.0000"))
alpha\\x1b[2J\\x1b]0;pwned\\x07\\ntmr 1.0000
>>> spreadsheet_cell('=HYPERLINK("http://x")'), spreadsheet_cell("-1.5"), spreadsheet_cell("c-1")
('\\'=HYPERLINK("http://x")', '-1.5', 'c-1')
>>> read_spreadsheet_cell(spreadsheet_cell("@SUM(A1)"))
'@SUM(A1)'
"""

from __future__ import annotations

import codecs
import re
from typing import IO, Any

__all__ = [
    "terminal_text",
    "TerminalStream",
    "spreadsheet_cell",
    "read_spreadsheet_cell",
    "spreadsheet_frame",
    "FORMULA_STARTS",
    "markdown_text",
    "code_fence",
]

# C0 controls (but line feed and tab, handled by the caller's choice), DEL, C1 controls, and
# the format characters that reorder or hide text: the Arabic letter mark, the directional
# marks, the embeddings and overrides, the isolates, and the line and paragraph separators.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_CONTROL_OR_BREAK = re.compile(f"[{_CONTROLS}\n\t]")


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str, *, keep_lines: bool = False) -> str:
    """``text`` with every character a terminal would act on written as a visible escape.

    Parameters
    ----------
    text : str
    keep_lines : bool
        Keep line feeds and tabs (for a whole multi-line output); by default they are escaped
        too, so a value from a file cannot start a line of its own.

    >>> terminal_text("ok\\u202edcba"), terminal_text("a\\tb\\n", keep_lines=True)
    ('ok\\\\u202edcba', 'a\\tb\\n')
    """
    pattern = _CONTROL if keep_lines else _CONTROL_OR_BREAK
    return pattern.sub(_escape, text) if pattern.search(text) else text


class TerminalStream:
    """A text stream that writes through :func:`terminal_text` (line feeds and tabs kept).

    ``simscore``'s command line wraps standard output in it while a command runs, so nothing a
    command prints, whatever file it came from, can move the cursor, clear the screen or retitle
    the window. A character the stream's encoding cannot hold (``café`` on an ASCII or
    ``→`` on a Latin-1 standard output, ``PYTHONIOENCODING=ascii``) is written as its Python
    escape (``caf\\xe9``), as standard error does, instead of failing the command after its
    work. Every other attribute is the wrapped stream's.

    >>> import io
    >>> out = io.StringIO()
    >>> TerminalStream(out).write("name: \\x1b[31mred\\n")
    15
    >>> out.getvalue()
    'name: \\\\x1b[31mred\\n'
    >>> ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    >>> TerminalStream(ascii_out).write("café → ok\\n")
    10
    >>> ascii_out.flush(); ascii_out.buffer.getvalue()
    b'caf\\\\xe9 \\\\u2192 ok\\n'
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        encoding = getattr(stream, "encoding", None)
        try:
            name = codecs.lookup(encoding).name if isinstance(encoding, str) else "utf-8"
        except LookupError:
            name = "utf-8"
        #: The encoding to fit text to, or None where it holds every character (UTF-8, UTF-16, UTF-32).
        self._narrow = None if name.startswith(("utf-8", "utf-16", "utf-32")) else name

    def write(self, text: str) -> int:
        shown = terminal_text(text, keep_lines=True)
        if self._narrow is not None:
            shown = shown.encode(self._narrow, "backslashreplace").decode(self._narrow)
        self._stream.write(shown)
        return len(text)  # as a text stream counts: the characters it was given

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


#: Characters that make a spreadsheet read a text cell as a formula when it starts with one.
FORMULA_STARTS = "=+-@\t\r"
_FORMULA = re.compile(f"'*[{re.escape(FORMULA_STARTS)}]")
_ESCAPED = re.compile(f"'+[{re.escape(FORMULA_STARTS)}]")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text, never runs: ``value`` with a leading apostrophe if needed.

    Only text is changed, and only when it starts (after any apostrophes) with one of
    :data:`FORMULA_STARTS` and is not a plain number.

    >>> spreadsheet_cell("+33 1 23"), spreadsheet_cell("+33"), spreadsheet_cell(-3.0), spreadsheet_cell("'=x")
    ("'+33 1 23", '+33', -3.0, "''=x")
    """
    if isinstance(value, str) and _FORMULA.match(value) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def read_spreadsheet_cell(text: str) -> str:
    """The text :func:`spreadsheet_cell` was given: one apostrophe less before a formula character.

    >>> read_spreadsheet_cell("'=1+1"), read_spreadsheet_cell("'quoted"), read_spreadsheet_cell("''-x")
    ('=1+1', "'quoted", "'-x")
    """
    return text[1:] if _ESCAPED.match(text) else text


def spreadsheet_frame(frame: Any) -> Any:
    """A copy of a :class:`pandas.DataFrame` whose text cells (and text index) went through :func:`spreadsheet_cell`.

    Numeric columns are returned as they are; a frame without a cell to change is returned
    itself (no copy), so the common case costs one scan of its text columns.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"tmr": [1.0, 0.0]}, index=pd.Index(["=cmd()", "c2"], name="context_id"))
    >>> spreadsheet_frame(frame).index.tolist()
    ["'=cmd()", 'c2']
    """
    import pandas as pd

    def needs(values: Any) -> bool:
        return any(isinstance(v, str) and _FORMULA.match(v) for v in values)

    def text(dtype: Any) -> bool:
        return bool(pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype))

    columns = [c for c in frame.columns if text(frame[c].dtype) and needs(frame[c].array)]
    index_needs = text(frame.index.dtype) and needs(frame.index)
    if not columns and not index_needs:
        return frame
    out = frame.copy()
    for column in columns:
        out[column] = [spreadsheet_cell(v) for v in frame[column].array]
    if index_needs:
        out.index = pd.Index([spreadsheet_cell(v) for v in frame.index], name=frame.index.name)
    return out


_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")


def markdown_text(text: str) -> str:
    """``text`` safe in one line of Markdown (a table cell, a heading): no tag, link, image or line break.

    >>> markdown_text('<img src=x onerror=alert(1)> [click](javascript:x) a|b\\n# H')
    '&lt;img src=x onerror=alert(1)> [click]\\\\(javascript:x) a\\\\|b # H'
    >>> markdown_text("TMR < 1, CI [0.884, 1.000], use_cos")
    'TMR < 1, CI [0.884, 1.000], use_cos'
    """
    text = terminal_text(_LINE_BREAKS.sub(" ", text), keep_lines=True)
    return _TAG.sub("&lt;", text).replace("](", "]\\(").replace("|", "\\|")


def code_fence(text: str) -> str:
    """A backtick fence for a code block holding ``text``: longer than any run of backticks in it.

    >>> code_fence("echo hi"), code_fence("a ```` b")
    ('```', '`````')
    """
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)
