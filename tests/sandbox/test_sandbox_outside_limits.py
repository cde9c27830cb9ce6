"""Resources bounded from outside the worker (issue 26, item 3): the task cap (RLIMIT_NPROC,
1,024 by default, counted in the worker's own user namespace) and the size of every writable
mount. Per real tier, lint off, the escape suite's invariants checked by `run_attack`."""

from __future__ import annotations

import ast
import errno
import os

from sandbox import TIER_BWRAP, TIER_SECCOMP, SandboxConfig
from sandbox.registry import PENDING_SIGNALS

from .conftest import Host, run_attack

_THREADS = """
import threading
threading.stack_size(32768)
stop = threading.Event()
threads, error = [], None
try:
    for _ in range(5000):
        t = threading.Thread(target=stop.wait)
        t.start()
        threads.append(t)
except BaseException as exc:
    error = type(exc).__name__
stop.set()
for t in threads:
    t.join()
(len(threads), error)
"""


def test_a_cell_starting_5000_threads_stops_near_the_task_cap(host: Host) -> None:
    cap = SandboxConfig().max_tasks
    assert host.sb.config.max_tasks == cap == 1024
    res = run_attack(host, _THREADS, deadline_s=60)
    assert res.ok, res.to_json()
    started, error = ast.literal_eval(str(res.value))
    assert error == "RuntimeError", res.value  # "can't start new thread"
    assert cap - 8 <= started < cap, started  # the main thread (and bwrap's init) count too
    assert "nproc" in host.sb.guards


_FILL = """
import os
def fill(path, total=160 << 20):
    written = 0
    try:
        with open(path, "wb") as f:
            chunk = b"x" * (1 << 20)
            while written < total:
                written += f.write(chunk)
                f.flush()
        return (written, None)
    except OSError as exc:
        return (written, type(exc).__name__)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
{name: fill(path) for name, path in (("shm", "/dev/shm/rmh-fill-@ESCNAME@"),
                                     ("dev", "/dev/rmh-fill"), ("tmp", "/tmp/rmh-fill-@ESCNAME@"))}
"""


def test_writable_mounts_stop_at_the_scratch_limit(host: Host) -> None:
    scratch = host.sb.config.scratch_mb << 20
    name = os.path.basename(host.marker)  # this host's own: other tests (another xdist
    # worker, the unprivileged run, Ray's object store) make and drop files in /dev/shm meanwhile
    cell = _FILL.replace("@ESCNAME@", name)
    res = run_attack(host, cell, deadline_s=60)
    assert res.ok, res.to_json()
    filled = ast.literal_eval(str(res.value))
    for name, (written, error) in filled.items():
        assert written <= scratch and error is not None, (name, filled)
    if host.tier == TIER_BWRAP:  # no /dev/shm; /dev read-only; /tmp the sized scratch
        assert filled["shm"] == (0, "FileNotFoundError"), filled
        assert filled["dev"] == (0, "OSError"), filled
        assert filled["tmp"][1] in ("OSError", "FileTooLarge"), filled
    if host.tier != TIER_SECCOMP:
        assert not [n for n in os.listdir("/dev/shm") if name in n]


_FILES = """
import os
made, error = 0, None
try:
    os.mkdir("/tmp/many")
    while made < 100_000:
        os.close(os.open(f"/tmp/many/{made}", os.O_CREAT | os.O_WRONLY, 0o600))
        made += 1
except OSError as exc:
    error = type(exc).__name__
(made, error)
"""


def test_the_scratch_mount_stops_at_its_file_count(host: Host) -> None:
    # An empty file costs a tmpfs no block, so bwrap's --size alone let one worker create
    # files until the tmpfs's default inode count (half the host's RAM pages): 300,000 files
    # pinned 344 MiB of unreclaimable kernel memory in 3.5 s, GBs over a cell's deadline.
    res = run_attack(host, _FILES, deadline_s=60)
    assert res.ok, res.to_json()
    made, error = ast.literal_eval(str(res.value))
    assert error is not None, (made, error)
    if host.tier == TIER_BWRAP:
        assert error == "OSError" and 0 < made < host.sb.config.scratch_mb * 64  # registry.py
    else:  # no writable folder at all
        assert made == 0, (made, error)


# Real-time signals are queued, one each, up to RLIMIT_SIGPENDING; the kernel counts them for
# the worker's uid outside its user namespace as well (the same count as every other process
# of that uid).
_QUEUE_SIGNALS = """
import os, resource, signal
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
for _ in range(5000):
    os.kill(os.getpid(), signal.SIGRTMIN)
queued = 0
while signal.sigtimedwait([signal.SIGRTMIN], 0) is not None:
    queued += 1
(queued, resource.getrlimit(resource.RLIMIT_SIGPENDING))
"""


def test_signals_a_cell_queues_stop_at_the_pending_cap(host: Host) -> None:
    """Before, the host's limit applied (~96,000 here): a worker holding that many left every
    other process of its uid (as root, every other worker; unprivileged, the user's session)
    unable to create a POSIX timer (EAGAIN), and losing queued real-time signals, for as long
    as it lived (docs/measurements/session26/NOTES-ADVSBX.md). A worker with no user namespace
    of its own (user namespaces refused) shares its uid's count with every other worker of
    that uid, and queues none (cap 0; kill()'s one pending signal is still delivered)."""
    res = run_attack(host, _QUEUE_SIGNALS)
    assert res.ok, res.to_json()
    queued, limit = ast.literal_eval(str(res.value))
    shared = host.tier != TIER_BWRAP and "userns" not in host.sb.guards
    cap = 0 if shared else PENDING_SIGNALS
    assert limit == (cap, cap), (res.value, host.sb.guards)
    assert 0 < queued <= max(cap, 1), res.value  # 5,000 before


def test_the_worker_is_not_dumpable(host: Host) -> None:
    """RLIMIT_CORE 0 does not stop the kernel from handing a crash to a core_pattern pipe
    (systemd-coredump, apport), and a credential change leaves a process at
    fs.suid_dumpable (2, root-owned dumps, on Ubuntu): the worker sets PR_SET_DUMPABLE 0 after
    its last one. Before, an unprivileged supervisor's worker was dumpable (1) on every tier
    (tests/sandbox/test_sandbox_nonroot.py runs this as such a user)."""
    res = run_attack(host, "import ctypes\nctypes.CDLL(None).prctl(3, 0, 0, 0, 0)")
    assert res.ok and res.value == "0", res.to_json()  # PR_GET_DUMPABLE
    assert "nodump" in host.sb.guards


_LOCK = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
# PROT_READ|PROT_WRITE; MAP_PRIVATE|MAP_ANONYMOUS|MAP_LOCKED|MAP_POPULATE; 1 MiB
addr = libc.mmap(None, 1 << 20, 3, 0x22 | 0x2000 | 0x8000, -1, 0)
(addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno())
"""


def test_a_cell_locks_no_memory(host: Host) -> None:
    """RLIMIT_MEMLOCK is 0 in the worker (SBX11): a cell's mmap(MAP_LOCKED) pinned RAM against
    reclaim up to the supervisor's limit (8 MiB here; all of memory_mb under a supervisor run
    with LimitMEMLOCK=infinity), on main 1 MiB at once."""
    res = run_attack(host, _LOCK)
    assert res.ok and res.value is not None, res.to_json()
    locked, err = ast.literal_eval(res.value)
    assert not locked and err in (errno.EPERM, errno.EAGAIN), (host.tier, res.value)
