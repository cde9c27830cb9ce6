"""The worker's seccomp policy: an ALLOWLIST, compiled on the host into classic BPF.

Model: Docker's default profile (moby/profiles/seccomp/default.json) and gVisor's host-syscall
filters (runsc/fsgofer/filter): allow what an unprivileged interpreter needs, refuse the rest.
Default action ERRNO(EPERM), so anything unlisted is a clean Python `PermissionError`; a
syscall from another ABI (i386 `int 0x80`, x32) kills the process. Derived empirically:
`strace -f` over the worker running tests/sandbox (interpreter start-up after the filter, the
host-function stubs, threads, the stdlib modules the cells import), then trimmed to the
groups below; the whole suite runs with this filter on every tier.

Arguments are constrained where the kernel lets a filter see them (seccomp(2) sees only
register values, never memory, so a pid is checked but a path is not):
- signals only to the worker itself: kill(pid) with pid == own pid (not 0 or -1: a process group
  is not "itself"); tgkill(tgid, ...) with tgid == own pid; tkill, rt_sigqueueinfo, pidfd_* none;
- resource limits only on itself: prlimit64(pid == 0) (setrlimit/getrlimit act on the caller);
  setpriority/getpriority(who == 0); sched_getaffinity/sched_setaffinity(pid == 0);
- fcntl only with the commands in `FCNTL_COMMANDS` (no F_SETOWN, F_SETOWN_EX, F_SETSIG,
  F_SETLEASE, F_NOTIFY: no SIGIO aimed at another process); ioctl only with `IOCTL_REQUESTS`
  (no FIOSETOWN/SIOCSPGRP, no TIOCSTI);
- clone only for threads (CLONE_THREAD set, no CLONE_NEW* flag); clone3 fails with ENOSYS so
  glibc falls back to clone(2), whose flags are visible.
The worker's pid is known only once it runs (inside bwrap it is in a PID namespace), so the
host compiles the program for the pid the worker reports in its hello frame, before any user
code exists (`compile_bpf(pid)`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import tempfile

CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (clone(2)).
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 \
    | 0x40000000

# Allowed without argument checks, grouped by what the interpreter uses them for.
ALLOWED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("file descriptors", ("read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
                          "pwritev", "preadv2", "pwritev2", "close", "close_range", "dup",
                          "dup2", "dup3", "pipe", "pipe2", "lseek", "sendfile",
                          "copy_file_range", "splice", "tee", "fsync", "fdatasync", "flock",
                          "ftruncate", "fallocate", "fadvise64")),
    ("paths (Landlock or bwrap confine them)", (
        "open", "openat", "openat2", "creat", "stat", "fstat", "lstat", "newfstatat", "statx",
        "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
        "getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir",
        "unlink", "unlinkat", "rename", "renameat", "renameat2", "symlink", "symlinkat",
        "link", "linkat", "truncate", "chmod", "fchmod", "fchmodat", "umask", "utimensat",
        "utimes", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr",
        "flistxattr")),
    ("memory (bounded by RLIMIT_AS)", ("brk", "mmap", "munmap", "mremap", "mprotect",
                                       "madvise", "msync", "mincore", "membarrier")),
    ("threads and waiting", ("futex", "futex_waitv", "set_robust_list", "get_robust_list",
                             "set_tid_address", "rseq", "sched_yield", "exit", "exit_group",
                             "restart_syscall", "select", "pselect6", "poll", "ppoll",
                             "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
                             "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
                             "wait4", "waitid", "sched_getparam", "sched_getscheduler",
                             "sched_get_priority_max", "sched_get_priority_min")),
    ("own signals", ("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
                     "rt_sigsuspend", "rt_sigtimedwait", "sigaltstack", "pause", "alarm",
                     "getitimer", "setitimer", "signalfd", "signalfd4")),
    ("time", ("clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday",
              "time", "times", "timerfd_create", "timerfd_settime", "timerfd_gettime")),
    ("identity and limits of itself", (
        "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
        "getresuid", "getresgid", "getpgrp", "getpgid", "getsid", "getrusage", "getrlimit",
        "setrlimit", "uname", "sysinfo", "getrandom", "getcpu", "capget", "arch_prctl",
        "prctl")),
)

# fcntl(2) commands the stdlib uses: F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK,
# F_SETLK, F_SETLKW, F_GETOWN, F_GETSIG, F_OFD_GETLK/SETLK/SETLKW, F_GETLEASE,
# F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS.
FCNTL_COMMANDS = (0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 36, 37, 38, 1025, 1030, 1031, 1032, 1033,
                  1034)
# ioctl(2) requests: TCGETS (isatty), TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX.
IOCTL_REQUESTS = (0x5401, 0x5413, 0x541B, 0x5421, 0x5451, 0x5450)

# Never allowed, named so the tests can check the allowlist does not drift into them.
NEVER: tuple[str, ...] = (
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
    "recvfrom", "sendmsg", "recvmsg", "execve", "execveat", "fork", "vfork", "ptrace",
    "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "move_pages",
    "migrate_pages", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", "bpf",
    "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key", "open_by_handle_at", "name_to_handle_at",
    "fanotify_init", "syslog", "personality", "quotactl", "acct", "swapon", "swapoff",
    "init_module", "finit_module", "delete_module", "reboot", "kexec_load", "kexec_file_load",
    "memfd_create", "memfd_secret", "shmget", "shmat", "msgget", "semget", "mq_open",
    "ioprio_set", "sched_setscheduler", "sched_setparam", "sched_setattr", "setpgid",
    "setsid", "setuid", "setgid", "setreuid", "setresuid", "setgroups", "capset",
    "inotify_init1", "fanotify_mark", "mbind", "set_mempolicy",
)


def allowed_names() -> tuple[str, ...]:
    """Every syscall the worker may make (unconditionally or with checked arguments)."""
    conditional = ("kill", "tgkill", "prlimit64", "getpriority", "setpriority",
                   "sched_getaffinity", "sched_setaffinity", "fcntl", "ioctl", "clone")
    return (*tuple(n for _, names in ALLOWED for n in names), *conditional)


def denied_names() -> tuple[str, ...]:
    """Syscalls refused by name: `NEVER` (everything else unlisted is refused too), plus clone
    (refused unless it makes a thread) and clone3 (ENOSYS)."""
    return (*NEVER, "clone", "clone3")


@functools.cache
def compile_bpf(pid: int) -> bytes:
    """The allowlist as a BPF program for this machine's architecture, for a worker whose
    own pid (as it sees it) is `pid`. Raises ImportError/OSError without libseccomp. Names
    the native architecture lacks are skipped (they cannot be called)."""
    import pyseccomp as sc

    filt = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
    filt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    allow = sc.ALLOW

    def rule(name: str, *args: object) -> None:
        with contextlib.suppress(OSError, ValueError):  # not a syscall of this architecture
            filt.add_rule(allow, name, *args)

    for _, names in ALLOWED:
        for name in names:
            rule(name)
    rule("kill", sc.Arg(0, sc.EQ, pid))
    rule("prlimit64", sc.Arg(0, sc.EQ, 0))
    rule("tgkill", sc.Arg(0, sc.EQ, pid))
    for name in ("getpriority", "setpriority"):
        rule(name, sc.Arg(1, sc.EQ, 0))
    for name in ("sched_getaffinity", "sched_setaffinity"):
        rule(name, sc.Arg(0, sc.EQ, 0))
    for cmd in FCNTL_COMMANDS:
        rule("fcntl", sc.Arg(1, sc.EQ, cmd))
    for request in IOCTL_REQUESTS:
        rule("ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    rule("clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD | CLONE_NEW_ANY, CLONE_THREAD))
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        filt.export_bpf(out)
        out.seek(0)
        program: bytes = out.read()
    return program
