"""Tests of simscore.io.output: what is never renamed over, names within the limit, temporaries of ended writers.

Real files of every kind: a FIFO read by a thread, a bound UNIX socket, character devices made
with ``os.mknod`` in ``tmp_path`` (a copy of ``/dev/null`` and ``/dev/full``: a failing test
cannot harm the machine's own), and the machine's ``/dev/null``, ``/dev/full`` and
``/dev/stdout`` only where a regression would be a refusal, never a replacement (no
``overwrite``: an existing file is refused without it).
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from simscore.errors import OutputExistsError
from simscore.io.output import atomic_open, atomic_write_text, is_temporary, prepare_output

ROOT = Path(__file__).resolve().parents[3]


class FifoReader:
    """A FIFO at ``path`` and a thread that reads everything written into it."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as handle:  # blocks until a writer opens it
            self.data = handle.read()

    def result(self) -> bytes:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "nothing was written into the FIFO"
        return self.data


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "out.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    yield path
    server.close()


def _device(path: Path, major: int, minor: int) -> Path:
    """A character device node at ``path`` (skipping the test where this system does not allow one)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))
    except (PermissionError, AttributeError) as exc:
        pytest.skip(f"cannot make a device node here ({exc}): needs root (CAP_MKNOD)")
    try:
        with open(path, "wb") as handle:
            handle.write(b"")
    except OSError as exc:
        pytest.skip(f"device nodes do not work in {path.parent} ({exc.strerror}: a nodev mount?)")
    return path


def _only(folder: Path, *names: str) -> None:
    """The folder holds exactly ``names``: nothing was left beside them (no temporary file)."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


# ----------------------------------------------------------------------------- kinds


def test_a_fifo_is_written_into_never_replaced(tmp_path: Path) -> None:
    fifo = FifoReader(tmp_path / "out.fifo")
    assert prepare_output(fifo.path) == fifo.path  # nothing to replace: no overwrite needed
    atomic_write_text(fifo.path, "one\ntwo\n")
    assert fifo.result() == b"one\ntwo\n"
    assert stat.S_ISFIFO(os.lstat(fifo.path).st_mode)
    _only(tmp_path, "out.fifo")


def test_a_socket_is_refused_even_with_overwrite(unix_socket: Path) -> None:
    for overwrite in (False, True):
        with pytest.raises(OutputExistsError, match=r"out\.sock is a socket: refusing to write into it"):
            prepare_output(unix_socket, overwrite=overwrite)
    with pytest.raises(OutputExistsError, match="is a socket"), atomic_open(unix_socket) as handle:
        handle.write("never")
    assert stat.S_ISSOCK(os.lstat(unix_socket).st_mode)
    _only(unix_socket.parent, "out.sock")


def test_a_link_to_a_socket_is_refused(unix_socket: Path) -> None:
    link = unix_socket.parent / "link"
    link.symlink_to(unix_socket)
    with pytest.raises(OutputExistsError, match="link is a socket"):
        prepare_output(link, overwrite=True)
    assert link.is_symlink()


def test_a_character_device_is_written_into_as_root_too(tmp_path: Path) -> None:
    null = _device(tmp_path / "null", 1, 3)
    assert prepare_output(null, overwrite=True) == null
    with atomic_open(null, "wb") as handle:
        handle.write(b"x" * 100_000)
    info = os.lstat(null)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    _only(tmp_path, "null")


def test_a_full_device_is_an_error_naming_it(tmp_path: Path) -> None:
    full = _device(tmp_path / "full", 1, 7)
    with pytest.raises(OSError, match=r"\[Errno 28\] No space left on device: '.*/full'") as info:
        atomic_write_text(full, "x" * 100_000)
    assert info.value.errno == errno.ENOSPC
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    _only(tmp_path, "full")


def test_the_machines_devices_are_written_into_without_overwrite() -> None:
    # without overwrite: were they files to replace, this would be refused ("exists"), never replaced
    for device in ("/dev/null", "/dev/full"):
        if not Path(device).exists():
            pytest.skip(f"no {device} here")
        assert prepare_output(device) == Path(device)
    atomic_write_text("/dev/null", "discarded")
    with pytest.raises(OSError, match="No space left on device: '/dev/full'"):
        atomic_write_text("/dev/full", "x" * 100_000)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_directory_and_a_new_name_in_dev_are_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputExistsError, match="is a directory, expected a file name"):
        prepare_output(tmp_path, overwrite=True)
    if not Path("/dev").is_dir():
        pytest.skip("no /dev here")
    with pytest.raises(OutputExistsError, match="/dev/simscore-no-such-device does not exist in /dev"):
        prepare_output("/dev/simscore-no-such-device", overwrite=True)
    assert not Path("/dev/simscore-no-such-device").exists()


_STDOUT_WRITER = """
import sys
from simscore.io.output import atomic_write_text, prepare_output
print("before", flush=True)
prepare_output("/dev/stdout")
atomic_write_text("/dev/stdout", "written\\n")
print("after")
"""


@pytest.mark.parametrize("where", ["pipe", "file"])
def test_dev_stdout_is_written_through_the_descriptor_in_order(tmp_path: Path, where: str) -> None:
    if not Path("/dev/stdout").exists() or not Path("/proc/self/fd").is_dir():
        pytest.skip("no /dev/stdout or /proc here")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if where == "pipe":
        done = subprocess.run([sys.executable, "-c", _STDOUT_WRITER], env=env, capture_output=True, timeout=60)
        out = done.stdout
    else:  # stdout is a file the "shell" opened: appended to through the same descriptor
        target = tmp_path / "out.txt"
        with open(target, "wb") as handle:
            done = subprocess.run([sys.executable, "-c", _STDOUT_WRITER], env=env, stdout=handle,
                                  stderr=subprocess.PIPE, timeout=60)
        out = target.read_bytes()
    assert done.returncode == 0, done.stderr
    assert out == b"before\nwritten\nafter\n"
    assert Path("/dev/stdout").is_symlink() or stat.S_ISCHR(os.lstat("/dev/stdout").st_mode)


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["a" * 249 + ".jsonl", "é" * 124 + ".jsonl", "日本" * 41 + ".json"],
                         ids=["ascii-255-bytes", "latin-254-bytes", "cjk-251-bytes"])
def test_a_name_at_the_limit_is_written_and_its_temporary_fits(tmp_path: Path, name: str) -> None:
    assert len(os.fsencode(name)) in (255, 254, 251)
    target = prepare_output(tmp_path / name)
    with atomic_open(target) as handle:
        handle.write("data")
        (temporary,) = [p.name for p in tmp_path.iterdir()]
        assert len(os.fsencode(temporary)) <= os.pathconf(tmp_path, "PC_NAME_MAX")
        assert is_temporary(temporary) and temporary.startswith(".")
        assert temporary.encode().decode("utf-8") == temporary  # shortened at a character, not in one
    assert target.read_text() == "data"
    _only(tmp_path, name)


def test_a_name_over_the_limit_is_refused_before_any_work(tmp_path: Path) -> None:
    name = "é" * 126 + ".jsonl"  # 258 bytes
    with pytest.raises(OSError, match=r"a file name of 258 bytes, longer than the 255 this file system allows"):
        prepare_output(tmp_path / name)


def test_two_long_names_with_one_start_have_distinct_temporaries(tmp_path: Path) -> None:
    first, second = tmp_path / ("x" * 250 + ".a"), tmp_path / ("x" * 250 + ".b")
    with atomic_open(first) as a, atomic_open(second) as b:
        a.write("a")
        b.write("b")
        temporaries = sorted(p.name for p in tmp_path.iterdir())
        assert len(temporaries) == 2 and all(is_temporary(t) for t in temporaries)
        assert temporaries[0].split(".")[1] != temporaries[1].split(".")[1]  # the hash of each name
    assert (first.read_text(), second.read_text()) == ("a", "b")


# ----------------------------------------------------------------------------- temporaries of ended writers


def _ended_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_the_temporaries_of_ended_writers_of_the_same_target_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "scores.json"
    with atomic_open(target) as handle:  # learn this host's tag from a temporary name
        handle.write("first")
        (own,) = [p.name for p in tmp_path.iterdir()]
    tag = own.split(".")[-2].split("-")[1]
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ended, alive = _ended_pid(), sleeper.pid
        files = {
            f".scores.json.{ended}-{tag}-0123456789ab.tmp": "removed: its writer has ended",
            f".scores.json.{alive}-{tag}-0123456789ab.tmp": "kept: a write in progress",
            f".scores.json.{ended}-{'0' * 6 if tag != '0' * 6 else '1' * 6}-0123456789ab.tmp": "kept: another host's",
            f".other.json.{ended}-{tag}-0123456789ab.tmp": "kept: another target's",
            ".scores.json.0123456789ab.tmp": "kept: no writer named (an experiment folder removes it when resumed)",
            f"scores.json.{ended}-{tag}-0123456789ab.tmp": "kept: not a temporary name",
        }
        for name, why in files.items():
            (tmp_path / name).write_text(why)
        atomic_write_text(target, "second")
        left = {p.name for p in tmp_path.iterdir()}
    finally:
        sleeper.kill()
        sleeper.wait()
    assert left == {"scores.json"} | {name for name, why in files.items() if why.startswith("kept")}
    assert target.read_text() == "second"


def test_an_interrupted_write_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic_open(target) as handle:
        handle.write("new")
        raise KeyboardInterrupt
    _only(tmp_path, "out.json")
    assert target.read_text() == "old"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (".report.md.4242-0a1b2c-0a1b2c3d4e5f.tmp", True),
        (".report.md.0a1b2c3d4e5f.tmp", True),  # simscore before 0.2
        (".xxxx~0a1b2c3d.77-abcdef-0a1b2c3d4e5f.tmp", True),  # a shortened long name
        (".report.md.4242-0a1b2c-0A1B2C3D4E5F.tmp", False),
        (".report.md.0-0a1b2c-0a1b2c3d4e5f.tmp", False),
        ("report.md.4242-0a1b2c-0a1b2c3d4e5f.tmp", False),
        ("..4242-0a1b2c-0a1b2c3d4e5f.tmp", False),
        (".x.tmp", False),
    ],
)
def test_is_temporary(name: str, expected: bool) -> None:
    assert is_temporary(name) is expected
