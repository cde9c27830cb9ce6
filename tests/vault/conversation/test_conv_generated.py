"""The ingest's record of the bytes it wrote (vault/conversation/generated.py) and the verdict
it gives a note whose rendering differs from the file (ingest.verdict)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault.conversation.generated import Record
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


def test_an_unreadable_record_is_no_record(tmp_path: Path) -> None:
    rec = Record(tmp_path)
    rec.wrote(NOTE, "a" * 64)
    rec.save()
    (file,) = (tmp_path / "generated").iterdir()
    file.write_text("{not json", encoding="utf-8")
    assert Record(tmp_path).hashes(NOTE) is None


@pytest.mark.parametrize(("path", "current", "ours", "regenerate", "expected"), [
    (NOTE, None, ("a",), False, "write"),  # absent (deleted, renamed): written again
    (NOTE, "a", ("a",), False, "write"),  # the ingest's own bytes
    (NOTE, "a", ("x", "a"), False, "write"),  # a write killed midway: either is ours
    (NOTE, "u", ("a",), False, "keep"),  # edited by hand
    (NOTE, "u", ("a",), True, "trash"),  # asked to regenerate: the edit to the trash
    (NOTE, "u", None, False, "trash"),  # no record: cannot tell, so a copy first
    ("conversations/ab/facts/x.md", "u", ("a",), False, "trash"),  # trust is carried
])
def test_verdict(path: str, current: str | None, ours: tuple[str, ...] | None,
                 regenerate: bool, expected: str) -> None:
    assert verdict(path, current, ours, regenerate) == expected
