"""The harness's two read-only SQLite opens of the held `.rmh` (HOUSE39, session 39): the hooks'
index (`hooks_index.reading`, every prompt) and the LLM entity cache (`llm_entities.Cache.get`).

Both connected by a plain `sqlite3.connect` of the path `state_or_plain` gave, unchecked: a
symlink planted in place of `hooks.sqlite` was read through (`is_file` follows it), and with
`.rmh` away for a moment the plain `root/.rmh/NAME` was read through the symlink a flipper put
there next: the prompt recalled another vault's notes (`HOUSE39_read_loop.py.txt`: 85 reads
of the other vault's rows in 60 s on main, 0 here). Now both read only the held folder's own
file (`hooks_used.held_file`) through `connect_state(..., read_only=True)`, as every other
state file: checked by inode, never a symlink. (The swap at SQLite's open itself is
`connect_held`'s, tested in tests/vault/storage/test_held_sqlite_window.py.)"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from harness import hooks_index, hooks_used
from harness.llm_entities import Cache
from vault import PathRefused, Vault
from vault import held_state as vault_held_state


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
    real_held_state = vault_held_state  # what hooks_used calls

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
