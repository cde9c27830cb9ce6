"""Start-up probe: which isolation tiers work on this machine (reported by `rmh doctor`)."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from . import cpu_group, launch, shortage, worker_guard
from .config import TIER_UNSAFE, SandboxConfig, SandboxError
from .registry import REGISTRY, Mechanisms, refusal, tier, tier_limits
from .root_probe import private_root_check
from .seccomp_policy import allowed_names, compile_bpf
from .tiers import make_supervisor_non_dumpable


@dataclass(frozen=True)
class TierReport:
    """What works here: each mechanism with the reason when it does not, and the tiers."""

    bwrap: bool
    bwrap_detail: str
    seccomp: bool
    seccomp_detail: str
    landlock_abi: int
    private_root: bool
    private_root_detail: str
    available: tuple[str, ...]
    cpu_group: bool = False  # each worker in its own cpu cgroup (cpu_group.py)
    cpu_group_detail: str = ""

    @property
    def best(self) -> str | None:
        """The strongest available tier "auto" may pick (never the seccomp-only tier)."""
        return next((t for t in self.available if tier(t).auto), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "bwrap": self.bwrap, "bwrap_detail": self.bwrap_detail,
            "seccomp": self.seccomp, "seccomp_detail": self.seccomp_detail,
            "cpu_group": self.cpu_group, "cpu_group_detail": self.cpu_group_detail,
            "landlock_abi": self.landlock_abi, "private_root": self.private_root,
            "private_root_detail": self.private_root_detail, "available": list(self.available),
            "best": self.best,
        }


def _probe_seccomp() -> tuple[bool, str]:
    try:
        program = compile_bpf(os.getpid())
    except (ImportError, OSError, AttributeError) as exc:
        shortage.note(exc)
        return False, f"pyseccomp/libseccomp unusable: {exc}"
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            if "Seccomp:" not in status.read():
                return False, "kernel without seccomp"
    except OSError:
        pass
    return True, (f"allowlist of {len(set(allowed_names()))} syscalls, "
                  f"{len(program) // 8} BPF instructions")


def _probe_bwrap(config: SandboxConfig) -> tuple[bool, str]:
    if shutil.which("bwrap") is None:
        return False, "bwrap not installed (apt-get install bubblewrap)"
    try:
        command = launch.bwrap_command(config)
    except (SandboxError, ValueError) as exc:
        shortage.note(exc)
        return False, f"bwrap cannot be set up: {exc}"
    try:
        run = subprocess.run([*command.argv, "-c", "pass"], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=10, env={}, check=False,
                             pass_fds=command.fds, **command.popen_identity())
    except (OSError, subprocess.SubprocessError) as exc:
        shortage.note(exc)
        return False, f"bwrap failed to start: {exc}"
    finally:
        command.close()
    if run.returncode != 0:
        detail = f"bwrap failed: {run.stderr.decode(errors='replace').strip()[:300]}"
        if command.identity is not None:  # bwrap runs as the worker user: it must reach Python
            closed = closed_folder((os.path.realpath(sys.executable), sys.prefix,
                                    sys.base_prefix))
            if closed is not None:
                detail += (f"; the worker user ({command.identity.source}) cannot reach the "
                           f"interpreter: {closed} is not searchable by others (chmod o+x "
                           f"{closed}, or use a Python installed outside it)")
        return False, detail
    who = (f"started as {command.identity.source}" if command.identity is not None
           else "started as this user")
    return True, (f"user, pid, net, ipc, uts, mount namespaces; uid 65534 inside, {who}; "
                  "no capabilities")


def closed_folder(paths: tuple[str, ...], top: str = os.sep) -> str | None:
    """The first folder on the way from `top` to any of `paths` (`top` itself, each folder
    below it, the path itself when it is a folder) that others may not search (no `o+x`),
    else None: a worker started as another user cannot pass it."""
    for path in paths:
        rest = os.path.relpath(os.path.abspath(path), top).split(os.sep)
        folder = os.path.abspath(top)
        for part in ["", *rest]:
            folder = os.path.join(folder, part) if part else folder
            try:
                mode = os.stat(folder).st_mode
            except OSError:
                break
            if not stat.S_ISDIR(mode):
                break
            if not mode & stat.S_IXOTH:
                return folder
    return None


def probe(worker_user: str = "auto") -> TierReport:
    """Test each mechanism once per process and worker identity (about 0.1 s) and list the
    usable tiers, strongest first (a report a passing shortage decided is not kept:
    shortage.py)."""
    return _probe(worker_user)


@shortage.kept
def _probe(worker_user: str) -> TierReport:
    seccomp, seccomp_detail = _probe_seccomp()
    bwrap, bwrap_detail = _probe_bwrap(SandboxConfig(worker_user=worker_user))
    abi = worker_guard.landlock_abi()
    root = private_root_check()
    found = Mechanisms(bwrap, seccomp, abi, root.namespace, root.read_only_tree)
    tiers = tuple(t.name for t in REGISTRY.values() if t.works(found))  # strongest first
    group, group_detail = cpu_group.status()
    if not group:
        group_detail += ("; workers share the supervisor's cpu cgroup: a cell's threads are "
                         "bounded by its deadline only (README, Known limits)")
    return TierReport(bwrap, bwrap_detail, seccomp, seccomp_detail, abi, root.namespace,
                      root.detail or "the worker's own mount namespace, read-only mounts", tiers,
                      group, group_detail)


def foreign_proc() -> str | None:
    """Why /proc is not this process's PID namespace's (unshare -p without --mount-proc:
    /proc/self names another pid than getpid), else None. The host reads its workers' trees
    there (placing them in their cgroup, stopping them between cells, counting their
    threads): it would read other processes' (session 39, NOTES-SBX15)."""
    try:
        seen = os.readlink("/proc/self")
    except OSError:
        return None  # no /proc at all: the host's readings fall back (launch.py)
    if seen == str(os.getpid()):
        return None
    return (f"/proc belongs to another PID namespace (/proc/self is {seen}, this process is "
            f"{os.getpid()}): the supervisor cannot see its workers' processes there; mount a "
            f"/proc of its own (unshare --pid --fork --mount-proc)")


def choose_tier(config: SandboxConfig, *, warn: bool = True) -> str:
    """The tier `config` asks for, or the strongest available that `tiers.refusal` allows;
    SandboxError when refusing (the message says why). "auto" never picks the seccomp-only
    tier (nothing but its private root confines it: no Landlock, no bwrap): only naming it
    does, and then, unless `warn` is False, a warning on stderr (the "rmh.sandbox" logger)
    says what it does not hold."""
    report = probe(config.worker_user)
    non_dumpable = make_supervisor_non_dumpable()
    strong = [t for t in report.available if tier(t).auto]
    if config.tier == TIER_UNSAFE or (config.tier == "auto" and not strong):
        if not config.unsafe_no_sandbox:
            named = [t for t in report.available if not tier(t).auto]
            only = "/".join(named)
            seccomp_only = (f" The {only}-only tier works here (a private root with no "
                            f"Landlock or bwrap behind it): it runs only when named "
                            f"(--tier {only}, [sandbox] tier)." if named else "")
            raise SandboxError(
                "no sandbox tier that auto may pick works here (need bubblewrap "
                f"or Landlock, with seccomp): bwrap: {report.bwrap_detail}; seccomp: "
                f"{report.seccomp_detail}; landlock ABI {report.landlock_abi}; private root: "
                f"{report.private_root_detail}.{seccomp_only} "
                "Refusing to run code; pass --unsafe-no-sandbox to run it with rlimits only")
        return TIER_UNSAFE
    if (foreign := foreign_proc()) is not None:
        raise SandboxError(foreign)
    if config.tier == "auto":
        reasons = {t: refusal(t, config, non_dumpable) for t in strong}
        allowed = [t for t, reason in reasons.items() if reason is None]
        if not allowed:
            raise SandboxError(f"refusing every available tier: {reasons}")
        return allowed[0]
    if config.tier not in report.available:
        raise SandboxError(f"tier {config.tier} is not available here: {report.to_json()}")
    if (reason := refusal(config.tier, config, non_dumpable)) is not None:
        raise SandboxError(f"refusing tier {config.tier}: {reason}")
    if not tier(config.tier).auto and warn:
        logging.getLogger("rmh.sandbox").warning(
            "sandbox tier %s (named, never chosen by auto) does not hold: %s", config.tier,
            "; ".join(tier_limits(config.tier)))
    return config.tier
