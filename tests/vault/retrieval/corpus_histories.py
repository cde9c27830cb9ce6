"""Generated corpus histories for the in-place tests: each generation a hand-made `Corpus` from
the last by removals, edits (renames and trust changes among them) and additions, with the
`CorpusDelta` (removed, changed, relinked, earlier) that says what the step did, as the
storage layer's advance would (tests/vault/storage/test_shift.py checks the chain's
composition). Links resolve by title to the first note holding it, so a removal can move a
link to another note of the same name, or leave it dangling; every note's body holds a term
of its own (`solo<id>`), so a removal can take a term out of the vocabulary entirely."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace

from vault.shift import Shift
from vault.storage.columns import Edges
from vault.storage.corpus import Corpus, CorpusDelta

WORDS = ("auth billing cache monday tuesday outage deploy rollback alice bob queue the of "
         "zebra quokka river").split()
TITLES = ("Ada Lovelace", "auth plan", "Billing", "the queue", "Monday outage", "zebra")
ALIASES = ("Ada", "billing team", "Q", "outage log")


@dataclass(frozen=True)
class Note:
    id: int
    title: str
    aliases: tuple[str, ...]
    body: str
    fm: dict[str, object]
    links: tuple[str, ...]  # titles linked to


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 10)))


def _note(rng: random.Random, nid: int, titles: list[str]) -> Note:
    title = rng.choice(TITLES) if rng.random() < 0.4 else f"Note {nid} {rng.choice(WORDS)}"
    aliases = tuple(rng.sample(ALIASES, rng.randint(0, 2)))
    fm: dict[str, object] = {}
    if rng.random() < 0.3:
        fm = {"trust": rng.choice(["rejected", "confirmed"]),
              "description": _text(rng)}
    links = tuple(rng.sample(titles, min(len(titles), rng.randint(0, 3)))) if titles else ()
    return Note(nid, title, aliases, f"{_text(rng)} solo{nid} {_text(rng)}", fm, links)


def corpus_of(notes: list[Note], generation: int, delta: CorpusDelta | None,
              arrays: bool = False) -> Corpus:
    """The corpus of `notes` (in position order), links resolved by title; with `arrays`
    the edges are the snapshot's two arrays (storage/columns.py `Edges`), else tuples."""
    first: dict[str, int] = {}
    for p, x in enumerate(notes):
        first.setdefault(x.title, p)
    edges = sorted({(p, first[t]) for p, x in enumerate(notes) for t in x.links
                    if t in first and first[t] != p})
    return Corpus(generation, tuple(x.id for x in notes), tuple(f"n{x.id}.md" for x in notes),
                  tuple(x.title for x in notes), tuple(x.aliases for x in notes),
                  tuple(x.body for x in notes), tuple(x.fm for x in notes),
                  tuple(hashlib.blake2b(f"{x.title}\n{x.body}".encode(), digest_size=8)
                        .hexdigest() for x in notes),
                  Edges.of(edges) if arrays else tuple(edges), tuple(False for _ in notes),
                  delta)


def _out(c: Corpus, p: int) -> set[int]:
    return {b for a, b in c.edges if a == p}


def _step(rng: random.Random, prev: Corpus, notes: list[Note], next_id: int,
          graveyard: list[Note]) -> tuple[list[Note], tuple[int, ...], list[int], list[Note]]:
    """(notes of the next generation, removed positions, changed positions, added notes)."""
    n = len(notes)
    roll = rng.random()
    if n and roll < 0.08:
        removed = list(range(n))  # every note
    elif n and roll < 0.2:
        removed = [0] if roll < 0.14 else [n - 1]  # the first, or the last
    else:
        removed = sorted(rng.sample(range(n), rng.randint(0, min(3, n))))
    graveyard.extend(notes[p] for p in removed)
    kept = [x for p, x in enumerate(notes) if p not in set(removed)]
    titles = sorted({x.title for x in kept} | set(TITLES[:2]))
    changed = sorted(rng.sample(range(len(kept)), rng.randint(0, min(3, len(kept)))))
    for p in changed:
        fresh = _note(rng, kept[p].id, titles)
        if rng.random() < 0.5:  # an edit keeps the name; else a rename
            fresh = replace(fresh, title=kept[p].title)
        kept[p] = fresh
    added: list[Note] = []
    for _ in range(rng.randint(0, 3)):
        if graveyard and rng.random() < 0.3:  # the same text again, as a new note
            again = rng.choice(graveyard)
            added.append(replace(again, id=next_id + len(added)))
        else:
            added.append(_note(rng, next_id + len(added), titles))
    return kept + added, tuple(removed), changed, added


def history(seed: int, steps: int, n0: int) -> list[Corpus]:
    """Generations 0..steps of a generated corpus; generation g's delta chains back to 0.
    An even seed gives the edges as arrays, an odd one as tuples (`corpus_of`)."""
    rng = random.Random(seed)
    arrays = seed % 2 == 0
    titles = list(TITLES)
    notes = [_note(rng, i, titles) for i in range(n0)]
    gens = [corpus_of(notes, 0, None, arrays)]
    graveyard: list[Note] = []
    next_id = n0
    for g in range(1, steps + 1):
        prev = gens[-1]
        notes, removed, changed, added = _step(rng, prev, notes, next_id, graveyard)
        next_id += len(added)
        draft = corpus_of(notes, g, None, arrays)
        shift = Shift(removed, len(prev))
        # relinked: exactly the kept rows whose out-links differ once the removed rows are
        # dropped (a link to a removed note vanishes with its column), and the changed ones
        relinked = set(changed)
        for p in range(shift.kept):
            before = set(shift.forward_kept(sorted(_out(prev, shift.back_one(p)))))
            if before != _out(draft, p):
                relinked.add(p)
        delta = CorpusDelta(prev.generation, len(prev), tuple(changed), tuple(sorted(relinked)),
                            prev.delta, removed)
        gens.append(replace(draft, delta=delta))
    return gens


def queries(rng: random.Random, corpora: list[Corpus], k: int = 12) -> list[str]:
    """Queries of words, names and the `solo` terms of notes present and gone."""
    ids = sorted({i for c in corpora for i in c.ids})
    names = sorted({t for c in corpora for t in c.titles} | set(ALIASES))
    out = ["zzz unknown", "the of", " ".join(WORDS)]
    for _ in range(k):
        parts = [rng.choice(WORDS) for _ in range(rng.randint(0, 4))]
        if ids:
            parts += [f"solo{rng.choice(ids)}" for _ in range(rng.randint(0, 2))]
        if names and rng.random() < 0.6:
            parts.insert(rng.randint(0, len(parts)), rng.choice(names))
        out.append(" ".join(parts))
    return out
