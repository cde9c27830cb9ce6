"""Issue 26's probes, through real `rmh exec` and `rmh serve` processes on every tier this
machine runs (run as root here and, by tests/sandbox/test_sandbox_nonroot.py, again as an
unprivileged user). Each probe is checked on the host, not by the cell's own report: the
mode, owner and times of a copy of /bin/true and of a folder outside the vault, of VAULT/.rmh
and of /dev/full; the nice value of a bystander process of the same user and of this test
process; the bystander's secret never in any output; the kernel's uids and groups of
every sandbox process (as root: none is 0); and the worker's life after its supervisor is
SIGKILLed or SIGTERMed, although the cell tried to clear PR_SET_PDEATHSIG. The cells reach
the worker past the courtesy lint (`run = exec; run(source)`), which is not a boundary.
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, probe
from tests.harness.test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TIER_FLAGS = {TIER_BWRAP: "bwrap", TIER_LANDLOCK: "landlock", TIER_SECCOMP: "seccomp"}
SECRET_VAR = "RMH_BYSTANDER_SECRET"

_PROBES = """
import ctypes, fcntl, os
libc = ctypes.CDLL(None, use_errno=True)
def attempt(fn):
    try:
        return "OK " + repr(fn())[:80]
    except BaseException as exc:
        return "refused " + type(exc).__name__
def raw(rc):
    if rc < 0:
        raise OSError(ctypes.get_errno(), "denied")
    return rc
def open_fd(path):
    return os.open(path, os.O_RDONLY)
out = {}
for name, path in (("bin", @BIN@), ("dir", @DIR@), ("rmh", @RMH@), ("full", "/dev/full")):
    mode = {"bin": 0o6777, "dir": 0o777, "rmh": 0, "full": 0o777}[name]
    out["chmod_" + name] = attempt(lambda: os.chmod(path, mode))
    out["fchmod_" + name] = attempt(lambda: os.fchmod(open_fd(path), 0o777))
    out["utime0_" + name] = attempt(lambda: os.utime(path, (0, 0)))
    out["utime_now_" + name] = attempt(lambda: os.utime(path))
    out["chown_" + name] = attempt(lambda: os.chown(path, 65534, 65534))
    out["flock_" + name] = attempt(lambda: fcntl.flock(open_fd(path), fcntl.LOCK_EX))
    out["setlk_" + name] = attempt(lambda: fcntl.lockf(open_fd(path), fcntl.LOCK_SH))
out["nice_user"] = attempt(lambda: os.setpriority(os.PRIO_USER, 0, 19))
out["nice_pgrp"] = attempt(lambda: os.setpriority(os.PRIO_PGRP, 0, 19))
out["nice_bystander"] = attempt(lambda: os.setpriority(os.PRIO_PROCESS, @BYS@, 19))
out["get_nice_user"] = attempt(lambda: os.getpriority(os.PRIO_USER, 0))
out["pdeathsig"] = attempt(lambda: raw(libc.prctl(1, 0, 0, 0, 0)))
out["dumpable"] = attempt(lambda: raw(libc.prctl(4, 1, 0, 0, 0)))
out["environ"] = attempt(lambda: open("/proc/@BYS@/environ", "rb").read())
out["mem"] = attempt(lambda: open("/proc/@BYS@/mem", "r+b").read(1))
out["nice_self"] = attempt(lambda: os.setpriority(os.PRIO_PROCESS, 0, 19))  # lower only
out["thread_name"] = attempt(lambda: raw(libc.prctl(15, b"probe", 0, 0, 0)))
out
"""


def tiers() -> list[Any]:
    return [pytest.param(t, marks=pytest.mark.skipif(
        t not in probe().available, reason=f"tier {t} is not available here"))
        for t in TIER_FLAGS]


def lint_bypass(source: str) -> str:
    return f"run = exec\nrun({source!r})\nout"


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def rmh_exec(vault: Path, tier: str, code: str) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(vault), "exec", "--no-dense",
         "--tier", TIER_FLAGS[tier], "--json", "-c", code],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=child_env(), check=False)
    assert run.stdout.strip(), run.stderr[-2000:]
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def snapshot(paths: list[Path]) -> dict[str, tuple[int, ...]]:
    """Mode, owner and mtime of each path (VAULT/.rmh: no mtime, rmh itself writes there)."""
    out = {}
    for path in paths:
        st = os.stat(path)
        times = () if path.name == ".rmh" else (st.st_mtime_ns,)
        out[str(path)] = (st.st_mode, st.st_uid, st.st_gid, *times)
    return out


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process of this test's user, holding a secret in its environment."""
    secret = "sk-bystander-" + secrets.token_hex(12)
    proc = subprocess.Popen(["sleep", "600"], env={SECRET_VAR: secret, "PATH": "/usr/bin:/bin"})
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("tier", tiers())
def test_probes_leave_the_host_unchanged(tier: str, tmp_path: Path,
                                         bystander: subprocess.Popen[bytes]) -> None:
    vault = make_vault(tmp_path / "vault")
    outside = tmp_path / "outside"
    outside.mkdir()
    binary = outside / "true"
    shutil.copy2("/bin/true", binary)
    folder = outside / "folder"
    folder.mkdir(mode=0o755)
    for path in (tmp_path, outside):  # the worker's uid may reach them: chmod must still fail
        path.chmod(0o755)
    watched = [binary, folder, vault / ".rmh", Path("/dev/full"), Path("/dev/null")]
    before = snapshot(watched)
    nice_before = (os.getpriority(os.PRIO_PROCESS, bystander.pid),
                   os.getpriority(os.PRIO_PROCESS, 0))
    source = (_PROBES.replace("@BIN@", repr(str(binary))).replace("@DIR@", repr(str(folder)))
              .replace("@RMH@", repr(str(vault / ".rmh"))).replace("@BYS@", str(bystander.pid)))
    result = rmh_exec(vault, tier, lint_bypass(source))
    assert snapshot(watched) == before
    assert (os.getpriority(os.PRIO_PROCESS, bystander.pid),
            os.getpriority(os.PRIO_PROCESS, 0)) == nice_before
    assert bystander.poll() is None
    environ = Path(f"/proc/{bystander.pid}/environ").read_bytes().decode()
    secret = environ.split(f"{SECRET_VAR}=")[1].split("\0")[0]
    assert secret not in json.dumps(result)
    assert result["ok"], result
    out = ast.literal_eval(result["value"])
    allowed = {"nice_self", "thread_name"}
    opened = {k: v for k, v in out.items() if v.startswith("OK") and k not in allowed}
    assert opened == {}, opened
    assert out["nice_self"].startswith("OK") and out["thread_name"].startswith("OK"), out
    # the vault still opens: a later command works (chmod 000 of .rmh locked every one out)
    again = rmh_exec(vault, tier, "len(search('hiking'))")
    assert again["ok"], again


_PDEATH = """
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
cleared = libc.prctl(1, 0, 0, 0, 0)
libc.prctl(15, @MARK@, 0, 0, 0)
time.sleep(300)
"""


def processes_named(mark: str) -> list[int]:
    """Live (not zombie) processes whose comm is `mark`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm == mark and state != "Z":
            found.append(int(entry))
    return found


def wait_for(predicate: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def check_identity(pids: list[int]) -> None:
    """As root: no process of the sandbox (bwrap's included) has uid or gid 0 or any
    supplementary group, in the kernel's view (/proc/PID/status)."""
    if os.geteuid() != 0:
        return
    for pid in pids:
        fields = dict(line.split(":", 1) for line in
                      Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
        ids = [int(x) for x in (fields["Uid"] + fields["Gid"]).split()]
        assert 0 not in ids and fields["Groups"].split() == [], (pid, fields["Uid"])


def kill_supervisor_and_watch(supervisor: subprocess.Popen[bytes], mark: str,
                              how: int = signal.SIGKILL) -> None:
    assert wait_for(lambda: processes_named(mark), 120), "the cell never started"
    sandboxed = descendants(supervisor.pid)
    assert set(processes_named(mark)) <= set(sandboxed), "the marked worker is not ours"
    check_identity(sandboxed)
    os.kill(supervisor.pid, how)
    supervisor.wait(timeout=60)
    assert wait_for(lambda: not processes_named(mark), 30), \
        f"the worker outlived its supervisor: {processes_named(mark)}"


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.parametrize("tier", tiers())
def test_worker_dies_with_a_killed_exec(tier: str, how: int, tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    mark = "rmhpd" + secrets.token_hex(5)
    code = lint_bypass(_PDEATH.replace("@MARK@", repr(mark.encode())) + "\nout = cleared")
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "--vault", str(vault), "exec", "--no-dense", "--tier",
         TIER_FLAGS[tier], "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=ROOT, env=child_env())
    try:
        kill_supervisor_and_watch(proc, mark, how)
    finally:
        for pid in processes_named(mark):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("tier", tiers())
def test_worker_dies_with_a_killed_server(tier: str, tmp_path: Path) -> None:
    server = Server(make_vault(tmp_path / "vault"), tmp_path, "--tier", TIER_FLAGS[tier])
    mark = "rmhps" + secrets.token_hex(5)
    try:
        first = server.call("repl.exec", {"code": lint_bypass(
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "out = (libc.prctl(1, 0, 0, 0, 0), ctypes.get_errno())")})["result"]
        assert first["ok"] and first["value"] == "(-1, 1)", first  # EPERM from the filter
        server.send("repl.exec", {"code": lint_bypass(
            _PDEATH.replace("@MARK@", repr(mark.encode())) + "\nout = cleared")}, rid=2)
        kill_supervisor_and_watch(server.proc, mark)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
        for pid in processes_named(mark):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("tier", tiers())
def test_served_probes_are_refused(tier: str, tmp_path: Path,
                                   bystander: subprocess.Popen[bytes]) -> None:
    vault = make_vault(tmp_path / "vault")
    server = Server(vault, tmp_path, "--tier", TIER_FLAGS[tier])
    watched = [vault / ".rmh", Path("/dev/full")]
    before = snapshot(watched)
    nice = os.getpriority(os.PRIO_PROCESS, bystander.pid)
    try:
        cell = (f"import os\nout = []\nfor f in (lambda: os.chmod({str(vault / '.rmh')!r}, 0), "
                "lambda: os.utime('/dev/full', (0, 0)), "
                "lambda: os.setpriority(os.PRIO_USER, 0, 19)):\n"
                "    try:\n        f(); out.append('OK')\n"
                "    except OSError as exc:\n        out.append(type(exc).__name__)\n")
        res = server.call("repl.exec", {"code": lint_bypass(cell)})["result"]
        assert res["ok"] and "OK" not in res["value"], res
        assert snapshot(watched) == before
        assert os.getpriority(os.PRIO_PROCESS, bystander.pid) == nice
        after = server.call("repl.exec", {"code": "search('hiking')[0]['note']"}, rid=2)
        assert after["result"]["value"] == "'people/Caroline.md'", after
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
