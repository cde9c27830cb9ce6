"""A write whose bytes the index would skip as binary (a NUL in the first 8 KiB, the rule of
`Store.read_text`) is refused before anything is written (vault/storage/store.py). Before, the
file landed and the caller got `note_skipped`: an acknowledged-as-failed write that happened, an
edit that turned an indexed note into a skipped file and dropped it from search and links."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Edit, Vault
from vault.errors import NotText
from vault.storage.store import BINARY_PROBE_BYTES


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".rmh" not in p.parts}


def test_writes_and_edits_that_would_make_a_binary_note_change_nothing(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("a.md", "# a\nalpha text\n")
        for seed in range(40):
            rng = random.Random(seed)
            at = rng.randrange(BINARY_PROBE_BYTES - 1)
            spoiled = ("x" * at + "\x00" + "y" * rng.randrange(50))
            before = files(root)
            with pytest.raises(NotText):
                if seed % 3 == 0:
                    v.write(f"n{seed}.md", spoiled)
                elif seed % 3 == 1:
                    v.write("a.md", spoiled)
                else:
                    v.edit("a.md", Edit(rng.choice(["append", "prepend"]), "\x00"))
            assert files(root) == before, seed
        assert [h.note for h in v.search("alpha", 5, learn=False).hits] == ["a.md"]
        assert v.index.skipped() == {}


def test_a_nul_past_the_probe_is_text_as_the_reader_says(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        text = "z" * BINARY_PROBE_BYTES + "\x00tail"
        v.write("late.md", text)
        assert v.read("late.md", learn=False).text == text


def test_a_journalled_change_with_a_binary_note_is_refused_before_any_write(
        tmp_path: Path) -> None:
    """Several notes written as one operation (an ingest built by code, a correction) are
    checked before the first write, so none lands when one would be refused midway."""
    root = tmp_path / "v"
    with Vault.init(root) as v:
        before = files(root)
        with pytest.raises(NotText), v.journalled([("x.md", "fine\n"), ("y.md", "a\x00b")]):
            v.write("x.md", "fine\n")
            v.write("y.md", "a\x00b")
        assert files(root) == before
