"""Embedding caches: the seam (`EmbeddingCache`, keyed by `embedding_key`; `MemoryEmbeddingCache`
in process), the SQLite rows every cache file shares, and the user-level cache.

A vault's index (VAULT/.rmh/index.sqlite) and the shared cache (by default
$XDG_CACHE_HOME/rmh/embeddings.sqlite; the harness config names it) hold the same table

    embeddings(model, key, dim, vec)    PRIMARY KEY (model, key)

with `model` the encoder's fingerprint, `key` the sha256 of the chunk text and `vec` the
float32 bytes. Because a vector is a function of its text alone (vault/retrieval/encoders.py),
a row written by one vault is exactly what any other vault would compute: `TieredEmbeddingCache`
reads the vault's own cache first, then the shared file, copies what the shared file had into
the vault's cache, and writes new vectors to both. A second vault holding the same text embeds
nothing.

The shared file is a convenience, never a dependency: `SharedEmbeddingCache` opens a
connection per operation (WAL, busy timeout, as the index), and the first error it meets
(unwritable folder, a file that is not a database, a newer schema, a lock held too long) is
reported once through `on_error` and turns it off for the rest of its life; indexing goes on
with the vault's own cache.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .batches import batches
from .migrations import enter_wal, migrate

BUSY_TIMEOUT_MS = 5000

# The shared file's schema: the index's migration 2, alone ("IF NOT EXISTS": two processes
# creating the file at once both run it; the second finds the table made).
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS embeddings (
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vec BLOB NOT NULL,
        PRIMARY KEY (model, key)
    );
    """,
)

F32 = npt.NDArray[np.float32]


class EmbeddingCache(Protocol):
    """Persistent float32 vectors keyed by (model fingerprint, sha256 of the text)."""

    def get_embeddings(self, model_fp: str, keys: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_embeddings(self, model_fp: str, items: Mapping[str, np.ndarray]) -> None: ...


class MemoryEmbeddingCache:
    """An in-process `EmbeddingCache` (tests, benchmarks without a vault)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], np.ndarray] = {}

    def get_embeddings(self, model_fp: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return {k: self._data[(model_fp, k)] for k in keys if (model_fp, k) in self._data}

    def put_embeddings(self, model_fp: str, items: Mapping[str, np.ndarray]) -> None:
        for key, vec in items.items():
            self._data[(model_fp, key)] = np.asarray(vec, dtype=np.float32)

    def __len__(self) -> int:
        return len(self._data)


def embedding_key(text: str) -> str:
    """The cache key of a chunk: sha256 hex of its UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def select_embeddings(
    conn: sqlite3.Connection, model_fp: str, keys: Sequence[str]
) -> dict[str, F32]:
    """Stored float32 vectors for those of `keys` present (rows of the wrong size skipped)."""
    out: dict[str, F32] = {}
    for marks, part in batches(keys):
        for key, dim, blob in conn.execute(
            f"SELECT key, dim, vec FROM embeddings WHERE model = ? AND key IN ({marks})",
            (model_fp, *part),
        ):
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.shape == (dim,):
                out[key] = vec
    return out


def insert_embeddings(
    conn: sqlite3.Connection, model_fp: str, items: Mapping[str, npt.NDArray[np.float32]]
) -> None:
    """Store vectors (as float32) under `model_fp`, in key order; the caller owns the
    transaction."""
    conn.executemany(
        "INSERT OR REPLACE INTO embeddings(model, key, dim, vec) VALUES (?,?,?,?)",
        [
            (model_fp, k, int(v.shape[0]), np.ascontiguousarray(v, np.float32).tobytes())
            for k, v in sorted(items.items())
        ],
    )


def delete_embeddings(conn: sqlite3.Connection, keys: Sequence[str]) -> int:
    """Delete the rows of `keys` under every model (inside the caller's transaction)."""
    gone = 0
    for marks, part in batches(keys):
        cur = conn.execute(f"DELETE FROM embeddings WHERE key IN ({marks})", part)
        gone += max(cur.rowcount, 0)
    return gone


def vacuum(conn: sqlite3.Connection) -> None:
    """Rewrite the file without free pages and empty its WAL (see learning/redact.py)."""
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class SharedEmbeddingCache:
    """The user-level cache file, shared by every vault (and process) of one user.

    Any failure is reported once through `on_error(message)` and disables the cache; `broken`
    then says why."""

    def __init__(
        self,
        path: Path,
        on_error: Callable[[str], None] | None = None,
        *,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = path
        self._busy_ms = busy_timeout_ms
        self.broken: str | None = None
        self._on_error = on_error
        self._lock = threading.Lock()

    def get_embeddings(self, model_fp: str, keys: Sequence[str]) -> dict[str, F32]:
        if not keys:
            return {}
        with self._lock:
            if self.broken is not None:
                return {}
            try:
                conn = self._connect()
                try:
                    return select_embeddings(conn, model_fp, keys)
                finally:
                    conn.close()
            except (sqlite3.Error, OSError) as exc:
                self._fail(exc)
                return {}

    def put_embeddings(self, model_fp: str, items: Mapping[str, npt.NDArray[np.float32]]) -> None:
        if not items:
            return
        with self._lock:
            if self.broken is not None:
                return
            try:
                conn = self._connect()
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        insert_embeddings(conn, model_fp, items)
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                finally:
                    conn.close()
            except (sqlite3.Error, OSError) as exc:
                self._fail(exc)

    def forget_embeddings(self, keys: Sequence[str]) -> int:
        """Erasure; unlike a miss or a failed put, a failure here is raised (sqlite3.Error or
        OSError), since the caller must not report the keys gone. A missing file holds none."""
        if not keys or not self.path.exists():
            return 0
        with self._lock:
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    gone = delete_embeddings(conn, keys)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                vacuum(conn)
                return gone
            finally:
                conn.close()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), timeout=self._busy_ms / 1000, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_ms)}")
            enter_wal(conn, self._busy_ms)
            conn.execute("PRAGMA synchronous = NORMAL")
            migrate(conn, MIGRATIONS)  # SchemaTooNew is a sqlite3.DatabaseError
        except BaseException:
            conn.close()
            raise
        return conn

    def _fail(self, exc: BaseException) -> None:
        self.broken = f"{type(exc).__name__}: {exc}"
        if self._on_error is not None:
            self._on_error(
                f"shared embedding cache {self.path} is unusable ({self.broken}); "
                "embedding with the vault's own cache only"
            )


class TieredEmbeddingCache:
    """The vault's cache, then a shared one: hits in the shared cache are copied into the
    vault's (so the vault stays complete on its own); new vectors go to both."""

    def __init__(self, local: EmbeddingCache, shared: EmbeddingCache) -> None:
        self.local = local
        self.shared = shared

    def get_embeddings(self, model_fp: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found = dict(self.local.get_embeddings(model_fp, keys))
        rest = sorted(set(keys) - found.keys())
        if rest:
            more = self.shared.get_embeddings(model_fp, rest)
            if more:
                self.local.put_embeddings(model_fp, more)
                found.update(more)
        return found

    def put_embeddings(self, model_fp: str, items: Mapping[str, np.ndarray]) -> None:
        self.local.put_embeddings(model_fp, items)
        self.shared.put_embeddings(model_fp, items)
