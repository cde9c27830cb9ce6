"""The harness's two read-only SQLite opens of the held `.rmh` (HOUSE39, session 39): the hooks'
index (`hooks_index.reading`, every prompt) and the LLM entity cache (`llm_entities.Cache.get`).

Both connected by a plain `sqlite3.connect` of the held path's text (`/proc/self/fd/N/NAME`),
which SQLite resolves itself: a `.rmh` swapped for a symlink in that moment had it read, and
make a `-shm` in, the folder the symlink named (STORE13's attack, NOTES-HOUSE39.md), and
nothing checked the file it opened; a symlink planted in place of `hooks.sqlite` was read
through (`is_file` follows it): the prompt recalled another vault's notes; and with `.rmh`
away for a moment both read the plain `root/.rmh/NAME`, through whatever was put there next.
Now both read only the held folder's file (`hooks_used.held_file`) through `connect_state(...,
read_only=True)`, as every other state file: its own, checked by inode, never a symlink."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness import hooks_index, hooks_used
from harness.llm_entities import Cache
from vault import PathRefused, Vault


def _vault(root: Path, name: str, word: str) -> None:
    root.mkdir()
    (root / f"{name}.md").write_text(f"# {name}\nThe {word} runbook.\n", encoding="utf-8")
    Vault.init(root).close()
    with contextlib.closing(Vault.open(root, watch=False)) as v:
        hooks_index.refresh(v)


def test_the_prompt_never_recalls_through_a_symlink_in_place_of_the_index(
        tmp_path: Path) -> None:
    root, other = tmp_path / "v", tmp_path / "other"
    _vault(root, "kiwi", "kiwi")
    _vault(other, "mango", "mango")  # another vault's index (its -wal, -shm gone at its close)
    os.unlink(root / ".rmh" / "hooks.sqlite")
    os.symlink(other / ".rmh" / "hooks.sqlite", root / ".rmh" / "hooks.sqlite")
    before = sorted(os.listdir(other / ".rmh"))
    assert hooks_index.search(root, ["mango"], 5) == []  # main: other's mango.md recalled
    assert sorted(os.listdir(other / ".rmh")) == before
    os.unlink(root / ".rmh" / "hooks.sqlite")
    with contextlib.closing(Vault.open(root, watch=False)) as v:
        hooks_index.refresh(v)  # the writer's open: a fresh index, own notes only
    assert [r.path for r in hooks_index.search(root, ["kiwi"], 5)] == ["kiwi.md"]


def test_the_index_read_through_a_swap_at_the_open_is_refused_or_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`.rmh` swapped for a symlink to another vault's `.rmh` right at SQLite's open (after
    the name was resolved, the moment the flipper hits): the rows read are the vault's own or
    none (PathRefused), and nothing is made in the other folder."""
    root, other = tmp_path / "v", tmp_path / "other"
    _vault(root, "kiwi", "kiwi")
    _vault(other, "elsewhere", "kiwi")
    hooks_index.index_path(root)  # held before the swap, as by the hook's start
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        if not os.path.islink(root / ".rmh"):
            os.rename(root / ".rmh", root / ".rmh-away")
            os.symlink(other / ".rmh", root / ".rmh")
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        return conn

    before = sorted(os.listdir(other / ".rmh"))
    monkeypatch.setattr(sqlite3, "connect", connect)
    try:
        with hooks_index.reading(root) as r:
            assert r is not None
            rows = r.search(["kiwi"], 5)
        assert [row.path for row in rows] == ["kiwi.md"]
    except PathRefused:
        pass
    monkeypatch.undo()
    assert sorted(os.listdir(other / ".rmh")) == before


@pytest.mark.parametrize("what", ["index", "cache"])
def test_a_read_never_goes_through_the_link_put_where_rmh_was_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str) -> None:
    """The flipper's other half: `.rmh` renamed away (no `.rmh`: NotAVault), then a symlink
    to another vault's `.rmh` put in its place. Main read the plain `root/.rmh/NAME` then,
    through that symlink: the other vault's note recalled (the probe's reads of the other
    vault's rows, NOTES-HOUSE39.md; main's cache looked its path up twice more, and was
    refused by the link, here). The link is put right after the real `held_state` found no
    `.rmh`."""
    root, other = tmp_path / "v", tmp_path / "other"
    _vault(root, "kiwi", "kiwi")
    _vault(other, "elsewhere", "kiwi")
    Cache(other).put([("k1", "m", "p", ("Other",))])
    os.rename(root / ".rmh", root / ".rmh-away")
    real_held_state = hooks_used.held_state

    def held_state(folder: Path, **kwargs: Any) -> Path:
        try:
            return real_held_state(folder, **kwargs)
        finally:
            if not os.path.islink(root / ".rmh"):
                os.symlink(other / ".rmh", root / ".rmh")

    monkeypatch.setattr(hooks_used, "held_state", held_state)
    try:
        got: object = ([r.path for r in hooks_index.search(root, ["kiwi"], 5)] if what == "index"
                       else Cache(root).get(["k1"]))
    except PathRefused:
        got = None
    assert got in ([], {}, None)  # main: ['elsewhere.md']
