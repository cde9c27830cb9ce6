"""The allowlist's shape (one reason per syscall, nothing that changes metadata, locks or acts
on another process), the worker identity rule, and the tier choice: `auto` never picks the
seccomp-only tier; naming it warns on stderr; `rmh doctor` says who the worker runs as."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, SandboxConfig, SandboxError, probe
from sandbox.identity import DEDICATED_USER, NOBODY, resolve, worker_identity
from sandbox.probe import TierReport, choose_tier
from sandbox.seccomp_policy import (
    ALLOWED,
    FCNTL_COMMANDS,
    FILTERED,
    NEVER,
    PRCTL_OPTIONS,
    allowed_names,
    compile_bpf,
)

ROOT = Path(__file__).resolve().parents[2]
METADATA = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown",
            "fchownat", "utime", "utimes", "utimensat", "futimesat", "setxattr", "fsetxattr",
            "lsetxattr", "removexattr", "mknod", "mknodat")


def test_every_allowed_syscall_says_why_once() -> None:
    names = allowed_names()
    assert len(names) == len(set(names))
    assert not set(ALLOWED) & set(FILTERED)
    for name, why in {**ALLOWED, **FILTERED}.items():
        assert isinstance(why, str) and len(why) > 5 and "\n" not in why, name
    assert not set(names) & set(NEVER), set(names) & set(NEVER)


def test_nothing_changes_metadata_locks_or_reaches_another_process() -> None:
    allowed = set(allowed_names())
    for name in (*METADATA, "flock", "link", "linkat", "get_robust_list", "mincore",
                 "process_vm_readv", "pidfd_open", "tkill"):
        assert name not in allowed and name in NEVER, name
    assert not {6, 7, 37, 38, 8, 10, 1024, 1026} & set(FCNTL_COMMANDS)  # locks, SETOWN/SIG, ...
    assert not {1, 4, 22, 36, 59} & set(PRCTL_OPTIONS)  # PDEATHSIG, DUMPABLE, SECCOMP, ...
    assert len(compile_bpf(os.getpid())) % 8 == 0


def test_programs_kept_for_past_workers_are_bounded() -> None:
    # One program is compiled per worker pid; they were all kept (functools.cache): a cell
    # that crashes its worker on every exec grew `rmh serve` by 1.8 KB a respawn, for good.
    for pid in range(10_000, 10_200):
        compile_bpf(pid)
    assert compile_bpf.cache_info().currsize <= 64
    assert compile_bpf(10_199) == compile_bpf(10_199)


def test_worker_user_resolution() -> None:
    auto = resolve("auto")
    try:
        entry = pwd.getpwnam(DEDICATED_USER)
        assert (auto.uid, auto.gid) == (entry.pw_uid, entry.pw_gid)
    except KeyError:
        assert (auto.uid, auto.gid) == (NOBODY, NOBODY)
    assert (resolve("4321:8765").uid, resolve("4321:8765").gid) == (4321, 8765)
    for bad in ("0:0", "5:0", "0:5", "root", "no-such-user-rmh", "a:b"):
        with pytest.raises(ValueError):
            resolve(bad)
    with pytest.raises(ValueError):
        SandboxConfig(max_tasks=1)
    assert (worker_identity("auto") is None) == (os.geteuid() != 0)


def test_auto_never_picks_the_seccomp_only_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    real = probe()
    if real.available:
        assert choose_tier(SandboxConfig()) != TIER_SECCOMP
    # A machine where only seccomp works (a report of that machine, fed to the choice):
    only = TierReport(False, "absent", True, "ok", 0, True, "ok", (TIER_SECCOMP,))
    monkeypatch.setattr(sys.modules["sandbox.probe"], "probe", lambda worker_user="auto": only)
    with pytest.raises(SandboxError, match="--tier seccomp"):
        choose_tier(SandboxConfig())
    assert choose_tier(SandboxConfig(tier="seccomp")) == TIER_SECCOMP


def _rmh(*args: str, vault: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT),
           "HOME": str(vault.parent)}
    return subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
                          check=False)


@pytest.mark.skipif(TIER_SECCOMP not in probe().available, reason="no seccomp tier here")
def test_naming_seccomp_warns_and_doctor_says_who_runs(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert _rmh("init", vault=vault).returncode == 0
    named = _rmh("exec", "--no-dense", "--tier", "seccomp", "-c", "1 + 1", vault=vault)
    assert named.returncode == 0 and named.stdout.strip() == "2", named.stderr
    assert "never chosen by auto" in named.stderr and "file-system" in named.stderr
    auto = _rmh("exec", "--no-dense", "--json", "-c", "1 + 1", vault=vault)
    assert json.loads(auto.stdout)["tier"] in (TIER_BWRAP, TIER_LANDLOCK), auto.stderr
    assert "never chosen by auto" not in auto.stderr
    sandbox = json.loads(_rmh("doctor", "--json", vault=vault).stdout)["sandbox"]
    assert sandbox["runs"] in (TIER_BWRAP, TIER_LANDLOCK)
    who = " ".join(sandbox["worker_identity"])
    assert ("supervisor is root" in who) == (os.geteuid() == 0), who
    assert set(sandbox["tier_limits"]) == set(probe().available)
    assert all(who in " ".join(lines) for lines in sandbox["tier_limits"].values())


@pytest.mark.skipif(TIER_LANDLOCK not in probe().available, reason="no Landlock tier here")
def test_rmh_toml_sets_the_task_cap_and_worker_user(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert _rmh("init", vault=vault).returncode == 0
    (vault / "rmh.toml").write_text('[sandbox]\nmax_tasks = 64\nworker_user = "4321:4321"\n')
    cell = ("run = exec\nrun('''import threading\nn = 0\nstop = threading.Event()\n"
            "ts = []\ntry:\n    for _ in range(500):\n        t = threading.Thread("
            "target=stop.wait)\n        t.start()\n        ts.append(t)\nexcept RuntimeError:\n"
            "    pass\nstop.set()\nfor t in ts:\n    t.join()\nn = len(ts)''')\nn")
    out = _rmh("exec", "--no-dense", "--tier", "landlock", "--json", "-c", cell, vault=vault)
    result = json.loads(out.stdout)
    assert result["ok"] and 50 <= int(result["value"]) < 64, (result, out.stderr)
    (vault / "rmh.toml").write_text('[sandbox]\nworker_user = "0:0"\n')
    refused = _rmh("exec", "--no-dense", "-c", "1", vault=vault)
    assert refused.returncode != 0 and "uid or gid 0" in refused.stderr, refused.stderr
