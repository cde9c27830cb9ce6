"""Erasure's storage half: distinctive lines, trash copies, and the proof scan (against a
plain in-memory count, across block boundaries)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.storage import erase
from vault.storage.paths import copy_name


def test_distinctive_lines_skip_short_and_shared_lines() -> None:
    text = "## Notes\nThe badge number is kept in the blue binder.\nShared template line here.\n"
    lines = erase.distinctive_lines(text, ["a note with SHARED TEMPLATE LINE HERE. inside"])
    assert lines == ["The badge number is kept in the blue binder."]
    assert erase.distinctive_lines(text, ["a note with shared template line here. inside"],
                                   folded=True) == lines


def test_trash_copies_match_the_path_its_numbered_copies_and_the_subject(tmp_path: Path) -> None:
    trash = tmp_path / "trash"
    (trash / "people").mkdir(parents=True)
    (trash / "people" / "Zed.md").write_text("x")
    (trash / "people" / "Zed (1).md").write_text("y")
    (trash / "people" / "Zedd.md").write_text("no")
    (trash / "other.md").write_text("mentions ORCHID here")
    (trash / "plain.md").write_text("nothing")
    got = erase.trash_copies(trash, ["people/Zed.md"], "orchid")
    assert got == ["other.md", "people/Zed (1).md", "people/Zed.md"]
    assert erase.trash_copies(tmp_path / "missing", ["a.md"], "x") == []


def test_trash_copies_match_the_cut_copies_of_a_name_at_the_cap(tmp_path: Path) -> None:
    """The copies `Store.trash` makes of a note named at 255 bytes have their names cut
    (storage/paths.py `copy_name`); forgetting the note finds them all."""
    trash, stem = tmp_path / "trash", "é" * 126
    trash.mkdir()
    names = [copy_name(f"{stem}.md", n) for n in (0, 1, 12)] + [copy_name("é.md", 1)]
    names += ["Plan (2) (1).md", "Plan (2).md", "Plan (3).md"]
    for name in names:
        (trash / name).write_text("x")
    assert erase.trash_copies(trash, [f"{stem}.md"], "") == sorted(names[:3])
    assert erase.trash_copies(trash, ["Plan (2).md"], "") == ["Plan (2) (1).md", "Plan (2).md"]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abAB ß\u00e9x", max_size=300), st.sampled_from(["ab", "aBa", "é x", "b"]),
       st.integers(min_value=2, max_value=7))
def test_scan_counts_like_a_plain_search_across_blocks(tmp_path_factory: pytest.TempPathFactory,
                                                       text: str, needle: str, block: int
                                                       ) -> None:
    folder = tmp_path_factory.mktemp("q")  # no letter of the needles in the path
    f = folder / "1"
    f.write_bytes(text.encode())
    mp = pytest.MonkeyPatch()
    mp.setattr(erase, "BLOCK", block)
    try:
        proof = erase.scan([f], [needle])
    finally:
        mp.undo()
    folded, low = text.casefold().encode(), needle.casefold().encode()
    expected = sum(1 for i in range(len(folded)) if folded.startswith(low, i))
    if all(ord(c) < 128 for c in text):  # byte blocks may split a multi-byte character
        assert proof.occurrences == expected
    assert proof.files == 1


def test_scan_finds_names_and_skips_missing_files(tmp_path: Path) -> None:
    named = tmp_path / "Orchid-notes.txt"
    named.write_bytes(b"\xff\xfe binary ORCHID \x00")
    proof = erase.scan([named, tmp_path / "gone"], ["orchid"])
    assert proof.files == 1 and proof.found == {"Orchid-notes.txt": 2}  # no root: the base name
    assert "2 occurrences in 1 file" in proof.summary()  # "1 files" before HOUSE40


PART = st.text(st.sampled_from("abcxyz-_. "), min_size=1, max_size=6).filter(
    lambda p: p.strip(" .") == p and p not in (".", ".."))


@settings(max_examples=25, deadline=None)
@given(rels=st.lists(st.lists(PART, min_size=1, max_size=3).map("/".join), min_size=1,
                     max_size=6, unique=True),
       hidden=st.booleans())
def test_the_proof_names_every_file_from_the_vault_in_found_unread_and_settings(
        tmp_path_factory: pytest.TempPathFactory, rels: list[str], hidden: bool) -> None:
    """`found` held absolute paths while `unread` held vault-relative ones (ADVSTORE): all
    are named from the vault folder now; a file outside it (the shared cache) by its base
    name; no host path in the report."""
    base = tmp_path_factory.mktemp("p")
    root = base / "vault"
    made: list[str] = []
    for rel in rels:
        rel = f".rmh/{rel}" if hidden else rel
        path = root / rel
        if any(p.is_file() for p in path.parents) or path.is_dir():
            continue  # a prefix of another generated path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("still names ORCHID here\n", encoding="utf-8")
        made.append(rel)
    named = base / "orchid" / "c.sqlite"  # a settings path naming the subject
    (root / "rmh.toml").write_text(f'[embed]\nshared_cache = "{named}"\n', "utf-8")
    outside = base / "shared" / "cache.sqlite"
    outside.parent.mkdir()
    outside.write_text("orchid\n", encoding="utf-8")
    proof = erase.scan(erase.owned_files(root, [outside]), ["xx"], "orchid", root,
                       unread=[root / "locked"], settings=[root / "rmh.toml"])
    assert set(proof.found) == {*made, "cache.sqlite"}
    assert proof.unread == ("locked",) and proof.settings == {"rmh.toml": ["embed.shared_cache"]}
    assert str(base) not in str(proof.to_json()) and str(base) not in proof.summary()
