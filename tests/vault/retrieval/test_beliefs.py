"""retrieval/beliefs.py: the stale-claim mask kept across generations (removals among them)
equals the one a fresh tracker computes for the same corpus; and the stale-claim positions of
a memory-mapped frontmatter column under an advanced corpus's layers (rows dropped, changed
and added) are those of the plain column it reads as."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import pytest

from vault.retrieval import beliefs
from vault.retrieval.beliefs import StaleClaims, _all_stale
from vault.shift import Shift
from vault.storage.columns import Decoded, Strings
from vault.storage.overlay import Column

from .corpus_histories import history


@pytest.mark.parametrize("seed", range(40))
def test_the_mask_followed_through_removals_equals_a_fresh_one(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    gens = history(seed, rng.randint(1, 7), rng.randint(0, 14))
    live = StaleClaims()
    passes: list[int] = []
    whole = beliefs._all_stale

    def counted(fm: Sequence[object]) -> set[int]:
        passes.append(len(fm))
        return whole(fm)

    live.mask(gens[0])
    monkeypatch.setattr(beliefs, "_all_stale", counted)
    for c in gens:
        got = live.mask(c)
        assert not passes  # followed through the delta, never a full pass again
        want = StaleClaims().mask(c)
        passes.clear()
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert got.tolist() == want.tolist()
    behind = StaleClaims()  # a tracker that skipped every generation but the first
    behind.mask(gens[0])
    got, want = behind.mask(gens[-1]), StaleClaims().mask(gens[-1])
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert got.tolist() == want.tolist()


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
