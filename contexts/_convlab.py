"""ConvLab-3's unified data format read as dialogues (the reading behind :func:`contexts.collect.read_convlab`).

The mapping of states and dialogue acts onto belief states is documented on
:func:`~contexts.collect.read_convlab`; :mod:`contexts.flows.dialogues` reads the same files'
turns and acts for flow graphs.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contexts.belief import BeliefState
from contexts.dialogue_log import Dialogue, DialogueTurn
from contexts.domain import Ontology
from simscore.acts import Act
from simscore.errors import (
    ActParseError,
    FileFormatError,
    InvalidContextError,
    NoContextsError,
    SkippedDialoguesWarning,
)
from simscore.io import read_json
from simscore.io.formats import FILE_FORMATS, detect_format, kind_mismatch

#: What :func:`contexts.collect.read_convlab` reads, for the message naming a file of another kind.
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
