"""The incremental snapshot (storage/increment.py) equals a full rebuild, field by field."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from vault.notes import folding
from vault.storage.index import Index
from vault.storage.live import LiveIndex
from vault.storage.snapshot import Snapshot, build_snapshot
from vault.storage.store import Store

NAMES = ["Foo", "foo", "Bar", "Baz", "Qux", "Hub", "Alpha", "Beta"]
FOLDERS = ["", "a/", "b/", "a/deep/"]


def _link(rng: random.Random) -> str:
    name = rng.choice([*NAMES, "nick", "Nick", "a/Foo", "b/Bar", "Ghost"])
    return rng.choice([
        f"[[{name}]]", f"[[{name}|shown]]", f"[[{name}#Part]]", f"![[{name}]]",
        f"[[{name}.md]]", "[[#Part]]", f"[x]({name}.md)", f"[y](../{name}.md)",
        f"[z](/a/{name}.md)",
    ])


def _text(rng: random.Random) -> str:
    aliases = rng.sample(["nick", "Nick", "Foo", "hub", "other"], rng.randint(0, 2))
    front = f"---\naliases: [{', '.join(aliases)}]\n---\n" if aliases else ""
    links = " ".join(_link(rng) for _ in range(rng.randint(0, 4)))
    return f"{front}word{rng.randint(0, 9)} text {links}\n"


def _same(inc: Snapshot, full: Snapshot) -> None:
    a, b = inc.corpus, full.corpus
    for name in ("generation", "ids", "paths", "titles", "aliases", "bodies", "frontmatter",
                 "content_hashes", "edges", "archived"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.graph == b.graph
    r, s = inc.resolver, full.resolver
    for name in ("by_key", "by_name", "by_alias", "path_id", "id_path"):
        assert dict(getattr(r, name)) == dict(getattr(s, name)), name
    assert dict(inc.links) == dict(full.links)
    # targets is a superset: every pair of the full build is found.
    pairs = zip(full.targets.hashes.tolist(), full.targets.sources.tolist(), strict=True)
    for key_hash, src in pairs:
        lo = int(inc.targets.hashes.searchsorted(key_hash, "left"))
        hi = int(inc.targets.hashes.searchsorted(key_hash, "right"))
        assert src in inc.targets.sources[lo:hi].tolist()


@pytest.mark.parametrize(("seed", "fold"), [(s, f) for s in range(6) for f in (False, True)])
def test_random_adds_and_edits_advance_like_a_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool) -> None:
    if fold:  # overlaid columns, mappings and name tables fold into plain ones every few changes
        monkeypatch.setattr(folding, "MIN_COMPACT", 2)
    rng = random.Random(seed)
    store = Store(tmp_path)
    index = Index.open(tmp_path / ".rmh" / "index.sqlite")
    live = LiveIndex(store, index, None, lambda _: None)
    paths: list[str] = []
    for k in range(4):
        paths.append(f"{FOLDERS[k % len(FOLDERS)]}{NAMES[k]}.md")
        store.write_text(paths[-1], _text(rng))
    live.sync()
    assert live.snapshot().corpus.graph is not None  # built: the advance must patch it
    advanced = 0
    for step in range(25):
        kind = rng.random()
        if kind < 0.4 or len(paths) < 3:
            path = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)}{rng.choice(['', '', ' 2'])}.md"
            store.write_text(path, _text(rng))
            paths.append(path) if path not in paths else None
        elif kind < 0.8:
            for path in rng.sample(paths, rng.randint(1, 2)):
                store.write_text(path, _text(rng))
        elif kind < 0.85:  # a removal: a full rebuild is allowed
            path = rng.choice(paths)
            paths.remove(path)
            store.trash(path)
        else:  # a rename (sometimes to a name other links use, or back): in place
            old = rng.choice(paths)
            new = rng.choice([f"{rng.choice(FOLDERS)}{rng.choice(NAMES)} moved {step}.md",
                              f"{rng.choice(FOLDERS)}{rng.choice(NAMES)}.md"])
            if new in paths:
                continue
            store.move(old, new)
            paths[paths.index(old)] = new
            if rng.random() < 0.5:
                live.sync()  # the rename's own generation, then (maybe) back again below
                if rng.random() < 0.5:
                    store.move(new, old)
                    paths[paths.index(new)] = old
        if rng.random() < 0.7:
            report = live.sync()
        else:  # the write path: just these paths
            live.sync_paths(paths)
            report = None
        snap = live.snapshot()
        full = build_snapshot(index)
        _same(snap, full)
        for note_id in snap.corpus.ids:  # from the edges, as a scan of every link gives them
            assert snap.referrers(note_id) == sorted(
                {s for s, links in full.links.every() for _, d in links if d == note_id}
                - {note_id})
        in_place = report is not None and not report.removed
        if in_place and report is not None and report.changed:
            delta = snap.corpus.delta
            assert delta is not None
            if delta.base_generation == snap.corpus.generation - 1:  # one sync since
                changed = {snap.corpus.paths[p] for p in delta.changed}
                assert changed == set(report.updated) | {n for _, n in report.renamed}
                assert set(snap.corpus.paths[delta.base_len:]) == set(report.added)
            advanced += 1
    assert advanced >= 5
    index.close()


def test_a_new_note_claims_dangling_links_and_alias_links(tmp_path: Path) -> None:
    store = Store(tmp_path)
    index = Index.open(tmp_path / ".rmh" / "index.sqlite")
    live = LiveIndex(store, index, None, lambda _: None)
    store.write_text("src.md", "[[Target]] [[nick]] [[b/Target]]\n")
    store.write_text("a/Target.md", "one\n")
    live.sync()
    before = live.snapshot()
    store.write_text("b/Target.md", "---\naliases: [nick]\n---\ntwo\n")
    live.sync()
    after = live.snapshot()
    assert after.corpus.delta is not None and after.corpus.delta.changed == ()
    src = before.resolver.path_id["src.md"]
    b_id = after.resolver.path_id["b/Target.md"]
    assert [d for _, d in before.links[src]][1:] == [None, None]
    assert [d for _, d in after.links[src]][1:] == [b_id, b_id]
    _same(after, build_snapshot(index))
    index.close()


def test_a_rename_advances_in_place_and_moves_what_links_resolve_to(tmp_path: Path) -> None:
    """A rename keeps the note's position: its path and title change, links to the old name
    dangle (or find another note of that name), dangling links to the new name resolve, and
    the note's own relative links resolve from its new folder; as a rebuild gives it."""
    store = Store(tmp_path)
    index = Index.open(tmp_path / ".rmh" / "index.sqlite")
    live = LiveIndex(store, index, None, lambda _: None)
    store.write_text("src.md", "[[Old]] [[New]] [[a/Old]] [[Other]]\n")
    store.write_text("a/Old.md", "---\naliases: [nick]\n---\nsee [sibling](Sib.md)\n")
    store.write_text("a/Sib.md", "sibling a\n")
    store.write_text("b/Sib.md", "sibling b\n")
    store.write_text("c/Old.md", "another old\n")
    store.write_text("Other.md", "[[nick]]\n")
    live.sync()
    before = live.snapshot()
    moved = before.resolver.path_id["a/Old.md"]
    for old, new in [("a/Old.md", "b/New.md"), ("b/New.md", "a/Old.md"),
                     ("a/Old.md", "b/New.md")]:
        store.move(old, new)
        report = live.sync()
        assert report.renamed == [(old, new)] and not report.removed
        snap = live.snapshot()
        delta = snap.corpus.delta
        assert delta is not None and delta.base_generation == snap.corpus.generation - 1
        assert [snap.corpus.paths[p] for p in delta.changed] == [new]
        _same(snap, build_snapshot(index))
    src = snap.resolver.path_id["src.md"]
    c_old = snap.resolver.path_id["c/Old.md"]
    b_sib = snap.resolver.path_id["b/Sib.md"]
    assert snap.resolver.path_id["b/New.md"] == moved
    assert [d for _, d in snap.links[src]] == [c_old, moved, None,
                                               snap.resolver.path_id["Other.md"]]
    assert [d for _, d in snap.links[moved]] == [b_sib]  # Sib.md from b/ now
    assert [d for _, d in snap.links[snap.resolver.path_id["Other.md"]]] == [moved]  # alias
    assert snap.corpus.titles[snap.corpus.position(moved)] == "New"
    index.close()


def test_another_writer_forces_a_rebuild(tmp_path: Path) -> None:
    store = Store(tmp_path)
    index = Index.open(tmp_path / ".rmh" / "index.sqlite")
    other = Index.open(tmp_path / ".rmh" / "index.sqlite")
    live = LiveIndex(store, index, None, lambda _: None)
    store.write_text("a.md", "one\n")
    live.sync()
    live.snapshot()
    store.write_text("b.md", "two\n")
    LiveIndex(store, other, None, lambda _: None).sync()  # another process indexed b.md
    store.write_text("c.md", "three\n")
    live.sync()
    snap = live.snapshot()
    assert snap.corpus.delta is None
    assert snap.corpus.paths == ("a.md", "b.md", "c.md")
    other.close()
    index.close()



def _removal_step(rng: random.Random, store: Store, snap: Snapshot, paths: list[str]) -> str:
    """One change of a history with removals (made in the folder); returns its kind."""
    kind = rng.choice(["add", "add", "edit", "remove", "remove", "remove named",
                       "rename onto", "remove then add", "remove last", "remove all"])
    if kind == "remove all" and rng.random() < 0.7:
        kind = "remove"  # rarer: it empties the vault
    if kind in ("add", "remove then add") or not paths:
        if kind == "remove then add" and paths:  # an add right after a removal, one sync
            store.trash(paths.pop(rng.randrange(len(paths))))
        path = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)}{rng.choice(['', '', ' 2'])}.md"
        store.write_text(path, _text(rng))
        if path not in paths:
            paths.append(path)
        return kind if paths else "add"
    if kind == "edit":
        for path in rng.sample(paths, min(len(paths), rng.randint(1, 2))):
            store.write_text(path, _text(rng))
    elif kind == "remove named":  # a note others may link to, another of its name left
        title = {p: p.rsplit("/", 1)[-1].casefold() for p in paths}
        twins = [p for p in paths if sum(t == title[p] for t in title.values()) > 1]
        path = rng.choice(twins or paths)
        paths.remove(path)
        store.trash(path)
    elif kind == "rename onto" and len(paths) > 1:  # outside rmh: the note there is gone
        old, new = rng.sample(paths, 2)
        os.replace(store.root / old, store.root / new)
        paths.remove(old)
    elif kind == "remove last":  # the highest id: the corpus's last row
        last = snap.resolver.id_path[snap.corpus.ids[-1]] if len(snap.corpus) else None
        if last in paths:
            paths.remove(last)
            store.trash(last)
    elif kind == "remove all":
        for path in list(paths):
            store.trash(path)
        paths.clear()
    else:
        for path in rng.sample(paths, min(len(paths), rng.randint(1, 2))):
            paths.remove(path)
            store.trash(path)
    return kind


@pytest.mark.parametrize(("seed", "fold"), [(s, f) for s in range(10) for f in (False, True)])
def test_histories_with_removals_advance_like_a_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool) -> None:
    """Generated histories of removals (the last note, every note, a note others link to by
    a name another note keeps, a rename onto an existing note, an add right after a removal)
    among adds and edits, one or several syncs before each snapshot: every snapshot is
    advanced (no rebuild: `on_rebuild` is not called), equals a build from every row field by
    field, and its delta names the previous corpus's positions of the removed notes."""
    if fold:
        monkeypatch.setattr(folding, "MIN_COMPACT", 2)
    rng = random.Random(seed)
    store = Store(tmp_path)
    index = Index.open(tmp_path / ".rmh" / "index.sqlite")
    live = LiveIndex(store, index, None, lambda _: None)
    rebuilds: list[int] = []
    paths = [f"{FOLDERS[k % len(FOLDERS)]}{NAMES[k]}.md" for k in range(6)]
    for path in paths:
        store.write_text(path, _text(rng))
    live.sync()
    snap = live.snapshot()
    assert snap.corpus.graph is not None  # built: the advance must patch it
    live.on_rebuild = lambda: rebuilds.append(1)
    kinds: set[str] = set()
    for _ in range(36):
        prev, removed = snap, []
        for _ in range(rng.choice([1, 1, 2])):
            kinds.add(_removal_step(rng, store, prev, paths))
            report = live.sync() if rng.random() < 0.7 else None
            if report is None:
                live.sync_paths(sorted(set(paths) | set(prev.corpus.paths)))
        snap = live.snapshot()
        _same(snap, build_snapshot(index))
        gone = sorted(set(prev.corpus.ids) - set(snap.corpus.ids))
        delta = snap.corpus.delta
        if snap.corpus.generation != prev.corpus.generation:
            assert delta is not None
            if delta.base_generation == prev.corpus.generation:
                removed = [prev.corpus.position(i) for i in gone]
                assert list(delta.removed) == removed
                kept = [i for i in prev.corpus.ids if i not in set(gone)]
                assert list(snap.corpus.ids[: delta.kept]) == kept
        for note_id in snap.corpus.ids:
            assert snap.referrers(note_id) == sorted(
                {s for s, links in snap.links.every() for _, d in links if d == note_id}
                - {note_id})
    assert rebuilds == []
    assert len({"remove named", "rename onto", "remove then add", "remove last"} & kinds) >= 3
    index.close()


def test_removing_a_note_lets_links_find_the_other_of_its_name(tmp_path: Path) -> None:
    """`[[Target]]` meant a/Target.md (shortest path first); removed, it means b/c/Target.md;
    removed too, it dangles; the alias link follows the alias's one remaining note."""
    store = Store(tmp_path)
    index = Index.open(tmp_path / ".rmh" / "index.sqlite")
    live = LiveIndex(store, index, None, lambda _: None)
    store.write_text("src.md", "[[Target]] [[nick]]\n")
    store.write_text("a/Target.md", "---\naliases: [nick]\n---\none\n")
    store.write_text("b/c/Target.md", "two\n")
    store.write_text("z.md", "---\naliases: [nick]\n---\nlast\n")
    live.sync()
    first = live.snapshot()
    src = first.resolver.path_id["src.md"]
    assert [d for _, d in first.links[src]] == [first.resolver.path_id["a/Target.md"], None]
    expected = [[first.resolver.path_id["b/c/Target.md"], first.resolver.path_id["z.md"]],
                [None, first.resolver.path_id["z.md"]]]
    for path, want in zip(["a/Target.md", "b/c/Target.md"], expected, strict=True):
        store.trash(path)
        live.sync()
        snap = live.snapshot()
        assert snap.corpus.delta is not None and snap.corpus.delta.removed
        assert [d for _, d in snap.links[src]] == want
        _same(snap, build_snapshot(index))
    index.close()
