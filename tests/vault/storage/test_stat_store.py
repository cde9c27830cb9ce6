"""vault.storage.stat_store (and the stat key of schema.py): a new process loads the stat
cache from the persisted columns only when they are the index's rows now. Every kind of stat
row change moves the key; generated sequences of edits, touches, writes, moves and deletes
never leave a stale file in use; damage, a forged file, an index without the triggers, and a
kill at each step fall back to the rows."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from vault import Vault
from vault.erasure_steps import drop_derived as _drop_derived
from vault.storage import folders, stat_cache, stat_store
from vault.storage.columns import Strings
from vault.storage.index import Index
from vault.storage.row_codec import STAT_COLS
from vault.storage.schema import STAT_TRIGGERS, stat_key
from vault.storage.stat_cache import StatCache

ROOT = Path(__file__).resolve().parents[3]
FILE = Path(".rmh") / stat_store.FILE


def _vault(tmp: Path, n: int = 40) -> Path:
    root = tmp / "v"
    for i in range(n):
        path = root / f"f{i % 5}" / ("sub" if i % 7 == 0 else "") / f"n{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# note {i}\n[[n{(i + 1) % n:03d}]] body {i * 13}\n")
    (root / "top.md").write_text("top\n")
    Vault.init(root).close()  # built: the build's patched rows folded in, saved
    Vault.open(root).close()
    assert (root / FILE).is_file()
    return root


def _state(cache: StatCache) -> tuple[dict[str, Any], dict[str, Any]]:
    return (dict(cache.rows),
            {f: (d, tuple(paths)) for f, (d, paths) in cache.folders.items()})


def _from_rows(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite")
    try:
        return _state(StatCache(0, conn.execute(f"SELECT {STAT_COLS} FROM notes").fetchall()))
    finally:
        conn.close()


def _new_process(root: Path) -> tuple[bool, tuple[dict[str, Any], dict[str, Any]]]:
    """What a new process's stat cache is (before any sync), and whether from the file."""
    index = Index.open(root / ".rmh" / "index.sqlite")
    try:
        index.stat_folders()
        cache = index._stats
        assert cache is not None
        return cache.from_file, _state(cache)
    finally:
        index.close()


def _key(root: Path) -> str | None:
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite")
    try:
        return stat_key(conn)
    finally:
        conn.close()


def test_a_new_process_loads_the_file_and_it_equals_the_rows(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    # settled first (folders.stored_ctime): a sync that began once the notes were SETTLED_NS
    # old would store their ctimes anew and rightly save the file again
    time.sleep(folders.SETTLED_NS / 1e9)
    Vault.open(root).close()
    kept = (root / FILE).stat().st_ino
    used, state = _new_process(root)
    assert used and state == _from_rows(root)
    with Vault.open(root) as v:  # a no-op sync over the file's columns
        assert not v.sync().changed
        assert v.index._stats is not None and v.index._stats.from_file
    assert (root / FILE).stat().st_ino == kept  # loaded, not saved again


def test_every_change_of_a_stat_row_moves_the_key(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    seen = [stat_key(conn)]
    statements = [
        "UPDATE notes SET size = size + 1 WHERE path = 'top.md'",
        "UPDATE notes SET mtime_ns = mtime_ns + 1 WHERE path = 'top.md'",
        "UPDATE notes SET inode = inode + 1 WHERE path = 'top.md'",
        "UPDATE notes SET content_hash = 'ab' || content_hash WHERE path = 'top.md'",
        "UPDATE notes SET path = 'top2.md' WHERE path = 'top.md'",
        "UPDATE notes SET path = 'top.md' WHERE path = 'top2.md'",  # back: another key
        "UPDATE notes SET id = 9999 WHERE path = 'top.md'",
        "DELETE FROM notes WHERE path = 'f1/n001.md'",
        "INSERT INTO notes(path, title, size, mtime_ns, inode, content_hash, frontmatter,"
        " aliases, tags, body) VALUES ('x.md', 'x', 1, 2, 3, 'h', '{}', '[]', '[]', '')",
    ]
    for sql in statements:
        conn.execute(sql)
        seen.append(stat_key(conn))
    assert len(set(seen)) == len(seen)  # each moved it, none came back to an earlier one
    conn.execute("UPDATE notes SET title = 'other' WHERE path = 'x.md'")  # no stat column
    assert stat_key(conn) == seen[-1]
    conn.execute("BEGIN")
    conn.execute("UPDATE notes SET size = 0")
    assert stat_key(conn) != seen[-1]
    conn.execute("ROLLBACK")  # rolled back with the rows
    assert stat_key(conn) == seen[-1]
    conn.close()
    used, state = _new_process(root)
    assert not used and state == _from_rows(root)


def _step(root: Path, rng: random.Random, kind: str) -> None:
    notes = sorted(p for p in root.rglob("*.md") if ".rmh" not in p.parts)
    path = rng.choice(notes)
    rel = path.relative_to(root).as_posix()
    st = path.stat()
    if kind == "edit":  # other size
        path.write_text(path.read_text() + f"more {rng.random()}\n")
    elif kind == "same size":  # other bytes, same size, the mtime 1 us later
        text = path.read_text()
        path.write_text(text[:-2] + ("x" if text[-2] != "x" else "y") + "\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    elif kind == "touch":  # same content, new mtime: a stat-only update (no generation bump)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 7_000_000_000))
    elif kind == "replace":  # same content, size and mtime, a new inode
        tmp = path.with_name(".swap")
        tmp.write_bytes(path.read_bytes())
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, path)
    elif kind == "external delete":
        path.unlink()
    elif kind == "external rename":
        path.rename(path.with_name(f"r{rng.randrange(10**6)}.md"))
    elif kind == "external add":
        folder = root / f"f{rng.randrange(6)}"
        folder.mkdir(exist_ok=True)
        (folder / f"a{rng.randrange(10**6)}.md").write_text("new\n")
    else:
        with Vault.open(root) as v:  # through rmh; the process ends without saving again
            if kind == "write":
                v.write(rel, f"written {rng.random()}\n")
            elif kind == "move":
                v.move(rel, f"moved/m{rng.randrange(10**6)}.md")
            else:
                v.delete(rel)
        return


KINDS = ("edit", "same size", "touch", "replace", "external delete", "external rename",
         "external add", "write", "move", "delete")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_changes_never_leave_a_stale_file_in_use(tmp_path: Path, seed: int) -> None:
    root = _vault(tmp_path)
    rng = random.Random(seed)
    used_file = 0
    for _ in range(14):
        before = _key(root)
        kind = rng.choice(KINDS)
        _step(root, rng, kind)
        if kind not in ("write", "move", "delete"):
            with Vault.open(root) as v:  # the process that sees the external change
                v.sync()
        assert _key(root) != before, kind  # the change moved the key
        for _ in range(2):  # the first new process reads the rows and saves, the next maps
            used, state = _new_process(root)
            used_file += used
            assert state == _from_rows(root), kind
            Vault.open(root).close()
    assert used_file >= 14  # the file was in use (the checks above are not vacuous)


def test_a_touch_with_unchanged_content_is_not_missed(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    path = root / "f2" / "n002.md"
    st = path.stat()
    later = st.st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(st.st_atime_ns, later))
    before = _key(root)
    with Vault.open(root) as v:
        assert not v.sync().changed  # content unchanged: no generation bump
    assert _key(root) != before  # but the stat key moved
    used, state = _new_process(root)  # the syncing process spliced the touch in and saved
    assert used and state == _from_rows(root)
    assert state[0]["f2/n002.md"].mtime_ns == later
    with Vault.open(root) as v:  # no second update: the stat matches
        assert not v.sync().changed


def _corrupt(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        del data[len(data) // 2:]
    elif how == "flipped payload":
        data[-70] ^= 0x01
    elif how == "flipped header":
        data[30] ^= 0x20
    elif how == "empty":
        data = bytearray()
    else:
        data = bytearray(b"\x07" * 512)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "flipped payload", "flipped header", "empty",
                                 "garbage"])
def test_a_damaged_file_falls_back_to_the_rows_and_is_saved_again(tmp_path: Path,
                                                                  how: str) -> None:
    root = _vault(tmp_path)
    good = (root / FILE).read_bytes()
    _corrupt(root / FILE, how)
    used, state = _new_process(root)
    assert not used and state == _from_rows(root)
    Vault.open(root).close()
    assert (root / FILE).read_bytes() == good  # the same bytes again
    assert _new_process(root)[0]


@pytest.mark.parametrize("forged", ["a size", "a path", "the largest id"])
def test_a_file_under_the_right_key_with_other_rows_is_not_used(tmp_path: Path,
                                                                forged: str) -> None:
    """Another history of the index reaching the same key (module docstring): the sample."""
    root = _vault(tmp_path)
    key = _key(root)
    assert key is not None
    c = stat_store.load(root / ".rmh", key)
    assert c is not None
    ids, sizes = c.ids.copy(), c.sizes.copy()
    paths = list(c.paths)
    if forged == "a size":
        sizes[3] += 1
    elif forged == "a path":
        paths[5] = paths[5].replace(".md", "x.md")
    else:
        ids[int(ids.argmax())] += 1000
    assert stat_store.save(root / ".rmh", key, stat_store.StatColumns(
        ids, sizes, c.mtimes, c.inodes, c.ctimes, Strings(paths), c.hashes, c.folders, c.spans,
        c.digests))
    used, state = _new_process(root)
    assert not used and state == _from_rows(root)


def test_an_index_written_without_the_triggers_drops_the_file(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    for name in STAT_TRIGGERS:
        conn.execute(f"DROP TRIGGER {name}")
    key = stat_key(conn)
    conn.execute("UPDATE notes SET size = size + 5 WHERE path = 'top.md'")  # an older writer
    assert stat_key(conn) == key  # the file would be stale under the same key
    conn.close()
    used, state = _new_process(root)  # the open puts the triggers back, drops the file
    assert not used and state == _from_rows(root)
    assert state[0]["top.md"].size == len("top\n") + 5


def test_another_versions_triggers_are_replaced(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    conn.execute("CREATE TRIGGER rmh_stat0_update AFTER UPDATE ON notes BEGIN SELECT 1; END")
    conn.close()
    Index.open(root / ".rmh" / "index.sqlite").close()
    assert not (root / FILE).exists()
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite")
    names = sorted(r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger'"))
    conn.close()
    assert names == sorted(STAT_TRIGGERS)


def test_a_new_index_in_place_of_a_deleted_one_drops_the_file(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    for p in (root / ".rmh").glob("index.sqlite*"):
        p.unlink()
    Index.open(root / ".rmh" / "index.sqlite").close()
    assert not (root / FILE).exists()


def test_erasure_drops_the_file(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _drop_derived(root / ".rmh")
    assert not (root / FILE).exists()


KILL = """
import sys
import time
from pathlib import Path
from vault.storage.columns import Strings
from vault.storage.index import Index
from vault.storage.store import Store
root = Path(sys.argv[1])
store = Store(root, fault_after=int(sys.argv[2]))
index = Index.open(root / ".rmh" / "index.sqlite")
index.stat_folders()
print(index.persist_stats(store.count_op))
"""

COMMIT_KILL = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE notes SET size = size + 1 WHERE path = 'top.md'")
if sys.argv[2] == "commit":
    conn.execute("COMMIT")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("after", [1, 2, 3])
def test_killed_while_saving_leaves_the_old_file_or_the_new(tmp_path: Path,
                                                            after: int) -> None:
    """SIGKILLed after the temporary is written (1), after the rename (2), or not at all."""
    root = _vault(tmp_path)
    other = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    other.execute("UPDATE notes SET size = size + 1 WHERE path = 'top.md'")  # another writer:
    other.close()  # the key moves and the file is stale (a closing vault saves its own writes)
    old = (root / FILE).read_bytes()
    run = _run(KILL, str(root), str(after))
    temps = sorted((root / ".rmh").glob(f".{stat_store.FILE}.*.tmp"))
    if after == 1:
        assert run.returncode == -9 and len(temps) == 1
        assert (root / FILE).read_bytes() == old
    else:
        assert run.returncode == (-9 if after == 2 else 0), run.stderr
        assert not temps and (root / FILE).read_bytes() != old
    used, state = _new_process(root)
    assert used == (after != 1) and state == _from_rows(root)
    Vault.open(root).close()
    assert not list((root / ".rmh").glob(f".{stat_store.FILE}.*.tmp"))  # swept by a save
    assert _new_process(root)[0]


@pytest.mark.parametrize("end", ["commit", "no commit"])
def test_a_writer_killed_after_or_before_its_commit(tmp_path: Path, end: str) -> None:
    """The key is in the rows' transaction: killed before its commit, the file still names
    the rows; after it, the file is stale and not used."""
    root = _vault(tmp_path)
    run = _run(COMMIT_KILL, str(root / ".rmh" / "index.sqlite"), end)
    assert run.returncode == -9
    used, state = _new_process(root)
    assert used == (end == "no commit") and state == _from_rows(root)


def test_the_building_process_saves_what_it_built(tmp_path: Path) -> None:
    """A first build folds its own commits into new columns: saved under the key now."""
    root = tmp_path / "v"
    root.mkdir()
    for i in range(30):  # under MIN_COMPACT: the patch does not fold by itself
        (root / f"n{i}.md").write_text(f"note {i}\n")
    Vault.init(root).close()
    used, state = _new_process(root)
    assert used and state == _from_rows(root)


def test_own_commits_are_not_saved_after_another_process_committed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _vault(tmp_path)
    monkeypatch.setattr(stat_cache, "folds", lambda changes, base: True)  # every patch folds
    stat_store.drop(root / ".rmh")
    index = Index.open(root / ".rmh" / "index.sqlite")
    index.stat_folders()  # read from the rows
    other = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    other.execute("UPDATE notes SET size = size + 1 WHERE path = 'top.md'")  # not in the cache
    other.close()
    note = index.stat_of("f1/n001.md")
    assert note is not None
    with index.atomic():
        index.update_stat(note.id, note.size, note.mtime_ns + 1, note.inode, note.ctime_ns)
    assert index._stats is not None and index._stats.patched
    assert not index.persist_stats() and not (root / FILE).exists()
    index.close()
    used, state = _new_process(root)
    assert not used and state == _from_rows(root)
    index = Index.open(root / ".rmh" / "index.sqlite")  # alone: its own commit is saved
    index.stat_folders()
    with index.atomic():
        index.update_stat(note.id, note.size, note.mtime_ns + 2, note.inode, note.ctime_ns)
    assert index.persist_stats()
    index.close()
    used, state = _new_process(root)
    assert used and state == _from_rows(root)


def test_a_read_only_index_uses_the_file_only_with_the_key_and_never_saves(
        tmp_path: Path) -> None:
    root = _vault(tmp_path)
    index = Index.open(root / ".rmh" / "index.sqlite", read_only=True)
    index.stat_folders()
    assert index._stats is not None and index._stats.from_file
    assert _state(index._stats) == _from_rows(root)
    index.close()
    conn = sqlite3.connect(root / ".rmh" / "index.sqlite", isolation_level=None)
    conn.execute(f"DROP TRIGGER {STAT_TRIGGERS[1]}")  # an older writer's index: no key kept
    conn.close()
    kept = (root / FILE).read_bytes()
    index = Index.open(root / ".rmh" / "index.sqlite", read_only=True)
    index.stat_folders()
    assert index._stats is not None and not index._stats.from_file
    assert not index.persist_stats() and (root / FILE).read_bytes() == kept
    index.close()
