"""The worker's seccomp policy: an ALLOWLIST, compiled on the host into classic BPF.

Model: Docker's default profile (moby/profiles/seccomp/default.json) and gVisor's host-syscall
filters (runsc/fsgofer/filter): allow what an unprivileged interpreter needs, refuse the rest.
Default action ERRNO(EPERM), so anything unlisted is a clean Python `PermissionError`; a
syscall from another ABI (i386 `int 0x80`, x32) kills the process. Derived empirically:
`strace -f` over the worker running tests/sandbox (interpreter start-up after the filter, the
host-function stubs, threads, the stdlib modules the cells import), then trimmed to what the
REPL needs: each allowed syscall has one line below saying why. Nothing changes a file's
metadata (no chmod, chown, utime*, xattr: Landlock has no hook for those), takes a lock
(flock, F_SETLK*: the vault's lock file must never wait on a worker) or acts on any process
but the worker, or makes a pipe or an epoll watch (the kernel charges both to the uid's
share, fs.pipe-user-pages-soft and fs.epoll.max_user_watches, which every process of that uid
shares: see `NEVER`); the whole suite
runs with this filter on every tier.

Arguments are constrained where the kernel lets a filter see them (seccomp(2) sees only
register values, never memory, so a pid is checked but a path is not):
- signals only to the worker itself: kill(pid) with pid == own pid (not 0 or -1: a process group
  is not "itself"); tgkill(tgid, ...) with tgid == own pid; tkill, rt_sigqueueinfo, pidfd_* none;
- resource limits only on itself: prlimit64(pid == 0) (setrlimit/getrlimit act on the caller);
  setpriority/getpriority(PRIO_PROCESS, who == 0) (PRIO_USER with who 0 is every process of
  the uid); sched_getaffinity/sched_setaffinity(pid == 0); getpgid/getsid(pid == 0) (another
  pid's answer, or ESRCH, would say which host pids exist);
- prctl only with the options in `PRCTL_OPTIONS` (never PR_SET_PDEATHSIG: the worker dies
  with its supervisor; never PR_SET_DUMPABLE or PR_SET_SECCOMP);
- fcntl only with the commands in `FCNTL_COMMANDS` (no F_SETOWN, F_SETOWN_EX, F_SETSIG,
  F_SETLEASE, F_NOTIFY: no SIGIO aimed at another process); ioctl only with `IOCTL_REQUESTS`
  (no FIOSETOWN/SIOCSPGRP, no TIOCSTI);
- clocks only the fixed ones (`FIXED_CLOCKS`: never another process's CPU clock);
- futex only with the operations in `FUTEX_OPS` (no priority-inheritance futex: it looks up
  a task by the pid in the futex word), and only FUTEX_PRIVATE_FLAG ones (a shared futex on a
  file page is keyed on the file, so it reached other processes' waiters: see `FUTEX_OPS`);
- madvise only with the advice in `MADVISE_ADVICE` (no KSM merging, no forced page-out);
- mmap never with MAP_HUGETLB: huge pages come from the machine's one pool (vm.nr_hugepages,
  reserved for databases, VMs, DPDK), reserved at mmap time and held across cells: one cell
  took all 16 of a pool and a host process got ENOMEM (SBX12);
- clone only for threads (CLONE_THREAD set, no CLONE_NEW* flag); clone3 fails with ENOSYS so
  glibc falls back to clone(2), whose flags are visible.
On the seccomp-only tier (no Landlock, no bwrap: only its private root confines the files) the
program is compiled `read_only`: open/openat only without O_WRONLY, O_RDWR, O_CREAT, O_TRUNC and
O_APPEND (the flags are a register), and none of `WRITE_NAMES` (mkdir, rmdir, unlink, rename):
the worker writes no file at all, only the descriptors it was given (the channel, stdout and
stderr). What it reads is its private root (registry.py says what that holds).
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
MAP_HUGETLB = 0x40000  # mmap(2) flags (x86_64 and aarch64)
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (clone(2)).
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 \
    | 0x40000000
PRIO_PROCESS = 0
# open(2) flags that write or create (O_TMPFILE includes O_DIRECTORY and needs a write mode).
O_WRITING = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND

# Allowed without argument checks: syscall -> why the REPL needs it (one line each).
ALLOWED: dict[str, str] = {
    "read": "the channel and the files it may open",
    "write": "the channel, stdout/stderr, scratch files",
    "readv": "buffered reads of the stdlib",
    "writev": "buffered writes of the stdlib",
    "pread64": "zipimport and os.pread on open files",
    "pwrite64": "os.pwrite on scratch files",
    "close": "closing its own descriptors",
    "close_range": "os.closerange",
    "dup": "io and os.dup on its own descriptors",
    "dup2": "os.dup2 on its own descriptors",
    "dup3": "os.dup2(inheritable=False)",
    "lseek": "file.seek / tell",
    "sendfile": "shutil.copyfile between scratch files",
    "fsync": "os.fsync of scratch files",
    "fdatasync": "os.fdatasync of scratch files",
    "ftruncate": "file.truncate on a scratch file it opened for writing",
    "openat": "open() (Landlock or bwrap confine the paths; glibc's open is openat)",
    "open": "open() from libcs that still call the legacy syscall",
    "stat": "os.stat from libcs that still call the legacy syscall",
    "lstat": "os.lstat from libcs that still call the legacy syscall",
    "access": "os.access (glibc calls access(2) where the architecture has it)",
    "newfstatat": "os.stat / lstat (glibc's stat)",
    "fstat": "os.fstat, io's buffer sizing",
    "statx": "os.stat on newer glibc",
    "faccessat": "os.access",
    "faccessat2": "os.access on newer glibc",
    "readlink": "os.path.realpath, os.readlink",
    "readlinkat": "os.readlink(dir_fd=)",
    "getdents64": "os.listdir / scandir",
    "getcwd": "os.getcwd",
    "chdir": "os.chdir (its working directory only)",
    "fchdir": "os.chdir(fd)",
    "mkdir": "tempfile.mkdtemp in scratch",
    "mkdirat": "os.mkdir(dir_fd=)",
    "rmdir": "shutil.rmtree in scratch",
    "unlink": "os.remove in scratch",
    "unlinkat": "os.remove(dir_fd=), shutil.rmtree",
    "rename": "os.rename in scratch",
    "renameat": "os.rename(src_dir_fd=)",
    "renameat2": "os.replace on newer glibc",
    "brk": "malloc (bounded by RLIMIT_AS)",
    "munmap": "free() of large blocks and of thread stacks",
    "mremap": "realloc of large blocks",
    "mprotect": "the dynamic loader, thread stacks' guard pages",
    "set_robust_list": "thread start (glibc)",
    "set_tid_address": "thread start (glibc)",
    "rseq": "thread start (glibc >= 2.35)",
    "sched_yield": "lock back-off",
    "exit": "a thread ends",
    "exit_group": "the worker ends",
    "restart_syscall": "a sleep interrupted by a signal resumes",
    "select": "select.select",
    "pselect6": "select.select on newer glibc",
    "poll": "select.poll",
    "ppoll": "select.poll on newer glibc",
    "rt_sigaction": "signal.signal (its own handlers)",
    "rt_sigprocmask": "signal.pthread_sigmask, thread start",
    "rt_sigreturn": "return from its own signal handlers",
    "rt_sigpending": "signal.sigpending",
    "rt_sigsuspend": "signal.pause on newer glibc",
    "rt_sigtimedwait": "signal.sigwait / sigtimedwait",
    "sigaltstack": "faulthandler-style stacks",
    "pause": "signal.pause",
    "alarm": "signal.alarm (its own SIGALRM)",
    "getitimer": "signal.getitimer",
    "setitimer": "signal.setitimer (its own timers)",
    "nanosleep": "time.sleep on older glibc",
    "gettimeofday": "time.time on older glibc",
    "time": "time(2) from C code",
    "times": "os.times",
    "getpid": "os.getpid",
    "gettid": "threading.get_native_id",
    "getppid": "os.getppid (the worker checks its supervisor is alive)",
    "getuid": "os.getuid",
    "geteuid": "os.geteuid",
    "getgid": "os.getgid",
    "getegid": "os.getegid",
    "getgroups": "os.getgroups",
    "getresuid": "os.getresuid",
    "getresgid": "os.getresgid",
    "getpgrp": "os.getpgrp",
    "getrusage": "resource.getrusage",
    "getrlimit": "resource.getrlimit",
    "setrlimit": "resource.setrlimit of itself (lowering; raising needs a capability)",
    "uname": "platform, os.uname",
    "sysinfo": "os.sysconf('SC_PHYS_PAGES') through glibc",
    "getrandom": "os.urandom, random, hash seeds",
    "getcpu": "sched_getcpu from C code",
    "arch_prctl": "glibc's thread-local storage and CET set-up",
}

# Left out of a `read_only` program (the seccomp-only tier): they change the file system.
WRITE_NAMES = ("mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
               "renameat2")

# Allowed only with the argument checks of `compile_bpf`: syscall -> why, and the check.
FILTERED: dict[str, str] = {
    "kill": "os.kill of itself only (pid == own pid)",
    "tgkill": "signals to its own threads only (tgid == own pid)",
    "prlimit64": "resource.prlimit of itself only (pid == 0)",
    "getpriority": "os.getpriority of itself only (PRIO_PROCESS, who == 0)",
    "setpriority": "os.setpriority of itself only (PRIO_PROCESS, who == 0)",
    "sched_getaffinity": "os.sched_getaffinity / cpu_count of itself only (pid == 0)",
    "getpgid": "os.getpgid of itself only (pid == 0: another pid would say it exists)",
    "getsid": "os.getsid of itself only (pid == 0)",
    "sched_setaffinity": "os.sched_setaffinity of itself only (pid == 0)",
    "fcntl": "the commands in FCNTL_COMMANDS only",
    "ioctl": "the requests in IOCTL_REQUESTS only",
    "clone": "threads only (CLONE_THREAD, no CLONE_NEW* flag)",
    "futex": "locks, conditions, joins: FUTEX_OPS, private only (no PI, no shared futex)",
    "clock_gettime": "time.time / monotonic / process_time: fixed clocks only (id < 16)",
    "clock_getres": "time.get_clock_info: fixed clocks only (id < 16)",
    "clock_nanosleep": "time.sleep: fixed clocks only (id < 16)",
    "prctl": "the options in PRCTL_OPTIONS only",
    "madvise": "free of large blocks (MADV_DONTNEED), thread stacks: MADVISE_ADVICE only",
    "mmap": "malloc, ctypes, extension modules (bounded by RLIMIT_AS): never MAP_HUGETLB",
}

# fcntl(2) commands: F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC, F_GETPIPE_SZ.
# No lock command (F_SETLK, F_SETLKW, F_OFD_SETLK*; flock(2) is not allowed either): a
# worker must never hold a lock a vault file or its advisory lock file could wait on. No
# F_SETOWN/F_SETSIG/F_SETLEASE/F_NOTIFY: no SIGIO aimed at another process.
FCNTL_COMMANDS = (0, 1, 2, 3, 4, 1030, 1032)
# futex(2) operations (the op's low bits; FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME may be
# set): WAIT, WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAIT_BITSET, WAKE_BITSET, what glibc's
# locks, conditions, semaphores and joins use. No priority-inheritance operation (LOCK_PI,
# UNLOCK_PI, TRYLOCK_PI, WAIT_REQUEUE_PI, CMP_REQUEUE_PI, LOCK_PI2): they look up the task
# whose pid is in the futex word, so ESRCH or not said which host pids exist (every one, in
# 0.15 s, from a Landlock-tier cell), and LOCK_PI lends the waiter's priority to that task.
# Each only with FUTEX_PRIVATE_FLAG (its word is then keyed on the worker's own memory): a
# shared futex on a page of a file is keyed on the file, whoever maps it, and a read-only
# MAP_PRIVATE view of a file is enough, so a seccomp-tier cell that could read a file another
# process waits on (a process-shared lock: a POSIX semaphore, LMDB's lock.mdb) woke that
# process's waiters, requeued them onto a word of its own (their real wake-up then went to
# nobody: the process hung) and could take their wake-ups with waiters of its own. A shared
# WAIT or WAIT_BITSET gets EAGAIN (the word changed: every futex user checks it again, so
# glibc's pthread_join, which waits shared on the thread's tid, polls instead of sleeping);
# the other shared operations EPERM. CPython's locks, conditions and joins are all private.
# The kernel still makes one shared WAKE of its own as a thread exits (at its clear_child_tid
# address, set by set_tid_address or clone's child_tid, even where it cannot write; and at its
# robust list's pending entry): a cell woke one host waiter per exiting thread (SBX12). No
# filter can see those addresses, so the private root (no file a host process waits on) is
# what bounds this: only files of the interpreter and the library folders can be mapped.
FUTEX_OPS = (0, 1, 3, 4, 5, 9, 10)
FUTEX_WAITS = (0, 9)  # WAIT, WAIT_BITSET
FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME = 128, 256
# clock_gettime, clock_getres and clock_nanosleep take only the fixed clocks (REALTIME,
# MONOTONIC, PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID, BOOTTIME, TAI, ...: ids 0 to 15). A
# negative id names the CPU clock of a pid ((~pid << 3) | 2, clock_getcpuclockid(3)), which
# the kernel reads for any process it can see, with no permission check: a cell read the
# supervisor's CPU time and listed every host pid (EINVAL for none).
FIXED_CLOCKS = 16
# madvise(2) advice: NORMAL, RANDOM, SEQUENTIAL, WILLNEED, DONTNEED, FREE, REMOVE, DONTFORK,
# DOFORK, HUGEPAGE, NOHUGEPAGE, DONTDUMP, DODUMP, WIPEONFORK, KEEPONFORK, COLD, POPULATE_READ,
# POPULATE_WRITE, DONTNEED_LOCKED, GUARD_INSTALL, GUARD_REMOVE: what allocators and thread
# stacks use, on the worker's own memory. Never MERGEABLE/UNMERGEABLE (its pages would join the
# host's KSM, whose merge timing tells a cell which page contents exist in other processes'
# mergeable memory: virtual machines' on a host running KSM), PAGEOUT (host swap I/O at the
# cell's will), COLLAPSE, HWPOISON, SOFT_OFFLINE.
MADVISE_ADVICE = (0, 1, 2, 3, 4, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 102, 103)
# ioctl(2) requests: TCGETS (isatty), TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX.
IOCTL_REQUESTS = (0x5401, 0x5413, 0x541B, 0x5421, 0x5451, 0x5450)
# prctl(2) options: PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_NAME / PR_GET_NAME (thread
# names), PR_GET_SECCOMP, PR_CAPBSET_READ, PR_GET_NO_NEW_PRIVS, PR_SET_VMA (glibc names its
# anonymous mappings). Never PR_SET_PDEATHSIG (the worker must die with its supervisor),
# PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_PTRACER, PR_SET_CHILD_SUBREAPER, PR_SET_MM, ...
PRCTL_OPTIONS = (2, 3, 15, 16, 21, 23, 39, 0x53564D41)

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
    # pipes: each one's 16 pages are charged to the creator's real uid (any user namespace),
    # and past fs.pipe-user-pages-soft every new pipe of that uid gets 2 pages: a cell's 125
    # pipes were 2,000 pages, nine sessions' shrank every other pipe of the uid (root's
    # rmh-sandbox machine-wide, or every process of an unprivileged user) to 8 KiB
    "pipe", "pipe2",
    # epoll: each watch is charged to the creator's real uid (fs.epoll.max_user_watches,
    # 4% of RAM's worth, any user namespace); a cell's watchers x leaf epolls x re-pointed
    # descriptors held 81**3 = 531,441 at the default open_files (~70 MB of kernel memory
    # outside RLIMIT_AS), so 11 sessions left every process of the uid ENOSPC (SBX11);
    # selectors.DefaultSelector falls back to poll when epoll is refused
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_wait",
    "epoll_wait_old", "epoll_pwait", "epoll_pwait2",
    # metadata of files: Landlock has no hook for it, and the worker owns nothing it needs
    # to change (a chmod or utime of a host file, or chmod 000 of VAULT/.rmh, was an escape)
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr",
    "removexattr", "lremovexattr", "fremovexattr", "mknod", "mknodat",
    # locks a vault file or its advisory lock file could wait on; another task's state
    "flock", "get_robust_list", "mincore", "link", "linkat",
)


def allowed_names() -> tuple[str, ...]:
    """Every syscall the worker may make (unconditionally or with checked arguments)."""
    return (*ALLOWED, *FILTERED)


def denied_names() -> tuple[str, ...]:
    """Syscalls refused by name: `NEVER` (everything else unlisted is refused too), plus clone
    (refused unless it makes a thread) and clone3 (ENOSYS)."""
    return (*NEVER, "clone", "clone3")


@functools.lru_cache(maxsize=16)  # a few live workers' programs; one per pid ever grew rmh
def compile_bpf(pid: int, read_only: bool = False) -> bytes:
    """The allowlist as a BPF program for this machine's architecture, for a worker whose
    own pid (as it sees it) is `pid`; `read_only`: no file is opened for writing, created,
    removed or renamed (module docstring). Raises ImportError/OSError without libseccomp.
    Names the native architecture lacks are skipped (they cannot be called)."""
    import pyseccomp as sc

    filt = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
    filt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    allow = sc.ALLOW

    def rule(name: str, *args: object) -> None:
        with contextlib.suppress(OSError, ValueError):  # not a syscall of this architecture
            filt.add_rule(allow, name, *args)

    opening = ("open", "openat") if read_only else ()
    for name in ALLOWED:
        if name not in opening and not (read_only and name in WRITE_NAMES):
            rule(name)
    if read_only:
        rule("open", sc.Arg(1, sc.MASKED_EQ, O_WRITING, 0))
        rule("openat", sc.Arg(2, sc.MASKED_EQ, O_WRITING, 0))
    rule("kill", sc.Arg(0, sc.EQ, pid))
    rule("prlimit64", sc.Arg(0, sc.EQ, 0))
    rule("tgkill", sc.Arg(0, sc.EQ, pid))
    for name in ("getpriority", "setpriority"):  # PRIO_USER/PGRP with who 0: many processes
        rule(name, sc.Arg(0, sc.EQ, PRIO_PROCESS), sc.Arg(1, sc.EQ, 0))
    for name in ("sched_getaffinity", "sched_setaffinity", "getpgid", "getsid"):
        rule(name, sc.Arg(0, sc.EQ, 0))
    for cmd in FCNTL_COMMANDS:
        rule("fcntl", sc.Arg(1, sc.EQ, cmd))
    for name in ("clock_gettime", "clock_getres", "clock_nanosleep"):
        rule(name, sc.Arg(0, sc.LT, FIXED_CLOCKS))  # unsigned 64-bit: a negative id is huge
    futex_op = 0xFFFFFFFF & ~FUTEX_CLOCK_REALTIME  # the low 32 bits (an int), that flag or not
    for op in FUTEX_OPS:
        rule("futex", sc.Arg(1, sc.MASKED_EQ, futex_op, op | FUTEX_PRIVATE_FLAG))
    for op in FUTEX_WAITS:  # shared: never queued on a file's word (FUTEX_OPS)
        filt.add_rule(sc.ERRNO(errno.EAGAIN), "futex", sc.Arg(1, sc.MASKED_EQ, futex_op, op))
    for advice in MADVISE_ADVICE:
        rule("madvise", sc.Arg(2, sc.MASKED_EQ, 0xFFFFFFFF, advice))  # an int
    for request in IOCTL_REQUESTS:
        rule("ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    for option in PRCTL_OPTIONS:
        rule("prctl", sc.Arg(0, sc.EQ, option))
    rule("mmap", sc.Arg(3, sc.MASKED_EQ, MAP_HUGETLB, 0))
    rule("clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD | CLONE_NEW_ANY, CLONE_THREAD))
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        filt.export_bpf(out)
        out.seek(0)
        program: bytes = out.read()
    return program
