"""C_col from PyDial: belief dicts logged turn by turn, read as contexts.

PyDial does not write its belief states to a structured log (only at DEBUG level, as
``pprint`` text), so a PyDial user records them with a few lines in their agent — for
example after the belief tracker's update in ``Agent.py`` — as a JSON Lines file in the
format below, and collects contexts from it with :func:`import_pydial` (or
``simscore contexts collect --pydial FILE``).

Format (``simscore-pydial-beliefs``, version 1): a header line

``{"format": "simscore-pydial-beliefs", "version": 1, "source": {"name": ..., ...}}``

(``source`` is optional free-form provenance; its ``name`` names the source in context ids),
then one line per system decision::

    {"dialogue_id": "d0", "turn_index": 1,
     "belief": {"beliefs": {...}, "features": {...}, "userActs": [["inform(food=\\"thai\\")", 0.9]]},
     "system_act": "request(area)", "user_text": "Thai food.", "system_text": "Which area?"}

* ``dialogue_id`` (non-empty string) and ``turn_index`` (int >= 0, increasing within a
  dialogue; turn 0 is the system's opening) are required; lines of different dialogues may
  interleave.
* ``belief`` (required) is PyDial's belief dict as its tracker returns it (``json.dumps`` turns
  its tuples into lists), or only its ``beliefs`` dict; it becomes a
  :class:`~contexts.belief.BeliefState` through
  :meth:`BeliefState.from_pydial <contexts.belief.BeliefState.from_pydial>` (see there for the
  mapping and its caveats).
* ``system_act`` (the act the system took, a PyDial string), ``user_text`` and
  ``system_text`` are optional (null if absent); the texts become the contexts' history.

Each line becomes one context ``col/<source>/<dialogue_id>/<turn_index>`` with the standard
metadata (``source="col"``, dialogue id, turn index, history, ``source_name``) and
``user_acts``: PyDial's ``userActs`` n-best list as ``[[act string, probability], ...]``
(``[]`` if absent), kept as PyDial wrote it (the acts are not parsed).

Examples
--------
>>> import json, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "beliefs.jsonl"
>>> lines = [{"format": "simscore-pydial-beliefs", "version": 1, "source": {"name": "camrest"}},
...          {"dialogue_id": "d0", "turn_index": 0, "belief": {"beliefs": {"area": {"**NONE**": 1.0}}},
...           "system_act": "hello()", "system_text": "Hello!"},
...          {"dialogue_id": "d0", "turn_index": 1, "user_text": "Thai food.",
...           "belief": {"beliefs": {"food": {"thai": 1.0, "**NONE**": 0.0}, "method": {"byconstraints": 1.0}},
...                      "userActs": [["inform(food=thai)", 1.0]]}}]
>>> _ = path.write_text("\\n".join(map(json.dumps, lines)))
>>> cs = import_pydial(path)
>>> cs.ids
('col/camrest/d0/0', 'col/camrest/d0/1')
>>> c = cs["col/camrest/d0/1"]
>>> c.belief.top("food"), c.metadata["history"], c.metadata["user_acts"]
(('thai', 1.0), ('Hello!', 'Thai food.'), (('inform(food=thai)', 1.0),))
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contexts._bulk import gc_paused
from contexts._collect import _collect
from contexts.belief import BeliefState
from contexts.context import ContextSet
from contexts.dialogue_log import Dialogue, DialogueTurn
from contexts.domain import Domain, Ontology, default_domain
from simscore.errors import FileFormatError, InvalidContextError, NoContextsError, json_excerpt
from simscore.io import read_jsonl

__all__ = ["PYDIAL_BELIEFS_FORMAT", "PYDIAL_BELIEFS_VERSION", "read_pydial_beliefs", "import_pydial"]

#: The ``format`` field of a PyDial belief-log header.
PYDIAL_BELIEFS_FORMAT = "simscore-pydial-beliefs"
#: The current (and only) version of the PyDial belief-log format.
PYDIAL_BELIEFS_VERSION = 1

_RECORD_KEYS = frozenset(("dialogue_id", "turn_index", "belief", "system_act", "user_text", "system_text"))


def _user_acts(belief: Any) -> list[list[Any]]:
    """PyDial's ``userActs`` n-best list as ``[[act, probability], ...]`` (checked)."""
    acts = belief.get("userActs", []) if isinstance(belief, Mapping) and "beliefs" in belief else []
    if acts is None:
        return []
    if isinstance(acts, (str, bytes)) or not isinstance(acts, list):
        raise InvalidContextError(f"'userActs' must be a list of [act, probability], got {type(acts).__name__}")
    out = []
    for position, entry in enumerate(acts):
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not isinstance(entry[0], str)
            or isinstance(entry[1], bool)
            or not isinstance(entry[1], (int, float))
        ):
            raise InvalidContextError(f"'userActs' item {position} must be [act string, probability], got {entry!r}")
        out.append([entry[0], entry[1]])
    return out


def _turn(record: dict[str, Any], ontology: Ontology | None, skip_unknown_values: bool) -> tuple[str, DialogueTurn]:
    unknown = sorted(set(record) - _RECORD_KEYS)
    if unknown:
        raise InvalidContextError(
            f"unknown field(s) {', '.join(map(repr, unknown))} (known: {', '.join(sorted(_RECORD_KEYS))})"
        )
    for key in ("dialogue_id", "turn_index", "belief"):
        if key not in record:
            raise InvalidContextError(f"missing field {key!r}")
    dialogue_id = record["dialogue_id"]
    if not isinstance(dialogue_id, str) or not dialogue_id:
        raise InvalidContextError(f"'dialogue_id' must be a non-empty string, got {json_excerpt(dialogue_id, 60)}")
    belief = record["belief"]
    turn = DialogueTurn(
        turn_index=record["turn_index"],
        belief=BeliefState.from_pydial(belief, ontology, skip_unknown_values=skip_unknown_values),
        user_text=record.get("user_text"),
        system_act=record.get("system_act"),
        system_text=record.get("system_text"),
        metadata={"user_acts": _user_acts(belief)},
    )
    return dialogue_id, turn


def read_pydial_beliefs(
    path: str | os.PathLike[str], *, ontology: Ontology | None = None, skip_unknown_values: bool = False
) -> tuple[dict[str, Any], list[Dialogue]]:
    """Read a PyDial belief log (format in the module docstring) as dialogues.

    Parameters
    ----------
    path : path-like
    ontology : Ontology, optional
        Check slot, value, requestable and venue names against it (see
        :meth:`BeliefState.from_pydial <contexts.belief.BeliefState.from_pydial>`).
    skip_unknown_values : bool
        With an ontology, treat unknown values as none instead of failing.

    Returns
    -------
    header : dict
        With ``source`` (``{}`` if absent).
    dialogues : list of Dialogue
        In order of their first line; turns in file order.

    Raises
    ------
    FileFormatError
        Naming the file and the line at fault: a bad header, invalid JSON, a missing or
        unknown field, a bad belief, an unparsable system act, turn indices that do not
        increase within a dialogue.
    NoContextsError
        If the file has no line after its header.
    """
    header, records = read_jsonl(path, format_name=PYDIAL_BELIEFS_FORMAT, versions=(PYDIAL_BELIEFS_VERSION,))
    source = header.setdefault("source", {})
    if not isinstance(source, dict):
        raise FileFormatError(path, f"header field 'source' must be an object, got {json_excerpt(source, 60)}", line=1)
    turns: dict[str, list[DialogueTurn]] = {}
    last_line: dict[str, int] = {}
    with gc_paused():
        for number, record in records:
            try:
                dialogue_id, turn = _turn(record, ontology, skip_unknown_values)
            except InvalidContextError as exc:
                raise FileFormatError(path, str(exc), line=number) from None
            previous = turns.setdefault(dialogue_id, [])
            if previous and turn.turn_index <= previous[-1].turn_index:
                raise FileFormatError(
                    path,
                    f"dialogue {dialogue_id!r}: turn_index {turn.turn_index} follows {previous[-1].turn_index} "
                    f"(line {last_line[dialogue_id]}); turn indices must increase within a dialogue",
                    line=number,
                )
            previous.append(turn)
            last_line[dialogue_id] = number
    if not turns:
        raise NoContextsError(f"{path}: no belief lines after the header")
    return header, [Dialogue(dialogue_id, tuple(dialogue_turns)) for dialogue_id, dialogue_turns in turns.items()]


def import_pydial(
    path: str | os.PathLike[str],
    *,
    domain: Domain | None = None,
    name: str = "C_col",
    source_name: str | None = None,
    dialogues_per_source: int | None = None,
    deduplicate: bool = False,
    skip_unknown_values: bool = False,
) -> ContextSet:
    """Collect contexts (C_col) from a PyDial belief log (format in the module docstring).

    Parameters
    ----------
    path : path-like
    domain : Domain, optional
        The domain the beliefs belong to (names are checked against its ontology); default
        the shipped one. PyDial's own CamRestaurants venues are not the shipped domain's:
        pass the matching domain (``load_domain``) or ``skip_unknown_values=True``.
    name : str
        Name of the returned set.
    source_name : str, optional
        Default: the header's ``source.name``, else the file's stem.
    dialogues_per_source, deduplicate
        As in :func:`contexts.collect.collect_contexts`.
    skip_unknown_values : bool
        Treat values, slots and venues unknown to the ontology as none instead of failing.

    Returns
    -------
    ContextSet
        One context per line, in dialogue and turn order.

    Raises
    ------
    FileFormatError
        Naming the file and the line at fault.
    NoContextsError
        If the file has no belief line.
    """
    domain = default_domain() if domain is None else domain
    p = Path(path)
    header, dialogues = read_pydial_beliefs(p, ontology=domain.ontology, skip_unknown_values=skip_unknown_values)
    if source_name is None:
        named = header["source"].get("name")
        source_name = named if isinstance(named, str) and named else p.stem
    return _collect(
        [(source_name, header, dialogues, p)],
        dialogues_per_source=dialogues_per_source,
        deduplicate=deduplicate,
        name=name,
        domain_name=domain.name,
        require_user_turn=False,
        built_extra={"importer": "contexts.import_pydial", "skip_unknown_values": skip_unknown_values},
    )
