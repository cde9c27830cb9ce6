"""storage/batches.py: a query over many keys, one statement per batch of at most `BATCH`,
asked of a real SQLite database with generated keys (repeats, any order, more than a batch)
and compared with the obvious answer; and the embedding rows read and deleted through it."""

from __future__ import annotations

import sqlite3

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.storage.batches import BATCH, batches
from vault.storage.embeddings import (
    MIGRATIONS,
    delete_embeddings,
    insert_embeddings,
    select_embeddings,
)

KEYS = st.lists(st.integers(0, 3 * BATCH), max_size=3 * BATCH)


@settings(max_examples=40, deadline=None)
@given(stored=KEYS, asked=KEYS)
def test_batched_query_is_the_plain_intersection(stored: list[int], asked: list[int]) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT OR IGNORE INTO t VALUES (?)", [(k,) for k in stored])
    seen: list[int] = []
    parts = list(batches(asked))
    for marks, part in parts:
        assert 0 < len(part) <= BATCH and marks.count("?") == len(part)
        seen.extend(r[0] for r in conn.execute(f"SELECT id FROM t WHERE id IN ({marks})", part))
    assert [k for _, part in parts for k in part] == sorted(set(asked))  # each once, in order
    assert sorted(seen) == sorted(set(stored) & set(asked))
    assert list(batches(reversed(asked))) == parts  # the same statements whatever the order


@settings(max_examples=15, deadline=None)
@given(stored=KEYS, asked=KEYS)
def test_embedding_rows_read_and_deleted_in_batches(stored: list[int], asked: list[int]) -> None:
    conn = sqlite3.connect(":memory:")
    conn.executescript(MIGRATIONS[0])
    insert_embeddings(conn, "m", {f"k{k}": np.full(2, k, np.float32) for k in stored})
    keys = [f"k{k}" for k in asked]
    got = select_embeddings(conn, "m", keys)
    assert sorted(got) == sorted({f"k{k}" for k in set(stored) & set(asked)})
    assert all(float(v[0]) == int(k[1:]) for k, v in got.items())
    assert delete_embeddings(conn, keys) == len(got)
    assert select_embeddings(conn, "m", keys) == {}
