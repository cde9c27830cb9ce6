"""The Vault facade over real files and a real SQLite index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault import Edit, NotAVault, NoteExists, NoteNotFound, PathRefused, QuotaExceeded, Vault


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    v = Vault.init(tmp_path / "v")
    v.write("people/Alice.md", "---\naliases: [Al]\n---\nAlice owns [[Billing]] and [[Ghost]].\n")
    v.write("Billing", "# Billing\nCharges customers. Owner [[Alice]]. See [the auth](Auth.md).\n")
    v.write("Auth.md", "Tokens for [[Billing#Charges|billing]].\n")
    return v


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".rmh" not in p.relative_to(root).parts
    }


def test_write_read_and_resolve(vault: Vault) -> None:
    rec = vault.read("Alice")
    assert rec.note == "people/Alice.md"
    assert rec.aliases == ("Al",)
    assert vault.resolve("al") == rec.id
    assert vault.resolve("people/alice") == rec.id
    assert [(ln.target, ln.resolved) for ln in rec.links] == [
        ("Billing", "Billing.md"),
        ("Ghost", None),
    ]


def test_a_write_to_a_md_path_replaces_that_file_only(vault: Vault) -> None:
    """`Alice.md` names the file at the root, not people/Alice.md (title Alice): writing it
    creates that file and leaves the other as it was; a bare title still finds the note."""
    before = (vault.root / "people" / "Alice.md").read_bytes()
    rec = vault.write("Alice.md", "Another Alice.\n", overwrite=True)
    assert rec.note == "Alice.md" and rec.id != vault.resolve("people/Alice")
    assert (vault.root / "people" / "Alice.md").read_bytes() == before
    with pytest.raises(NoteExists):
        vault.write("Alice.md", "again\n", overwrite=False)
    assert vault.write("Billing", "Billing, rewritten.\n").note == "Billing.md"


def test_backlinks_neighbors_and_search(vault: Vault) -> None:
    assert vault.backlinks("Billing") == ["Auth.md", "people/Alice.md"]
    assert vault.neighbors("Alice", hops=1) == ["Billing.md"]
    assert vault.neighbors("Alice", hops=2) == ["Billing.md", "Auth.md"]
    hits = vault.search("customers charges").hits
    assert hits[0].note == "Billing.md"
    assert "bm25" in hits[0].receipt["signals"]


def test_document_frequency_counts_notes_and_follows_edits(vault: Vault) -> None:
    # "billing": Billing's title and body, Alice's link, Auth's link label; "owner": Billing only
    assert vault.document_frequency(["billing", "owner", "zebra"]) == [3, 1, 0]
    (vault.root / "Auth.md").write_text("A zebra guards the tokens.\n", encoding="utf-8")
    assert vault.document_frequency(["billing", "zebra"]) == [2, 1]


def test_external_edit_is_seen_by_next_query(vault: Vault) -> None:
    assert all(h.score > 0 for h in vault.search("zebra").hits) and not any(
        h.note == "Auth.md" for h in vault.search("zebra").hits
    )
    (vault.root / "Auth.md").write_text("A zebra guards the tokens.\n", encoding="utf-8")
    assert vault.search("zebra").hits[0].note == "Auth.md"


def test_rename_outside_rmh_keeps_id(vault: Vault) -> None:
    before = vault.resolve("Auth")
    os.rename(vault.root / "Auth.md", vault.root / "Security.md")
    report = vault.sync()
    assert report.renamed == [("Auth.md", "Security.md")]
    assert vault.resolve("Security") == before


def test_touched_but_unchanged_note_only_gets_its_new_stat(vault: Vault) -> None:
    generation = vault.sync().generation
    path = vault.root / "Auth.md"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    report = vault.sync()
    assert not report.changed and report.generation == generation
    stat = vault.index.stat_of("Auth.md")
    assert stat is not None and stat.mtime_ns == 1_000_000_000


def test_move_keeps_id_and_rewrites_links(vault: Vault) -> None:
    before = vault.resolve("Billing")
    res = vault.move("Billing", "finance/Billing Service")
    assert res.note == "finance/Billing Service.md"
    assert vault.resolve("Billing Service") == before
    assert sorted(res.rewritten) == ["Auth.md", "people/Alice.md"]
    assert "[[Billing Service#Charges|billing]]" in vault.read("Auth").text
    assert "[[Billing Service]]" in vault.read("Alice").text
    # The moved note's own link to Auth is relative markdown; it is resolved from its new place.
    assert vault.backlinks("Billing Service") == ["Auth.md", "people/Alice.md"]


def test_a_moved_note_s_own_relative_links_follow_it(vault: Vault) -> None:
    """Moved from people/ to team/, a note's `[x](./Carol.md)` (people/Carol.md) would mean
    team/Carol.md: it becomes `../people/Carol.md`; `[k](Carol.md)` meant the root's Carol.md
    (the vault path first, as in Obsidian) and still does: kept; `[[Zed]]` (people/Zed.md, under its
    folder) would mean the shorter x/Zed.md: it becomes `[[people/Zed]]`; `[[Carol]]` meant
    the root's Carol.md (the vault path first, as in Obsidian) and still does: kept; its link
    to itself follows; a rename within the folder changes no byte of the note."""
    vault.write("Carol.md", "Another Carol.\n")
    vault.write("people/Carol.md", "Carol.\n")
    vault.write("people/Zed.md", "Zed.\n")
    vault.write("x/Zed.md", "Another Zed.\n")
    vault.write("people/Bob.md",
                "[c](./Carol.md) [k](Carol.md) [[Carol]] [[Zed]] [a](Auth.md) [me](Bob.md)\n")
    bob = vault.resolve("people/Bob")
    res = vault.move("people/Bob", "team/Dave")
    assert res.rewritten[-1] == "team/Dave.md"
    assert vault.read("team/Dave").text == (
        "[c](../people/Carol.md) [k](Carol.md) [[Carol]] [[people/Zed]] [a](Auth.md)"
        " [me](Dave.md)\n")
    carol, auth = vault.resolve("people/Carol"), vault.resolve("Auth")
    assert [ln.resolved for ln in vault.read("team/Dave").links] == [
        "people/Carol.md", "Carol.md", "Carol.md", "people/Zed.md", "Auth.md", "team/Dave.md"]
    assert vault.resolve("team/Dave") == bob and carol != auth
    text = vault.read("team/Dave").text
    vault.move("team/Dave", "team/Eve")  # the same folder: only the link to itself changes
    assert vault.read("team/Eve").text == text.replace("[me](Dave.md)", "[me](Eve.md)")
    res = vault.move("people/Carol", "people/Caroline")
    assert "people/Caroline.md" not in res.rewritten and res.rewritten == ("team/Eve.md",)
    assert vault.read("people/Caroline").text == "Carol.\n"


def test_move_keeps_links_by_alias_and_relative_links_resolve(vault: Vault) -> None:
    """A link by an alias (`[[Al]]`, `[[Al|x]]`) still names the moved note (its aliases move
    with it) and is kept as written; `[[./Alice]]` and `[[../people/Alice]]` follow it."""
    vault.write("people/Notes.md", "[[Al]] [[Al|x]] [[./Alice]] [[Alice#H|y]]\n")
    vault.write("team/Log.md", "[[../people/Alice]] [[Al#H]]\n")
    alice = vault.resolve("people/Alice")
    assert [ln.resolved for ln in vault.links("team/Log")] == ["people/Alice.md"] * 2
    res = vault.move("people/Alice", "staff/Alicia")
    assert sorted(res.rewritten) == ["Billing.md", "people/Notes.md", "team/Log.md"]
    assert vault.read("people/Notes").text == "[[Al]] [[Al|x]] [[Alicia]] [[Alicia#H|y]]\n"
    assert vault.read("team/Log").text == "[[Alicia]] [[Al#H]]\n"
    for note in ("people/Notes", "team/Log"):
        assert {ln.resolved for ln in vault.links(note)} == {"staff/Alicia.md"}
    assert vault.resolve("Al") == alice


def test_move_refuses_overwrite(vault: Vault) -> None:
    with pytest.raises(NoteExists):
        vault.move("Auth", "Billing")


def test_delete_moves_to_trash(vault: Vault) -> None:
    text = (vault.root / "Auth.md").read_bytes()
    trashed = vault.delete("Auth")
    assert trashed == ".rmh/trash/Auth.md"
    assert (vault.root / trashed).read_bytes() == text
    assert not (vault.root / "Auth.md").exists()
    with pytest.raises(NoteNotFound):
        vault.read("Auth")
    assert [h.note for h in vault.search("tokens").hits] == []


def test_path_attacks_write_nothing(vault: Vault) -> None:
    before = files(vault.root)
    outside = vault.root.parent / "escaped.md"
    for bad in ("../escaped", "/etc/passwd", "a\x00b", "x/../../escaped", ".rmh/evil", "a\nb"):
        with pytest.raises(PathRefused):
            vault.write(bad, "pwned")
    assert files(vault.root) == before
    assert not outside.exists()


def test_binary_and_non_utf8_are_skipped_not_fatal(vault: Vault) -> None:
    (vault.root / "blob.md").write_bytes(b"\x00\x01\x02binary")
    (vault.root / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    report = vault.sync()
    assert sorted(report.skipped) == ["blob.md", "latin.md"]
    assert vault.search("customers").hits[0].note == "Billing.md"
    doctor = vault.doctor()
    assert {s["path"] for s in doctor["skipped"]} == {"blob.md", "latin.md"}


def test_broken_yaml_is_indexed_as_body_and_never_rewritten(vault: Vault) -> None:
    raw = "---\ntitle: [unclosed\n---\nThe walrus note.\n"
    (vault.root / "broken.md").write_text(raw, encoding="utf-8")
    assert vault.search("walrus").hits[0].note == "broken.md"
    errors = vault.doctor()["parse_errors"]
    assert [e["note"] for e in errors] == ["broken.md"]
    assert (vault.root / "broken.md").read_text(encoding="utf-8") == raw


def test_transient_read_failure_never_deletes_rows(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A test double for an I/O fault (EIO): as root, permissions cannot make a file unreadable.
    note_id = vault.resolve("Auth")
    (vault.root / "Auth.md").write_text("changed text\n", encoding="utf-8")
    real = vault.store.read_text

    def flaky(path: str) -> str:
        if path == "Auth.md":
            raise OSError(5, "Input/output error")
        return real(path)

    monkeypatch.setattr(vault.store, "read_text", flaky)
    report = vault.sync()
    assert report.errors and report.removed == []
    assert vault.resolve("Auth") == note_id
    monkeypatch.undo()
    assert vault.search("changed").hits[0].note == "Auth.md"


def test_noop_sync_changes_nothing(vault: Vault) -> None:
    gen = vault.sync().generation
    report = vault.sync()
    assert not report.changed and report.generation == gen


def test_dangling_and_orphans_in_doctor(vault: Vault) -> None:
    vault.write("Lonely", "nobody links here")
    doc = vault.doctor()
    assert {"note": "people/Alice.md", "target": "Ghost"} in doc["dangling_links"]
    assert doc["orphans"] == ["Lonely.md"]


def test_not_a_vault(tmp_path: Path) -> None:
    with pytest.raises(NotAVault):
        Vault.open(tmp_path)
    with pytest.raises(NotAVault):
        Vault.open(tmp_path / "missing")


def test_reopen_keeps_ids(vault: Vault) -> None:
    ids = {p: vault.resolve(p) for p in ("Alice", "Billing", "Auth")}
    root = vault.root
    vault.close()
    with Vault.open(root) as again:
        assert {p: again.resolve(p) for p in ids} == ids


def test_move_rewrites_markdown_links_once_encoded(tmp_path: Path) -> None:
    v = Vault.init(tmp_path / "m")
    v.write("a/Note.md",
            "see [t](../Target%20One.md), [[Target One]] and [x](<../Target One.md>)\n")
    v.write("Target One.md", "t\n")
    v.move("Target One", "sub/Target Two")
    assert v.read("a/Note").text == (
        "see [t](../sub/Target%20Two.md), [[Target Two]] and [x](<../sub/Target Two.md>)\n"
    )
    assert {ln.resolved for ln in v.links("a/Note")} == {"sub/Target Two.md"}


def test_a_rebuild_lets_go_of_the_last_generation_first(
        vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `in_place` changes the snapshot is built from every row; by then the facade's corpus and
    the engine's derived structures of the last generation are gone (memory: one set, not
    two), and the next search builds them again, as a fresh engine ranks."""
    from vault.storage import live
    from vault.storage.snapshot import Snapshot

    assert vault.search("customers").hits and vault.engine._derived is not None
    seen: list[tuple[object, object]] = []
    rebuilt = live.LiveIndex._rebuilt

    def watched(self: live.LiveIndex) -> Snapshot:  # from the saved base or every row
        seen.append((vault.engine._derived, vault._corpus))
        return rebuilt(self)

    monkeypatch.setattr(live.LiveIndex, "_rebuilt", watched)
    vault.write("Extra.md", "customers extra\n")  # an add: advanced in place, no rebuild
    assert vault.search("customers").hits and seen == []
    monkeypatch.setattr(live, "in_place", lambda notes: 0)  # a removal is advanced too
    vault.delete("Auth")
    hits = vault.search("customers").hits
    assert seen == [(None, None)] and vault.engine._derived is not None
    fresh = Vault.open(vault.root, watch=False)
    assert [(h.id, h.score) for h in fresh.search("customers").hits] == [
        (h.id, h.score) for h in hits]
    fresh.close()


def test_result_limits_refuse_before_building(vault: Vault) -> None:
    vault.write("Hub", "[[Alice]] [[Billing]] [[Auth]]\n")
    vault.write("Other", "[[Billing]]\n")
    assert len(vault.links("Hub", limit=3)) == 3
    with pytest.raises(QuotaExceeded) as too_many:
        vault.links("Hub", limit=2)
    assert too_many.value.limit == 2
    assert len(vault.backlinks("Billing", limit=10)) >= 3
    with pytest.raises(QuotaExceeded):
        vault.backlinks("Billing", limit=1)
    with pytest.raises(QuotaExceeded):
        vault.neighbors("Billing", 2, limit=1)


def test_edit_over_the_note_cap_or_a_limit_is_refused_unwritten(vault: Vault) -> None:
    vault.write("Big", "x" * 1000)
    before = vault.read("Big").hash
    with pytest.raises(QuotaExceeded):  # 300 million characters: never built
        vault.edit("Big", Edit("replace", "y" * 300_000, find="x", expected_count=1000))
    with pytest.raises(QuotaExceeded) as limited:
        vault.edit("Big", Edit("append", "z" * 10), max_bytes=1005)
    assert limited.value.limit == 1005
    assert vault.read("Big").hash == before
    assert vault.edit("Big", Edit("append", "z" * 5), max_bytes=1006).size == 1006


@pytest.mark.parametrize("watch", [True, False])
def test_prepare_sees_the_notes_as_they_are_now(tmp_path: Path, watch: bool) -> None:
    """`prepare` builds "for the notes as they are now": like every other call it first
    brings the index up to date with the folder (it prepared the last snapshot, missing a
    note written or removed outside since; found by the removal histories,
    test_vault_removal_histories.py, session 17)."""
    (tmp_path / "a.md").write_text("alpha\n")
    (tmp_path / "b.md").write_text("beta\n")
    with Vault.init(tmp_path, watch=watch) as v:
        assert v.prepare()["notes"] == 2
        (tmp_path / "c.md").write_text("gamma\n")
        (tmp_path / "a.md").unlink()
        got = v.prepare()
        assert got["notes"] == 2 and got["generation"] == v.sync().generation
        assert v.search("gamma").hits[0].note == "c.md"


def test_markdown_links_without_md_resolve_and_follow_a_move(tmp_path: Path) -> None:
    """`[t](../Target%20One)`, `[u](<../Target One#H>)` and `[s](Target%20One)` (by name, as
    Obsidian writes a shortest path) mean `Target One.md`; a move rewrites them in the style
    written, `.md` as written: a path from the linking note stays one, a name stays a name."""
    v = Vault.init(tmp_path / "m")
    v.write("Target One.md", "t\n")
    v.write("people/Robert.md", "r\n")
    v.write("a/Note.md", "see [t](../Target%20One), [u](<../Target One#H>), [r](Robert), "
                         "[s](Target%20One) and [x](../Target%20One.md)\n")
    assert [ln.resolved for ln in v.links("a/Note")] == [
        "Target One.md", "Target One.md", "people/Robert.md", "Target One.md", "Target One.md"]
    res = v.move("Target One", "sub/Target Two")
    assert res.rewritten == ("a/Note.md",)
    assert v.read("a/Note").text == (
        "see [t](../sub/Target%20Two), [u](<../sub/Target Two#H>), [r](Robert), "
        "[s](Target%20Two) and [x](../sub/Target%20Two.md)\n")
    v.move("people/Robert", "people/Rob")
    assert "[r](Rob)," in v.read("a/Note").text
    assert [ln.resolved for ln in v.links("a/Note")] == [
        "sub/Target Two.md", "sub/Target Two.md", "people/Rob.md", "sub/Target Two.md",
        "sub/Target Two.md"]
    assert v.backlinks("sub/Target Two") == ["a/Note.md"]


@pytest.mark.parametrize("seed", range(3))
def test_generated_extensionless_links_follow_moves(tmp_path: Path, seed: int) -> None:
    """Generated note names (spaces, %, parentheses, accents, dots) linked without `.md` from
    another folder: each link resolves, and after each note is moved to another generated
    name it resolves to the moved note and is still written without `.md`."""
    import random
    from urllib.parse import quote

    rng = random.Random(seed)
    parts = ["Plan", "50% done", "(draft)", "Caf\u00e9", "v1.2 notes", "a&b", "\u00fcber", "Q3"]
    v = Vault.init(tmp_path / "g")
    names = sorted({f"{rng.choice(['', 'x/', 'y z/'])}{rng.choice(parts)} {i}"
                    for i in range(6)})
    for name in names:
        v.write(f"{name}.md", f"{name}\n")
    v.write("hub/Links.md", "".join(f"- [{i}]({quote('../' + n)})\n"
                                    for i, n in enumerate(names)))
    assert [ln.resolved for ln in v.links("hub/Links")] == [f"{n}.md" for n in names]
    moved = [f"{rng.choice(['', 'moved/', 'deep/er/'])}{rng.choice(parts)} m{i}"
             for i in range(len(names))]
    for old, new in zip(names, moved, strict=True):
        v.move(old, new)
    assert [ln.resolved for ln in v.links("hub/Links")] == [f"{n}.md" for n in moved]
    assert ".md)" not in v.read("hub/Links").text


def test_read_and_links_agree_on_names_spelled_apart(tmp_path: Path) -> None:
    """`Note.md` / `note.md` and `Café.md` composed / decomposed side by side (a
    case-sensitive file system that keeps the normal form): `read NAME` and `[[NAME]]`,
    `[x](NAME)` in another note name the same file whenever `read` answers (else it lists
    them), and a link spelled apart from all of them takes the first path in code-point
    order (storage order and ids do not matter)."""
    from vault import AmbiguousNote

    root = tmp_path / "v"
    root.mkdir()
    nfc, nfd = "Caf\u00e9", "Cafe\u0301"
    names = ["Note", "note", nfc, nfd]
    for name in reversed(names):
        (root / f"{name}.md").write_text(f"I am {name!a}\n", encoding="utf-8")
    if len(os.listdir(root)) != 4:
        pytest.skip("this file system folds case or normal form")
    asked = [*names, "NOTE", "CAF\u00c9", "cafe\u0301"]
    (root / "hub").mkdir()
    (root / "hub" / "Hub.md").write_text(
        "".join(f"[[{q}]] [m](../{q.replace(' ', '%20')})\n" for q in asked), encoding="utf-8")
    with Vault.init(root) as v:
        links = [ln.resolved for ln in v.links("hub/Hub")]
        for i, q in enumerate(asked):
            wiki, markdown = links[2 * i], links[2 * i + 1]
            assert wiki == markdown, q
            try:
                read = v.read(q).note
            except AmbiguousNote:
                read = None
            if read is not None:
                assert wiki == read, (q, wiki, read)
        assert links[::2] == ["Note.md", "note.md", f"{nfc}.md", f"{nfd}.md", "Note.md",
                              f"{nfd}.md", f"{nfd}.md"]
        assert [v.read(q).note for q in names] == [f"{n}.md" for n in names]
