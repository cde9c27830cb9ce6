"""Vocabulary equals the dict it replaces: lookups, misses, growth, iteration, length."""

from __future__ import annotations

import random

import pytest

from vault.retrieval.signals import vocabulary
from vault.retrieval.signals.vocabulary import Vocabulary

LETTERS = "abcé漢0"


@pytest.mark.parametrize("stride", [1, 2, 16])
def test_it_is_the_dict_it_was_built_from(stride: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vocabulary, "STRIDE", stride)
    rng = random.Random(stride)
    terms = list(dict.fromkeys("".join(rng.choice(LETTERS) for _ in range(rng.randrange(1, 5)))
                               for _ in range(300)))
    d = {t: i for i, t in enumerate(terms)}
    v = Vocabulary.of(d)
    assert len(v) == len(d) and dict(v) == d and v == d
    assert list(v) == sorted(d)
    for t in terms:
        assert t in v and v[t] == d[t]
    for miss in ("", "zzz", "a" * 9, "\U0001f642"):
        assert miss not in v and v.get(miss) is None
        with pytest.raises(KeyError):
            v[miss]
    grown = v.with_terms(["zzz", "\U0001f642"])
    assert grown["zzz"] == len(d) and grown["\U0001f642"] == len(d) + 1
    assert dict(grown) == {**d, "zzz": len(d), "\U0001f642": len(d) + 1}
    assert "zzz" not in v and v.with_terms([]) is v


def test_empty() -> None:
    v = Vocabulary.of({})
    assert len(v) == 0 and list(v) == [] and "a" not in v
    assert dict(v.with_terms(["a"])) == {"a": 0}


def test_an_edit_shares_the_block_heads_instead_of_recomputing_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    v = Vocabulary.of({f"t{i:05d}": i for i in range(1000)})
    calls: list[int] = []
    block = Vocabulary._block

    def counted(self: Vocabulary, b: int) -> list[str]:
        calls.append(b)
        return block(self, b)

    monkeypatch.setattr(Vocabulary, "_block", counted)
    grown = v.with_terms(["zzz"]).with_terms(["zzzz"])
    assert grown.heads is v.heads and calls == []  # O(new terms) an edit, not O(vocabulary)
    assert grown["zzz"] == 1000 and grown["zzzz"] == 1001 and grown["t00420"] == 420
