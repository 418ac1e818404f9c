"""simscore's file formats by name, and telling a file of one kind from another.

Every file simscore, contexts and policies write names its kind in a ``format`` field: the
header line of a JSON Lines file, the first key of a JSON document (a saved comparison, which
has none, starts with the key ``simscore``). :func:`detect_format` reads that from a parsed
header or document or from a file's first characters, and :func:`kind_mismatch` says what a
file is and what belongs where it was given: every reader (:mod:`simscore.io`'s JSON Lines and
JSON readers, the CSV response reader, the saved-comparison reader) names a file of another
kind this way instead of failing on the first character that is not what it expects::

    graph.json, line 1: a flow graph (format 'simscore-flow-graph', one JSON document) where a
    context set (format 'simscore-contexts', JSON Lines) belongs

Only names live here (strings, no import of contexts or policies); a test checks that every
``*_FORMAT`` constant of the three packages is in :data:`FILE_FORMATS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from simscore.errors import excerpt

__all__ = ["FILE_FORMATS", "JSON_LINES_FORMATS", "COMPARISON_FORMAT", "detect_format", "kind_mismatch"]

#: The name :func:`detect_format` gives a saved comparison (``simscore compare A B --out CMP.json``),
#: a JSON document without a ``format`` field that starts with the key ``simscore``.
COMPARISON_FORMAT = "simscore-comparison"

#: What each of simscore's file formats holds, by the value of its ``format`` field.
FILE_FORMATS: dict[str, str] = {
    "simscore-responses": "a responses file",
    "simscore-contexts": "a context set",
    "simscore-dialogue-log": "a dialogue log",
    "simscore-pydial-beliefs": "a PyDial belief log",
    "simscore-convlab-states": "ConvLab dialogue states",
    "simscore-flow-graph": "a flow graph",
    "simscore-ontology": "an ontology",
    "simscore-venues": "a venue database",
    "simscore-tables": "the index of a table folder (tables.json)",
    "simscore-table": "a result table",
    COMPARISON_FORMAT: "a saved comparison",
    "simscore.gpsarsa": "a GP-SARSA checkpoint",
    "simscore.gpsarsa_policy": "a GP-SARSA policy checkpoint",
    "simscore.training_run": "a training run's record (run.json)",
    "simscore-pieces": "an experiment's record of what made its pieces (cache/pieces.json)",
    "simscore-embedding-cache": "the signature file of an embedding cache (signature.json, shard.json)",
}

#: The formats written as JSON Lines (a header line, then one record a line); the others are one JSON document.
JSON_LINES_FORMATS = frozenset(
    {"simscore-responses", "simscore-contexts", "simscore-dialogue-log", "simscore-pydial-beliefs",
     "simscore-convlab-states"}
)

#: The start of a file simscore wrote: an object whose first key is ``format`` (or ``simscore``, a comparison).
_START = re.compile(r'\A\ufeff?\s*\{\s*"(format|simscore)"\s*:\s*"([^"\\]{1,200})"')


def detect_format(sample: object) -> str | None:
    """The simscore format of a parsed header or document, or of a file's first characters; None if none.

    Parameters
    ----------
    sample : mapping or str
        A parsed JSON object (a header line, a whole document), or the first characters of a
        file (a few kB are enough: the format is the first key simscore writes); any other JSON
        value (a number, a list) has no format.

    Returns
    -------
    str or None
        The ``format`` field (any string, known or not), :data:`COMPARISON_FORMAT` for a saved
        comparison, or None for something else.

    Examples
    --------
    >>> detect_format({"format": "simscore-contexts", "version": 2})
    'simscore-contexts'
    >>> detect_format('{\\n "simscore": "0.2.0",\\n "a": "handcrafted",')
    'simscore-comparison'
    >>> detect_format("context_id,action,text") is None
    True
    >>> detect_format(0) is None
    True
    """
    if isinstance(sample, Mapping):
        found = sample.get("format")
        if isinstance(found, str):
            return found
        if isinstance(sample.get("simscore"), str) and "signatures" in sample:
            return COMPARISON_FORMAT
        return None
    if not isinstance(sample, str):  # a JSON document that is a number, a list, ...
        return None
    match = _START.match(sample)
    if match is None:
        return None
    if match[1] == "simscore":
        return COMPARISON_FORMAT
    try:  # the value as JSON reads it (escapes are excluded by the pattern, so this is exact)
        return str(json.loads(f'"{match[2]}"'))
    except ValueError:
        return None


def _describe(name: str) -> str:
    """What a format holds, its name and its container, for a message."""
    if name == COMPARISON_FORMAT:
        return f"{FILE_FORMATS[name]} (simscore compare --out, one JSON document)"
    if name in FILE_FORMATS:
        container = "JSON Lines" if name in JSON_LINES_FORMATS else "one JSON document"
        return f"{FILE_FORMATS[name]} (format {name!r}, {container})"
    return name if " " in name else f"a file of format {excerpt(name, 60)}"


def kind_mismatch(found: str, expected: str) -> str:
    """The message for a file of format ``found`` given where ``expected`` belongs.

    ``expected`` is a format name (of :data:`FILE_FORMATS`) or, for a file simscore does not
    write (ConvLab data, a CSV log), a description of it.

    >>> print(kind_mismatch("simscore-flow-graph", "simscore-contexts"))
    a flow graph (format 'simscore-flow-graph', one JSON document)
    where a context set (format 'simscore-contexts', JSON Lines) belongs
    >>> kind_mismatch("simscore-comparison", "a CSV response log")
    'a saved comparison (simscore compare --out, one JSON document) where a CSV response log belongs'
    """
    return f"{_describe(found)} where {_describe(expected)} belongs"
