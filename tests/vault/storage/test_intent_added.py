"""A killed move's recovery and the notes its plan did not list (storage/intent_added.py): a
note that did not link to the moved note when the move was planned, saved since with links
to its old name, gets them rewritten as the plan would have (the move was never
acknowledged: a link to the old name meant the note that moved). Generated vaults of notes
named alike in the root, the linking folders and elsewhere, every form of link."""

from __future__ import annotations

import posixpath
import random
from collections.abc import Collection
from pathlib import Path

import pytest

from tests.vault.notes.test_relinks import FOLDERS, NAMES, forms, link, targets, vault
from vault.notes.hashing import content_hash
from vault.notes.links import Resolver
from vault.notes.markdown_scan import Link, scan_body
from vault.notes.relinks import moved, names_meaning, relink_plan
from vault.storage.intents import Journal, MoveIntent, Rewrite
from vault.storage.store import Store


def meaning(resolver: Resolver, found: Link, source: str) -> str | None:
    got = (resolver.resolve_markdown(found.target, source) if found.kind == "markdown"
           else resolver.resolve_wiki(found.target, source))
    return None if got is None else resolver.id_path[got]


def planned_move(rng: random.Random, root: Path) -> tuple[
        dict[str, str], dict[str, int], Resolver, str, str, Resolver]:
    """A generated vault written under `root` and a move the live move makes (to a free
    name a wiki-link can write): (notes, their ids, the resolver before, old, new, after)."""
    notes = vault(rng)
    paths = sorted(notes)
    ids = {p: i for i, p in enumerate(paths, 1)}
    before = Resolver.build({i: p for p, i in ids.items()}, {})
    while True:
        old = rng.choice(paths)
        new = posixpath.join(rng.choice(FOLDERS), rng.choice(NAMES) + " m.md")
        after = moved(before, ids[old], new)
        if all(new.lower() != p.lower() for p in paths) and not any(
                c in after.link_text(ids[old]) for c in "[]|#"):
            break
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return notes, ids, before, old, new, after


def relinked(root: Path, written: dict[str, str], before: Resolver, after: Resolver, old: str,
             new: str, changed: Collection[str]) -> int:
    """Check each note of `written` (its text as the editor saved it) now: every link means
    what it meant, but a link to `old` means `new`; a note is in `changed` exactly when its
    text changed. The number of links to `old` checked."""
    checked = 0
    for path in written:
        now = (root / path).read_text(encoding="utf-8")
        olds, news = scan_body(written[path]).sites, scan_body(now).sites
        assert len(olds) == len(news)
        for o, n in zip(olds, news, strict=True):
            was = meaning(before, o.link, path)
            assert meaning(after, n.link, path) == (new if was == old else was), (
                path, o.link.target, n.link.target)
            checked += was == old
        assert (path in changed) == (now != written[path])
    return checked


@pytest.mark.parametrize("seed", range(30))
def test_links_to_the_old_name_added_to_unlisted_notes_mean_the_moved_note_after_recovery(
        tmp_path: Path, seed: int) -> None:
    """The move is recorded and killed before (or after) its rename; an editor then adds to
    every note the plan did not list a line linking the old path in every form (some of
    which name another note from there: a nearer note of that name). After the recovery
    every link in every note means what it meant when written (the moved note at its new
    path); the notes it rewrote are reported written; the planned referrers are the plan's
    text. On main those links dangled, or (a name another note shares) meant another."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    notes, ids, before, old, new, after = planned_move(rng, root)
    paths = sorted(notes)
    note_id = ids[old]
    wiki = after.link_text(note_id)
    (root / ".rmh").mkdir()
    referrers = [ids[p] for p in paths if p != old and note_id in [
        before.resolve_markdown(t, p) for t in targets(notes[p])]]
    text_of = {new if p == old else p: t for p, t in notes.items()}
    plan = relink_plan(text_of.__getitem__, referrers, note_id, before, after, old, new)
    store = Store(root)
    journal = Journal(store)
    journal.record(MoveIntent(old, new, content_hash(notes[old]), tuple(
        Rewrite(p, now, planned, names_meaning(before, note_id, old if p == new else p))
        for p, now, planned in plan), wiki))
    if rng.random() < 0.5:
        store.move(old, new)  # killed after its rename, else before it
    planned = {p for p, _, _ in plan}
    unlisted = [p for p in paths if p != old and p not in planned]
    written = {}
    for path in unlisted:
        line = " ".join(link(rng, f) if rng.random() < 0.5 else f"[[{posixpath.splitext(f)[0]}]]"
                        for f in forms(path, old))
        written[path] = notes[path] + line + "\n"
        (root / path).write_text(written[path], encoding="utf-8")
    (outcome,) = journal.recover()
    assert outcome.left == [] and journal.pending() == []
    checked = relinked(root, written, before, after, old, new, outcome.written)
    for path, _, planned_text in plan:
        assert (root / path).read_text(encoding="utf-8") == planned_text
    assert checked > 0
