"""The output contract: every file simscore, contexts and policies write is checked and written here.

:func:`prepare_output` checks a location before any work; :func:`atomic_open` writes a
temporary file in the target directory and renames it over the target, so an interrupted
write never leaves a torn file. The temporary file is created with mode 0666, so the process
umask applies to it as to any new file (no umask is read or changed). :mod:`simscore.io`
offers the same functions under its name.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from simscore.errors import OutputExistsError

__all__ = ["prepare_output", "atomic_open", "atomic_write_text", "same_file", "is_temporary"]

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_TOKEN_BYTES = 6
_TEMPORARY_SUFFIX = ".tmp"


def _create_temporary(directory: Path, name: str) -> tuple[int, str]:
    """Create a new, empty temporary file next to ``name`` (mode 0666 minus the umask)."""
    for _ in range(100):
        candidate = directory / f".{name}.{secrets.token_hex(_TOKEN_BYTES)}{_TEMPORARY_SUFFIX}"
        try:
            return os.open(candidate, _CREATE_FLAGS, 0o666), str(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {directory / name}")


def is_temporary(name: str) -> bool:
    """Whether a file name is one of :func:`atomic_open`'s temporary files, ``.<target>.<12 hex digits>.tmp``.

    Such a file is left behind only when a process is killed in the middle of a write; it is
    never a finished output, so a program resuming the interrupted work may delete it.

    >>> is_temporary(".report.md.0a1b2c3d4e5f.tmp"), is_temporary("report.md"), is_temporary(".x.tmp")
    (True, False, False)
    """
    if not (name.startswith(".") and name.endswith(_TEMPORARY_SUFFIX)):
        return False
    target, dot, token = name[1:-len(_TEMPORARY_SUFFIX)].rpartition(".")
    return bool(dot and target) and len(token) == 2 * _TOKEN_BYTES and all(c in "0123456789abcdef" for c in token)


def prepare_output(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> Path:
    """Check, before any work, that ``path`` may be written; returns it as a :class:`~pathlib.Path`.

    This is the one output check of simscore, contexts and policies: every public writer calls
    it (with ``overwrite``) and every command calls it before any work (with its inputs, through
    :func:`simscore.app.cli_files.check_outputs`); the write itself is :func:`atomic_open`.

    * An output that is one of the ``inputs`` (the same file, however it is spelt: symbolic
      links and ``..`` resolved, hard links compared by device and inode) is refused, even with
      ``overwrite``: nothing the user gave is replaced.
    * An existing file is refused unless ``overwrite`` (the command line's ``--force``).
    * The directory must exist or be creatable, and be writable.

    Raises
    ------
    simscore.errors.OutputExistsError
        The output is an input, or exists and ``overwrite`` is false.
    PermissionError, NotADirectoryError
        The location cannot be written (naming the directory).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "log.jsonl").write_text("{}")
    2
    >>> prepare_output(folder / "log.jsonl", inputs=[folder / "log.jsonl"], overwrite=True)
    Traceback (most recent call last):
    ...
    simscore.errors.OutputExistsError: ... is also an input: refusing to write over it
    >>> prepare_output(folder / "out.jsonl").name
    'out.jsonl'
    """
    target = Path(path)
    if target.is_dir():
        raise OutputExistsError(f"{target} is a directory, expected a file name")
    resolved = target.resolve()
    for given in inputs:
        if same_file(target, given):
            raise OutputExistsError(f"{target} is also an input: refusing to write over it")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise OutputExistsError(f"{target} exists; use --force (or overwrite=True) to replace it")
    folder = resolved.parent
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(f"{existing} is not a directory: cannot write {target}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"{existing} is not writable: cannot write {target}")
    # try what the write will do, leaving nothing behind (root passes os.access anywhere, /proc say)
    try:
        if existing == folder:
            fd, probe = _create_temporary(folder, target.name)
            os.close(fd)
            os.unlink(probe)
        else:  # the write will create the missing folders
            os.rmdir(tempfile.mkdtemp(prefix=".simscore-probe-", dir=existing))
    except OSError as exc:
        raise PermissionError(f"{existing} is not writable ({exc.strerror}): cannot write {target}") from None
    return target


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same file: the same inode if both exist, else the same resolved path.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> same_file(folder / "x" / ".." / "a.txt", folder / "a.txt")
    True
    """
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return Path(a).resolve() == Path(b).resolve()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path`` and rename it over ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left untouched.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(target.parent, target.name)
    try:
        if mode == "w":
            kwargs.setdefault("encoding", "utf-8")
            kwargs.setdefault("newline", "\n")
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_open(path, "w") as handle:
        handle.write(text)
