"""retrieval/beliefs.py: the stale-claim mask kept across generations (removals among them)
equals the one a fresh tracker computes for the same corpus."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from vault.retrieval import beliefs
from vault.retrieval.beliefs import StaleClaims

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
