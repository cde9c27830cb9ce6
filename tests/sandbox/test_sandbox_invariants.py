"""The sandbox's promise as an invariant, attacked by a syscall fuzzer (issue 26, item 8).

For each tier this machine runs, as root and as an unprivileged user, a real `rmh serve`
supervises a worker whose cells call every allowlisted syscall with arguments aimed at host
objects (tests/sandbox/syscall_fuzz.py). Before and after, the host is snapshotted: modes,
owners, sizes and times of a canary tree outside the vault (a root-owned and a user-owned file
and folder, a copy of /bin/true that must never become setuid), the device nodes, the nice
value, limits, affinity and liveness of a bystander process of the supervisor's user and of
the supervisor itself, and the vault's modes and bytes. Nothing may change, the supervisor must
keep answering, and when it is SIGKILLed its worker must die with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from sandbox import TIER_NAMES, probe

from .syscall_fuzz import CELL, PATH_NAMES, calls

ROOT = Path(__file__).resolve().parents[2]
USER = "rmhtest"
REQUIRE = "RMH_REQUIRE_NONROOT"
DEVICES = ("/dev/null", "/dev/full", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty")
CHUNK = 150


def _syscall_numbers() -> dict[str, int]:
    import pyseccomp as sc

    from sandbox.seccomp_policy import allowed_names

    numbers: dict[str, int] = {}
    for name in sorted(set(allowed_names())):
        try:
            nr = int(sc.resolve_syscall(sc.Arch.NATIVE, name))
        except (OSError, ValueError):
            continue
        if nr >= 0:
            numbers[name] = nr
    return numbers


def _user_ids() -> tuple[int, int] | None:
    got = subprocess.run(["id", "-u", USER], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                               "/usr/sbin/nologin", USER], capture_output=True, check=False)
        if made.returncode != 0:
            return None
        got = subprocess.run(["id", "-u", USER], capture_output=True, text=True, check=False)
    gid = subprocess.run(["id", "-g", USER], capture_output=True, text=True, check=False)
    return int(got.stdout), int(gid.stdout)


@dataclass
class World:
    """The host objects one run attacks, and the processes around it."""

    base: Path
    paths: dict[str, str]
    ids: tuple[int, int] | None  # (uid, gid) a command runs as; None: this process's
    uid: int
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def vault(self) -> Path:
        return Path(self.paths["vault"])


def _make_world(unprivileged: bool) -> World:
    base = Path(tempfile.mkdtemp(prefix="rmh-invariants-"))
    os.chmod(base, 0o755)
    if unprivileged and os.geteuid() == 0:
        ids = _user_ids()
        if ids is None:
            _cannot("cannot create or switch to the unprivileged test user")
        uid, gid = ids  # type: ignore[misc]
        run_as: tuple[int, int] | None = (uid, gid)
    else:
        uid, gid = os.geteuid(), os.getegid()
        run_as = None
    paths = {n: str(base / n) for n in ("root_file", "root_dir", "user_file", "user_dir",
                                        "setuid_copy", "vault", "new_outside")}
    Path(paths["root_file"]).write_text("root canary\n")
    Path(paths["root_dir"]).mkdir()
    (Path(paths["root_dir"]) / "inside").write_text("x\n")
    shutil.copy(shutil.which("true") or "/bin/true", paths["setuid_copy"])
    os.chmod(paths["setuid_copy"], 0o755)
    Path(paths["user_file"]).write_text("user canary\n")
    Path(paths["user_dir"]).mkdir()
    Path(paths["vault"]).mkdir()
    (Path(paths["vault"]) / "home.md").write_text("# Home\nkeep me\n")
    for name in ("user_file", "user_dir", "vault", "vault/home.md"):
        os.chown(base / name, uid, gid)
    paths.update({"vault_state": f"{paths['vault']}/.rmh",
                  "vault_note": f"{paths['vault']}/home.md",
                  "dev_full": "/dev/full", "dev_null": "/dev/null"})
    return World(base, paths, run_as, uid)


def _cannot(reason: str) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"the unprivileged run is required ({REQUIRE}=1) but cannot run: {reason}")
    pytest.skip(reason)


def _as(world: World) -> dict[str, Any]:
    """Popen keywords that run the command itself as the world's user (no wrapper process,
    so the pid we hold, signal and snapshot is the command's own)."""
    if world.ids is None:
        return {}
    return {"user": world.ids[0], "group": world.ids[1], "extra_groups": []}


def _env(world: World) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT),
            "HOME": str(world.base), "PYTHONDONTWRITEBYTECODE": "1", "RMH_EMBED_CACHE": ""}


def _stat(path: str) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _proc(pid: int) -> dict[str, Any]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        return {"alive": True, "nice": os.getpriority(os.PRIO_PROCESS, pid),
                "limits": Path(f"/proc/{pid}/limits").read_text(),
                "affinity": sorted(os.sched_getaffinity(pid)),
                "ids": re.findall(r"^(?:Uid|Gid|Groups):.*$", status, re.M),
                # stopped (SIGSTOP) or dead is a change; running or sleeping is the scheduler's
                "stopped": re.search(r"^State:\s+[Tt]", status, re.M) is not None,
                "zombie": re.search(r"^State:\s+[ZX]", status, re.M) is not None}
    except (OSError, ProcessLookupError):
        return {"alive": False}


def snapshot(world: World) -> dict[str, Any]:
    """Everything a cell must not change."""
    snap: dict[str, Any] = {}
    for name in ("root_file", "root_dir", "user_file", "user_dir", "setuid_copy",
                 "new_outside"):
        snap[name] = _stat(world.paths[name])
    for folder in ("root_dir", "user_dir"):
        snap[f"{folder}/"] = sorted(os.listdir(world.paths[folder]))
    snap["root_dir/inside"] = _stat(f"{world.paths['root_dir']}/inside")
    snap["base/"] = sorted(os.listdir(world.base))
    for dev in DEVICES:
        snap[dev] = _stat(dev)
    vault = world.vault
    snap["vault modes"] = {str(p.relative_to(vault)): (p.lstat().st_mode, p.lstat().st_uid)
                           for p in sorted([vault, *vault.rglob("*")])
                           if not p.name.endswith(("-wal", "-shm", "-journal"))
                           and ".tmp" not in p.name}
    snap["vault notes"] = {str(p.relative_to(vault)): hashlib.sha256(p.read_bytes()).hexdigest()
                           for p in sorted(vault.rglob("*.md")) if ".rmh" not in p.parts}
    for role, proc in sorted(world.procs.items()):
        snap[role] = _proc(proc.pid)
    snap["test"] = _proc(os.getpid())
    return snap


class Supervisor:
    """`rmh serve` on one tier, spoken to one frame at a time."""

    def __init__(self, world: World, tier: str) -> None:
        argv = [sys.executable, "-m", "harness", "--vault", str(world.vault), "serve",
                "--no-dense", "--tier", tier]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=ROOT, env=_env(world),
                                     **_as(world))
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = 120.0) -> dict[str, Any]:
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(frame).encode() + b"\n")
        stdin.flush()
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = stdout.readline()
            if not line:
                err = self.proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
                raise AssertionError(f"supervisor ended: {err[-2000:]}")
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply
        raise AssertionError(f"no answer to {method} in {timeout} s")

    def descendants(self) -> list[int]:
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        found, frontier = [], [self.proc.pid]
        while frontier:
            pid = frontier.pop()
            kids = sorted(p for p, pp in parents.items() if pp == pid)
            found += kids
            frontier += kids
        return found


def _available() -> list[Any]:
    names = {full: short for short, full in TIER_NAMES.items() if short != "auto"}
    return [pytest.param(names[t], id=names[t]) for t in probe().available if t in names]


@pytest.fixture(params=["root", "unprivileged"])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("not root: the unprivileged case covers this user")
    made = _make_world(unprivileged=request.param == "unprivileged")
    bystander = subprocess.Popen(["sleep", "900"], env=_env(made), **_as(made))
    made.procs["bystander"] = bystander
    try:
        yield made
    finally:
        for proc in made.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        shutil.rmtree(made.base, ignore_errors=True)


def _resume_point(result: dict[str, Any], sent: int) -> int:
    """Calls of a chunk that ran before it stopped: the last index the cell printed, + 1."""
    printed = re.findall(r"^(\d+)$", str(result.get("stdout", "")), re.M)
    return min(sent, int(printed[-1]) + 1) if printed else 1


@pytest.mark.slow
@pytest.mark.parametrize("tier", _available())
def test_no_allowlisted_syscall_reaches_the_host(world: World, tier: str) -> None:
    init = subprocess.run([sys.executable, "-m", "harness", "--vault", str(world.vault), "init",
                           "--no-dense"], cwd=ROOT, env=_env(world), capture_output=True,
                          text=True, check=False, **_as(world))
    if init.returncode != 0 and world.ids is not None:
        _cannot(f"{USER} cannot run this interpreter and checkout: {init.stderr[-300:]}")
    assert init.returncode == 0, init.stderr
    server = Supervisor(world, tier)
    world.procs["supervisor"] = server.proc
    warm = server.call("repl.exec", {"code": "1 + 1"})
    assert warm.get("result", {}).get("value") == "2", warm
    numbers = _syscall_numbers()
    plan = [(numbers[name], [a.spec() for a in args])
            for name, args in calls(list(numbers), seed=26, per_call=24)]
    from sandbox.seccomp_policy import allowed_names

    fuzzed = {nr for nr, _ in plan}
    assert len(fuzzed) >= 0.6 * len(set(allowed_names())), "the allowlist was not fuzzed"
    before = snapshot(world)
    pids = {"bystander": world.procs["bystander"].pid, "supervisor": server.proc.pid,
            "test": os.getpid(), "init": 1, "group": -server.proc.pid}
    uids = {"root": 0, "bystander": world.uid}
    cell = (CELL.replace("@PATHS@", repr({n: world.paths[n] for n in PATH_NAMES
                                           if n in world.paths} | _proc_paths(pids)))
            .replace("@PIDS@", repr(pids)).replace("@UIDS@", repr(uids)))
    done, stops = 0, 0
    while done < len(plan):
        chunk = plan[done:done + CHUNK]
        code = cell.replace("@CALLS@", repr(chunk)).replace(
            "    _vals =", "    print(_made, flush=True)\n    _vals =")
        reply = server.call("repl.exec", {"code": code, "deadline_s": 30})
        result = reply.get("result", {})
        if result.get("ok"):
            done += len(chunk)
        else:
            done += _resume_point(result, len(chunk))
            stops += 1
        assert server.call("ping").get("result") is not None, "supervisor stopped answering"
    after = snapshot(world)
    assert after == before, _diff(before, after)
    assert stops < len(plan) // 4, f"the worker stopped {stops} times in {len(plan)} calls"
    workers = server.descendants()
    assert workers, "no worker process found under the supervisor"
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_proc(p)["alive"] for p in workers):
        time.sleep(0.1)
    survivors = [p for p in workers if _proc(p)["alive"] and not _proc(p)["zombie"]]
    assert survivors == [], f"workers outlived their supervisor: {survivors}"


def _proc_paths(pids: dict[str, int]) -> dict[str, str]:
    return {"bystander_environ": f"/proc/{pids['bystander']}/environ",
            "bystander_mem": f"/proc/{pids['bystander']}/mem",
            "supervisor_environ": f"/proc/{pids['supervisor']}/environ",
            "supervisor_mem": f"/proc/{pids['supervisor']}/mem",
            "supervisor_stdout": f"/proc/{pids['supervisor']}/fd/1",
            "supervisor_cwd": f"/proc/{pids['supervisor']}/cwd"}


def _diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    out = []
    for k in sorted(set(before) | set(after)):
        b, a = before.get(k), after.get(k)
        if b == a:
            continue
        if isinstance(b, dict) and isinstance(a, dict):
            out += [f"{k}.{f}: {b.get(f)!r} -> {a.get(f)!r}" for f in sorted(set(a) | set(b))
                    if a.get(f) != b.get(f)]
        else:
            out.append(f"{k}: {b!r} -> {a!r}")
    return "host changed: " + "; ".join(out)
