"""A syscall-level fuzzer for the sandbox worker: every allowlisted syscall, called from inside a
cell through `ctypes`, with argument values aimed at host objects (paths outside the vault, the
supervisor's and a bystander's pids, uid-wide `which` values, option values, descriptors the
cell could open). The host side (test_sandbox_invariants.py) snapshots what must not change.

The calls are generated here, on the host, from a seed; the cell only materialises them
(strings become buffers, descriptors are opened) and makes them. A few syscalls are left out
because they can only harm the calling process itself and would end the run early (unmapping
its own memory, installing signal handlers at garbage addresses, exiting) or block it forever
(futex waits, pause): `SELF_HARM` names them with the reason. Everything else on the
allowlist is called, so a syscall added to the allowlist is fuzzed without a change here.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# Syscalls that act only on the caller and would crash or hang the fuzzing cell, not reach the
# host: left out of the fuzz, each with why.
SELF_HARM: dict[str, str] = {
    "exit": "ends the calling thread", "exit_group": "ends the worker",
    "rt_sigreturn": "restores a garbage frame", "restart_syscall": "no syscall to restart",
    "munmap": "unmaps the interpreter", "mremap": "moves the interpreter's memory",
    "mprotect": "protects the interpreter's memory", "brk": "moves the heap",
    "madvise": "MADV_DONTNEED zeroes the interpreter's memory",
    "mmap": "MAP_FIXED over the interpreter",
    "close": "closes the channel", "close_range": "closes the channel",
    "dup2": "overwrites the channel", "dup3": "overwrites the channel",
    "set_robust_list": "garbage robust list", "set_tid_address": "garbage tid address",
    "rseq": "garbage rseq area", "sigaltstack": "garbage signal stack",
    "rt_sigaction": "garbage handlers", "rt_sigprocmask": "blocks the worker's signals",
    "setitimer": "SIGALRM ends the worker", "alarm": "SIGALRM ends the worker",
    "timer_create": "signals the worker", "arch_prctl": "moves the TLS base",
    "clone": "a thread on a garbage stack", "clone3": "refused anyway",
    "futex": "may wait forever", "futex_waitv": "may wait forever", "pause": "waits forever",
    "rt_sigsuspend": "waits forever", "rt_sigtimedwait": "waits forever",
    "select": "may wait forever", "pselect6": "may wait forever", "poll": "may wait forever",
    "ppoll": "may wait forever", "epoll_wait": "may wait forever",
    "epoll_pwait": "may wait forever", "epoll_pwait2": "may wait forever",
    "nanosleep": "sleeps", "clock_nanosleep": "sleeps",
    "setrlimit": "acts on the caller only (prlimit64 is fuzzed with pids)",
    "wait4": "may wait for a thread", "waitid": "may wait for a thread",
}

# Argument kinds by syscall (x86_64 and aarch64 share them); a syscall not listed gets
# arguments drawn from every pool. Kinds: P path, F descriptor, D directory descriptor or
# AT_FDCWD, M mode or flags, I small int, B buffer pointer or NULL, W `which` (PRIO_*),
# U pid, O prctl option, S signal, L length, C fcntl command, Q ioctl request, K uid.
SIGNATURES: dict[str, str] = {
    "open": "PMM", "creat": "PM", "openat": "DPMM", "openat2": "DPBL",
    "stat": "PB", "lstat": "PB", "newfstatat": "DPBM", "statx": "DPMMB", "statfs": "PB",
    "access": "PM", "faccessat": "DPM", "faccessat2": "DPMM", "readlink": "PBL",
    "readlinkat": "DPBL", "chdir": "P", "mkdir": "PM", "mkdirat": "DPM", "rmdir": "P",
    "unlink": "P", "unlinkat": "DPM", "rename": "PP", "renameat": "DPDP",
    "renameat2": "DPDPM", "symlink": "PP", "symlinkat": "PDP", "link": "PP",
    "linkat": "DPDPM", "truncate": "PL", "chmod": "PM", "fchmod": "FM", "fchmodat": "DPMM",
    "fchmodat2": "DPMM", "chown": "PKK", "fchown": "FKK", "lchown": "PKK",
    "fchownat": "DPKKM", "utimensat": "DPBM", "utimes": "PB", "utime": "PB",
    "futimesat": "DPB", "getxattr": "PPBL", "lgetxattr": "PPBL", "fgetxattr": "FPBL",
    "listxattr": "PBL", "llistxattr": "PBL", "flistxattr": "FBL",
    "setxattr": "PPBLM", "lsetxattr": "PPBLM", "fsetxattr": "FPBLM",
    "read": "FBL", "write": "FBL", "pread64": "FBLI", "pwrite64": "FBLI", "lseek": "FII",
    "fsync": "F", "fdatasync": "F", "flock": "FM", "ftruncate": "FL", "fallocate": "FMIL",
    "fadvise64": "FIIM", "fchdir": "F", "dup": "F", "fstat": "FB", "fstatfs": "FB",
    "getdents64": "FBL", "getdents": "FBL", "sendfile": "FFBL", "copy_file_range": "FBFBLM",
    "splice": "FBFBLM", "tee": "FFLM", "fcntl": "FCU", "ioctl": "FQB",
    "kill": "US", "tgkill": "UUS", "tkill": "US", "pidfd_open": "UM",
    "prlimit64": "UIBB", "getpriority": "WU", "setpriority": "WUI",
    "sched_setaffinity": "ULB", "sched_getaffinity": "ULB", "sched_getparam": "UB",
    "sched_getscheduler": "U", "ioprio_set": "IUI", "prctl": "OIIII",
    "getpgid": "U", "getsid": "U", "umask": "M", "getrandom": "BLM",
}

PATH_NAMES = ("root_file", "root_dir", "user_file", "user_dir", "setuid_copy", "vault",
              "vault_state", "vault_note", "new_outside", "dev_full", "dev_null",
              "bystander_environ", "bystander_mem", "supervisor_environ", "supervisor_mem",
              "supervisor_stdout", "supervisor_cwd")
_MODES = (0, 0o777, 0o6777, 0o4755, 0o2755, 0o1777, 0o000, 0o644, 2, 0o101, 0o1101, 0o4000)
_INTS = (0, 1, 2, 3, -1, 19, -20, 7, 16, 0x1000)
_LENS = (0, 1, 16, 4096)
_PRCTL = (*range(72), 0x53564D41, 0x59616D61)  # every option, PR_SET_VMA, PTRACER
_SIGNALS = (0, 9, 15, 19)
_FCNTL = (0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 15, 16, 1024, 1025, 1026, 1031, 1033, 37)
_IOCTL = (0x5401, 0x5412, 0x5413, 0x541B, 0x5421, 0x5451, 0x540E, 0x5422, 0x8901, 0x8902)


@dataclass(frozen=True)
class Arg:
    """One argument: a literal int, a path (by name, made a buffer in the cell), a descriptor
    opened on a named path, a pid by role, or a buffer pointer."""

    kind: str  # "int" | "path" | "fd" | "pid" | "buf" | "uid"
    value: int | str

    def spec(self) -> tuple[str, int | str]:
        return (self.kind, self.value)


def _pool(kind: str) -> list[Arg]:
    ints = [Arg("int", v) for v in _INTS]
    if kind == "P":
        return [Arg("path", n) for n in PATH_NAMES]
    if kind == "F":
        return [Arg("fd", n) for n in PATH_NAMES] + [Arg("int", v) for v in (0, 1, 2)]
    if kind == "D":
        return [Arg("int", -100)] + [Arg("fd", n) for n in ("root_dir", "user_dir", "vault")]
    if kind == "M":
        return [Arg("int", v) for v in _MODES]
    if kind == "L":
        return [Arg("int", v) for v in _LENS]
    if kind == "B":
        return [Arg("int", 0), Arg("buf", 0)]
    if kind == "W":
        return [Arg("int", v) for v in (0, 1, 2)]
    if kind == "U":
        return [Arg("pid", r) for r in ("bystander", "supervisor", "test", "init", "group")] \
            + [Arg("int", v) for v in (0, -1)]
    if kind == "O":
        return [Arg("int", v) for v in _PRCTL]
    if kind == "S":
        return [Arg("int", v) for v in _SIGNALS]
    if kind == "C":
        return [Arg("int", v) for v in _FCNTL]
    if kind == "Q":
        return [Arg("int", v) for v in _IOCTL]
    if kind == "K":
        return [Arg("uid", r) for r in ("root", "bystander")] + [Arg("int", -1)]
    if kind == "I":
        return ints
    raise ValueError(kind)


_ANY = "PFDMLBWUOSIK"


def calls(names: Sequence[str], seed: int, per_call: int) -> Iterator[tuple[str, list[Arg]]]:
    """`per_call` argument tuples for each fuzzed name, deterministic in `seed`. For syscalls
    with a signature, the first tuples walk each argument's pool in step (so every value of
    every pool is used at least once), the rest are random draws."""
    rng = random.Random(seed)
    for name in sorted(set(names) - set(SELF_HARM)):
        kinds = SIGNATURES.get(name)
        for i in range(per_call):
            if kinds is None:
                picked = [rng.choice(_pool(rng.choice(_ANY))) for _ in range(6)]
            else:
                pools = [_pool(k) for k in kinds]
                picked = [p[i % len(p)] if i < max(map(len, pools)) else rng.choice(p)
                          for p in pools]
            yield name, picked


CELL = r'''
ct = __import__('ctypes')
_os = __import__('os')
libc = ct.CDLL(None, use_errno=True)
libc.syscall.restype = ct.c_long
PATHS = @PATHS@
PIDS = @PIDS@
UIDS = @UIDS@
_keep = []
_buf = ct.create_string_buffer(4096)
def _path(name):
    b = ct.create_string_buffer(PATHS[name].encode())
    _keep.append(b)
    return ct.addressof(b)
try:
    _fds
except NameError:
    _fds = {}
    for _n, _p in PATHS.items():
        for _fl in (_os.O_RDWR, _os.O_RDONLY, _os.O_PATH):
            try:
                _fds[_n] = _os.open(_p, _fl | _os.O_NONBLOCK | _os.O_NOCTTY)
                break
            except OSError:
                _fds[_n] = -1
def _val(kind, v):
    if kind == 'int': return v
    if kind == 'path': return _path(v)
    if kind == 'fd': return _fds.get(v, -1)
    if kind == 'pid': return PIDS[v]
    if kind == 'uid': return UIDS[v]
    return ct.addressof(_buf)
_made = 0
_allowed = 0
for _nr, _args in @CALLS@:
    _vals = [ct.c_long(_val(k, v)) for k, v in _args]
    _r = libc.syscall(_nr, *_vals)
    _made += 1
    _allowed += ct.get_errno() != 1 if _r < 0 else 1
(_made, _allowed)
'''
