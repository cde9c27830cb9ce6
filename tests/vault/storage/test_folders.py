"""vault.storage.folders and scan_pool: per-folder digests, the split scan, and sync over them.

Real files, real worker subprocesses. The split must not change a listing, a scan or a sync
report; a folder whose digest matches is not looked at one by one, and every change a stat
can see (size, mtime, inode, a new, gone or renamed file) still makes its folder differ."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from vault.storage import folders, scan_pool
from vault.storage.index import Index
from vault.storage.store import MAX_NOTE_BYTES, Store
from vault.storage.sync import sync


def test_md_suffix_tuple_matches_lowercasing_over_all_of_unicode() -> None:
    chars = (chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert [c for c in chars if any(x in c.lower() for x in ".md") and c not in ".mdMD"] == []
    for name in ("a.md", "a.MD", "a.Md", "a.mD", "a.mdx", "md", ".md", "a.m d"):
        assert name.endswith(folders._MD) == name.lower().endswith(".md")


def _vault(root: Path, folders_n: int = 24) -> Store:
    """Enough folders for the scan to reach the workers, and the oddities scans report."""
    for k in range(folders_n):
        sub = root / f"f{k:02d}" / ("deep" if k % 5 == 0 else "")
        sub.mkdir(parents=True, exist_ok=True)
        for j in range(k % 4 + 1):
            (sub / f"n{j}.md").write_text(f"note {k} {j}\n")
    (root / "top.md").write_text("top\n")
    (root / "UPPER.MD").write_text("upper\n")
    (root / "f03" / "notes.txt").write_text("not a note\n")
    (root / "f04" / ".hidden.md").write_text("hidden\n")
    (root / "f05" / ".obsidian").mkdir()
    (root / "f05" / ".obsidian" / "x.md").write_text("hidden\n")
    (root / "f06" / "big.md").write_bytes(b"x" * (MAX_NOTE_BYTES + 1))
    (root / "f07" / "tab\there.md").write_text("refused name\n")
    os.mkfifo(root / "f08" / "fifo.md")
    (root / "f09" / "alias.md").symlink_to("n0.md")
    (root / "f10" / "out").symlink_to("/")
    (root / "f11" / "folder.md").mkdir()
    (root / "f11" / "folder.md" / "inner.md").write_text("inner\n")
    return Store(root)


def test_split_listings_equal_the_one_process_listings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _vault(tmp_path / "v")
    monkeypatch.setattr(scan_pool, "SPLIT_FACTOR", 4)  # the 24 folders are enough sub-trees
    one = store.listings()
    assert [x.folder for x in one] == sorted(x.folder for x in one)
    for workers in (2, 3):
        assert store.listings(workers=workers) == one
    assert len(scan_pool._workers) >= 2  # the split really ran in worker processes
    skipped = {s.path: s.reason for x in one for s in store.notes_in(x)[1]}
    assert skipped == {
        "f06/big.md": f"larger than {MAX_NOTE_BYTES} bytes",
        "f07/tab\\x09here.md": "refused name: control character U+0009",
        "f08/fifo.md": "not a regular file",
        "f09/alias.md": "symlink inside vault (not followed)",
        "f10/out": "symlink outside vault",
    }


def _wide(root: Path) -> tuple[Store, Mapping[str, folders.FolderDigest]]:
    """The oddities vault plus 3 x 40 folders of uneven sizes below two levels, indexed."""
    store = _vault(root)
    for group in ("a", "b", "c"):
        for k in range(40):
            sub = root / "wide" / group / f"d{k:02d}"
            sub.mkdir(parents=True)
            for j in range(k % 7 + 1):
                (sub / f"n{j}.md").write_text(f"{group} {k} {j}\n")
    index = Index.open(root.parent / "index.sqlite")
    sync(store, index, workers=1)
    return store, index.stat_folders()[1]


Hook = Callable[[scan_pool._Worker, int], None]  # (worker, its jobs sent before this one)


class _Sends:
    """Records every job sent to a worker (worker pid, tops); `before` and `after` run around
    each real send."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, before: Hook = lambda w, n: None,
                 after: Hook = lambda w, n: None) -> None:
        self.sent: list[tuple[int, tuple[str, ...]]] = []
        real = scan_pool._Worker.send

        def send(worker: scan_pool._Worker, job: tuple[str, list[str], dict[str, bytes]]
                 ) -> None:
            n = self.per_worker().get(worker.proc.pid, 0)
            before(worker, n)
            self.sent.append((worker.proc.pid, tuple(job[1])))
            real(worker, job)
            after(worker, n)

        monkeypatch.setattr(scan_pool._Worker, "send", send)

    def per_worker(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for pid, _ in self.sent:
            out[pid] = out.get(pid, 0) + 1
        return out


def test_many_jobs_over_two_workers_list_as_one_worker_and_the_walk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, expected = _wide(tmp_path / "v")
    digests = {f: d for f, (d, _) in expected.items()}
    walked = sorted(folders.walk(str(tmp_path / "v"), [""], digests), key=lambda x: x.folder)
    assert store.listings(expected, 1) == walked
    sends = _Sends(monkeypatch)
    for _ in range(2):  # the second time with the workers' directory caches warm
        assert store.listings(expected, 2) == walked
    per_worker = sends.per_worker()
    assert len(per_worker) == 2, per_worker  # both workers answered
    assert len(sends.sent) >= 2 * 16  # many jobs per worker, each sub-trees in folder order
    assert all(list(tops) == sorted(tops) for _, tops in sends.sent)
    tops = [t for _, job in sends.sent[:len(sends.sent) // 2] for t in job]
    assert sorted(tops) == sorted(set(tops))  # each sub-tree in one job per call


def test_jobs_cut_the_sub_trees_in_folder_order_with_their_own_digests(
        tmp_path: Path) -> None:
    _, expected = _wide(tmp_path / "v")
    tops = [f"wide/{g}/d{k:02d}" for g in "cba" for k in range(40)] + ["f01", "f05"]
    cut = scan_pool.jobs(tops, expected, 10)
    assert 1 < len(cut) <= 10
    assert [t for run, _ in cut for t in run] == sorted(tops)
    for run, digests in cut:
        below = {f for f in expected if any(f == t or f.startswith(t + "/") for t in run)}
        assert digests == {f: expected[f][0] for f in below}
    weights = [sum(len(expected[f][1]) + (f in run) for f in d) for run, d in cut]
    assert max(weights) <= 2 * sum(weights) / len(cut) + 7  # about equal: one top at most over
    assert scan_pool.jobs(tops, expected, 1) == [(sorted(tops), {f: expected[f][0] for f
                                                  in expected if f.startswith(("wide/", "f01",
                                                                               "f05"))})]


def test_the_queue_serves_own_shares_first_then_the_longest_from_its_end() -> None:
    queue = scan_pool._Queue(10, 3)  # shares: 0-2, 3-5, 6-9
    assert [queue.take(0) for _ in range(3)] == [0, 1, 2]
    assert queue.take(0) == 9  # own share done: the last of the longest (slot 2's)
    assert queue.take(0) == 5  # slots 1 and 2 tie at 3 left: the lowest slot's
    assert [queue.take(2) for _ in range(4)] == [6, 7, 8, 4]
    assert [queue.take(1) for _ in range(2)] == [3, None]


def test_a_stalled_worker_leaves_the_other_jobs_to_the_other_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, expected = _wide(tmp_path / "v")
    one = store.listings(expected, 1)
    store.listings(expected, 2)  # both workers started
    first = scan_pool._workers[0]
    cut: list[int] = []
    real_jobs = scan_pool.jobs

    def jobs(tops: list[str], exp: Mapping[str, folders.FolderDigest], count: int
             ) -> list[scan_pool.Job]:
        out = real_jobs(tops, exp, count)
        cut.append(len(out))
        return out

    def stall(worker: scan_pool._Worker, n: int) -> None:
        if worker is first and n == 0:  # its first job waits until every other one is sent
            os.kill(first.proc.pid, signal.SIGSTOP)
            threading.Thread(target=resume, daemon=True).start()

    def resume() -> None:
        while len(sends.sent) < cut[0]:
            time.sleep(0.01)
        os.kill(first.proc.pid, signal.SIGCONT)

    monkeypatch.setattr(scan_pool, "jobs", jobs)
    sends = _Sends(monkeypatch, before=stall)
    assert store.listings(expected, 2) == one
    assert cut[0] > 8 and len(sends.sent) == cut[0]
    assert sends.per_worker()[first.proc.pid] == 1  # the other worker took all the others


def test_a_worker_dying_mid_way_leaves_its_jobs_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, expected = _wide(tmp_path / "v")
    one = store.listings(expected, 1)
    store.listings(expected, 2)
    victim = scan_pool._workers[1]
    dead = threading.Event()

    def stop(worker: scan_pool._Worker, n: int) -> None:
        if worker is not victim:  # the others wait, or a loaded victim's share is taken
            dead.wait(60)
        elif n == 1:  # its second job: it will not have read it
            os.kill(worker.proc.pid, signal.SIGSTOP)

    def die(worker: scan_pool._Worker, n: int) -> None:
        if worker is victim and n == 1:  # the job sent: it dies without answering
            worker.proc.kill()
            worker.proc.wait()
            dead.set()

    here: list[list[str]] = []
    real_walk = folders.walk

    def walk(root: str, tops: list[str], exp: Mapping[str, bytes]) -> list[folders.Listing]:
        here.append(tops)
        return real_walk(root, tops, exp)

    monkeypatch.setattr(scan_pool, "walk", walk)  # what the slots walk here
    sends = _Sends(monkeypatch, before=stop, after=die)
    assert store.listings(expected, 2) == one
    assert victim.proc.poll() is not None
    assert sends.per_worker()[victim.proc.pid] == 2  # nothing more sent to it
    lost = [list(tops) for pid, tops in sends.sent if pid == victim.proc.pid][1]
    assert here[0] == lost  # the job it did not answer: walked here, then the slot's next
    assert store.listings(expected, 2) == one  # and it is replaced
    assert victim not in scan_pool._workers and len(scan_pool._workers) >= 2
    assert all(w.proc.poll() is None for w in scan_pool._workers)


def test_one_of_two_workers_that_cannot_start_leaves_its_share_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, expected = _wide(tmp_path / "v")
    one = store.listings(expected, 1)
    scan_pool.close_workers()
    real = scan_pool._Worker
    made: list[scan_pool._Worker] = []

    def one_only() -> scan_pool._Worker:
        if made:
            raise OSError("exec refused")
        made.append(real())
        return made[0]

    monkeypatch.setattr(scan_pool, "_Worker", one_only)
    assert store.listings(expected, 2) == one
    assert scan_pool._workers == made


def test_a_folder_matching_its_digest_lists_no_names(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # the notes as if written long ago: a recent one is indexed RACY (folders.stored_ctime)
    monkeypatch.setattr(folders, "_clock", lambda: time.time_ns() + 3600 * 10**9)
    store = _vault(tmp_path / "v")
    index = Index.open(tmp_path / "index.sqlite")
    sync(store, index, workers=1)
    _, expected = index.stat_folders()
    for workers in (1, 2):
        listings = store.listings(expected, workers)
        looked = [x.folder for x in listings if x.folder in expected and not x.same]
        assert looked == ["f07"]  # a refused name is not in the index: looked at each time
        assert all(not x.names for x in listings if x.same)
        assert all(not x.same for x in listings if x.folder not in expected)
    assert expected["f00/deep"][1] == ("f00/deep/n0.md",)


def _edits(root: Path) -> list[tuple[str, Callable[[], object]]]:
    """Changes a stat can see, one at a time: (what, the change)."""
    n1 = root / "f01" / "n1.md"
    n2 = root / "f02" / "n2.md"
    return [
        ("size", lambda: n1.write_text("note 1 1 and more\n")),
        ("mtime only (same size)", lambda: os.utime(n2, ns=(1, 1))),
        ("inode (same size, same mtime)", lambda: _same_stat_new_inode(root / "f03" / "n0.md")),
        ("new file", lambda: (root / "f12" / "new.md").write_text("new\n")),
        ("new folder", lambda: _write(root / "g" / "h" / "x.md", "x\n")),
        ("removed", lambda: (root / "f13" / "n0.md").unlink()),
        ("renamed", lambda: (root / "f14" / "n0.md").rename(root / "f14" / "moved.md")),
        ("folder removed", lambda: shutil.rmtree(root / "f15")),
    ]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _same_stat_new_inode(path: Path) -> None:
    info = path.stat()
    tmp = path.with_name("tmp.txt")
    tmp.write_bytes(path.read_bytes())
    os.utime(tmp, ns=(info.st_atime_ns, info.st_mtime_ns))
    tmp.replace(path)


@pytest.mark.parametrize("workers", [1, 2])
def test_sync_sees_every_stat_change_and_reports_like_one_process(
        tmp_path: Path, workers: int) -> None:
    root = tmp_path / "v"
    store = _vault(root)
    index = Index.open(tmp_path / "index.sqlite")
    first = sync(store, index, workers=workers)
    assert len(first.added) == sum(k % 4 + 1 for k in range(24)) + 3
    assert sync(store, index, workers=workers).to_json() == {**first.to_json(), "added": [],
                                                              "generation": 1}
    for what, change in _edits(root):
        gen, cache = index.generation(), index._stats
        change()
        report = sync(store, index, workers=workers)
        assert index._stats is cache, what  # patched by the commit, not read again
        assert report.changed or what.startswith("mtime") or what.startswith("inode"), what
        assert index.generation() == gen + report.changed, what
        rows = {p: (r.size, r.mtime_ns, r.inode) for p, r in index.stats().items()}
        now = {f.path: (f.size, f.mtime_ns, f.inode) for f in store.scan().files}
        assert rows == now, what  # the index holds every stat the folder has
        fresh = Index.open(tmp_path / "index.sqlite")  # the cache, patched by each commit,
        assert index.stat_folders() == fresh.stat_folders(), what  # equals a fresh load
        fresh.close()
        assert not sync(store, index, workers=workers).changed, what


def test_a_worker_that_cannot_start_leaves_the_work_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _vault(tmp_path / "v")
    one = store.listings()

    class NoExec:
        def __init__(self) -> None:
            raise OSError("exec refused")

    scan_pool.close_workers()
    monkeypatch.setattr(scan_pool, "_Worker", NoExec)
    assert store.listings(workers=2) == one
    assert scan_pool._workers == []


def test_a_settled_folder_is_not_read_again_and_every_change_still_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    store = _vault(root)
    index = Index.open(tmp_path / "index.sqlite")
    monkeypatch.setattr(folders, "_listed", {})
    real_clock, real_listdir = folders._clock, os.listdir
    monkeypatch.setattr(folders, "_clock", lambda: real_clock() + 10 * folders.SETTLED_NS)
    reads: list[int] = []

    def listdir(fd: int) -> list[str]:
        reads.append(fd)
        return real_listdir(fd)

    monkeypatch.setattr(os, "listdir", listdir)
    sync(store, index, workers=1)
    folders_n = len(reads)
    sync(store, index, workers=1)
    assert len(reads) == folders_n  # every folder settled: none read again, all stat'ed
    for what, change in _edits(root):
        time.sleep(0.05)  # past the file-system clock tick of the last listing
        before = len(reads)
        change()
        sync(store, index, workers=1)
        assert len(reads) - before <= 3, what  # only the folders whose entries changed
        rows = {p: (r.size, r.mtime_ns, r.inode) for p, r in index.stats().items()}
        cached = {f.path: (f.size, f.mtime_ns, f.inode) for f in store.scan().files}
        folders._listed.clear()
        truth = {f.path: (f.size, f.mtime_ns, f.inode) for f in store.scan().files}
        assert rows == cached == truth, what


def test_a_folder_changed_as_it_is_listed_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    store = _vault(root)
    monkeypatch.setattr(folders, "_listed", {})
    # the clock at the oldest folder's ctime, for good: on the real one a listing that began
    # SETTLED_NS after the folders were made kept them (a loaded machine)
    oldest = min(p.stat().st_ctime_ns for p in [root, *root.rglob("*")] if p.is_dir())
    monkeypatch.setattr(folders, "_clock", lambda: oldest)
    store.listings()
    assert folders._listed == {}  # ctimes of just now are not settled: nothing kept


def test_dead_workers_are_replaced(tmp_path: Path) -> None:
    store = _vault(tmp_path / "v")
    one = store.listings(workers=2)
    for worker in scan_pool._workers:
        worker.proc.kill()
        worker.proc.wait()
    assert store.listings(workers=2) == one
    assert all(w.proc.poll() is None for w in scan_pool._workers)



def _lean(folder: Path, names: list[str], loop: Callable[[int, list[bytes]], bytes | None]
          = folders._stat_notes) -> tuple[list[int], list[int], list[int], list[int]] | None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        packed = loop(fd, [os.fsencode(n) for n in names])
    finally:
        os.close(fd)
    return None if packed is None else folders._unpacked(packed, len(names))


def _native_required() -> None:
    """Skip without the C loop, unless CI said it must be there (RMH_REQUIRE_NATIVE)."""
    if not folders.NATIVE:
        if os.environ.get("RMH_REQUIRE_NATIVE"):
            pytest.fail("vault/storage/_stat_loop.c was not built (RMH_REQUIRE_NATIVE is set)")
        pytest.skip("the C stat loop was not built here")


def _both_loops(fd: int, names: list[bytes]) -> bytes | None:
    """The C loop's answer, checked equal to the Python loop's."""
    assert folders._native is not None
    native = folders._native(fd, names, MAX_NOTE_BYTES)
    assert native == folders._stat_notes_py(fd, names)
    return native


@pytest.mark.parametrize("loop", [folders._stat_notes, folders._stat_notes_py])
def test_the_lean_path_takes_plain_notes_only(
        tmp_path: Path, loop: Callable[[int, list[bytes]], bytes | None]) -> None:
    root = tmp_path / "v"
    _vault(root)
    n0 = (root / "f01" / "n0.md").stat()
    assert _lean(root / "f01", ["n0.md"], loop) == ([n0.st_size], [n0.st_mtime_ns],
                                                     [n0.st_ino], [n0.st_ctime_ns])
    for folder, odd in [("f06", "big.md"), ("f08", "fifo.md"), ("f09", "alias.md"),
                        ("f11", "folder.md"), ("f01", "gone.md")]:
        assert _lean(root / folder, ["n0.md", odd], loop) is None, odd  # the full rules decide
    assert _lean(root / "f01", [], loop) == ([], [], [], [])


def test_the_c_loop_gives_the_python_loop_s_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same packed stats from both loops on every folder (plain, odd, empty, a name that is
    not UTF-8, an mtime past 2262), so the digests and listings are the same whichever ran."""
    _native_required()
    root = tmp_path / "v"
    _vault(root)
    (root / "empty").mkdir()
    with open(os.fsencode(root / "f01") + b"/b\xff\xfe.md", "wb") as fh:
        fh.write(b"not utf-8 named")
    late = 10_413_792_000 * 10**9 + 123  # 2300-01-01, past int64 nanoseconds
    os.utime(root / "f02" / "n0.md", ns=(late, late))
    monkeypatch.setattr(folders, "_listed", {})
    monkeypatch.setattr(folders, "_stat_notes", _both_loops)
    walked = folders.walk(str(root), [""], {})
    monkeypatch.undo()
    monkeypatch.setattr(folders, "_native", None)  # the Python loop alone
    monkeypatch.setattr(folders, "_listed", {})
    assert folders.walk(str(root), [""], {}) == walked
    f02 = next(x for x in walked if x.folder == "f02")
    assert f02.mtimes[0] == folders.wrap64(late) < 0


def test_wrap64_keeps_int64_values_and_wraps_the_rest() -> None:
    top, bottom = 2**63 - 1, -2**63
    for value in (0, 1, -1, top, bottom, 1_700_000_000_000_000_000):
        assert folders.wrap64(value) == value
    assert folders.wrap64(top + 1) == bottom and folders.wrap64(bottom - 1) == top
    assert folders.wrap64(2**64 - 1) == -1 and folders.wrap64(2**64 + 5) == 5
    # a wrapped value packs to the same bytes an unsigned 64-bit one has
    assert folders._packed([0], [0], [2**64 - 1], [0]) == folders._packed([0], [0], [-1], [0])


def test_rmh_no_native_turns_the_c_loop_off(tmp_path: Path) -> None:
    """RMH_NO_NATIVE=1 in the environment (the scan workers inherit it) selects os.lstat;
    "0" or "" leave the C loop on where it was built."""
    _native_required()
    code = "from vault.storage import folders; print(folders.NATIVE)"
    for value, native in (("1", "False"), ("yes", "False"), ("0", "True"), ("", "True")):
        env = {**os.environ, "RMH_NO_NATIVE": value}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, cwd=Path(__file__).parents[3])
        assert out.stdout.strip() == native, value


def test_every_folder_lists_as_the_full_rules_list_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    _vault(root)
    os.chmod(root / "f02" / "n1.md", 0)  # stat'able still: a note (reading it is sync's job)
    walked = folders.walk(str(root), [""], {})
    assert [x.folder for x in walked if x.names == ("n0.md",)]  # plain folders are there
    monkeypatch.setattr(folders, "_stat_notes", lambda fd, names: None)
    folders._listed.clear()
    assert folders.walk(str(root), [""], {}) == walked


def test_names_the_file_system_cannot_decode_are_stat_ed_by_their_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean loop stats the names as the file system's bytes: a name that is not UTF-8
    (read back with surrogate escapes) is found, with the stats the full rules give it."""
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "a.md").write_text("plain", encoding="utf-8")
    with open(os.fsencode(folder) + b"/b\xff\xfe.md", "wb") as fh:
        fh.write(b"not utf-8 named")
    monkeypatch.setattr(folders, "_listed", {})
    lean, _ = folders.list_folder(str(tmp_path), "odd", None)
    assert lean.names == ("a.md", os.fsdecode(b"b\xff\xfe.md")) and lean.sizes == (5, 15)
    monkeypatch.setattr(folders, "_stat_notes", lambda fd, names: None)
    assert folders.list_folder(str(tmp_path), "odd", None)[0] == lean


@pytest.mark.parametrize("workers", [1, 2])
def test_a_note_turning_odd_in_a_settled_folder_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Growing past the size limit in place leaves the folder's ctime alone: the lean path
    must still hand the note to the full rules, and take it back once it shrinks."""
    root = tmp_path / "v"
    store = _vault(root)
    index = Index.open(tmp_path / "index.sqlite")
    monkeypatch.setattr(folders, "_listed", {})
    monkeypatch.setattr(folders, "SETTLED_NS", -10 * 10**9)  # every listing here is kept
    sync(store, index, workers=workers)
    assert not sync(store, index, workers=workers).changed
    with (root / "f01" / "n0.md").open("r+b") as f:  # in place: the folder's ctime stays
        f.truncate(MAX_NOTE_BYTES + 1)
    report = sync(store, index, workers=workers)
    assert report.skipped["f01/n0.md"] == f"larger than {MAX_NOTE_BYTES} bytes"
    with (root / "f01" / "n0.md").open("r+b") as f:
        f.truncate(0)
        f.write(b"small again\n")
    report = sync(store, index, workers=workers)
    assert report.updated == ["f01/n0.md"] and "f01/n0.md" not in report.skipped
    assert not sync(store, index, workers=workers).changed


def test_a_link_swapped_for_a_file_while_its_reason_is_read_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`os.path.realpath` raises EINVAL when a link it is reading is swapped for a file (a
    racer's renameat2 exchange): the scan raised it, and `rmh doctor` (any command) failed
    with "[Errno 22] Invalid argument: " and the link's host path. The entry is skipped
    instead."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "a.md").write_text("a\n")
    (root / "b.md").symlink_to(root / "a.md")
    real = os.path.realpath

    def swapped(path: str, *, strict: bool = False) -> str:
        if str(path).endswith("b.md"):
            raise OSError(22, "Invalid argument", str(path))
        return real(path, strict=strict)

    monkeypatch.setattr(folders, "_listed", {})
    monkeypatch.setattr(os.path, "realpath", swapped)
    scan = Store(root).scan()
    assert [f.path for f in scan.files] == ["a.md"]
    assert [(s.path, s.reason) for s in scan.skipped] == [("b.md", "symlink swapped in")]
