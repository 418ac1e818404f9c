"""C_col: contexts collected from dialogues (dialogue logs or ConvLab-3 data).

Every turn of a logged dialogue is a moment where the system had to decide, so each turn
becomes a context: id ``col/<source-name>/<dialogue_id>/<turn_index>``, the logged belief
state, and metadata ``source="col"``, the dialogue id, the turn index, the dialogue's texts
before the decision (``history``) and ``source_name``. The paper kept repeated belief states
(C_col has repeats); ``deduplicate=True`` keeps only the first context of each distinct
belief state.

ConvLab-3's unified data format is imported by :func:`import_convlab` (see :func:`read_convlab`
for the mapping of its states and dialogue acts onto belief states, the ``user_action`` and
``system_action`` metadata a ConvLab policy reads, and the reporting of dialogues skipped for
another domain); PyDial belief logs by :func:`contexts.pydial.import_pydial`. A turn's own
``metadata`` (see :mod:`contexts.dialogue_log`) is copied into its context's metadata.

Examples
--------
>>> from contexts.belief import BeliefState
>>> from contexts.dialogue_log import Dialogue, DialogueTurn
>>> turns = (
...     DialogueTurn(turn_index=0, belief=BeliefState(), system_act="hello()", system_text="Hello."),
...     DialogueTurn(turn_index=1, user_act="inform(food=thai)", user_text="Thai food.",
...                  belief=BeliefState(slots={"food": {"thai": 1.0}}, method={"byconstraints": 1.0}),
...                  system_act="request(area)", system_text="Where?"),
... )
>>> log = ({"domain": "restaurants", "source": {"name": "sim"}}, [Dialogue("d0", turns)])
>>> cs = collect_contexts([log])
>>> cs.ids
('col/sim/d0/0', 'col/sim/d0/1')
>>> cs["col/sim/d0/1"].metadata["history"]
('Hello.', 'Thai food.')
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from contexts._bulk import gc_paused
from contexts.belief import BeliefState
from contexts.context import Context, ContextSet
from contexts.dialogue_log import Dialogue, DialogueTurn, read_dialogue_log
from contexts.domain import Domain, Ontology, default_domain
from simscore.acts import Act
from simscore.checks import check_int
from simscore.errors import (
    ActParseError,
    FileFormatError,
    InvalidContextError,
    NoContextsError,
    SkippedDialoguesWarning,
)
from simscore.formats import FILE_FORMATS, detect_format, kind_mismatch
from simscore.io import read_json

__all__ = ["collect_contexts", "import_convlab", "read_convlab", "dialogue_contexts"]

LogInput = str | os.PathLike[str] | tuple[Mapping[str, Any], Sequence[Dialogue]]


def dialogue_contexts(
    dialogue: Dialogue, source_name: str, *, require_user_turn: bool = False
) -> list[Context]:
    """The contexts of one dialogue, one per turn (see the module docstring).

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


def _source_name(header: Mapping[str, Any], path: Path | None, position: int) -> str:
    source = header.get("source")
    if isinstance(source, Mapping):
        name = source.get("name")
        if isinstance(name, str) and name:
            return name
    if path is not None:
        return path.stem
    return f"log{position}"


def _load(log: Any, position: int, ontology: Ontology | None) -> tuple[dict[str, Any], list[Dialogue], Path | None]:
    if isinstance(log, (str, os.PathLike)):
        path = Path(log)
        header, dialogues = read_dialogue_log(path, ontology=ontology)
        return header, dialogues, path
    if isinstance(log, tuple) and len(log) == 2 and isinstance(log[0], Mapping):
        header = dict(log[0])
        dialogues = list(log[1])
        for dialogue in dialogues:
            if not isinstance(dialogue, Dialogue):
                raise InvalidContextError(f"log {position}: expected Dialogue objects, got {type(dialogue).__name__}")
            if ontology is not None:
                for turn in dialogue.turns:
                    turn.belief.validate(ontology)
        return header, dialogues, None
    raise InvalidContextError(
        f"log {position}: expected a path or a (header, dialogues) pair as returned by read_dialogue_log, "
        f"got {type(log).__name__}"
    )


def _collect(
    sources: Sequence[tuple[str, Mapping[str, Any], Sequence[Dialogue], Path | None]],
    *,
    dialogues_per_source: int | None,
    deduplicate: bool,
    name: str,
    domain_name: str | None,
    require_user_turn: bool,
    built_extra: Mapping[str, Any],
) -> ContextSet:
    if dialogues_per_source is not None:
        dialogues_per_source = check_int(
            "dialogues_per_source", dialogues_per_source, minimum=1, error=InvalidContextError
        )
    used: dict[str, int] = {}
    contexts: list[Context] = []
    seen_beliefs: set[tuple[Any, ...]] = set()
    dropped = 0
    described = []
    for source_name, header, dialogues, path in sources:
        taken = 0
        with gc_paused():
            for dialogue in dialogues:
                if dialogues_per_source is not None and used.get(source_name, 0) >= dialogues_per_source:
                    break
                used[source_name] = used.get(source_name, 0) + 1
                taken += 1
                for context in dialogue_contexts(dialogue, source_name, require_user_turn=require_user_turn):
                    if deduplicate:
                        key = context.belief.key()
                        if key in seen_beliefs:
                            dropped += 1
                            continue
                        seen_beliefs.add(key)
                    contexts.append(context)
        described.append(
            {
                "name": source_name,
                "path": None if path is None else str(path),
                "provenance": header.get("source", {}),
                "dialogues_available": len(dialogues),
                "dialogues_used": taken,
            }
        )
    built = {
        "collector": "contexts.collect_contexts",
        **built_extra,
        "dialogues_per_source": dialogues_per_source,
        "deduplicate": deduplicate,
        "duplicates_dropped": dropped,
        "sources": described,
    }
    return ContextSet(contexts, name=name, domain=domain_name, built=built)


def collect_contexts(
    logs: Iterable[LogInput],
    *,
    dialogues_per_source: int | None = None,
    deduplicate: bool = False,
    name: str = "C_col",
    domain: Domain | None = None,
) -> ContextSet:
    """Collect contexts (C_col) from dialogue logs.

    Parameters
    ----------
    logs : iterable of path or (header, dialogues)
        Dialogue-log files, or pairs as returned by
        :func:`~contexts.dialogue_log.read_dialogue_log`. A log's source name is its
        header's ``source.name``, else the file's stem, else ``log<position>``; logs with
        the same source name count as one source.
    dialogues_per_source : int, optional
        Use only the first N dialogues of each source (default: all).
    deduplicate : bool
        Keep only the first context of each distinct belief state (default False: the
        paper kept repeats).
    name : str
        Name of the returned set.
    domain : Domain, optional
        If given, every log must be of this domain (header ``domain``) and every belief is
        validated against its ontology. Otherwise all logs must name the same domain.

    Returns
    -------
    ContextSet
        In log, dialogue and turn order.

    Raises
    ------
    FileFormatError
        For a bad log file (naming file and line).
    InvalidContextError
        For logs of different domains, a duplicate context id, or a bad argument.
    """
    ontology = None if domain is None else domain.ontology
    loaded = []
    domains: dict[str, str] = {}
    for position, log in enumerate(logs):
        header, dialogues, path = _load(log, position, ontology)
        log_label = str(path) if path is not None else f"log {position}"
        log_domain = header.get("domain")
        if domain is not None and log_domain is not None and log_domain != domain.name:
            raise InvalidContextError(f"{log_label} is of domain {log_domain!r}, expected {domain.name!r}")
        if isinstance(log_domain, str):
            domains[log_label] = log_domain
        loaded.append((_source_name(header, path, position), header, dialogues, path))
    if len(set(domains.values())) > 1:
        listed = ", ".join(f"{label}: {d!r}" for label, d in domains.items())
        raise InvalidContextError(f"the logs are of different domains ({listed})")
    domain_name = domain.name if domain is not None else next(iter(domains.values()), None)
    return _collect(
        loaded,
        dialogues_per_source=dialogues_per_source,
        deduplicate=deduplicate,
        name=name,
        domain_name=domain_name,
        require_user_turn=False,
        built_extra={},
    )


# ---------------------------------------------------------------------------------------
# ConvLab-3 unified data format

#: What :func:`read_convlab` reads, for the message naming a file of another kind.
_CONVLAB_DATA = "ConvLab-3 dialogues (one JSON document: a list of dialogues)"
_CONVLAB_SLOTS = {"area": "area", "food": "food", "pricerange": "pricerange", "price range": "pricerange", "name": "name"}
_CONVLAB_REQUESTS = {
    "address": "addr", "addr": "addr", "phone": "phone", "postcode": "postcode", "area": "area", "food": "food",
    "pricerange": "pricerange", "price range": "pricerange", "name": "name", "signature": "signature",
    "description": "description",
}
_DONTCARE = frozenset(("dontcare", "don't care", "dont care", "do n't care", "do not care"))


def _acts(turn: Mapping[str, Any], where: str) -> list[tuple[str, str, str, str]]:
    """The turn's dialogue acts as (intent, domain, slot, value) tuples (lower-cased)."""
    acts = turn.get("dialogue_acts", {})
    if acts is None:
        return []
    if not isinstance(acts, Mapping):
        raise InvalidContextError(f"{where}: 'dialogue_acts' must be an object")
    out = []
    for kind in ("categorical", "non-categorical", "binary"):
        entries = acts.get(kind, [])
        if not isinstance(entries, list):
            raise InvalidContextError(f"{where}: dialogue_acts[{kind!r}] must be a list")
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("intent"), str):
                raise InvalidContextError(f"{where}: a {kind} dialogue act lacks a string 'intent': {entry!r}")
            parts = [entry.get(key, "") for key in ("domain", "slot", "value")]
            if not all(isinstance(p, str) for p in parts):
                raise InvalidContextError(f"{where}: dialogue act fields must be strings: {entry!r}")
            out.append((entry["intent"].strip().lower(), *(p.strip().lower() for p in parts[:2]), parts[2].strip()))
    return out


def _act_string(acts: list[tuple[str, str, str, str]], where: str) -> str | None:
    if not acts:
        return None
    try:
        return str(Act.from_convlab([list(a) for a in acts]))
    except ActParseError as exc:
        raise InvalidContextError(f"{where}: cannot convert the dialogue acts ({exc.reason})") from None


def _belief_from_convlab(
    state: Any,
    user_acts: list[tuple[str, str, str, str]],
    history_flags: dict[str, Any],
    *,
    ontology: Ontology,
    convlab_domain: str,
    skip_unknown_values: bool,
    where: str,
) -> BeliefState:
    if state is None:
        state = {}
    if not isinstance(state, Mapping):
        raise InvalidContextError(f"{where}: 'state' must be an object of domain -> slots")
    domain_state = state.get(convlab_domain, {})
    if not isinstance(domain_state, Mapping):
        raise InvalidContextError(f"{where}: state[{convlab_domain!r}] must be an object of slot -> value")
    slots: dict[str, dict[str, float]] = {slot: {"none": 1.0} for slot in ontology.informable}
    filled: set[str] = set()
    for convlab_slot, raw in domain_state.items():
        slot = _CONVLAB_SLOTS.get(str(convlab_slot).strip().lower())
        if slot is None or slot not in ontology.informable:
            continue
        if not isinstance(raw, str):
            raise InvalidContextError(f"{where}: state value of {convlab_slot!r} must be a string, got {raw!r}")
        value = raw.split("|")[0].strip().lower()
        if value in ("", "none"):
            continue
        if value in _DONTCARE:
            slots[slot] = {"dontcare": 1.0}
            continue
        if value not in ontology.informable[slot]:
            if skip_unknown_values:
                continue
            raise InvalidContextError(
                f"{where}: value {raw!r} of slot {convlab_slot!r} is not in the ontology "
                "(pass skip_unknown_values=True, or --skip-unknown-values on the command line, to treat unknown values as none)"
            )
        slots[slot] = {value: 1.0}
        filled.add(slot)
    intents = {intent for intent, _, _, _ in user_acts}
    if "bye" in intents:
        method = "finished"
    elif "name" in filled:
        method = "byname"
    elif filled:
        method = "byconstraints"
    else:
        method = "none"
    if "bye" in intents:
        discourse = "bye"
    elif "thank" in intents or "thankyou" in intents:
        discourse = "thankyou"
    elif "greet" in intents or "hello" in intents:
        discourse = "hello"
    else:
        discourse = "none"
    requested: dict[str, float] = {}
    for intent, act_domain, slot, _ in user_acts:
        if intent == "request" and act_domain in (convlab_domain, ""):
            mapped = _CONVLAB_REQUESTS.get(slot)
            if mapped is not None and mapped in ontology.requestable:
                requested[mapped] = 1.0
    return BeliefState(
        slots=slots,
        method={method: 1.0},
        discourse_act={discourse: 1.0},
        requested=requested,
        last_offered=history_flags["last_offered"],
        offer_happened=history_flags["offer_happened"],
        last_informed_no_venue=history_flags["last_informed_no_venue"],
        last_act_offered=history_flags["last_act_offered"],
        offered_since_no_venue=history_flags["offered_since_no_venue"],
    )


def _convlab_turns(raw: Any, position: int) -> tuple[str, list[tuple[str, str, str | None, Mapping[str, Any]]]]:
    """A unified-format dialogue's id and its turns as ``(where, speaker, utterance, turn)``, checked.

    ``where`` names the dialogue and utterance for error messages; the speaker is ``user``
    or ``system``, the utterance a string or None.
    """
    if not isinstance(raw, Mapping):
        raise InvalidContextError(f"dialogue {position}: expected an object, got {type(raw).__name__}")
    dialogue_id = raw.get("dialogue_id")
    if not isinstance(dialogue_id, str) or not dialogue_id:
        raise InvalidContextError(f"dialogue {position}: 'dialogue_id' must be a non-empty string")
    turns = raw.get("turns")
    if not isinstance(turns, list):
        raise InvalidContextError(f"dialogue {dialogue_id!r}: 'turns' must be a list")
    out = []
    for index, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            raise InvalidContextError(f"dialogue {dialogue_id!r}, turn {index}: a turn must be an object")
        where = f"dialogue {dialogue_id!r}, utt_idx {turn.get('utt_idx', index)}"
        speaker = turn.get("speaker")
        text = turn.get("utterance")
        if text is not None and not isinstance(text, str):
            raise InvalidContextError(f"{where}: 'utterance' must be a string")
        if speaker not in ("user", "system"):
            raise InvalidContextError(f"{where}: 'speaker' must be 'user' or 'system', got {speaker!r}")
        out.append((where, speaker, text, turn))
    return dialogue_id, out


def _convlab_dialogue(
    raw: Any,
    position: int,
    *,
    ontology: Ontology,
    convlab_domain: str,
    skip_unknown_values: bool,
) -> Dialogue:
    dialogue_id, turns = _convlab_turns(raw, position)
    names = frozenset(ontology.informable.get("name", ()))
    flags: dict[str, Any] = {"last_offered": None, "offer_happened": False, "last_informed_no_venue": False,
                             "last_act_offered": False, "offered_since_no_venue": ()}
    out: list[DialogueTurn] = []
    user_texts: list[str] = []
    user_acts: list[tuple[str, str, str, str]] = []
    system_acts: list[tuple[str, str, str, str]] = []
    last_state: Any = None
    user_turns = 0
    for where, speaker, text, turn in turns:
        acts = _acts(turn, where)
        if speaker == "user":
            user_turns += 1
            if text is not None:
                user_texts.append(text)
            user_acts.extend(acts)
            last_state = turn.get("state")
            continue
        if user_turns == 0 and not out:
            # A system opening: no context (no user turn before it), but it is history.
            out.append(
                DialogueTurn(turn_index=0, belief=BeliefState.initial(ontology),
                             system_act=_act_string(acts, where), system_text=text)
            )
        elif user_texts or user_acts:
            belief = _belief_from_convlab(
                last_state, user_acts, flags, ontology=ontology, convlab_domain=convlab_domain,
                skip_unknown_values=skip_unknown_values, where=where,
            )
            out.append(
                DialogueTurn(
                    turn_index=user_turns,
                    user_act=_act_string(user_acts, where),
                    user_text=" ".join(user_texts) if user_texts else None,
                    belief=belief,
                    system_act=_act_string(acts, where),
                    system_text=text,
                    metadata={
                        "user_action": [list(act) for act in user_acts],
                        "system_action": [list(act) for act in system_acts],
                    },
                )
            )
            user_texts, user_acts = [], []
        else:
            raise InvalidContextError(f"{where}: two system turns in a row")
        system_acts = acts
        flags["last_informed_no_venue"] = False
        flags["last_act_offered"] = False
        for intent, act_domain, slot, value in acts:
            if act_domain != convlab_domain:
                continue
            if intent == "nooffer":
                flags["last_informed_no_venue"] = True
                flags["offered_since_no_venue"] = ()
            elif slot == "name" and value.lower() not in ("", "none", "?"):
                flags["offer_happened"] = flags["last_act_offered"] = True
                lowered = value.lower()
                flags["last_offered"] = lowered if lowered in names else None
                if lowered in names:
                    flags["offered_since_no_venue"] = (*flags["offered_since_no_venue"], lowered)
    return Dialogue(dialogue_id, tuple(out), {})


def read_convlab(
    path: str | os.PathLike[str],
    *,
    ontology: Ontology | None = None,
    convlab_domain: str = "restaurant",
    skip_unknown_values: bool = False,
    max_dialogues: int | None = None,
) -> list[Dialogue]:
    """Read a ConvLab-3 unified-format ``dialogues.json`` as :class:`Dialogue` objects.

    Only dialogues whose ``domains`` list (if present) contains ``convlab_domain`` are read.
    Each system turn after one or more user turns becomes a turn with ``turn_index`` = the
    number of user turns so far (the user speaks first in ConvLab data, so the first
    decision is turn 1, as after the system's opening in a simulated dialogue); a system
    opening before any user turn becomes turn 0 (its text is history; it is no context).
    The belief at a turn comes from the last user turn's ``state[convlab_domain]``:

    * slots food, area, pricerange (``price range``), name -> one-hot distributions over the
      ontology (value ``""`` -> none, ``dontcare`` -> dontcare; values lower-cased, of
      ``a|b`` alternatives the first); a value unknown to the ontology is an error naming
      it, or treated as none with ``skip_unknown_values=True``;
    * method one-hot: finished if the user said bye, byname if the name slot is filled,
      byconstraints if another slot is, else none;
    * discourse act one-hot from the user's general intents: bye, thank -> thankyou,
      greet -> hello, else none;
    * requested: 1 for each slot the user requested in that turn (address -> addr; slots
      the ontology cannot request are ignored);
    * history flags from the system's earlier acts in the domain: an act with a ``name``
      value is an offer (``last_offered`` is set, and the venue added to
      ``offered_since_no_venue``, if the name is a venue of the ontology; an offer in the
      previous system turn sets ``last_act_offered``), ``nooffer`` in the previous system turn
      sets ``last_informed_no_venue`` and empties ``offered_since_no_venue``.

    Every turn's :attr:`~contexts.dialogue_log.DialogueTurn.metadata` keeps what a ConvLab
    policy reads besides the belief state, as lists ``[intent, domain, slot, value]`` in the
    unified format (lower-case, the data's slot names, ``""`` for the value of a binary act
    such as a request; what ConvLab-3's ``flatten_acts`` gives), of every domain:

    * ``user_action``: the user's acts since the previous system turn (the turn the system
      answers);
    * ``system_action``: the acts of the previous system turn (``[]`` before the first).

    :func:`policies.convlab.to_convlab_state` puts them into the state (converted to
    ConvLab-2's act format for ``state_format="convlab2"``).

    Dialogues whose ``domains`` list lacks ``convlab_domain`` are skipped with a
    :class:`~simscore.errors.SkippedDialoguesWarning` that counts them and their turns and
    lists the domains they have.

    Raises
    ------
    FileFormatError
        Naming the file and the dialogue / utterance at fault.
    NoContextsError
        If no dialogue is left (every one skipped, naming the domains found, or an empty list).
    """
    p = Path(path)
    ontology = default_domain().ontology if ontology is None else ontology
    return _convlab_dialogues(
        _load_convlab_json(p), p, ontology=ontology, convlab_domain=convlab_domain,
        skip_unknown_values=skip_unknown_values, max_dialogues=max_dialogues,
    )


def _load_convlab_json(path: Path) -> list[Any]:
    if path.is_dir():
        raise FileFormatError(path, "is a directory, expected dialogues.json")
    data = read_json(path, expected=_CONVLAB_DATA)
    found = detect_format(data) if isinstance(data, dict) else None
    if found in FILE_FORMATS:
        raise FileFormatError(path, kind_mismatch(found, _CONVLAB_DATA))
    if not isinstance(data, list):
        raise FileFormatError(path, f"expected a JSON list of dialogues, got {type(data).__name__}")
    return data


def _convlab_dialogues(
    data: list[Any],
    path: Path,
    *,
    ontology: Ontology,
    convlab_domain: str,
    skip_unknown_values: bool,
    max_dialogues: int | None,
) -> list[Dialogue]:
    out: list[Dialogue] = []
    seen: set[str] = set()
    skipped = skipped_turns = 0
    other_domains: Counter[str] = Counter()
    for position, raw in enumerate(data):
        if max_dialogues is not None and len(out) >= max_dialogues:
            break
        if isinstance(raw, Mapping):
            domains = raw.get("domains")
            if isinstance(domains, list) and convlab_domain not in domains:
                skipped += 1
                turns = raw.get("turns")
                skipped_turns += len(turns) if isinstance(turns, list) else 0
                other_domains.update(d for d in domains if isinstance(d, str))
                continue
        try:
            dialogue = _convlab_dialogue(
                raw, position, ontology=ontology, convlab_domain=convlab_domain,
                skip_unknown_values=skip_unknown_values,
            )
        except InvalidContextError as exc:
            raise FileFormatError(path, str(exc)) from None
        if dialogue.dialogue_id in seen:
            raise FileFormatError(path, f"dialogue_id {dialogue.dialogue_id!r} appears twice")
        seen.add(dialogue.dialogue_id)
        out.append(dialogue)
    if skipped:
        found = ", ".join(f"{name} ({count})" for name, count in other_domains.most_common(8)) or "none"
        reason = f"their 'domains' list lacks {convlab_domain!r} (domains they have: {found})"
        if not out:
            raise NoContextsError(
                f"{path}: no dialogue of domain {convlab_domain!r}: all {skipped} dialogues ({skipped_turns} turns) "
                f"were skipped because {reason}; choose one of their domains (convlab_domain=..., "
                "--convlab-domain on the command line)"
            )
        warnings.warn(
            SkippedDialoguesWarning(
                path, skipped_dialogues=skipped, skipped_turns=skipped_turns, kept_dialogues=len(out), reason=reason
            ),
            stacklevel=3,
        )
    if not out:
        raise NoContextsError(f"{path}: no dialogues (an empty list)")
    return out


def import_convlab(
    path: str | os.PathLike[str],
    *,
    domain: Domain | None = None,
    name: str = "C_col",
    source_name: str | None = None,
    dialogues_per_source: int | None = None,
    deduplicate: bool = False,
    skip_unknown_values: bool = False,
    convlab_domain: str = "restaurant",
) -> ContextSet:
    """Collect contexts from a ConvLab-3 unified-format ``dialogues.json``.

    One context per system turn that follows a user turn (see :func:`read_convlab` for the
    mapping and the skipping of other domains' dialogues); ids
    ``col/<source_name>/<dialogue_id>/<turn_index>``. Besides the standard metadata each
    context keeps ``user_action`` and ``system_action`` (see :func:`read_convlab`), so a
    ConvLab policy run on it (:class:`policies.ConvLabPolicy`, or
    ``simscore contexts export``) sees the user's acts and its own previous acts.

    Parameters
    ----------
    path : path-like
        The ``dialogues.json`` file (a JSON list of dialogues).
    domain : Domain, optional
        Whose ontology the states are mapped onto; default the shipped domain.
    name : str
        Name of the returned set.
    source_name : str, optional
        Default: the dialogues' ``dataset`` field, else the file's stem.
    dialogues_per_source, deduplicate
        As in :func:`collect_contexts`.
    skip_unknown_values : bool
        Treat state values unknown to the ontology as none instead of failing.
    convlab_domain : str
        The ConvLab domain whose state is read (default ``restaurant``).

    Warns
    -----
    SkippedDialoguesWarning
        When dialogues without ``convlab_domain`` were skipped (with counts).

    Raises
    ------
    FileFormatError
        For a malformed file (naming the dialogue and utterance).
    NoContextsError
        When no dialogue of ``convlab_domain`` is in the file.
    """
    domain = default_domain() if domain is None else domain
    p = Path(path)
    data = _load_convlab_json(p)
    dialogues = _convlab_dialogues(
        data, p, ontology=domain.ontology, convlab_domain=convlab_domain,
        skip_unknown_values=skip_unknown_values, max_dialogues=dialogues_per_source,
    )
    if source_name is None:
        dataset = data[0].get("dataset") if data and isinstance(data[0], Mapping) else None
        source_name = dataset if isinstance(dataset, str) and dataset else p.stem
    header = {"domain": domain.name, "source": {"name": source_name, "convlab_file": str(p)}}
    return _collect(
        [(source_name, header, dialogues, p)],
        dialogues_per_source=dialogues_per_source,
        deduplicate=deduplicate,
        name=name,
        domain_name=domain.name,
        require_user_turn=True,
        built_extra={"importer": "contexts.import_convlab", "convlab_domain": convlab_domain,
                     "skip_unknown_values": skip_unknown_values},
    )
