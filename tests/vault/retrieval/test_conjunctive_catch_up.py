"""The conjunctive channel's catch-up moves its norm sums once (signals/conjunctive.py
`caught_up`, signals/postings.py `add_by_column`): after generated removals, edits, renames
and additions the sums and every score equal a fresh build's, and the first new process
after a change reads each entry of a moved column at most once (PERF44)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.retrieval import caught_up_sums
from vault.retrieval.signals import conjunctive
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.postings import Postings

from .folder_history import make_vault, plain_text
from .test_caught_up_sums import _search
from .test_incremental_lexical import QUERIES, removals


def _caught_up(seed: int, n0: int, steps: int) -> tuple[ConjunctiveIndex, ConjunctiveIndex,
                                                         list[str]]:
    """The index after each step of `removals` by one `caught_up`, the same by `removed`
    then `updated`, and the final documents."""
    seq = removals(seed, n0, steps)
    one = two = ConjunctiveIndex.from_texts(seq[0][0])
    for docs, shift, change in seq[:-1]:
        kept = [d for p, d in enumerate(docs) if shift.keep[p]]
        gone = [docs[p] for p in shift.removed]
        changes = {p: (kept[p] if p < len(kept) else None, t) for p, t in change.items()}
        n = max(shift.kept, max(change, default=-1) + 1)
        one = one.caught_up(shift, gone, changes, n)
        two = two.removed(shift, gone).updated(changes, n)
    return one, two, seq[-1][0]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n0=st.integers(0, 12), steps=st.integers(1, 8),
       alone=st.sampled_from([0, 1, 2, 3, 5, 256]), block=st.sampled_from([1, 2, 7, 1 << 22]))
def test_one_move_equals_two_steps_and_a_fresh_build(
        seed: int, n0: int, steps: int, alone: int, block: int) -> None:
    """Whatever the split of columns read alone or in blocks (0: every column alone; blocks
    of one entry), the sums moved once equal those moved per step and a fresh build's, and
    every query scores the same bits."""
    names = vars(conjunctive)  # hypothesis runs examples in one test call: no monkeypatch
    old = names["ALONE"], names["ENTRY_BLOCK"]
    names["ALONE"], names["ENTRY_BLOCK"] = alone, block
    try:
        one, two, final = _caught_up(seed, n0, steps)
    finally:
        names["ALONE"], names["ENTRY_BLOCK"] = old
    fresh = ConjunctiveIndex.from_texts(final)
    for name in ("m", "s1", "s2", "terms"):
        assert np.array_equal(getattr(one, name), getattr(fresh, name)), name
        assert np.array_equal(getattr(two, name), getattr(fresh, name)), name
    assert one.n_docs == fresh.n_docs == len(final)
    for q in (*QUERIES, "solo0 solo1x0 auth", *(f"solo{i}" for i in range(n0))):
        assert one.score(q).tobytes() == fresh.score(q).tobytes(), q


@contextmanager
def _entries_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[int], list[int]]]:
    """(entries of the conjunctive postings read during each catch-up's sums update, the
    moved entries `caught_up_sums.moved_entries` counted for it): every reader of
    `Postings` wrapped, only outermost calls counted."""
    read: list[int] = []
    moved: list[int] = []
    depth = [0]
    busy = [False]

    def wrap(name: str, size: Callable[[Postings, tuple[Any, ...], Any], int]) -> None:
        real = getattr(Postings, name)

        def counted(self: Postings, *args: Any, **kw: Any) -> Any:
            depth[0] += 1
            try:
                out = real(self, *args, **kw)
            finally:
                depth[0] -= 1
            if busy[0] and depth[0] == 0:
                read[-1] += size(self, args, out)
            return out

        monkeypatch.setattr(Postings, name, counted)

    wrap("entries", lambda p, a, out: int(out[0].size))
    wrap("column", lambda p, a, out: int(out[0].size))
    wrap("rows_of", lambda p, a, out: int(out[0].size))
    if hasattr(Postings, "add_by_column"):
        wrap("add_by_column", lambda p, a, out: int(p.column_sizes(a[0]).sum()))
    real_update, real_moved = caught_up_sums.Sums.update, caught_up_sums.moved_entries

    def update(self: caught_up_sums.Sums, *args: Any) -> ConjunctiveIndex:
        read.append(0)
        busy[0] = True
        try:
            return real_update(self, *args)
        finally:
            busy[0] = False

    def counted_moved(before: ConjunctiveIndex, after: ConjunctiveIndex) -> int:
        was, busy[0] = busy[0], False
        try:
            moved.append(real_moved(before, after))
        finally:
            busy[0] = was
        return moved[-1]

    monkeypatch.setattr(caught_up_sums.Sums, "update", update)
    monkeypatch.setattr(caught_up_sums, "moved_entries", counted_moved)
    yield read, moved


@pytest.mark.parametrize("seed", range(3))
def test_the_first_process_after_a_change_reads_each_moved_entry_once(
        tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps of outside changes that each remove notes and add others sharing their words
    (renames and edits among them): the first new process's catch-up reads at most the
    entries of the columns whose n_u moved (once each; main read the columns a removal and
    an addition both moved twice), and every process's hits equal a fresh build's."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    names = make_vault(root, rng, 30, plain_text)
    _search(root)  # the base
    with _entries_read(monkeypatch) as (read, moved):
        for step in range(4):
            for _ in range(1 + step % 2):
                (root / names.pop(rng.randrange(len(names)))).unlink()
            old = rng.choice(names)
            names[names.index(old)] = f"moved{step}.md"
            (root / old).rename(root / f"moved{step}.md")
            (root / rng.choice(names)).write_text(plain_text(rng), encoding="utf-8")
            for k in range(2):
                names.append(f"new{step}-{k}.md")
                (root / names[-1]).write_text(plain_text(rng), encoding="utf-8")
            fresh, _ = _search(root, stores=False)
            read.clear()
            moved.clear()
            first, base = _search(root)
            assert base and len(read) == len(moved) == 1, step
            assert 0 < read[0] <= moved[0], (step, read, moved)
            later, _ = _search(root)
            assert first == later == fresh, step
