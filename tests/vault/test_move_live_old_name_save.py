"""A live move (not killed) while the moved note's editor saves it under the name it knows,
the old one (a temporary renamed over it, as editors save), after each file operation of
the move in turn, up to the journal's finish (session 36, STORE11's promise, until now tested
only between a killed move and its recovery: tests/harness/test_crash_move_old_name_save.py).

Invariant, at every point: the editor's text is in exactly one note of the vault. When the
move answered, that note is the new name and nothing is left at the old one (the move
reports it rewritten when the save came after its rename); when it refused, the text is at
the old name and nothing at the new. Before the review's fix a save made between the
rename's hard link and its unlink by name was removed by that unlink, found nowhere."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from tests.vault.editor_saves import saving_after_op
from tests.vault.test_move_live_unlisted import _last_op
from vault import Vault, VaultError

OLD, NEW = "a/Target.md", "b/Target Moved.md"
NOTES = {OLD: "# Target\n\nThe plan.\n", "c/Ref.md": "See [[a/Target]].\n",
         "c/Other.md": "Unrelated.\n"}
SAVED = "# Target\n\nThe plan, saved by the editor under the name it knows.\n"


def _vault(root: Path) -> None:
    for path, text in NOTES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    Vault.init(root).close()


def _holding(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")
                  if ".rmh" not in p.parts and p.read_text(encoding="utf-8") == SAVED)


def test_a_save_under_the_old_name_during_a_live_move_follows_the_note(tmp_path: Path) -> None:
    base = tmp_path / "base"
    _vault(base)
    last = _last_op(base, OLD, NEW)
    assert last > 2
    followed = 0
    for at in range(1, last + 1):
        root = tmp_path / f"v{at}"
        shutil.copytree(base, root)
        with Vault.open(root) as v, saving_after_op(v, root / OLD, SAVED, at):
            try:
                res = v.move(OLD.removesuffix(".md"), NEW.removesuffix(".md"))
            except VaultError:
                res = None
        held = _holding(root)
        if res is None:
            assert held == [OLD] and not (root / NEW).exists(), at
            continue
        assert held == [NEW], (at, held)
        assert not (root / OLD).exists(), at
        followed += NEW in res.rewritten  # saved after the rename: it followed the note
        assert list((root / ".rmh" / "intents").glob("*.json")) == [], at
    assert followed > 0


def test_the_vault_links_reach_the_followed_note(tmp_path: Path) -> None:
    """After the move with a save under the old name right after its last operation but the
    journal's finish, the referrer's link names the new path and the link index resolves it."""
    base = tmp_path / "base"
    _vault(base)
    last = _last_op(base, OLD, NEW)
    with Vault.open(base) as v, saving_after_op(v, base / OLD, SAVED, last):
        v.move(OLD.removesuffix(".md"), NEW.removesuffix(".md"))
    assert (base / "c/Ref.md").read_text(encoding="utf-8") == "See [[Target Moved]].\n"
    assert _holding(base) == [NEW]


def test_a_save_during_a_live_delete_is_kept_somewhere(tmp_path: Path) -> None:
    """The same window in a delete (`trash`: a hard link into the trash, then the note's name
    removed): an editor's save after each of the delete's file operations is never lost; its
    bytes are in the vault or in its trash (a delete racing a save may take it there)."""
    base = tmp_path / "base"
    _vault(base)
    with Vault.open(shutil.copytree(base, tmp_path / "count")) as v:
        start = v.store.ops
        v.delete(OLD.removesuffix(".md"))
        ops = v.store.ops - start
    assert ops > 1
    for at in range(1, ops + 1):
        root = tmp_path / f"d{at}"
        shutil.copytree(base, root)
        with Vault.open(root) as v, saving_after_op(v, root / OLD, SAVED, at), \
                contextlib.suppress(VaultError):
            v.delete(OLD.removesuffix(".md"))
        kept = [p for p in root.rglob("*") if p.is_file() and p.read_bytes() == SAVED.encode()]
        assert kept, at


def test_another_note_made_at_the_freed_old_name_during_a_live_move_is_reported(
        tmp_path: Path) -> None:
    """Another note made at the old name as soon as the move's rename freed it takes the
    note's place (nothing tells it from a save); the move's answer names the trash copy of
    the text it replaced (FIX37: before, nothing said it)."""
    base = tmp_path / "base"
    _vault(base)
    fresh = "# Another note\n\nMade at the free name.\n"
    made: list[bool] = []
    with Vault.open(base) as v:
        counted = v.store.count_op

        def user_makes() -> None:
            counted()
            if not made and not (base / OLD).exists():
                made.append(True)
                (base / OLD).write_text(fresh, encoding="utf-8")

        v.store.count_op = user_makes  # type: ignore[method-assign]
        res = v.move(OLD.removesuffix(".md"), NEW.removesuffix(".md"))
    assert (base / NEW).read_text(encoding="utf-8") == fresh
    (kept,) = res.replaced
    assert (base / kept).read_text(encoding="utf-8") == NOTES[OLD]
    assert res.to_json()["replaced"] == [kept]
