"""Persisted note columns (storage/note_store.py): a new process takes its snapshot from the
memory-mapped store instead of the note and link rows, equal field by field to a build from
the rows, and searches with the same hits and scores; a stale, foreign, damaged or
half-written store is ignored (the rows are read, the store saved again), never a crash; the
store's bytes and the link-target hashes are the same under any PYTHONHASHSEED."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vault import Vault
from vault.retrieval.beliefs import StaleClaims
from vault.storage import catch_up, folders, note_store
from vault.storage.index import Index
from vault.storage.snapshot import Snapshot, build_snapshot
from vault.storage.snapshot import state as snapshot_state

ROOT = Path(__file__).resolve().parents[3]
STORE = Path(".rmh") / note_store.FILE
QUERIES = ("billing owner", "who reports to alice", "payments ghost", "kaffee über")


def _write(root: Path) -> None:
    notes = {
        "people/Alice.md": "---\naliases: [Al, Ally]\nspeaker: Alice\n---\n# Alice\n"
                           "Works with [[Bob]] on [[Billing]]. Owner of billing.\n",
        "people/Bob.md": "# Bob\nReports to [[Al]]; see [notes](../topics/Billing.md) and "
                         "[[Bob]] and [[Nobody]].\n",
        "topics/Billing.md": "---\ndescription: who owns the billing system\n---\n# Billing\n"
                             "Owned by [[Alice#Role]] and [[people/Bob|Bobby]].\n",
        "topics/Payments.md": "# Payments\n![[Billing]] [[Ghost]] kaffee über alles\n",
        "Carol.md": "---\ntrust: rejected\n---\n# Carol\n[[Payments]] [[Billing^x]]\n",
        "Straße/Café.md": "---\naliases: [Kaffee]\ntags: [x]\n---\nÜber den Kaffee. [[Alice]]\n",
        "empty.md": "",
    }
    for i in range(40):
        notes[f"turns/t{i:03d}.md"] = (f"---\nspeaker: {'Alice' if i % 2 else 'Bob'}\n"
                                       f"date: 2026-01-{i % 28 + 1:02d}\n---\n"
                                       f"Turn {i} about [[Billing]] and payments {i * 7}.\n")
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _vault(tmp: Path) -> Path:
    root = tmp / "v"
    _write(root)
    with Vault.init(root) as v:
        v.corpus()  # the first snapshot: from the rows, saved
    assert (root / STORE).is_file()
    return root


def _snapshot(root: Path, folder: bool = True) -> Snapshot:
    """A snapshot built as a new process would (the index opened, not synced; left open:
    the snapshot reads a note's links from it when asked)."""
    index = Index.open(root / ".rmh" / "index.sqlite")
    return build_snapshot(index, root / ".rmh" if folder else None)


def _fields(s: Snapshot) -> dict[str, Any]:
    c = s.corpus
    return {
        "generation": c.generation, "ids": list(c.ids), "paths": list(c.paths),
        "titles": list(c.titles), "aliases": list(c.aliases), "bodies": list(c.bodies),
        "frontmatter": list(c.frontmatter), "content_hashes": list(c.content_hashes),
        "edges": list(c.edges), "archived": c.archived,
        "targets": (s.targets.hashes.tolist(), s.targets.sources.tolist()),
        "by_path": {p: s.resolver.by_path(p) for p in c.paths},
        "links": {i: s.links[i] for i in c.ids},
    }


def _same_as_rows(root: Path) -> Snapshot:
    loaded = _snapshot(root)
    assert _fields(loaded) == _fields(_snapshot(root, folder=False))
    return loaded


def _inode(root: Path) -> tuple[int, int]:
    st = (root / STORE).stat()
    return st.st_ino, st.st_mtime_ns


def test_a_new_snapshot_is_the_store_and_equals_the_rows(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    kept = _inode(root)
    loaded = _same_as_rows(root)
    assert _inode(root) == kept  # loaded, not saved again
    assert loaded.corpus.stamp is not None
    assert type(loaded.corpus.bodies).__name__ == "Strings"  # mapped, not decoded rows
    assert loaded.targets.sources_of(["billing"]) == _snapshot(root, False).targets.sources_of(
        ["billing"])


SEARCH = """
import json, sys
from pathlib import Path
from bench.synthetic_encoder import SyntheticEncoder
from vault import SearchEngine, SearchParams, Vault
def engine(own):
    return SearchEngine(SearchParams(), encoder=SyntheticEncoder(), cache=own,
                        scratch=sys.argv[1] + "/.rmh")
out = []
with Vault.open(Path(sys.argv[1]), engine=engine) as v:
    for q in json.loads(sys.argv[2]):
        out.append([(h.note, h.score) for h in v.search(q, 10, learn=False).hits])
print(json.dumps(out))
"""


def _search(root: Path, seed: str) -> list[Any]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SEARCH, str(root), json.dumps(QUERIES)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                         check=True)
    hits: list[Any] = json.loads(out.stdout)
    return hits


def test_searches_from_the_store_equal_a_fresh_build_across_processes(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh)
    for path in (fresh / ".rmh").iterdir():  # nothing persisted but the index: all built again
        if path.is_file() and not path.name.startswith(("index.sqlite", "write.lock")):
            path.unlink()
    # files this young are indexed RACY and read again once settled (folders.stored_ctime),
    # which moves the stamp the store is saved under: let them settle first
    time.sleep(folders.SETTLED_NS / 1e9)
    expected = _search(fresh, "1")
    assert any(expected) and (fresh / STORE).is_file()
    first = _search(root, "2")  # the store from the init; derived stores built and saved
    kept = _inode(root)
    assert first == expected
    assert _search(root, "3") == expected  # everything loaded
    assert _inode(root) == kept
    # the same bytes whatever the hash seed of the process that wrote them
    written = (fresh / STORE).read_bytes()
    (fresh / STORE).unlink()
    assert _search(fresh, "4") == expected
    assert (fresh / STORE).read_bytes() == written


def test_processes_saving_at_once_leave_one_whole_store(tmp_path: Path) -> None:
    """Four new processes on a vault with nothing derived saved race to build and save the
    note store and the stamped values: each answers as a fresh build, no temporary is left,
    and what stands is a whole store equal to the rows."""
    root = _vault(tmp_path)
    # settled first (folders.stored_ctime): a racer or the last search whose sync began once
    # the notes were SETTLED_NS old would store their ctimes anew, which moves the stamp, and
    # the next build rightly saves the store again (a CI run under load: 1 in ~15 runs)
    time.sleep(folders.SETTLED_NS / 1e9)
    expected = _search(root, "1")
    for path in (root / ".rmh").iterdir():
        if path.is_file() and not path.name.startswith(("index.sqlite", "write.lock")):
            path.unlink()
    procs = [subprocess.Popen([sys.executable, "-c", SEARCH, str(root), json.dumps(QUERIES)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed),
                                   "PYTHONPATH": str(ROOT)}, cwd=ROOT)
             for seed in range(2, 6)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert json.loads(out) == expected
    assert sorted(p.name for p in (root / ".rmh").iterdir() if p.name.endswith(".tmp")) == []
    kept = _inode(root)
    _same_as_rows(root)
    assert _search(root, "7") == expected
    assert _inode(root) == kept  # loaded, not saved again


def test_a_store_of_a_state_the_index_left_never_lands_over_a_newer_one(tmp_path: Path) -> None:
    """A process whose index moved on (another process changed a note and saved the newer
    state's store) between its build and its rename drops its store instead of renaming it
    over the newer one: what stands is the store of the index's state now, so the next
    process loads it instead of building again (a CI run saw a fifth racer rebuild)."""
    root = _vault(tmp_path)
    (root / STORE).unlink()
    index = Index.open(root / ".rmh" / "index.sqlite")
    raced: list[str] = []

    def other_process() -> None:  # after this process's temporary, before its rename
        if raced:
            return
        (root / "Carol.md").write_text("# Carol\nNow about [[Billing]] only.\n")
        raced.append(json.dumps(_search(root, "3")))

    build_snapshot(index, root / ".rmh", count_op=other_process)
    assert raced
    saved = note_store.saved_state(root / ".rmh")
    assert saved is not None
    assert saved[0] == snapshot_state(Index.open(root / ".rmh" / "index.sqlite"))[1]
    kept = _inode(root)
    assert json.loads(raced[0]) == _search(root, "7")
    assert _inode(root) == kept  # loaded, not built and saved again


@pytest.mark.parametrize("change", ["edit", "rename", "alias", "delete", "add"])
def test_a_stale_store_is_not_used(tmp_path: Path, change: str) -> None:
    root = _vault(tmp_path)
    if change == "edit":
        (root / "topics" / "Billing.md").write_text("# Billing\nNow owned by [[Carol]].\n")
    elif change == "rename":
        (root / "topics" / "Billing.md").rename(root / "topics" / "Invoicing.md")
    elif change == "alias":
        (root / "Carol.md").write_text("---\naliases: [Ghost]\n---\n# Carol\n[[Payments]]\n")
    elif change == "delete":
        (root / "people" / "Bob.md").unlink()
    else:
        (root / "Nobody.md").write_text("# Nobody\n[[Carol]]\n")
    stale = (root / STORE).read_bytes()
    with Vault.open(root) as v:
        v.corpus()  # synced: the index moved on
    # in place (a removal too): the store stays the base and the catch-up record leads from
    # it to the new state (storage/catch_up.py); a new process's snapshot equals the rows
    assert (root / STORE).read_bytes() == stale
    assert (root / ".rmh" / catch_up.FILE).is_file()
    with Vault.open(root) as v:
        snap = v.live.snapshot()
        assert snap.corpus.base is not None
        got, rows = _fields(snap), _fields(_snapshot(root, folder=False))
        got.pop("targets"), rows.pop("targets")  # an advance's targets are a superset
        assert got == rows
    assert (root / STORE).read_bytes() == stale


def _corrupt(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    head = 16 + int.from_bytes(data[8:16], "little")
    if how == "truncated":
        del data[len(data) // 2 :]
    elif how == "flipped body byte":
        data[len(data) - 200] ^= 0x01
    elif how == "flipped header":
        data[20] ^= 0x20
    elif how == "garbage":
        data = bytearray(b"\x00" * 64)
    elif how == "empty":
        data = bytearray()
    elif how in ("version", "key", "notes"):
        meta = json.loads(data[16:head])
        meta[{"version": "version", "key": "key", "notes": "notes"}[how]] = (
            "0" * 64 if how == "key" else meta[how] + 1)
        text = json.dumps(meta, sort_keys=True).encode()
        data = data[:8] + len(text).to_bytes(8, "little") + text + data[head:]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "flipped body byte", "flipped header",
                                 "garbage", "empty", "version", "key", "notes"])
def test_a_damaged_or_foreign_store_is_ignored_and_saved_again(tmp_path: Path,
                                                               how: str) -> None:
    root = _vault(tmp_path)
    good = (root / STORE).read_bytes()
    expected = _fields(_snapshot(root, folder=False))
    _corrupt(root / STORE, how)
    assert _fields(_snapshot(root)) == expected  # the rows, not the store
    assert (root / STORE).read_bytes() == good  # saved again, whole
    assert _fields(_snapshot(root)) == expected


def test_another_vaults_store_is_not_used(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    other = tmp_path / "other"
    _write(other)
    (other / "topics" / "Billing.md").write_text("# Billing\nSomeone else's.\n")
    with Vault.init(other) as v:
        v.corpus()
    shutil.copyfile(other / STORE, root / STORE)  # same generation, other files
    assert _fields(_snapshot(root)) == _fields(_snapshot(root, folder=False))
    assert "Someone else" not in " ".join(_snapshot(root).corpus.bodies)


KILL = """
import sys
from pathlib import Path
from vault.storage.index import Index
from vault.storage.snapshot import build_snapshot
from vault.storage.store import Store
root = Path(sys.argv[1])
store = Store(root, fault_after=int(sys.argv[2]))
index = Index.open(root / ".rmh" / "index.sqlite")
build_snapshot(index, root / ".rmh", store.count_op)
print("done")
"""


@pytest.mark.parametrize("after", [1, 2, 3])
def test_killed_while_saving_leaves_the_old_store_or_the_new(tmp_path: Path,
                                                             after: int) -> None:
    """SIGKILLed after the temporary file is written (1), after the rename (2), or not at all
    (3: the save has two file operations): the next snapshot equals the rows, and a dead
    writer's temporary file is removed by the next save."""
    root = _vault(tmp_path)
    (root / "Carol.md").write_text("# Carol\nChanged.\n")
    with Vault.open(root, auto_sync=False) as v:
        v.sync()  # the index moves on; its snapshot is not taken
    old = (root / STORE).read_bytes()
    run = subprocess.run([sys.executable, "-c", KILL, str(root), str(after)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    temps = sorted((root / ".rmh").glob(f".{note_store.FILE}.*.tmp"))
    if after == 1:
        assert run.returncode == -9 and len(temps) == 1
        assert (root / STORE).read_bytes() == old  # the rename did not happen
    else:
        assert run.returncode == (-9 if after == 2 else 0), run.stderr
        assert not temps and (root / STORE).read_bytes() != old
    assert _fields(_snapshot(root)) == _fields(_snapshot(root, folder=False))
    assert not list((root / ".rmh").glob(f".{note_store.FILE}.*.tmp"))  # swept
    assert note_store.load(root / ".rmh", _snapshot(root).corpus.stamp or "") is not None


def test_link_target_hashes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    code = ("import sys; from vault.storage.link_targets import LinkTargets as T; "
            "t = T.build([('billing', 3), ('kaffee', 1), ('über', 2), ('', 5)]); "
            "print(t.hashes.tolist(), t.sources.tolist())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=ROOT,
                           env={**os.environ, "PYTHONHASHSEED": seed,
                                "PYTHONPATH": str(ROOT)}).stdout for seed in ("1", "2", "3")}
    assert len(outs) == 1


def test_an_unwritable_folder_still_snapshots(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    missing = tmp_path / "nowhere"
    index = Index.open(root / ".rmh" / "index.sqlite")
    snap = build_snapshot(index, missing)  # cannot save: the rows, no error
    assert _fields(snap) == _fields(_snapshot(root, folder=False))
    assert np.array_equal(snap.targets.hashes, _snapshot(root).targets.hashes)


def test_stale_claims_found_in_the_mapped_frontmatter(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    loaded, rows = _snapshot(root).corpus, _snapshot(root, folder=False).corpus
    a, b = StaleClaims().mask(loaded), StaleClaims().mask(rows)
    assert a is not None and b is not None and np.array_equal(a, b)
    assert int(a.sum()) == 1


def test_stale_claims_of_a_caught_up_corpus_equal_the_rows(tmp_path: Path) -> None:
    """A corpus advanced from the mapped columns (storage/catch_up.py): the claims stale in
    the base, in the rows changed since and in the rows added since, as from the rows."""
    root = _vault(tmp_path)
    (root / "Carol.md").write_text("# Carol\nbelieved again\n")  # was rejected
    (root / "topics/Payments.md").write_text("---\ntrust: rejected\n---\n# Payments\n")
    (root / "Dave.md").write_text("---\nsuperseded_by: '[[Carol]]'\ntrust: superseded\n---\nx\n")
    with Vault.open(root) as v:
        v.corpus()
    with Vault.open(root) as v:
        caught = v.live.snapshot().corpus
        assert caught.base is not None
        a = StaleClaims().mask(caught)
        b = StaleClaims().mask(_snapshot(root, folder=False).corpus)
    assert a is not None and b is not None and np.array_equal(a, b)
    assert int(a.sum()) == 2
