"""vault.storage.stat_splice: the process that syncs a change over a mapped stat file splices
its own rows into the columns and saves the file of the new key, byte-identical to the file
a read of every row would save; a second writer, a kill at each file operation, and a layout
it does not splice leave the old file (not used: its key moved) or fall back to the rows."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vault import Vault
from vault.storage import stat_store
from vault.storage.columns import Digests, Strings
from vault.storage.index import Index
from vault.storage.stat_cache import StatCache, _Table
from vault.storage.stat_splice import splice

from .test_stat_store import FILE, KINDS, _from_rows, _key, _new_process, _step, _vault

ROOT = Path(__file__).resolve().parents[3]


def _fresh_bytes(root: Path) -> bytes:
    """The file a process that reads every row saves (the old one moved aside and back)."""
    path = root / FILE
    kept = path.read_bytes()
    path.unlink()
    index = Index.open(root / ".rmh" / "index.sqlite")
    try:
        index.stat_folders()
        assert index.persist_stats()
    finally:
        index.close()
    fresh = path.read_bytes()
    path.write_bytes(kept)
    return fresh


@pytest.mark.parametrize("seed", [4, 5, 6, 7])
def test_the_syncing_process_saves_the_file_a_full_read_would(tmp_path: Path,
                                                               seed: int) -> None:
    """Generated edits, adds, deletes, renames, moves (new folders, emptied ones): after each,
    the process that synced it saved the new key's file, and its bytes equal a fresh read's."""
    root = _vault(tmp_path)
    rng = random.Random(seed)
    spliced = 0
    for step in range(12):
        kind = rng.choice(KINDS)
        if step % 4 == 3:  # a folder emptied, then a new one: the folder list changes
            for p in sorted((root / "f4").rglob("*.md")):
                p.unlink()
            (root / f"new{step}").mkdir()
            (root / f"new{step}" / "a.md").write_text(f"a {step}\n")
            kind = "external"
        else:
            _step(root, rng, kind)
        with Vault.open(root, auto_sync=False) as v:  # maps the file, syncs, splices, saves
            v.sync()
        used, state = _new_process(root)
        assert state == _from_rows(root), kind
        if kind not in ("write", "move", "delete"):  # those processes run no full sync after
            assert used, kind
            spliced += 1
            assert (root / FILE).read_bytes() == _fresh_bytes(root), kind
    assert spliced >= 6


def _rows(rng: random.Random, n: int) -> list[tuple[Any, ...]]:
    out = []
    for i in range(n):
        folder = rng.choice(["", "a", "a/b", "a-b", "b", "z/é"])
        name = f"{rng.choice('mnxyé')}{rng.randrange(10**4)}.md"
        out.append((i + 1, f"{folder}/{name}".lstrip("/"), rng.randrange(10**5),
                    rng.randrange(10**15), rng.randrange(10**9), os.urandom(32).hex(),
                    rng.randrange(10**15)))
    return list({r[1]: r for r in out}.values())


@pytest.mark.parametrize("seed", range(8))
def test_splice_equals_the_columns_built_from_the_rows(seed: int) -> None:
    """Random tables and layers (paths hidden, replaced, added in new folders, folders
    emptied): the spliced columns equal `_Table.of` of the resulting rows."""
    rng = random.Random(seed)
    rows = _rows(rng, rng.randrange(1, 300))
    table = _Table.of(rows)
    hidden = {r[1] for r in rng.sample(rows, rng.randrange(len(rows) + 1))}
    if seed == 0:
        hidden |= {r[1] for r in rows if r[1].startswith("a/b/")}
    extra = {r[1]: r for r in _rows(rng, rng.randrange(40))}
    for p in rng.sample(sorted(hidden), min(3, len(hidden))):  # replaced in place
        extra[p] = (10**6 + len(extra), p, 1, 2, 3, os.urandom(32).hex(), 4)
    hidden |= {p for p in extra if table.find(p) >= 0}
    final = [r for r in rows if r[1] not in hidden] + list(extra.values())
    want = _Table.of(final)
    digests = {f: d for f, (d, _) in want.folders().items()}
    got = splice(table.ids, table.sizes, table.mtimes, table.inodes, table.ctimes, table.paths,
                 table.hashes, table.spans, hidden, extra, digests)
    assert got is not None
    for name in ("ids", "sizes", "mtimes", "inodes", "ctimes"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert list(got.paths) == list(want.paths)
    assert got.paths.packed()[0] == bytes(want.paths.packed()[0])
    assert isinstance(got.hashes, Digests) and isinstance(want.hashes, Digests)
    assert got.hashes.raw == want.hashes.raw
    assert dict(zip(got.folders, got.spans.tolist(), strict=True)) == \
        {f: list(s) for f, s in want.spans.items()}


def test_a_layout_it_does_not_splice_is_left_to_the_rows() -> None:
    rows = [(1, "a/x.md", 1, 2, 3, "ab" * 32, 4), (2, "b/y.md", 1, 2, 3, "cd" * 32, 4)]
    t = _Table.of(rows)
    digests = {f: d for f, (d, _) in t.folders().items()}
    for extra in ({"a/x.md": (1, "a/x.md", 5, 2, 3, "not hex", 4)},
                  {"a/\udc80.md": (3, "a/\udc80.md", 5, 2, 3, "ef" * 32, 4)}):
        hidden = {"a/x.md"} & set(extra)
        assert splice(t.ids, t.sizes, t.mtimes, t.inodes, t.ctimes, t.paths, t.hashes, t.spans,
                      hidden, extra, digests) is None
    texts = Strings(["h", "ab" * 32])  # content hashes not all digests
    assert splice(t.ids, t.sizes, t.mtimes, t.inodes, t.ctimes, t.paths, texts, t.spans, set(),
                  {}, digests) is None
    cache = StatCache(0, [(k, f"a/{k}.md", 1, 2, 3, "not hex", 4) for k in range(5)])
    cache.patch([], [(1, "a/1.md", 9, 2, 3, "not hex", 4)])
    assert not cache.settle()  # the layer stays: no file is saved from it


def _one_edit(root: Path) -> None:
    path = root / "f3" / "n003.md"
    path.write_text(path.read_text() + "edited\n")


@pytest.mark.parametrize("when", ["before its commit", "after its commit"])
def test_a_second_writer_forces_the_fallback(tmp_path: Path, when: str) -> None:
    """Another connection commits a stat change between the file's load (the sync's start)
    and the save (the sync's end), before or after the syncing process's own commit: the
    file is not saved, and the next process reads the rows."""
    root = _vault(tmp_path)
    old = (root / FILE).read_bytes()
    _one_edit(root)
    other = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)

    done: list[bool] = []

    def intervene() -> None:  # once: a closing vault saves again (LiveIndex.close)
        if not done:
            done.append(True)
            other.execute("UPDATE notes SET size = size + 1 WHERE path = 'top.md'")

    with Vault.open(root, auto_sync=False) as v:
        index = v.index
        atomic, persist = index.atomic, index.persist_stats

        def atomic_after(*a: Any, **k: Any) -> Any:
            intervene()
            return atomic(*a, **k)

        def persist_after(*a: Any, **k: Any) -> bool:
            intervene()
            return persist(*a, **k)

        if when == "before its commit":
            index.atomic = atomic_after  # type: ignore[method-assign]
        else:
            index.persist_stats = persist_after  # type: ignore[method-assign]
        assert v.sync().changed
        assert index._stats is None or not index._stats.from_file
    other.close()
    assert (root / FILE).read_bytes() == old  # not saved
    used, state = _new_process(root)
    assert not used and state == _from_rows(root)
    assert state[0]["top.md"].size == (root / "top.md").stat().st_size + 1


def test_the_file_is_loaded_before_the_change_it_is_spliced_with(tmp_path: Path) -> None:
    """The case the fallback guards is reachable: without the other writer the same sync
    saves (so the test above fails on code that does not check)."""
    root = _vault(tmp_path)
    old = (root / FILE).read_bytes()
    _one_edit(root)
    with Vault.open(root, auto_sync=False) as v:
        v.index.stat_folders()
        assert v.index._stats is not None and v.index._stats.from_file
        assert v.sync().changed
    assert (root / FILE).read_bytes() != old
    assert _new_process(root) == (True, _from_rows(root))


def test_a_file_loaded_in_a_read_transaction_is_spliced_too(tmp_path: Path) -> None:
    """A snapshot taken before the sync loads the stat cache inside its read transaction (no
    write pending): the sync's own commits are still spliced and saved."""
    root = _vault(tmp_path)
    old = (root / FILE).read_bytes()
    _one_edit(root)
    with Vault.open(root, auto_sync=False) as v:
        v.corpus()
        c = v.index._stats
        assert c is not None and c.from_file and c.key is not None
        assert v.sync().changed
    assert (root / FILE).read_bytes() != old
    assert _new_process(root) == (True, _from_rows(root))


def test_a_cache_loaded_after_a_write_in_its_transaction_is_never_saved(
        tmp_path: Path) -> None:
    root = _vault(tmp_path)
    index = Index.open(root / ".rmh" / "index.sqlite")
    try:
        with index.reading():
            index._conn.execute("UPDATE notes SET title = 'x' WHERE path = 'top.md'")
            index.stat_folders()
        assert index._stats is not None and index._stats.key is None
        assert not index.persist_stats()
    finally:
        index.close()


KILL = """
import sys
from pathlib import Path
from vault.storage.index import Index
from vault.storage.store import Store
from vault.storage.sync import sync
root = Path(sys.argv[1])
store = Store(root, fault_after=int(sys.argv[2]))
index = Index.open(root / ".rmh" / "index.sqlite")
index.stat_folders()
assert index._stats.from_file
path = root / "f3" / "n003.md"
st = path.stat()
row = index.stat_of("f3/n003.md")
with index.atomic():
    index.update_stat(row.id, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
print(index.persist_stats(store.count_op))
"""


@pytest.mark.parametrize("after", [1, 2, 3])
def test_killed_at_each_file_operation_of_the_spliced_save(tmp_path: Path,
                                                          after: int) -> None:
    """SIGKILL after the temporary (1), after the rename (2), not at all (3): the old file
    (not used: the key moved) or the new one (used), and either way the rows."""
    root = _vault(tmp_path)
    old = (root / FILE).read_bytes()
    path = root / "f3" / "n003.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))
    before = _key(root)
    run = subprocess.run([sys.executable, "-c", KILL, str(root), str(after)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == (-9 if after < 3 else 0), run.stderr
    assert _key(root) != before  # the commit came before the save
    temps = sorted((root / ".rmh").glob(f".{stat_store.FILE}.*.tmp"))
    assert len(temps) == (after == 1)
    assert ((root / FILE).read_bytes() == old) == (after == 1)
    used, state = _new_process(root)
    assert used == (after > 1) and state == _from_rows(root)
    if after > 1:
        assert (root / FILE).read_bytes() == _fresh_bytes(root)
    Vault.open(root).close()  # the next save sweeps the dead writer's temporary
    assert not sorted((root / ".rmh").glob(f".{stat_store.FILE}.*.tmp")) or after != 1


@pytest.mark.parametrize("how", ["write", "delete", "move"])
def test_a_process_own_writes_leave_the_file_current_when_it_closes(tmp_path: Path,
                                                                    how: str) -> None:
    """rmh's own writes sync only their paths (no full sync, which saves the file); the vault
    saves the patched rows when it closes, so the next process uses the file instead of
    reading every row, and the rows it holds are the index's."""
    root = _vault(tmp_path)
    with Vault.open(root) as v:
        if how == "write":
            v.write("top.md", "changed by rmh\n")
        elif how == "delete":
            v.delete("f3/n003.md")
        else:
            v.move("top.md", "moved/top.md")
    used, state = _new_process(root)
    assert used and state == _from_rows(root)
