"""A live move (not killed) while an editor saves, in notes the move's plan did not list, links
to the moved note's old name (NOTES-MOVE4 "Still weak" 1). The move was not acknowledged yet,
so such a link meant the note that moves: it is rewritten before the move ends, as the
recovery of a killed move does (storage/intent_added.py), and the note is reported rewritten.
On main those links dangled, unreported (docs/measurements/session31/STORE5_live_unlisted).

Generated vaults of notes named alike (tests/vault/notes/test_relinks.py); the editor (no
lock) saves each unlisted note right after a file operation of the move drawn at random from
its first (the intent being recorded) to the last one before the journal's finish."""

from __future__ import annotations

import posixpath
import random
import shutil
from pathlib import Path

import pytest

from tests.vault.notes.test_relinks import forms, link
from tests.vault.storage.test_intent_added import meaning, planned_move, relinked
from vault import Vault
from vault.notes.links import Resolver
from vault.notes.markdown_scan import scan_body


def _last_op(root: Path, old: str, new: str) -> int:
    """The move's last file operation before its intent file is removed (the journal's
    finish), counted in a copy of the vault, with no editor."""
    copy = root.parent / "ops"
    shutil.copytree(root, copy)
    with Vault.open(copy) as v:
        counted, start, last = v.store.count_op, v.store.ops, [0]

        def count() -> None:
            counted()
            if any((copy / ".rmh" / "intents").glob("*.json")):
                last[0] = v.store.ops - start

        v.store.count_op = count  # type: ignore[method-assign]
        v.move(old, new)
    return last[0]


@pytest.mark.parametrize("seed", range(16))
def test_a_link_to_the_old_name_saved_during_a_live_move_in_an_unlisted_note_is_rewritten(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    notes, _, before, old, new, after = planned_move(rng, root)
    paths = sorted(notes)
    unlisted = [p for p in paths if p != old and all(
        meaning(before, s.link, p) != old for s in scan_body(notes[p]).sites)]
    Vault.init(root).close()
    last = _last_op(root, old, new)
    written = {}
    for path in unlisted:
        line = " ".join(link(rng, f) if rng.random() < 0.5 else f"[[{posixpath.splitext(f)[0]}]]"
                        for f in forms(path, old))
        written[path] = notes[path] + line + "\n"
    at: dict[int, list[str]] = {}
    for path in unlisted:
        at.setdefault(rng.randint(1, last), []).append(path)
    with Vault.open(root) as v:
        counted = v.store.count_op
        start = v.store.ops

        def editor_saves() -> None:
            counted()
            for path in at.get(v.store.ops - start, []):
                tmp = root / posixpath.dirname(path) / ".editor.tmp"
                tmp.write_text(written[path], encoding="utf-8")
                tmp.replace(root / path)

        v.store.count_op = editor_saves  # type: ignore[method-assign]
        res = v.move(old, new)
        v.store.count_op = counted  # type: ignore[method-assign]
        assert res.not_rewritten == ()
        assert new not in res.rewritten[:-1]  # the moved note, when rewritten, is last
    assert relinked(root, {p: written[p] for p in unlisted}, before, after, old, new,
                    res.rewritten) > 0


@pytest.mark.parametrize("seed", range(8))
def test_a_folder_moved_into_the_vault_during_a_live_move_has_its_old_name_links_rewritten(
        tmp_path: Path, seed: int) -> None:
    """Another program moves a folder of notes linking the old name into the vault (`mv
    ~/drafts vault/`) during the move: a folder's rename leaves its notes' ctimes as they
    were, so the pass read none of them and those links dangled, unreported."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    (root / "a").mkdir(parents=True)
    (root / "a" / "Target.md").write_text("the target\n", encoding="utf-8")
    (root / "R.md").write_text("R links [[Target]]\n", encoding="utf-8")
    old, new = "a/Target.md", "b/Moved.md"
    drafts = tmp_path / "drafts"
    inner = rng.choice(["", "deeper", "deeper/still"])
    places = [posixpath.join("drafts", inner, f"D{i}.md") for i in range(rng.randint(1, 3))]
    written = {}
    for path in places:
        line = " ".join(link(rng, f) if rng.random() < 0.5 else f"[[{posixpath.splitext(f)[0]}]]"
                        for f in forms(path, old))
        written[path] = f"draft\n{line}\n"
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(written[path], encoding="utf-8")
    Vault.init(root).close()
    n = rng.randint(1, _last_op(root, old, new))
    with Vault.open(root) as v:
        counted, start = v.store.count_op, v.store.ops

        def mover() -> None:
            counted()
            if v.store.ops - start == n:
                drafts.rename(root / "drafts")

        v.store.count_op = mover  # type: ignore[method-assign]
        res = v.move(old, new)
        v.store.count_op = counted  # type: ignore[method-assign]
    after = Resolver.build({1: new, 2: "R.md", **{i: p for i, p in enumerate(places, 3)}}, {})
    for path in places:
        now = (root / path).read_text(encoding="utf-8")
        assert path in res.rewritten
        assert all(meaning(after, s.link, path) == new for s in scan_body(now).sites), now
