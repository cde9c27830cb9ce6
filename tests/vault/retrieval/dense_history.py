"""Generated corpus histories for the dense index's tests: adds, edits, renames and removals
(the first note, the last, several, every note; a removed note added back), each corpus with
a hand-made `CorpusDelta` chained to the previous one's, as storage/increment.py makes them.

Each note carries a version: a new one when it is added, edited or renamed, so a test can
tell which notes are unchanged since an earlier corpus without reading the delta."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from bench.synthetic_encoder import SyntheticEncoder
from vault.storage.corpus import Corpus, CorpusDelta

from ..retrieval_fixtures import make_corpus

TOPICS = 24


class Counting(SyntheticEncoder):
    """The synthetic encoder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded += len(texts)
        return super().encode(texts)


def topic_body(rng: np.random.Generator) -> str:
    """A note about one of TOPICS topics: mostly its words, some shared words (so the IVF's
    lists mean something)."""
    t = int(rng.integers(0, TOPICS))
    own = [f"t{t}w{j}" for j in range(12)]
    return " ".join([*rng.choice(own, 8), *rng.choice([f"common{j}" for j in range(40)], 3)])


@dataclass(frozen=True)
class State:
    """One corpus of a history and its notes' versions (position-aligned)."""

    corpus: Corpus
    versions: tuple[int, ...]


def start(notes: list[tuple[str, str]]) -> State:
    return State(make_corpus(notes), tuple(range(len(notes))))


def history(first: State, steps: int, seed: int, body: Callable[[np.random.Generator], str]
            ) -> Iterator[State]:
    """`steps` states after `first`, each a random change of the one before (module
    docstring); every third seed removes every note once, midway."""
    rng = np.random.default_rng(seed)
    state, gone = first, []
    version = max(first.versions, default=-1) + 1
    for step in range(steps):
        c = state.corpus
        notes = list(zip(c.titles, c.bodies, strict=True))
        n = len(notes)
        kind = int(rng.integers(0, 6))
        every = seed % 3 == 0 and step == steps // 2  # an empty corpus, then notes again
        if every:
            removed = list(range(n))
        elif kind == 0 and n:
            removed = [0]
        elif kind == 1 and n:
            removed = [n - 1]
        elif n:
            removed = sorted(int(x) for x in rng.choice(n, int(rng.integers(0, min(n, 4) + 1)),
                                                          replace=False))
        else:
            removed = []
        gone += [notes[p] for p in removed]
        drop = set(removed)
        kept = [p for p in range(n) if p not in drop]
        notes = [notes[p] for p in kept]
        versions = [state.versions[p] for p in kept]
        changed = sorted(int(x) for x in rng.choice(len(notes), int(rng.integers(
            0, min(len(notes), 3) + 1)), replace=False)) if notes else []
        for p in changed:
            title, text = notes[p]
            if rng.random() < 0.3:
                title = f"renamed {version}"
            else:
                text = body(rng)
            notes[p] = (title, text)
            versions[p] = version
            version += 1
        for _ in range(0 if every else int(rng.integers(0, 4)) if notes else 3):
            if gone and rng.random() < 0.4:  # a removed note added back, same title and text
                notes.append(gone[int(rng.integers(0, len(gone)))])
            else:
                notes.append((f"added {version}", body(rng)))
            versions.append(version)
            version += 1
        delta = CorpusDelta(c.generation, n, tuple(changed), tuple(changed), c.delta,
                            tuple(removed))
        corpus = replace(make_corpus(notes, generation=c.generation + 1), delta=delta)
        state = State(corpus, tuple(versions))
        yield state
