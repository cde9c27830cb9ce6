"""On a read-only vault the commands that only read learned state answer, and `rmh index`,
which cannot store its sync, says so (VAULT10, session 36).

Before: `rmh learning`, `rmh learning NOTE`, `rmh replay --check`, `rmh replay --until N` and
`rmh lifecycle` (no `--apply`: a report) were refused as `read_only_vault`, though they
write nothing; `rmh index` printed "indexed 3 notes (+0 ...)" and exit 0 while a note added
since stayed out of the index; and (found with this fix) closing a ledger read only
checkpointed it: a traceback when its owner's log had a write not yet checkpointed.
Real CLI on a real read-only bind mount (root: EROFS); every file under the mount, `.rmh/`
included, keeps its bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh
from tests.harness.test_read_only_vault import read_only_mount, tree

pytestmark = pytest.mark.slow
__all__ = ["read_only_mount"]  # the fixture, used by name below

READS = (("learning",), ("learning", "Alpha"), ("replay", "--check"), ("replay", "--until", "1"),
         ("lifecycle",))
WRITES = (("replay",), ("lifecycle", "--apply"), ("archive", "Alpha"), ("index", "--no-dense"))


def test_learning_reads_answer_and_index_refuses_on_a_read_only_mount(
        read_only_mount: Path) -> None:
    root = read_only_mount
    source = root.parent / "src"
    (source / "Late.md").write_text("Late kiwi note, after the index.\n", encoding="utf-8")
    # the owner's process still has the log open with a write not yet checkpointed (a
    # running `rmh serve`): closing the read-only ledger must not checkpoint it (EROFS)
    owner = sqlite3.connect(source / ".rmh" / "learned.sqlite")
    owner.execute("PRAGMA wal_autocheckpoint=0")
    version = owner.execute("PRAGMA user_version").fetchone()[0]
    owner.execute(f"PRAGMA user_version={int(version)}")
    owner.commit()
    assert (source / ".rmh" / "learned.sqlite-wal").stat().st_size > 0
    try:
        _check(root)
    finally:
        owner.close()


def _check(root: Path) -> None:
    before = tree(root)
    v = ("--vault", str(root))
    for args in READS:
        r = rmh(*v, *args, "--json")
        assert r.returncode == 0, (args, r.stderr)
        assert "Traceback" not in r.stderr
        json.loads(r.stdout)
    history = json.loads(rmh(*v, "learning", "Alpha", "--json").stdout)
    assert history["note"] == "Alpha.md"
    for args in WRITES:
        r = rmh(*v, *args, "--json")
        assert r.returncode == 1, (args, r.stdout)
        assert json.loads(r.stdout)["error"]["kind"] == "read_only_vault", args
        assert r.stderr.strip().splitlines()[-1].startswith("rmh: read-only vault"), r.stderr
    assert tree(root) == before
