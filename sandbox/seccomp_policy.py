"""The seccomp deny list, compiled on the host into a classic-BPF program for the worker.

The host compiles with pyseccomp (ctypes over libseccomp); the worker loads the raw program
with prctl (see `worker_guard.load_seccomp`), so libseccomp is never needed inside the
sandbox. Default action ALLOW; each listed syscall fails with EPERM (a clean Python
`PermissionError`), except clone3 which fails with ENOSYS so that glibc falls back to clone(2)
for threads, where the flags can be inspected: clone without CLONE_THREAD (fork, posix_spawn,
new namespaces) is EPERM. A syscall from another ABI (i386 `int 0x80`, x32) kills the process.
"""

from __future__ import annotations

import errno
import functools
import tempfile

CLONE_THREAD = 0x00010000

# Grouped by what they would let hostile code do.
DENIED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("network", ("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
                 "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
                 "getsockopt", "setsockopt", "getsockname", "getpeername", "shutdown")),
    ("processes", ("execve", "execveat", "fork", "vfork")),
    ("other processes", ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
                         "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "kill", "tkill",
                         "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "move_pages",
                         "migrate_pages")),
    ("mounts", ("mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
                "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr")),
    ("namespaces", ("unshare", "setns")),
    ("kernel attack surface", ("bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
                               "io_uring_enter", "io_uring_register", "keyctl", "add_key",
                               "request_key", "open_by_handle_at", "name_to_handle_at",
                               "fanotify_init", "syslog", "personality", "quotactl",
                               "lookup_dcookie", "acct", "swapon", "swapoff", "vhangup")),
    ("kernel modules and power", ("init_module", "finit_module", "delete_module", "reboot",
                                  "kexec_load", "kexec_file_load")),
    ("memory outside rlimits", ("memfd_create", "memfd_secret", "shmget", "shmat", "msgget",
                                "semget", "mq_open")),
)


def denied_names() -> tuple[str, ...]:
    """Every syscall name on the deny list, plus clone (conditional) and clone3 (ENOSYS)."""
    return (*tuple(n for _, names in DENIED for n in names), "clone", "clone3")


@functools.cache
def compile_bpf() -> bytes:
    """The deny list as a BPF program for this machine's native architecture.

    Raises ImportError/OSError when libseccomp is unavailable. Syscall names the native
    architecture does not have are skipped (they cannot be called).
    """
    import pyseccomp as sc

    filt = sc.SyscallFilter(sc.ALLOW)
    filt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    eperm = sc.ERRNO(errno.EPERM)
    for _, names in DENIED:
        for name in names:
            try:
                filt.add_rule(eperm, name)
            except (OSError, ValueError):
                continue
    filt.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        filt.export_bpf(out)
        out.seek(0)
        program: bytes = out.read()
    return program
