"""The user-level embedding cache shared across vaults (issue 17): a second vault holding the
same text embeds nothing; a broken shared file never breaks indexing and is reported once."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from vault import SearchEngine, SearchParams, SharedEmbeddingCache, TieredEmbeddingCache, Vault
from vault.retrieval.encoders import MiniLmEncoder

NOTES = {
    "Alpha.md": "Alpha links to [[Beta]]. The weather is lovely today.\n",
    "Beta.md": "Beta is here. He drove to the stadium after work.\n",
    "Gamma.md": "# Budget\n\nQuarterly accounting and spreadsheets.\n\n## Weekend\n\nSunny.\n",
}


@cache
def real_encoder() -> MiniLmEncoder:
    return MiniLmEncoder()


class CountingEncoder:
    """The real encoder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.embedded = 0

    @property
    def fingerprint(self) -> str:
        return real_encoder().fingerprint

    @property
    def dim(self) -> int:
        return real_encoder().dim

    def count_tokens(self, text: str) -> int:
        return real_encoder().count_tokens(text)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded += len(texts)
        return real_encoder().encode(texts)


def make_vault(root: Path, notes: dict[str, str] = NOTES) -> Path:
    root.mkdir(parents=True)
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
    Vault.init(root).close()
    return root


def with_cache(root: Path, shared: SharedEmbeddingCache, enc: CountingEncoder) -> Vault:
    """The vault at `root`, its engine embedding through `enc` behind the shared cache."""
    return Vault.open(root, engine=lambda own: SearchEngine(
        SearchParams(), encoder=enc, cache=TieredEmbeddingCache(own, shared)))


def index_with(vault: Vault) -> np.ndarray:
    vault.sync()
    vault.engine.prepare(vault.corpus())
    dense = vault.engine._view(vault.corpus()).dense
    assert dense is not None
    return dense.matrix


def test_second_vault_with_the_same_text_embeds_nothing(tmp_path: Path) -> None:
    errors: list[str] = []
    shared = SharedEmbeddingCache(tmp_path / "cache" / "embeddings.sqlite", errors.append)
    first, second = CountingEncoder(), CountingEncoder()
    with with_cache(make_vault(tmp_path / "a"), shared, first) as a:
        ma = index_with(a)
    assert first.embedded == ma.shape[0] >= 3
    with with_cache(make_vault(tmp_path / "b"), shared, second) as b:
        mb = index_with(b)
        assert second.embedded == 0
        assert np.array_equal(ma, mb)
        # the shared hits were copied into b's own cache: b is complete without the shared file
        assert b.index.counts()["embeddings"] == ma.shape[0]
    assert errors == [] and shared.broken is None


def test_only_the_new_text_of_a_third_vault_is_embedded(tmp_path: Path) -> None:
    shared = SharedEmbeddingCache(tmp_path / "shared.sqlite")
    with with_cache(make_vault(tmp_path / "a"), shared, CountingEncoder()) as a:
        index_with(a)
    notes = {**NOTES, "Delta.md": "Delta is a brand new note about volcanoes.\n"}
    enc = CountingEncoder()
    with with_cache(make_vault(tmp_path / "c", notes), shared, enc) as c:
        index_with(c)
    assert enc.embedded == 1


def test_shared_file_uses_wal_and_the_index_schema(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    shared = SharedEmbeddingCache(path)
    vec = np.arange(4, dtype=np.float32)
    shared.put_embeddings("fp", {"k": vec})
    conn = sqlite3.connect(str(path))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT model, key, dim FROM embeddings").fetchall() == [("fp", "k", 4)]
    conn.close()
    # a second handle (another process would do the same) reads what the first wrote
    assert np.array_equal(SharedEmbeddingCache(path).get_embeddings("fp", ["k", "x"])["k"], vec)
    assert SharedEmbeddingCache(path).get_embeddings("other-model", ["k"]) == {}


def broken_not_a_database(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(b"this is not a SQLite database, just text " * 100)
    return path


def broken_parent_is_a_file(tmp_path: Path) -> Path:
    (tmp_path / "plain-file").write_text("x", encoding="utf-8")
    return tmp_path / "plain-file" / "embeddings.sqlite"


def broken_is_a_directory(tmp_path: Path) -> Path:
    path = tmp_path / "a-dir.sqlite"
    path.mkdir()
    return path


@pytest.mark.parametrize(
    "broken", [broken_not_a_database, broken_parent_is_a_file, broken_is_a_directory]
)
def test_a_broken_shared_cache_falls_back_and_says_so_once(tmp_path: Path, broken: object) -> None:
    assert callable(broken)
    errors: list[str] = []
    shared = SharedEmbeddingCache(broken(tmp_path), errors.append)
    enc = CountingEncoder()
    with with_cache(make_vault(tmp_path / "v"), shared, enc) as v:
        matrix = index_with(v)
        assert enc.embedded == matrix.shape[0] > 0
        assert v.index.counts()["embeddings"] == matrix.shape[0]  # the vault cache filled
        (v.root / "New.md").write_text("Another note to embed.\n", encoding="utf-8")
        index_with(v)  # more reads and writes: no second report
    assert len(errors) == 1 and "unusable" in errors[0] and shared.broken is not None


def test_a_writer_lock_held_too_long_turns_writes_off_not_indexing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    SharedEmbeddingCache(path).put_embeddings("fp", {"k": np.ones(3, dtype=np.float32)})
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process mid-write, for longer than we wait
    try:
        errors: list[str] = []
        shared = SharedEmbeddingCache(path, errors.append, busy_timeout_ms=50)
        assert set(shared.get_embeddings("fp", ["k"])) == {"k"}  # WAL: readers still read
        shared.put_embeddings("fp", {"j": np.ones(3, dtype=np.float32)})
        shared.put_embeddings("fp", {"i": np.ones(3, dtype=np.float32)})
        assert len(errors) == 1 and "locked" in errors[0]
        assert shared.get_embeddings("fp", ["k"]) == {}  # off for the rest of its life
    finally:
        other.execute("ROLLBACK")
        other.close()
