"""A generated note the user moved, renamed, copied or deleted is followed by a re-ingest
(vault/conversation/follow.py, ingest.py). Before, a re-ingest wrote a fresh note at the
generated path of each one moved (`rmh move`, `mv`, an editor's rename): the user ended with a
duplicate, a deleted note came back, and the notes whose links `rmh move` rewrote were kept
as hand edits for good. A fact note edited by hand went to the trash instead of staying.

The property test: seeded random edits (text appended, a frontmatter field added, a body line
deleted), renames on disk, `Vault.move`s, copies and deletions of random notes (facts among
them) of an ingested conversation, in any order on the same note, then the same or a grown
transcript ingested again, with and without `regenerate`. A model says where each generated
note is now (its path, the first by path of the notes with its identity, or nowhere) and
whether its bytes are the ingest's (up to links a move rewrote) or the user's; the vault
must then hold each note there, as a fresh ingest writes it (links following the moves) or as
the user left it, every user version a file or a trash copy, and no duplicate."""

from __future__ import annotations

import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.vault.conversation.test_conv_ingest_edits import conv, edited, notes_of, trash_of
from vault import Vault, correct_fact, ingest_conversations


@dataclass
class Model:
    """Where each generated note (by generated path) is, and the user's bytes of it."""

    loc: dict[str, str | None]
    mine: dict[str, bytes | None] = field(default_factory=dict)
    copies: dict[str, tuple[str, bytes | None]] = field(default_factory=dict)  # path -> (of, mine)

    def owner(self, path: str) -> str | None:
        return next((g for g, at in self.loc.items() if at == path), None)


def content_edit(rng: random.Random, file: Path, n: int) -> bytes:
    # a field of the user's own (not one that says what the note is)
    text = edited(rng, file.read_text(encoding="utf-8"), n,
                  lambda lines: lines.insert(1, f"mine: edit {n}"))
    file.write_text(text, encoding="utf-8")
    return file.read_bytes()


def step(rng: random.Random, v: Vault, m: Model, gen: str, n: int) -> None:
    """One thing a user does to the generated note `gen`, recorded in the model."""
    at = m.loc[gen]
    if at is None:
        return
    root = v.root
    kind = rng.choice(("edit", "edit", "rename", "move", "move", "delete", "copy"))
    if kind == "edit":
        m.mine[gen] = content_edit(rng, root / at, n)
    elif kind == "rename":  # a shell's or a file manager's: no link follows
        new = f"mine/renamed {n}.md"
        (root / "mine").mkdir(exist_ok=True)
        os.rename(root / at, root / new)
        m.loc[gen] = new
    elif kind == "move":  # `rmh move`: the links to it follow (shortest name)
        moved = v.move(at, f"mine/moved {n}.md")
        m.loc[gen] = moved.note
        for path in moved.rewritten:
            if path in m.copies:
                of, data = m.copies[path]
                m.copies[path] = (of, None if data is None else (root / path).read_bytes())
            else:
                owner = m.owner(path)
                if owner is not None and m.mine.get(owner) is not None:
                    m.mine[owner] = (root / path).read_bytes()
    elif kind == "delete":
        (root / at).unlink()
        m.loc[gen], m.mine[gen] = None, None
    else:
        new = f"mine/copy {n}.md"
        (root / "mine").mkdir(exist_ok=True)
        shutil.copyfile(root / at, root / new)
        m.copies[new] = (gen, m.mine.get(gen))


def relinked(text: bytes, names: dict[str, str]) -> bytes:
    out = text.decode("utf-8")
    for gen, where in names.items():
        out = out.replace(f"[[{gen.removesuffix('.md')}|",
                          f"[[{Path(where).name.removesuffix('.md')}|")
    return out.encode("utf-8")


@pytest.mark.parametrize("seed", range(12))
def test_moved_copied_deleted_and_edited_notes_are_followed(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root, fresh = tmp_path / "v", tmp_path / "fresh"
    small, grown = conv(10), conv(rng.choice((10, 16)))
    regenerate = rng.random() < 0.4
    with Vault.init(root) as v:
        ingest_conversations(v, small, use_nlp=False)
        m = Model(dict.fromkeys(notes_of(root)))
        m.loc = {p: p for p in m.loc}
        for n in range(rng.randint(2, 9)):
            step(rng, v, m, rng.choice(sorted(m.loc)), n)
        before = notes_of(root)
        report = ingest_conversations(v, grown, use_nlp=False, regenerate=regenerate)
        again = ingest_conversations(v, grown, use_nlp=False, regenerate=regenerate)
    with Vault.init(fresh) as f:
        ingest_conversations(f, grown, use_nlp=False)
    now, trash, expected = notes_of(root), trash_of(root), notes_of(fresh)
    # where each generated note the user moved away is now: the first by path claiming it
    target: dict[str, str | None] = {}
    for gen, at in m.loc.items():
        if at == gen:
            continue
        claims = sorted(([at] if at else []) + [c for c, (of, _) in m.copies.items()
                                                 if of == gen])
        target[gen] = claims[0] if claims else (gen if regenerate else None)
    names = {g: t for g, t in target.items() if t is not None and t != g}
    for gen, data in expected.items():
        where = target.get(gen, gen)
        if where is None:  # deleted by the user: not written again
            assert gen not in now and gen in report.left_deleted, (seed, gen)
            continue
        assert gen == where or gen not in now, (seed, gen, where)  # no duplicate
        users = m.copies[where][1] if where in m.copies else m.mine.get(gen)
        if users is not None and not regenerate:
            assert now[where] == before[where] == users and where in report.kept, (seed, gen)
        else:
            assert now[where] == relinked(data, names), (seed, gen, where)
            assert users is None or users in trash, (seed, gen)
    for path in m.copies:  # a copy nobody follows: as the user left it
        if path not in target.values():
            assert now[path] == before[path], (seed, path)
    assert not regenerate or not report.kept
    assert not again.written and not again.trashed, (seed, again)
    assert set(again.kept) == set(report.kept) and again.left_deleted == report.left_deleted
    assert all(t in before.values() for t in trash), seed  # only the user's bytes: no noise


SESSION = "conversations/ab/ab s1.md"
ALICE = "conversations/ab/entities/alice.md"


def test_a_copy_does_not_take_the_place_of_the_note_found_before(tmp_path: Path) -> None:
    """Two notes claiming one generated note: the one followed last time stays the one (the
    record's `moved`), whatever sorts first; the other is left as it is, and nothing fails."""
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(10), use_nlp=False)
        v.move(SESSION, "mine/session.md")
        ingest_conversations(v, conv(10), use_nlp=False)  # followed there
        shutil.copyfile(root / "mine/session.md", root / "a copy.md")  # sorts first
        copy = (root / "a copy.md").read_bytes()
        report = ingest_conversations(v, conv(16), use_nlp=False)
        assert not (root / SESSION).exists() and "mine/session.md" in report.written
        assert (root / "a copy.md").read_bytes() == copy
        (root / "mine/session.md").unlink()  # the one followed is gone: the copy is taken
        report = ingest_conversations(v, conv(16), use_nlp=False)
        assert report.left_deleted == () and not (root / SESSION).exists()
        assert (root / "a copy.md").read_bytes() == copy  # already as generated: no write


def test_a_deleted_note_comes_back_only_with_regenerate(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(10), use_nlp=False)
        v.move(ALICE, "mine/alice.md")
        (root / "mine/alice.md").unlink()
        report = ingest_conversations(v, conv(16), use_nlp=False)
        assert report.left_deleted == (ALICE,) and not (root / ALICE).exists()
        assert ALICE not in report.notes and report.entities == 8  # one of nine left out
        report = ingest_conversations(v, conv(16), use_nlp=False, regenerate=True)
        assert ALICE in report.written and (root / ALICE).exists()
        again = ingest_conversations(v, conv(16), use_nlp=False)
        assert not again.written and not again.left_deleted


def test_a_note_moved_with_what_it_is_about_changed_is_not_found(tmp_path: Path) -> None:
    """The identity is read from the frontmatter: a moved note whose `key` the user changed
    is the user's own note now, left as it is; the entity it was counts as deleted (not
    written again, reported) unless `regenerate`."""
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(10), use_nlp=False)
        os.rename(root / ALICE, root / "alice2.md")
        file = root / "alice2.md"
        file.write_text(file.read_text("utf-8").replace("key: alice", "key: alicia"), "utf-8")
        mine = file.read_bytes()
        assert b"key: alicia" in mine
        report = ingest_conversations(v, conv(16), use_nlp=False)
        assert report.left_deleted == (ALICE,) and file.read_bytes() == mine
        report = ingest_conversations(v, conv(16), use_nlp=False, regenerate=True)
        assert ALICE in report.written and file.read_bytes() == mine


def test_a_fact_note_edited_by_hand_is_kept_and_a_correction_is_no_edit(
        tmp_path: Path) -> None:
    """Before, a fact note's hand edit went to the trash at the next ingest that changed the
    note; now it is kept as any other, while a correction (trust fields only) is still carried
    onto the note written (`generated.mark`)."""
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(10), use_nlp=False)
        facts = sorted(p for p in notes_of(root) if "/facts/" in p)
        edited, corrected = facts[0], facts[1]
        file = root / edited
        file.write_text(file.read_text("utf-8") + "My note on it.\n", "utf-8")
        mine = file.read_bytes()
        correct_fact(v, corrected, "confirm", by="me", at="2024-06-01T10:00:00")
        report = ingest_conversations(v, conv(16), use_nlp=False)
        assert report.kept == (edited,) and file.read_bytes() == mine and not report.trashed
        assert b"trust: confirmed" in (root / corrected).read_bytes()
        report = ingest_conversations(v, conv(16), use_nlp=False, regenerate=True)
        assert dict(report.trashed).keys() == {edited} and mine in trash_of(root)
        assert b"My note on it." not in file.read_bytes()


def test_a_note_moved_onto_a_path_the_ingest_generates_is_not_taken_for_deleted(
        tmp_path: Path) -> None:
    """A turn note the user moved (and edited) onto the path of a turn the grown transcript
    adds: the new turn's note is written there (the user's bytes to the trash, as for any
    note standing on a generated path), and the moved turn is written again at its own path,
    not reported as deleted (before: left out, so the turn was only in the trash; REV)."""
    root = tmp_path / "v"
    turn, future = "conversations/ab/s1/ab s1-4.md", "conversations/ab/s2/ab s2-1.md"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(10), use_nlp=False)
        assert (root / turn).exists() and not (root / future).exists()
        (root / future).parent.mkdir(parents=True)
        os.rename(root / turn, root / future)
        (root / future).write_text((root / future).read_text("utf-8") + "Mine.\n", "utf-8")
        mine = (root / future).read_bytes()
        report = ingest_conversations(v, conv(16), use_nlp=False)
        assert report.left_deleted == () and (root / turn).exists()
        assert mine in trash_of(root) and b"Mine." not in (root / future).read_bytes()
        assert b"\nturn: s2:1\n" in (root / future).read_bytes()
        assert b"\nturn: s1:4\n" in (root / turn).read_bytes()
