"""Where a no-op sync's time goes (issue 17): this process against the scan workers, and the
kernel's share of one `lstat`.

    python -m bench.profile_noop --vault DIR [--syncs 5] [--sample 50000] [--throttle F]

Opens an indexed vault (`Vault.init`, auto_sync off; a sync that finds nothing changed
writes nothing, and the index file's size and mtime are checked unchanged at the end), runs
the catch-up sync, then `--syncs` no-op syncs: for each the wall time, this process's CPU,
and each scan worker's user and system CPU (Linux /proc; the workers are children). Then the
dentry check: CPU per `lstat` over `--sample` of the vault's notes (in folder order, through
a folder descriptor, as the scan does) against as many files created just now in a temp
folder. A new dentry sits at the head of its hash chain in the kernel's dentry cache; the
vault's, created long before, sit behind every dentry made since, so when the cache's hash
table is small for the number of cached dentries (a kernel booted with a small
`dhash_entries`, see /proc/cmdline) the vault's stats cost more: the scan's floor is then the
machine's, not the code's.

The scan's stat loop is C when vault/storage/_stat_loop.c was built (printed first; run with
RMH_NO_NATIVE=1 for the os.lstat loop: the scan workers inherit the environment); the dentry
check then also gives the C loop's CPU per file on the vault's notes. A white-box bench: it
reads `vault.storage.folders` for that.

`--throttle F` stands in for a worker whose core is shared: one scan worker (the lowest pid)
is stopped for F of every 20 ms (SIGSTOP / SIGCONT) during the no-op syncs, so a static split
waits on it and a dynamic one hands its jobs to the other worker.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bench.report import children_cpu, print_table
from vault import Vault
from vault.storage import folders as scan_folders


def _noop(v: Vault) -> dict[str, float | str | bool]:
    before, t0, c0 = children_cpu(), time.perf_counter(), time.process_time()
    report = v.sync()
    wall, cpu, after = time.perf_counter() - t0, time.process_time() - c0, children_cpu()
    workers = sorted((u - before.get(p, (0.0, 0.0))[0], s - before.get(p, (0.0, 0.0))[1])
                     for p, (u, s) in after.items())
    busiest = max((u + s for u, s in workers), default=0.0)
    return {"wall_s": wall, "main_cpu_s": cpu, "critical_cpu_s": cpu + busiest,
            "workers_user_sys_s": " ".join(f"{u:.2f}/{s:.2f}" for u, s in workers),
            "changed": report.changed, "load1": os.getloadavg()[0]}


def _throttle(pid: int, share: float, done: threading.Event) -> None:
    """Stop `pid` for `share` of every 20 ms until `done`; it is left running."""
    try:
        while not done.is_set():
            os.kill(pid, signal.SIGSTOP)
            time.sleep(0.02 * share)
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.02 * (1 - share))
    finally:
        os.kill(pid, signal.SIGCONT)


Name = TypeVar("Name", str, bytes)


def _per_file_us(folders: list[tuple[str, list[Name]]],
                 stat_folder: Callable[[int, list[Name]], object]) -> float:
    """CPU microseconds per file of `stat_folder(fd, names)` over each folder's names,
    through its descriptor."""
    count, c0 = 0, time.process_time()
    for folder, names in folders:
        fd = os.open(folder, os.O_RDONLY)
        try:
            stat_folder(fd, names)
        finally:
            os.close(fd)
        count += len(names)
    return (time.process_time() - c0) / max(1, count) * 1e6


def _lstat_us(folders: list[tuple[str, list[str]]]) -> float:
    """One `os.lstat` per name."""
    def each(fd: int, names: list[str]) -> None:
        for name in names:
            os.lstat(name, dir_fd=fd)
    return _per_file_us(folders, each)


def _c_loop_us(folders: list[tuple[str, list[str]]]) -> float:
    """The scan's C loop over the same names (as bytes, encoded before the clock starts)."""
    loop = scan_folders._native
    assert loop is not None
    encoded = [(folder, [os.fsencode(n) for n in names]) for folder, names in folders]
    return _per_file_us(encoded, lambda fd, names: loop(fd, names, scan_folders.MAX_NOTE_BYTES))


def _sample(root: Path, n: int) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        names = sorted(f for f in files if f.endswith(".md"))[:n]
        if names:
            out.append((folder, names))
            n -= len(names)
        if n <= 0:
            break
    return out


def dentry_check(root: Path, n: int, reps: int = 5) -> dict[str, object]:
    """Median CPU per lstat: the vault's notes against files made just now."""
    old = _sample(root, n)
    with tempfile.TemporaryDirectory() as tmp:
        new: list[tuple[str, list[str]]] = []
        for _, names in old:
            fresh = os.path.join(tmp, str(len(new)))
            os.mkdir(fresh)
            for name in names:
                with open(os.path.join(fresh, name), "w") as f:
                    f.write("x\n")
            new.append((fresh, names))
        vault_us, fresh_us, c_us = [], [], []
        for _ in range(reps):  # interleaved: the same load for all
            vault_us.append(_lstat_us(old))
            fresh_us.append(_lstat_us(new))
            if scan_folders.NATIVE:
                c_us.append(_c_loop_us(old))
    out: dict[str, object] = {
        "files": sum(len(names) for _, names in old),
        "vault_lstat_us": statistics.median(vault_us),
        "fresh_lstat_us": statistics.median(fresh_us),
        "ratio": statistics.median(vault_us) / statistics.median(fresh_us)}
    if c_us:
        out["vault_c_loop_us"] = statistics.median(c_us)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    parser.add_argument("--syncs", type=int, default=5)
    parser.add_argument("--sample", type=int, default=50_000)
    parser.add_argument("--throttle", type=float, default=0.0,
                        help="stop one scan worker for this share of the time (0: never)")
    args = parser.parse_args()
    index = args.vault / ".rmh" / "index.sqlite"
    before = index.stat()
    loop = "C (vault/storage/_stat_loop.c)" if scan_folders.NATIVE else "os.lstat"
    with Vault.init(args.vault, auto_sync=False) as v:
        t0 = time.perf_counter()
        v.sync()
        print(f"cpus: {os.cpu_count()}; stat loop: {loop}; catch-up sync "
              f"{time.perf_counter() - t0:.1f} s")
        done = threading.Event()
        throttled = threading.Thread(target=_throttle, args=(min(children_cpu()), args.throttle,
                                                              done)) if args.throttle else None
        if throttled is not None:
            throttled.start()
        try:
            rows = [_noop(v) for _ in range(args.syncs)]
        finally:
            done.set()
            if throttled is not None:
                throttled.join()
    print_table(rows)
    walls = [float(r["wall_s"]) for r in rows]
    critical = [float(r["critical_cpu_s"]) for r in rows]
    print(f"no-op sync p50: wall {statistics.median(walls):.3f} s, critical-path CPU "
          f"{statistics.median(critical):.3f} s")
    after = index.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns), \
        "the index changed: not a no-op"
    print_table([dentry_check(args.vault, args.sample)])
    cmdline = Path("/proc/cmdline")
    hashes = [w for w in (cmdline.read_text().split() if cmdline.exists() else [])
              if w.startswith(("dhash_entries=", "ihash_entries="))]
    dentries = Path("/proc/sys/fs/dentry-state")
    cached = dentries.read_text().split()[0] if dentries.exists() else "?"
    print(f"kernel: {' '.join(hashes) or 'default hash sizes'}; dentries cached: {cached}")


if __name__ == "__main__":
    main()
