"""What the worker can see and write of the host, by probe, through real `rmh exec` and `rmh
serve` processes on every tier this machine runs (as root here and, by
tests/sandbox/test_sandbox_nonroot.py, again as an unprivileged user).

- stat, lstat, readlink, access and statfs of a canary outside the vault, of /etc/shadow and of
  a bystander's /proc entry, a listing of /proc, getsid/getpgid of a host pid: refused on
  every tier (bwrap; the Landlock and seccomp workers' private root, sandbox/worker_root.py);
  where Landlock has no private root (unprivileged, no user namespaces) the path probes are
  what `tier_limits` says they are (open);
- a file created in the host's /tmp, /dev/shm or a folder outside the vault, or in the
  sandbox's own root: refused on every tier (the seccomp tier's filter is read-only); the host
  checks that nothing appeared;
- the mounts of the live worker, read by the host from /proc/PID/mountinfo: bwrap's device
  binds and root are read-only; the Landlock and seccomp workers' root is a read-only tmpfs
  with no /proc, /dev, /tmp or /etc.
"""

from __future__ import annotations

import ast
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from sandbox import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, tier_limits
from sandbox.root_probe import private_root_possible
from tests.harness.test_server_e2e import Server, make_vault

from .test_sandbox_identity_probes import (
    TIER_FLAGS,
    bystander,  # noqa: F401 (a fixture)
    descendants,
    lint_bypass,
    rmh_exec,
    tiers,
)

pytestmark = pytest.mark.slow

_LOOK = """
import os
def attempt(fn):
    try:
        return "OK " + repr(fn())[:60]
    except BaseException as exc:
        return "refused " + type(exc).__name__
out = {}
for name, path in (("canary", @CANARY@), ("shadow", "/etc/shadow"),
                   ("proc", "/proc/@BYS@"), ("proc_exe", "/proc/@BYS@/exe")):
    out["stat_" + name] = attempt(lambda: os.stat(path).st_mode)
    out["lstat_" + name] = attempt(lambda: os.lstat(path).st_mode)
    out["readlink_" + name] = attempt(lambda: os.readlink(path))
    out["access_" + name] = attempt(lambda: os.access(path, os.F_OK) or 1 / 0)
    out["statfs_" + name] = attempt(lambda: os.statvfs(path).f_flag)
out["list_proc"] = attempt(lambda: os.listdir("/proc"))
out["getsid"] = attempt(lambda: os.getsid(@BYS@))
out["getpgid"] = attempt(lambda: os.getpgid(@BYS@))
for name, path in (("tmp", "/tmp/@MARK@"), ("shm", "/dev/shm/@MARK@"),
                   ("outside", @OUTSIDE@ + "/@MARK@"), ("root", "/@MARK@"),
                   ("dev", "/dev/@MARK@")):
    out["create_" + name] = attempt(lambda: os.close(os.open(path, os.O_WRONLY | os.O_CREAT)))
    out["mkdir_" + name] = attempt(lambda: os.mkdir(path + "d"))
out["devnull_write"] = attempt(lambda: open("/dev/null", "w").write("x"))
out["devnull_utime"] = attempt(lambda: os.utime("/dev/null"))
out
"""
_PATH_PROBES = ("stat", "lstat", "readlink", "access", "statfs")


def _private_root(tier: str) -> bool:
    """Whether the tier hides host paths here (bwrap always; Landlock and seccomp with a
    private root, which the seccomp tier always has where it runs)."""
    return tier in (TIER_BWRAP, TIER_SECCOMP) or (tier == TIER_LANDLOCK
                                                  and private_root_possible())


@pytest.mark.parametrize("tier", tiers())
def test_visibility_probes_see_and_write_nothing_of_the_host(
        tier: str, tmp_path: Path, bystander: subprocess.Popen[bytes]) -> None:  # noqa: F811
    vault = make_vault(tmp_path / "vault")
    outside = tmp_path / "outside"
    outside.mkdir()
    canary = outside / "canary"
    canary.write_text("canary\n")
    canary.chmod(0o640)
    for path in (tmp_path, outside):
        path.chmod(0o777)  # the worker's uid could create files there: the sandbox must not
    mark = "rmhvis" + secrets.token_hex(5)
    source = (_LOOK.replace("@CANARY@", repr(str(canary))).replace("@BYS@", str(bystander.pid))
              .replace("@MARK@", mark).replace("@OUTSIDE@", repr(str(outside))))
    result = rmh_exec(vault, tier, lint_bypass(source))
    assert result["ok"], result
    out = ast.literal_eval(result["value"])
    created = [p for p in (Path("/tmp") / mark, Path("/dev/shm") / mark, outside / mark,
                           Path("/tmp") / f"{mark}d", outside / f"{mark}d") if p.exists()]
    for path in created:
        path.unlink() if path.is_file() else path.rmdir()
    assert created == []
    writes = {k: v for k, v in out.items() if k.startswith(("create_", "mkdir_"))}
    if tier == TIER_BWRAP:  # its /tmp is its own scratch (a tmpfs of scratch_mb)
        writes = {k: v for k, v in writes.items() if not k.endswith("_tmp")}
    assert all(v.startswith("refused") for v in writes.values()), writes
    assert out["getsid"].startswith("refused") and out["getpgid"].startswith("refused"), out
    assert out["devnull_utime"].startswith("refused"), out
    looks = {k: v for k, v in out.items() if k.startswith(_PATH_PROBES) or k == "list_proc"}
    if _private_root(tier):
        assert all(v.startswith("refused") for v in looks.values()), looks
        assert str(0o100640) not in result["value"]  # the canary's mode never reached the cell
    else:  # documented, not hidden: the doctor says what the tier leaves open
        assert looks["stat_shadow"].startswith("OK"), looks  # /etc is searchable by anyone
        said = " ".join(tier_limits(tier))
        assert "stat" in said and "/proc" in said, said
    if tier == TIER_BWRAP:  # (the Landlock tier's private root has no /dev at all)
        assert out["devnull_write"] == "OK 1", out  # the read-only mount keeps the device usable


def _mountinfo(server: Server) -> list[tuple[str, str, str]]:
    """(mount point, mount options, file-system type) of the server's live Python worker."""
    for pid in descendants(server.proc.pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"worker.py" in cmdline and not cmdline.startswith(b"bwrap"):
            rows = []
            for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
                left, right = line.split(" - ")
                fields = left.split()
                rows.append((fields[4], fields[5], right.split()[0]))
            return rows
    raise AssertionError("no live worker under the server")


@pytest.mark.parametrize("tier", tiers())
def test_worker_mounts_are_read_only(tier: str, tmp_path: Path) -> None:
    server = Server(make_vault(tmp_path / "vault"), tmp_path, "--tier", TIER_FLAGS[tier])
    try:
        first = server.call("repl.exec", {"code": "1 + 1"})["result"]
        assert first["ok"], first
        mounts = {point: (opts.split(","), fstype) for point, opts, fstype in
                  _mountinfo(server)}
        if tier == TIER_BWRAP:
            for dev in ("/dev/null", "/dev/zero", "/dev/urandom"):
                assert "ro" in mounts[dev][0], (dev, mounts[dev])
            assert "ro" in mounts["/"][0] and "ro" in mounts["/dev"][0], mounts
            assert "rw" in mounts["/tmp"][0], mounts  # the one scratch mount
        elif private_root_possible():
            assert mounts["/"][1] == "tmpfs" and "ro" in mounts["/"][0], mounts
            assert not {"/proc", "/dev", "/tmp", "/etc", "/sys"} & set(mounts), mounts
            assert all("ro" in opts for opts, _ in mounts.values()), mounts
        assert server.call("repl.exec", {"code": "search('hiking')[0]['note']"},
                           rid=2)["result"]["value"] == "'people/Caroline.md'"
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def test_tier_limits_say_what_each_tier_leaves_open() -> None:
    seccomp = " ".join(tier_limits(TIER_SECCOMP))
    assert "opens no file for writing" in seccomp and "no Landlock" in seccomp, seccomp
    landlock = " ".join(tier_limits(TIER_LANDLOCK))
    assert ("no private root" in landlock) == (not private_root_possible()), landlock
    assert "read-only" in " ".join(tier_limits(TIER_BWRAP))
    assert os.path.isdir("/proc")  # the host side of these tests reads /proc
