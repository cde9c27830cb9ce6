"""A running `rmh serve` (a real subprocess) sees an edit that keeps a note's size and mtime
(written in place, its mtime set back as `touch -r` and `rsync -t` do), whether the edit lands
right after the server read the note (git's racily clean case) or long after: the next search
and read give the new text, and never the old one again. test_cli_stat_identity.py holds the
same promise for a new process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from vault.storage import folders

from .test_cli_stat_identity import _edit_keeping_stat
from .test_server_e2e import Server

pytestmark = pytest.mark.slow


def _finds(srv: Server, word: str) -> bool:
    res = srv.call("vault.search", {"query": word, "k": 3})["result"]
    return any(h["note"] == "Animals.md" and word in h["snippet"] for h in res["hits"])


@pytest.mark.parametrize("settle", [False, True], ids=["racy", "settled"])
def test_a_running_server_sees_an_edit_that_keeps_size_and_mtime(
        settle: bool, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / ".rmh").mkdir(parents=True)
    note = root / "Animals.md"
    note.write_text("The keeper feeds the zebra every morning.\n", encoding="utf-8")
    srv = Server(root, tmp_path)
    try:
        assert _finds(srv, "zebra")
        for old, new in (("zebra", "hippo"), ("hippo", "camel"), ("camel", "zebra")):
            if settle:
                time.sleep(folders.SETTLED_NS / 1e9 + 0.2)
            _edit_keeping_stat(note, old, new)
            assert _finds(srv, new), (old, new)
            assert not _finds(srv, old), (old, new)
            read = srv.call("vault.read", {"note": "Animals"})["result"]
            assert new in read["text"] and old not in read["text"]
    finally:
        assert srv.finish() == 0
