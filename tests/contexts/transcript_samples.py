"""A small OpenAI-style chat-transcripts file written by hand (two conversations), for the
transcript readers' tests, their fuzzing and the documentation's example."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "find_flight", "description": "Flights between two airports on a day.",
     "parameters": {"type": "object", "properties": {"origin": {"type": "string"}, "destination": {"type": "string"},
                                                     "date": {"type": "string"}}, "required": ["origin", "destination"]}}},
    {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


CONVERSATIONS: list[dict[str, Any]] = [
    {
        "id": "trip-1", "task_id": "trip", "trial": 0, "tools": TOOLS,
        "messages": [
            {"role": "system", "content": "You book flights."},
            {"role": "user", "content": "I need a flight from SFO to Boston on May 3, and is it raining there?"},
            {"role": "assistant", "content": "Let me check both.", "tool_calls": [
                _call("c1", "find_flight", {"origin": "SFO", "destination": "BOS", "date": "2025-05-03"}),
                _call("c2", "get_weather", {"city": "Boston"})]},
            {"role": "tool", "tool_call_id": "c1", "content": '[{"flight": "UA 12", "departs": "08:05"}]'},
            {"role": "tool", "tool_call_id": "c2", "content": '{"rain": false}'},
            {"role": "assistant", "content": "UA 12 leaves at 08:05, and Boston is dry."},
        ],
    },
    {
        "id": "trip-2", "task_id": "trip", "trial": 1, "tools": TOOLS,
        "messages": [
            {"role": "system", "content": "You book flights."},
            {"role": "user", "content": "I need a flight from SFO to Boston on May 3, and is it raining there?"},
            {"role": "assistant", "content": None, "tool_calls": [
                _call("d1", "get_weather", {"city": "Boston"})]},
            {"role": "tool", "tool_call_id": "d1", "content": '{"rain": false}'},
            {"role": "assistant", "content": "Which day would you like to fly?"},
        ],
    },
]


def write_chat_transcripts(path: Path) -> Path:
    """Write :data:`CONVERSATIONS` as JSON Lines to ``path``."""
    path.write_text("".join(json.dumps(c) + "\n" for c in CONVERSATIONS), encoding="utf-8")
    return path
