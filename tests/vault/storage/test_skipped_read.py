"""Reading a file the index skipped says why, as a typed error (not "note not found")."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault import NoteNotFound, NoteSkipped, Vault


def test_read_of_a_skipped_file_names_the_reason(tmp_path: Path) -> None:
    v = Vault.init(tmp_path / "v")
    (v.root / "blob.md").write_bytes(b"\x00\x01binary")
    (v.root / "latin.md").write_bytes(b"caf\xe9\n")
    v.write("Real", "A real note.\n")
    with pytest.raises(NoteSkipped) as caught:
        v.read("blob.md")
    err = caught.value
    assert err.path == "blob.md" and "binary" in err.reason
    assert err.data() == {"note": "blob.md", "path": "blob.md", "reason": err.reason}
    assert "binary" in str(err) and err.code_name == "note_skipped"
    with pytest.raises(NoteSkipped, match="utf-8"):
        v.read("latin")  # `.md` optional, as for any note
    with pytest.raises(NoteNotFound) as missing:
        v.read("Nobody")
    assert type(missing.value) is NoteNotFound
    # still a NoteNotFound: writing over a skipped file creates the note
    rec = v.write("blob.md", "now text\n")
    assert v.read("blob.md").id == rec.id
    assert "blob.md" not in v.index.skipped() and "latin.md" in v.index.skipped()


def test_a_file_turning_binary_after_a_write_is_reported_by_the_partial_sync(
    tmp_path: Path,
) -> None:
    v = Vault.init(tmp_path / "v")
    v.write("Doc", "text\n")
    (v.root / "Doc.md").write_bytes(b"\x00binary now")
    v.live.sync_paths(["Doc.md"])
    with pytest.raises(NoteSkipped, match="binary"):
        v.read("Doc.md")
