"""Escape suite, cases 1-9: reaching os/builtins from inside Python, crashes, hostile values.

Each case runs per real tier (bwrap+seccomp, landlock+seccomp, seccomp) with the lint pass
off; the invariants I1-I6 are checked by `run_attack` after every cell.
"""

from __future__ import annotations

from .conftest import Host, run_attack
from .escape_payload import EFFECTS, assert_denied


def test_case01_subclasses_walk_to_os_system(host: Host) -> None:
    res = run_attack(host, EFFECTS + """
    found = None
    for c in ().__class__.__base__.__subclasses__():
        g = getattr(getattr(c, "__init__", None), "__globals__", None)
        if isinstance(g, dict) and callable(g.get("system")):
            found = g
            break
    print("found", found is not None)
    rc = found["system"]("touch @ESC@-walk; echo pwned > @CANARY@")
    print("rc", rc)
    _effects(__import__("os"), __import__)
    """)
    assert "found True" in res.stdout and "rc 0" not in res.stdout
    assert_denied(res.stdout)


def test_case02_subclasses_walk_to_popen(host: Host) -> None:
    res = run_attack(host, """
    import subprocess
    popen = [c for c in object.__subclasses__() if c.__name__ == "Popen"][0]
    popen(["/bin/sh", "-c", "touch @ESC@-popen"])
    """)
    assert not res.ok and res.error is not None
    assert res.error.type in ("PermissionError", "FileNotFoundError", "OSError")


def test_case03_traceback_and_context_walks(host: Host) -> None:
    res = run_attack(host, EFFECTS + """
    try:
        1 / 0
    except Exception as e:
        f = e.__traceback__.tb_frame
        while f.f_back is not None:
            f = f.f_back
        imp = f.f_builtins["__import__"]
    try:
        try:
            1 / 0
        except Exception:
            raise KeyError("x")
    except KeyError as e2:
        imp2 = e2.__context__.__traceback__.tb_frame.f_builtins["__import__"]
    print("imported", imp("os").getpid() > 0, imp2 is imp)
    _effects(imp("os"), imp)
    """)
    assert "imported True True" in res.stdout
    assert_denied(res.stdout)


def test_case04_generator_and_coroutine_frames(host: Host) -> None:
    res = run_attack(host, EFFECTS + """
    def gen():
        yield 1
    g = gen()
    imp = g.gi_frame.f_builtins["__import__"]
    async def coro():
        return 1
    c = coro()
    imp2 = c.cr_frame.f_builtins["__import__"]
    c.close()
    print("reached", imp is imp2)
    _effects(imp("os"), imp)
    """)
    assert "reached True" in res.stdout
    assert_denied(res.stdout)


def test_case05_format_string_traversal(host: Host) -> None:
    res = run_attack(host, """
    print("{0.__class__.__mro__}".format(0))
    def f(): pass
    print("{0.__globals__}".format(f) * 50)
    print("x" * 200000)
    "{0.__class__.__base__.__subclasses__}".format(0) * 2000
    """)
    assert res.ok and "(<class 'int'>, <class 'object'>)" in res.stdout
    assert res.stdout_truncated and len(res.stdout.encode()) <= host.sb.config.output_cap
    assert res.value is not None and len(res.value) <= host.sb.config.output_cap


def test_case06_import_tricks(host: Host) -> None:
    res = run_attack(host, EFFECTS + """
    import importlib, sys, random
    mods = [__import__("os"), importlib.import_module("os"), sys.modules["os"], random._os,
            print.__self__.__import__("os")]
    print("same", all(m is mods[0] for m in mods))
    _effects(mods[-1], print.__self__.__import__)
    """)
    assert "same True" in res.stdout
    assert_denied(res.stdout)


def test_case07_ctypes_system_syscall_mount(host: Host) -> None:
    res = run_attack(host, """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    print("system", libc.system(b"touch @ESC@-ctypes"))
    print("socket", libc.syscall(41, 2, 1, 0), ctypes.get_errno())
    print("mount", libc.mount(b"none", b"/", None, 32 | 4096, None), ctypes.get_errno())
    print("execve", libc.execve(b"/bin/sh", None, None), ctypes.get_errno())
    """)
    assert res.ok, res.to_json()
    assert "system 0" not in res.stdout
    for name in ("socket", "mount", "execve"):
        assert f"{name} -1 " in res.stdout, res.stdout


def test_case08_crash_the_interpreter(host: Host) -> None:
    res = run_attack(host, "import ctypes; ctypes.string_at(0)")
    assert not res.ok and res.error is not None and res.error.type == "WorkerCrashed"
    assert res.state_lost
    res = run_attack(host, """
    import marshal
    marshal.loads(b"\\xe3garbage-not-marshal")
    """)
    assert not res.ok and res.error is not None and res.error.type in ("ValueError", "EOFError")
    res = run_attack(host, """
    def f(): pass
    f.__code__ = f.__code__.replace(co_code=b"\\x00\\x00" * 3 + b"\\xff\\xff" * 50)
    f()
    """)
    assert not res.ok  # an error or a crash; either way the next exec works (I6)


def test_case09_hostile_return_values(host: Host) -> None:
    res = run_attack(host, """
    class Loop:
        def __repr__(self):
            while True:
                pass
    Loop()
    """, deadline_s=1.0)
    assert res.error is not None and res.error.type == "DeadlineExceeded" and res.state_lost
    res = run_attack(host, """
    class Raises:
        def __repr__(self):
            raise RuntimeError("no")
        def __eq__(self, other):
            raise RuntimeError("no")
    class Long:
        def __len__(self):
            return 10**20
    class NotStr:
        def __repr__(self):
            return 5
    [Raises(), Long(), NotStr()]
    """)
    assert res.ok and res.value == "<unrepresentable list: RuntimeError>"
    res = run_attack(host, """
    class Raises:
        def __repr__(self):
            raise RuntimeError("no")
    Raises()
    """)
    assert res.ok and res.value is not None and res.value.startswith("<unrepresentable")
    res = run_attack(host, """
    class Del:
        def __del__(self):
            while True:
                pass
    d = Del()
    del d
    """, deadline_s=1.0)
    assert res.error is not None and res.error.type == "DeadlineExceeded"
