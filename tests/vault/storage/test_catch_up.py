"""The catch-up record (storage/catch_up.py): a new process after outside additions, edits,
renames and removals takes its snapshot from the saved base and the record, field by field
what a build from every row gives; any other history (another writer between syncs, a record
of another state or base, a garbled record, more paths than the limit, a forged removed id)
falls back to the rows;
a kill at each file operation of a process that writes the record loses nothing."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.forks import run_python
from vault.storage import catch_up, note_store, snapshot
from vault.storage.index import Index
from vault.storage.live import LiveIndex
from vault.storage.snapshot import Snapshot, build_snapshot
from vault.storage.store import Store

from .test_increment import FOLDERS, NAMES, _same, _text

ROOT = Path(__file__).resolve().parents[3]
COLUMNS = Path(".rmh") / note_store.FILE
RECORD = Path(".rmh") / catch_up.FILE


class Process:
    """What a new rmh process holds: its own store, index connection and live index."""

    def __init__(self, root: Path) -> None:
        self.store = Store(root)
        self.index = Index.open(root / ".rmh" / "index.sqlite")
        self.live = LiveIndex(self.store, self.index, None, lambda _: None)

    def snapshot(self) -> Snapshot:
        self.live.sync()
        return self.live.snapshot()

    def close(self) -> None:
        self.live.close()


def _new_process_matches_rows(root: Path) -> Snapshot:
    p = Process(root)
    try:
        snap = p.snapshot()
        _same(snap, build_snapshot(p.index))  # from every row, nothing saved
        return snap
    finally:
        p.close()


def _outside(root: Path, rng: random.Random, paths: list[str], removals: bool) -> bool:
    """One to three changes made outside rmh (an editor, a sync tool); True when one was a
    removal."""
    removed = False
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.35 or len(paths) < 4:
            rel = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)} {rng.randint(0, 99)}.md"
            if rel in paths:
                continue
            paths.append(rel)
        elif kind < 0.75:
            rel = rng.choice(paths)
        elif kind < 0.9 or not removals:  # renamed, sometimes into another folder
            old = rng.choice(paths)
            rel = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)} moved {rng.randint(0, 999)}.md"
            if rel in paths:
                continue
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.rename(root / old, root / rel)
            paths[paths.index(old)] = rel
            continue
        else:
            rel = paths.pop(rng.randrange(len(paths)))
            (root / rel).unlink()
            removed = True
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(_text(rng), encoding="utf-8")
    return removed


def _vault(tmp: Path, rng: random.Random, n: int = 12) -> tuple[Path, list[str]]:
    root = tmp / "v"
    paths = [f"{FOLDERS[k % len(FOLDERS)]}{NAMES[k % len(NAMES)]} {k}.md" for k in range(n)]
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(_text(rng), encoding="utf-8")
    (root / ".rmh").mkdir()
    _new_process_matches_rows(root)  # the first snapshot: from the rows, saved (the base)
    assert (root / COLUMNS).is_file()
    return root, paths


@pytest.mark.parametrize("seed", range(6))
def test_new_processes_after_outside_changes_catch_up_like_a_rebuild(
        tmp_path: Path, seed: int) -> None:
    """Generated histories of outside changes, own writes and two long-lived processes; after
    every step a new process's snapshot equals one from the rows, and it came from the base
    and the record whenever only this vault's own processes changed the index since the base
    was saved, removals included (the path is exercised, not only allowed)."""
    rng = random.Random(seed)
    root, paths = _vault(tmp_path, rng)
    caught_up = rebuilt = removals = total_removed = 0
    others = [Process(root), Process(root)]  # e.g. a server and a watcher-less client
    try:
        for step in range(24):
            if step % 4 == 3:  # a removal alone, the next process the first to see it
                (root / paths.pop(rng.randrange(len(paths)))).unlink()
                removed, roll = True, 1.0
            else:
                removed = _outside(root, rng, paths, removals=rng.random() < 0.5)
                roll = rng.random()
            total_removed += removed
            if roll < 0.3:  # a long-lived process syncs the change first (and records it)
                rng.choice(others).snapshot()
            elif roll < 0.45:  # a process writes a note itself, as `rmh write` does
                p = rng.choice(others)
                rel = rng.choice(paths)
                p.store.write_text(rel, _text(rng))
                p.live.sync_paths([rel])
            before = (root / COLUMNS).read_bytes()
            snap = _new_process_matches_rows(root)
            if snap.corpus.base is not None:
                caught_up += 1
                removals += removed
                assert (root / COLUMNS).read_bytes() == before  # the base stays the base
                saved = note_store.saved_state(root / ".rmh")
                assert saved is not None and saved[0] == snap.corpus.base.stamp
            else:
                rebuilt += 1
    finally:
        for p in others:
            p.close()
    # every lone removal (6) was caught up
    assert caught_up >= 8 and removals >= 6, (caught_up, rebuilt, removals, total_removed)


def test_removals_are_caught_up_and_recorded_by_id(tmp_path: Path) -> None:
    """Outside removals (one, then a rename onto an existing note, then a note added and
    removed again) are caught up from the base: the record carries the base's removed ids
    only, and each new process equals the rows."""
    rng = random.Random(6)
    root, paths = _vault(tmp_path, rng)
    base = (root / COLUMNS).read_bytes()
    first = _new_process_matches_rows(root)
    ids = dict(zip(first.corpus.paths, first.corpus.ids, strict=True))
    (root / paths[1]).unlink()
    os.replace(root / paths[2], root / paths[3])  # the note at paths[3] is gone
    (root / "new.md").write_text("[[Foo 0]]\n", encoding="utf-8")
    snap = _new_process_matches_rows(root)
    assert snap.corpus.base is not None and (root / COLUMNS).read_bytes() == base
    got = json.loads((root / RECORD).read_text(encoding="utf-8"))
    assert got["version"] == catch_up.VERSION == 2
    gone = {ids[paths[1]], ids[paths[2]], ids[paths[3]]} - set(snap.corpus.ids)
    assert set(got["removed"]) == gone and len(gone) == 2
    (root / "new.md").unlink()  # added since the base: not a removed id of the record
    snap = _new_process_matches_rows(root)
    assert snap.corpus.base is not None
    assert set(json.loads((root / RECORD).read_text(encoding="utf-8"))["removed"]) == gone


@pytest.mark.parametrize("how", ["not in the base", "still a note", "born in the base",
                                 "version 1", "not ids"])
def test_a_forged_removed_id_is_not_used(tmp_path: Path, how: str) -> None:
    rng = random.Random(11)
    root, paths = _vault(tmp_path, rng)
    (root / paths[1]).unlink()
    (root / "added.md").write_text("new\n", encoding="utf-8")
    p = Process(root)
    p.snapshot()
    kept = p.index.note_id(paths[0])
    p.close()
    got = json.loads((root / RECORD).read_text(encoding="utf-8"))
    assert len(got["removed"]) == 1 and len(got["born"]) == 1
    if how == "not in the base":
        got["removed"].append(got["born"][0] + 1000)
    elif how == "still a note":
        got["removed"].append(kept)
    elif how == "born in the base":
        got["born"].append(kept)
    elif how == "version 1":
        got["version"] = 1
    else:
        got["removed"] = [True]
    (root / RECORD).write_text(json.dumps(got), encoding="utf-8")
    assert _new_process_matches_rows(root).corpus.base is None  # the rows were read


def test_past_the_limit_a_process_rebuilds_and_saves_a_new_base(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catch_up, "limit", lambda notes: 3)
    rng = random.Random(7)
    root, paths = _vault(tmp_path, rng)
    base = (root / COLUMNS).read_bytes()
    for k, rel in enumerate(paths[:3]):
        (root / rel).write_text(f"edit {k}\n", encoding="utf-8")
        snap = _new_process_matches_rows(root)
        assert snap.corpus.base is not None and (root / COLUMNS).read_bytes() == base
    (root / paths[3]).write_text("a fourth path since the base\n", encoding="utf-8")
    snap = _new_process_matches_rows(root)
    assert snap.corpus.base is None and (root / COLUMNS).read_bytes() != base
    (root / paths[4]).write_text("and the next process catches up from the new base\n")
    assert _new_process_matches_rows(root).corpus.base is not None


@pytest.mark.parametrize("how", ["garbled", "truncated", "other state", "other base",
                                 "other base size", "not a list", "version"])
def test_a_record_that_does_not_lead_here_is_not_used(tmp_path: Path, how: str) -> None:
    rng = random.Random(3)
    root, paths = _vault(tmp_path, rng)
    (root / paths[0]).write_text("edited outside\n", encoding="utf-8")
    p = Process(root)
    p.snapshot()
    p.close()
    record = root / RECORD
    text = record.read_text(encoding="utf-8")
    got = json.loads(text)
    if how == "garbled":
        text = text.replace('"', "'", 3)
    elif how == "truncated":
        text = text[: len(text) // 2]
    else:
        key, value = {"other state": ("stamp", "0" * 64), "other base": ("base", "1" * 64),
                      "other base size": ("base_notes", got["base_notes"] + 1),
                      "not a list": ("paths", "x.md"), "version": ("version", 99)}[how]
        got[key] = value
        text = json.dumps(got)
    record.write_text(text, encoding="utf-8")
    snap = _new_process_matches_rows(root)
    assert snap.corpus.base is None  # the rows were read


def test_a_record_missing_a_path_is_a_trusted_record_like_a_forged_store(
        tmp_path: Path) -> None:
    """The record is trusted as columns saved under its stamp are (module docstring): the
    stamp names the state. This pins what it does not defend against, so a change to that
    is a decision: a record forged to leave out an edited path hides that edit."""
    rng = random.Random(4)
    root, paths = _vault(tmp_path, rng)
    (root / paths[0]).write_text("edited outside, then left out of the record\n")
    (root / paths[1]).write_text("edited outside and recorded\n")
    Process(root).snapshot()
    got = json.loads((root / RECORD).read_text(encoding="utf-8"))
    assert sorted(got["paths"]) == sorted(paths[:2])
    got["paths"] = [paths[1]]
    (root / RECORD).write_text(json.dumps(got), encoding="utf-8")
    p = Process(root)
    snap = p.snapshot()
    assert snap.corpus.base is not None
    assert "left out" not in snap.corpus.bodies[snap.corpus.paths.index(paths[0])]
    p.close()


KILLED = """
import sys
from pathlib import Path
from vault.storage.index import Index
from vault.storage.live import LiveIndex
from tests.forks import run_python
from vault.storage.store import Store
root, n = Path(sys.argv[1]), int(sys.argv[2])
store = Store(root, fault_after=n)
live = LiveIndex(store, Index.open(root / ".rmh" / "index.sqlite"), None, lambda _: None)
live.sync()
live.snapshot()
store.write_text("own.md", "written by the process\\n")
live.sync_paths(["own.md"])
live.snapshot()
live.close()
print(store.ops)
"""


def test_killed_at_each_file_operation_a_new_process_still_matches_the_rows(
        tmp_path: Path) -> None:
    """A process syncs an outside change (the stat file's splice, the record) and writes a
    note of its own (the note's operations, the record again); SIGKILLed after its N-th file
    operation for every N, the next process's snapshot equals the rows and the one after it
    catches up again."""
    rng = random.Random(5)
    root, paths = _vault(tmp_path, rng)
    pristine = tmp_path / "pristine"
    os.rename(root, pristine)
    total, n = None, 1
    while total is None or n <= total:
        subprocess.run(["cp", "-a", str(pristine), str(root)], check=True)
        (root / paths[2]).write_text("edited outside before the kill\n", encoding="utf-8")
        (root / paths[5]).unlink()  # and one removed: the record carries its id
        run = run_python(KILLED, [str(root), str(n)], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        if run.returncode == 0:
            total = int(run.stdout.split()[-1])
            assert total >= 5  # the note's, the splice's and the record's operations
        else:
            assert run.returncode == -9, run.stderr
        _new_process_matches_rows(root)
        (root / paths[3]).write_text("and one more outside edit\n", encoding="utf-8")
        _new_process_matches_rows(root)
        assert not list((root / ".rmh").glob(f".{catch_up.FILE}.*.tmp")) or run.returncode
        subprocess.run(["rm", "-rf", str(root)], check=True)
        n += 1
    assert total is not None


def test_a_writer_between_the_sync_and_the_record_breaks_the_chain(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process commits a note between this process's sync and its reading of the
    state it records: the record would name a state whose paths it lacks, so none is
    written, and the next process reads the rows."""
    rng = random.Random(8)
    root, paths = _vault(tmp_path, rng)
    (root / paths[0]).write_text("edited outside\n", encoding="utf-8")
    other = Process(root)
    other.snapshot()
    real = snapshot.state
    interloped: list[bool] = []

    def state(index: Index) -> tuple[int, str]:
        if not interloped:
            interloped.append(True)
            other.store.write_text(paths[1], "written by another process meanwhile\n")
            other.live.sync_paths([paths[1]])
        return real(index)

    (root / paths[2]).write_text("edited outside again\n", encoding="utf-8")
    p = Process(root)
    p.live._start()  # the chain is known before the interloper is armed
    monkeypatch.setattr(catch_up, "state", state)
    p.live.sync()
    monkeypatch.setattr(catch_up, "state", real)
    assert interloped
    p.close()
    other.close()
    snap = _new_process_matches_rows(root)
    assert "meanwhile" in snap.corpus.bodies[snap.corpus.paths.index(paths[1])]


def test_a_batch_of_writes_writes_one_record(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest writes many notes in one batch, each synced: one record at the batch's end
    (not one fsynced file per note), and it leads the next process here."""
    rng = random.Random(9)
    root, _ = _vault(tmp_path, rng)
    writes: list[int] = []
    real = catch_up._write

    def counted(*args: Any) -> None:
        writes.append(1)
        real(*args)

    monkeypatch.setattr(catch_up, "_write", counted)
    p = Process(root)
    p.snapshot()
    with p.live.batch():
        for k in range(6):
            p.store.write_text(f"ingested/{k}.md", _text(rng))
            p.live.sync_paths([f"ingested/{k}.md"])
        assert writes == []
    assert writes == [1]
    p.close()
    assert _new_process_matches_rows(root).corpus.base is not None


def test_a_record_costlier_than_a_rebuild_is_not_used_and_a_new_base_is_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes changed since the base weighing half the vault or more (and past the floor)
    are not caught up in every process: one rebuilds and saves the new base, the next
    process starts at it; lighter changes are caught up."""
    monkeypatch.setattr(catch_up, "REPLAY_FLOOR", 2_000)
    rng = random.Random(3)
    root, paths = _vault(tmp_path, rng)
    base = (root / COLUMNS).read_bytes()
    vault_bytes = sum((root / p).stat().st_size for p in paths)
    (root / paths[0]).write_text("light " * 300, encoding="utf-8")  # 1,800 bytes: the floor
    assert _new_process_matches_rows(root).corpus.base is not None
    assert (root / COLUMNS).read_bytes() == base
    heavy = "heavy " * (vault_bytes // 3)  # twice the vault's bytes before it
    (root / paths[1]).write_text(heavy, encoding="utf-8")
    snap = _new_process_matches_rows(root)
    assert snap.corpus.base is None and (root / COLUMNS).read_bytes() != base
    assert _new_process_matches_rows(root).corpus.base is None  # at the new base: loaded
    (root / paths[2]).write_text("a small edit after it\n", encoding="utf-8")
    assert _new_process_matches_rows(root).corpus.base is not None


@pytest.mark.parametrize("how", ["shrunk", "removed"])
def test_a_heavy_note_of_the_base_shrunk_or_removed_is_not_replayed_by_every_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Catching up reads the base's text of the notes changed or removed since (the lexical
    indexes take its counts out), so a heavy base note truncated or deleted weighs what it
    weighed: one process rebuilds and saves the new base (before: every new process
    re-tokenised the old text, 3.6 s of CPU each for a 7 MB note in `rmh demo`'s vault)."""
    monkeypatch.setattr(catch_up, "REPLAY_FLOOR", 2_000)
    rng = random.Random(4)
    root, paths = _vault(tmp_path, rng)
    vault_bytes = sum((root / p).stat().st_size for p in paths)
    (root / paths[1]).write_text("heavy " * (vault_bytes + 1_000), encoding="utf-8")
    assert _new_process_matches_rows(root).corpus.base is None  # rebuilt: the heavy base
    base = (root / COLUMNS).read_bytes()
    if how == "shrunk":
        (root / paths[1]).write_text("light now\n", encoding="utf-8")
    else:
        (root / paths[1]).unlink()
    snap = _new_process_matches_rows(root)
    assert snap.corpus.base is None and (root / COLUMNS).read_bytes() != base
    assert _new_process_matches_rows(root).corpus.base is None  # at the new base: loaded


def _vault_bytes(root: Path) -> int:
    """The notes' bytes as the index has them (what `costlier_than_a_rebuild` weighs)."""
    index = Index.open(root / ".rmh" / "index.sqlite")
    try:
        return sum(r.size for r in index.stat_folders()[0].values())
    finally:
        index.close()


@pytest.mark.parametrize("seed", range(4))
def test_replays_add_up_to_a_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """A heavy note in a vault whose other notes outweigh it is cheaper to replay than a
    rebuild for one process, but not for every process for good: the bytes each process reads
    catching up add up (`paid`), and the process for which they would reach the vault's
    bytes rebuilds and saves the new base (the ski-rental rule); the one after loads it.
    Every snapshot equals one from the rows."""
    monkeypatch.setattr(catch_up, "REPLAY_FLOOR", 1_000)
    rng = random.Random(seed)
    root, paths = _vault(tmp_path, rng, n=rng.randint(10, 16))
    for rel in paths[1:]:  # the other notes outweigh the heavy one several times over
        (root / rel).write_text(_text(rng) + "filler words " * rng.randint(800, 1600),
                                encoding="utf-8")
    _new_process_matches_rows(root)  # their state is the base
    base = (root / COLUMNS).read_bytes()
    (root / paths[0]).write_text("heavy " * rng.randint(1_500, 2_500), encoding="utf-8")
    paid = root / ".rmh" / catch_up.PAID_FILE
    p = Process(root)
    p.snapshot()  # the writer: syncs, records the heavy note and catches up itself
    p.close()
    vault = _vault_bytes(root)
    before, steps, replay = json.loads(paid.read_text())["bytes"], 0, None
    while True:
        snap = _new_process_matches_rows(root)
        if snap.corpus.base is None:
            break
        now = json.loads(paid.read_text())["bytes"]
        replay = now - before if replay is None else replay
        assert now - before == replay >= 2 * catch_up.REPLAY_FLOOR and replay < vault
        before, steps = now, steps + 1
        assert steps < 100
    # rebuilt on time: never past the vault's bytes, at most one replay early (the check
    # before the base is loaded takes the old text's size for the new one's)
    assert replay is not None and steps >= 2 and before < vault <= before + 2 * replay
    assert (root / COLUMNS).read_bytes() != base
    assert _new_process_matches_rows(root).corpus.base is None  # the new base, loaded


@pytest.mark.parametrize("content", [b"", b"{", b"[1]", b'{"base": 1, "bytes": 5}',
                                     b'{"base": "other", "bytes": 99999999}',
                                     b'{"base": "B", "bytes": -1}',
                                     b'{"base": "B", "bytes": 1e400}',
                                     b'{"base": "B", "bytes": true}', b"\xff\xfe" * 100,
                                     b"[" * 100_000])
def test_a_damaged_or_foreign_paid_file_counts_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes) -> None:
    """What the paid file holds only moves the rebuild earlier or later; one that is not what
    `pay` wrote for this base counts as nothing read, and the next replay writes it anew."""
    root = _heavy_note_since_the_base(tmp_path, monkeypatch, 7)
    p = Process(root)
    p.snapshot()
    p.close()
    stamp = json.loads((root / RECORD).read_text())["base"]
    paid = root / ".rmh" / catch_up.PAID_FILE
    paid.write_bytes(content.replace(b'"B"', json.dumps(stamp).encode()))
    assert _new_process_matches_rows(root).corpus.base is not None
    got = json.loads(paid.read_text())
    assert got["base"] == stamp and 0 < got["bytes"] < _vault_bytes(root)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_paid_file_that_is_a_fifo_or_a_folder_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """No wait on a FIFO, no error on a folder: the sum counts nothing and the processes catch
    up (a FIFO is replaced whole by the next sum; a folder stays, and nothing is summed)."""
    root = _heavy_note_since_the_base(tmp_path, monkeypatch, 8)
    paid = root / ".rmh" / catch_up.PAID_FILE
    if kind == "fifo":
        os.mkfifo(paid)
    else:
        paid.mkdir()
    for _ in range(2):
        assert _new_process_matches_rows(root).corpus.base is not None
    assert paid.is_file() if kind == "fifo" else paid.is_dir()


def _heavy_note_since_the_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               seed: int) -> Path:
    """A vault whose other notes outweigh one heavy note written since its base, the floor
    lowered so that its replay is summed."""
    monkeypatch.setattr(catch_up, "REPLAY_FLOOR", 1_000)
    root, paths = _vault(tmp_path, random.Random(seed))
    for rel in paths[1:]:
        (root / rel).write_text("filler words " * 2_000, encoding="utf-8")
    _new_process_matches_rows(root)
    (root / paths[0]).write_text("heavy " * 1_000, encoding="utf-8")
    return root


def test_a_small_replay_writes_no_paid_file(tmp_path: Path) -> None:
    rng = random.Random(9)
    root, paths = _vault(tmp_path, rng)
    (root / paths[0]).write_text("a small edit\n", encoding="utf-8")
    assert _new_process_matches_rows(root).corpus.base is not None
    assert not (root / ".rmh" / catch_up.PAID_FILE).exists()


class _CountedRows(dict[str, Any]):
    """Stat rows that count how often every row's size is summed (`values()`)."""

    sums = 0

    def values(self) -> Any:
        _CountedRows.sums += 1
        return super().values()


class _CountingIndex:
    """The index as catch_up.snapshot reads it, its stat rows counted."""

    def __init__(self, index: Index) -> None:
        self._index = index

    def stat_folders(self) -> tuple[Any, Any]:
        rows, folders = self._index.stat_folders()
        return _CountedRows(rows), folders

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


@pytest.mark.parametrize("seed", range(4))
def test_the_vault_sizes_are_summed_at_most_once_per_catch_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Generated edits, light and heavy, past a floor of one byte: a catch-up sums every
    note's size once at most (it asked twice, before and after loading the base, and summed
    the vault each time: ~0.1 s at 10^6 notes), and still decides as before (each new
    process's snapshot equals the rows', from the base when its replay is the lighter)."""
    rng = random.Random(seed)
    monkeypatch.setattr(catch_up, "REPLAY_FLOOR", 1)
    root, paths = _vault(tmp_path, rng)
    real = catch_up.snapshot
    asked: list[int] = []

    def counted(index: Index, folder: Path, known: Any = None, count_op: Any = None) -> Any:
        _CountedRows.sums = 0
        out = real(_CountingIndex(index), folder, known, count_op)  # type: ignore[arg-type]
        asked.append(_CountedRows.sums)
        return out

    monkeypatch.setattr(catch_up, "snapshot", counted)
    used = 0
    for _ in range(8):
        vault_bytes = sum((root / p).stat().st_size for p in paths)
        size = rng.choice([10, 200, vault_bytes // 3, vault_bytes * 2])
        (root / rng.choice(paths)).write_text("w " * (size // 2), encoding="utf-8")
        used += _new_process_matches_rows(root).corpus.base is not None
    assert asked and max(asked) == 1, asked  # summed, and never twice
    assert used, "no catch-up used the base: the path was not exercised"
