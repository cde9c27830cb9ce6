"""A persistent `EmbeddingCache` for benchmark runs: SQLite under bench/out/ (gitignored)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


class SqliteEmbeddingCache:
    """float32 vectors keyed by (model fingerprint, sha256 of the chunk text)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path))
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS emb "
            "(model TEXT, key TEXT, vec BLOB, PRIMARY KEY(model, key))"
        )

    def get_embeddings(self, model_fp: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        uniq = sorted(set(keys))
        for start in range(0, len(uniq), 500):
            part = uniq[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT key, vec FROM emb WHERE model = ? AND key IN ({marks})", (model_fp, *part)
            )
            for key, blob in rows:
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_embeddings(self, model_fp: str, items: Mapping[str, np.ndarray]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO emb(model, key, vec) VALUES (?, ?, ?)",
                [
                    (model_fp, k, np.asarray(v, np.float32).tobytes())
                    for k, v in sorted(items.items())
                ],
            )

    def close(self) -> None:
        self._conn.close()
