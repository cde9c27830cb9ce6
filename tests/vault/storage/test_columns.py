"""vault.storage.columns: packed strings, digests, edge arrays and the CSR graph read as the
tuples and dicts they replace; a snapshot's edges are the sorted resolved links."""

from __future__ import annotations

import hashlib
import random
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from vault.storage.columns import Digests, Edges, Graph, Strings, as_edges, hex_column
from vault.storage.index import Index
from vault.storage.linkgraph import hops_from, undirected
from vault.storage.snapshot import build_snapshot
from vault.storage.store import Store
from vault.storage.sync import sync


def _same_seq(col: Sequence[Any], plain: tuple[Any, ...]) -> None:
    n = len(plain)
    assert len(col) == n and tuple(col) == plain and col == plain and plain == col
    assert list(iter(col)) == list(plain)
    for i in range(-n, n):
        assert col[i] == plain[i]
    for lo, hi, step in ((0, n, 1), (1, n - 1, 1), (n // 3, n // 2, 1), (n, n, 1),
                         (-3, None, 1), (None, None, 2)):
        assert col[lo:hi:step] == plain[lo:hi:step]
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            col[bad]
    assert col != (*plain, plain[0] if n else None)


def test_strings_read_as_their_tuple() -> None:
    items = ("", "a.md", "é/ü ß.md", "日本語", "x" * 300, "\ud800 lone surrogate", "", "z")
    col = Strings(items)
    _same_seq(col, items)
    assert col[5] == "\ud800 lone surrogate" and isinstance(col[0], str)
    _same_seq(Strings(), ())


def test_strings_decode_runs_at_once_ascii_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    from vault.storage import columns

    monkeypatch.setattr(columns, "_BLOCK", 3)
    for items in (tuple(f"p{k}" for k in range(10)), ("a", "é", "", "b", "日本", "c", "d")):
        col = Strings(items)
        assert list(col) == list(items)
        assert all(col.run(lo, hi) == list(items[lo:hi])
                   for lo in range(len(items) + 1) for hi in range(lo, len(items) + 1))


def test_hex_digests_pack_and_anything_else_stays_strings() -> None:
    hexes = tuple(hashlib.sha256(bytes([i])).hexdigest() for i in range(20))
    packed = hex_column(hexes)
    assert isinstance(packed, Digests) and len(packed._raw) == 32 * 20
    _same_seq(packed, hexes)
    for odd in ("", "ABC", hexes[0].upper(), hexes[0][:-1] + "g", "short"):
        mixed = (*hexes[:5], odd, *hexes[5:])
        col = hex_column(mixed)
        assert isinstance(col, Strings)
        _same_seq(col, mixed)
    assert hex_column(()) == ()


def _pairs(seed: int, n: int, m: int) -> tuple[tuple[int, int], ...]:
    rng = random.Random(seed)
    return tuple(sorted({(rng.randrange(n), rng.randrange(n)) for _ in range(m)}))


@pytest.mark.parametrize("seed", range(4))
def test_edges_read_as_the_sorted_pairs_and_give_each_source_its_targets(seed: int) -> None:
    plain = _pairs(seed, 30, 80)
    edges = Edges.of(plain)
    _same_seq(edges, plain)
    assert as_edges(edges) is edges and as_edges(plain) == edges
    assert edges == Edges(edges.src.copy(), edges.dst.copy())
    assert edges.src.dtype.name == edges.dst.dtype.name == "int32"
    for p in range(-1, 32):
        lo, hi = bisect_left(plain, (p,)), bisect_left(plain, (p + 1,))
        assert edges.span(p) == (lo, hi)
        assert edges.out(p) == [b for _, b in plain[lo:hi]]
        assert bisect_left(edges, (p,)) == lo  # bisect over the sequence still works
    with pytest.raises(ValueError):
        Edges([1, 2], [3])


@pytest.mark.parametrize("seed", range(4))
def test_graph_is_the_undirected_dict_of_lists(seed: int) -> None:
    plain = (*_pairs(seed, 25, 60), (3, 3))  # a self loop is dropped
    ids = tuple(sorted(random.Random(seed).sample(range(1, 10_000), 25)))
    want = undirected([(ids[a], ids[b]) for a, b in plain])
    for edges in (plain, Edges.of(sorted(plain))):
        graph = Graph(ids, edges)
        assert dict(graph) == want and list(graph) == list(want) and len(graph) == len(want)
        assert all(graph[k] == v and type(graph[k]) is list for k, v in want.items())
        loners = [i for i in ids if i not in want]
        assert all(graph.get(i) is None and i not in graph for i in (*loners, 0, 10**30))
        assert "x" not in graph  # type: ignore[comparison-overlap]
        for seed_id in ids[:5]:
            assert hops_from(seed_id, graph, 3) == hops_from(seed_id, want, 3)
    assert dict(Graph((), ())) == {}


def test_a_snapshot_keeps_its_edges_as_arrays_equal_to_the_resolved_links(
        tmp_path: Path) -> None:
    rng = random.Random(5)
    (tmp_path / "v").mkdir()
    store = Store(tmp_path / "v")
    names = [f"n{k}" for k in range(40)]
    for k, name in enumerate(names):
        links = " ".join(f"[[{rng.choice([*names, 'ghost'])}]]"
                         for _ in range(rng.randint(0, 5)))
        store.write_text(f"{'ab'[k % 2]}/{name}.md", f"body {k} {links} [[{name}]]\n")
    index = Index.open(tmp_path / "index.sqlite")
    sync(store, index, workers=1)
    snap = build_snapshot(index)
    c = snap.corpus
    assert isinstance(c.edges, Edges) and len(c.edges) > 40
    want = sorted({(c.position(src), c.position(dst)) for src, links in snap.links.every()
                   for _, dst in links if dst is not None and dst != src})
    assert c.edges == tuple(want)
    assert dict(c.graph) == undirected([(c.ids[a], c.ids[b]) for a, b in want])


def test_edge_sources_of_a_target_and_iteration_in_blocks(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from vault.storage import columns

    monkeypatch.setattr(columns, "_BLOCK", 7)
    plain = _pairs(9, 20, 90)
    edges = Edges.of(plain)
    assert list(edges) == list(plain)
    for t in range(-1, 21):
        assert edges.sources_of(t) == [a for a, b in plain if b == t]


@pytest.mark.parametrize("fold", [False, True])
def test_an_overlay_column_shares_a_packed_base_and_folds_into_one(
        fold: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault.notes import folding
    from vault.storage.overlay import Column

    if fold:
        monkeypatch.setattr(folding, "MIN_COMPACT", 2)
    hexes = [hashlib.sha256(bytes([i])).hexdigest() for i in range(12)]
    for base, new in ((Strings(f"t{i}" for i in range(12)), "changed"),
                      (hex_column(hexes), hashlib.sha256(b"x").hexdigest())):
        plain = list(base)
        col = Column.of(base, {3: new, 0: new}, [new, new])
        plain[3] = plain[0] = new
        plain += [new, new]
        _same_seq(col, tuple(plain))
        assert isinstance(col, type(base) if fold else Column)  # folded: packed again
        assert Column.of(base, {}, []) is base


@pytest.mark.parametrize("plain", [(), ((0, 0),), ((0, 0), (2, 2)), ((1, 2), (2, 1), (1, 2))])
def test_graph_of_no_links_self_loops_or_repeats(plain: tuple[tuple[int, int], ...]) -> None:
    """Isolated notes and self loops have no neighbours and no key; a link given twice or
    both ways is one."""
    ids = (4, 8, 15)
    graph = Graph(ids, plain)
    want = undirected([(ids[a], ids[b]) for a, b in plain])
    assert dict(graph) == want and len(graph) == len(want) and 4 not in graph
    assert Graph((), ()) == {} and len(Graph((), ())) == 0
