"""The folder scan split over worker processes, for vaults where one core is the limit.

At 10^6 notes a no-op sync is one `fstatat` per note, about 2-4 us each of system time here:
seconds on one core. `list_tree(root, expected, workers)` lists the first levels of the tree in
this process until there are SPLIT_FACTOR sub-trees per worker, cuts those sub-trees (in
folder order) into up to SPLIT_FACTOR jobs per worker of about equal weight (indexed notes
below, `jobs`), and hands them out dynamically: one thread per worker, each taking its next
job when the last one came back. The cost of a note is not uniform (where its dentry sits in
the kernel's hash chain, the folder's size, how busy the worker's core is), so a static split
leaves one worker idle while the other finishes. Each worker first takes the jobs of its own
share (the same ones every sync, so its directory cache in folders.py stays warm), then the
last jobs of the longest share left (`_Queue`). Every folder's `Listing` comes back sorted by
folder: the result does not depend on the split, the timing or the worker count, since each
folder is listed by the same `list_folder` and the caller merges by path. A job carries only
the expected digests of its own folders. Workers are plain `python -m vault.storage.scan_pool`
subprocesses speaking pickle over their pipes (no multiprocessing: nothing of the parent is
re-imported or copied), started on first use and kept. A worker that cannot be started or
dies is replaced by this process: one thread of it walks in process, from the job the worker
did not return on (same result, slower); the dead worker is replaced on the next call.
"""

from __future__ import annotations

import atexit
import heapq
import os
import pickle
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping
from typing import IO, cast

from .folders import FolderDigest, Listing, list_folder, walk

SPLIT_FACTOR = 16  # sub-trees listed before the split, and jobs cut, per worker

Job = tuple[list[str], dict[str, bytes]]  # sub-tree tops (folder order), their expected digests


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
    target = SPLIT_FACTOR * workers
    out, tops = _frontier(root, expected, digests, target)
    if tops:
        out.extend(_parallel(root, jobs(tops, expected, target), workers))
    return sorted(out, key=lambda listing: listing.folder)


def _frontier(root: str, expected: Mapping[str, FolderDigest], digests: Mapping[str, bytes],
              target: int) -> tuple[list[Listing], list[str]]:
    """The folders listed here and the sub-trees left for the workers. The heaviest sub-tree
    (1 + its indexed notes; ties: the shallower, then by name) is listed here and replaced
    by its sub-folders while it outweighs a `target`-th of the vault, unless a SPLIT_FACTOR-th
    of its weight is its own notes (then it stays whole). Without an index (all weigh 1) the
    sub-trees are split so until there are `target` of them. At most 4 * `target` here."""
    weight: dict[str, int] = {}
    for folder, (_, paths) in expected.items():
        up = folder
        while True:
            weight[up] = weight.get(up, 1) + len(paths)
            if not up:
                break
            up = up.rpartition("/")[0]
    job = weight.get("", 1) / target

    def key(folder: str) -> tuple[int, int, str]:
        return -weight.get(folder, 1), folder.count("/") + bool(folder), folder

    here: list[Listing] = []
    heap = [key("")]
    kept: list[str] = []
    while heap and len(here) < 4 * target:
        neg, _, folder = heap[0]
        own = len(expected[folder][1]) if folder in expected else 0
        if (-neg <= job) if expected else (len(heap) + len(kept) >= target):
            break
        heapq.heappop(heap)
        if own * SPLIT_FACTOR > -neg:
            kept.append(folder)
            continue
        listing, subdirs = list_folder(root, folder, digests.get(folder))
        here.append(listing)
        for sub in subdirs:
            heapq.heappush(heap, key(sub))
    return here, kept + [folder for _, _, folder in heap]


def jobs(tops: list[str], expected: Mapping[str, FolderDigest], count: int) -> list[Job]:
    """The sub-trees at `tops` cut, in folder order, into at most `count` runs of about equal
    weight (1 + the indexed notes below each top), each with the expected digests of the
    folders below its tops only (what a worker needs)."""
    top_set = set(tops)
    weight = dict.fromkeys(tops, 1)
    share: dict[str, dict[str, bytes]] = {t: {} for t in tops}
    for folder, (d, paths) in expected.items():
        top = folder
        while top not in top_set and top:
            top = top.rpartition("/")[0]
        if top in top_set:
            weight[top] += len(paths)
            share[top][folder] = d
    total = sum(weight.values())
    out: list[Job] = []
    run: list[str] = []
    done = 0
    for top in sorted(tops):
        run.append(top)
        done += weight[top]
        if done * count >= total * (len(out) + 1):  # past the next cut: at most `count` runs
            out.append((run, {f: d for t in run for f, d in share[t].items()}))
            run = []
    if run:
        out.append((run, {f: d for t in run for f, d in share[t].items()}))
    return out


class _Queue:
    """Job numbers, one share of consecutive jobs per worker slot; a slot takes the first of
    its own share and, once that is empty, the last of the longest share (ties: the lowest
    slot). Thread-safe; the same shares every call, so each worker mostly lists the folders
    it listed last time."""

    def __init__(self, jobs: int, slots: int) -> None:
        self._lock = threading.Lock()
        self._shares = [deque(range(k * jobs // slots, (k + 1) * jobs // slots))
                        for k in range(slots)]

    def take(self, slot: int) -> int | None:
        with self._lock:
            own = self._shares[slot]
            if own:
                return own.popleft()
            longest = max(self._shares, key=len)
            return longest.pop() if longest else None


def _run_slot(slot: int, worker: _Worker | None, queue: _Queue, root: str, todo: list[Job],
              results: list[list[Listing] | None]) -> None:
    """One slot's loop: jobs through its worker, or walked here once it has none."""
    while (j := queue.take(slot)) is not None:
        tops, expected = todo[j]
        if worker is not None:
            try:
                worker.send((root, tops, expected))
                results[j] = worker.receive()
                continue
            except (OSError, EOFError, pickle.UnpicklingError):
                worker.proc.kill()  # out of step with its pipe: replaced next time
                worker.proc.wait()
                worker = None  # this job and the slot's next ones: walked here
        results[j] = walk(root, tops, expected)


def _parallel(root: str, todo: list[Job], n: int) -> list[Listing]:
    results: list[list[Listing] | None] = [None] * len(todo)
    errors: list[BaseException] = []

    def run(slot: int, worker: _Worker | None, queue: _Queue) -> None:
        try:
            _run_slot(slot, worker, queue, root, todo, results)
        except BaseException as exc:  # raised in the caller, after every slot stopped
            errors.append(exc)

    with _lock:
        started = [w for w in _pool(n) if w is not None]
        slots: list[_Worker | None] = [*started, *([None] if len(started) < n else [])]
        queue = _Queue(len(todo), len(slots))
        threads = [threading.Thread(target=run, args=(k, w, queue), daemon=True)
                   for k, w in enumerate(slots)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    return [listing for listings in results if listings is not None for listing in listings]


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
