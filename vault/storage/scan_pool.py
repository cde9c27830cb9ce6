"""The folder scan split over worker processes, for vaults where one core is the limit.

At 10^6 notes a no-op sync is one `fstatat` per note, about 2-4 us each of system time here:
seconds on one core. `list_tree(root, expected, workers)` lists the first levels of the tree in
this process until there are enough sub-trees, hands the sub-trees to `workers` processes
(greedy by the number of indexed notes below each, largest first: deterministic), and
returns every folder's `Listing`, sorted by folder. The result does not depend on the split
or on the worker count: each folder is listed by the same `list_folder`, and the caller merges
by path. Workers are plain `python -m vault.storage.scan_pool` subprocesses speaking pickle
over their pipes (no multiprocessing: nothing of the parent is re-imported or copied),
started on first use and kept; a worker that cannot be started or dies is replaced by this
process doing its share (same result, slower).
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import IO, cast

from .folders import FolderDigest, Listing, list_folder, walk

SPLIT_FACTOR = 8  # sub-trees per worker before they are handed out (balance)


class _Worker:
    def __init__(self) -> None:
        if not sys.executable:  # an embedded interpreter: nothing to start
            raise OSError("no python executable")
        top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (top, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vault.storage.scan_pool"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env, close_fds=True)

    def send(self, job: tuple[str, list[str], dict[str, bytes]]) -> None:
        stdin = cast(IO[bytes], self.proc.stdin)
        pickle.dump(job, stdin, protocol=pickle.HIGHEST_PROTOCOL)
        stdin.flush()

    def receive(self) -> list[Listing]:
        return cast(list[Listing], pickle.load(cast(IO[bytes], self.proc.stdout)))

    def close(self) -> None:
        try:
            self.proc.communicate(timeout=5)  # EOF on stdin: the worker returns
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


_workers: list[_Worker] = []
_lock = threading.Lock()


def _pool(n: int) -> list[_Worker | None]:
    """`n` running workers (started as needed); None where one could not be started."""
    for dead in [w for w in _workers if w.proc.poll() is not None]:
        dead.close()  # its pipes
        _workers.remove(dead)
    while len(_workers) < n:
        try:
            _workers.append(_Worker())
        except OSError:  # no exec here (a sandbox): this process does the work
            break
    return [*_workers[:n], *[None] * (n - len(_workers))]


@atexit.register
def close_workers() -> None:
    """Stop the worker processes (they also stop when this process exits)."""
    with _lock:
        while _workers:
            _workers.pop().close()


def list_tree(root: str, expected: Mapping[str, FolderDigest],
              workers: int) -> list[Listing]:
    """Every folder's `Listing` below `root` (module docstring), sorted by folder."""
    digests = {folder: d for folder, (d, _) in expected.items()}
    out: list[Listing] = []
    frontier = [""]
    while frontier and len(frontier) < SPLIT_FACTOR * workers:
        nxt: list[str] = []
        for folder in frontier:
            listing, subdirs = list_folder(root, folder, digests.get(folder))
            out.append(listing)
            nxt.extend(subdirs)
        frontier = nxt
    if frontier:
        out.extend(_parallel(root, frontier, digests, expected, workers))
    return sorted(out, key=lambda listing: listing.folder)


def _parallel(root: str, tops: list[str], digests: dict[str, bytes],
              expected: Mapping[str, FolderDigest], n: int) -> list[Listing]:
    top_set = set(tops)

    def top_of(folder: str) -> str | None:
        while folder not in top_set:
            if not folder:
                return None
            folder = folder.rpartition("/")[0]
        return folder

    weight = dict.fromkeys(tops, 0)
    share: dict[str, dict[str, bytes]] = {t: {} for t in tops}
    for folder, (d, paths) in expected.items():
        t = top_of(folder)
        if t is not None:
            weight[t] += len(paths)
            share[t][folder] = d
    jobs: list[tuple[int, list[str]]] = [(0, []) for _ in range(n)]
    for t in sorted(tops, key=lambda t: (-weight[t], t)):  # largest first, to the lightest
        k = min(range(n), key=lambda k: (jobs[k][0], k))
        jobs[k] = (jobs[k][0] + weight[t] + 1, jobs[k][1] + [t])
    out: list[Listing] = []
    with _lock:
        pool = _pool(n)
        sent: list[tuple[_Worker, list[str]]] = []
        local: list[str] = []
        for worker, (_, job) in zip(pool, jobs, strict=True):
            if not job:
                continue
            job.sort()
            try:
                if worker is None:
                    raise OSError("no worker")
                worker.send((root, job, {f: d for t in job for f, d in share[t].items()}))
                sent.append((worker, job))
            except OSError:
                local.extend(job)
        for worker, job in sent:
            try:
                out.extend(worker.receive())
            except (OSError, EOFError, pickle.UnpicklingError):
                worker.proc.kill()  # out of step with its pipe: replaced next time
                local.extend(job)  # this process does that share
        if local:
            out.extend(walk(root, sorted(local), digests))
    return out


def _serve() -> None:
    """A worker: (root, tops, expected digests) in, `walk`'s listings out, until EOF."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            root, tops, expected = pickle.load(stdin)
        except EOFError:
            return
        pickle.dump(walk(root, tops, expected), stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    _serve()
