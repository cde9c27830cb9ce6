"""A note whose ctime is ahead of the clocks (storage/future.py): read once, not at every sync
(session 26: it stayed RACY, read and hashed by every sync until the clock caught up), and
never a change missed: not once the file system's clock nears that ctime, not when only this
process's clock is behind (a file server whose clock runs ahead: its "future" is its present),
not on a read-only vault. A model of one file under generated clocks, skews, coarse ticks and
edits checks that no sync ever trusts a row its file has changed since."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vault.storage import folders, future
from vault.storage.folders import RACY, SETTLED_NS, stored_ctime
from vault.storage.future import FileSystemClock, stored, unchanged
from vault.storage.index import Index
from vault.storage.store import Store
from vault.storage.sync import sync

from .test_sync_identity import _body, _edit_keeping_stat, reads, two_notes  # noqa: F401

HOUR = 3600 * 10**9
_FILE_SYSTEM_NOW = future.file_system_now


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Store, Index, Path]]:
    root = two_notes(tmp_path)
    (root / ".rmh").mkdir()  # the state folder, where the clock file is
    index = Index.open(tmp_path / "index.sqlite")
    yield Store(root), index, root
    index.close()


def _clocks(monkeypatch: pytest.MonkeyPatch, process: int, file_system: int | None) -> None:
    """This process's clock and the file system's, offset from the kernel's by these ns (the
    file system's None: it cannot be read, as on a read-only vault)."""
    monkeypatch.setattr(folders, "_clock", lambda: time.time_ns() + process)
    def shifted(state: str) -> int | None:
        now = _FILE_SYSTEM_NOW(state)
        return None if now is None or file_system is None else now + file_system

    monkeypatch.setattr(future, "file_system_now", shifted)


def _clocks_at(monkeypatch: pytest.MonkeyPatch, process: int, file_system: int) -> None:
    """This process's clock and the file system's stopped at these times (ns)."""
    monkeypatch.setattr(folders, "_clock", lambda: process)
    monkeypatch.setattr(future, "file_system_now", lambda state: file_system)


def test_a_file_dated_ahead_of_the_clocks_is_read_once(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str]) -> None:  # noqa: F811
    """The clock set back an hour after the notes were written: the first sync reads them, the
    next ones read nothing; an edit is still seen; once the clock comes near their ctimes they
    are read again, and once past, they settle."""
    store, index, root = vault
    _clocks(monkeypatch, -HOUR, -HOUR)
    sync(store, index, workers=1)
    assert sorted(reads) == ["b.md", "sub/a.md"]
    assert all(r.ctime_ns < folders.LEGACY for r in index.stats().values())
    for _ in range(3):
        reads.clear()
        assert not sync(store, index, workers=1).changed and reads == []
    _edit_keeping_stat(root / "sub" / "a.md", "alpha hippo\n")  # a new ctime: the kernel's
    reads.clear()
    assert sync(store, index, workers=1).updated == ["sub/a.md"] and reads == ["sub/a.md"]
    assert "hippo" in _body(index, "sub/a.md")
    # the clocks at the files' ctimes: read again, RACY. This process's at the older one's
    # and the file system's at the newer one's: both are within SETTLED_NS of each, however
    # long the syncs above took (on the kernel's clock, syncs slower than SETTLED_NS on a
    # loaded machine left b.md settled here, not read at the next step)
    ctimes = sorted(p.stat().st_ctime_ns for p in (root / "b.md", root / "sub" / "a.md"))
    _clocks_at(monkeypatch, ctimes[0], ctimes[-1])
    reads.clear()
    assert not sync(store, index, workers=1).changed
    assert sorted(reads) == ["b.md", "sub/a.md"]
    assert {r.ctime_ns for r in index.stats().values()} == {RACY}
    _clocks(monkeypatch, HOUR, HOUR)  # long past them: read once more, settled
    reads.clear()
    sync(store, index, workers=1)
    assert sorted(reads) == ["b.md", "sub/a.md"]
    reads.clear()
    assert not sync(store, index, workers=1).changed and reads == []
    assert RACY not in {r.ctime_ns for r in index.stats().values()}


@pytest.mark.parametrize("file_system", [0, None, -SETTLED_NS // 2])
def test_only_the_file_systems_clock_vouches_for_a_future_ctime(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str], file_system: int | None) -> None:  # noqa: F811
    """This process's clock an hour behind, but the file system's at the files' ctimes (a file
    server whose clock runs ahead: the ctime is its present), unreadable, or within SETTLED_NS:
    the files stay RACY and every sync reads them, as the racy rule wants."""
    store, index, _ = vault
    _clocks(monkeypatch, -HOUR, file_system)
    sync(store, index, workers=1)
    for _ in range(2):
        reads.clear()
        assert not sync(store, index, workers=1).changed
        assert sorted(reads) == ["b.md", "sub/a.md"]
    assert {r.ctime_ns for r in index.stats().values()} == {RACY}


def test_without_the_state_folder_the_clock_is_unknown(
        vault: tuple[Store, Index, Path]) -> None:
    """A read-only vault (no state folder given) or a missing one: no clock, no file made."""
    _, _, root = vault
    assert FileSystemClock(None)() is None
    assert future.file_system_now(str(root / "missing")) is None
    assert not (root / "missing").exists()
    assert FileSystemClock(str(root / ".rmh"))() is not None
    assert (root / ".rmh" / future.CLOCK_FILE).is_file()


@pytest.mark.parametrize("kind", ["fifo", "folder", "link", "hard link"])
def test_a_clock_file_that_is_no_file_is_no_clock(
        vault: tuple[Store, Index, Path], monkeypatch: pytest.MonkeyPatch,
        reads: list[str], kind: str) -> None:  # noqa: F811
    """`.rmh/clock` replaced by a FIFO (session 26 review: the open for writing waited for a
    reader, and the sync hung for good), a folder, a link to a file or a hard link to a note
    (its times were set to now at each sync): no clock, the files stay RACY, the sync ends,
    and no file's times change through it."""
    store, index, root = vault
    clock = root / ".rmh" / future.CLOCK_FILE
    target = root.parent / "outside"
    target.write_text("x")
    os.utime(target, ns=(10**18, 10**18))
    made: dict[str, Callable[[], None]] = {
        "fifo": lambda: os.mkfifo(clock), "folder": clock.mkdir,
        "link": lambda: clock.symlink_to(target), "hard link": lambda: clock.hardlink_to(target)}
    made[kind]()
    _clocks(monkeypatch, -HOUR, 0)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(sync(store, index, workers=1)),
                              daemon=True)
    worker.start()
    worker.join(20)
    assert done, "the sync did not end"
    assert future.file_system_now(str(root / ".rmh")) is None
    assert {r.ctime_ns for r in index.stats().values()} == {RACY}
    reads.clear()
    sync(store, index, workers=1)
    assert sorted(reads) == ["b.md", "sub/a.md"]
    assert target.read_text() == "x" and target.stat().st_mtime_ns == 10**18


# -- the model -----------------------------------------------------------------------------


class _Clock(FileSystemClock):
    """The simulated file system's clock as its probe reads it (floored to the tick)."""

    def __init__(self, now: int) -> None:
        super().__init__(None)
        self.value = now

    def __call__(self) -> int | None:
        return self.value


@dataclass
class _File:
    ctime: int
    version: int = 0


STEP = st.one_of(
    st.tuples(st.just("wait"), st.sampled_from([1, 10**9 // 4, SETTLED_NS, SETTLED_NS + 1])),
    st.tuples(st.just("wait"), st.integers(0, 3 * SETTLED_NS)),
    st.tuples(st.just("wait"), st.sampled_from([HOUR - SETTLED_NS, HOUR, 2 * HOUR])),
    st.tuples(st.just("reach"), st.sampled_from([-SETTLED_NS - 1, -SETTLED_NS, -SETTLED_NS // 2,
                                                 -1, 0, 1])),  # near the file's ctime
    st.tuples(st.just("edit"), st.just(0)),
    st.tuples(st.just("sync"), st.just(0)),
)



def _offsets(low: int, high: int) -> st.SearchStrategy[int]:
    """Offsets in [low, high] at every scale (st.integers alone mostly draws small ones)."""
    marks = [low, -HOUR, -10 * SETTLED_NS, -SETTLED_NS - 1, -SETTLED_NS, -SETTLED_NS // 2, 0,
             SETTLED_NS // 4, SETTLED_NS, SETTLED_NS + 1, 10 * SETTLED_NS, HOUR, high]
    return st.one_of(st.sampled_from([m for m in marks if low <= m <= high]),
                     st.integers(low, high))


@settings(max_examples=400, deadline=None)
# a server's clock an hour ahead of this process's: a second edit in the same tick
@example(ahead=0, skew=-HOUR, tick=10**9,
         steps=[("edit", 0), ("sync", 0), ("edit", 0), ("sync", 0)])
# the clock set back an hour, then reaching the file's ctime: an edit in that very tick
@example(ahead=HOUR, skew=0, tick=10**9,
         steps=[("sync", 0), ("sync", 0), ("reach", 0), ("edit", 0), ("sync", 0)])
@example(ahead=HOUR, skew=0, tick=1,
         steps=[("sync", 0), ("reach", -SETTLED_NS), ("edit", 0), ("sync", 0)])
@given(ahead=_offsets(-HOUR, 2 * HOUR), skew=_offsets(-2 * HOUR, SETTLED_NS // 4),
       tick=st.sampled_from([1, 10**6, 10**9, 2 * 10**9 // 4]),
       steps=st.lists(STEP, min_size=1, max_size=40))
def test_no_sync_trusts_a_row_its_file_changed_since(
        ahead: int, skew: int, tick: int, steps: list[tuple[str, int]]) -> None:
    """One file, every stat but the ctime equal across edits (the worst case), on a file
    system of timestamp `tick` whose clock starts `ahead` behind the file's ctime (set back
    after the file was written; negative: the file is older); this process's clock is the
    file system's plus `skew` (no more than the settled rule allows ahead of it). Edits stamp
    the file system's time floored to the tick; each sync lists, probes the clock and reads as
    sync.py does. After every sync the row holds the file's latest version."""
    t = 10**18
    file = _File(ctime=(t + ahead) // tick * tick)
    row_ctime, row_version = RACY, -1
    for kind, amount in steps:
        if kind == "wait":
            t += amount
        elif kind == "reach":  # the clock moves on to near the file's ctime (never back)
            t = max(t, file.ctime + amount)
        elif kind == "edit":
            file = _File(ctime=t // tick * tick, version=file.version + 1)
        else:
            process, clock = t + skew, _Clock(t // tick * tick)
            listed = file.ctime
            if row_ctime == listed or unchanged(row_ctime, listed, clock):
                assert row_version == file.version, (kind, t, row_ctime, listed)
                continue
            row_ctime, row_version = stored(listed, process, clock), file.version
            assert row_ctime in (listed, RACY, -listed)
            assert row_ctime != listed or stored_ctime(listed, process) == listed
