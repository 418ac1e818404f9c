"""What the collectors of C_col share: a log's source name, and contexts from loaded sources.

:func:`contexts.collect.collect_contexts` and :func:`~contexts.collect.import_convlab` in
:mod:`contexts.collect`, :func:`contexts.pydial.import_pydial`, and the flow dialogues of
:mod:`contexts.flows.dialogues` (whose labels must find the contexts collected from the same file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from contexts._bulk import gc_paused
from contexts.context import Context, ContextSet
from contexts.dialogue_log import Dialogue, dialogue_contexts
from simscore.checks import check_int
from simscore.errors import InvalidContextError


def _source_name(header: Mapping[str, Any], path: Path | None, position: int) -> str:
    source = header.get("source")
    if isinstance(source, Mapping):
        name = source.get("name")
        if isinstance(name, str) and name:
            return name
    if path is not None:
        return path.stem
    return f"log{position}"


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
