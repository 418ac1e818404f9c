"""The output contract: every file simscore, contexts and policies write is checked and written here.

:func:`prepare_output` checks a location before any work (every command and every public
writer calls it); :func:`atomic_open` writes. :mod:`simscore.io` offers the same functions
under its name.

**Files** are written to a temporary file in the target directory and renamed over the
target, so an interrupted write never leaves a torn file. The temporary file is created with
mode 0666, so the process umask applies to it as to any new file (no umask is read or
changed). Its name, ``.<target>.<pid>-<host>-<random>.tmp``, stays within the file system's
limit on names (a long target name is shortened and given a hash) and names the process that
writes it: a write that is interrupted removes its temporary file (on SIGTERM too, inside the
command line), and one killed outright (SIGKILL, a power cut) leaves it behind until the next
write of the same target on the same host, which removes it once that process has ended.

**Nothing but a regular file is ever renamed over**, as root neither. An output that is a
FIFO or a character device (``/dev/null``, a terminal, ``/dev/stdout`` on a pipe), or one of
the process's own descriptors (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, whatever they
name), is written into as the shell's ``>`` would, without a temporary file (and so without
atomicity: a stream cannot take a write back); a socket, a block device or a directory is
refused (see :func:`prepare_output`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import secrets
import socket
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from simscore.errors import OutputExistsError

__all__ = ["prepare_output", "atomic_open", "atomic_write_text", "same_file", "is_temporary", "json_records"]

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_TOKEN_BYTES = 6
_TEMPORARY_SUFFIX = ".tmp"
#: ``.<target>.<pid>-<host>-<token>.tmp``; files of simscore before 0.2 lack ``<pid>-<host>-``.
_TEMPORARY_NAME = re.compile(
    rf"\.(?P<stem>.+)\.(?:(?P<pid>[1-9][0-9]{{0,9}})-(?P<host>[0-9a-f]{{6}})-)?[0-9a-f]{{{2 * _TOKEN_BYTES}}}"
    + re.escape(_TEMPORARY_SUFFIX),
    re.S,
)
#: The bytes a temporary name adds to its target's name, at most: ``.`` ``.<10-digit pid>-<host>-<token>.tmp``.
_TEMPORARY_OVERHEAD = 2 + 10 + 1 + 6 + 1 + 2 * _TOKEN_BYTES + len(_TEMPORARY_SUFFIX)


def _name_max(directory: Path) -> int:
    """The longest file name (bytes) the file system of ``directory`` allows (255 where it does not say)."""
    try:
        limit = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows), or no such setting
        return 255
    return limit if limit > 0 else 255


def _temporary_stem(directory: Path, name: str) -> str:
    """The part of ``name`` a temporary file's name repeats: all of it if the limit on names allows.

    A name too long for that keeps its start and gains ``~`` and 8 hex digits of its hash, so
    every writer of one target computes the same stem (whatever its process id).
    """
    room = _name_max(directory) - _TEMPORARY_OVERHEAD
    if len(os.fsencode(name)) <= room:
        return name
    mark = "~" + hashlib.sha256(os.fsencode(name)).hexdigest()[:8]
    keep = name
    while keep and len(os.fsencode(keep)) > room - len(mark):  # whole characters: a name stays decodable
        keep = keep[: -max(1, (len(os.fsencode(keep)) - room + len(mark)) // 4)]
    return keep + mark


def _host_tag() -> str:
    """6 hex digits of this host's name: a temporary file's process id means something only on its host."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:6]


def _create_temporary(directory: Path, name: str) -> tuple[int, str]:
    """Create a new, empty temporary file for the target ``name`` in ``directory`` (mode 0666 minus the umask)."""
    prefix = f".{_temporary_stem(directory, name)}.{os.getpid()}-{_host_tag()}-"
    for _ in range(100):
        candidate = directory / f"{prefix}{secrets.token_hex(_TOKEN_BYTES)}{_TEMPORARY_SUFFIX}"
        try:
            return os.open(candidate, _CREATE_FLAGS, 0o666), str(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {directory / name}")


def _process_ended(pid: int) -> bool:
    """Whether no process ``pid`` runs on this host (False where that cannot be told)."""
    if os.name != "posix":  # os.kill would end a process on Windows
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it runs, as another user
        return False
    return False


def _remove_stale_temporaries(directory: Path, name: str) -> list[Path]:
    """Delete the temporary files of target ``name`` in ``directory`` whose writer has ended; returns them.

    Only files that :func:`atomic_open` made for this very target, on this host, as this user,
    by a process that no longer runs: a write in progress, another target's temporary file,
    another user's or another host's file (a shared folder) is never touched.
    """
    if os.name != "posix":
        return []
    prefix = f".{_temporary_stem(directory, name)}."
    host, me, user = _host_tag(), os.getpid(), os.geteuid()
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        match = _TEMPORARY_NAME.fullmatch(entry.name)
        if match is None or f".{match['stem']}." != prefix or match["pid"] is None or match["host"] != host:
            continue
        pid = int(match["pid"])
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if pid == me or not stat.S_ISREG(info.st_mode) or info.st_uid != user or not _process_ended(pid):
            continue
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def is_temporary(name: str) -> bool:
    """Whether a file name is one of :func:`atomic_open`'s temporary files, ``.<target>.<pid>-<host>-<12 hex digits>.tmp``.

    Such a file is left behind only when a process is killed in the middle of a write; it is
    never a finished output, so a program resuming the interrupted work may delete it. The
    names of simscore before 0.2, ``.<target>.<12 hex digits>.tmp``, are recognised too.

    >>> is_temporary(".report.md.4242-0a1b2c-0a1b2c3d4e5f.tmp"), is_temporary(".report.md.0a1b2c3d4e5f.tmp")
    (True, True)
    >>> is_temporary("report.md"), is_temporary(".x.tmp")
    (False, False)
    """
    return _TEMPORARY_NAME.fullmatch(name) is not None


def _descriptor(path: Path) -> int | None:
    """The number of this process's open descriptor that ``path`` names, or None.

    ``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``: links that end in ``/proc/<pid>/fd/N``.
    """
    own = os.path.realpath(f"/proc/{os.getpid()}/fd")
    current = os.path.abspath(path)
    for _ in range(40):  # a chain of links, as the system follows it (it gives up after 40)
        parent, name = os.path.split(current)
        if name.isdigit() and os.path.realpath(parent) == own:
            return int(name)
        if not os.path.islink(current):
            return None
        current = os.path.normpath(os.path.join(parent, os.readlink(current)))
    return None


def _in_dev(path: Path) -> bool:
    """Whether ``path`` lies directly in ``/dev``, the system's folder of devices (where root may create files)."""
    return os.path.realpath(path.parent) == "/dev"


def _output_kind(target: Path) -> Literal["file", "stream"]:
    """How ``target`` is written: ``"file"`` (replaced atomically) or ``"stream"`` (written into); refused otherwise."""
    if _descriptor(target) is not None:
        return "stream"
    try:
        mode = os.stat(target).st_mode  # what the path names, through any links
    except FileNotFoundError:
        mode = None
    except OSError:
        return "file"  # a loop of links, a file where a folder belongs: the write names the error
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return "stream"
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputExistsError(f"{target} is a directory, expected a file name")
    if mode is not None and stat.S_ISSOCK(mode):
        raise OutputExistsError(f"{target} is a socket: refusing to write into it (give a file name, or - for stdout)")
    if mode is not None and stat.S_ISBLK(mode):
        raise OutputExistsError(
            f"{target} is a block device: refusing to write into it (that would overwrite the file system on it)"
        )
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputExistsError(f"{target} is not a regular file: refusing to write into it")
    if _in_dev(target):
        what = "is a file" if mode is not None else "does not exist"
        raise OutputExistsError(
            f"{target} {what} in /dev, where simscore creates and replaces nothing "
            "(give a file name elsewhere, or - for stdout)"
        )
    return "file"


def prepare_output(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> Path:
    """Check, before any work, that ``path`` may be written; returns it as a :class:`~pathlib.Path`.

    This is the one output check of simscore, contexts and policies: every public writer calls
    it (with ``overwrite``) and every command calls it before any work (with its inputs, through
    :func:`simscore.app.cli.args.check_outputs`); the write itself is :func:`atomic_open`.

    * An output that is one of the ``inputs`` (the same file, however it is spelt: symbolic
      links and ``..`` resolved, hard links compared by device and inode) is refused, even with
      ``overwrite``: nothing the user gave is replaced.
    * A regular file (or nothing yet) is written atomically, by renaming a temporary file over
      it: an existing file is refused unless ``overwrite`` (the command line's ``--force``); the
      directory must exist or be creatable, and be writable; the name must be within the file
      system's limit.
    * Nothing else is ever renamed over, as root neither. What holds no data to replace is
      written into, as the shell's ``>`` would, and needs no ``overwrite``: a FIFO or a
      character device (``/dev/null``; ``/dev/full``, whose "No space left on device" is an
      error naming it; a terminal), and one of the process's own descriptors (``/dev/stdout``,
      ``/dev/stderr``, ``/dev/fd/N``: written through the descriptor, in order with what the
      command prints there, even where it is a file the shell opened). A socket (it cannot be
      opened as a file), a block device (a disk: writing would overwrite its file system), a
      directory, and any other name directly in ``/dev`` (where root could create a file, or
      rename one over a device's link) are refused with
      :class:`~simscore.errors.OutputExistsError` naming the kind.

    Raises
    ------
    simscore.errors.OutputExistsError
        The output is an input, exists and ``overwrite`` is false, or is something never
        written (a socket, a block device, a directory, another name in ``/dev``).
    PermissionError, NotADirectoryError, OSError
        The location cannot be written (naming the directory), or the name is too long.

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
    >>> prepare_output("/dev/null").as_posix()  # written into, never replaced
    '/dev/null'
    """
    target = Path(path)
    kind = _output_kind(target)
    for given in inputs:
        if same_file(target, given):
            raise OutputExistsError(f"{target} is also an input: refusing to write over it")
    if kind == "stream":
        if _descriptor(target) is None and not os.access(target, os.W_OK):
            raise PermissionError(f"{target} is not writable")
        return target
    folder = target.resolve().parent
    existing = folder
    while not existing.exists():
        existing = existing.parent
    size, limit = len(os.fsencode(target.name)), _name_max(existing)
    if size > limit:
        raise OSError(f"{target}: a file name of {size} bytes, longer than the {limit} this file system allows")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise OutputExistsError(f"{target} exists; use --force (or overwrite=True) to replace it")
    _check_writable(existing, folder, target)
    return target


def _check_writable(existing: Path, folder: Path, target: Path) -> None:
    """The output's folder (``folder``, or its nearest ``existing`` ancestor the write will create it
    in) is a writable directory, tried by doing what the write will do and leaving nothing behind."""
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


class _NamedFileIO(io.FileIO):
    """A file descriptor written to, whose write errors name the output (``No space left on device: 'out.json'``)."""

    def __init__(self, fd: int, label: str) -> None:
        super().__init__(fd, "w", closefd=True)
        self.label = label

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except OSError as exc:
            if exc.filename is not None or exc.errno is None:
                raise
            raise OSError(exc.errno, exc.strerror, self.label) from None


def _writer(fd: int, label: str, mode: str, kwargs: dict[str, Any]) -> IO[Any]:
    """An open file object on ``fd`` (as :func:`os.fdopen` makes one) whose write errors name ``label``."""
    buffered = io.BufferedWriter(_NamedFileIO(fd, label))
    if mode == "wb":
        return buffered
    kwargs.setdefault("encoding", "utf-8")
    kwargs.setdefault("newline", "\n")
    return io.TextIOWrapper(buffered, **kwargs)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path`` and rename it over ``path`` on success.

    On an exception (a :class:`KeyboardInterrupt` or the command line's SIGTERM too) the
    temporary file is removed and ``path`` is left untouched; temporary files of this target
    that an ended process left behind (killed with SIGKILL) are removed first. A ``path``
    that is a FIFO, a character device or one of the process's descriptors is written into
    instead, and a socket, a block device or a directory is refused (:func:`prepare_output`).
    Errors while writing name ``path``. ``kwargs`` go to :class:`io.TextIOWrapper` (default
    UTF-8, ``\\n`` line ends).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    if _output_kind(target) == "stream":
        descriptor = _descriptor(target)
        if descriptor is None:
            fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
        else:  # through the descriptor itself: in order with what the process prints there
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(AttributeError, OSError, ValueError):
                    if stream.fileno() == descriptor:
                        stream.flush()
            fd = os.dup(descriptor)
        with _writer(fd, str(target), mode, kwargs) as handle:
            yield handle
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(target.parent, target.name)
    fd, tmp = _create_temporary(target.parent, target.name)
    try:
        with _writer(fd, str(target), mode, kwargs) as handle:
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


def json_records(frame: Any) -> list[dict[str, Any]]:
    """A pandas frame's rows as JSON-ready mappings, every number as it is; NaN and missing values are null.

    pandas' ``to_json`` keeps 10 significant digits (2/3 becomes ``0.6666666667``); these
    records keep each float whole, so :mod:`json` writes the shortest decimal that reads back
    as the same float. Infinities are null too (JSON has none); a time is its ISO text.

    >>> import pandas as pd
    >>> json_records(pd.DataFrame({"id": ["c1", "c2"], "tmr": [2 / 3, float("nan")], "n": [1, 2]}))
    [{'id': 'c1', 'tmr': 0.6666666666666666, 'n': 1}, {'id': 'c2', 'tmr': None, 'n': 2}]
    """
    names = [str(name) for name in frame.columns]
    columns = [[_json_value(value) for value in frame.iloc[:, k].tolist()] for k in range(len(names))]
    return [dict(zip(names, row)) for row in zip(*columns)] if names else [{} for _ in range(len(frame))]


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        return value if value - value == 0 else None  # NaN and the infinities give NaN here
    if value is None or isinstance(value, (str, int)):
        return value
    if hasattr(value, "item") and not isinstance(value, (list, dict)):  # a numpy scalar
        return _json_value(value.item())
    if hasattr(value, "isoformat"):
        return None if str(value) == "NaT" else value.isoformat()
    return None if value.__class__.__name__ == "NAType" else value

