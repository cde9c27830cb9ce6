"""Hard-linked notes under the watcher (vault/storage/live.py): two names of one file are two
notes, and a write through one changes both, but inotify names only the one written. Before,
a long-running process (`rmh serve`) kept the other name's old text in its index (search found
it by words it no longer holds) until some full scan; now the changed file's other indexed
names are synced with it."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from vault import Vault

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")


def hits(v: Vault, query: str) -> set[str]:
    return {h.note for h in v.search(query, 10, learn=False).hits}


def test_every_name_of_a_hard_linked_file_follows_its_edits(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        assert v.watcher is not None
        v.write("a.md", "original words\n")
        os.link(root / "a.md", root / "b.md")
        os.makedirs(root / "sub")
        os.link(root / "a.md", root / "sub" / "c.md")
        v.write("other.md", "unrelated\n")
        names = ["a.md", "b.md", "sub/c.md"]
        assert hits(v, "original") == set(names)
        rng = random.Random(7)
        for n in range(6):
            word = f"zanzibar{n}"
            with open(root / rng.choice(names), "r+") as fh:  # in place, as an editor may
                fh.truncate(0)
                fh.write(f"{word} text\n")
            assert hits(v, word) == set(names), n
            assert not hits(v, "original"), n
            assert {p: v.read(p, learn=False).text for p in names} == dict.fromkeys(
                names, f"{word} text\n")
