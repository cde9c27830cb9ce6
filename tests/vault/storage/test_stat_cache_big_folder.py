"""A sync of a changed note in a folder of 10^5 asks the stat cache about each of the folder's
notes: every path's row, asked again and again, costs a small multiple of reading the folder's
paths once (before: a Python-keyed bisection each, 6 s of CPU at 10^5 in one folder)."""

from __future__ import annotations

import resource

import pytest

from vault.storage.stat_cache import StatCache

# asking about every path twice may cost this many times reading the folder's paths once
# (16 here with the folder's table); a bisection per ask cost about 85 times
MARGIN = 40


def cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def rows(n: int, folder: str) -> list[tuple[int, str, int, int, int, str, int]]:
    return [(i + 1, f"{folder}n{i:07d}.md", 1, 2, i, "h", 3) for i in range(n)]


@pytest.mark.parametrize("folder", ["", "big/"])
def test_every_path_of_a_big_folder_is_found_in_linear_time(folder: str) -> None:
    n = 100_000
    given = rows(n, folder)
    cache = StatCache(0, given)
    paths = [r[1] for r in given]
    start = cpu()
    for _ in range(5):
        read = list(cache.folders[folder.rstrip("/")][1])  # reading the folder's paths once
    once = max((cpu() - start) / 5, 1e-3)
    assert read == paths
    start = cpu()
    found = [p in cache.rows for p in paths] + [cache.rows[p].id for p in paths[::-1]][:1]
    asked = cpu() - start
    assert all(found[:n]) and found[n] == n
    assert f"{folder}absent.md" not in cache.rows
    assert asked < once * MARGIN, (asked, once)


def test_a_few_asks_in_a_big_folder_answer_alike() -> None:
    given = rows(5000, "f/") + rows(3, "g/")
    cache = StatCache(0, given)
    for r in given[::997] + given[-3:]:  # few asks: bisection
        assert cache.rows[r[1]].id == r[0] and cache.rows[r[1]].inode == r[4]
    for r in given:  # many: the folder's table
        assert cache.rows[r[1]].id == r[0]
    assert "f/n9999999.md" not in cache.rows and "h/x.md" not in cache.rows
