"""No cell acts on a host object outside the vault: a FIFO keeps its pending bytes, a file keeps
the write lease its holder took (no SIGIO), files keep their bytes and access times, and every
host path is unreadable. On the seccomp tier a read-only open (which its filter allows) of a
host FIFO took the bytes waiting for that FIFO's reader, and one of a leased file broke the
lease (its holder got SIGIO): the filter cannot tell a FIFO or a leased file from a file, and the
tier read whatever its uid could (SBX3_inv_run.py.txt, SBX4_host_objects.py.txt). Its worker
now gets the Landlock tier's private root. Every real tier (conftest.py's `host`), with cells
generated over targets and ways of reaching them."""

from __future__ import annotations

import ast
import fcntl
import os
import shutil
import signal
import struct
import tempfile
import termios
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import pytest

from sandbox import TIER_LANDLOCK
from sandbox.root_probe import private_root_possible

from .conftest import Host, run_attack

PENDING = b"host bytes for my reader\n"  # 25 bytes the host left in its FIFO
TARGETS = ("fifo", "leased", "file", "dir")
OPEN_FLAGS = {  # how a cell opens a target (a blocking open of the leased file would wait)
    "rdonly": os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY,
    "noatime": os.O_RDONLY | os.O_NONBLOCK | os.O_NOATIME,
    "cloexec_nofollow": os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW,
    "path": os.O_PATH,
}
OTHER_OPS = {
    "stat": "os.stat(P).st_size",
    "listdir": "os.listdir(P)",
    "readlink": "os.readlink(P)",
    "opendir_fd": "os.listdir(os.open(os.path.dirname(P), os.O_RDONLY | os.O_DIRECTORY))",
}
OPS = {f"open_{name}": f"_read(os.open(P, {flags}))" for name, flags in OPEN_FLAGS.items()}
OPS |= OTHER_OPS

_CELL = """
import errno, os, stat
def _read(fd):
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return os.listdir(fd)
        return os.read(fd, 64)
    except OSError as exc:
        return "opened, then " + errno.errorcode.get(exc.errno, str(exc.errno))
_outcomes = {}
P = @PATH@
for _name, _op in @OPS@:
    try:
        _outcomes[_name] = repr(eval(_op))
    except OSError as exc:
        _outcomes[_name] = errno.errorcode.get(exc.errno, str(exc.errno))
_outcomes
"""


@dataclass
class HostObjects:
    """A folder outside the vault, reachable by the worker's uid (pytest's own tmp is
    root-only), holding a FIFO the host keeps open with bytes pending, a file whose write lease
    the host holds, and a plain file whose access time is older than its change."""

    folder: Path
    fifo_fd: int
    lease_fd: int
    sigio: list[int] = field(default_factory=list)

    def state(self) -> dict[str, object]:
        pending = struct.unpack("i", fcntl.ioctl(self.fifo_fd, termios.FIONREAD, b"\0" * 4))[0]
        files = {}
        for name in ("file", "leased"):
            path = self.folder / name
            fd = os.open(path, os.O_RDONLY | os.O_NOATIME) if name == "file" else None
            try:
                data = os.read(fd, 1 << 16) if fd is not None else None
            finally:
                if fd is not None:
                    os.close(fd)
            st = path.stat()
            files[name] = (data, st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns)
        return {"fifo pending": pending, "lease": fcntl.fcntl(self.lease_fd, fcntl.F_GETLEASE),
                "sigio": len(self.sigio), "files": files,
                "listing": sorted(os.listdir(self.folder)),
                "dir": sorted(os.listdir(self.folder / "dir"))}


@pytest.fixture
def objects() -> Iterator[HostObjects]:
    folder = Path(tempfile.mkdtemp(prefix="rmh-host-objects-"))
    folder.chmod(0o755)
    for name in ("file", "leased"):
        (folder / name).write_text(f"host {name}\n")
        (folder / name).chmod(0o644)
        os.utime(folder / name, (1_000_000_000, (folder / name).stat().st_mtime))
    (folder / "dir").mkdir(mode=0o755)
    (folder / "dir" / "inside").write_text("host folder's file\n")
    os.mkfifo(folder / "fifo", 0o644)
    (folder / "fifo").chmod(0o644)
    fifo_fd = os.open(folder / "fifo", os.O_RDWR | os.O_NONBLOCK)
    os.write(fifo_fd, PENDING)
    got = HostObjects(folder, fifo_fd, os.open(folder / "leased", os.O_RDONLY))

    def count(signum: int, frame: FrameType | None) -> None:
        got.sigio.append(signum)

    previous = signal.signal(signal.SIGIO, count)
    try:
        fcntl.fcntl(got.lease_fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)  # any open breaks it
        yield got
    finally:
        fcntl.fcntl(got.lease_fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        signal.signal(signal.SIGIO, previous)
        os.close(got.lease_fd)
        os.close(fifo_fd)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("target", TARGETS)
def test_no_cell_acts_on_a_host_object(host: Host, objects: HostObjects, target: str) -> None:
    before = objects.state()
    assert before["fifo pending"] == len(PENDING) and before["lease"] == fcntl.F_WRLCK
    cell = (_CELL.replace("@PATH@", repr(str(objects.folder / target)))
            .replace("@OPS@", repr(sorted(OPS.items()))))
    result = run_attack(host, cell)
    assert result.ok and result.value is not None, result.to_json()
    outcomes = ast.literal_eval(result.value)
    assert objects.state() == before, (objects.state(), outcomes)
    reached = {name: got for name, got in outcomes.items() if got != "ENOENT"}
    if host.tier == TIER_LANDLOCK and not private_root_possible():  # stat works (tier_limits)
        reached = {name: got for name, got in reached.items()  # and an O_PATH open: no hook
                   if not got.isupper() and name != "stat"
                   and (name, got) != ("open_path", "'opened, then EBADF'")}
    assert reached == {}, f"{host.tier} reached the host's {target}: {reached}"

