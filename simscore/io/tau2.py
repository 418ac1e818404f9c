"""τ²-bench results in every layout its runner saves, read as one list of simulations.

τ²-bench (sierra-research/tau2-bench) saves a run's ``Results`` in one of two layouts, and
both readers of its results (:func:`contexts.transcripts.read_tau2_results`,
:func:`simscore.outcomes.gate.read_outcome_log`) read them through :func:`tau2_results`:

* **one JSON document** (its ``"json"`` layout: the default for text runs, and the only one of
  earlier versions): ``{"timestamp", "info", "tasks", "simulations": [...]}``;
* **a folder** (its ``"dir"`` layout, the default for voice runs): ``results.json`` holding the
  same document without ``simulations`` (and a ``simulation_index`` of summaries), and one
  file per simulation in ``simulations/`` (``<id>.json``), read in the order of their names as
  τ²-bench reads them; given as the folder, or as its ``results.json``.

A **bare list** of simulations (what a script keeps of ``results.simulations``) is read too; it
has no ``info``. What names the τ²-bench that ran: the commit it ran at (``info.git_commit``)
and, where a file has one, a ``format_version`` beside ``info``: :attr:`Tau2Results.version`.
All the files of one input together are read up to :data:`~simscore.io.reading.MAX_FILE_BYTES`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simscore.errors import FileFormatError, json_kind
from simscore.io import reading
from simscore.io.formats import FILE_FORMATS, detect_format, kind_mismatch
from simscore.io.reading import files_digest, parse_json, read_text

__all__ = ["Tau2Results", "tau2_results", "read_tau2", "is_tau2_folder", "TAU2_LAYOUTS", "SIMULATIONS_FOLDER"]

#: The layouts read: one JSON document, a folder (``results.json`` and ``simulations/``), a bare list.
TAU2_LAYOUTS = ("document", "folder", "list")
#: The folder beside ``results.json`` that holds one file per simulation (τ²-bench's ``SIMULATIONS_DIR``).
SIMULATIONS_FOLDER = "simulations"


@dataclass(frozen=True)
class Tau2Results:
    """A τ²-bench run's results as read (:func:`tau2_results`).

    Attributes
    ----------
    layout : {"document", "folder", "list"}
    info : dict
        The run's ``info`` (agent, user, environment, ``git_commit``); empty for a bare list.
    simulations : list
        The simulations as parsed (checked by the reader that uses them), in order.
    files : tuple of str
        Per simulation, the file it was read from (``simulations/<name>``; the folder layout
        only, else empty).
    version : dict
        What names the τ²-bench that ran: ``git_commit`` and ``format_version`` where present.
    sha256 : str
        Of the document's text, or of the folder's files (:func:`~simscore.io.reading.files_digest`).
    """

    layout: str
    info: dict[str, Any]
    simulations: list[Any]
    files: tuple[str, ...]
    version: dict[str, str]
    sha256: str

    def where(self, position: int) -> str:
        """The 1-based ``position``-th simulation, named for a message (and its file in a folder)."""
        return f"simulation {position}" + (f" ({self.files[position - 1]})" if self.files else "")


def is_tau2_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder of τ²-bench results (``results.json`` or ``simulations/`` in it)."""
    p = Path(path)
    return p.is_dir() and ((p / "results.json").is_file() or (p / SIMULATIONS_FOLDER).is_dir())


def read_tau2(path: str | os.PathLike[str], *, expected: str) -> Tau2Results:
    """τ²-bench results from a results file or a results folder (see the module).

    Raises
    ------
    FileFormatError
        Naming the file: not JSON, not results (``expected`` says what was), too large together.
    """
    p = Path(path)
    if p.is_dir():
        if not (p / "results.json").is_file():
            raise FileFormatError(p, f"a folder without results.json, where {expected} was expected")
        p = p / "results.json"
    text = read_text(p)
    return tau2_results(p, parse_json(text, p, expected=expected), expected=expected, size=len(text),
                        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())


def tau2_results(path: Path, document: Any, *, expected: str, size: int = 0, sha256: str = "") -> Tau2Results:
    """The results of a parsed τ²-bench document read from ``path`` (``size`` characters long).

    A list is a bare list of simulations; an object with a list ``simulations`` the one-document
    layout; an object without one, beside a ``simulations/`` folder, the folder layout (its
    files read here, in the order of their names).

    Raises
    ------
    FileFormatError
        Anything else (``expected`` names what was expected), or the folder's files larger than
        :data:`~simscore.io.reading.MAX_FILE_BYTES` together.
    """
    found = detect_format(document)
    if found in FILE_FORMATS:  # one of simscore's own JSON documents: named as such
        raise FileFormatError(path, kind_mismatch(found, expected), line=1)
    if isinstance(document, list):
        return Tau2Results("list", {}, document, (), {}, sha256)
    folder = path.parent / SIMULATIONS_FOLDER
    if not isinstance(document, dict) or not (isinstance(document.get("simulations"), list)
                                              or ("simulations" not in document and folder.is_dir())):
        raise FileFormatError(path, f"expected {expected}, got {json_kind(document)} without a list 'simulations'")
    given = document.get("info")
    info: dict[str, Any] = given if isinstance(given, dict) else {}
    version = {key: str(value) for key, value in (("git_commit", info.get("git_commit")),
                                                  ("format_version", document.get("format_version")))
               if isinstance(value, (str, int)) and not isinstance(value, bool)}
    if isinstance(document.get("simulations"), list):
        return Tau2Results("document", info, document["simulations"], (), version, sha256)
    files = sorted(folder.glob("*.json"))
    total = size + sum(file.stat().st_size for file in files)
    if total > reading.MAX_FILE_BYTES:
        raise FileFormatError(path.parent, f"results.json and its {len(files):,} simulation files hold {total:,} bytes "
                              f"together, more than {reading.MAX_FILE_BYTES:,} (simscore.io.reading.MAX_FILE_BYTES)")
    simulations = [parse_json(read_text(file), file) for file in files]
    digest = files_digest(path.parent, [path, *files])
    return Tau2Results("folder", info, simulations, tuple(f"{SIMULATIONS_FOLDER}/{file.name}" for file in files),
                       version, digest)
