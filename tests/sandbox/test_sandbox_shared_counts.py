"""Two sandboxes of one tier share no kernel count through their uid (SBX6, session 32).

Every worker of a root supervisor runs as the same uid (rmh-sandbox), and an unprivileged
supervisor's workers as the user's. The kernel counts queued signals per uid at each level of
user namespaces, and caps each level above a namespace at the limit its creator had when it
made it. The worker lowered RLIMIT_SIGPENDING to 128 before it made its own user namespace, so
128 became the cap of its uid's count outside it: one cell holding 128 queued signals left
every other session's worker (Landlock and seccomp tiers) unable to queue one (EAGAIN), a
denial and a channel between sessions. The cap is now set inside the namespace.
"""

from __future__ import annotations

import pytest

from sandbox import Sandbox, SandboxConfig
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
    try:
        for sb in fillers:
            filled = sb.exec(FILL.format(cap=PENDING_SIGNALS), deadline_s=30)
            assert filled.ok and filled.value is not None, filled.to_json()
            assert 0 < int(filled.value) <= PENDING_SIGNALS, filled.value
        res = others[0].exec(ONE, deadline_s=30)
        assert res.ok and res.value == "'queued'", (host.tier, res.to_json())
    finally:
        for sb in fillers:
            assert sb.exec(DRAIN, deadline_s=30).ok
        for sb in others:
            sb.close()
