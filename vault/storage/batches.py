"""Many keys in one SQL `IN (...)` list, cut into batches: SQLite caps the host parameters of
one statement (SQLITE_MAX_VARIABLE_NUMBER: 999 before 3.32), so a query over thousands of ids
or chunk keys runs once per batch of `BATCH`, over the keys sorted and without repeats (the
same statements in the same order for the same keys, whatever order they came in)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

K = TypeVar("K", int, str)

BATCH = 500  # keys per statement, well under the oldest cap


def batches(keys: Iterable[K]) -> Iterator[tuple[str, list[K]]]:
    """(`?,?,...` for the batch, its keys) for each batch of the sorted distinct `keys`."""
    unique = sorted(set(keys))
    for start in range(0, len(unique), BATCH):
        part = unique[start : start + BATCH]
        yield ",".join("?" * len(part)), part
