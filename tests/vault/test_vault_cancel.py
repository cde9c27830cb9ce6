"""Cooperative cancellation (vault/cancel.py) through the facade: a cold search whose stop test
turns true at the k-th checkpoint raises Cancelled, caches and saves nothing half-done, and the
next search (no stop test) ranks exactly as a search that was never stopped. What a stopped
build finished is kept: the lexical store saved before its checkpoint, the embeddings of every
slice cached before the stop, so the next build resumes instead of starting over."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from vault import EmbeddingCache, SearchEngine, SearchParams, Vault, VaultError, cancellable
from vault.cancel import EVERY, checked, checkpoint
from vault.retrieval import lexical_store, stamped
from vault.retrieval.encoders import PROGRESS_STEP
from vault.storage import edge_store, name_tables, note_store

from .retrieval.dense_history import Counting


def _vault(root: Path, notes: int) -> None:
    (root / ".rmh").mkdir(parents=True)
    for i in range(notes):
        (root / f"n{i:04d}.md").write_text(
            f"# Note {i}\n\nalpha w{i % 37} w{i % 11} beta\n[[n{(i * 7) % notes:04d}]]\n")


def _engine(root: Path) -> Callable[[EmbeddingCache], SearchEngine]:
    """The engine as harness builds it: its lexical structures saved in .rmh/ after a build."""
    return lambda own: SearchEngine(SearchParams(), cache=own, scratch=str(root / ".rmh"))


def _ranking(v: Vault) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in v.search("alpha w3", 10, learn=False).hits]


def _dense_engine(root: Path, enc: Counting) -> Callable[[EmbeddingCache], SearchEngine]:
    return lambda own: SearchEngine(SearchParams(), encoder=enc, cache=own,
                                    scratch=str(root / ".rmh"))


def _named(v: Vault) -> list[tuple[str, float]]:
    return [(h.note, h.score) for h in v.search("alpha w3", 10, learn=False).hits]


def test_a_cancel_after_the_lexical_build_keeps_its_store(tmp_path: Path) -> None:
    probe = tmp_path / "probe"  # the same notes, searched once without a stop: its checkpoints
    _vault(probe, 3 * EVERY)
    calls = {"n": 0}

    def count() -> bool:
        calls["n"] += 1
        return False

    with Vault.open(probe, engine=_engine(probe)) as v, cancellable(count):
        expected = _named(v)
    root = tmp_path / "v"
    _vault(root, 3 * EVERY)
    seen = {"n": 0}

    def stop() -> bool:  # true at the last checkpoint: the one right after the lexical build
        seen["n"] += 1
        return seen["n"] >= calls["n"]

    with Vault.open(root, engine=_engine(root)) as v:
        with pytest.raises(VaultError) as caught, cancellable(stop):
            v.search("alpha w3", 10, learn=False)
        assert caught.value.code_name == "cancelled"
    store = root / ".rmh" / lexical_store.FILE
    kept = store.stat()  # the stopped build's work, saved whole
    with Vault.open(root, engine=_engine(root)) as v:
        assert _named(v) == expected
    again = store.stat()
    assert (again.st_ino, again.st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)  # loaded


def test_a_cancelled_embedding_resumes_where_it_stopped(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    _vault(probe, 3 * EVERY)
    whole = Counting()
    with Vault.open(probe, engine=_dense_engine(probe, whole)) as v:
        expected = _named(v)
    assert whole.encoded > PROGRESS_STEP  # more than one slice to embed
    root = tmp_path / "v"
    _vault(root, 3 * EVERY)
    enc = Counting()
    with Vault.open(root, engine=_dense_engine(root, enc)) as v:
        with pytest.raises(VaultError) as caught, cancellable(lambda: enc.encoded > 0):
            v.search("alpha w3", 10, learn=False)
        assert caught.value.code_name == "cancelled"
    assert enc.encoded == PROGRESS_STEP  # stopped after its first slice
    rest = Counting()
    with Vault.open(root, engine=_dense_engine(root, rest)) as v:
        assert _named(v) == expected
    assert rest.encoded == whole.encoded - PROGRESS_STEP  # the first slice was not redone


@pytest.mark.parametrize("stop_at", [1, 2, 3, 5, 8])
def test_a_stopped_cold_search_raises_and_leaves_nothing(tmp_path: Path, stop_at: int) -> None:
    root = tmp_path / "v"
    _vault(root, 3 * EVERY)
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] >= stop_at

    with Vault.open(root, engine=_engine(root)) as v:
        before = sorted(p.name for p in (root / ".rmh").iterdir())
        with pytest.raises(VaultError) as caught, cancellable(stop):
            v.search("alpha w3", 10, learn=False)
        assert caught.value.code_name == "cancelled"
        added = {p.name for p in (root / ".rmh").iterdir()} - set(before)
        # only finished work, whole: the snapshot's edges and columns (with their name
        # tables), stamped values
        named = {name for name in added
                 if name.startswith((stamped.PREFIX, name_tables.PREFIX))}
        assert added - named <= {edge_store.FILE, note_store.FILE}
        stopped_then = _ranking(v)
        assert sorted(p.name for p in (root / ".rmh").iterdir()) != before  # this one saved
    with Vault.open(root, engine=_engine(root)) as v:
        assert _ranking(v) == stopped_then  # same as a search that was never stopped


def test_without_a_stop_test_checkpoints_do_nothing() -> None:
    checkpoint()
    assert list(checked(range(3 * EVERY))) == list(range(3 * EVERY))
    with cancellable(lambda: False):
        assert list(checked(range(10))) == list(range(10))
        checkpoint()
