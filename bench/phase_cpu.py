"""CPU seconds per phase of one cold `rmh search` (issue 33 item 5), unprofiled.

    python bench/phase_cpu.py VAULT "query"

Runs `python -m harness` in this process with a CPU-clock wrapper (`time.thread_time`: the
ONNX session may be made in its own thread, beside the snapshot) around the phases a cold
search passes through (sync's stat pass, the snapshot, the derived structures, the encoder's
construction, the ONNX session) and prints each phase's seconds and the process's total CPU
(its rusage) to stderr. A function imported under two modules' names shows under both.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import resource
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

SPOTS = [
    ("vault.storage.sync", "sync"),
    ("vault.storage.snapshot", "build_snapshot"),
    ("vault.storage.live", "build_snapshot"),
    ("vault.retrieval.derived", "build_derived"),
    ("vault.retrieval.pipeline", "build_derived"),
    ("vault.retrieval.encoders", "cpu_session"),
]
TIMES: dict[str, float] = {}


def _wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*a: Any, **k: Any) -> Any:
        t = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            TIMES[name] = TIMES.get(name, 0.0) + time.thread_time() - t
    return run


def main() -> None:
    t0 = time.process_time()
    for mod, attr in SPOTS:
        m = importlib.import_module(mod)
        if hasattr(m, attr):
            setattr(m, attr, _wrap(f"{mod}.{attr}", getattr(m, attr)))
    from vault.retrieval import encoders
    setattr(encoders.MiniLmEncoder, "__init__",  # noqa: B010 (a method: mypy forbids =)
            _wrap("encoder init", encoders.MiniLmEncoder.__init__))
    TIMES["imports (vault, numpy)"] = time.process_time() - t0
    vault_path, query = sys.argv[1], sys.argv[2]
    sys.argv = ["rmh", "--vault", vault_path, "search", query, "--json"]
    with contextlib.suppress(SystemExit):
        runpy.run_module("harness", run_name="__main__", alter_sys=True)  # `python -m harness`
    ru = resource.getrusage(resource.RUSAGE_SELF)
    for k, v in TIMES.items():
        print(f"{k:28s} {v:.3f}", file=sys.stderr)
    print(f"{'process CPU (rusage)':28s} {ru.ru_utime + ru.ru_stime:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
