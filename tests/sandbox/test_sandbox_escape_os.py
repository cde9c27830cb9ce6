"""Escape suite, cases 10-17: secrets, writes outside, mounts, network, the supervisor,
processes and memory. Run per real tier with the lint pass off; invariants via `run_attack`."""

from __future__ import annotations

import os
import sys
import sysconfig

from .conftest import Host, run_attack

_ATTEMPT = """
    def attempt(fn):
        try:
            return "OK " + repr(fn())[:80]
        except BaseException as exc:
            return type(exc).__name__
"""


def test_case10_read_secrets(host: Host) -> None:
    res = run_attack(host, _ATTEMPT + """
    import os
    print("shadow", attempt(lambda: open("/etc/shadow").read()))
    print("ssh", attempt(lambda: os.listdir("/root/.ssh")))
    print("pid1", attempt(lambda: open("/proc/1/environ", "rb").read()))
    print("sup", attempt(lambda: open("/proc/@SUPPID@/environ", "rb").read()))
    print("vault", attempt(lambda: os.listdir("@VAULT@")))
    dict(os.environ)
    """)
    assert res.ok and res.value == "{}"
    for name in ("shadow", "ssh", "pid1", "sup", "vault"):
        line = next(x for x in res.stdout.splitlines() if x.startswith(name + " "))
        assert " OK " not in f" {line} ", line


def test_case11_write_outside(host: Host) -> None:
    site = sysconfig.get_paths()["purelib"]
    stdlib = os.path.dirname(os.__file__)
    base_site = os.path.join(sys.base_prefix, os.path.relpath(site, sys.prefix))
    existed = os.path.exists(os.path.join(stdlib, "sitecustomize.py"))
    targets = ["@ESC@-tmp", f"{site}/@NAME@.pth", f"{base_site}/@NAME@.pth",
               f"{stdlib}/sitecustomize.py", "@VAULT@/home.md", "@VAULT@/new.md",
               "/opt/python/lib/x.pth"]
    name = os.path.basename(host.marker)
    cell = _ATTEMPT + "\n    import sys, os\n" + "".join(
        f"    print({t!r}, attempt(lambda: open({t!r}, 'a').write('import os')))\n"
        for t in targets) + "    print('self', attempt(lambda: open(os.__file__, 'a')))\n"
    res = run_attack(host, cell.replace("@NAME@", name))
    assert res.ok, res.to_json()
    for line in res.stdout.splitlines():
        if not line.startswith("/tmp"):  # bwrap: /tmp is the sandbox's own tmpfs
            assert " OK " not in f" {line} ", line
    for t in targets[1:3]:
        assert not os.path.exists(t.replace("@NAME@", name))
    assert os.path.exists(os.path.join(stdlib, "sitecustomize.py")) == existed


def test_case13_remount_chroot_pivot_userns(host: Host) -> None:
    res = run_attack(host, """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    r = {}
    r["remount"] = libc.mount(None, b"/", None, 32 | 1, None)  # MS_REMOUNT | MS_RDONLY flip
    r["bind"] = libc.mount(b"/", b"/tmp", None, 4096, None)
    r["chroot"] = libc.chroot(b"/tmp")
    r["pivot"] = libc.syscall(155, b"/tmp", b"/tmp")
    r["userns"] = libc.unshare(0x10000000)
    r["netns"] = libc.unshare(0x40000000)
    print(sorted(r.items()))
    r
    """)
    assert res.ok and res.value is not None
    assert "0" not in [v.strip() for v in res.value.strip("{}").split(",") if ":" not in v]
    assert ": 0" not in res.value, res.value


def test_case14_network(host: Host) -> None:
    res = run_attack(host, _ATTEMPT + """
    import socket
    out = {
        "tcp": attempt(lambda: socket.create_connection(("127.0.0.1", @PORT@), 1)),
        "udp": attempt(lambda: socket.socket(2, 2).sendto(b"x", ("127.0.0.1", @UPORT@))),
        "public": attempt(lambda: socket.create_connection(("1.1.1.1", 53), 1)),
        "dns": attempt(lambda: socket.getaddrinfo("example.com", 80)),
        "docker": attempt(lambda: socket.socket(socket.AF_UNIX).connect("/var/run/docker.sock")),
        "abstract": attempt(lambda: socket.socket(socket.AF_UNIX).connect("\\0rmh")),
        "pair": attempt(lambda: socket.socketpair()),
        "raw": attempt(lambda: socket.socket(2, socket.SOCK_RAW, 1)),
        "netlink": attempt(lambda: socket.socket(16, 3, 0)),
    }
    out
    """)
    assert res.ok and res.value is not None
    assert "OK" not in res.value, res.value


def test_case15_reach_the_supervisor(host: Host) -> None:
    res = run_attack(host, _ATTEMPT + """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    out = {
        "setns": libc.setns(0, 0),
        "ptrace": libc.ptrace(16, @SUPPID@, None, None),
        "vm_readv": libc.process_vm_readv(@SUPPID@, None, 0, None, 0, 0),
        "kill_parent": attempt(lambda: os.kill(os.getppid(), 9)),
        "kill_sup": attempt(lambda: os.kill(@SUPPID@, 9)),
        "killpg": attempt(lambda: os.killpg(0, 9)),
        "kill_all": attempt(lambda: os.kill(-1, 9)),
    }
    out
    """)
    assert res.ok and res.value is not None, res.to_json()
    assert "OK" not in res.value and ": 0" not in res.value, res.value


def test_case16_processes_and_threads(host: Host) -> None:
    res = run_attack(host, _ATTEMPT + """
    import os, subprocess, pty, multiprocessing
    def bomb():
        while True:
            os.fork()
    out = {
        "fork_bomb": attempt(bomb),
        "system": attempt(lambda: os.system("touch @ESC@-system")),
        "subprocess": attempt(lambda: subprocess.run(["/bin/true"])),
        "posix_spawn": attempt(lambda: os.posix_spawn("/bin/true", ["true"], {})),
        "pty": attempt(lambda: pty.spawn("/bin/true")),
        "mp": attempt(lambda: multiprocessing.Process(target=print).start()),
    }
    out
    """)
    assert res.ok and res.value is not None, res.to_json()
    assert "'OK" not in res.value.replace("'system': 'OK", ""), res.value
    assert "'system': 'OK 0'" not in res.value
    res = run_attack(host, """
    import threading, time
    started = []
    try:
        for _ in range(100000):
            t = threading.Thread(target=time.sleep, args=(0.2,))
            t.start()
            started.append(t)
    except BaseException as exc:
        print("stopped", len(started), type(exc).__name__)
    """)
    # Either thread creation failed before 100,000 or the worker was replaced.
    assert "stopped" in res.stdout or res.state_lost, res.to_json()


def test_case17_memory(host: Host) -> None:
    cells = ["bytearray(10**11)", "'a' * 10**10",
             "def grow():\n        l = []\n        while True:\n            l.append(' ' * 10**6)\n"
             "    grow()", "def f(n):\n        return f(n + 1)\n    f(0)"]
    for cell in cells:
        res = run_attack(host, "\n    " + cell + "\n")
        assert res.error is not None and res.error.type in ("MemoryError", "RecursionError")
    res = run_attack(host, "x = 10**10**8", deadline_s=1.0)
    assert res.error is not None and res.error.type in ("DeadlineExceeded", "MemoryError")
    res = run_attack(host, """
    import sys
    sys.setrecursionlimit(10**7)
    def f(n):
        return f(n + 1)
    f(0)
    """, deadline_s=2.0)
    assert res.error is not None
    assert res.error.type in ("WorkerCrashed", "RecursionError", "MemoryError",
                              "DeadlineExceeded")
