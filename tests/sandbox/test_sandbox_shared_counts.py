"""Two sandboxes of one tier share no kernel count through their uid (SBX6, session 32).

Every worker of a root supervisor runs as the same uid (rmh-sandbox), and an unprivileged
supervisor's workers as the user's. The kernel counts queued signals per uid at each level of
user namespaces, and caps each level above a namespace at the limit its creator had when it
made it. The worker lowered RLIMIT_SIGPENDING to 128 before it made its own user namespace, so
128 became the cap of its uid's count outside it: one cell holding 128 queued signals left
every other session's worker (Landlock and seccomp tiers) unable to queue one (EAGAIN), a
denial and a channel between sessions. The cap is now set inside the namespace.

Where the worker gets no user namespace of its own (SBX8, session 33: user namespaces refused,
as by user.max_user_namespaces=0 or a container's profile; simulated by a seccomp filter the
supervisor loads, which every worker inherits), its count is its uid's own: as root every
session's rmh-sandbox worker shared one count of 128, unprivileged every worker of the user.
There the cap is 0, so a cell holds none of that count; the task cap (RLIMIT_NPROC) is still
shared there, which `rmh doctor`'s identity line now says (as root it said nothing of it).

Pipe buffers (SBX9, session 34): the kernel charges every pipe's 16 pages to its creator's real
uid, whatever user namespace it is in, and past fs.pipe-user-pages-soft (16,384 pages) gives
every new pipe of that uid 2 pages. A cell could hold a pipe per two descriptors: 125 at the
default open_files, 2,000 pages; nine sessions of one uid (root's rmh-sandbox on the whole
machine; an unprivileged user's every process) then shrank every other pipe of the uid to
8 KiB, a cross-session channel and 8 MB of kernel memory outside RLIMIT_AS per worker. The
filter now refuses pipe and pipe2.

Epoll watches (SBX11, session 36): the kernel charges each to its creator's real uid, whatever
user namespace it is in, up to fs.epoll.max_user_watches (4% of RAM's worth: 5,491,645 on a
23 GB host). A watch lives while its file is open anywhere, so a cell of E watcher epolls, H
leaf epolls and S descriptors re-pointed at each leaf in turn held E * H * S of them: 81**3 =
531,441 at the default open_files (~70 MB of slab outside RLIMIT_AS), and eleven sessions of
one uid left every process of it (root's rmh-sandbox on the whole machine; an unprivileged
user's every process) unable to add a watch (ENOSPC). The filter now refuses epoll;
selectors.DefaultSelector falls back to poll.
"""

from __future__ import annotations

import ast
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import TIER_BWRAP, Sandbox, SandboxConfig
from sandbox.registry import PENDING_SIGNALS

from .conftest import Host

FILL = """
import signal, threading
sig = signal.SIGRTMIN + 1
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
queued = 0
try:
    for _ in range(4 * {cap}):
        signal.pthread_kill(threading.get_ident(), sig)
        queued += 1
except OSError as exc:
    stopped = exc.errno
queued
"""

ONE = """
import signal, threading
sig = signal.SIGRTMIN + 2
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
try:
    signal.pthread_kill(threading.get_ident(), sig)
    got = "queued"
except OSError as exc:
    got = f"errno {exc.errno}"
signal.signal(sig, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
got
"""

DRAIN = """
signal.signal(sig, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
"done"
"""


@pytest.mark.parametrize("holders", [1, 2])
def test_signals_queued_in_one_sandbox_leave_another_its_own(host: Host, holders: int) -> None:
    """`holders` sandboxes each hold their whole cap of queued signals; a further sandbox of
    the same tier still queues one."""
    config = SandboxConfig(deadline_s=30.0, memory_mb=384, scratch_mb=16, lint=False,
                           tier=host.tier, open_files=128)
    others = [Sandbox(config, {}) for _ in range(holders)]
    fillers = [host.sb, *others[1:]]
    # no user namespace of its own (user namespaces refused): the uid's count, so cap 0
    shared = host.tier != TIER_BWRAP and "userns" not in host.sb.guards
    cap = 0 if shared else PENDING_SIGNALS
    try:
        for sb in fillers:
            filled = sb.exec(FILL.format(cap=PENDING_SIGNALS), deadline_s=30)
            assert filled.ok and filled.value is not None, filled.to_json()
            assert (0 if shared else 1) <= int(filled.value) <= cap, filled.value
        res = others[0].exec(ONE, deadline_s=30)
        assert res.ok and res.value == ("'errno 11'" if shared else "'queued'"), (
            host.tier, res.to_json())
    finally:
        for sb in fillers:
            sb.exec(DRAIN, deadline_s=30)
        for sb in others:
            sb.close()


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
tier, refused = sys.argv[2], sys.argv[3]
import pyseccomp as sc
filt = sc.SyscallFilter(sc.ALLOW)  # what a hardened host or a container's profile refuses
if refused == "newuser":
    for call in ("unshare", "clone"):
        filt.add_rule(sc.ERRNO(1), call, sc.Arg(0, sc.MASKED_EQ, 0x10000000, 0x10000000))
else:
    filt.add_rule(sc.ERRNO(1), refused)
filt.load()
from sandbox import Sandbox, SandboxConfig, SandboxError, identity_limits
config = SandboxConfig(deadline_s=30.0, memory_mb=384, lint=False, tier=tier, open_files=128)
try:
    a, b = Sandbox(config, {}), Sandbox(config, {})
except SandboxError as exc:
    print(repr(("refused", str(exc)[:200])))
    sys.exit(0)
try:
    alone = b.exec(sys.argv[5]).value
    filled = a.exec(sys.argv[4].format(cap=1000)).value
    beside = b.exec(sys.argv[5]).value
    said = " ".join(identity_limits("auto"))
    print(repr(("ran", a.guards, alone, filled, beside, said)))
finally:
    a.exec(sys.argv[6])
    a.close()
    b.close()
"""
# (tier, what the supervisor's profile refuses): CLONE_NEWUSER alone (root keeps its private
# root and drops to rmh-sandbox in the host's namespace; an unprivileged Landlock worker runs
# without a private root), or every unshare (unprivileged: the same)
NO_USERNS = [("landlock", "newuser"), ("seccomp", "newuser"), ("landlock", "unshare")]


@pytest.mark.parametrize(("tier", "refused"), NO_USERNS, ids=[f"{t}-{r}" for t, r in NO_USERNS])
def test_without_a_user_namespace_signals_queued_in_one_sandbox_leave_another_its_own(
        tier: str, refused: str) -> None:
    """A sandbox that queues real-time signals until refused leaves another sandbox of the
    same uid exactly what it had before."""
    root = str(Path(__file__).resolve().parents[2])
    child = subprocess.run([sys.executable, "-c", _CHILD, root, tier, refused, FILL, ONE, DRAIN],
                           capture_output=True, text=True, timeout=300, check=False)
    assert child.returncode == 0, child.stderr[-3000:]
    outcome = ast.literal_eval(child.stdout.strip().splitlines()[-1])
    if outcome[0] == "refused":  # the tier needs what the profile refuses here
        assert os.geteuid() != 0 or refused == "unshare", outcome
        pytest.skip(f"{tier} refused where {refused} is: {outcome[1]}")
    _, guards, alone, filled, beside, said = outcome
    assert "userns" not in guards, guards  # the case under test
    assert 0 <= int(filled) <= PENDING_SIGNALS, filled
    assert beside == alone, (tier, refused, guards, alone, filled, beside)
    # what `rmh doctor` says of it: the counts every worker of the uid shares
    assert "real-time signal (cap 0)" in said and "RLIMIT_NPROC" in said, said


HOLD_PIPES = """
import os
held = []
try:
    while len(held) < 2100:
        held.append(os.pipe())
except OSError:
    pass
len(held)
"""

PIPE_SIZE = """
import fcntl, os
try:
    r, w = os.pipe()
    got = fcntl.fcntl(r, 1032)  # F_GETPIPE_SZ
    os.close(r)
    os.close(w)
except OSError as exc:
    got = f"errno {exc.errno}"
got
"""


def _host_pipe_size() -> int:
    r, w = os.pipe()
    try:
        return fcntl.fcntl(r, 1032)  # F_GETPIPE_SZ
    finally:
        os.close(r)
        os.close(w)


def test_pipes_held_in_one_sandbox_leave_another_its_pipe_size(host: Host) -> None:
    """A sandbox whose cell makes pipes until refused (4,096 descriptors: past the uid's
    soft count of pipe pages on its own) leaves another sandbox of the same uid, and the
    supervisor's own pipes, the size they had."""
    config = SandboxConfig(deadline_s=30.0, memory_mb=384, scratch_mb=16, lint=False,
                           tier=host.tier, open_files=4096)
    alone, host_alone = host.sb.exec(PIPE_SIZE, deadline_s=30), _host_pipe_size()
    holder = Sandbox(config, {})
    try:
        held = holder.exec(HOLD_PIPES, deadline_s=30)
        assert held.ok and held.value is not None, held.to_json()
        beside, host_beside = host.sb.exec(PIPE_SIZE, deadline_s=30), _host_pipe_size()
    finally:
        holder.close()
    assert alone.ok and beside.ok, (alone.to_json(), beside.to_json())
    assert (beside.value, host_beside) == (alone.value, host_alone), (
        host.tier, f"the holder made {held.value} pipes")


HOLD_WATCHES = """
import os, select
# watchers x leaves x slots: a slot's descriptor is pointed at each leaf in turn (dup2) and
# registered in every watcher; a watch stays while its file is open, so it outlives the slot
side = 20
watches, err = 0, None
try:
    watchers = [select.epoll() for _ in range(side)]
    leaves = [select.epoll() for _ in range(side)]
    slots = [os.dup(1) for _ in range(side)]
    for leaf in leaves:
        for slot in slots:
            os.dup2(leaf.fileno(), slot)
            for watcher in watchers:
                watcher.register(slot, select.EPOLLIN)
                watches += 1
except OSError as exc:
    err = exc.errno
HELD = (watchers, leaves) if err is None else None
(watches, err)
"""

SELECTOR = """
import selectors
with selectors.DefaultSelector() as sel:
    sel.register(1, selectors.EVENT_WRITE)
    ready = [(key.fd, events) for key, events in sel.select(5)]
(type(sel).__name__, ready)
"""


def test_a_cell_holds_no_epoll_watch_of_its_uid(host: Host) -> None:
    """Epoll watches are the uid's (fs.epoll.max_user_watches, shared by every process of
    that uid): a cell gets none (EPERM), and `selectors.DefaultSelector` still works (poll).
    On main a cell held 8,000 here (20**3), 531,441 with every descriptor it has."""
    held = host.sb.exec(HOLD_WATCHES, deadline_s=30)
    assert held.ok and held.value is not None, held.to_json()
    watches, err = ast.literal_eval(held.value)
    assert (watches, err) == (0, 1), (host.tier, held.value)
    picked = host.sb.exec(SELECTOR, deadline_s=30)
    assert picked.ok and picked.value is not None, picked.to_json()
    name, ready = ast.literal_eval(picked.value)
    assert name != "EpollSelector" and ready == [(1, 2)], (host.tier, picked.value)
