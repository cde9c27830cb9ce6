"""Csr (vault/retrieval/csr.py) against scipy.sparse, bit for bit, and a search without scipy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from vault.learning.edges import WeightedEdges
from vault.retrieval.csr import Csr, adjacency_of, index_dtype
from vault.retrieval.signals.graph import Walk, _linked_pairs, adjacency, pagerank

ROOT = Path(__file__).resolve().parents[3]


def scipy_adjacency(n: int, edges: list[tuple[int, int]]) -> sparse.csr_matrix:
    """signals/graph.adjacency as it was written with scipy (main db46d84)."""
    la, lb = _linked_pairs(edges)
    lw = np.ones(la.shape[0], dtype=np.float64)
    rows, cols = np.concatenate([la, lb]), np.concatenate([lb, la])
    m = sparse.coo_matrix((np.concatenate([lw, lw]), (rows, cols)), shape=(n, n),
                          dtype=np.float64).tocsr()
    m.sum_duplicates()
    return m


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def random_graph(rng: np.random.Generator, n: int, m: int) -> list[tuple[int, int]]:
    hubs = rng.integers(0, max(n // 20, 1), m // 4)  # a few hubs with many links
    a = np.concatenate([rng.integers(0, n, m - m // 4), hubs])
    b = rng.integers(0, n, m)
    return list(zip(a.tolist(), b.tolist(), strict=True))


@pytest.mark.parametrize("seed", range(6))
def test_adjacency_is_scipys_byte_for_byte(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    edges = random_graph(rng, n, int(rng.integers(0, 4 * n)))
    got, want = adjacency(n, edges), scipy_adjacency(n, edges)
    assert got.shape == want.shape and got.nnz == want.nnz
    for x, y in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        assert same(np.asarray(x), np.asarray(y))


def test_empty_and_edgeless() -> None:
    for n in (0, 1, 5):
        got, want = adjacency(n, []), scipy_adjacency(n, [])
        assert got.nnz == 0 and same(got.indptr, want.indptr) and got.shape == (n, n)
        assert same(got @ np.ones(n), want @ np.ones(n))
    assert adjacency(3, [(1, 1)]).nnz == 0  # a self-link is not an edge


@pytest.mark.parametrize("seed", range(6))
def test_row_gathers_and_products_equal_scipys(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 500))
    coo = sparse.random(n, n, density=min(1.0, 8 / n), random_state=seed, format="coo")
    m = coo.tocsr()
    m.sum_duplicates()
    m.data = rng.standard_normal(m.nnz) * 10.0 ** rng.integers(-8, 8, m.nnz)  # wide range
    c = Csr.from_scipy(m)
    for _ in range(20):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)
        assert same(c @ x, m @ x)
        rows = rng.integers(0, n, int(rng.integers(0, 2 * n)))  # repeats, any order
        sub, ref = c[rows], m[rows]
        assert sub.shape == ref.shape and sub.nnz == ref.nnz
        assert np.array_equal(sub.indptr, ref.indptr)
        assert same(np.asarray(sub.indices, dtype=np.int64), ref.indices.astype(np.int64))
        assert same(sub.data, ref.data)
        assert np.array_equal(c[rows.tolist()].indices, sub.indices)
    assert same(c.toarray(), m.toarray())


def test_pagerank_iterates_to_the_bytes_of_scipys_walk() -> None:
    """Fifty products with the walk's own vectors: any difference in the sums would grow."""
    rng = np.random.default_rng(9)
    n = 2000
    edges = random_graph(rng, n, 7000)
    walk = Walk.build(adjacency(n, edges))
    ref = scipy_adjacency(n, edges)
    seeds = np.zeros(n)
    seeds[rng.integers(0, n, 12)] = rng.random(12)
    got, iters = pagerank(walk, seeds, push_above=0)
    s = seeds / seeds.sum()
    r, mine, restart = s.copy(), s.copy(), (1.0 - 0.85) * s
    for _ in range(iters):  # the same recurrence over scipy's matrix and over Csr's
        r = 0.85 * (ref @ (walk.inv_deg * r)) + (0.85 * r[walk.dangling].sum()) * s + restart
        mine = (0.85 * (walk.adj @ (walk.inv_deg * mine))
                + (0.85 * mine[walk.dangling].sum()) * s + restart)
    assert iters > 20 and same(mine, r)
    # pagerank sums exactly on a 2^-60 grid (graph.py): rounding apart, the same walk
    assert np.allclose(got, r, rtol=1e-12, atol=1e-17)


def test_sum_with_learned_edges_goes_through_scipy_and_stays_canonical() -> None:
    links = adjacency(4, [(0, 1), (2, 3)])
    extra = adjacency(4, (), WeightedEdges.of([(1, 2, 0.5), (0, 1, 1.0)]), beta=0.5)
    total = links + extra
    want = (scipy_adjacency(4, [(0, 1), (2, 3)]) + extra.to_scipy()).toarray()
    assert same(total.toarray(), want)
    assert total.toarray()[0, 1] == 1.5 and total.toarray()[2, 1] == 0.25


def scipy_plus(m: Csr, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray,
               n: int) -> sparse.csr_matrix:
    """derived.relink's sum as it was written with scipy (main 983a1d10)."""
    grown = m.to_scipy().copy()
    grown.resize((n, n))
    out = (grown + sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))).tocsr()
    out.eliminate_zeros()
    out.sort_indices()
    return out


@pytest.mark.parametrize("seed", range(12))
def test_plus_is_scipys_sum_byte_for_byte(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    k = int(rng.integers(0, 300))
    m = adjacency(k, random_graph(rng, k, int(rng.integers(0, 4 * k + 1))))
    n = k + int(rng.integers(0, 4))
    if not n:
        return
    flat = rng.choice(n * n, size=int(rng.integers(0, min(n * n, 60) + 1)), replace=False)
    rows, cols = flat // n, flat % n
    dense = m.toarray()
    # +1 where absent, -1 where present (relink's case: the entry cancels), else 0.5 or -2
    old = np.array([dense[r, c] if r < k and c < k else 0.0
                    for r, c in zip(rows.tolist(), cols.tolist(), strict=True)])
    vals = np.where(old == 0, 1.0, np.where(rng.random(flat.shape[0]) < 0.7, -old, 0.5))
    vals[::7] = -2.0
    got, want = m.plus(rows, cols, vals, n), scipy_plus(m, rows, cols, vals, n)
    assert got.shape == want.shape == (n, n) and got.nnz == want.nnz
    for x, y in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        assert same(np.asarray(x), np.asarray(y))
    shuffled = Csr(m.indptr, m.indices[::-1].copy(), m.data, m.shape)  # not canonical
    if m.nnz > 1 and not np.array_equal(shuffled.indices, m.indices):
        assert same(shuffled.plus(rows, cols, vals, n).toarray(),
                    scipy_plus(shuffled, rows, cols, vals, n).toarray())


def test_misuse_is_refused() -> None:
    c = adjacency(3, [(0, 1)])
    with pytest.raises(TypeError):
        c[0, 1]  # type: ignore[index]
    with pytest.raises(IndexError):
        c[[3]]
    with pytest.raises(ValueError):
        c @ np.ones(4)
    assert same(c[[-1]].indices, c[[2]].indices)
    assert index_dtype(10, 10) is np.int32 and index_dtype(2**31, 0) is np.int64
    assert adjacency_of(2, np.array([0, 1]), np.array([1, 0])).toarray().tolist() == [
        [0.0, 1.0], [1.0, 0.0]]


def scipy_modules(tmp_path: Path, env: dict[str, str], query: str) -> list[str]:
    """The scipy modules one `rmh search QUERY` process imported (its stdout holds hits)."""
    code = ("import sys\nfrom harness.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'), "
            "file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, "--vault", str(tmp_path), "search",
                        query, "--no-dense", "--json"], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert '"hits"' in r.stdout, r.stderr
    return r.stderr.strip().splitlines()[-1].strip("[]").replace("'", "").split(", ") if (
        r.stderr.strip().splitlines()[-1] != "[]") else []


def test_a_search_process_never_imports_scipy(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"N{i}.md").write_text(f"Note {i} about billing. [[N{(i + 1) % 6}]]\n",
                                           encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    init = subprocess.run([sys.executable, "-m", "harness", "--vault", str(tmp_path), "init",
                           "--no-dense"], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert init.returncode == 0, init.stderr
    assert scipy_modules(tmp_path, env, "billing") == []
    # a note added and one relinked: each later process brings the structures saved for the
    # base up to date (derived.relink, Csr.plus); on main that sum imported scipy.sparse
    (tmp_path / "N6.md").write_text("Note 6 about the cache. [[N0]] [[N3]]\n", encoding="utf-8")
    with open(tmp_path / "N2.md", "a", encoding="utf-8") as fh:
        fh.write("Now also [[N5]].\n")
    for _ in range(2):
        assert scipy_modules(tmp_path, env, "cache") == []
