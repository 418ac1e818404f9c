"""Adapters that make other kinds of dialogue policies usable as simscore policies.

Each adapter satisfies :class:`simscore.policy.Policy` (``respond(context) -> Response``)
and has the ``name`` and ``provenance`` attributes :func:`simscore.policy.run_policy`
records with the responses:

* :class:`CallablePolicy` — a plain function of the context returning an action, a text,
  both, or a :class:`~simscore.responses.Response`;
* :class:`LoggedPolicy` — responses logged in a file (simscore's JSON Lines responses
  format, or CSV with columns ``context_id, action, text``), looked up by context id;
* :class:`ConvLabPolicy` — a ConvLab-style policy whose ``predict(state)`` returns
  ``[[intent, domain, slot, value], ...]``; the state dict, in ConvLab-3's or ConvLab-2's
  layout, is built from the context by :func:`~policies.convlab.to_convlab_state`
  (re-exported here), and a stochastic policy is made deterministic by reseeding the global
  generators per context (see :mod:`policies.convlab` for the layouts and for running
  ConvLab policies in their own environment).
* :class:`ObservationPolicy` — a function of the Gymnasium environment's observation
  (:func:`observation_for`, the belief feature vector) returning a summary action index,
  e.g. a trained neural network; the action becomes a master act and a text as for the
  GP-SARSA policy. stable-baselines3 models: :class:`simscore.integrations.sb3.SB3Policy`.

:func:`read_responses` reads a response log in either format (by suffix or content);
:func:`read_responses_csv` and :func:`write_responses_csv` read and write the CSV form.

Contexts only need an ``id`` attribute, plus ``belief`` (a
:class:`contexts.belief.BeliefState`) and optionally ``metadata`` for :class:`ConvLabPolicy`,
so :class:`contexts.context.Context` objects and light stand-ins such as
:class:`types.SimpleNamespace` both work.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from contexts.belief import BeliefState
from contexts.domain import default_domain
from policies.convlab import StateFormat, check_state_format, context_seed, reseeded, to_convlab_state
from policies.domain_cache import domain_cache
from policies.features import belief_features
from policies.nlg import TemplateNLG
from simscore.acts import Act
from simscore.checks import check_int
from simscore.errors import (
    ActParseError,
    ContextMismatchError,
    FileFormatError,
    InvalidContextError,
    InvalidResponseError,
)
from simscore.io import atomic_open, dumps
from simscore.responses import Response, Responses

if TYPE_CHECKING:
    from contexts.domain import Domain
    from policies.summary import SummaryActions

__all__ = [
    "CallablePolicy",
    "ObservationPolicy",
    "observation_for",
    "action_mask_for",
    "LoggedPolicy",
    "ConvLabPolicy",
    "to_convlab_state",
    "read_responses",
    "read_responses_csv",
    "write_responses_csv",
    "EMPTY_ACT",
    "CSV_COLUMNS",
]

#: The action :class:`ConvLabPolicy` returns when the wrapped policy predicts no act (``[]``).
EMPTY_ACT = Act("none")

#: Columns of a CSV response log, in the order :func:`write_responses_csv` writes them.
CSV_COLUMNS: tuple[str, ...] = ("context_id", "action", "text")

#: A string "looks like an act" when it is ``intent(...)``: identifier intents joined by
#: ``+``, immediately followed by a parenthesised list, nothing after it. Prose almost never
#: has this shape (it has spaces before a parenthesis, or text after it).
_ACT_LIKE = re.compile(r"\s*[A-Za-z0-9_\-]+(?:\+[A-Za-z0-9_\-]+)*\(.*\)\s*\Z", re.DOTALL)

_KINDS = ("auto", "action", "text")
_JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
#: Up to this many logged ids are searched for a "did you mean" hint.
_HINT_LIMIT = 20_000


# -- shared helpers ----------------------------------------------------------------------


def _context_label(context: Any) -> str:
    """The context's id for messages (its repr if it has no string id)."""
    context_id = getattr(context, "id", None)
    return repr(context_id) if isinstance(context_id, str) else repr(context)


def _qualified_name(obj: Any) -> str:
    """``module.qualname`` of a function or of an object's class (for provenance)."""
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", type(obj).__name__)
    return f"{module}.{qualname}" if module else qualname


def _provenance(facts: Mapping[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """``facts`` updated by the user's ``extra`` entries, checked to be JSON-serialisable."""
    if extra is not None and not isinstance(extra, Mapping):
        raise TypeError(f"provenance must be a mapping or None, got {type(extra).__name__}")
    out = dict(facts)
    out.update(extra or {})
    try:
        dumps(out)
    except (TypeError, ValueError) as exc:
        raise InvalidResponseError(f"provenance must be JSON-serialisable: {exc}") from None
    return out


def _check_name(name: Any) -> None:
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"name must be a non-empty string or None, got {name!r}")


# -- plain callables ---------------------------------------------------------------------


class CallablePolicy:
    """A plain function ``fn(context)`` used as a policy.

    ``fn`` may return

    * a :class:`~simscore.responses.Response` (used as is);
    * an :class:`~simscore.acts.Act` (an action-only response);
    * a ``str`` — an action or a text, as ``kind`` says (below);
    * a tuple ``(action, text)``: ``action`` an ``Act``, a PyDial act string (always parsed
      with :meth:`Act.parse <simscore.acts.Act.parse>`) or None; ``text`` a ``str`` or None;
      not both None.

    Parameters
    ----------
    fn : callable
        ``fn(context)``; it must be deterministic (same context, same response) for the
        comparison to mean anything — the adapter cannot check that.
    kind : {"auto", "action", "text"}, default "auto"
        How a returned ``str`` is read. ``"action"``: a PyDial act string, parsed with
        ``Act.parse``. ``"text"``: the prompt, never parsed. ``"auto"``: a string shaped
        ``intent(...)`` (identifier intents joined by ``+``, an opening parenthesis right
        after the intent, a closing one at the end, e.g. ``request(food)``, ``hello()``) is
        parsed as an act — and if it does not parse that is an error, not a silent fall-back
        to text; any other string is a text. Use ``"text"`` for a text policy whose prompts
        could look like ``word(...)``. ``kind`` does not affect other return types.
    name : str, optional
        Name recorded by :func:`~simscore.policy.run_policy` (default ``fn.__name__``, or the
        class name of a callable object).
    provenance : mapping, optional
        JSON-serialisable facts (checkpoint, seed, ...) added to the adapter's own
        ``{"adapter": "callable", "function": "<module>.<qualname>", "kind": kind}``; given
        keys win.

    Raises
    ------
    InvalidResponseError
        From :meth:`respond`, naming the context id and what was wrong: an unsupported
        return type (named), an act string that does not parse, a tuple of the wrong shape.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simscore.policy import run_policy
    >>> def ask(context):
    ...     return "request(food)" if context.id == "c1" else "Enjoy your meal!"
    >>> policy = CallablePolicy(ask)
    >>> responses = run_policy(policy, [SimpleNamespace(id="c1"), SimpleNamespace(id="c2")])
    >>> responses["c1"], responses["c2"]
    (Response(action=Act.parse('request(food)'), text=None), Response(action=None, text='Enjoy your meal!'))
    >>> responses.policy, responses.provenance["kind"]
    ('ask', 'auto')
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        kind: Literal["auto", "action", "text"] = "auto",
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable (context -> response), got {type(fn).__name__}")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of 'auto', 'action', 'text', got {kind!r}")
        _check_name(name)
        self.fn = fn
        self.kind = kind
        self.name: str = name if name is not None else getattr(fn, "__name__", None) or type(fn).__name__
        self.provenance: dict[str, Any] = _provenance(
            {"adapter": "callable", "function": _qualified_name(fn), "kind": kind}, provenance
        )

    def __repr__(self) -> str:
        return f"CallablePolicy(name={self.name!r}, kind={self.kind!r})"

    def respond(self, context: Any) -> Response:
        """Call ``fn(context)`` and convert what it returns into a :class:`Response`."""
        return self._convert(self.fn(context), context)

    def _fail(self, context: Any, message: str) -> InvalidResponseError:
        return InvalidResponseError(f"callable policy {self.name!r}, context {_context_label(context)}: {message}")

    def _parse(self, text: str, context: Any, what: str) -> Act:
        try:
            return Act.parse(text)
        except ActParseError as exc:
            raise self._fail(context, f"{what} {text!r} is not a valid act ({exc.reason})") from None

    def _convert(self, result: Any, context: Any) -> Response:
        if isinstance(result, Response):
            return result
        if isinstance(result, Act):
            return Response(result)
        if isinstance(result, str):
            if self.kind == "text":
                return Response(text=result)
            if self.kind == "action":
                return Response(self._parse(result, context, "returned string"))
            if _ACT_LIKE.match(result):
                return Response(
                    self._parse(result, context, "returned string (shaped like an act; use kind='text' for prose)")
                )
            return Response(text=result)
        if isinstance(result, tuple):
            return self._convert_pair(result, context)
        hint = " (for ConvLab act lists use ConvLabPolicy)" if isinstance(result, list) else ""
        raise self._fail(
            context,
            f"returned {type(result).__name__}, expected a Response, an Act, a str or an "
            f"(action, text) tuple{hint}",
        )

    def _convert_pair(self, result: tuple[Any, ...], context: Any) -> Response:
        if len(result) != 2:
            raise self._fail(context, f"returned a tuple of {len(result)} elements, expected (action, text)")
        action, text = result
        if isinstance(action, str):
            action = self._parse(action, context, "action")
        elif action is not None and not isinstance(action, Act):
            raise self._fail(
                context, f"the action of the returned tuple is {type(action).__name__}, expected an Act, a str or None"
            )
        if text is not None and not isinstance(text, str):
            raise self._fail(
                context, f"the text of the returned tuple is {type(text).__name__}, expected a str or None"
            )
        if action is None and text is None:
            raise self._fail(context, "returned (None, None): a response needs an action, a text, or both")
        return Response(action, text)


# -- responses logged in a file -----------------------------------------------------------


def read_responses_csv(path: str | os.PathLike[str], *, policy: str | None = None) -> Responses:
    """Read a CSV response log: a header row, then one response per row.

    Columns (any order): ``context_id`` (required, non-empty, unique), ``action`` (a PyDial
    act string) and ``text``; at least one of ``action`` and ``text`` must be present, and
    no other column. An empty cell means missing (so a CSV log cannot hold an empty text
    ``""``; use JSON Lines for that); every row needs an action or a text. Blank lines are
    skipped; the file is UTF-8 (a byte-order mark is accepted).

    Parameters
    ----------
    path : path-like
    policy : str, optional
        Policy name of the result (default: the file name without its suffix).

    Returns
    -------
    Responses
        In file order, with empty provenance.

    Raises
    ------
    FileFormatError
        Naming the file and the (first physical) line of the bad row: missing or unknown
        columns, a row with the wrong number of cells, an empty or repeated context id, an
        action that does not parse, a row with neither action nor text, malformed CSV.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = path.write_text('context_id,action,text\\nc1,request(food),What food?\\nc2,,Bye!\\n')
    >>> r = read_responses_csv(path)
    >>> r.policy, r["c1"].action, r["c2"]
    ('log', Act.parse('request(food)'), Response(action=None, text='Bye!'))
    """
    p = Path(path)
    try:
        handle = open(p, encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise FileFormatError(p, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(p, "is a directory, expected a file") from None
    with handle:
        reader = csv.reader(handle, strict=True)
        try:
            pairs = _read_csv_rows(p, reader)
        except csv.Error as exc:
            raise FileFormatError(p, f"malformed CSV ({exc})", line=reader.line_num) from None
        except UnicodeDecodeError as exc:
            raise FileFormatError(p, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return Responses(pairs, policy=p.stem if policy is None else policy)


def _read_csv_rows(path: Path, reader: Any) -> dict[str, Response]:
    header: list[str] | None = None
    previous = 0
    for row in reader:
        start, previous = previous + 1, reader.line_num
        if row:
            header = [cell.strip() for cell in row]
            break
    if header is None:
        raise FileFormatError(path, "empty file, expected a header row 'context_id,action,text'", line=1)
    header_line = start
    unknown = [cell for cell in header if cell not in CSV_COLUMNS]
    if unknown:
        raise FileFormatError(
            path,
            f"unknown column(s) {', '.join(map(repr, unknown))} in the header (expected {', '.join(CSV_COLUMNS)})",
            line=header_line,
        )
    repeated = sorted({cell for cell in header if header.count(cell) > 1})
    if repeated:
        raise FileFormatError(
            path, f"column(s) {', '.join(map(repr, repeated))} appear more than once", line=header_line
        )
    if "context_id" not in header:
        raise FileFormatError(path, "the header lacks the column 'context_id'", line=header_line)
    if "action" not in header and "text" not in header:
        raise FileFormatError(path, "the header needs a column 'action', 'text' or both", line=header_line)
    width = len(header)
    id_at = header.index("context_id")
    action_at = header.index("action") if "action" in header else None
    text_at = header.index("text") if "text" in header else None
    pairs: dict[str, Response] = {}
    first_line: dict[str, int] = {}
    parsed: dict[str, Act] = {}
    for row in reader:
        start, previous = previous + 1, reader.line_num
        if not row:
            continue
        if len(row) != width:
            raise FileFormatError(
                path, f"expected {width} cells ({', '.join(header)}), found {len(row)}", line=start
            )
        context_id = row[id_at]
        if not context_id:
            raise FileFormatError(path, "empty 'context_id'", line=start)
        if context_id in pairs:
            raise FileFormatError(
                path,
                f"context id {context_id!r} appears more than once (first on line {first_line[context_id]})",
                line=start,
            )
        action_text = row[action_at] if action_at is not None else ""
        text = row[text_at] if text_at is not None else ""
        action: Act | None = None
        if action_text:
            action = parsed.get(action_text)
            if action is None:
                try:
                    action = parsed[action_text] = Act.parse(action_text)
                except ActParseError as exc:
                    raise FileFormatError(path, f"column 'action': {exc}", line=start) from None
        if action is None and not text:
            raise FileFormatError(path, f"context {context_id!r} has neither an action nor a text", line=start)
        pairs[context_id] = Response(action, text or None)
        first_line[context_id] = start
    return pairs


def write_responses_csv(path: str | os.PathLike[str], responses: Responses | Mapping[str, Response]) -> None:
    """Write responses as a CSV response log (columns ``context_id, action, text``), atomically.

    Missing actions and texts are written as empty cells; the policy name and provenance are
    not stored (CSV has no header line for them — use
    :meth:`Responses.to_jsonl <simscore.responses.Responses.to_jsonl>` to keep them).

    Raises
    ------
    InvalidResponseError
        Naming the context whose text is ``""``: an empty cell reads back as missing, so an
        empty text cannot be stored in CSV.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> write_responses_csv(path, {"c1": Response(Act.parse('inform(name="la mimosa")'), "La Mimosa, then.")})
    >>> print(path.read_text(), end="")
    context_id,action,text
    c1,"inform(name=""la mimosa"")","La Mimosa, then."
    >>> dict(read_responses_csv(path)) == {"c1": Response(Act.parse('inform(name="la mimosa")'), "La Mimosa, then.")}
    True
    """
    rows = []
    for context_id, response in responses.items():
        if not isinstance(response, Response):
            raise InvalidResponseError(
                f"response for context {context_id!r} must be a Response, got {type(response).__name__}"
            )
        if response.text == "":
            raise InvalidResponseError(
                f"context {context_id!r}: an empty text cannot be written to CSV (an empty cell means "
                "missing); use Responses.to_jsonl"
            )
        action = "" if response.action is None else str(response.action)
        rows.append((context_id, action, response.text or ""))
    with atomic_open(path, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows)


def _file_format(path: Path, requested: str) -> str:
    if requested not in ("auto", "jsonl", "csv"):
        raise ValueError(f"format must be 'auto', 'jsonl' or 'csv', got {requested!r}")
    if requested != "auto":
        return requested
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except FileNotFoundError:
        raise FileFormatError(path, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(path, "is a directory, expected a file") from None
    return "jsonl" if head.startswith(b"{") else "csv"


def read_responses(
    path: str | os.PathLike[str], *, format: Literal["auto", "jsonl", "csv"] = "auto"  # noqa: A002
) -> Responses:
    """Read a response log: simscore's JSON Lines responses file or the CSV form.

    Parameters
    ----------
    path : path-like
    format : {"auto", "jsonl", "csv"}, default "auto"
        ``"jsonl"``: :meth:`Responses.read_jsonl <simscore.responses.Responses.read_jsonl>`;
        ``"csv"``: :func:`read_responses_csv`; ``"auto"``: by suffix (``.csv``; ``.jsonl``,
        ``.json``, ``.ndjson``), otherwise JSON Lines if the file starts with ``{`` and CSV
        if not.

    Raises
    ------
    FileFormatError
        Naming the file and the line of the first bad record.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "answers.txt"
    >>> _ = path.write_text("context_id,action\\nc1,bye()\\n")
    >>> read_responses(path)["c1"].action
    Act.parse('bye()')
    """
    p = Path(path)
    return Responses.read_jsonl(p) if _file_format(p, format) == "jsonl" else read_responses_csv(p)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise FileFormatError(path, "file not found") from None
    except IsADirectoryError:
        raise FileFormatError(path, "is a directory, expected a file") from None
    return digest.hexdigest()


class LoggedPolicy:
    """Responses logged earlier (e.g. by a system outside Python), replayed by context id.

    Build it with :meth:`from_file` (JSON Lines or CSV) or from a
    :class:`~simscore.responses.Responses` object.

    Parameters
    ----------
    responses : Responses
        The logged responses, keyed by context id.
    name : str, optional
        Default: ``responses.policy``, or ``"logged"`` if that is empty.
    provenance : mapping, optional
        JSON-serialisable facts added to (and overriding) ``responses.provenance``.
    source : str, optional
        Where the responses came from, used in error messages (default
        ``"<in-memory responses>"``; :meth:`from_file` passes the path).

    Attributes
    ----------
    responses : Responses
    source : str

    Raises
    ------
    simscore.errors.ContextMismatchError
        From :meth:`respond` (a ``KeyError``) for a context whose id is not in the log,
        naming the id, the source and the closest logged id.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from types import SimpleNamespace
    >>> from simscore.policy import run_policy
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "system_b.csv"
    >>> _ = path.write_text("context_id,action,text\\nc1,request(area),Which area?\\n")
    >>> policy = LoggedPolicy.from_file(path)
    >>> run_policy(policy, [SimpleNamespace(id="c1")])["c1"]
    Response(action=Act.parse('request(area)'), text='Which area?')
    >>> policy.respond(SimpleNamespace(id="c01"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simscore.errors.ContextMismatchError: context 'c01' is not in the response log .../system_b.csv
    (1 responses; closest id: 'c1')
    """

    def __init__(
        self,
        responses: Responses,
        *,
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
        source: str | None = None,
    ) -> None:
        if not isinstance(responses, Responses):
            raise TypeError(f"responses must be simscore.Responses, got {type(responses).__name__}")
        _check_name(name)
        self.responses = responses
        self.source = "<in-memory responses>" if source is None else str(source)
        self.name: str = name if name is not None else (responses.policy or "logged")
        self.provenance: dict[str, Any] = _provenance(responses.provenance, provenance)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        format: Literal["auto", "jsonl", "csv"] = "auto",  # noqa: A002 - the natural name
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> LoggedPolicy:
        """Read a response log.

        Parameters
        ----------
        path : path-like
        format : {"auto", "jsonl", "csv"}, default "auto"
            ``"jsonl"``: simscore's responses file
            (:meth:`Responses.read_jsonl <simscore.responses.Responses.read_jsonl>`).
            ``"csv"``: see :func:`read_responses_csv`. ``"auto"``: by suffix (``.csv``;
            ``.jsonl``, ``.json``, ``.ndjson``), otherwise JSON Lines if the file starts
            with ``{`` and CSV if not.
        name : str, optional
            Default: the policy name in the JSON Lines header, or the file name without
            suffix for CSV.
        provenance : mapping, optional
            Added to the log's own provenance (JSON Lines header) and to
            ``log_file`` (the path as given), ``log_format`` and ``log_sha256`` (the file's
            SHA-256); given keys win.

        Raises
        ------
        FileFormatError
            Naming the file and the line of the first bad record.
        """
        p = Path(path)
        chosen = _file_format(p, format)
        digest = _sha256(p)
        responses = read_responses(p, format=chosen)  # type: ignore[arg-type]
        facts = {**responses.provenance, "log_file": str(path), "log_format": chosen, "log_sha256": digest}
        return cls(
            responses,
            name=name,
            provenance=_provenance(facts, provenance),
            source=str(path),
        )

    def __repr__(self) -> str:
        return f"LoggedPolicy(name={self.name!r}, source={self.source!r}, n={len(self.responses)})"

    def __len__(self) -> int:
        return len(self.responses)

    def missing(self, contexts: Iterable[Any]) -> tuple[str, ...]:
        """Ids of the contexts that are not in the log, in order (check before a long run).

        >>> from types import SimpleNamespace
        >>> policy = LoggedPolicy(Responses({"c1": Response(text="Hi")}))
        >>> policy.missing([SimpleNamespace(id="c1"), SimpleNamespace(id="c7")])
        ('c7',)
        """
        return tuple(c.id for c in contexts if c.id not in self.responses)

    def respond(self, context: Any) -> Response:
        """The logged response for ``context.id``."""
        context_id = getattr(context, "id", None)
        if not isinstance(context_id, str):
            raise InvalidContextError(
                f"logged policy {self.name!r}: a context needs a string 'id' to look up, got {context!r}"
            )
        try:
            return self.responses[context_id]
        except KeyError:
            raise ContextMismatchError(self._missing_message(context_id)) from None

    def _missing_message(self, context_id: str) -> str:
        message = f"context {context_id!r} is not in the response log {self.source} ({len(self.responses)} responses"
        if 0 < len(self.responses) <= _HINT_LIMIT:
            close = difflib.get_close_matches(context_id, self.responses.ids, n=1, cutoff=0.6)
            if close:
                message += f"; closest id: {close[0]!r}"
        return message + ")"


# -- ConvLab-style policies ----------------------------------------------------------------


class ConvLabPolicy:
    """A ConvLab-style policy (``predict(state) -> [[intent, domain, slot, value], ...]``).

    For each context the adapter builds the ConvLab state with
    :func:`~policies.convlab.to_convlab_state` in the layout the policy reads
    (``state_format``), calls ``policy.init_session()`` (if the policy has one and ``reset``
    is true) and then ``policy.predict(state)``, and converts the acts with
    :meth:`Act.from_convlab <simscore.acts.Act.from_convlab>` (intents and slots
    lower-cased, slots qualified by domain: ``restaurant-food``). An empty act list becomes
    :data:`EMPTY_ACT` (``none()``), so two policies that both stay silent match. Acts in
    ConvLab-2's internal ``(domain, intent, slot, value)`` order are an error naming the act,
    not a misreading.

    ConvLab's rule-based MultiWOZ policy (ConvLab-2's ``RuleBasedMultiwozBot``, ConvLab-3's
    ``RulePolicy``) needs ``state_format="convlab2"`` and ``seed``: it reads
    ``belief_state[domain]["semi"]`` and draws from the global ``random`` module (against
    itself without a seed it matches in only a few per cent of the contexts). It also needs
    the user's acts, which contexts imported with :func:`contexts.import_convlab` carry.

    Parameters
    ----------
    policy : object
        Anything with ``predict(state)``.
    state_format : {"convlab3", "convlab2"}, default "convlab3"
        The state layout the policy reads (see :mod:`policies.convlab`).
    seed : int, optional
        Make a stochastic policy deterministic: before each context, reseed the global
        generators of ``random``, numpy and (if imported) torch with
        :func:`~policies.convlab.context_seed` ``(seed, context.id)`` and restore their
        states afterwards (:func:`~policies.convlab.reseeded`), around ``init_session``,
        ``predict`` and ``nlg``. The project never touches global random state on its own;
        this is the one exception, on request, because a third-party policy that draws from
        the global generators can be made deterministic no other way — and the caller's
        random streams are left exactly where they were. Each context gets its own stream,
        the same whatever the order contexts are run in (the ConvLab-side script
        ``examples/convlab_answer_states.py`` derives the same seeds). Default: no reseeding.
    domain : str, default "restaurant"
        ConvLab domain of the state's slots.
    nlg : callable, optional
        ``nlg(acts) -> str`` turning the predicted act list into the prompt (for a ConvLab
        NLG object pass its ``generate`` method). Without it responses are action-only.
    slot_names, min_probability
        As in :func:`~policies.convlab.to_convlab_state`.
    reset : bool, default True
        Call ``policy.init_session()`` before every prediction so a stateful policy answers
        each context as the first turn of a fresh session (responses must not depend on
        the order contexts are run in).
    name : str, optional
        Default: the policy's class name.
    provenance : mapping, optional
        JSON-serialisable facts added to the adapter's own (``adapter``, ``policy_class``,
        ``state_format``, ``reseed`` (the ``seed`` argument), ``domain``, ``nlg``,
        ``min_probability``, ``slot_names``); given keys win.

    Raises
    ------
    InvalidResponseError
        From :meth:`respond`, naming the context id: ``predict`` returned something that is
        not a list of ``[intent, domain, slot, value]`` strings (or acts in the wrong order),
        ``nlg`` returned a non-str, or ``predict`` failed with ``KeyError: 'semi'`` /
        ``'book'`` on a ConvLab-3 state (the message says to use ``state_format="convlab2"``).
    InvalidContextError
        With ``seed``, for a context without a string id.

    Examples
    --------
    >>> import random
    >>> from types import SimpleNamespace
    >>> class Shuffler:
    ...     def predict(self, state):
    ...         food = state["belief_state"]["restaurant"]["semi"]["food"]
    ...         if not food:
    ...             return [["Request", "Restaurant", random.choice(["Food", "Area"]), "?"]]
    ...         return [["Inform", "Restaurant", "Food", food]]
    >>> policy = ConvLabPolicy(Shuffler(), state_format="convlab2", seed=0, nlg=lambda acts: f"{len(acts)} act(s)")
    >>> context = SimpleNamespace(id="c1", belief=BeliefState(slots={"food": {"none": 1.0}}), metadata={})
    >>> answers = {policy.respond(context) for _ in range(5)}
    >>> answers
    {Response(action=Act.parse('request(restaurant-food)'), text='1 act(s)')}
    """

    def __init__(
        self,
        policy: Any,
        *,
        state_format: StateFormat = "convlab3",
        seed: int | None = None,
        domain: str = "restaurant",
        nlg: Callable[[list[list[str]]], str] | None = None,
        slot_names: Mapping[str, str] | None = None,
        min_probability: float = 0.0,
        reset: bool = True,
        name: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(getattr(policy, "predict", None)):
            raise TypeError(f"policy must have a predict(state) method, got {type(policy).__name__}")
        check_state_format(state_format)
        if seed is not None:
            seed = check_int("seed", seed)
        if not isinstance(domain, str) or not domain:
            raise TypeError(f"domain must be a non-empty string, got {domain!r}")
        if nlg is not None and not callable(nlg):
            hint = " (for a ConvLab NLG object pass its generate method)" if hasattr(nlg, "generate") else ""
            raise TypeError(f"nlg must be callable (acts -> str) or None, got {type(nlg).__name__}{hint}")
        _check_name(name)
        # validated by building one state now, not at the first context
        to_convlab_state(BeliefState(), state_format=state_format, domain=domain, slot_names=slot_names,
                         min_probability=min_probability)
        self.policy = policy
        self.state_format: StateFormat = state_format
        self.seed = seed
        self.domain = domain
        self.nlg = nlg
        self.slot_names = None if slot_names is None else dict(slot_names)
        self.min_probability = float(min_probability)
        self.reset = bool(reset)
        self.name: str = name if name is not None else type(policy).__name__
        self.provenance: dict[str, Any] = _provenance(
            {
                "adapter": "convlab",
                "policy_class": _qualified_name(type(policy)),
                "state_format": state_format,
                "reseed": seed,
                "domain": domain,
                "nlg": None if nlg is None else _qualified_name(nlg),
                "min_probability": self.min_probability,
                "slot_names": self.slot_names,
            },
            provenance,
        )

    def __repr__(self) -> str:
        return f"ConvLabPolicy(name={self.name!r}, state_format={self.state_format!r}, domain={self.domain!r})"

    def state(self, context: Any) -> dict[str, Any]:
        """The ConvLab state handed to ``predict`` for ``context`` (see :func:`~policies.convlab.to_convlab_state`)."""
        return to_convlab_state(
            context,
            state_format=self.state_format,
            domain=self.domain,
            slot_names=self.slot_names,
            min_probability=self.min_probability,
        )

    def respond(self, context: Any) -> Response:
        """Predict the ConvLab acts for ``context`` and convert them (and the NLG text)."""
        state = self.state(context)
        label = _context_label(context)
        if self.seed is None:
            acts, text = self._predict(state, label)
        else:
            context_id = getattr(context, "id", None)
            if not isinstance(context_id, str):
                raise InvalidContextError(
                    f"ConvLab policy {self.name!r}: reseeding per context needs a string context 'id', got {context!r}"
                )
            with reseeded(context_seed(self.seed, context_id)):
                acts, text = self._predict(state, label)
        if len(acts) == 0:
            action = EMPTY_ACT
        else:
            try:
                action = Act.from_convlab(list(acts))
            except ActParseError as exc:
                where = "" if exc.position is None else f" (act {exc.position})"
                raise InvalidResponseError(
                    f"ConvLab policy {self.name!r}, context {label}: predict returned an invalid act list "
                    f"{acts!r}: {exc.reason}{where}"
                ) from None
        return Response(action, text)

    def _predict(self, state: dict[str, Any], label: str) -> tuple[list[Any] | tuple[Any, ...], str | None]:
        if self.reset:
            init_session = getattr(self.policy, "init_session", None)
            if callable(init_session):
                init_session()
        try:
            acts = self.policy.predict(state)
        except KeyError as exc:
            if self.state_format == "convlab3" and exc.args and exc.args[0] in ("semi", "book"):
                raise InvalidResponseError(
                    f"ConvLab policy {self.name!r}, context {label}: predict failed with KeyError({exc.args[0]!r}): "
                    "the policy reads ConvLab-2's state layout (belief_state[domain]['semi'] / ['book']), as "
                    "ConvLab's rule-based MultiWOZ policy does; pass state_format='convlab2'"
                ) from exc
            raise
        if not isinstance(acts, (list, tuple)):
            raise InvalidResponseError(
                f"ConvLab policy {self.name!r}, context {label}: predict returned {type(acts).__name__}, "
                "expected a list of [intent, domain, slot, value]"
            )
        text = None
        if self.nlg is not None:
            text = self.nlg(list(acts))
            if not isinstance(text, str):
                raise InvalidResponseError(
                    f"ConvLab policy {self.name!r}, context {label}: nlg returned {type(text).__name__}, expected str"
                )
        return acts, text


# -- functions of the environment's observation ------------------------------------------


def _belief_of(context_or_belief: Any) -> BeliefState:
    belief = context_or_belief if isinstance(context_or_belief, BeliefState) else getattr(context_or_belief, "belief", None)
    if not isinstance(belief, BeliefState):
        raise InvalidContextError(
            f"expected a context with a BeliefState 'belief' or a BeliefState, got {type(context_or_belief).__name__}"
        )
    return belief


def observation_for(context_or_belief: Any, domain: Domain | None = None) -> np.ndarray:
    """The observation :class:`policies.env.RestaurantSearchEnv` shows for a belief state.

    The environment's observation is the belief feature vector
    (:func:`policies.features.belief_features`), a function of the belief state alone, so a
    context has exactly one observation: the one the environment returns whenever its tracker
    holds the context's belief.

    Parameters
    ----------
    context_or_belief : Context or BeliefState
        A context (anything with a ``belief``) or a belief state.
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.

    Returns
    -------
    numpy.ndarray
        Shape ``(feature_size(domain),)`` (275 for the default domain), float64 in [0, 1].

    Examples
    --------
    >>> from contexts import generate_grid
    >>> observation_for(generate_grid()["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"]).shape
    (275,)
    """
    return belief_features(_belief_of(context_or_belief), domain if domain is not None else default_domain())


def action_mask_for(context_or_belief: Any, domain: Domain | None = None) -> np.ndarray:
    """The environment's action mask for a belief state: bool, shape ``(n_actions,)``, True = allowed.

    >>> from contexts import generate_grid
    >>> from policies.summary import SUMMARY_ACTIONS
    >>> mask = action_mask_for(generate_grid()["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"])
    >>> [SUMMARY_ACTIONS[i] for i in mask.nonzero()[0]]
    ['request_area', 'request_food', 'request_pricerange', 'confirm_area']
    """
    space = domain_cache(domain if domain is not None else default_domain()).space
    return space.mask(_belief_of(context_or_belief))


class _Batch:
    """Observations, masks and the responses built so far for one list of contexts."""

    __slots__ = ("beliefs", "observations", "masks", "responses")

    def __init__(self, beliefs: list[BeliefState], observations: np.ndarray, masks: np.ndarray) -> None:
        self.beliefs = beliefs
        self.observations = observations
        self.masks = masks
        self.responses: list[dict[int, Response]] = [{} for _ in beliefs]

    def matches(self, beliefs: list[BeliefState]) -> bool:
        return len(beliefs) == len(self.beliefs) and all(a is b for a, b in zip(beliefs, self.beliefs))


class ObservationPolicy:
    """A simscore policy from a function of the environment's observation.

    The policy sees what an agent sees in :class:`policies.env.RestaurantSearchEnv`: the
    observation of the context's belief state (:func:`observation_for`) and, if it asks for
    them, the action mask (:func:`action_mask_for`); it returns a summary action index, which
    becomes a master act (:class:`~policies.summary.SummaryActions`, as in the environment)
    and a text (:class:`~policies.nlg.TemplateNLG` as policy instance ``nlg_instance``), as
    the GP-SARSA policy's responses do. A masked action is carried out literally, as the
    environment does by default.

    It is also a :class:`~policies.summary.SummaryPolicy` (``choose(belief, mask)``), so
    :func:`policies.simulation.run_dialogues` evaluates it in simulated dialogues.

    Parameters
    ----------
    fn : callable
        ``fn(observation) -> action index``. With ``batched=True`` it gets a 2-D array of
        observations (one row per context) and returns one index per row; with
        ``use_masks=True`` it gets the action masks as a second argument (bool, one row
        per observation in a batch). ``fn`` must be deterministic (greedy) for the comparison to mean anything.
    batched : bool
        ``fn`` works on batches: :meth:`respond_batch` (used by
        :func:`simscore.policy.run_policy`) calls it once for a whole context set.
    use_masks : bool
        Pass the action masks to ``fn``.
    domain : contexts.domain.Domain, optional
        Default: :func:`contexts.domain.default_domain`.
    name : str, optional
        Default: ``fn``'s name.
    nlg_instance : str, optional
        Who words the acts; default ``name``.
    text : bool
        Realise texts (default); False gives action-only responses.
    provenance : mapping, optional
        JSON-serialisable facts added to the adapter's own.

    Notes
    -----
    The observations and masks of the last context list are kept, and so is every response
    built for it (one per context and chosen action), so running the policy on the same
    context set again — a monitor checking a training run every few thousand steps — costs
    one call of ``fn`` plus look-ups.

    Examples
    --------
    >>> from contexts import generate_grid
    >>> from simscore.policy import run_policy
    >>> grid = generate_grid()
    >>> def first_allowed(observations, masks):
    ...     return masks.argmax(axis=1)
    >>> policy = ObservationPolicy(first_allowed, batched=True, use_masks=True)
    >>> responses = run_policy(policy, grid)
    >>> len(responses), str(responses["gen/area=1.0/pricerange=0.0/food=0.0/method=byconstraints"].action)
    (1296, 'request(area)')
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        batched: bool = False,
        use_masks: bool = False,
        domain: Domain | None = None,
        name: str | None = None,
        nlg_instance: str | None = None,
        text: bool = True,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable (observation -> action index), got {type(fn).__name__}")
        _check_name(name)
        self.fn = fn
        self.batched = bool(batched)
        self.use_masks = bool(use_masks)
        self.domain = domain if domain is not None else default_domain()
        self.space: SummaryActions = domain_cache(self.domain).space
        self.name: str = name if name is not None else getattr(fn, "__name__", None) or type(fn).__name__
        self.nlg = TemplateNLG(self.name if nlg_instance is None else nlg_instance)
        self.text = bool(text)
        self._extra = dict(provenance or {})
        _provenance({}, provenance)
        self._batch: _Batch | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, batched={self.batched}, use_masks={self.use_masks})"

    def _facts(self) -> dict[str, Any]:
        """The adapter's own provenance facts (subclasses describe what they wrap)."""
        return {"adapter": "observation", "function": _qualified_name(self.fn), "nlg_instance": self.nlg.instance}

    @property
    def provenance(self) -> dict[str, Any]:
        """What produced the responses (recorded by :func:`simscore.policy.run_policy`); given keys win."""
        return _provenance(self._facts(), self._extra)

    # -- deciding ----------------------------------------------------------------------------

    def _call(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Action indices for a 2-D batch of observations (validated)."""
        n = len(observations)
        if self.batched:
            actions = np.asarray(self.fn(observations, masks) if self.use_masks else self.fn(observations))
        else:
            chosen = [self.fn(o, m) if self.use_masks else self.fn(o) for o, m in zip(observations, masks)]
            actions = np.asarray([np.asarray(a).reshape(-1)[0] if np.size(a) == 1 else a for a in chosen])
        if actions.ndim == 2 and actions.shape[1] == 1:
            actions = actions[:, 0]
        if actions.shape != (n,):
            raise InvalidResponseError(
                f"policy {self.name!r}: fn returned shape {actions.shape} for {n} observation(s), "
                "expected one action index per observation"
            )
        integral = actions.dtype.kind in "iu" or (actions.dtype.kind == "f" and bool(np.all(np.mod(actions, 1) == 0)))
        if not integral:
            raise InvalidResponseError(
                f"policy {self.name!r}: fn must return integer action indices, got dtype {actions.dtype} "
                f"({actions[:3].tolist()!r}...)"
            )
        actions = actions.astype(np.int64)
        n_actions = len(self.space)
        bad = np.flatnonzero((actions < 0) | (actions >= n_actions))
        if bad.size:
            raise InvalidResponseError(
                f"policy {self.name!r} chose {int(actions[bad[0]])}; expected a summary action index in [0, {n_actions})"
            )
        return actions

    def choose(self, belief: BeliefState, mask: np.ndarray) -> int:
        """The summary action for ``belief`` (the :class:`~policies.summary.SummaryPolicy` protocol)."""
        observation = belief_features(belief, self.domain)
        return int(self._call(observation[None, :], np.asarray(mask, dtype=bool)[None, :])[0])

    def actions(self, contexts: Sequence[Any]) -> np.ndarray:
        """The summary action index for every context, shape ``(len(contexts),)``."""
        batch = self._prepare(list(contexts))
        return self._call(batch.observations, batch.masks)

    # -- responding --------------------------------------------------------------------------

    def _prepare(self, contexts: list[Any]) -> _Batch:
        beliefs = [_belief_of(c) for c in contexts]
        batch = self._batch
        if batch is None or not batch.matches(beliefs):
            width = len(belief_features(beliefs[0], self.domain)) if beliefs else 0
            observations = np.empty((len(beliefs), width), dtype=np.float64)
            masks = np.empty((len(beliefs), len(self.space)), dtype=bool)
            for i, belief in enumerate(beliefs):
                observations[i] = belief_features(belief, self.domain)
                masks[i] = self.space.mask(belief)
            batch = self._batch = _Batch(beliefs, observations, masks)
        return batch

    def _response(self, action: int, belief: BeliefState) -> Response:
        act = self.space.master_action(action, belief)
        return Response(act, self.nlg.realise(act, belief) if self.text else None)

    def respond(self, context: Any) -> Response:
        """The master act (and text) for ``context.belief``."""
        belief = _belief_of(context)
        action = self.choose(belief, self.space.mask(belief))
        return self._response(action, belief)

    def respond_batch(self, contexts: Sequence[Any]) -> list[Response]:
        """The responses to ``contexts``, in order (one call of ``fn`` if ``batched``)."""
        items = list(contexts)
        if not items:
            return []
        batch = self._prepare(items)
        actions = self._call(batch.observations, batch.masks).tolist()
        out = []
        for i, action in enumerate(actions):
            cached = batch.responses[i]
            response = cached.get(action)
            if response is None:
                response = cached[action] = self._response(action, batch.beliefs[i])
            out.append(response)
        return out
