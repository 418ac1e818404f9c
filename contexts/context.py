"""Contexts (a belief state with an id and metadata) and context sets with their files.

A :class:`ContextSet` is ordered and id-unique, has a name and a content hash, can be
united with another set and split by metadata, and is stored as JSON Lines: a header line

``{"format": "simscore-contexts", "version": 2, "name": ..., "domain": ..., "count": ...,
"content_hash": ..., "built": {...how the set was built...}}``

then one context a line: ``{"id": ..., "belief": <BeliefState.to_json()>, "metadata":
{"source": ..., "dialogue_id": ..., "turn_index": ..., "history": [...], ...}}``.
``count`` and ``content_hash`` are optional when a file is written by hand; when present,
reading checks them (so a truncated or edited file is reported).

Examples
--------
>>> from contexts.belief import BeliefState
>>> a = Context("c1", BeliefState(slots={"area": {"north": 1.0}}), {"source": "gen"})
>>> b = Context("c2", BeliefState(), {"source": "col", "dialogue_id": "d1", "turn_index": 2})
>>> cs = ContextSet([a, b], name="demo")
>>> len(cs), cs.ids, cs["c2"].metadata["turn_index"]
(2, ('c1', 'c2'), 2)
>>> cs.where(source="col").ids
('c2',)
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from contexts._bulk import gc_paused
from contexts._frozen import FrozenDict, freeze_json
from contexts.belief import BeliefState
from contexts.domain import Ontology
from simscore.checks import check_int
from simscore.errors import FileFormatError, InvalidContextError, SkippedContextsWarning, json_excerpt
from simscore.io import atomic_open, dumps, prepare_output, read_jsonl

if TYPE_CHECKING:
    import pandas

__all__ = ["Context", "ContextSet", "CONTEXTS_FORMAT", "CONTEXTS_VERSION"]

#: The ``format`` field of a context-set file header.
CONTEXTS_FORMAT = "simscore-contexts"
#: The current version of the context-set file format. Version 2 added the belief states'
#: ``last_act_offered``, ``offered_since_no_venue`` and ``alternatives_requested``; version 1
#: files are read with those at their defaults (no such history).
CONTEXTS_VERSION = 2
_READ_VERSIONS = (1, CONTEXTS_VERSION)
#: The belief fields an older version's lines lack: a file's ``content_hash`` is checked by the
#: rule of the version its header names (the hash of the lines that version's writer wrote).
_ABSENT_IN_VERSION: dict[int, tuple[str, ...]] = {
    1: ("last_act_offered", "offered_since_no_venue", "alternatives_requested"),
}

# Same output as simscore.io.dumps, but the encoder is built once: this is the hot path
# of writing and hashing large context sets.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

_STANDARD_KEYS = ("source", "dialogue_id", "turn_index", "history")
_CONTEXT_KEYS = frozenset(("id", "belief", "metadata"))


def _metadata(metadata: Any, context_id: str) -> FrozenDict[str, Any]:
    """Validate and canonicalise metadata: standard keys first, extras sorted by name."""
    if type(metadata) is not dict and not isinstance(metadata, Mapping):
        raise InvalidContextError(f"context {context_id!r}: metadata must be a mapping, got {type(metadata).__name__}")
    source = metadata.get("source", "custom")
    if type(source) is not str or not source:
        raise InvalidContextError(f"context {context_id!r}: metadata 'source' must be a non-empty string, got "
                                  f"{json_excerpt(source, 60)}")
    dialogue_id = metadata.get("dialogue_id")
    if dialogue_id is not None and not isinstance(dialogue_id, str):
        raise InvalidContextError(
            f"context {context_id!r}: metadata 'dialogue_id' must be a string or null, got {json_excerpt(dialogue_id, 60)}"
        )
    turn_index = metadata.get("turn_index")
    if turn_index is not None and (type(turn_index) is not int or turn_index < 0):
        turn_index = check_int(
            f"context {context_id!r}: metadata 'turn_index'", turn_index, minimum=0, error=InvalidContextError
        )
    history = metadata.get("history", ())
    if type(history) is not tuple:
        if isinstance(history, str) or not isinstance(history, (list, tuple)):
            raise InvalidContextError(
                f"context {context_id!r}: metadata 'history' must be a list of strings, got {type(history).__name__}"
            )
        history = tuple(history)
    for text in history:
        if type(text) is not str:
            raise InvalidContextError(f"context {context_id!r}: metadata 'history' contains {text!r}, expected strings")
    out: dict[str, Any] = {"source": source, "dialogue_id": dialogue_id, "turn_index": turn_index, "history": history}
    if len(metadata) > 4 or any(key not in out for key in metadata):
        extras = sorted(key for key in metadata if key not in out)
        for key in extras:
            if not isinstance(key, str):
                raise InvalidContextError(f"context {context_id!r}: metadata key {key!r} is not a string")
            try:
                out[key] = freeze_json(metadata[key], f"context {context_id!r}: metadata {key!r}")
            except ValueError as exc:
                raise InvalidContextError(str(exc)) from None
    return FrozenDict(out)


@dataclass(frozen=True, slots=True)
class Context:
    """One dialogue context: an id, a belief state and metadata.

    Parameters
    ----------
    id : str
        Unique within its context set; readable and stable (``gen/area=0.4/...``,
        ``col/<source>/<dialogue_id>/<turn_index>``).
    belief : BeliefState
    metadata : mapping, optional
        ``source`` (``"gen"``, ``"col"``; default ``"custom"``), ``dialogue_id`` (str or
        None), ``turn_index`` (int >= 0 or None), ``history`` (the dialogue's texts before
        the system's decision, alternating user/system; default ``()``) and any extra keys
        with JSON values. Stored read-only with the four standard keys always present
        (lists become tuples).

    Examples
    --------
    >>> c = Context("x", BeliefState())
    >>> dict(c.metadata)
    {'source': 'custom', 'dialogue_id': None, 'turn_index': None, 'history': ()}
    >>> Context.from_json(c.to_json()) == c
    True
    """

    id: str
    belief: BeliefState
    metadata: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        if type(self.id) is not str or not self.id:
            raise InvalidContextError(f"context id must be a non-empty string, got {json_excerpt(self.id, 60)}")
        if not isinstance(self.belief, BeliefState):
            raise InvalidContextError(
                f"context {self.id!r}: belief must be a BeliefState, got {type(self.belief).__name__}"
            )
        object.__setattr__(self, "metadata", _metadata(self.metadata, self.id))

    def to_json(self) -> dict[str, Any]:
        """``{"id", "belief", "metadata"}`` as JSON-ready values (one line of a context file)."""
        return {"id": self.id, "belief": self.belief.to_json(), "metadata": self.metadata}

    @classmethod
    def from_json(cls, obj: Any, ontology: Ontology | None = None) -> Context:
        """Rebuild a context from :meth:`to_json` output (validating the belief against ``ontology``)."""
        if type(obj) is not dict and not isinstance(obj, Mapping):
            raise InvalidContextError(f"a context must be a JSON object, got {type(obj).__name__}")
        if obj.keys() != _CONTEXT_KEYS:
            missing = sorted(_CONTEXT_KEYS - set(obj))
            if missing:
                raise InvalidContextError(f"context lacks the field(s) {', '.join(map(repr, missing))}")
            unknown = sorted(set(obj) - _CONTEXT_KEYS)
            raise InvalidContextError(f"context has unknown field(s) {', '.join(map(repr, unknown))}")
        context_id = obj["id"]
        try:
            belief = BeliefState.from_json(obj["belief"], ontology)
        except InvalidContextError as exc:
            raise InvalidContextError(f"context {context_id!r}: {exc}") from None
        return cls(context_id, belief, obj["metadata"])


class ContextSet:
    """An ordered, id-unique collection of contexts with a name and a content hash.

    Parameters
    ----------
    contexts : iterable of Context
    name : str
        E.g. ``"C_gen"``, ``"C_col"``.
    domain : str, optional
        Name of the domain the beliefs belong to (written into the file header).
    built : mapping, optional
        How the set was built (generator and its parameters, collection options, sources);
        JSON values. Written into the file header; not part of the content hash.

    Raises
    ------
    InvalidContextError
        If an id appears twice (naming it) or an element is not a :class:`Context`.

    Notes
    -----
    ``content_hash`` is the SHA-256 hex digest of the contexts' canonical JSON lines (the
    lines of :meth:`to_jsonl` after the header): it identifies the contexts, their order,
    beliefs and metadata, independently of the set's name and ``built`` information.
    """

    def __init__(
        self,
        contexts: Iterable[Context],
        *,
        name: str,
        domain: str | None = None,
        built: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidContextError(f"name must be a non-empty string, got {name!r}")
        if domain is not None and (not isinstance(domain, str) or not domain):
            raise InvalidContextError(f"domain must be a non-empty string or None, got {domain!r}")
        items = tuple(contexts)
        index: dict[str, int] = {}
        for position, context in enumerate(items):
            if not isinstance(context, Context):
                raise InvalidContextError(f"element {position} is a {type(context).__name__}, expected Context")
            if context.id in index:
                raise InvalidContextError(
                    f"context id {context.id!r} appears twice (positions {index[context.id]} and {position})"
                )
            index[context.id] = position
        try:
            frozen_built = freeze_json(dict(built or {}), "built")
        except ValueError as exc:
            raise InvalidContextError(str(exc)) from None
        self._contexts = items
        self._index = index
        self._name = name
        self._domain = domain
        self._built: Mapping[str, Any] = frozen_built

    # -- basic container protocol ------------------------------------------------------

    @property
    def name(self) -> str:
        """The set's name."""
        return self._name

    @property
    def domain(self) -> str | None:
        """Name of the domain the beliefs belong to, if known."""
        return self._domain

    @property
    def built(self) -> Mapping[str, Any]:
        """How the set was built (read-only JSON values)."""
        return self._built

    @property
    def ids(self) -> tuple[str, ...]:
        """Context ids in order."""
        return tuple(self._index)

    @property
    def contexts(self) -> tuple[Context, ...]:
        """The contexts in order."""
        return self._contexts

    def __len__(self) -> int:
        return len(self._contexts)

    def __iter__(self) -> Iterator[Context]:
        return iter(self._contexts)

    def __contains__(self, context_id: object) -> bool:
        return context_id in self._index

    def __getitem__(self, context_id: str) -> Context:
        try:
            return self._contexts[self._index[context_id]]
        except (KeyError, TypeError):
            raise KeyError(f"no context {context_id!r} in context set {self._name!r}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextSet):
            return NotImplemented
        return (
            self._name == other._name
            and self._domain == other._domain
            and self._built == other._built
            and self._contexts == other._contexts
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ContextSet(name={self._name!r}, domain={self._domain!r}, contexts={len(self)})"

    # -- identity ----------------------------------------------------------------------

    def _lines(self) -> list[str]:
        encode = _encode
        return [encode(context.to_json()) for context in self._contexts]

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 hex digest of the canonical JSON lines of the contexts (see Notes).

        >>> ContextSet([], name="a").content_hash == ContextSet([], name="b").content_hash
        True
        """
        return _hash_lines(self._lines())

    # -- subsets and unions ------------------------------------------------------------

    def _derived(self, contexts: Iterable[Context], name: str, **built: Any) -> ContextSet:
        info = dict(self._built)
        info.update(built)
        return ContextSet(contexts, name=name, domain=self._domain, built=info)

    def union(self, other: ContextSet, *, name: str | None = None) -> ContextSet:
        """The contexts of ``self`` followed by those of ``other`` (ids must not overlap).

        Parameters
        ----------
        other : ContextSet
        name : str, optional
            Default ``"<self.name>+<other.name>"``.

        Raises
        ------
        InvalidContextError
            If the sets share an id (naming it) or belong to different domains.
        """
        if not isinstance(other, ContextSet):
            raise InvalidContextError(f"can only unite with a ContextSet, got {type(other).__name__}")
        if self._domain is not None and other._domain is not None and self._domain != other._domain:
            raise InvalidContextError(f"cannot unite context sets of domains {self._domain!r} and {other._domain!r}")
        for context_id in other._index:
            if context_id in self._index:
                raise InvalidContextError(
                    f"context id {context_id!r} is in both {self._name!r} and {other._name!r}"
                )
        united_name = name if name is not None else f"{self._name}+{other._name}"
        built = {"union_of": [{"name": self._name, "built": self._built}, {"name": other._name, "built": other._built}]}
        return ContextSet(
            self._contexts + other._contexts,
            name=united_name,
            domain=self._domain if self._domain is not None else other._domain,
            built=built,
        )

    def filter(self, predicate: Callable[[Context], bool], *, name: str | None = None) -> ContextSet:
        """The contexts for which ``predicate(context)`` is true, in order."""
        return self._derived(
            (c for c in self._contexts if predicate(c)), name if name is not None else f"{self._name}[filtered]"
        )

    def select(self, ids: Iterable[str], *, name: str | None = None) -> ContextSet:
        """The contexts with the given ids, in the order given (unknown id -> ``KeyError``)."""
        return self._derived((self[i] for i in ids), name if name is not None else f"{self._name}[selected]")

    def where(self, **metadata_equals: Any) -> ContextSet:
        """The contexts whose metadata equal every given ``key=value`` (e.g. ``source="col"``).

        >>> from contexts.generate import generate_grid
        >>> len(generate_grid().where(source="gen")), len(generate_grid().where(source="col"))
        (1296, 0)
        """
        items = tuple(metadata_equals.items())
        label = ",".join(f"{k}={v}" for k, v in items)
        missing = object()
        return self._derived(
            (c for c in self._contexts if all(c.metadata.get(k, missing) == v for k, v in items)),
            f"{self._name}[{label}]",
        )

    def by_turn(self) -> dict[int, ContextSet]:
        """Subsets per turn index, in increasing turn order (contexts without one are left out).

        >>> from contexts.belief import BeliefState
        >>> cs = ContextSet([Context(f"c{t}", BeliefState(), {"turn_index": t % 2}) for t in range(5)], name="s")
        >>> {turn: subset.ids for turn, subset in cs.by_turn().items()}
        {0: ('c0', 'c2', 'c4'), 1: ('c1', 'c3')}
        """
        groups: dict[int, list[Context]] = {}
        for context in self._contexts:
            turn = context.metadata["turn_index"]
            if turn is not None:
                groups.setdefault(turn, []).append(context)
        return {
            turn: self._derived(groups[turn], f"{self._name}[turn_index={turn}]") for turn in sorted(groups)
        }

    def metadata_frame(self) -> pandas.DataFrame:
        """One row per context: index ``context_id``; columns ``source``, ``dialogue_id``,
        ``turn_index`` (nullable ``Int64``), ``method`` (the belief's top method),
        ``history_length`` and one column per extra metadata key (JSON values).

        >>> from contexts.generate import generate_grid
        >>> frame = generate_grid().metadata_frame()
        >>> frame.shape[0], list(frame.columns[:4]), int(frame["method"].value_counts()["byname"])
        (1296, ['source', 'dialogue_id', 'turn_index', 'method'], 216)
        """
        import pandas as pd

        extras: list[str] = []
        seen: set[str] = set()
        for context in self._contexts:
            for key in context.metadata:
                if key not in _STANDARD_KEYS and key not in seen:
                    seen.add(key)
                    extras.append(key)
        columns: dict[str, Any] = {
            "source": [c.metadata["source"] for c in self._contexts],
            "dialogue_id": [c.metadata["dialogue_id"] for c in self._contexts],
            "turn_index": pd.array([c.metadata["turn_index"] for c in self._contexts], dtype="Int64"),
            "method": [c.belief.top_method() for c in self._contexts],
            "history_length": [len(c.metadata["history"]) for c in self._contexts],
        }
        for key in extras:
            columns[key] = [c.metadata.get(key) for c in self._contexts]
        index = pd.Index(list(self._index), name="context_id", dtype=object)
        return pd.DataFrame(columns, index=index)

    # -- files -------------------------------------------------------------------------

    def header(self) -> dict[str, Any]:
        """The header line :meth:`to_jsonl` writes."""
        return {
            "format": CONTEXTS_FORMAT,
            "version": CONTEXTS_VERSION,
            "name": self._name,
            "domain": self._domain,
            "count": len(self),
            "content_hash": self.content_hash,
            "built": self._built,
        }

    def to_jsonl(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the set as JSON Lines (header line, then one context a line), atomically.

        An existing file is replaced only with ``overwrite=True``
        (:class:`~simscore.errors.OutputExistsError` otherwise).
        """
        prepare_output(path, overwrite=overwrite)
        lines = self._lines()
        if "content_hash" not in self.__dict__:
            self.__dict__["content_hash"] = _hash_lines(lines)
        with atomic_open(path, "w") as handle:
            handle.write(dumps(self.header()))
            handle.write("\n")
            for line in lines:
                handle.write(line)
                handle.write("\n")

    @classmethod
    def read_jsonl(
        cls,
        path: str | os.PathLike[str],
        *,
        ontology: Ontology | None = None,
        verify_hash: bool = True,
        skip_invalid: bool = False,
    ) -> ContextSet:
        """Read a context-set file.

        Parameters
        ----------
        path : path-like
        ontology : Ontology, optional
            If given, every belief's slot, value and requestable names are checked against it.
        verify_hash : bool
            Check the header's ``content_hash`` (if present) against the contexts read, by the
            rule of the format version the header names (a version-1 file's hash is of the
            lines without the fields version 2 added, as its writer wrote them).
        skip_invalid : bool
            With ``ontology``: leave out the contexts whose belief names a slot, value or venue
            the ontology does not have, with one :class:`~simscore.errors.SkippedContextsWarning`
            that counts them (and no count / hash check, since the set is not the file's);
            by default such a context is an error.

        Raises
        ------
        FileFormatError
            Naming the file and the line: wrong format or version, invalid JSON (e.g. a
            truncated line), an invalid context, a duplicate id, or a ``count`` /
            ``content_hash`` in the header that the lines do not match.
        """
        header, records = read_jsonl(path, format_name=CONTEXTS_FORMAT, versions=_READ_VERSIONS)
        try:
            with gc_paused():
                return cls._from_records(path, header, records, ontology, verify_hash, skip_invalid)
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()

    @classmethod
    def _from_records(
        cls,
        path: str | os.PathLike[str],
        header: dict[str, Any],
        records: Iterator[tuple[int, dict[str, Any]]],
        ontology: Ontology | None,
        verify_hash: bool,
        skip_invalid: bool = False,
    ) -> ContextSet:
        contexts: list[Context] = []
        seen: dict[str, int] = {}
        skipped: list[tuple[int, str, str]] = []
        from_json = Context.from_json
        last_line = 1
        for number, record in records:
            last_line = number
            try:
                context = from_json(record, None if skip_invalid else ontology)
                if skip_invalid and ontology is not None:
                    try:
                        context.belief.validate(ontology)
                    except InvalidContextError as exc:
                        skipped.append((number, context.id, str(exc)))
                        continue
            except InvalidContextError as exc:
                raise FileFormatError(path, str(exc), line=number) from None
            if context.id in seen:
                raise FileFormatError(
                    path, f"context id {context.id!r} appears twice (first on line {seen[context.id]})", line=number
                )
            seen[context.id] = number
            contexts.append(context)
        # The header is checked after the lines so the reader's file is always closed.
        name = header.get("name")
        if not isinstance(name, str) or not name:
            raise FileFormatError(path, f"header field 'name' must be a non-empty string, got {json_excerpt(name, 60)}", line=1)
        domain = header.get("domain")
        if domain is not None and (not isinstance(domain, str) or not domain):
            raise FileFormatError(path, f"header field 'domain' must be a string or null, got {json_excerpt(domain, 60)}", line=1)
        built = header.get("built", {})
        if not isinstance(built, dict):
            raise FileFormatError(path, f"header field 'built' must be an object, got {json_excerpt(built, 60)}", line=1)
        if skipped:
            first = "; ".join(f"line {line} ({cid}): {why}" for line, cid, why in skipped[:3])
            warnings.warn(
                SkippedContextsWarning(
                    f"{path}: skipped {len(skipped)} context(s) that do not fit the domain: {first}"
                    + (" ..." if len(skipped) > 3 else "")
                ),
                stacklevel=3,
            )
            verify_hash = False
        count = header.get("count")
        if count is not None and count != len(contexts) and not skipped:
            raise FileFormatError(
                path,
                f"header says {json_excerpt(count, 40)} contexts but the file has {len(contexts)} (truncated or edited?)",
                line=last_line,
            )
        try:
            result = cls(contexts, name=name, domain=domain, built=built)
        except InvalidContextError as exc:
            raise FileFormatError(path, str(exc), line=1) from None
        expected_hash = header.get("content_hash")
        version = header["version"]
        if verify_hash and expected_hash is not None and _file_hash(result, version) != expected_hash:
            rule = "" if version == CONTEXTS_VERSION else f", computed as format version {version} wrote it"
            raise FileFormatError(
                path,
                f"the contexts do not match the header's content_hash{rule} (the file was edited; "
                "remove 'content_hash' from the header to accept the edit)",
                line=1,
            )
        return result


def _file_hash(contexts: ContextSet, version: int) -> str:
    """The content hash as the writer of format ``version`` computed it (its own lines)."""
    absent = _ABSENT_IN_VERSION.get(version)
    if absent is None:
        return contexts.content_hash
    lines = []
    for context in contexts:
        record = context.to_json()
        record["belief"] = {key: value for key, value in record["belief"].items() if key not in absent}
        lines.append(_encode(record))
    return _hash_lines(lines)


def _hash_lines(lines: list[str]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()
