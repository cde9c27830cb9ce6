"""The compact resolver (name_index.py tables over the columns) answers exactly as the dict
resolver did: on generated vaults full of tricky names, under forced hash collisions, and
after patching (`Resolver.plus`), with the earlier resolver unchanged by the patch."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

import pytest

from vault.errors import AmbiguousNote
from vault.notes import folding, link_keys, links, name_index
from vault.notes.links import Resolver
from vault.notes.rows import LinkRow

from .dict_resolver import DictResolver

FOLDERS = ["", "a/", "A/", "b/", "a/deep/", "Straße/", "ünï/", "u\u0308nï/", "x y/"]
NAMES = ["Foo", "foo", "FOO", "Bar", "Straße", "STRASSE", "strasse", "Ǆemal", "ǆemal", "Ünï",
         "Project X", "x.md", "n.MD", "é", "é", "Ω", "Hub", "dup", "dup", "Über", "U\u0308ber",
         "ü\u0323", "ụ\u0308"]
ALIASES = ["nick", "Nick", " nick ", "foo", "Hub", "STRASSE", "ω", "other", "", "a/b"]


def vault(rng: random.Random, n: int) -> tuple[dict[int, str], dict[int, tuple[str, ...]]]:
    """Up to `n` notes at unique paths (ids with gaps), some with aliases."""
    paths: dict[int, str] = {}
    aliases: dict[int, tuple[str, ...]] = {}
    note_id = 0
    while len(paths) < n:
        note_id += rng.randint(1, 3)
        path = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)}{rng.choice(['.md', '.md', '.MD'])}"
        if path in paths.values():
            continue
        paths[note_id] = path
        if rng.random() < 0.4:
            aliases[note_id] = tuple(rng.sample(ALIASES, rng.randint(1, 3)))
    return paths, aliases


def targets(rng: random.Random, paths: Mapping[int, str]) -> list[str]:
    """Link targets that hit, miss, and half-match the vault's names."""
    out = [*NAMES, *ALIASES, "Nobody", "/Foo", "a/Foo", "deep/Foo", "A/DEEP/foo.md", "../Foo",
           "./Foo", "./a/Foo", "../a/Foo", "Straße/strasse", "x.md.md", " Foo ", "#"]
    for path in paths.values():
        out.extend([path, path.upper(), path[:-3], path.rsplit("/", 1)[-1][:-3]])
    return sorted(set(out))


def outcome(f: Callable[[str], object], q: str) -> object:
    """What a lookup returns, or the AmbiguousNote it raises (with its candidates)."""
    try:
        return f(q)
    except AmbiguousNote as e:
        return ("ambiguous", str(e))


def check_same(new: Resolver, old: DictResolver, queries: Sequence[str],
               sources: Sequence[str]) -> None:
    for name in ("by_key", "by_name", "by_alias", "path_id", "id_path"):
        assert dict(getattr(new, name)) == dict(getattr(old, name)), name
        assert len(getattr(new, name)) == len(getattr(old, name)), name
    assert list(new.id_path) == sorted(old.id_path)
    for note_id in old.id_path:
        assert new.link_text(note_id) == old.link_text(note_id)
    for q in queries:
        assert new.candidates(q) == old.candidates(q), q
        assert outcome(new.by_path, q) == outcome(old.by_path, q), q
        assert outcome(new.by_title, q) == outcome(old.by_title, q), q
        assert new.by_key.get(q.casefold()) == old.by_key.get(q.casefold()), q
        for src in sources:
            assert new.resolve_wiki(q, src) == old.resolve_wiki(q, src), (q, src)
            assert new.resolve_markdown(q, src) == old.resolve_markdown(q, src), (q, src)
            for kind in ("wiki", "markdown"):
                ln = LinkRow(q if q != "#" else "", None, None, None, False, kind)
                assert new.resolve(ln, src) == old.resolve(ln, src), (q, src, kind)
        assert new.resolve_wiki(q) == old.resolve_wiki(q), q


def sources_of(rng: random.Random, paths: Mapping[int, str]) -> list[str]:
    return [*sorted(rng.sample(sorted(paths.values()), min(6, len(paths)))), "elsewhere/n.md"]


@pytest.mark.parametrize("seed", range(4))
def test_same_answers_as_the_dict_resolver(seed: int) -> None:
    rng = random.Random(seed)
    paths, aliases = vault(rng, 60)
    check_same(Resolver.build(paths, aliases), DictResolver.build(paths, aliases),
               targets(rng, paths), sources_of(rng, paths))


HASHES: dict[str, Callable[[str], int]] = {
    "all equal": lambda key: 0,
    "all equal, negative": lambda key: -(2**40),
    "same high half, slots differ": lambda key: (7 << 32) | len(key),
    "same slot, high halves differ": lambda key: len(key) << 40,
}


@pytest.mark.parametrize("how", sorted(HASHES))
def test_a_hash_collision_never_gives_a_wrong_answer(
        monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    monkeypatch.setattr(name_index, "key_hash", HASHES[how])
    rng = random.Random(7)
    paths, aliases = vault(rng, 40)
    new = Resolver.build(paths, aliases)
    assert len(new.keys.positions("anything")) >= 1  # the collision is real
    check_same(new, DictResolver.build(paths, aliases), targets(rng, paths),
               sources_of(rng, paths))


@pytest.mark.parametrize(("seed", "fold"), [(s, f) for s in range(3) for f in (False, True)])
def test_patching_answers_as_a_rebuild_and_leaves_the_earlier_resolver(
        monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool) -> None:
    if fold:  # the added entries fold into rebuilt tables every few patches
        monkeypatch.setattr(folding, "MIN_COMPACT", 3)
    rng = random.Random(seed)
    paths, aliases = vault(rng, 70)
    ids = sorted(paths)
    cut = 20
    cur = {i: aliases.get(i, ()) for i in ids[:cut]}
    res = Resolver.build({i: paths[i] for i in ids[:cut]}, cur)
    while cut < len(ids):
        before, before_map = res, dict(cur)
        step = ids[cut:cut + rng.randint(0, 6)]  # none: only aliases change
        realiased = rng.sample(ids[:cut], rng.randint(0, 3))
        for i in realiased:
            cur[i] = tuple(rng.sample(ALIASES, rng.randint(0, 2)))
        cur.update((i, aliases.get(i, ())) for i in step)
        cut += len(step)
        known = ids[:cut]
        res = res.plus(tuple(known), tuple(paths[i] for i in known),
                       tuple(cur[i] for i in known), sorted(ids.index(i) for i in realiased))
        queries = targets(rng, {i: paths[i] for i in known})[::3]
        check_same(res, DictResolver.build({i: paths[i] for i in known}, cur), queries,
                   sources_of(rng, paths))
        old_paths = {i: paths[i] for i in before.ids}
        assert dict(before.by_alias) == dict(DictResolver.build(old_paths, before_map).by_alias)
        assert dict(before.by_key) == dict(DictResolver.build(old_paths, before_map).by_key)


@pytest.mark.parametrize("seed", range(4))
def test_patches_before_the_first_lookup_stay_lazy_and_answer_as_a_rebuild(
        seed: int) -> None:
    """A resolver over persisted columns is patched by a process catching up
    (storage/catch_up.py) before anything is looked up: no table is built by the patches,
    and the first lookup answers as tables built over the final columns."""
    rng = random.Random(seed)
    paths, aliases = vault(rng, 70)
    ids = sorted(paths)
    cut = 30
    cur = {i: aliases.get(i, ()) for i in ids[:cut]}
    res = Resolver.build({i: paths[i] for i in ids[:cut]}, cur)
    while cut < len(ids):
        step = ids[cut:cut + rng.randint(1, 8)]
        realiased = rng.sample(ids[:cut], rng.randint(0, 3))
        for i in realiased:
            cur[i] = tuple(rng.sample(ALIASES, rng.randint(0, 2)))
        cur.update((i, aliases.get(i, ())) for i in step)
        cut += len(step)
        known = ids[:cut]
        res = res.plus(tuple(known), tuple(paths[i] for i in known),
                       tuple(cur[i] for i in known), sorted(ids.index(i) for i in realiased))
        for table in (res.keys, res.names, res.alias_index):
            assert not isinstance(table, name_index.LazyKeyIndex) or table._entries is not None
    check_same(res, DictResolver.build({i: paths[i] for i in ids}, cur),
               targets(rng, paths), sources_of(rng, paths))


@pytest.mark.parametrize(("seed", "fold", "lazy"),
                         [(s, f, z) for s in range(4) for f in (False, True) for z in (0, 1)])
def test_removals_answer_as_a_rebuild(monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool,
                                      lazy: int) -> None:
    """Generated histories of removals (sometimes every note, sometimes a note just added)
    among adds, alias changes and renames, applied by `Resolver.plus` over shared tables
    (`minus`): each resolver answers as one built over its columns, the earlier one is
    unchanged; with `lazy` no lookup happens before the last step (a process catching up:
    the removal is kept beside the unbuilt table), and with forced collisions under `fold`
    the tables fold into rebuilt ones every few steps."""
    if fold:
        monkeypatch.setattr(folding, "MIN_COMPACT", 3)
        monkeypatch.setattr(name_index, "key_hash", HASHES["same high half, slots differ"])
    rng = random.Random(seed)
    pool, aliases = vault(rng, 90)
    fresh = sorted(pool)
    known = fresh[:25]
    del fresh[:25]
    cur = {i: aliases.get(i, ()) for i in known}
    where = {i: pool[i] for i in known}
    res = Resolver.build(where, cur)
    serial = 0
    for _ in range(14):
        before, before_paths, before_aliases = res, dict(where), dict(cur)
        if rng.random() < 0.08:
            gone = list(range(len(known)))  # every note
        else:
            gone = sorted(rng.sample(range(len(known)), min(len(known), rng.randint(0, 3))))
        for p in gone:
            where.pop(known[p])
            cur.pop(known[p])
        known = [i for k, i in enumerate(known) if k not in set(gone)]
        realiased = rng.sample(known, min(len(known), rng.randint(0, 2)))
        for i in realiased:
            cur[i] = tuple(rng.sample(ALIASES, rng.randint(0, 2)))
        renamed = rng.sample([i for i in known if i not in realiased],
                             min(len(known) - len(realiased), rng.randint(0, 2)))
        for i in renamed:
            serial += 1
            where[i] = f"{rng.choice(FOLDERS)}{rng.choice(NAMES)} {serial}.md"
        k = rng.randint(0, 4)
        step, fresh = fresh[:k], fresh[k:]
        step = [i for i in step if pool[i] not in where.values()]
        for i in step:
            where[i], cur[i] = pool[i], aliases.get(i, ())
        known += step
        res = res.plus(tuple(known), tuple(where[i] for i in known),
                       tuple(cur[i] for i in known), sorted(known.index(i) for i in realiased),
                       sorted(known.index(i) for i in renamed), gone)
        if lazy:
            for table in (res.keys, res.names, res.alias_index):
                assert (not isinstance(table, name_index.LazyKeyIndex)
                        or table._entries is not None or fold)
            continue
        check_same(res, DictResolver.build(where, cur), targets(rng, where)[::3],
                   sources_of(rng, where))
        assert dict(before.by_key) == dict(DictResolver.build(before_paths,
                                                              before_aliases).by_key)
    check_same(res, DictResolver.build(where, cur), targets(rng, where), sources_of(rng, where))


def test_an_empty_resolver_finds_nothing() -> None:
    r = Resolver.build({}, {})
    assert r.resolve_wiki("Foo") is None and r.by_path("Foo") is None
    assert r.by_title("Foo") is None and dict(r.by_key) == {} and dict(r.id_path) == {}


def test_many_notes_sharing_a_file_name() -> None:
    """Past `SHORT` same-named notes the path lookups go through the key table instead."""
    folders = [f"{a}{b}/" for a in ("", "p/", "P/", "q/") for b in ("x", "y", "X", "z y")]
    paths = {k + 1: f"{f}{name}" for k, (f, name) in enumerate(
        (f, n) for f in ["", *folders] for n in ("index.md", "Index.MD", "other.md"))}
    paths = {i: p for i, p in paths.items() if not (i % 5 == 0 and p.endswith("other.md"))}
    assert len([p for p in paths.values() if p.lower().endswith("index.md")]) > links.SHORT
    queries = ["index", "INDEX.md", "x/index", "p/x/index", "P/X/Index", "z y/index", "/index",
               "other", "q/other", "nope/index"]
    sources = ["p/x/a.md", "P/x/b.md", "z y/c.md", "q/z y/d.md", "e.md"]
    check_same(Resolver.build(paths, {}), DictResolver.build(paths, {}), queries, sources)


@pytest.mark.parametrize("path", ["a/.md", ".md", "x.md.md", "dir.md/x", "Σ.MD", "ΣΑΣ/ΟΣ.md",
                                  "ﬁle/Straße.Md", "a b/ǅ x.md", "noext"])
def test_a_file_name_key_is_the_last_part_of_the_path_key(path: str) -> None:
    """What `_exact` relies on: a note's name key is the last component of its path key."""
    assert link_keys.name_key(path) == link_keys.title_of(path).casefold()
    assert link_keys.name_key(path) == link_keys.path_key(path).rsplit("/", 1)[-1]
