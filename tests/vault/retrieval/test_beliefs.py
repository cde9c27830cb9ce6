"""vault.retrieval.beliefs: the stale-claim positions of a memory-mapped frontmatter column
under an advanced corpus's layers (rows dropped, changed and added) are those of the plain
column it reads as."""

from __future__ import annotations

import json
import random

import pytest

from vault.retrieval.beliefs import _all_stale
from vault.storage.columns import Decoded, Strings
from vault.storage.overlay import Column
from vault.storage.shift import Shift

FRONT = [{}, {"trust": "rejected"}, {"trust": "asserted"}, {"superseded_by": "[[Newer]]"},
         {"title": "trust"}, {"superseded_by": ""}]


@pytest.mark.parametrize("seed", range(6))
def test_stale_positions_follow_drops_changes_and_adds(seed: int) -> None:
    rng = random.Random(seed)
    rows = [dict(rng.choice(FRONT)) for _ in range(rng.randint(1, 40))]
    col = Column.of(Decoded(Strings(json.dumps(r) for r in rows), json.loads), {}, [])
    plain = list(rows)
    for _ in range(12):
        n = len(plain)
        drop = sorted(rng.sample(range(n), min(n, rng.randint(0, 3))))
        plain = [r for k, r in enumerate(plain) if k not in set(drop)]
        changes = {i: dict(rng.choice(FRONT)) for i in rng.sample(range(len(plain)),
                                                                  min(len(plain), 2))}
        for i, r in changes.items():
            plain[i] = r
        added = [dict(rng.choice(FRONT)) for _ in range(rng.randint(0, 2))]
        plain += added
        col = Column.of(col, changes, added, Shift(tuple(drop), n))
        assert _all_stale(col) == _all_stale(plain)
        assert list(col) == plain
