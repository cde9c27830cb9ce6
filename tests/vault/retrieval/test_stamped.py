"""Per-note values remembered under a corpus's stamp (retrieval/stamped.py): computed once per
stamp and read back after, recomputed for another stamp, a corpus without one, another size
or a damaged file; the lexical digest and the dense note keys read back equal their
computation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from vault.retrieval import dense_store, lexical_store, stamped
from vault.retrieval.derived import ADJACENCY_VERSION, stored_adjacency
from vault.retrieval.names import NameIndex, PackedNames
from vault.retrieval.signals.graph import adjacency
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import make_corpus


def _corpus(stamp: str | None) -> Corpus:
    c = make_corpus([("a", "alpha beta"), ("b", "beta gamma"), ("c", "gamma")], [(1, 0)])
    return replace(c, stamp=stamp)


def test_a_value_is_computed_once_per_stamp(tmp_path: Path) -> None:
    calls: list[int] = []

    def compute() -> npt.NDArray[np.int64]:
        calls.append(1)
        return np.arange(3, dtype=np.int64) + len(calls)

    c = _corpus("s1")
    first = stamped.remembered(tmp_path, c, "v", compute)
    assert np.array_equal(stamped.remembered(tmp_path, c, "v", compute), first)
    assert len(calls) == 1
    stamped.remembered(tmp_path, _corpus("s2"), "v", compute)  # another stamp
    stamped.remembered(tmp_path, _corpus(None), "v", compute)  # no stamp: never saved
    stamped.remembered(None, c, "v", compute)  # no folder
    assert len(calls) == 4


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty", "other arrays"])
def test_a_damaged_file_is_computed_again(tmp_path: Path, how: str) -> None:
    c = _corpus("s1")
    stamped.remembered(tmp_path, c, "v", lambda: np.arange(4))
    path = tmp_path / f"{stamped.PREFIX}v.npz"
    data = path.read_bytes()
    if how == "other arrays":  # whole, this stamp, but not the arrays asked for
        with open(path, "wb") as fh:
            np.savez(fh, version=np.int64(stamped.VERSION), stamp=np.str_("s1"),
                     notes=np.int64(len(c)), value=np.arange(4))
    else:
        path.write_bytes({"truncated": data[: len(data) // 2], "garbage": b"x" * 300,
                          "empty": b""}[how])
    assert np.array_equal(stamped.remembered(tmp_path, c, "v", lambda: np.arange(5)),
                          np.arange(5))


def test_store_keys_read_back_equal_their_computation(tmp_path: Path) -> None:
    c = _corpus("s1")
    plain = _corpus(None)
    for _ in range(2):
        assert lexical_store.corpus_digest(c, tmp_path) == lexical_store.corpus_digest(plain)
        assert np.array_equal(dense_store.note_keys(c, tmp_path), dense_store.note_keys(plain))
    assert sorted(p.name for p in tmp_path.iterdir()) == [  # one file per value
        f"{stamped.PREFIX}dense-keys-{dense_store.VERSION}.npz",
        f"{stamped.PREFIX}lexical-digest-{lexical_store.DIGEST_VERSION}.npz"]


def test_the_name_index_read_back_answers_as_a_built_one(tmp_path: Path) -> None:
    c = make_corpus([("Alice Smith", "x"), ("Bob", "y"), ("alice smith", "z"), ("Straße Ω", "w"),
                     ("Project X", "v")], aliases=[["Al"], [], ["A. S."], [], ["PX", "Bob"]])
    c = replace(c, stamp="s1")
    built = NameIndex.build(c)
    for _ in range(2):  # computed and saved, then read back
        stored = NameIndex.stored(c, str(tmp_path))
        assert isinstance(stored.names, PackedNames)
        assert dict(stored.names) == dict(built.names) and stored == built
        assert list(stored.names.values()) == [built.names[k] for k in stored.names]
        for q in ("alice smith bob", "who is px", "straße ω and project x", "nobody"):
            assert stored.named_in(q) == built.named_in(q)
    assert NameIndex.stored(replace(c, stamp=None), str(tmp_path)) == built


def test_the_adjacency_read_back_equals_a_built_one(tmp_path: Path) -> None:
    c = make_corpus([(f"n{i}", "x") for i in range(30)],
                    sorted({(i, (i * 7 + 3) % 30) for i in range(30)} - {(3, 3)}))
    c = replace(c, stamp="s1")
    built = adjacency(len(c), c.edges)
    for _ in range(2):  # computed and saved, then read back
        got = stored_adjacency(c, str(tmp_path))
        for a, b in ((got.indptr, built.indptr), (got.indices, built.indices),
                     (got.data, built.data)):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        assert got.shape == built.shape
    path = tmp_path / f"{stamped.PREFIX}adjacency-{ADJACENCY_VERSION}.npz"
    arrays: dict[str, Any] = {"version": np.int64(stamped.VERSION), "stamp": np.str_("s1"),
                              "notes": np.int64(len(c)), "v.indptr": np.zeros(3, np.int32),
                              "v.indices": np.zeros(0, np.int32), "v.data": np.zeros(0)}
    with open(path, "wb") as fh:  # this stamp, arrays of another shape: built again
        np.savez(fh, **arrays)
    assert np.array_equal(stored_adjacency(c, str(tmp_path)).indptr, built.indptr)
