"""vault.storage.live: the snapshot follows a removal in place, in a vault as it runs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault
from vault.storage.snapshot import build_snapshot

from .test_increment import FOLDERS, NAMES, _same, _text


@pytest.mark.parametrize("seed", range(3))
def test_after_a_delete_the_next_snapshot_is_advanced_not_rebuilt(
        tmp_path: Path, seed: int) -> None:
    """`Vault.delete` (and writes between): every next snapshot is advanced from the last
    one (its delta names the removed position; `on_rebuild`, which the vault uses to drop
    what it derived before a rebuild, is never called) and equals a build from every row."""
    rng = random.Random(seed)
    (tmp_path / ".rmh").mkdir()
    for k in range(10):
        (tmp_path / FOLDERS[k % len(FOLDERS)]).mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{FOLDERS[k % len(FOLDERS)]}{NAMES[k % len(NAMES)]} {k}.md").write_text(
            _text(rng), encoding="utf-8")
    with Vault.open(tmp_path, watch=False) as v:
        live = v.live
        live.sync()
        snap = live.snapshot()
        rebuilds: list[int] = []
        live.on_rebuild = lambda: rebuilds.append(1)
        for step in range(8):
            if step % 3 == 2:
                v.write(f"{rng.choice(NAMES)} new {step}", _text(rng))
            prev = snap
            victim = rng.choice(list(prev.corpus.paths))
            v.delete(victim)
            snap = live.snapshot()
            delta = snap.corpus.delta
            assert delta is not None and victim not in snap.corpus.paths
            gone = prev.corpus.position(prev.resolver.path_id[victim])
            assert delta.removed == (gone,)  # a write before it appended: same position
            _same(snap, build_snapshot(live.index))
        assert rebuilds == []
