"""Cooperative cancellation (vault/cancel.py) through the facade: a cold search whose stop test
turns true at the k-th checkpoint raises Cancelled, caches and saves nothing, and the next
search (no stop test) ranks exactly as a search that was never stopped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from vault import EmbeddingCache, SearchEngine, SearchParams, Vault, VaultError, cancellable
from vault.cancel import EVERY, checked, checkpoint


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
        assert sorted(p.name for p in (root / ".rmh").iterdir()) == before  # nothing saved
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
