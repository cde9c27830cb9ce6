"""Any file name (issue 27 item 3), in process: a name that is not UTF-8 or holds controls is
skipped under its printable form (vault/storage/paths.py), never stops a sync, a watcher's
partial sync or a lookup; `printable` is one line of valid, printable UTF-8 for any name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import NoteSkipped, PathRefused, Vault
from vault.storage.paths import printable
from vault.storage.sync import sync


@given(st.binary(min_size=1, max_size=300))
@settings(max_examples=500)
def test_printable_is_one_printable_line_for_any_bytes(raw: bytes) -> None:
    name = os.fsdecode(raw)
    shown = printable(name)
    assert shown.isprintable() and "\n" not in shown
    shown.encode("utf-8")  # never raises
    if name.isprintable() and "\\" not in name:
        assert shown == name


def test_printable_is_injective_on_distinct_names() -> None:
    names = [os.fsdecode(b) for b in (b"a\\x41", b"a\x41", b"a\\\\", b"a\\", b"a\xff", b"a\\xff")]
    assert len({printable(n) for n in names}) == len(set(names))


def test_bad_names_are_skipped_by_full_and_partial_syncs(tmp_path: Path) -> None:
    v = Vault.init(tmp_path / "v")
    v.write("Kiwi", "Kiwi is a fruit.\n")
    root = os.fsencode(v.root)
    for raw in (b"bad\xffname.md", b"nl\nname.md", b"\xe2\x80\xaebidi.md"):
        with open(os.path.join(root, raw), "wb") as fh:
            fh.write(b"words\n")
    report = v.sync()
    assert sorted(report.skipped) == ["\\u202ebidi.md", "bad\\xffname.md", "nl\\x0aname.md"]
    assert v.index.skipped() == report.skipped  # stored as text: SQLite took it
    assert [h.note for h in v.search("kiwi").hits] == ["Kiwi.md"]
    with pytest.raises(NoteSkipped):
        v.read(os.fsdecode(b"bad\xffname.md"))
    # What the watcher hands over is checked first: the caller falls back to a full sync.
    with pytest.raises(PathRefused):
        sync(v.store, v.index, only=[os.fsdecode(b"new\xfe.md")])
    with open(os.path.join(root, b"new\xfe.md"), "wb") as fh:
        fh.write(b"late\n")
    assert v.search("kiwi").hits  # fresh() saw the watcher's event and survived it
    assert "new\\xfe.md" in v.index.skipped()
    assert v.doctor()["skipped"][0]["path"] == "\\u202ebidi.md"
    v.close()
