"""The ingest's record of the bytes it wrote (vault/conversation/generated.py) and the verdict
it gives a note whose rendering differs from the file (ingest.verdict)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault.conversation.generated import Record, hashed
from vault.conversation.ingest import verdict

NOTE = "conversations/ab/entities/carla.md"


def test_the_record_survives_a_reload_and_names_no_one(tmp_path: Path) -> None:
    rec = Record(tmp_path)
    assert rec.hashes(NOTE) is None
    rec.plan(NOTE, "a" * 64)
    rec.save()
    rec.plan(NOTE, "b" * 64)  # a write under way: both versions count as the ingest's
    rec.save()
    assert Record(tmp_path).hashes(NOTE) == ("a" * 64, "b" * 64)
    rec.wrote(NOTE, "b" * 64)
    rec.restore("conversations/ab/ab s1.md", None)  # a planned write not made: no record
    rec.save()
    assert Record(tmp_path).hashes(NOTE) == ("b" * 64,)
    files = list((tmp_path / "generated").iterdir())
    assert len(files) == 1 and "carla" not in files[0].read_text() + files[0].name
    assert "conversations" not in files[0].read_text()


def test_a_first_write_is_pending_until_it_is_made(tmp_path: Path) -> None:
    """A note planned but not yet written (an ingest killed between) is not one the user
    deleted (follow.py): it stays `pending` until `wrote`, across a second plan too."""
    rec = Record(tmp_path)
    rec.plan(NOTE, "a" * 64)
    rec.save()
    assert Record(tmp_path).pending(NOTE) and Record(tmp_path).hashes(NOTE) == ("a" * 64,)
    rec.plan(NOTE, "b" * 64)
    assert rec.pending(NOTE) and rec.hashes(NOTE) == ("a" * 64, "b" * 64)
    rec.wrote(NOTE, "b" * 64)
    rec.plan(NOTE, "c" * 64)
    assert not rec.pending(NOTE) and rec.hashes(NOTE) == ("b" * 64, "c" * 64)


def test_where_a_moved_note_was_found_is_kept(tmp_path: Path) -> None:
    rec = Record(tmp_path)
    rec.wrote(NOTE, "a" * 64)
    rec.found_at(NOTE, "mine/carla.md")
    rec.save()
    assert Record(tmp_path).at(NOTE) == hashed("mine/carla.md")
    rec.found_at(NOTE, None)
    rec.save()
    assert Record(tmp_path).at(NOTE) is None
    assert "carla" not in next((tmp_path / "generated").iterdir()).read_text()


def test_an_unreadable_record_is_no_record(tmp_path: Path) -> None:
    rec = Record(tmp_path)
    rec.wrote(NOTE, "a" * 64)
    rec.save()
    (file,) = (tmp_path / "generated").iterdir()
    file.write_text("{not json", encoding="utf-8")
    assert Record(tmp_path).hashes(NOTE) is None


@pytest.mark.parametrize(("current", "ours", "regenerate", "marked", "expected"), [
    (None, ("a",), False, None, "write"),  # absent: written (follow.py tells deleted apart)
    ("a", ("a",), False, None, "write"),  # the ingest's own bytes
    ("a", ("x", "a"), False, None, "write"),  # a write killed midway: either is ours
    ("u", ("a",), False, None, "keep"),  # edited by hand
    ("u", ("a",), True, None, "trash"),  # asked to regenerate: the edit to the trash
    ("u", None, False, None, "trash"),  # no record: cannot tell, so a copy first
    ("u", ("a",), False, "a", "write"),  # a fact note corrected since: trust fields only
    ("u", ("a",), False, "v", "keep"),  # a fact note edited by hand: kept, as any other
])
def test_verdict(current: str | None, ours: tuple[str, ...] | None, regenerate: bool,
                 marked: str | None, expected: str) -> None:
    assert verdict(current, ours, regenerate, marked) == expected
