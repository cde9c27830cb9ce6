"""The intent journal (vault/storage/intents.py): a plan recorded before the first change,
finished by the next open whatever step the last process reached; idempotent; rolled back
when the rename cannot be made; a referrer changed since is left and reported."""

from __future__ import annotations

import os
from pathlib import Path

from vault import Vault
from vault.notes.hashing import content_hash
from vault.storage.intent_writes import Write, WritesIntent
from vault.storage.intents import Journal, MoveIntent, Rewrite, apply_move
from vault.storage.store import Store

OLD_REF = "see [[T]]\n"
NEW_REF = "see [[U]]\n"


def setup(tmp_path: Path) -> tuple[Store, MoveIntent]:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "T.md").write_text("target\n", encoding="utf-8")
    for name in ("r1", "r2"):
        (root / f"{name}.md").write_text(OLD_REF, encoding="utf-8")
    intent = MoveIntent("T.md", "U.md", content_hash("target\n"),
                        (Rewrite("r1.md", OLD_REF, NEW_REF), Rewrite("r2.md", OLD_REF, NEW_REF)))
    return Store(root), intent


def read(store: Store, path: str) -> str:
    return (store.root / path).read_text(encoding="utf-8")


def test_recovery_finishes_a_half_made_move_and_is_idempotent(tmp_path: Path) -> None:
    store, intent = setup(tmp_path)
    journal = Journal(store)
    name = journal.record(intent)
    store.move("T.md", "U.md")  # the process "died" after its rename
    store.write_text("r1.md", NEW_REF)
    assert journal.pending() == [name]
    (outcome,) = journal.recover()
    assert outcome.state == "rolled forward" and outcome.written == ["r2.md"]
    assert read(store, "r2.md") == NEW_REF and not (store.root / "T.md").exists()
    assert journal.pending() == [] and journal.recover() == []
    again = apply_move(store, intent)  # a second roll forward changes nothing
    assert again.written == [] and again.left == [] and read(store, "U.md") == "target\n"


def test_a_referrer_changed_since_is_left_and_reported(tmp_path: Path) -> None:
    store, intent = setup(tmp_path)
    Journal(store).record(intent)
    (store.root / "r2.md").write_text("someone else's edit [[T]]\n", encoding="utf-8")
    (outcome,) = Journal(store).recover()
    assert outcome.written == ["r1.md"] and outcome.left == ["r2.md"]
    assert read(store, "r2.md") == "someone else's edit [[T]]\n"
    assert (store.root / "U.md").exists()


def test_a_rename_that_cannot_be_made_is_rolled_back(tmp_path: Path) -> None:
    store, intent = setup(tmp_path)
    Journal(store).record(intent)
    store.write_text("r1.md", NEW_REF)  # made before the "crash"
    os.unlink(store.root / "T.md")  # and the note is gone since (not renamed): undo
    (outcome,) = Journal(store).recover()
    assert outcome.state == "rolled back" and outcome.written == ["r1.md"]
    assert read(store, "r1.md") == OLD_REF and read(store, "r2.md") == OLD_REF


def test_a_rename_killed_between_its_link_and_unlink_is_finished(tmp_path: Path) -> None:
    store, intent = setup(tmp_path)
    Journal(store).record(intent)
    os.link(store.root / "T.md", store.root / "U.md")  # both names: one file
    (outcome,) = Journal(store).recover()
    assert outcome.state == "rolled forward"
    assert not (store.root / "T.md").exists() and read(store, "U.md") == "target\n"


def test_vault_open_recovers_and_doctor_reports(tmp_path: Path) -> None:
    store, intent = setup(tmp_path)
    Journal(store).record(intent)
    with Vault.open(store.root) as v:
        report = v.doctor()
        assert report["intents"]["pending"] == []
        (outcome,) = report["intents"]["recovered"]
        assert outcome["written"] == ["r1.md", "r2.md"]
        assert report["dangling_links"] == []
        assert v.backlinks("U") == ["r1.md", "r2.md"]


def test_move_inside_a_batch_rewrites_the_links(tmp_path: Path) -> None:
    store, _ = setup(tmp_path)
    with Vault.open(store.root) as v:
        with v.batch():
            result = v.move("T", "sub/U")
        assert result.rewritten == ("r1.md", "r2.md")
        assert read(store, "r1.md") == "see [[U]]\n"
        assert v.backlinks("sub/U") == ["r1.md", "r2.md"]
        assert not (store.root / ".rmh" / "intents").exists() or not Journal(store).pending()


def test_an_intent_that_cannot_be_finished_stays_pending_and_the_vault_opens(
        tmp_path: Path) -> None:
    store, intent = setup(tmp_path)
    # a plan whose rewrite the store refuses (a NUL byte: binary), as no live move records
    intent = MoveIntent(intent.old, intent.new, intent.moved_hash,
                        (Rewrite("r1.md", OLD_REF, "see\x00[[U]]\n"),))
    Journal(store).record(intent)
    (outcome,) = Journal(store).recover()
    assert outcome.state.startswith("failed") and len(Journal(store).pending()) == 1
    with Vault.open(store.root) as v:
        assert v.read("U").text == "target\n"
        report = v.doctor()["intents"]
        assert report["pending"] == Journal(store).pending()
        assert report["recovered"][0]["state"].startswith("failed")


def test_a_folder_or_a_symlink_at_a_path_of_the_plan_rolls_back_or_is_left(
        tmp_path: Path) -> None:
    """No note is at a path of the plan now: a folder or a symlink leaving the vault at the
    rename's target rolls the move back, one at a referrer is left and reported (was: the
    recovery failed at every open, the intent pending for good, STORE12 session 37)."""
    outside = tmp_path / "outside.md"
    outside.write_text("outside [[T]]\n", encoding="utf-8")
    for at_new in ("folder", "symlink"):
        store, intent = setup(tmp_path / at_new)
        Journal(store).record(intent)
        store.write_text("r1.md", NEW_REF)  # made before the "crash"
        if at_new == "folder":
            (store.root / "U.md").mkdir()
        else:
            (store.root / "U.md").symlink_to(outside)
        (outcome,) = Journal(store).recover()
        assert outcome.state == "rolled back" and outcome.written == ["r1.md"], at_new
        assert read(store, "T.md") == "target\n" and Journal(store).pending() == []
    store, intent = setup(tmp_path / "referrer")
    Journal(store).record(intent)
    os.unlink(store.root / "r2.md")
    (store.root / "r2.md").symlink_to(outside)
    (outcome,) = Journal(store).recover()
    assert outcome.state == "rolled forward" and outcome.left == ["r2.md"]
    assert read(store, "r1.md") == NEW_REF and Journal(store).pending() == []
    assert outside.read_text(encoding="utf-8") == "outside [[T]]\n"


def test_files_a_recovery_left_are_reported_by_the_next_doctor_whoever_recovered(
        tmp_path: Path) -> None:
    """A killed move recovered by a command that reports nothing (here a plain open, as
    `rmh read` makes) while a referrer is mid-save, renamed away vim-style: the referrer is
    left. The editor then puts it back with its old link, which dangles. The next doctor
    lists that recovery and its left file (was: `recovered` empty, only the dangling link,
    NOTES-MOVE3), once: a second doctor no longer does."""
    store, intent = setup(tmp_path)
    Journal(store).record(intent)
    os.rename(store.root / "r2.md", store.root / "r2.md~")
    with Vault.open(store.root) as v:
        assert v.read("r1").text == NEW_REF
    os.rename(store.root / "r2.md~", store.root / "r2.md")
    with Vault.open(store.root) as v:
        report = v.doctor()
        (outcome,) = report["intents"]["recovered"]
        assert outcome["left"] == ["r2.md"] and outcome["written"] == ["r1.md"]
        assert [d["note"] for d in report["dangling_links"]] == ["r2.md"]
        assert v.doctor()["intents"]["recovered"] == []
    assert not [p for p in (store.root / ".rmh").rglob("*") if p.name.endswith(".tmp")]


def test_a_journalled_write_whose_path_became_a_symlink_leaving_the_vault_is_left(
        tmp_path: Path) -> None:
    """An ingest's journalled writes (`WritesIntent`): a new note's path taken meanwhile by a
    symlink leaving the vault (or a folder) is left and reported, the other writes made,
    nothing written through it (was: `path refused` at every open, none of them made)."""
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n", encoding="utf-8")
    for kind in ("symlink", "folder"):
        root = tmp_path / kind
        (root / ".rmh").mkdir(parents=True)
        (root / "old.md").write_text("old\n", encoding="utf-8")
        store = Store(root)
        Journal(store).record(WritesIntent((Write("new.md", None, "new\n"),
                                            Write("old.md", content_hash("old\n"), "old2\n"))))
        if kind == "symlink":
            (root / "new.md").symlink_to(outside)
        else:
            (root / "new.md").mkdir()
        (outcome,) = Journal(store).recover()
        assert (outcome.state, outcome.written, outcome.left) == (
            "rolled forward", ["old.md"], ["new.md"]), kind
        assert read(store, "old.md") == "old2\n" and Journal(store).pending() == []
    assert outside.read_text(encoding="utf-8") == "outside\n"
