"""A move waiting for the vault's write lock rewrites the referrers written while it waited.

`rmh serve`'s move resolved the note and read its referrers from the index before it took the
write lock. A referrer that another writer saved while the move waited (a second server's
write, an editor's save) kept `[[Old]]` after the move: a dangling link made by rmh
(docs/measurements/session27/race_move_vs_write.py.txt: 4 of 30 rounds of three racing
servers). The test holds the lock itself, so the move is seen waiting (/proc/locks) before the
referrer is saved, then lets it go."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.race import Served

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks")


def _new_referrer(vault: Path) -> str:
    (vault / "New.md").write_text("new [[Target]] here\n", encoding="utf-8")
    return "New.md"


def _rewritten_referrer(vault: Path) -> str:
    tmp = vault / ".Plain.md.swp"
    tmp.write_text("plain, now linking [[Target|the target]]\n", encoding="utf-8")
    os.replace(tmp, vault / "Plain.md")
    return "Plain.md"


def _in_place_referrer(vault: Path) -> str:
    with open(vault / "Plain.md", "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write("in place [[Target#Plans]]\n")
    return "Plain.md"


def _folder_referrer(vault: Path) -> str:
    (vault / "deep" / "er").mkdir(parents=True)
    (vault / "deep" / "er" / "Ref.md").write_text("- [[Target]]\n", encoding="utf-8")
    return "deep/er/Ref.md"


def _waiters(path: Path) -> int:
    inode = os.stat(path).st_ino
    with open("/proc/locks", encoding="ascii") as fh:
        return sum("->" in line and line.split()[-3].endswith(f":{inode}") for line in fh)


@pytest.mark.parametrize("save", [_new_referrer, _rewritten_referrer, _in_place_referrer,
                                  _folder_referrer], ids=lambda f: f.__name__.strip("_"))
def test_a_referrer_saved_while_the_move_waits_is_rewritten(
        tmp_path: Path, save: Callable[[Path], str]) -> None:
    vault = tmp_path / "v"
    (vault / ".rmh").mkdir(parents=True)
    (vault / "Target.md").write_text("# Target\n## Plans\n", encoding="utf-8")
    (vault / "Plain.md").write_text("plain, no link yet\n", encoding="utf-8")
    (vault / "Old.md").write_text("old [[Target]]\n", encoding="utf-8")
    server = Served(vault)
    try:
        assert "result" in server.call("vault.read", {"note": "Plain.md"})  # started, synced
        lock = vault / ".rmh" / "write.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            server.send("vault.move", {"note": "Target.md", "new": "Moved.md"}, 1)
            for _ in range(3000):  # poll for the state: the move blocked on the lock
                if _waiters(lock):
                    break
                time.sleep(0.01)
            assert _waiters(lock) == 1
            referrer = save(vault)
        finally:
            os.close(fd)
        answer = server.recv()
        assert "result" in answer, answer
        links = server.call("vault.links", {"note": referrer}, 2)["result"]
    finally:
        server.close()
    assert [link["resolved"] for link in links] == ["Moved.md"], links
    assert "Target" not in (vault / referrer).read_text(encoding="utf-8")
    assert "[[Moved]]" in (vault / "Old.md").read_text(encoding="utf-8")
