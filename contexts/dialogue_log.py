"""The dialogue-log format: dialogues with the belief state at each system decision.

The simulator writes it and C_col collection reads it; users can produce it from their own
systems. It is JSON Lines, with a header line

``{"format": "simscore-dialogue-log", "version": 2, "domain": "<domain name>",
"source": {...free-form provenance, e.g. "name", "policy", "checkpoint", "seed"...}}``

then one dialogue per line::

    {"dialogue_id": "d0",
     "turns": [{"turn_index": 0, "user_act": null, "user_text": null,
                "belief": <BeliefState.to_json()>,
                "system_act": "hello()", "system_text": "Hello, how may I help you?"},
               {"turn_index": 1, "user_act": "inform(food=thai)", "user_text": "Thai food please.",
                "belief": {...}, "system_act": "request(area)", "system_text": "Which area?"}],
     "outcome": {"success": true, "reward": 18}}

Turn *t* holds the user's act and text of that turn (null at turn 0, where the system
speaks first), the belief state at the system's decision time, and the system's act and
text. Acts are PyDial strings readable by :meth:`simscore.Act.parse`; act and text may each
be null (an action-only or text-only system). A turn may also carry ``"metadata"``: an
object of extra JSON values that C_col collection copies into the turn's context metadata
(e.g. the ConvLab user acts a ConvLab policy reads, see :func:`contexts.collect.import_convlab`);
its keys must not be the standard metadata keys (``source``, ``dialogue_id``, ``turn_index``,
``history``, ``source_name``). Turn indices increase strictly within a
dialogue; dialogue ids are unique within a file. ``outcome`` is a free-form JSON object.
The optional ``source.name`` names the source in collected context ids.

Examples
--------
>>> from contexts.belief import BeliefState
>>> turn = DialogueTurn(turn_index=0, belief=BeliefState(), system_act="hello()", system_text="Hi!")
>>> d = Dialogue("d0", (turn,), outcome={"success": False})
>>> Dialogue.from_json(d.to_json()) == d
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contexts._bulk import gc_paused
from contexts._frozen import FrozenDict, freeze_json
from contexts.belief import BeliefState
from contexts.context import Context
from contexts.domain import Domain, Ontology
from simscore.acts import Act
from simscore.checks import check_int
from simscore.errors import ActParseError, FileFormatError, InvalidContextError, json_excerpt
from simscore.io import prepare_output, read_jsonl, write_jsonl

__all__ = [
    "RESERVED_METADATA_KEYS",
    "DIALOGUE_LOG_FORMAT",
    "DIALOGUE_LOG_VERSION",
    "DialogueTurn",
    "Dialogue",
    "dialogue_contexts",
    "write_dialogue_log",
    "read_dialogue_log",
]

#: The ``format`` field of a dialogue-log header.
DIALOGUE_LOG_FORMAT = "simscore-dialogue-log"
#: The current version of the dialogue-log format. Version 2: belief states with
#: ``last_act_offered``, ``offered_since_no_venue`` and ``alternatives_requested`` (version 1
#: logs read with no such history).
DIALOGUE_LOG_VERSION = 2
_READ_VERSIONS = (1, DIALOGUE_LOG_VERSION)

_TURN_KEYS = ("turn_index", "user_act", "user_text", "belief", "system_act", "system_text", "metadata")
#: Context metadata keys that collection sets itself; a turn's own metadata may not use them.
RESERVED_METADATA_KEYS = frozenset(("source", "dialogue_id", "turn_index", "history", "source_name"))
_DIALOGUE_KEYS = ("dialogue_id", "turns", "outcome")


def _check_fields(obj: Any, what: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    """Raise unless ``obj`` is a JSON object with only ``allowed`` and all ``required`` fields."""
    if not isinstance(obj, Mapping):
        article = "an" if what[0] in "aeiou" else "a"
        raise InvalidContextError(f"{article} {what} must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise InvalidContextError(f"{what} has unknown field(s) {', '.join(map(repr, unknown))}")
    for key in required:
        if key not in obj:
            raise InvalidContextError(f"{what} lacks the field {key!r}")


def _optional_text(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidContextError(f"{what} must be a string or null, got {json_excerpt(value, 60)}")
    return value


def _optional_act(value: Any, what: str) -> str | None:
    _optional_text(value, what)
    if value is not None:
        try:
            Act.parse(value)
        except ActParseError as exc:
            raise InvalidContextError(f"{what}: {exc}") from None
    return value


@dataclass(frozen=True, kw_only=True)
class DialogueTurn:
    """One turn of a logged dialogue (keyword-only fields, as in the JSON).

    Parameters
    ----------
    turn_index : int
        0-based; turn 0 is the system's opening (no user input yet).
    belief : BeliefState
        The belief state at the system's decision time.
    user_act, user_text : str or None
        The user's act (PyDial string) and text of this turn.
    system_act, system_text : str or None
        The system's act (PyDial string) and text of this turn.
    metadata : mapping, optional
        Extra JSON values for the turn's context metadata (stored read-only: lists become
        tuples); keys other than :data:`RESERVED_METADATA_KEYS`.
    """

    turn_index: int
    belief: BeliefState
    user_act: str | None = None
    user_text: str | None = None
    system_act: str | None = None
    system_text: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        if type(self.turn_index) is not int or self.turn_index < 0:
            turn_index = check_int("turn_index", self.turn_index, minimum=0, error=InvalidContextError)
            object.__setattr__(self, "turn_index", turn_index)  # an int, also when given a numpy integer
        if not isinstance(self.belief, BeliefState):
            raise InvalidContextError(f"belief must be a BeliefState, got {type(self.belief).__name__}")
        _optional_act(self.user_act, "user_act")
        _optional_text(self.user_text, "user_text")
        _optional_act(self.system_act, "system_act")
        _optional_text(self.system_text, "system_text")
        if type(self.metadata) is not FrozenDict or self.metadata:
            if not isinstance(self.metadata, Mapping):
                raise InvalidContextError(f"metadata must be an object, got {type(self.metadata).__name__}")
            reserved = sorted(RESERVED_METADATA_KEYS.intersection(self.metadata))
            if reserved:
                raise InvalidContextError(
                    f"metadata key(s) {', '.join(map(repr, reserved))} are set by collection; use other names"
                )
            try:
                object.__setattr__(self, "metadata", freeze_json(dict(self.metadata), "metadata"))
            except ValueError as exc:
                raise InvalidContextError(str(exc)) from None

    @property
    def user_action(self) -> Act | None:
        """The user act parsed, or None."""
        return None if self.user_act is None else Act.parse(self.user_act)

    @property
    def system_action(self) -> Act | None:
        """The system act parsed, or None."""
        return None if self.system_act is None else Act.parse(self.system_act)

    def to_json(self) -> dict[str, Any]:
        """The turn as a JSON-ready dict (keys in the documented order; ``metadata`` only if any)."""
        out: dict[str, Any] = {
            "turn_index": self.turn_index,
            "user_act": self.user_act,
            "user_text": self.user_text,
            "belief": self.belief.to_json(),
            "system_act": self.system_act,
            "system_text": self.system_text,
        }
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def from_json(cls, obj: Any, ontology: Ontology | None = None) -> DialogueTurn:
        """Rebuild a turn; ``turn_index`` and ``belief`` are required, the rest default to null."""
        _check_fields(obj, "turn", _TURN_KEYS, ("turn_index", "belief"))
        return cls(
            turn_index=obj["turn_index"],
            belief=BeliefState.from_json(obj["belief"], ontology),
            user_act=obj.get("user_act"),
            user_text=obj.get("user_text"),
            system_act=obj.get("system_act"),
            system_text=obj.get("system_text"),
            metadata=obj.get("metadata", FrozenDict()),
        )


@dataclass(frozen=True)
class Dialogue:
    """One logged dialogue.

    Parameters
    ----------
    dialogue_id : str
    turns : tuple of DialogueTurn
        Strictly increasing turn indices.
    outcome : mapping
        Free-form JSON values (e.g. success, reward, turns); stored read-only.
    """

    dialogue_id: str
    turns: tuple[DialogueTurn, ...]
    outcome: Mapping[str, Any] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        if not isinstance(self.dialogue_id, str) or not self.dialogue_id:
            raise InvalidContextError(f"dialogue_id must be a non-empty string, got {self.dialogue_id!r}")
        if isinstance(self.turns, (str, bytes)) or not isinstance(self.turns, Iterable):
            raise InvalidContextError(f"dialogue {self.dialogue_id!r}: turns must be a list of turns")
        turns = tuple(self.turns)
        previous = -1
        for position, turn in enumerate(turns):
            if not isinstance(turn, DialogueTurn):
                raise InvalidContextError(
                    f"dialogue {self.dialogue_id!r}: turn {position} is a {type(turn).__name__}, expected DialogueTurn"
                )
            if turn.turn_index <= previous:
                raise InvalidContextError(
                    f"dialogue {self.dialogue_id!r}: turn_index {turn.turn_index} follows {previous} "
                    "(turn indices must increase)"
                )
            previous = turn.turn_index
        object.__setattr__(self, "turns", turns)
        if not isinstance(self.outcome, Mapping):
            raise InvalidContextError(f"dialogue {self.dialogue_id!r}: outcome must be an object")
        try:
            object.__setattr__(self, "outcome", freeze_json(dict(self.outcome), "outcome"))
        except ValueError as exc:
            raise InvalidContextError(f"dialogue {self.dialogue_id!r}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        """The dialogue as one JSON-ready line of a dialogue log."""
        return {
            "dialogue_id": self.dialogue_id,
            "turns": [turn.to_json() for turn in self.turns],
            "outcome": self.outcome,
        }

    @classmethod
    def from_json(cls, obj: Any, ontology: Ontology | None = None) -> Dialogue:
        """Rebuild a dialogue (beliefs validated against ``ontology`` if given)."""
        _check_fields(obj, "dialogue", _DIALOGUE_KEYS, ("dialogue_id", "turns"))
        dialogue_id = obj["dialogue_id"]
        turns = obj["turns"]
        if not isinstance(turns, list):
            raise InvalidContextError(f"dialogue {dialogue_id!r}: 'turns' must be a list")
        parsed = []
        for position, turn in enumerate(turns):
            try:
                parsed.append(DialogueTurn.from_json(turn, ontology))
            except InvalidContextError as exc:
                raise InvalidContextError(f"dialogue {dialogue_id!r}, turn {position}: {exc}") from None
        return cls(dialogue_id, tuple(parsed), obj.get("outcome", {}))


def dialogue_contexts(
    dialogue: Dialogue, source_name: str, *, require_user_turn: bool = False
) -> list[Context]:
    """The contexts of one dialogue, one per turn, as C_col collection makes them.

    Context ``col/<source_name>/<dialogue_id>/<turn_index>`` holds the turn's belief state and
    metadata: the turn's own ``metadata``, then ``source="col"``, the dialogue id, the turn
    index, the dialogue's texts before the decision (``history``) and ``source_name`` (the
    :data:`RESERVED_METADATA_KEYS`); see :mod:`contexts.collect`.

    Parameters
    ----------
    dialogue : Dialogue
    source_name : str
        Used in ids and the ``source_name`` metadata.
    require_user_turn : bool
        Skip turns without user input (no user act and no user text), e.g. a system
        opening; their texts still enter later contexts' histories.
    """
    history: list[str] = []
    out = []
    for turn in dialogue.turns:
        if turn.user_text is not None:
            history.append(turn.user_text)
        if not require_user_turn or turn.user_text is not None or turn.user_act is not None:
            metadata = {
                **turn.metadata,
                "source": "col",
                "dialogue_id": dialogue.dialogue_id,
                "turn_index": turn.turn_index,
                "history": tuple(history),
                "source_name": source_name,
            }
            context_id = f"col/{source_name}/{dialogue.dialogue_id}/{turn.turn_index}"
            out.append(Context(context_id, turn.belief, metadata))
        if turn.system_text is not None:
            history.append(turn.system_text)
    return out


def _domain_name(domain: str | Domain) -> str:
    name = domain.name if isinstance(domain, Domain) else domain
    if not isinstance(name, str) or not name:
        raise InvalidContextError(f"domain must be a Domain or a non-empty name, got {domain!r}")
    return name


def write_dialogue_log(
    path: str | os.PathLike[str],
    dialogues: Iterable[Dialogue],
    *,
    domain: str | Domain,
    source: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> None:
    """Write dialogues as a dialogue log, atomically.

    Parameters
    ----------
    path : path-like
    dialogues : iterable of Dialogue
        Dialogue ids must be unique.
    domain : Domain or str
        The domain (or its name) the beliefs belong to.
    source : mapping, optional
        Free-form provenance (JSON values); ``name`` is used in collected context ids.
    overwrite : bool
        Replace an existing file (:class:`~simscore.errors.OutputExistsError` otherwise).

    Raises
    ------
    InvalidContextError
        On a duplicate dialogue id or a non-JSON provenance value; nothing is written then.
    """
    prepare_output(path, overwrite=overwrite)
    try:
        frozen_source = freeze_json(dict(source or {}), "source")
    except ValueError as exc:
        raise InvalidContextError(str(exc)) from None
    header = {
        "format": DIALOGUE_LOG_FORMAT,
        "version": DIALOGUE_LOG_VERSION,
        "domain": _domain_name(domain),
        "source": frozen_source,
    }

    def records() -> Iterable[dict[str, Any]]:
        seen: set[str] = set()
        for dialogue in dialogues:
            if not isinstance(dialogue, Dialogue):
                raise InvalidContextError(f"expected Dialogue objects, got {type(dialogue).__name__}")
            if dialogue.dialogue_id in seen:
                raise InvalidContextError(f"dialogue_id {dialogue.dialogue_id!r} appears twice")
            seen.add(dialogue.dialogue_id)
            yield dialogue.to_json()

    write_jsonl(path, header, records())


def read_dialogue_log(
    path: str | os.PathLike[str], *, ontology: Ontology | None = None
) -> tuple[dict[str, Any], list[Dialogue]]:
    """Read a dialogue log.

    Parameters
    ----------
    path : path-like
    ontology : Ontology, optional
        If given, every belief's slot, value and requestable names are checked against it.

    Returns
    -------
    header : dict
        With ``format``, ``version``, ``domain`` and ``source`` (``{}`` if absent).
    dialogues : list of Dialogue
        In file order.

    Raises
    ------
    FileFormatError
        Naming the file and the line of the first bad dialogue (invalid JSON, a bad
        belief, an unparsable act, a duplicate dialogue id), or a bad header.
    """
    header, records = read_jsonl(path, format_name=DIALOGUE_LOG_FORMAT, versions=_READ_VERSIONS)
    dialogues: list[Dialogue] = []
    seen: dict[str, int] = {}
    with gc_paused():
        for number, record in records:
            try:
                dialogue = Dialogue.from_json(record, ontology)
            except InvalidContextError as exc:
                raise FileFormatError(path, str(exc), line=number) from None
            if dialogue.dialogue_id in seen:
                raise FileFormatError(
                    path,
                    f"dialogue_id {dialogue.dialogue_id!r} appears twice (first on line {seen[dialogue.dialogue_id]})",
                    line=number,
                )
            seen[dialogue.dialogue_id] = number
            dialogues.append(dialogue)
    domain = header.get("domain")
    if not isinstance(domain, str) or not domain:
        raise FileFormatError(path, f"header field 'domain' must be a non-empty string, got {json_excerpt(domain, 60)}", line=1)
    source = header.setdefault("source", {})
    if not isinstance(source, dict):
        raise FileFormatError(path, f"header field 'source' must be an object, got {source!r}", line=1)
    return header, dialogues
