"""The map of positions after a removal, and deltas that remove, composed along a chain."""

from __future__ import annotations

import random

import numpy as np
import pytest

from vault.shift import Shift, composed, forward_list
from vault.storage.corpus import CorpusDelta


def _removal(rng: random.Random, n: int) -> Shift:
    return Shift(tuple(sorted(rng.sample(range(n), rng.randint(0, n)))), n)


@pytest.mark.parametrize("seed", range(40))
def test_forward_and_back_are_the_list_deletion(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 30)
    s = _removal(rng, n)
    kept = [p for p in range(n) if p not in s.removed]
    assert s.kept == len(kept)
    assert s.forward(range(n)).tolist() == [kept.index(p) if p in kept else -1
                                           for p in range(n)]
    assert s.back(range(s.kept)).tolist() == kept
    assert s.keep.tolist() == [p in kept for p in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_then_is_two_deletions_in_turn(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 30)
    first = _removal(rng, n)
    second = _removal(rng, first.kept)
    rows = [p for p in range(n) if p not in first.removed]
    rows = [r for k, r in enumerate(rows) if k not in second.removed]
    both = first.then(second)
    assert [p for p in range(n) if p not in both.removed] == rows


def test_a_removal_out_of_range_or_unsorted_is_refused() -> None:
    for bad in ((3, 1), (1, 1), (-1,), (5,)):
        with pytest.raises(ValueError):
            Shift(bad, 5)
    with pytest.raises(ValueError):
        Shift((1,), 5).then(Shift((), 5))


def _history(rng: random.Random, steps: int
             ) -> tuple[list[list[int]], list[CorpusDelta | None], list[set[int]]]:
    """Generations of a corpus as lists of note ids, each from the last by removals, edits
    (ids kept, recorded as changed) and additions, with the delta each step makes."""
    gens: list[list[int]] = [list(range(rng.randint(0, 12)))]
    deltas: list[CorpusDelta | None] = [None]
    edited: list[set[int]] = [set()]
    next_id = len(gens[0])
    for g in range(1, steps + 1):
        prev = gens[-1]
        removed = sorted(rng.sample(range(len(prev)), rng.randint(0, min(3, len(prev)))))
        kept = [x for k, x in enumerate(prev) if k not in removed]
        changed = sorted(rng.sample(range(len(kept)), rng.randint(0, min(3, len(kept)))))
        added = list(range(next_id, next_id + rng.randint(0, 3)))
        next_id += len(added)
        gens.append(kept + added)
        edited.append({kept[p] for p in changed})
        deltas.append(CorpusDelta(g - 1, len(prev), tuple(changed), tuple(changed),
                                  deltas[-1], tuple(removed)))
    return gens, deltas, edited


@pytest.mark.parametrize("seed", range(60))
def test_changes_since_any_generation_in_the_chain(seed: int) -> None:
    rng = random.Random(seed)
    gens, deltas, edited = _history(rng, rng.randint(1, 6))
    last, delta = gens[-1], deltas[-1]
    assert delta is not None
    for g, held in enumerate(gens[:-1]):
        since = delta.changes_since(g, len(held), len(last))
        assert since is not None
        # the consumer's rows that survive, moved by the shift, are exactly the same notes
        survivors = [x for k, x in enumerate(held) if k not in since.removed]
        assert last[: since.shift.kept] == survivors
        assert [held[p] for p in since.shift.back(range(since.shift.kept)).tolist()] \
            == survivors
        # added rows are changed and relinked; removed ones are not in `last`
        assert set(range(since.shift.kept, len(last))) <= set(since.changed)
        assert set(since.changed) <= set(since.relinked) | set(since.changed)
        assert not {held[p] for p in since.removed} & set(last)
        # every note edited after generation g that is still there is changed
        touched = set().union(*edited[g + 1:]) & set(last)
        assert {last[p] for p in since.changed} >= touched
    assert delta.changes_since(len(gens) + 5, 3, len(last)) is None


def test_an_edit_after_the_consumer_is_changed_at_its_new_position() -> None:
    # generation 0: ids [0, 1, 2, 3]; generation 1 edits id 3 (position 3); generation 2
    # removes id 1: id 3 is now at position 2 and must be reported changed there
    d1 = CorpusDelta(0, 4, (3,), (3,))
    d2 = CorpusDelta(1, 4, (), (), d1, (1,))
    since = d2.changes_since(0, 4, 3)
    assert since is not None
    assert since.removed == (1,) and since.changed == [2]
    assert np.array_equal(since.shift.back([0, 1, 2]), [0, 2, 3])


@pytest.mark.parametrize("seed", range(40))
def test_then_grown_is_removals_with_appends_between(seed: int) -> None:
    """Rows labelled by their position in the first coordinates extended by appends (the
    k-th appended after the first removal is n + k): the composed removal keeps exactly
    the rows the list operations keep, in order."""
    rng = random.Random(seed)
    n = rng.randint(0, 20)
    rows, label = list(range(n)), n
    total: Shift | None = None
    for _ in range(rng.randint(1, 5)):
        s = _removal(rng, len(rows))
        rows = [r for k, r in enumerate(rows) if k not in set(s.removed)]
        total = s if total is None else total.then_grown(s)
        grow = rng.randint(0, 3)
        rows += list(range(label, label + grow))
        label += grow
    assert total is not None
    assert [p for p in range(label) if p not in set(total.removed)][: total.kept] == \
        rows[: total.kept]
    assert total.forward(rows[: total.kept]).tolist() == list(range(total.kept))
    with pytest.raises(ValueError):
        Shift((0,), 3).then_grown(Shift((), 1))


def test_check_refuses_a_removal_from_another_length_or_with_other_contents() -> None:
    s = Shift((1, 3), 5)
    s.check(5, 2, "notes")
    for n, given in ((4, 2), (5, 1), (5, 3)):
        with pytest.raises(ValueError, match="a removal from 5 notes"):
            s.check(n, given, "notes")


@pytest.mark.parametrize("seed", range(20))
def test_the_plain_forms_agree_with_the_shift(seed: int) -> None:
    """`composed` and `forward_list` (the forms a name table uses, without its length) give
    what `Shift.then` and `Shift.forward` give, over generated removals."""
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    first = Shift(tuple(sorted(rng.sample(range(n), rng.randint(0, n)))), n)
    later = Shift(tuple(sorted(rng.sample(range(first.kept), rng.randint(0, first.kept)))),
                  first.kept)
    assert composed(first.removed, later.removed) == first.then(later).removed
    probe = [rng.randrange(n) for _ in range(rng.randint(0, 30))]
    assert forward_list(probe, first.removed) == first.forward_kept(probe)
    assert forward_list(probe, first.removed, keep_gone=True) == [
        int(x) for x in first.forward(probe)]
