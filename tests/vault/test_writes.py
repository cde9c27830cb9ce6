"""A new note's name (vault/writes.py through VaultParts._new_path): a name a wiki-link
cannot reach ("[", "]", "#", "^", "|" in any part) is refused for a new note and a move's
destination, with nothing written; an existing file with such a name stays writable."""

from __future__ import annotations

import errno
import hashlib
import random
from pathlib import Path
from typing import Any

import pytest

from vault import PathRefused, QuotaExceeded, Vault
from vault.errors import NoteFormatError
from vault.parts import UNLINKABLE
from vault.storage.store import Store


def _bytes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".rmh" not in p.parts}


@pytest.mark.parametrize("seed", range(4))
def test_a_name_no_link_can_reach_is_refused_and_nothing_changes(tmp_path: Path,
                                                                 seed: int) -> None:
    rng = random.Random(seed)
    with Vault.init(tmp_path) as v:
        v.write("keep", "A note that stays.\n")
        before = _bytes(tmp_path)
        for _ in range(30):
            c = rng.choice(UNLINKABLE)
            stem = "".join(rng.choice("abc xyz") for _ in range(rng.randint(0, 6)))
            name = rng.choice([f"{stem}{c}", f"{c}{stem}", f"dir{c}/{stem or 'n'}"])
            with pytest.raises(PathRefused, match="cannot name"):
                v.write(name, "text\n")
            with pytest.raises(PathRefused, match="cannot name"):
                v.move("keep", name)
        assert _bytes(tmp_path) == before
        v.write("plain name", "ok\n")  # the characters, not the rule, are refused


def test_an_existing_file_with_such_a_name_stays_writable(tmp_path: Path) -> None:
    (tmp_path / "C# notes.md").write_text("old\n", encoding="utf-8")
    with Vault.init(tmp_path) as v:
        assert v.write("C# notes.md", "new\n").note == "C# notes.md"
    assert (tmp_path / "C# notes.md").read_text(encoding="utf-8") == "new\n"


def test_a_move_whose_link_rewrite_would_pass_the_size_cap_changes_nothing(
        tmp_path: Path) -> None:
    """The store refuses a note over MAX_NOTE_BYTES; a move whose rewrite of a linking note
    would pass it used to rename the note first and then fail on the rewrite: the command
    said quota exceeded, the note was renamed, every link to it dangled, and the intent
    could never finish. It is refused before any change now."""
    (tmp_path / "A.md").write_text("the target\n", encoding="utf-8")
    (tmp_path / "X.md").write_text("[[A]]\n" * 400_000, encoding="utf-8")  # 2.4 MB
    with Vault.init(tmp_path) as v:
        before = _bytes(tmp_path)
        with pytest.raises(QuotaExceeded):
            v.move("A", "B" * 20)  # each link grows by 19 bytes: 10 MB
        assert _bytes(tmp_path) == before
        assert not (tmp_path / ".rmh" / "intents").exists() or not any(
            (tmp_path / ".rmh" / "intents").iterdir())
        assert v.backlinks("A") == ["X.md"]


def test_journalled_writes_with_one_note_over_the_cap_write_none(tmp_path: Path) -> None:
    """An ingest writes a conversation's notes as one journalled operation, "whole or not at
    all"; a turn over MAX_NOTE_BYTES was refused by the store after the turns before it were
    written (and the journal finished): half a conversation, and an error. Refused first."""
    with Vault.init(tmp_path) as v:
        before = _bytes(tmp_path)
        notes = [("c/t1.md", "first turn\n"), ("c/t2.md", "x" * (8 * 1024 * 1024 + 1)),
                 ("c/t3.md", "third turn\n")]
        with pytest.raises(QuotaExceeded), v.journalled(notes):
            for path, text in notes:
                v.write(path, text)
        assert _bytes(tmp_path) == before


def test_journalled_writes_with_one_note_no_utf8_holds_write_none(tmp_path: Path) -> None:
    """A lone surrogate (JSON carries "\\ud800" into an ingest) is NotText, as the store's own
    write says, and refused before the first note is written: not a raw UnicodeEncodeError
    from the size check that runs first."""
    from vault.errors import NotText

    with Vault.init(tmp_path) as v:
        before = _bytes(tmp_path)
        notes = [("c/t1.md", "first turn\n"), ("c/t2.md", "bad \ud800 turn\n")]
        with pytest.raises(NotText), v.journalled(notes):
            for path, text in notes:
                v.write(path, text)
        assert _bytes(tmp_path) == before


def test_a_move_to_a_name_with_quotes_keeps_every_referrer_s_frontmatter(tmp_path: Path) -> None:
    """A wiki-link in a quoted frontmatter value was rewritten as raw text: a move to
    `Bob's "T"` wrote `'[[Bob's "T"]]'`, which is no YAML, so the referrer lost its
    frontmatter (tags, aliases) to a parse error. The new name is written escaped as the
    value's quote needs, and read back unescaped (session 25, STORE)."""
    (tmp_path / "Target.md").write_text("# Target\n", encoding="utf-8")
    (tmp_path / "R.md").write_text(
        "---\nrelated: '[[Target]]'\nother: \"[[Target|the \\\"T\\\"]]\"\ntags: [keep]\n---\n"
        "body [[Target]]\n", encoding="utf-8")
    with Vault.init(tmp_path) as v:
        v.move("Target", "Bob's \"T\"")
        row = v.note_row(v.resolve("R"))
        assert row is not None and row.frontmatter_error is None and row.tags == ("keep",)
        assert [(ln.target, ln.resolved) for ln in v.links("R")] == [
            ("Bob's \"T\"", "Bob's \"T\".md")] * 3
        assert v.backlinks("Bob's \"T\"") == ["R.md"]
    assert (tmp_path / "R.md").read_text(encoding="utf-8") == (
        "---\nrelated: '[[Bob''s \"T\"]]'\nother: \"[[Bob's \\\"T\\\"|the \\\"T\\\"]]\"\n"
        "tags: [keep]\n---\nbody [[Bob's \"T\"]]\n")


def test_a_move_that_cannot_be_written_in_a_plain_yaml_value_changes_nothing(
        tmp_path: Path) -> None:
    (tmp_path / "Target.md").write_text("# Target\n", encoding="utf-8")
    (tmp_path / "R.md").write_text("---\nsee: also [[Target]]\n---\n", encoding="utf-8")
    with Vault.init(tmp_path) as v:
        before = _bytes(tmp_path)
        with pytest.raises(NoteFormatError):
            v.move("Target", "Plan: B")
        assert _bytes(tmp_path) == before
        assert v.backlinks("Target") == ["R.md"]


def test_journalled_writes_stopped_by_a_full_disk_are_finished_by_the_next_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`fact supersede` on a disk that filled between its two notes marked the old fact
    superseded by a note that was never written, and finished its journal: nothing ever wrote
    the new one (found with a real 3 MiB tmpfs, 150,000 bytes free). The intent now stays
    when a full disk stops the writes after some landed; the next open, with room again,
    finishes them. A failure before any landed still leaves nothing pending."""
    (tmp_path / "Old.md").write_text("old fact\n", encoding="utf-8")
    notes = [("Old.md", "old fact, superseded by [[New]]\n"), ("New.md", "new fact\n")]
    real = Store.write_text

    def full(self: Store, path: str, text: str, **kw: Any) -> Any:
        if path == "New.md":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, path, text, **kw)

    with Vault.init(tmp_path) as v:
        monkeypatch.setattr(Store, "write_text", full)
        with pytest.raises(OSError), v.journalled(notes):
            for path, text in notes:
                v.write(path, text)
        monkeypatch.setattr(Store, "write_text", real)
    assert not (tmp_path / "New.md").exists()
    assert len(list((tmp_path / ".rmh" / "intents").glob("*.json"))) == 1
    with Vault.open(tmp_path, watch=False) as v:  # room again: the open finishes them
        assert v.read("New").text == "new fact\n" and v.backlinks("New") == ["Old.md"]
    assert not list((tmp_path / ".rmh" / "intents").glob("*.json"))
    with Vault.open(tmp_path, watch=False) as v:  # nothing landed: nothing stays pending
        monkeypatch.setattr(Store, "write_text", full)
        with pytest.raises(OSError), v.journalled([notes[1], notes[0]]):
            v.write("New.md", "newer\n")
        monkeypatch.setattr(Store, "write_text", real)
    assert not list((tmp_path / ".rmh" / "intents").glob("*.json"))
