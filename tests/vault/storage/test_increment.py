"""The incremental snapshot (storage/increment.py) equals a full rebuild, field by field."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault.storage import overlay
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
        monkeypatch.setattr(overlay, "MIN_COMPACT", 2)
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
        elif kind < 0.9:
            for path in rng.sample(paths, rng.randint(1, 2)):
                store.write_text(path, _text(rng))
        elif kind < 0.95:  # a removal: a full rebuild is allowed
            path = rng.choice(paths)
            paths.remove(path)
            store.trash(path)
        else:  # a rename: a full rebuild is allowed
            old = rng.choice(paths)
            new = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)} moved {step}.md"
            store.move(old, new)
            paths[paths.index(old)] = new
        if rng.random() < 0.7:
            report = live.sync()
        else:  # the write path: just these paths
            live.sync_paths(paths)
            report = None
        snap = live.snapshot()
        full = build_snapshot(index)
        _same(snap, full)
        in_place = report is not None and not report.removed and not report.renamed
        if in_place and report is not None and report.changed:
            assert snap.corpus.delta is not None
            assert snap.corpus.delta.base_generation == snap.corpus.generation - 1
            changed = {snap.corpus.paths[p] for p in snap.corpus.delta.changed}
            assert changed == set(report.updated)
            assert set(snap.corpus.paths[snap.corpus.delta.base_len:]) == set(report.added)
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
