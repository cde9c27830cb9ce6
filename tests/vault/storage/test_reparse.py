"""vault.storage.reparse: an index whose rows an older parser made is re-parsed from the files
at the next full sync (the extensionless markdown links of session 21 appear without any note
being edited), once: the second sync reads nothing, two processes opening the old index at
once both succeed and the rows are written by one of them, and a process killed during the
re-parse leaves an index that the next open completes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from vault import Vault
from vault.notes import markdown_scan
from vault.notes.note import PARSE
from vault.retrieval.dense_store import note_keys
from vault.storage import reparse
from vault.storage import sync as sync_module
from vault.storage.sync import SyncReport

REPO = Path(__file__).resolve().parents[3]
HUB = "hub.md"
HUB_TEXT = "see [t](Target%20One), [u](<people/Robert>) and [w](Target%20One.md)\n"


def _old_vault(root: Path, monkeypatch: pytest.MonkeyPatch, extra: int = 0) -> None:
    """A vault indexed as rmh did before PARSE 2: markdown destinations without `.md` were
    no links (the scan's `bare_note_path` refused every one), and no parse version kept."""
    root.mkdir()
    (root / "Target One.md").write_text("t\n", encoding="utf-8")
    (root / "people").mkdir()
    (root / "people" / "Robert.md").write_text("r\n", encoding="utf-8")
    (root / HUB).write_text(HUB_TEXT, encoding="utf-8")
    for i in range(extra):
        (root / "people" / f"n{i}.md").write_text(f"note {i} [x](n{i + 1}.md)\n", "utf-8")
    with monkeypatch.context() as m:
        m.setattr(markdown_scan, "bare_note_path", lambda path: False)
        with Vault.init(root, watch=False) as v:
            v.sync()
            assert [ln.resolved for ln in v.links("hub")] == ["Target One.md"]
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        conn.execute("DELETE FROM meta WHERE key = ?", (reparse.KEY,))


def _set_meta(root: Path, **values: str) -> None:
    """Write `meta` rows of the index (KEY, OWED) as another rmh would have left them."""
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         [(getattr(reparse, k), v) for k, v in sorted(values.items())])


def _hub_id(root: Path) -> int:
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        return int(conn.execute("SELECT id FROM notes WHERE path = ?", (HUB,)).fetchone()[0])


def _version(root: Path) -> str | None:
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (reparse.KEY,)).fetchone()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return None if row is None else str(row[0])


def test_an_old_index_is_reparsed_once_without_touching_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    _old_vault(root, monkeypatch)
    hub = root / HUB
    before = (hub.read_bytes(), hub.stat().st_mtime_ns, hub.stat().st_ino)
    with Vault.open(root, watch=False, auto_sync=False) as v:  # the old index as it is
        rows = {r.path: (r.id, r.content_hash) for r in v.note_rows()}
        keys = note_keys(v.corpus())
    with Vault.open(root, watch=False) as v:
        report = v.sync()
        assert report.reparsed == 3
        assert report.updated == [HUB] and not report.added and not report.removed
        assert [ln.resolved for ln in v.links("hub")] == [
            "Target One.md", "people/Robert.md", "Target One.md"]
        assert v.backlinks("people/Robert") == [HUB]
        # Ids and content hashes kept: the dense store's keys (what its vectors are reused
        # by, retrieval/dense_store.py) are the same, so nothing is embedded again.
        assert {r.path: (r.id, r.content_hash) for r in v.note_rows()} == rows
        assert (note_keys(v.corpus()) == keys).all()
    assert (hub.read_bytes(), hub.stat().st_mtime_ns, hub.stat().st_ino) == before
    assert _version(root) == str(PARSE)
    with Vault.open(root, watch=False) as v:
        again = v.sync()
        assert again.reparsed == 0 and not again.changed
        assert [ln.resolved for ln in v.links("hub")][1] == "people/Robert.md"


def test_a_note_edited_meanwhile_is_parsed_once_with_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note whose file changed and one whose stat changed but not its bytes, in the sync
    that re-parses: the first is updated, the second only restatted; a note removed is
    removed."""
    root = tmp_path / "v"
    _old_vault(root, monkeypatch, extra=3)
    (root / "people" / "n0.md").write_text("edited [y](Target%20One)\n", encoding="utf-8")
    os.utime(root / "people" / "n1.md", ns=(1, 1))
    (root / "people" / "n2.md").unlink()
    with Vault.open(root, watch=False) as v:
        report = v.sync()
        assert report.updated == [HUB, "people/n0.md"]
        assert report.removed == ["people/n2.md"]
        assert v.index_stats()["people/n1.md"].mtime_ns == 1
        assert [ln.resolved for ln in v.links("people/n0")] == ["Target One.md"]


@pytest.mark.parametrize("stored", [str(PARSE + 1), str(PARSE + 40)])
def test_rows_a_newer_parser_made_are_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stored: str) -> None:
    """An index a newer rmh parsed (its version above this one's) is not re-parsed down: that
    would lose what the newer parser reads, and two versions sharing a vault would re-read
    every note each time the other opened it. An unreadable version counts as old."""
    root = tmp_path / "v"
    _old_vault(root, monkeypatch)
    _set_meta(root, KEY=stored)
    with Vault.open(root, watch=False) as v:
        assert v.sync().reparsed == 0
        assert [ln.resolved for ln in v.links("hub")] == ["Target One.md"]
    assert _version(root) == stored
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        conn.execute("UPDATE meta SET value = 'x2' WHERE key = ?", (reparse.KEY,))
    with Vault.open(root, watch=False) as v:
        assert v.sync().reparsed > 0
    assert _version(root) == str(PARSE)


def test_a_fresh_index_records_the_version(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v", watch=False) as v:
        v.write("a.md", "[b](b)\n")
        assert v.sync().reparsed == 0
    assert _version(tmp_path / "v") == str(PARSE)


OPEN = """
import os, signal, sys, time
from pathlib import Path
from typing import Any
from vault import Vault
from vault.storage.store import Store
root, go, kill_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
fault = int(sys.argv[4]) or None
while go and not os.path.exists(go):
    time.sleep(0.001)
if kill_at:
    reads = [0]
    real = Store.read_text
    def read_text(self, path):
        reads[0] += 1
        if reads[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, path)
    Store.read_text = read_text
with Vault.open(root, watch=False, fault_after=fault) as v:
    r = v.sync()
    print(r.reparsed, ",".join(r.updated), [ln.resolved for ln in v.links("hub")][1], sep="|")
"""


def _run(root: Path, go: str = "", kill_at: int = 0, fault: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(OPEN), str(root), go, str(kill_at), str(fault)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_opening_an_old_index_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both succeed and see the links; the re-parsed rows are written by exactly one."""
    for attempt in range(3):
        root = tmp_path / f"v{attempt}"
        _old_vault(root, monkeypatch, extra=400)
        go = tmp_path / f"go{attempt}"
        procs = [_run(root, str(go)) for _ in range(2)]
        go.touch()
        outs = [p.communicate(timeout=120) for p in procs]
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
            assert out.strip().split("|")[2] == "people/Robert.md"
        writers = [out for out, _ in outs if out.split("|")[1] == HUB]
        assert len(writers) == 1, outs
        assert [out for out, _ in outs if out.split("|")[1] == ""] != [], outs
        assert _version(root) == str(PARSE)


@pytest.mark.parametrize("kill_at", [1, 200, 403])
def test_a_kill_during_the_reparse_is_completed_by_the_next_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kill_at: int) -> None:
    root = tmp_path / "v"
    _old_vault(root, monkeypatch, extra=400)
    p = _run(root, kill_at=kill_at)
    p.communicate(timeout=120)
    assert p.returncode == -9
    assert _version(root) is None  # killed before the commit: the old rows, the old version
    p = _run(root)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert out.strip().split("|") == ["403", HUB, "people/Robert.md"]
    assert _version(root) == str(PARSE)


def test_a_kill_right_after_the_reparse_commits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed at the first file operation after the commit (the catch-up record): the next
    open finds the version current and reads no note."""
    root = tmp_path / "v"
    _old_vault(root, monkeypatch, extra=20)
    p = _run(root, fault=1)
    p.communicate(timeout=120)
    assert p.returncode == -9
    assert _version(root) == str(PARSE)
    p = _run(root)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert out.strip().split("|") == ["0", "", "people/Robert.md"]


def test_a_note_unreadable_during_the_reparse_is_reparsed_once_it_can_be_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The version is recorded when the re-parse commits, but a note whose file could not be
    read then (permission denied, an I/O error) still holds the old parser's rows: it is owed
    a re-parse, and the first full sync that can read it does it (its stat unchanged, so
    nothing else would), without reading the rest again."""
    root = tmp_path / "v"
    _old_vault(root, monkeypatch, extra=2)
    real_open = os.open

    def refusing(path: str, flags: int, *a: int, **k: int) -> int:
        if os.fsdecode(path) == HUB:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *a, **k)

    with monkeypatch.context() as m:
        m.setattr(os, "open", refusing)
        with Vault.open(root, watch=False) as v:
            report = v.sync()
            assert report.errors == [f"{HUB}: permission denied"] and not report.updated
    assert _version(root) == str(PARSE)
    with Vault.open(root, watch=False) as v:  # readable again, its stat unchanged
        report = v.sync()
        assert report.updated == [HUB] and report.reparsed == 1
        assert v.backlinks("people/Robert") == [HUB]
    with Vault.open(root, watch=False) as v:
        assert v.sync().reparsed == 0


def test_a_note_owed_a_reparse_leaves_writes_and_partial_syncs_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    _old_vault(root, monkeypatch)
    hub = _hub_id(root)
    _set_meta(root, KEY=str(PARSE), OWED=f"[{hub}]")
    runs: list[object] = []
    real = sync_module._sync

    def counted(*a: Any, **k: Any) -> SyncReport:
        runs.append(a[2])
        return real(*a, **k)

    monkeypatch.setattr(sync_module, "_sync", counted)
    with Vault.open(root, watch=False, auto_sync=False) as v:
        v.write("new", "a new note [n](Target%20One)\n")
        assert runs == [["new.md"]]  # the partial sync ran once: nothing owed is its business
        assert [ln.resolved for ln in v.links("new")] == ["Target One.md"]
        report = v.sync()
        assert report.reparsed == 1 and report.updated == [HUB]
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        owed = conn.execute("SELECT value FROM meta WHERE key = ?", (reparse.OWED,)).fetchone()
    assert owed == ("[]",)


def test_notes_a_newer_parser_owes_are_left_to_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index a newer rmh parsed, with notes it could not read owed (`OWED`): this older
    parser neither re-parses them down nor records its own version over the newer one (the
    newer rmh would then re-read every note at its next open)."""
    root = tmp_path / "v"
    _old_vault(root, monkeypatch)
    newer = str(PARSE + 1)
    hub = _hub_id(root)
    _set_meta(root, KEY=newer, OWED=f"[{hub}]")
    with Vault.open(root, watch=False) as v:
        assert v.sync().reparsed == 0
        assert [ln.resolved for ln in v.links("hub")] == ["Target One.md"]
    assert _version(root) == newer
    with sqlite3.connect(root / ".rmh" / "index.sqlite") as conn:
        owed = conn.execute("SELECT value FROM meta WHERE key = ?", (reparse.OWED,)).fetchone()
    assert owed == (f"[{hub}]",)


@pytest.mark.parametrize("stored", ["\u00b2", "\u0663", " 2", ""])
def test_an_unreadable_version_is_old_and_never_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stored: str) -> None:
    """A version no int reads ("²" is a digit to str.isdigit, not to int) counts as old."""
    root = tmp_path / "v"
    _old_vault(root, monkeypatch)
    _set_meta(root, KEY=stored)
    with Vault.open(root, watch=False) as v:
        assert v.sync().reparsed > 0
    assert _version(root) == str(PARSE)
