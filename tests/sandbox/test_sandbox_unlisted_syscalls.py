"""Every syscall number NOT on the allowlist, on every real tier (conftest.py's `host`; as an
unprivileged user too, by test_sandbox_nonroot.py): called from a cell through `ctypes` with
generated arguments (small ints, all-ones, huge values, pointers to a host path outside the
vault, to a path under /tmp, to a buffer), each must fail with EPERM (the filter's default
action) or ENOSYS (clone3, numbers the kernel lacks), and the host invariants of `run_attack`
must hold. test_sandbox_invariants.py fuzzes the allowlist itself.

The kernel runs a few syscalls before any seccomp filter (`PASSTHROUGH`): they act only on
the calling process and are left out here, each with why.
"""

from __future__ import annotations

import ast
import errno
import platform
import random

from sandbox.seccomp_policy import allowed_names

from .conftest import Host, run_attack

# x86_64 syscalls seccomp does not filter (kernel/seccomp.c, since Linux 6.11 and 6.16).
PASSTHROUGH: dict[str, dict[int, str]] = {
    "x86_64": {335: "uretprobe: SIGILL to the caller outside a uretprobe trampoline",
               336: "uprobe: ENXIO, or SIGILL to the caller, outside a uprobe trampoline"},
}
_HIGHEST = 512  # past every syscall of today's kernels: those too must be refused
_POOL = (0, 1, 2, -1, -100, 0o777, 0o6777, 0xFFFFFFFF, 1 << 40)

_CELL = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
bufs = {"P": ctypes.create_string_buffer(@CANARY@.encode()),
        "S": ctypes.create_string_buffer(@ESC@.encode()),
        "B": ctypes.create_string_buffer(4096)}
odd = []
for nr, args in @PLAN@:
    vals = [ctypes.c_long(ctypes.addressof(bufs[a]) if isinstance(a, str) else a)
            for a in args]
    got = libc.syscall(nr, *vals)
    if got != -1 or ctypes.get_errno() not in (1, 38):
        odd.append((nr, got, ctypes.get_errno()))
odd
"""


def _allowed_numbers() -> set[int]:
    import pyseccomp as sc

    numbers = set()
    for name in allowed_names():
        try:
            numbers.add(int(sc.resolve_syscall(sc.Arch.NATIVE, name)))
        except (OSError, ValueError):
            continue
    return numbers


def plan(seed: int, per_call: int = 2) -> list[tuple[int, list[int | str]]]:
    skip = _allowed_numbers() | set(PASSTHROUGH.get(platform.machine(), {}))
    rng = random.Random(seed)
    pool: list[int | str] = [*_POOL, "P", "S", "B"]
    return [(nr, [rng.choice(pool) for _ in range(6)])
            for nr in range(_HIGHEST) if nr not in skip for _ in range(per_call)]


def test_every_unlisted_syscall_is_refused(host: Host) -> None:
    calls = plan(seed=24)
    assert len({nr for nr, _ in calls}) > 200, "the sweep lost its syscalls"
    source = (_CELL.replace("@CANARY@", repr(str(host.canary)))
              .replace("@ESC@", repr(host.marker)).replace("@PLAN@", repr(calls)))
    result = run_attack(host, source, deadline_s=30)
    assert result.ok, result.to_json()
    odd = ast.literal_eval(str(result.value))
    assert odd == [], [(nr, got, errno.errorcode.get(err, err)) for nr, got, err in odd]
