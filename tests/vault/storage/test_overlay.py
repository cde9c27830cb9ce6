"""vault.storage.overlay: columns and mappings over a shared base read as the plain ones."""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Mapping, Sequence

import pytest

from vault.notes import folding
from vault.shift import Shift
from vault.storage.columns import Strings
from vault.storage.overlay import Column, Dropped, Overlay, Patch


def _same_seq(col: Sequence[object], plain: Sequence[object]) -> None:
    assert len(col) == len(plain)
    assert list(col) == plain and col == tuple(plain) and tuple(plain) == col
    n = len(plain)
    for i in (*range(-n, n), *random.Random(n).sample(range(n), min(n, 5))):
        assert col[i] == plain[i]
    for lo, hi in ((0, n), (1, n - 1), (n // 3, n // 2), (n, n), (-3, None)):
        assert col[lo:hi] == tuple(plain[lo:hi])
    with pytest.raises(IndexError):
        col[n]
    with pytest.raises(IndexError):
        col[-n - 1]


@pytest.mark.parametrize(("seed", "fold"), [(s, f) for s in range(4) for f in (False, True)])
def test_columns_read_as_the_tuples_they_stand_for(
        monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool) -> None:
    if fold:
        monkeypatch.setattr(folding, "MIN_COMPACT", 3)
    rng = random.Random(seed)
    plain = sorted(rng.sample(range(10_000), 40))
    col: Sequence[int] = tuple(plain)
    folded = 0
    for _ in range(60):
        changes = {i: plain[i] for i in rng.sample(range(len(plain)), rng.randint(0, 3))}
        added = [plain[-1] + 1 + k for k in range(rng.randint(0, 2))]
        prev = col
        col = Column.of(col, changes, added)
        plain.extend(added)
        if not changes and not added:
            assert col is prev  # nothing changed: the same object
        folded += type(col) is tuple
        _same_seq(col, plain)
        assert bisect_left(col, plain[7]) == 7  # ascending stays searchable
    assert (folded > 0) == fold


@pytest.mark.parametrize(("seed", "fold", "packed"),
                         [(s, f, k) for s in range(8) for f in (False, True) for k in (0, 1)])
def test_columns_that_drop_rows_read_as_the_list_operations(
        monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool, packed: int) -> None:
    """Generated histories of drops (any rows: base, patched, appended; sometimes every
    row), changes and appends: the column reads as the list it stands for, the base is
    shared (never copied) until the changes and drops fold in, and then it is packed as the
    base was."""
    if fold:
        monkeypatch.setattr(folding, "MIN_COMPACT", 4)
    rng = random.Random(seed)
    plain = [f"row {k}" for k in range(rng.randint(0, 50))]
    base: Sequence[str] = Strings(plain) if packed else tuple(plain)
    col: Sequence[str] = base
    serial, kinds = 0, set()
    for _ in range(80):
        n = len(plain)
        roll = rng.random()
        if roll < 0.05:
            drop = list(range(n))  # every row
        else:
            drop = sorted(rng.sample(range(n), min(n, rng.randint(0, 3))))
        keep = [v for k, v in enumerate(plain) if k not in set(drop)]
        changes: dict[int, str] = {}
        for i in rng.sample(range(len(keep)), min(len(keep), rng.randint(0, 2))):
            serial += 1
            changes[i] = keep[i] = f"changed {serial}"
        added = [f"added {serial}.{k}" for k in range(rng.randint(0, 2))]
        prev = col
        col = Column.of(col, changes, added, Shift(tuple(drop), n))
        plain = keep + added
        if not drop and not changes and not added:
            assert col is prev
        kinds.add(type(col))
        if isinstance(col, Column):
            assert col.layers()[0] is base  # shared, not copied
        else:
            base = col  # folded: the new base, packed as the old one
            assert isinstance(col, Strings if packed else tuple)
        _same_seq(col, plain)
    assert Dropped in kinds
    assert (Strings in kinds or tuple in kinds) == fold


def test_a_drop_must_name_rows_of_the_column() -> None:
    with pytest.raises(ValueError, match="a removal from 4 rows"):
        Column.of((1, 2, 3), {}, [], Shift((1,), 4))


@pytest.mark.parametrize(("seed", "fold"), [(s, f) for s in range(4) for f in (False, True)])
def test_patched_mappings_read_as_the_dicts_they_stand_for(
        monkeypatch: pytest.MonkeyPatch, seed: int, fold: bool) -> None:
    if fold:
        monkeypatch.setattr(folding, "MIN_COMPACT", 3)
    rng = random.Random(seed)
    plain = {k: [k] for k in range(30)}
    current: Mapping[int, list[int]] = dict(plain)
    kinds = set()
    for _ in range(60):
        patch: Patch[int, list[int]] = Patch(current)
        for _ in range(rng.randint(0, 3)):
            key = rng.randint(0, 45)
            if rng.random() < 0.4:
                assert patch.pop(key, None) == plain.pop(key, None)
            else:
                patch[key] = plain[key] = [key, rng.randint(0, 9)]
            assert patch.get(key) == plain.get(key)
        prev, current = current, patch.frozen(current)
        if patch._touched:
            kinds.add(type(current))
        assert current == plain and plain == current and len(current) == len(plain)
        assert sorted(current) == sorted(plain)
        for key in range(50):
            assert (key in current) == (key in plain)
            assert current.get(key) == plain.get(key)
        if not patch._touched:
            assert current is prev
    assert Overlay in kinds and ((dict in kinds) == fold)
