"""The facade's guarded writes: no silent overwrite, no lost Obsidian edit, hashes of bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vault import Edit, EditConflict, EditRefused, NoteExists, Vault


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Plan.md").write_bytes(b"\xef\xbb\xbf---\r\ntags: [x]\r\n---\r\n# Plan\r\n"
                                   b"## Todo\r\nold\r\n## Done\r\nshipped\r\n")
    return Vault.init(root)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_hash_is_the_sha256_of_the_file_bytes(vault: Vault) -> None:
    assert vault.read("Plan").hash == sha(vault.root / "Plan.md")
    assert vault.read("Plan").to_json()["hash"] == sha(vault.root / "Plan.md")


def test_write_of_an_existing_note_needs_overwrite_or_its_hash(vault: Vault) -> None:
    path = vault.root / "Plan.md"
    before = path.read_bytes()
    with pytest.raises(NoteExists):
        vault.write("Plan", "replaced", overwrite=False)
    assert path.read_bytes() == before
    digest = vault.read("Plan").hash
    assert vault.write("Plan", "replaced", overwrite=False, expected_hash=digest).text == (
        "replaced")
    assert vault.write("New", "fresh", overwrite=False).note == "New.md"


def test_an_obsidian_edit_between_read_and_write_is_never_overwritten(vault: Vault) -> None:
    path = vault.root / "Plan.md"
    digest = vault.read("Plan").hash
    path.write_bytes(path.read_bytes() + b"typed in Obsidian\r\n")  # the person's edit
    after = path.read_bytes()
    with pytest.raises(EditConflict) as conflict:
        vault.write("Plan", "agent text", expected_hash=digest)
    assert conflict.value.current == sha(path) and conflict.value.data()["current_hash"]
    with pytest.raises(EditConflict):
        vault.edit("Plan", Edit("append", "agent\r\n"), expected_hash=digest)
    assert path.read_bytes() == after
    path.unlink()
    with pytest.raises(EditConflict) as gone:
        vault.write("Plan", "agent text", expected_hash=digest)
    assert gone.value.current is None and not path.exists()


def test_edit_keeps_every_other_byte(vault: Vault) -> None:
    path = vault.root / "Plan.md"
    before = path.read_bytes()
    record = vault.edit("Plan", Edit("section", "new\r\n", heading="Todo"),
                        expected_hash=sha(path))
    assert path.read_bytes() == before.replace(b"old\r\n", b"new\r\n")
    assert record.hash == sha(path)
    vault.edit("Plan", Edit("prepend", "top\r\n"))
    assert path.read_bytes().startswith(b"\xef\xbb\xbf---\r\ntags: [x]\r\n---\r\ntop\r\n# Plan")
    with pytest.raises(EditRefused):
        vault.edit("Plan", Edit("replace", "x", find="\r\n", expected_count=1))
    unchanged = path.read_bytes()
    with pytest.raises(EditRefused):
        vault.edit("Plan", Edit("section", "x", heading="Missing"))
    assert path.read_bytes() == unchanged


@pytest.mark.parametrize("guarded", [False, True])
def test_an_unguarded_edit_is_computed_again_when_another_writer_lands_first(
        vault: Vault, guarded: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `rmh edit NOTE append` at once (NOTES-R7): the one whose read is overtaken by the
    other's write computes its edit again on the new bytes, so both appends land; with an
    expected hash the caller asked for the guard, and the edit is refused as before."""
    path = vault.root / "Plan.md"
    digest = vault.read("Plan").hash
    real = vault.store.read_text
    raced: list[bool] = []

    def read_text(rel: str) -> str:
        text = real(rel)
        if not raced:  # the other process's append lands after this read
            raced.append(True)
            path.write_bytes(path.read_bytes() + b"theirs\r\n")
        return text

    monkeypatch.setattr(vault.store, "read_text", read_text)
    if guarded:
        with pytest.raises(EditConflict):
            vault.edit("Plan", Edit("append", "mine\r\n"), expected_hash=digest)
        assert path.read_bytes().endswith(b"shipped\r\ntheirs\r\n")
        return
    vault.edit("Plan", Edit("append", "mine\r\n"))
    assert path.read_bytes().endswith(b"shipped\r\ntheirs\r\nmine\r\n")
