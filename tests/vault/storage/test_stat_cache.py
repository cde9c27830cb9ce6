"""vault.storage.stat_cache: the columnar stat rows read as the dict of named tuples they
replace, and patching (with and without a fold into new columns) equals a fresh load."""

from __future__ import annotations

import hashlib
import random

import pytest

from vault.notes import folding
from vault.storage.folders import FolderDigest, expected_digests
from vault.storage.stat_cache import StatCache, StatRow


def _row(i: int, path: str, size: int = 0, odd: bool = False) -> StatRow:
    h = "not-hex" if odd else hashlib.sha256(path.encode() + bytes([size % 256])).hexdigest()
    return StatRow(i, path, size or 10 + i, 1_000 + 7 * i, 50_000 + i, h, 3_000 + 5 * i)


PATHS = ["a.md", "b/c.md", "b.md", "b/a.md", "b/c/d.md", "ba/x.md", "é/ü.md", "b-c/z.md",
         "b/c/a.md", "zz.md"]


def _plain(rows: list[StatRow]) -> tuple[dict[str, StatRow], dict[str, FolderDigest]]:
    by_path = {r.path: r for r in rows}
    return by_path, expected_digests((r.path, r.size, r.mtime_ns, r.inode, r.ctime_ns)
                                      for r in rows)


@pytest.mark.parametrize(("odd", "nul"), [(False, False), (True, False), (False, True)])
def test_columns_read_as_the_dict_of_rows_and_the_folder_digests(odd: bool, nul: bool) -> None:
    paths = [*PATHS, "b\0/x.md", "b/\0.md"] if nul else PATHS  # NUL: never indexed; still sorted
    rows = [_row(i, p, odd=odd and i == 3) for i, p in enumerate(paths, 1)]
    cache = StatCache(7, reversed(rows))
    by_path, folders = _plain(rows)
    assert dict(cache.rows) == by_path and len(cache.rows) == len(rows)
    assert cache.folders == folders
    assert list(cache.folders) == sorted(folders)
    assert cache.folders["b/c"][1] == ("b/c/a.md", "b/c/d.md")
    assert cache.folders["b"][1][-1] == "b/c.md" and len(cache.folders["b"][1]) == 2 + nul
    assert cache.rows["b/c/d.md"] == by_path["b/c/d.md"]
    assert "b/c/x.md" not in cache.rows and cache.rows.get("nope.md") is None
    assert cache.rows.get(3) is None  # type: ignore[call-overload]


@pytest.mark.parametrize("fold_min", [1024, 2])
def test_patches_equal_a_fresh_load(fold_min: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folding, "MIN_COMPACT", fold_min)
    rows = {p: _row(i, p) for i, p in enumerate(PATHS, 1)}
    cache = StatCache(1, rows.values())
    steps: list[tuple[list[str], list[StatRow]]] = [
        ([], [_row(1, "a.md", size=99)]),  # changed stat
        (["b/c/d.md", "b/c/a.md"], []),  # a whole folder gone
        (["zz.md"], [_row(10, "new/zz.md")]),  # renamed into a new folder
        ([], [_row(11, "b/b.md"), _row(12, "q.md")]),  # added
        (["missing.md"], [_row(12, "q.md", size=5)]),  # gone path never indexed; changed again
        (["b/b.md"], [_row(11, "b/c/d.md")]),
    ]
    for gone, current in steps:
        for p in gone:
            rows.pop(p, None)
        rows.update((r.path, r) for r in current)
        cache.patch(gone, current)
        by_path, folders = _plain(list(rows.values()))
        assert dict(cache.rows) == by_path and len(cache.rows) == len(by_path)
        assert cache.folders == folders
        assert all(p in cache.rows for p in by_path)
        assert not any(p in cache.rows for p in {*PATHS, "missing.md"} - by_path.keys())
    assert (cache._extra == {}) == (fold_min == 2)  # a small threshold folded the layer in


@pytest.mark.parametrize("seed", range(8))
def test_generated_trees_give_the_listing_digests(seed: int) -> None:
    """Folders whose names prefix one another ("a", "a b", "a-b", "a/b", "a\\0"), stats at
    the int64 limits: each folder's row range and digest equal `expected_digests`."""
    rng = random.Random(seed)
    parts = ["a", "a b", "a-b", "b", "é", "a.md", "z", "a\0"] if seed % 2 else ["a", "a b",
                                                                              "a-b", "b", "é"]
    paths = sorted({"/".join(rng.choice(parts) for _ in range(rng.randrange(0, 4)))
                    + f"{'/' if rng.random() < 0.9 else ''}n{rng.randrange(30)}.md"
                    for _ in range(rng.randrange(1, 120))})
    paths = sorted({p.lstrip("/") for p in paths})
    edge = [-(1 << 63), (1 << 63) - 1, 0, -1]
    rows = [StatRow(i, p, rng.choice([*edge, i]), rng.choice([*edge, 7 * i]),
                    rng.choice([*edge, i * 13]), hashlib.sha256(p.encode()).hexdigest(),
                    rng.choice([*edge, i * 17]))
            for i, p in enumerate(rng.sample(paths, len(paths)), 1)]
    cache = StatCache(1, rows)
    by_path, folders = _plain(rows)
    assert cache.folders == folders
    assert list(cache.folders) == sorted(folders)
    assert dict(cache.rows) == by_path


@pytest.mark.parametrize("seed", range(8))
def test_a_path_is_found_by_its_folder_rows_and_nothing_else_is(seed: int) -> None:
    """`find` bisects a folder's rows by name: every indexed path is found at its own row,
    and a near miss (the same name in another folder, a prefix, a longer name, another
    case) is not, whatever the names' order quirks (sub-folders, '-', ' ', accents)."""
    rng = random.Random(seed)
    parts = ["a", "b", "b-c", "b c", "ba", "é", "B", "a.b", "z"]
    paths = sorted({"/".join(rng.choice(parts) for _ in range(rng.randint(0, 3)))
                    + ("/" if rng.random() < 0.8 else "") + rng.choice(parts) + ".md"
                    for _ in range(rng.randint(1, 60))})
    paths = [p.lstrip("/") for p in paths]
    rows = [_row(i, p) for i, p in enumerate(dict.fromkeys(paths), 1)]
    cache = StatCache(3, rng.sample(rows, len(rows)))
    for r in rows:
        assert r.path in cache.rows and cache.rows[r.path] == r
    misses = {f"x/{r.path}" for r in rows} | {r.path[:-3] + "x.md" for r in rows} | {
        r.path.upper() for r in rows} | {r.path[:-4] + ".md" for r in rows if len(r.path) > 4}
    for m in sorted(misses - {r.path for r in rows}):
        assert m not in cache.rows
