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
child then exits, and nothing it mounted outlives it.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import launch
from .identity import user_namespaces

_TIMEOUT_S = 10
_WORKER_DIR = Path(__file__).resolve().parent  # worker_root.py, as the worker imports it
_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import worker_root
paths, links = json.loads(sys.argv[2])
try:
    worker_root.private_root(paths, links, whole_tree=True)
except worker_root.NoNamespace as exc:
    print(json.dumps(["namespace", str(exc)]))
except worker_root.NoReadOnlyTree as exc:
    print(json.dumps(["read-only", str(exc)]))
except (worker_root.MountError, OSError) as exc:
    print(json.dumps(["failed", type(exc).__name__ + ": " + str(exc)]))
else:
    print(json.dumps(["ok", ""]))
"""


@dataclass(frozen=True)
class RootCheck:
    """`namespace`: a worker can make its private root (the Landlock tier's); `read_only_tree`:
    with every mount beneath it read-only and nodev too (the seccomp tier's); `detail`: why
    not, in words ("" when both hold)."""

    namespace: bool
    read_only_tree: bool
    detail: str


@functools.cache
def private_root_check() -> RootCheck:
    """Try the worker's private root once per process (about 0.05 s; see the module
    docstring). Unprivileged without user namespaces nothing is tried."""
    if os.geteuid() != 0 and not user_namespaces():
        return RootCheck(False, False, "unprivileged and user namespaces are not allowed")
    exe, _ = launch.interpreter()
    layout = json.dumps([launch.landlock_paths(), launch.lib_symlinks()])
    argv = [str(exe), "-I", "-S", "-B", "-c", _CHILD, str(_WORKER_DIR), layout]
    try:
        run = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=_TIMEOUT_S, env={}, check=False)
        outcome, why = json.loads(run.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        return RootCheck(False, False, f"the private root's probe failed: {exc}")
    if outcome == "ok":
        return RootCheck(True, True, "")
    if outcome == "read-only":
        return RootCheck(True, False, str(why))
    return RootCheck(False, False, f"the kernel refuses the worker's private root: {why}")


def private_root_possible() -> bool:
    """Whether a worker can get its private root here (`private_root_check`)."""
    return private_root_check().namespace
