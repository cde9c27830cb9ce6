"""retrieval/derived.py: every structure brought up to a corpus through a delta that removes,
edits, renames and adds notes equals a fresh build of that corpus, in every score and lookup
(generated histories over many seeds; corpora made by hand: tests/.../corpus_histories.py)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vault.notes.text import tokenize
from vault.retrieval.csr import Csr
from vault.retrieval.derived import Derived, build_derived, dropped, relink, update_derived
from vault.retrieval.names import OverlaidNames, PackedNames
from vault.retrieval.signals.bm25 import Bm25Index
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.graph import adjacency
from vault.shift import Shift
from vault.storage.columns import Edges
from vault.storage.corpus import Corpus, CorpusDelta

from .corpus_histories import history, queries


def assert_same(d: Derived, fresh: Derived, qs: list[str]) -> None:
    """Every score, count and lookup of `d` equals `fresh`'s, bit for bit."""
    assert d.n == fresh.n and d.generation == fresh.generation
    assert d.bm25.n_docs == fresh.bm25.n_docs == d.conj.n_docs == fresh.n
    assert d.bm25.total == fresh.bm25.total
    assert np.array_equal(d.bm25.lengths, fresh.bm25.lengths)
    for name in ("m", "s1", "s2"):  # per note: the conjunctive norms' exact sums
        assert np.array_equal(getattr(d.conj, name), getattr(fresh.conj, name)), name
    for q in qs:
        toks = tokenize(q)
        assert np.array_equal(d.bm25.score(q), fresh.bm25.score(q)), q
        assert np.array_equal(d.conj.score(q), fresh.conj.score(q)), q
        assert d.bm25.frequency(toks) == fresh.bm25.frequency(toks), q
        assert d.names.named_in(q) == fresh.names.named_in(q), q
    for name in sorted(set(d.names.names) | set(fresh.names.names)):
        assert d.names.positions(name) == fresh.names.positions(name), name
    assert_adjacency(d.links, fresh.links)
    assert np.array_equal(d.walk.inv_deg, fresh.walk.inv_deg)
    assert np.array_equal(d.walk.dangling, fresh.walk.dangling)


@pytest.mark.parametrize("seed", range(60))
def test_every_step_of_a_history_with_removals_equals_a_fresh_build(seed: int) -> None:
    rng = random.Random(seed)
    gens = history(seed, rng.randint(1, 7), rng.randint(0, 14))
    qs = queries(rng, gens)
    d = build_derived(gens[0])
    for c in gens[1:]:
        got = update_derived(d, c)
        assert got is not None  # updated in place, never rebuilt here
        assert_same(got, build_derived(c), qs)
        d = got


@pytest.mark.parametrize("seed", range(40))
def test_a_consumer_several_generations_behind_catches_up_at_once(seed: int) -> None:
    """The composed removal of a chain (Since.shift) from any earlier generation."""
    rng = random.Random(1000 + seed)
    gens = history(1000 + seed, rng.randint(2, 7), rng.randint(1, 14))
    qs = queries(rng, gens)
    last = gens[-1]
    fresh = build_derived(last)
    for g in range(len(gens) - 1):
        got = update_derived(build_derived(gens[g]), last)
        assert got is not None
        assert_same(got, fresh, qs)
    # and from one already updated in place a few steps, so shifts compose on shifts
    d = build_derived(gens[0])
    for c in gens[1 : len(gens) // 2 + 1]:
        d = update_derived(d, c) or build_derived(c)
    got = update_derived(d, last)
    assert got is not None
    assert_same(got, fresh, qs)


def _removal(c: Corpus, removed: list[int], generation: int) -> Corpus:
    """`c` without the notes at `removed`, through a delta: the kept rows unchanged, links
    to a removed note gone with it."""
    shift = Shift(tuple(removed), len(c))
    keep = [p for p in range(len(c)) if shift.keep[p]]
    to = shift.forward(range(len(c))).tolist()
    pairs = [(to[a], to[b]) for a, b in c.edges if to[a] >= 0 and to[b] >= 0]
    edges = Edges.of(pairs) if isinstance(c.edges, Edges) else tuple(pairs)
    return replace(c, generation=generation, ids=[c.ids[p] for p in keep],
                   paths=[c.paths[p] for p in keep], titles=[c.titles[p] for p in keep],
                   aliases=[c.aliases[p] for p in keep], bodies=[c.bodies[p] for p in keep],
                   frontmatter=[c.frontmatter[p] for p in keep],
                   content_hashes=[c.content_hashes[p] for p in keep], edges=edges,
                   archived=tuple(c.archived[p] for p in keep),
                   delta=CorpusDelta(c.generation, len(c), (), (), c.delta, tuple(removed)))


def test_a_term_only_the_removed_note_held_is_gone_and_idf_moves() -> None:
    gens = history(7, 0, 6)
    base = gens[0]
    d = build_derived(base)
    solo = f"solo{base.ids[2]}"
    assert d.bm25.frequency([solo]) == [1]
    after = _removal(base, [2], 1)
    got = update_derived(d, after)
    assert got is not None
    assert got.bm25.frequency([solo]) == [0]
    assert not got.bm25.score(solo).any() and not got.conj.score(solo).any()
    assert got.bm25.delta_docs == got.conj.delta_docs == 1  # counted toward compaction
    assert_same(got, build_derived(after), ["auth billing " + solo, "the queue"])
    # every note removed: empty structures, then a new note
    empty = _removal(after, list(range(len(after))), 2)
    gone = update_derived(got, empty)
    assert gone is not None and gone.n == 0 and gone.links.shape == (0, 0)
    again = replace(base, generation=3, ids=[99], paths=["n99.md"], titles=[base.titles[2]],
                    aliases=[base.aliases[2]], bodies=[base.bodies[2]], frontmatter=[{}],
                    content_hashes=["h99"], edges=(), archived=(False,),
                    delta=CorpusDelta(2, 0, (), (), empty.delta))
    back = update_derived(gone, again)  # the removed text again, as a new note
    assert back is not None and back.bm25.frequency([solo]) == [1]
    assert_same(back, build_derived(again), ["auth billing " + solo, base.titles[2]])


def test_removals_count_toward_compaction(monkeypatch: pytest.MonkeyPatch) -> None:
    from vault.retrieval import derived
    from vault.retrieval.signals import postings

    gens = history(3, 0, 12)
    d = build_derived(gens[0])
    monkeypatch.setattr(postings, "COMPACT_MIN", 2)
    monkeypatch.setattr(derived, "needs_compaction", postings.needs_compaction)
    one = update_derived(d, _removal(gens[0], [0, 5], 1))
    assert one is not None  # two removed: not past 2
    assert update_derived(one, _removal(one.corpus, [3], 2)) is None  # three: rebuild


@pytest.mark.parametrize("seed", range(12))
def test_a_store_loaded_for_the_base_follows_a_removal_exactly(
        seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """from_base's path: the base's lexical indexes loaded from the saved store (mapped
    arrays), then updated through removals; the loaded base is left as it was."""
    rng = random.Random(2000 + seed)
    gens = history(2000 + seed, rng.randint(1, 5), rng.randint(2, 14))
    gens[0] = replace(gens[0], stamp=f"g0-{seed}")  # names and adjacency kept under it too
    folder = str(tmp_path)
    build_derived(gens[0], folder)  # saves the store
    with monkeypatch.context() as m:  # the second build loads it: no index is built
        m.setattr(Bm25Index, "build", None)
        m.setattr(ConjunctiveIndex, "build", None)
        base = build_derived(gens[0], folder)
    assert isinstance(base.names.names, PackedNames)  # read back from the stamped arrays
    held = {"bm25": base.bm25, "conj": base.conj}
    before = {(s, k): np.array(getattr(x, k)) for s, x in held.items()
              for k in ("df", "lengths", "m", "s1", "s2") if hasattr(x, k)}
    stale = (base.bm25.postings.stale.copy(), base.conj.postings.stale.copy())
    qs = queries(rng, gens)
    d = base
    for c in gens[1:]:
        got = update_derived(d, c)
        assert got is not None
        assert_same(got, build_derived(c), qs)
        d = got
    for (s, k), v in before.items():
        assert np.array_equal(getattr(held[s], k), v), (s, k)
    assert np.array_equal(base.bm25.postings.stale, stale[0])
    assert np.array_equal(base.conj.postings.stale, stale[1])
    assert base.bm25.postings.shift is None and base.names.shift is None


@pytest.mark.parametrize("seed", range(40))
def test_dropped_and_relinked_adjacency_equals_a_fresh_one(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 25)
    old = sorted({(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3 * n))}
                 if n else set())
    old = [(a, b) for a, b in old if a != b]
    shift = Shift(tuple(sorted(rng.sample(range(n), rng.randint(0, n)))), n)
    kept = [p for p in range(n) if p not in set(shift.removed)]
    at = {p: k for k, p in enumerate(kept)}
    moved = [(at[a], at[b]) for a, b in old if a in at and b in at]
    assert_adjacency(dropped(adjacency(n, old), shift), adjacency(shift.kept, moved))
    # then some sources relink and nodes are added
    m = shift.kept + rng.randint(0, 3)
    relinked = sorted(rng.sample(range(m), rng.randint(0, m)))
    new = {e for e in moved if e[0] not in set(relinked)}
    for p in relinked:
        new |= {(p, rng.randrange(m)) for _ in range(rng.randint(0, 3)) if m}
    edges = sorted((a, b) for a, b in new if a != b)
    got = (relink(adjacency(n, old), Edges.of(old), Edges.of(edges), relinked, m, shift)
           if seed % 2 else relink(adjacency(n, old), old, edges, relinked, m, shift))
    assert_adjacency(got, adjacency(m, edges))


def assert_adjacency(a: Csr, b: Csr) -> None:
    for part in ("indptr", "indices", "data"):
        x, y = getattr(a, part), getattr(b, part)
        assert x.dtype == y.dtype and np.array_equal(x, y), part
    assert a.shape == b.shape


@pytest.mark.parametrize("seed", range(6))
def test_an_update_over_stored_names_copies_none_of_them(seed: int, tmp_path: Path) -> None:
    """from_base's path in every process after an added or renamed note: the names read back
    from their store stay the base of what the update changes (on main each update copied
    every name into a dict: O(names) lookups per process, ~1 s at 10^6 notes)."""
    rng = random.Random(3000 + seed)
    gens = history(3000 + seed, rng.randint(1, 5), rng.randint(2, 14))
    gens[0] = replace(gens[0], stamp=f"n0-{seed}")
    build_derived(gens[0], str(tmp_path))
    base = build_derived(gens[0], str(tmp_path))
    stored = base.names.names
    assert isinstance(stored, PackedNames)
    d, qs = base, queries(rng, gens)
    for c in gens[1:]:
        got = update_derived(d, c)
        assert got is not None
        names = got.names.names
        assert names is stored or (isinstance(names, OverlaidNames) and names.base is stored)
        assert_same(got, build_derived(c), qs)
        d = got
    assert isinstance(d.names.names, OverlaidNames)  # the histories rename or add notes
