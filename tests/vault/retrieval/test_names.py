"""NameIndex: names found as token runs, compact entries, and updates equal to a fresh build."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from vault.notes.text import tokenize
from vault.retrieval.names import MAX_NAME_TOKENS, NameIndex, PackedNames
from vault.shift import Shift

from ..retrieval_fixtures import make_corpus

WORDS = ("Ada", "Lovelace", "auth", "Service", "Monday", "plan", "the", "x_y")


def reference(titles: list[str], aliases: list[list[str]], query: str) -> list[int]:
    """The plain definition: a title or alias whose tokens occur contiguously in the query's."""
    q = tokenize(query)
    found = set()
    for i, names in enumerate(zip(titles, aliases, strict=True)):
        for name in (names[0], *names[1]):
            toks = tokenize(name)
            if 0 < len(toks) <= MAX_NAME_TOKENS and any(
                    q[s : s + len(toks)] == toks for s in range(len(q))):
                found.add(i)
    return sorted(found)


def random_names(rng: random.Random, n: int) -> tuple[list[str], list[list[str]]]:
    def name() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4)))

    return ([name() for _ in range(n)],
            [[name() for _ in range(rng.randrange(0, 3))] for _ in range(n)])


def test_named_in_matches_the_definition_and_shared_names_keep_every_note() -> None:
    rng = random.Random(1)
    titles, aliases = random_names(rng, 80)
    titles[:3] = ["Ada Lovelace"] * 3  # one name, three notes
    index = NameIndex.build(make_corpus([(t, "") for t in titles], aliases=aliases))
    assert index.positions("ada lovelace")[:3] == (0, 1, 2)
    assert all(isinstance(v, int) or len(v) > 1 for v in index.names.values())
    for _ in range(60):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 9)))
        assert index.named_in(query) == reference(titles, aliases, query)


def test_updated_equals_a_fresh_build() -> None:
    rng = random.Random(2)
    titles, aliases = random_names(rng, 60)
    old = make_corpus([(t, "") for t in titles], aliases=aliases)
    index = NameIndex.build(old)
    for step in range(5):
        changed = [*sorted(rng.sample(range(len(titles)), 8)), len(titles)]
        new_titles, new_aliases = random_names(rng, len(titles) + 1)
        titles = [new_titles[i] if i in changed else t for i, t in enumerate(titles)]
        titles.append(new_titles[-1])
        aliases = [new_aliases[i] if i in changed else a for i, a in enumerate(aliases)]
        aliases.append(new_aliases[-1])
        new = make_corpus([(t, "") for t in titles], aliases=aliases, generation=step + 2)
        index = index.updated(old, new, changed)
        assert dict(index.names) == dict(NameIndex.build(new).names)
        old = new


@pytest.mark.parametrize("stored", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_removals_then_changes_equal_a_fresh_build(seed: int, stored: bool,
                                                   tmp_path: Path) -> None:
    """Notes removed (the first, the last, all, some), then changed and added, step after
    step: every name's positions and every query's named notes are a fresh build's. The
    index may start from the stored packed form (a new process's)."""
    rng = random.Random(100 + seed)
    titles, aliases = random_names(rng, rng.randint(0, 30))
    old = replace(make_corpus([(t, "") for t in titles], aliases=aliases), stamp="s0")
    index = NameIndex.stored(old, str(tmp_path)) if stored else NameIndex.build(old)
    assert isinstance(index.names, PackedNames) == stored
    for step in range(rng.randint(1, 6)):
        n, roll = len(titles), rng.random()
        removed = (list(range(n)) if n and roll < 0.1 else [0] if n and roll < 0.15
                   else [n - 1] if n and roll < 0.2
                   else sorted(rng.sample(range(n), rng.randint(0, min(4, n)))))
        shift = Shift(tuple(removed), n)
        titles = [t for p, t in enumerate(titles) if shift.keep[p]]
        aliases = [a for p, a in enumerate(aliases) if shift.keep[p]]
        fresh_t, fresh_a = random_names(rng, len(titles) + 2)
        changed = sorted(rng.sample(range(len(titles)), min(3, len(titles))))
        changed += [len(titles), len(titles) + 1]
        for p in changed:
            if p < len(titles):
                titles[p], aliases[p] = fresh_t[p], fresh_a[p]
        titles += fresh_t[-2:]
        aliases += fresh_a[-2:]
        new = make_corpus([(t, "") for t in titles], aliases=aliases, generation=step + 2)
        index = index.updated(old, new, changed, shift)
        want = NameIndex.build(new)
        for name in sorted(set(index.names) | set(want.names)):
            assert index.positions(name) == want.positions(name), name
        for _ in range(20):
            query = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 9)))
            assert index.named_in(query) == want.named_in(query) == reference(
                titles, aliases, query), query
        old = new


def test_overlaid_names_count_what_they_iterate() -> None:
    """`OverlaidNames.__len__` is derived from the base's count and the changes (no walk of a
    million stored names); it must equal the names its iteration yields."""
    import random

    from vault.retrieval.names import OverlaidNames

    rng = random.Random(36)
    for _ in range(500):
        base = {f"n{i}": (i,) for i in rng.sample(range(20), rng.randint(0, 10))}
        changes: dict[str, tuple[int, ...] | None] = {
            f"n{i}": None if rng.random() < 0.5 else (i,)
            for i in rng.sample(range(20), rng.randint(0, 10))}
        overlay = OverlaidNames(base, dict(changes))
        assert len(overlay) == sum(1 for _ in overlay) == len(set(overlay))
