"""What each stored piece of an experiment folder was made with, checked before a run reuses it.

A run continues what earlier runs of its folder left (:func:`simscore.app.runner.run_experiment`),
so every piece it reuses must have been made with this run's settings. Each piece records the
settings that determine it, and each kind of piece is either made again or refused (the run
stops before any work, naming the setting and the piece):

- ``runs/<run>/`` — made by [training]; recorded in its ``run.json`` and the folder's
  ``experiment.json``; another setting: **stop** (before any work).
- ``logs/<run>.jsonl`` — made by the run's final policy and [contexts] ``collect_dialogues``,
  ``collect_seed``, ``collect_scale``; recorded in the log's header (the run's seed and
  ``collect_seed``, which name its users, the sampling scale,
  the policy's checkpoint) and its dialogues; another setting: **stop**.
- ``contexts/col.jsonl``, ``col-<reward>.jsonl`` — made from the logs; recorded in the
  header (each source's provenance and dialogues used); another setting: **stop**.
- ``responses/<set>/<run>/`` — made by the checkpoints and context sets above.
- ``contexts/gen.jsonl``, ``responses/gen/`` — made when [contexts] ``generated`` is on
  (present or not); turned on: **made**; turned off: left unused (not scored, not explained).
- ``responses/<set>/random/random.jsonl`` — made by [chance] ``random_seed``; recorded in its
  header (``provenance.seed``); another setting: **made again** (with a log line).
- ``held_out/graph/<run>.jsonl``, ``held_out/users/<run>.jsonl``, ``held_out/flow_graph.json``,
  ``contexts/held.jsonl`` — with ``[held_out]`` (:mod:`simscore.app.experiment.held_out`): made by the run's
  final policy and the ``[held_out]`` settings (and ``[contexts] collect_scale``); recorded in
  each piece's header; another setting: **stop** (:func:`check_piece`).
- ``cache/consequences/`` (with ``[consequences] enabled``: the ``consequences`` table as last made,
  :mod:`simscore.app.experiment.consequences`) — made from C_col, the runs' last two checkpoints,
  ``[consequences]``, ``[chance] random_seed``, ``[contexts] collect_scale``, the bootstrap and the
  package versions; recorded as a digest in ``cache/pieces.json``; **made again** when one of them
  changed (or a file of it is missing), else kept, also when the other tables are made again.
- tables, ``explain/``, figures and ``report.md`` (the *derived* pieces) — made from the pieces
  above by [scoring] and [findings] (and the package versions, the measures' signatures, the
  command); recorded in every table's saved run record and, as digests, in ``cache/pieces.json``
  (:class:`MadeFrom`); **made again** when what they are made from changed (or a file of theirs
  is missing), else kept: the tables when the run record (but its date) or a file of the pieces
  above changed, ``explain/`` when those files, the versions or the bootstrap seed changed, the
  figures and the report when the tables or ``explain/`` changed (the index and the report
  last, after deleting them first).

Stopping is the choice where a change would cascade: other collected contexts invalidate every
response on them. A report is never built from tables made with different settings
(:func:`simscore.analysis.tables_io.load_tables` refuses them).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simscore.app.experiment.folder import ExperimentFolder, RunId
from simscore.errors import ExperimentError
from simscore.io import atomic_write_text, files_digest, format_problem, is_temporary, read_json, read_jsonl

if TYPE_CHECKING:
    from simscore.app.experiment.config import ExperimentConfig
    from simscore.app.experiment.steps import CollectionSettings

__all__ = [
    "check_folder_settings", "check_log", "check_collected", "check_piece", "stale_random_responses",
    "MadeFrom", "DERIVED", "upstream_digest", "digest_of", "remaking",
]

logger = logging.getLogger("simscore.app.experiment")

#: The [contexts] settings that determine the logs and C_col (``generated`` only adds or omits C_gen).
COLLECTION = ("collect_dialogues", "collect_seed", "collect_scale")
#: What each table of settings determines, for the messages.
_PIECES = {
    "training": "the training runs (runs/) and all made from them (logs/, contexts/col*.jsonl, responses/)",
    "contexts": "the collected dialogues and contexts (logs/, contexts/col*.jsonl) and the responses on them",
}
_NONE = object()


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            out.update(_flatten(item, f"{name}."))
        else:
            out[name] = item
    return out


def _shown(value: Any) -> str:
    return "(not set)" if value is _NONE else json.dumps(value)


def check_folder_settings(folder: ExperimentFolder, config: ExperimentConfig) -> None:
    """Stop when the folder's ``experiment.json`` has other [training] or collection settings.

    Raises
    ------
    simscore.errors.ExperimentError
        Naming every differing setting, where it came from, and the pieces it made.
    """
    saved_path = folder.experiment_file
    if not saved_path.exists():
        return
    try:
        saved = read_json(saved_path)["config"]  # bounded and strict; its errors are ValueErrors
        if not isinstance(saved, Mapping):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise ExperimentError(f"{saved_path}: unreadable experiment record; use a new output folder") from None
    now = config.to_dict()
    problems = []
    for table, keys in (("training", None), ("contexts", COLLECTION)):
        before = _flatten(saved.get(table) or {})
        after = _flatten(now[table])
        names = list(dict.fromkeys([*after, *before])) if keys is None else list(keys)
        changed = [f"{name} = {_shown(before.get(name, _NONE))} there, {_shown(after.get(name, _NONE))} here"
                   for name in names if before.get(name, _NONE) != after.get(name, _NONE)]
        if changed:
            problems.append(f"[{table}] {'; '.join(changed)} (they made {_PIECES[table]})")
    if problems:
        raise ExperimentError(
            f"{folder.root} holds pieces made with other settings than this configuration: "
            + "; ".join(problems)
            + f". This run would reuse them: use a new output folder, or the folder's settings ({saved_path.name})"
        )


def _differences(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    return [f"{name} {_shown(recorded.get(name, _NONE))} (this run: {_shown(value)})"
            for name, value in wanted.items() if recorded.get(name, _NONE) != value]


def _refuse(folder: ExperimentFolder, path: Path, differences: Sequence[str]) -> ExperimentError:
    return ExperimentError(
        f"{path} was made with other settings than this run's: {'; '.join(differences)}. Everything collected "
        f"from it would be reused: use a new output folder, or the settings that made {folder.link(path)}"
    )


def check_piece(folder: ExperimentFolder, path: Path, recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> None:
    """Stop when a piece's recorded settings differ from this run's (both keyed by the setting's name)."""
    differences = _differences(recorded, wanted)
    if differences:
        raise _refuse(folder, path, differences)


def check_log(folder: ExperimentFolder, run: RunId, settings: CollectionSettings, checkpoint: int) -> None:
    """Stop when ``logs/<run>.jsonl`` was not collected from ``checkpoint`` with this run's collection settings."""
    path = folder.log(run)
    from contexts.dialogue_log import DIALOGUE_LOG_FORMAT, DIALOGUE_LOG_VERSION

    header, records = read_jsonl(path, format_name=DIALOGUE_LOG_FORMAT, versions=(DIALOGUE_LOG_VERSION,))
    dialogues = sum(1 for _ in records)
    source = header.get("source")
    source = source if isinstance(source, Mapping) else {}
    policy = source.get("policy_provenance")
    recorded = {
        "[contexts] collect_dialogues": dialogues,
        "[contexts] collect_seed": source.get("collect_seed", _NONE),
        "the run's own users (seed)": source.get("seed", _NONE),
        "[contexts] collect_scale": source.get("sampling_scale", _NONE),
        "checkpoint": policy.get("checkpoint", _NONE) if isinstance(policy, Mapping) else _NONE,
    }
    wanted = {"[contexts] collect_dialogues": settings.dialogues, "[contexts] collect_seed": settings.seed,
              "the run's own users (seed)": run.seed,
              "[contexts] collect_scale": settings.scale, "checkpoint": checkpoint}
    check_piece(folder, path, recorded, wanted)


def check_collected(folder: ExperimentFolder, path: Path, runs: Sequence[RunId], settings: CollectionSettings) -> None:
    """Stop when a C_col file was not collected from these runs' logs with this run's collection settings."""
    from contexts import ContextSet

    sources = ContextSet.read_jsonl(path, verify_hash=False).built.get("sources")
    described = [(s.get("name"), (s.get("provenance") or {}).get("collect_seed"),
                  (s.get("provenance") or {}).get("sampling_scale"), s.get("dialogues_used"))
                 for s in (sources or ()) if isinstance(s, Mapping)]
    wanted = [(run.name, settings.seed, settings.scale, settings.dialogues) for run in runs]
    if described != wanted:
        shown = ", ".join(f"{n} (seed {s}, scale {c}, {d} dialogues)" for n, s, c, d in described) or "no sources"
        raise _refuse(folder, path, [f"collected from {shown}; this run: "
                                     + ", ".join(f"{n} (seed {s}, scale {c}, {d} dialogues)" for n, s, c, d in wanted)])


def stale_random_responses(folder: ExperimentFolder, context_sets: Sequence[str], random_seed: int) -> list[str]:
    """Delete random-policy responses made with another ``[chance] random_seed``; returns what was deleted, in words."""
    from simscore.responses import Responses

    removed = []
    for name in context_sets:
        path = folder.random_responses(name)
        if not path.exists():
            continue
        seed = Responses.read_jsonl(path).provenance.get("seed", _NONE)
        if seed != random_seed:
            path.unlink()
            removed.append(f"{folder.link(path)} was made with [chance] random_seed {_shown(seed)}, this run's is "
                           f"{random_seed}: made again")
    return removed


# ----------------------------------------------------------------------------- derived pieces

#: The derived pieces, in the order a run makes them (and ``cache/pieces.json`` lists them).
DERIVED = ("consequences", "tables", "explain", "report")
#: ``format`` and ``version`` of ``cache/pieces.json``.
PIECES_FORMAT = "simscore-pieces"
PIECES_VERSION = 1
#: The folders whose files the derived pieces are made from (of ``runs/<run>/``, the checkpoints).
_UPSTREAM = ("runs", "logs", "contexts", "responses", "held_out")


def upstream_digest(folder: ExperimentFolder) -> str:
    """SHA-256 of every file the derived pieces are made from: each file's path, size and bytes
    under ``logs/``, ``contexts/``, ``responses/``, ``held_out/`` and the runs' ``checkpoints/``,
    in path order (temporary files left out). Of a run's other files, ``run.json`` records the
    wall clock and ``evaluation.csv`` the training times too: the evaluations that make the
    tables enter their digest as numbers (:func:`simscore.app.runner.run_experiment`)."""
    files = []
    for top in _UPSTREAM:
        base = folder.root / top
        files += [p for p in (sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else [])
                  if not is_temporary(p.name) and (top != "runs" or p.parent.name == "checkpoints")]
    return files_digest(folder.root, files)


def digest_of(*parts: Any) -> str:
    """SHA-256 of JSON data (keys sorted), e.g. a piece's settings and the digests of its inputs.

    >>> digest_of("tables", {"b": 1, "a": [2]}) == digest_of("tables", {"a": [2], "b": 1})
    True
    """
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def remaking(folder: ExperimentFolder, piece: str) -> None:
    """Before a derived piece's files are replaced by anything but a run (``simscore explain``,
    ``simscore report``, the API): what ``cache/pieces.json`` says made it no longer holds."""
    if folder.pieces_file.exists():
        MadeFrom(folder).forget(piece)


class MadeFrom:
    """``cache/pieces.json``: what each derived piece (:data:`DERIVED`) was last made from.

    For each piece, the digest of what made it (:func:`digest_of` of its settings and
    :func:`upstream_digest`) and the files it wrote. A piece is *current* when its recorded
    digest is the one this run computes and its files are all there; a run keeps a current
    piece and makes the others again, calling :meth:`forget` before it replaces any of a
    piece's files and :meth:`record` once they are all written -- so a run killed in between
    leaves the piece not current, never one that looks current with mixed files. The file is
    written atomically, its pieces in the order of :data:`DERIVED` (the same bytes for the
    same pieces). An unreadable file, or one of another format version, records nothing.

    Examples
    --------
    >>> import tempfile
    >>> made = MadeFrom(ExperimentFolder(tempfile.mkdtemp()))
    >>> made.current("tables", "abc")
    False
    >>> made.record("tables", "abc", []); made.current("tables", "abc"), made.current("tables", "abd")
    (True, False)
    """

    def __init__(self, folder: ExperimentFolder) -> None:
        self.folder = folder
        self.path = folder.pieces_file
        self._pieces: dict[str, dict[str, Any]] = self._read()

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        try:
            document = read_json(self.path, limit=2**24)
            problem = format_problem(document, PIECES_FORMAT, (PIECES_VERSION,))
            if problem is not None:
                raise ValueError(problem)
            pieces = document.get("pieces")
            if not isinstance(pieces, Mapping):
                raise ValueError("'pieces' is not an object")
        except (OSError, ValueError) as exc:
            logger.info("%s: %s; the consequences, the tables, explain/ and the report are made again",
                        self.folder.link(self.path), exc)
            return {}
        return {name: dict(piece) for name, piece in pieces.items()
                if name in DERIVED and isinstance(piece, Mapping) and isinstance(piece.get("digest"), str)
                and isinstance(piece.get("files"), list) and all(isinstance(f, str) for f in piece["files"])}

    def current(self, piece: str, digest: str) -> bool:
        """Whether ``piece`` was made from ``digest`` and its files are all there."""
        recorded = self._pieces.get(piece)
        return (recorded is not None and recorded["digest"] == digest
                and all((self.folder.root / name).is_file() for name in recorded["files"]))

    def forget(self, piece: str) -> None:
        """Record that ``piece`` is being made again (before any of its files is replaced)."""
        if self._pieces.pop(piece, None) is not None:
            self._write()

    def record(self, piece: str, digest: str, files: Iterable[Path]) -> None:
        """Record that ``piece`` was made from ``digest`` and consists of ``files`` (all written)."""
        self._pieces[piece] = {"digest": digest, "files": sorted(self.folder.link(p) for p in files)}
        self._write()

    def _write(self) -> None:
        pieces = {name: self._pieces[name] for name in DERIVED if name in self._pieces}
        document = {"format": PIECES_FORMAT, "version": PIECES_VERSION, "pieces": pieces}
        atomic_write_text(self.path, json.dumps(document, indent=1) + "\n")
