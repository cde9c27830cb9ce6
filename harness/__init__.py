"""What an extension of rmh may use from the harness (harness.extensions lists the points it
plugs into): the command-line helpers a command module needs, the ask loop, the Ray
cluster helpers, and the hooks daemon's client. Loaded on first use, so `rmh` pays nothing
for what it does not run."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not `typing`'s: every rmh process (each hook) imports this package
if TYPE_CHECKING:
    from typing import Any

    from .ask import LoopParams, ask
    from .commands.notes import positive_int
    from .commands.output import CommandFailed, fail
    from .hooks_daemon import daemon_request
    from .ray_jobs import RayFailed, cluster, ray_module, worker_error

_LAZY = {"CommandFailed": ".commands.output", "fail": ".commands.output",
         "positive_int": ".commands.notes", "LoopParams": ".ask", "ask": ".ask",
         "RayFailed": ".ray_jobs", "cluster": ".ray_jobs", "ray_module": ".ray_jobs",
         "worker_error": ".ray_jobs", "daemon_request": ".hooks_daemon"}

__all__ = ["CommandFailed", "LoopParams", "RayFailed", "ask", "cluster", "daemon_request",
           "fail", "positive_int", "ray_module", "worker_error"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name], __name__), name)
