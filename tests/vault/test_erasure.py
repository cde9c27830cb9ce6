"""vault.erasure: `forget` leaves no erased path in the catch-up record, whether the note was
written since the saved base (its path is one of the record's) or the record was left by an
earlier process, and the next process still reads a snapshot equal to the rows; its trash
removals (a copy behind a symlinked trash is a trace in the proof; one stopped before its
prune is finished by the next open)."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from vault import LEDGER_FILE, ErasurePending, Ledger, NoteNotFound, Vault, erasure_steps
from vault import erasure as erasure_module
from vault.storage import catch_up
from vault.storage import erase as erase_module
from vault.storage.embeddings import SharedEmbeddingCache
from vault.storage.erase import owned_files, scan
from vault.storage.index import Index
from vault.storage.snapshot import build_snapshot

from .storage.test_increment import _same

SECRET = "zanzibar secret diary.md"


@pytest.mark.parametrize("how", ["same process", "new process", "another writer between",
                                 "chain broken"])
def test_forget_leaves_no_erased_path_in_the_catch_up_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """The record is rewritten without the removed path by the erasure's own sync (another
    process's record included: this one adopts it); when no record is written for the
    erasure's sync (a chain broken by a writer at the wrong moment), the erasure removes the
    record with the base's columns."""
    v = Vault.init(tmp_path / "v")
    for k in range(5):
        v.write(f"n{k}.md", f"note {k} words [[n{(k + 1) % 5}]]\n")
    v.corpus()
    v.close()
    with Vault.open(v.root, watch=False) as w:  # the base: saved by this process's build
        w.corpus()
    w = Vault.open(v.root, watch=False)
    w.write(SECRET, "the zanzibar line that is long enough to be a needle\n")
    w.write("n2.md", "n2 edited after the base\n")
    w.corpus()
    record = v.root / ".rmh" / catch_up.FILE
    assert SECRET in record.read_text(encoding="utf-8")  # a path since the base
    if how == "new process":
        w.close()
        w = Vault.open(v.root, watch=False)
    elif how == "another writer between":
        with Vault.open(v.root, watch=False) as other:
            other.write("n4.md", "n4 written by another process\n")
        assert SECRET in record.read_text(encoding="utf-8")
    elif how == "chain broken":
        monkeypatch.setattr(catch_up, "extend", lambda *args, **kwargs: None)
    erased = w.forget(w.forget_plan([SECRET]))
    assert erased.proof.occurrences == 0, erased.proof.found
    w.write("n3.md", "n3 edited after the erasure\n")  # the record is written again
    assert not record.exists() or SECRET not in record.read_text(encoding="utf-8")
    w.close()
    with Vault.open(v.root, watch=False) as fresh:
        _same(fresh.live.snapshot(), build_snapshot(fresh.index))


def test_a_trash_copy_the_erasure_could_not_remove_is_in_its_proof(tmp_path: Path) -> None:
    """A trash copy the plan found behind a symlinked trash folder (an older rmh's copies in a
    trash moved elsewhere and linked) is not removed (anchored.remove_below follows no link),
    and the proof, which walks the vault without following links, must still read it: an
    erasure that names the copy among its erased entries never proves 0 occurrences while
    the copy keeps the subject."""
    v = Vault.init(tmp_path / "v")
    v.write("sub/diary.md", "the zanzibar diary line that is long enough to be a needle\n")
    v.write("keep.md", "an unrelated note\n")
    v.delete("sub/diary.md")
    trash = v.root / ".rmh" / "trash"
    trash.rename(tmp_path / "elsewhere")
    trash.symlink_to(tmp_path / "elsewhere")
    plan = v.forget_plan(subject="zanzibar")
    assert list(plan.trash) == ["sub/diary.md"]
    erased = v.forget(plan)
    left = tmp_path / "elsewhere" / "sub" / "diary.md"
    assert left.exists()  # not removed through the link
    assert erased.proof.occurrences > 0, erased.proof.to_json()
    v.close()


def test_a_forget_stopped_between_a_trash_removal_and_its_prune_is_finished_by_the_next_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trash copy removed, its emptied folders not yet pruned (the kill-at-N seam counts
    the removal, not the prune): the next open's recovery finds the copy gone (no removal
    counted), prunes the folders up to the trash and nothing above, and the proof is clean."""
    def ledger() -> Ledger:
        return Ledger.open(Vault.state_dir(tmp_path / "v", create=True) / LEDGER_FILE,
                           clock=time.time)

    v = Vault.init(tmp_path / "v", usage=ledger())
    v.write("a/b/diary.md", "the zanzibar diary line that is long enough to be a needle\n")
    v.write("keep.md", "an unrelated note\n")
    v.delete("a/b/diary.md")
    trash = v.root / ".rmh" / "trash"
    assert (trash / "a" / "b" / "diary.md").exists()
    plan = v.forget_plan(subject="zanzibar")

    def stopped(*args: object) -> None:
        raise KeyboardInterrupt  # as a kill would: the intent stays

    monkeypatch.setattr(erasure_steps, "prune_below", stopped)
    with pytest.raises(KeyboardInterrupt):
        v.forget(plan)
    assert not (trash / "a" / "b" / "diary.md").exists() and (trash / "a" / "b").is_dir()
    v.close()
    monkeypatch.undo()
    with Vault.open(tmp_path / "v", usage=ledger()) as w:
        assert len(w.erasures_recovered) == 1
        assert trash.is_dir() and not (trash / "a").exists()
    assert scan(owned_files(tmp_path / "v"), ["zanzibar", "a/b/diary.md"]).occurrences == 0


_PLAN = {"notes": ["a.md"], "ids": [1], "trash": [], "needles": ["a secret line"],
         "chunk_keys": []}


@pytest.mark.parametrize("field", [
    {"ids": [float("inf")]}, {"ids": [1.5]}, {"ids": [True]}, {"ids": ["1"]},
    {"needles": "abc"}, {"needles": [5]}, {"needles": ["\ud800"]}, {"notes": {"a.md": 1}},
    {"notes": ["../outside.md"]}, {"notes": [".rmh/index.sqlite"]},
], ids=["ids-infinity", "ids-float", "ids-bool", "ids-text", "needles-text", "needles-int",
        "needles-surrogate", "notes-object", "note-outside", "note-in-rmh"])
def test_an_erasure_intent_not_of_rmh_s_writing_stays_pending(
        tmp_path: Path, field: dict[str, object]) -> None:
    """A forget intent whose plan is JSON of the wrong types (`"ids": [Infinity]`, a text for
    a list) failed every open with a ledger (OverflowError), or was carried out on what it
    meant by accident (int(1.5) is note 1, a text's characters are needles), or names a note
    the store refuses (PathRefused from every open): it is no plan, stays pending, and the
    vault opens."""
    assert erasure_module.plan_from_json(dict(_PLAN)).ids == (1,)  # rmh's own shape
    root = tmp_path / "v"
    Vault.init(root).close()
    (root / ".rmh" / "intents").mkdir()
    doc = {"version": 1, "op": "forget", "plan": {**_PLAN, **field}, "extra_files": []}
    (root / ".rmh" / "intents" / "00000001.json").write_text(
        json.dumps(doc), encoding="utf-8", errors="surrogatepass")
    ledger = Ledger.open(root / ".rmh" / LEDGER_FILE, clock=time.time)
    with Vault.open(root, usage=ledger, watch=False) as v:
        assert v.erasures_recovered == []
        assert v.doctor()["intents"]["pending"] == ["00000001.json"]


def _ledger(root: Path) -> Ledger:
    return Ledger.open(Vault.state_dir(root, create=True) / LEDGER_FILE, clock=time.time)


def _secret_vault(root: Path) -> Vault:
    v = Vault.init(root, usage=_ledger(root))
    v.write("diary.md", "the zanzibar diary line that is long enough to be a needle\n")
    v.write("keep.md", "an unrelated note\n")
    assert v.search("zanzibar").hits
    return v


def _full(*args: object) -> None:
    raise sqlite3.OperationalError("database or disk is full")


def test_a_failed_step_that_leaves_text_readable_keeps_every_open_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger's rewrite fails (a full disk): `forget` and every later open raise
    ErasurePending naming the step, with a fix, opens without a ledger too (they would serve
    the index as it is); the other steps were made; once the cause is gone the next open
    with a ledger finishes it."""
    root = tmp_path / "v"
    v = _secret_vault(root)
    plan = v.forget_plan(subject="zanzibar")
    monkeypatch.setattr(Ledger, "redact", _full)
    with pytest.raises(ErasurePending) as got:
        v.forget(plan)
    v.close()
    assert got.value.failed == [("ledger", ".rmh/learned.sqlite", "database or disk is full")]
    assert "free space" in got.value.fix and "zanzibar" not in got.value.public()
    assert not (root / "diary.md").exists()
    for usage in (_ledger(root), None):
        with pytest.raises(ErasurePending):
            Vault.open(root, usage=usage, watch=False)
    monkeypatch.undo()
    with Vault.open(root, usage=_ledger(root), watch=False) as w:
        assert len(w.erasures_recovered) == 1
        with pytest.raises(NoteNotFound):  # (a search would log the subject anew)
            w.read("diary")
        assert w.doctor()["intents"]["pending"] == []
    assert scan(owned_files(root), ["zanzibar"]).occurrences == 0


def _pending_states(root: Path, retry_at_rest: bool = False) -> tuple[list[str], str]:
    """Open the vault once: the pending intents and the state its open left the first in."""
    with Vault.open(root, usage=_ledger(root), watch=False, retry_at_rest=retry_at_rest) as w:
        with pytest.raises(NoteNotFound):
            w.read("diary")
        intents = w.doctor()["intents"]
        return intents["pending"], intents["recovered"][0]["state"] if intents[
            "recovered"] else ""


def test_a_failed_step_that_leaves_only_bytes_at_rest_opens_and_waits_for_room(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """VACUUM fails on a full disk (it copies the whole index: the likeliest to): the rows are
    gone, nothing reads the freed pages, so the vault opens; the intent stays pending and
    `doctor` names the step. Every open made VACUUM again (about 0.5-0.9 s at 10^4 notes, 10
    times the open itself); now it is tried again only once free space grew, or by `doctor`
    (`retry_at_rest`), and the next try that succeeds finishes the erasure."""
    free = {"bytes": 1000}
    monkeypatch.setattr(erasure_steps, "free_space", lambda *_: {"/disk": free["bytes"]})
    root = tmp_path / "v"
    v = _secret_vault(root)
    plan = v.forget_plan(subject="zanzibar")
    tries: list[int] = []

    def full(_index: Index) -> None:
        tries.append(1)
        _full()

    monkeypatch.setattr(Index, "vacuum", full)
    with pytest.raises(ErasurePending) as got:
        v.forget(plan)
    v.close()
    assert got.value.failed == [("vacuum", ".rmh/index.sqlite", "database or disk is full")]
    for _ in range(2):  # no room freed: not tried again
        pending, state = _pending_states(root)
        assert len(pending) == 1 and state.startswith("pending: waiting for free space")
    assert len(tries) == 1
    free["bytes"] = 2000  # room freed, not enough: tried once, then waits again
    assert _pending_states(root)[1] == "pending: vacuum: database or disk is full"
    assert _pending_states(root)[1].startswith("pending: waiting")
    assert len(tries) == 2
    assert _pending_states(root, retry_at_rest=True)[1] == "pending: vacuum: database or disk " \
        "is full"  # doctor tries it whatever the free space
    assert len(tries) == 3
    monkeypatch.undo()
    pending, state = _pending_states(root, retry_at_rest=True)
    assert pending == [] and state == "rolled forward"
    assert scan(owned_files(root), ["zanzibar"]).occurrences == 0


def test_an_erasure_pending_on_the_shared_cache_vacuums_the_index_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared embedding cache refuses (an immutable file: EPERM) and the index's VACUUM
    was made: every open made VACUUM again, a rewrite of the whole index that freed nothing
    (the rows were gone). Now the open tries only the step that failed, until it succeeds."""
    root = tmp_path / "v"
    v = _secret_vault(root)
    plan = v.forget_plan(subject="zanzibar")

    def denied(*_: object) -> int:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(SharedEmbeddingCache, "forget_embeddings", denied)
    real, tries = Index.vacuum, []

    def counted(index: Index) -> None:
        tries.append(1)
        real(index)

    monkeypatch.setattr(Index, "vacuum", counted)
    with pytest.raises(ErasurePending) as got:
        v.forget(plan, [tmp_path / "shared.sqlite"])
    v.close()
    assert [step for step, _, _ in got.value.failed] == ["shared cache"]
    for _ in range(3):
        pending, state = _pending_states(root)
        assert len(pending) == 1 and state == f"pending: shared cache: {os.strerror(1)}"
    assert len(tries) == 1
    monkeypatch.setattr(SharedEmbeddingCache, "forget_embeddings", lambda *_: 0)  # fixed
    assert _pending_states(root) == ([], "rolled forward")
    assert len(tries) == 1
    assert scan(owned_files(root), ["zanzibar"]).occurrences == 0


def test_a_vault_open_before_an_erasure_fails_answers_nothing_until_it_is_finished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vault opened before (a running server) kept serving what another open's failed
    erasure left readable: its snapshot and index were as before. Every call now raises
    ErasurePending while the intent is pending, and answers again once an open finished it."""
    root = tmp_path / "v"
    _secret_vault(root).close()
    served = Vault.open(root, usage=_ledger(root), watch=False)
    assert served.search("zanzibar").hits and served.read("diary").body
    other = Vault.open(root, usage=_ledger(root), watch=False)
    plan = other.forget_plan(subject="zanzibar")
    monkeypatch.setattr(Ledger, "redact", _full)
    with pytest.raises(ErasurePending):
        other.forget(plan)
    other.close()
    calls = (lambda: served.search("zanzibar"), lambda: served.read("keep"),
             lambda: served.corpus(), lambda: list(served.note_rows()),
             lambda: served.note_id("diary.md"), lambda: served.backlinks("keep"))
    for call in calls:
        with pytest.raises(ErasurePending) as got:
            call()
        assert "zanzibar" not in str(got.value) and "diary" not in str(got.value)
    monkeypatch.undo()
    Vault.open(root, usage=_ledger(root), watch=False).close()  # finishes it
    # (asking for "zanzibar" again would log it anew: the caller's own words)
    assert not served.search("diary line").hits and served.note_id("diary.md") is None
    assert served.read("keep").body == "an unrelated note\n"
    served.close()
    assert scan(owned_files(root), ["zanzibar"]).occurrences == 0


def test_the_folders_above_the_vault_are_no_trace(tmp_path: Path) -> None:
    """A file's name counts in the proof from the vault down (a shared cache's: its base
    name): a vault under /home/ann failed every `forget --subject Ann` (every file's path
    named Ann)."""
    root = tmp_path / "ann" / "v"
    root.mkdir(parents=True)
    (root / "Ann.md").write_text("# Ann\nAnn fires the kiln on Sundays.\n")
    (root / "keep.md").write_text("Tea and bread for the week.\n")
    shared = tmp_path / "ann" / "shared.sqlite"
    shared.write_bytes(b"x" * 64)
    with Vault.init(root) as v:
        erased = v.forget(v.forget_plan(subject="ann"), [shared])
    assert erased.plan.notes == ("Ann.md",) and erased.proof.occurrences == 0
    (root / ".rmh" / "trash").mkdir(exist_ok=True)
    (root / ".rmh" / "trash" / "Ann.png").write_bytes(b"\x89PNG")  # a name that names Ann
    assert scan(owned_files(root, [shared]), ["ann"], "ann", root).found == {
        ".rmh/trash/Ann.png": 1}  # named from the vault, as `unread` is


def test_a_note_that_stays_whose_path_holds_an_erased_one_is_no_trace(tmp_path: Path) -> None:
    """Erasing `Ann.md` while `Joann.md` and `people/Joann.md` stay: the proof counted "ann.md"
    inside their paths (their rows in the index, their file names) and ended incomplete. A copy
    of the erased path left behind still counts."""
    root = tmp_path / "v"
    (root / "people").mkdir(parents=True)
    (root / "Ann.md").write_text("Ann fires the kiln on Sundays.\n")
    (root / "Joann.md").write_text("Joann writes about pottery.\n")
    (root / "people" / "Joann.md").write_text("Another Joann, see [[Joann]].\n")
    with Vault.init(root) as v:
        erased = v.forget(v.forget_plan(["Ann.md"]))
        assert erased.plan.shadows == ("Joann.md", "people/Joann.md")
        assert erased.proof.occurrences == 0, erased.proof.found
    (root / "left.md").write_text("a copy naming Ann.md and Joann.md\n")
    proof = scan(owned_files(root), ["Ann.md"], "", root, ("Joann.md", "people/Joann.md"))
    assert proof.found == {"left.md": 1}


def test_a_failed_step_s_error_names_no_erased_note(tmp_path: Path) -> None:
    """A step failing with an error that names its note (PathRefused: a folder swapped for a
    link that leaves the vault) put the erased note's path in ErasurePending's message and
    data; it reads "(erased)" there."""
    root = tmp_path / "v"
    (root / "people").mkdir(parents=True)
    (root / "people" / "Quillon.md").write_text("# Quillon\nQuillon fires the kiln.\n")
    (root / "keep.md").write_text("Tea and bread for the week.\n")
    with Vault.init(root) as v:
        todo = v.forget_plan(["people/Quillon.md"])
        (root / "people").rename(tmp_path / "elsewhere")
        (root / "people").symlink_to(tmp_path / "elsewhere")
        with pytest.raises(ErasurePending) as got:
            v.forget(todo)
    shown = str(got.value) + json.dumps(got.value.data())
    assert "path refused" in shown and "quillon" not in shown.casefold()


def test_a_file_or_folder_the_proof_cannot_read_makes_it_incomplete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as a user who cannot read one note (root's, mode 0600) and one folder (0700),
    `rmh forget --subject Quillon` printed "proof: 0 occurrences in 12 files" and exit 0
    while the unreadable note still named Quillon: the proof skipped every file it could not
    open, and os.walk left the folder out without a word (session 25, STORE). Both are now
    in the proof's `unread`, which is then not `complete` (the CLI exits 1)."""
    root = tmp_path / "v"
    v = Vault.init(root)
    v.write("gone.md", "the zanzibar diary line that is long enough to be a needle\n")
    v.write("locked.md", "unreadable\n")
    v.write("secret/hidden.md", "unlisted\n")
    locked, secret = root / "locked.md", root / "secret"
    plan = v.forget_plan(["gone.md"])
    real_scandir = os.scandir

    def fake_open(path: Any, *a: Any, **kw: Any) -> Any:
        if Path(path) == locked:  # as mode 0600 of another user does
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return open(path, *a, **kw)

    def fake_scandir(path: Any = ".") -> Any:
        if Path(path) == secret:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(erase_module, "open", fake_open, raising=False)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    erased = v.forget(plan)
    monkeypatch.undo()
    assert erased.proof.unread == ("locked.md", "secret") and not erased.proof.found
    assert not erased.proof.complete and erased.proof.to_json()["unread"] == [
        "locked.md", "secret"]
    assert "2 could not be read: locked.md, secret" in erased.proof.summary()
    v.close()
