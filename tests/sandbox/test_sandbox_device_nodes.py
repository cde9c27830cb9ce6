"""No cell opens a host pty. On the seccomp tier the worker saw the host's /dev, and the filter
cannot see paths: each read-only open of /dev/ptmx made one of the host's ptys (248 per worker
with open_files 256, held for the worker's life; kernel.pty.max is 4,096 by default, so ~17
workers took every new terminal of the machine). That tier's worker then got a /dev of four
nodes in a mount namespace of its own; it now gets the Landlock tier's private root, which has
no /dev at all (worker_root.private_root), and refuses to run without it. Every real tier
(conftest.py's `host`)."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import TIER_LANDLOCK, TIER_SECCOMP, probe
from sandbox.root_probe import private_root_possible

from .conftest import Host, run_attack

ROOT = Path(__file__).resolve().parents[2]

_CELL = """
import os
opened = []
for path in ("/dev/ptmx", "/dev/pts/ptmx", "/dev/tty", "/dev/console", "/dev/full",
             "/dev/kmsg", "/dev/fuse", "/dev/net/tun", "/dev/loop-control", "/dev/shm"):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        continue
    os.close(fd)
    opened.append(path)
works = True
if os.path.exists("/dev"):  # a private root (Landlock and seccomp tiers) has none
    try:
        with open("/dev/urandom", "rb") as f, open("/dev/null", "rb") as null:
            works = len(f.read(16)) == 16 and null.read(1) == b""
    except PermissionError:  # Landlock without a private root: /dev seen, never opened
        works = "EACCES"
opened, works
"""


def _no_private_root(host: Host) -> bool:
    """The Landlock tier where the kernel refuses the worker its mount namespace: host paths
    are visible (stat), Landlock refuses opening them (EACCES)."""
    return host.tier == TIER_LANDLOCK and not private_root_possible()


def test_no_cell_opens_a_device_beyond_the_four(host: Host) -> None:
    result = run_attack(host, _CELL)
    assert result.ok and result.value is not None, result.to_json()
    opened, works = ast.literal_eval(result.value)
    assert opened == [] and (works is True or (works == "EACCES" and _no_private_root(host))), \
        result.value


_READ = """
import errno, os
try:
    with open(@PATH@, "rb") as f:
        got = f.read()  # not `read`: the session's globals outlive the cell (the vault's read)
except OSError as exc:
    got = errno.errorcode[exc.errno]
writable = None
if os.path.exists("/proc/self/mountinfo"):  # a private root has no /proc
    try:
        with open("/proc/self/mountinfo") as f:
            writable = [line.split()[4] for line in f if "rw" in line.split()[5].split(",")]
    except PermissionError:  # Landlock without a private root: /proc seen, never opened
        writable = "EACCES"
got, writable
"""


def test_no_read_changes_a_host_files_access_time(host: Host, tmp_path: Path) -> None:
    """A read of a host file set its access time (relatime: a file not read since its last
    change, or for a day): on the seccomp tier, which read what its uid could, the one change of
    a host file's metadata the read-only filter let through. Its namespace's mounts were made
    read-only; it now has a private root, where the file does not exist. As root the worker's
    uid could not reach tmp_path; the unprivileged run (test_sandbox_nonroot.py) read it."""
    canary = tmp_path / "read-me.txt"
    canary.write_text("old news")
    os.utime(canary, (1_000_000_000, canary.stat().st_mtime))  # read long before its change
    before = canary.stat().st_atime_ns
    result = run_attack(host, _READ.replace("@PATH@", repr(str(canary))))
    assert result.ok and result.value is not None, result.to_json()
    read, writable = ast.literal_eval(result.value)
    if host.tier == TIER_SECCOMP:
        assert (read, writable) == ("ENOENT", None), (read, writable)
    assert canary.stat().st_atime_ns == before, (read, canary.stat().st_atime)


_CHILD = """
import os, sys
sys.path.insert(0, sys.argv[1])
from sandbox import worker_root
worker_root.private_root([os.path.dirname(sys.argv[2])], {}, whole_tree=True)
opened = []
for path in sys.argv[2:]:
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK))
    except OSError:
        continue
    opened.append(os.path.basename(path))
print((opened, len(os.urandom(16)) == 16, os.path.exists("/dev")))
"""

# (name, major, minor) of device nodes a chroot's or container rootfs's /dev holds
_NODES = [("null", 1, 3), ("zero", 1, 5), ("full", 1, 7), ("urandom", 1, 9), ("tty", 5, 0),
          ("ptmx", 5, 2)]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod and a mount namespace: root only")
@pytest.mark.parametrize("nodes", [_NODES[:1], _NODES[1:4], _NODES])
def test_no_device_node_outside_dev_opens(tmp_path: Path,
                                          nodes: list[tuple[str, int, int]]) -> None:
    """The seccomp tier's private /dev held four nodes, but a device node anywhere else on the
    host's file system (a chroot's or container rootfs's /dev, which that tier's uid could
    reach) opened as on the host: with its devpts bound beside it (schroot does so) a read-only
    open of its ptmx made a host pty (SBXDEV_devnode.py.txt: 3 ptys from one cell, as root and
    as rmhtest the node opened). The private root binds every folder nodev, and has no /dev:
    here such a /dev is bound into one (worker_root.private_root itself, in a child process: its
    own mount namespace) and none of its nodes opens."""
    chroot_dev = tmp_path / "dev"
    chroot_dev.mkdir()
    for name, major, minor in nodes:
        os.mknod(chroot_dev / name, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    paths = [str(chroot_dev / name) for name, _, _ in nodes]
    child = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), *paths],
                           capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 0, child.stderr
    assert ast.literal_eval(child.stdout.strip()) == ([], True, False), child.stdout


_REFUSING = """
import ast, errno, os, sys
sys.path.insert(0, sys.argv[1])
import pyseccomp as sc
name, err, canary = sys.argv[2], int(sys.argv[3]), sys.argv[4]
filt = sc.SyscallFilter(sc.ALLOW)  # what a container's profile does (inherited by the worker)
filt.add_rule(sc.ERRNO(err), name)
filt.load()
from sandbox import Sandbox, SandboxConfig, SandboxError
try:
    sb = Sandbox(SandboxConfig(tier="seccomp", memory_mb=256, lint=False), {})
except SandboxError as exc:
    print(("refused", str(exc)[-400:]))
    sys.exit(0)
cell = _READ.replace("@PATH@", repr(canary)) + "\\n(got, writable, os.path.exists('/dev'))"
result = sb.exec(cell)
sb.close()
print(("ran", result.value if result.ok else result.to_json()))
"""


@pytest.mark.skipif(TIER_SECCOMP not in probe().available, reason="no seccomp tier here")
@pytest.mark.parametrize(("refused", "err"), [("unshare", 1), ("unshare", 38),
                                              ("mount_setattr", 1), ("mount_setattr", 38)])
def test_no_mount_namespace_means_no_seccomp_worker(tmp_path: Path, refused: str,
                                                    err: int) -> None:
    """Where the seccomp tier's worker could not make its mount namespace (a container's
    profile refusing unshare: root without CAP_SYS_ADMIN; unprivileged without user
    namespaces) it ran anyway with the host's /dev and writable mounts, and where mount_setattr
    was refused (a kernel before 5.12, an older profile) with its mounts writable: a cell's
    read set a host file's access time, and it opened any device node and took a host FIFO's
    data (SBX3_nomountns.py.txt). Now the worker refuses to run there (its private root needs
    both). Simulated by a seccomp filter of the supervisor's own process refusing `refused`
    with errno `err`."""
    canary = tmp_path / "read-me.txt"
    canary.write_text("old news")
    os.utime(canary, (1_000_000_000, canary.stat().st_mtime))  # read long before its change
    before = canary.stat().st_atime_ns
    script = _REFUSING.replace("_READ", repr(_READ))
    child = subprocess.run([sys.executable, "-c", script, str(ROOT), refused, str(err),
                            str(canary)], capture_output=True, text=True, timeout=120,
                           check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    outcome, detail = ast.literal_eval(child.stdout.strip().splitlines()[-1])
    assert canary.stat().st_atime_ns == before, detail
    if outcome == "refused":
        words = ("mount namespace", "mount_setattr", "private root")
        assert any(w in detail for w in words), detail
        return
    assert ast.literal_eval(detail) == ("ENOENT", None, False), detail
