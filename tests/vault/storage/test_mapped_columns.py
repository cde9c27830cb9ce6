"""The columns a persisted note store reads as (storage/columns.py `Strings.over`,
`Decoded`, `containing`) and the resolver's lazily built tables (notes/name_index.py
`LazyKeyIndex`): they read as the tuples and tables they stand for, on generated text."""

from __future__ import annotations

import json
import mmap
import random
from array import array

import pytest

from vault.notes.name_index import KeyIndex, LazyKeyIndex
from vault.storage.columns import Decoded, Strings
from vault.storage.row_codec import decode_frontmatter

WORDS = ["trust", "superseded_by", "Straße", "kaffee", "ω", "\"trust\"", "", "a\u0000b", "x" * 70]


def _items(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4))) for _ in range(n)]


def _mapped(items: list[str], pad: int) -> Strings:
    """`items` packed after `pad` bytes of other data in an anonymous mapping."""
    packed = Strings(items)
    buf = b"#" * pad + b"".join(s.encode() for s in items)
    mm = mmap.mmap(-1, max(len(buf), 1))
    mm.write(buf)
    off = array("q", [pad])
    for s in items:
        off.append(off[-1] + len(s.encode()))
    mapped = Strings.over(mm, off)
    assert list(mapped) == list(packed) == items
    return mapped


@pytest.mark.parametrize("seed", range(6))
def test_mapped_strings_read_as_the_tuple(seed: int) -> None:
    rng = random.Random(seed)
    items = _items(rng, rng.randint(0, 300))
    mapped = _mapped(items, rng.randint(0, 50))
    assert mapped == tuple(items) and len(mapped) == len(items)
    for i in range(-len(items), len(items)):
        assert mapped[i] == items[i]
    assert mapped[3:40:2] == tuple(items[3:40:2])
    with pytest.raises(IndexError):
        mapped[len(items)]


@pytest.mark.parametrize("seed", range(6))
def test_containing_is_a_superset_of_the_items_holding_a_needle(seed: int) -> None:
    rng = random.Random(seed)
    items = _items(rng, 200)
    mapped = _mapped(items, 7)
    for needles in ([b"trust"], [b'"trust"', b"superseded_by"], ["ω".encode()], [b"zzz"]):
        found = mapped.containing(needles)
        exact = [i for i, s in enumerate(items) if any(n in s.encode() for n in needles)]
        assert found == sorted(found) and set(exact) <= set(found)
        glued = b"".join(s.encode() for s in items)
        for i in set(found) - set(exact):  # only across a boundary into the next items
            assert any(n in glued[sum(len(s.encode()) for s in items[:i]):] for n in needles)


def test_decoded_reads_as_the_decoded_tuple() -> None:
    rows = [{}, {"speaker": "Alice", "n": 1.5}, {"trust": "rejected", "x": [1, {"y": None}]},
            {"ünï": "ω"}]
    texts = [json.dumps(r, ensure_ascii=False) for r in rows]
    col = Decoded(Strings(texts), decode_frontmatter)
    assert col == tuple(rows) and list(col) == rows and col[-1] == rows[-1]
    assert col.containing([b'"trust"']) == [2]


def test_a_lazy_key_index_builds_on_first_read_and_answers_as_a_built_one() -> None:
    rng = random.Random(3)
    entries = [(rng.choice(WORDS) + str(rng.randint(0, 30)), k) for k in range(500)]
    calls = []

    def made() -> list[tuple[str, int]]:
        calls.append(1)
        return entries

    lazy, built = LazyKeyIndex(made), KeyIndex.build(entries)
    assert not calls
    for key, _ in [*entries[:100], ("absent", 0)]:
        assert sorted(lazy.positions(key)) == sorted(built.positions(key))
    assert calls == [1] and len(lazy) == len(built) and lazy.nbytes() == built.nbytes()
    more = lazy.plus([("absent", 9)])
    assert more.positions("absent") == [9] and lazy.extra == 0
