"""Whether a worker can make its private root here (worker_root.private_root), found by making
one: what `rmh doctor` lists and what "auto" picks must be what will actually run.

The Landlock tier's worker as root, and the seccomp tier's always, need a mount namespace of
their own; the seccomp tier's also needs mount_setattr(2) (`whole_tree`). Whether the kernel
grants them depends on more than this process's uid and the user-namespace sysctls: a
container's root without CAP_SYS_ADMIN, a container profile refusing unshare(2) to a user the
sysctls allow user namespaces, or one that predates mount_setattr, refuse them, and the tiers'
workers then refused to start while `rmh doctor` listed them and "auto" chose the Landlock
tier. So the probe starts the worker's interpreter once per process, as the worker starts (this
process's uid, capabilities and seccomp filter, an empty environment), and has it build the
same private root (`landlock_paths`, `lib_symlinks`, `whole_tree`) in its own namespaces; the
child then exits, and nothing it mounted outlives it. As root the child then drops to the
worker's uid and asks for a user namespace of its own, as the worker does: where the kernel
refuses it (user.max_user_namespaces=0, a profile refusing CLONE_NEWUSER) every root session's
workers share that uid's kernel counts (`RootCheck.user_namespace`; SBX8, session 33).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import launch, shortage
from .identity import user_namespaces, worker_identity

_TIMEOUT_S = 10
_WORKER_DIR = Path(__file__).resolve().parent  # worker_root.py, as the worker imports it
_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import worker_guard, worker_root
paths, links = json.loads(sys.argv[2])
identity = json.loads(sys.argv[3])
outcome, why = "ok", ""
try:
    worker_root.private_root(paths, links, whole_tree=True)
except worker_root.NoNamespace as exc:
    outcome, why = "namespace", str(exc)
except worker_root.NoReadOnlyTree as exc:
    outcome, why = "read-only", str(exc)
except (worker_root.MountError, OSError) as exc:
    outcome, why = "failed", type(exc).__name__ + ": " + str(exc)
userns = outcome in ("ok", "read-only")
if userns and identity:  # as the worker: the drop, then its own user namespace
    worker_guard.drop_identity(*identity)
    userns = worker_guard.own_user_namespace()
print(json.dumps([outcome, why, userns]))
"""


@dataclass(frozen=True)
class RootCheck:
    """`namespace`: a worker can make its private root (the Landlock tier's); `read_only_tree`:
    with every mount beneath it read-only and nodev too (the seccomp tier's); `detail`: why
    not, in words ("" when both hold); `user_namespace`: a root supervisor's worker gets a
    user namespace of its own after its drop (unprivileged, the private root is one)."""

    namespace: bool
    read_only_tree: bool
    detail: str
    user_namespace: bool = False


@shortage.kept
def private_root_check() -> RootCheck:
    """Try the worker's private root once per process (about 0.05 s; see the module
    docstring). Unprivileged without user namespaces nothing is tried."""
    if os.geteuid() != 0 and not user_namespaces():
        return RootCheck(False, False, "unprivileged and user namespaces are not allowed")
    exe, _ = launch.interpreter()
    layout = json.dumps([launch.landlock_paths(), launch.lib_symlinks()])
    try:
        ident = worker_identity("auto")
    except ValueError:
        ident = None
    drop = json.dumps([ident.uid, ident.gid] if ident is not None else [])
    argv = [str(exe), "-I", "-S", "-B", "-c", _CHILD, str(_WORKER_DIR), layout, drop]
    try:
        run = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=_TIMEOUT_S, env={}, check=False)
        outcome, why, userns = json.loads(run.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        shortage.note(exc)  # not kept where it passes
        return RootCheck(False, False, f"the private root's probe failed: {exc}")
    if outcome == "ok":
        return RootCheck(True, True, "", bool(userns))
    if outcome == "read-only":
        return RootCheck(True, False, str(why), bool(userns))
    return RootCheck(False, False, f"the kernel refuses the worker's private root: {why}")


def private_root_possible() -> bool:
    """Whether a worker can get its private root here (`private_root_check`)."""
    return private_root_check().namespace
