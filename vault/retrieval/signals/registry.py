"""The first-stage signals as one protocol and one literal registry.

A `Signal` is built from a corpus, brought up to date from a delta, and scores a query over
every note of the corpus it was built for:

    index  = signal.build(corpus, env)
    index' = signal.update(index, old, corpus, since, env)   # equal to build(corpus, env)
    raw    = signal.score(index, query)   # float64 per note position; None: cannot run

`update` receives what changed between `old` and `corpus` (storage/corpus.py `Since`: the
rows removed, then the positions whose text may differ); a signal that tracks its own
generation (dense) may ignore it. Every score is deterministic and aligned with corpus
positions; 0 means "not found" (fusion ranks only positive scores). `slot` names the field
of the pipeline's derived structures (retrieval/derived.py) that holds the index, and
`unavailable` says why `score` returned None.

`REGISTRY` lists the signals in the order the pipeline runs them and reports them; adding a
signal is one class here and a field where its index is kept. Graph (PageRank) is not here:
it is seeded by the others' results and runs as a pipeline stage (stages.graph_stage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus, Since
from ...storage.embeddings import EmbeddingCache
from ..encoders import Encoder, Progress
from .bm25 import Bm25Index, note_document
from .conjunctive import ConjunctiveIndex, note_text
from .dense import DenseIndex, DenseParams, dense_scores

F64 = npt.NDArray[np.float64]
IndexT = TypeVar("IndexT")
R = TypeVar("R")


@dataclass(frozen=True)
class Query:
    """One query as the signals read it: its text, its tokens (text.tokenize), the encoder,
    and its embedding (`vector`), computed once for every signal and stage that reads it."""

    text: str
    tokens: list[str]
    encoder: Encoder | None = None

    @cached_property
    def vector(self) -> npt.NDArray[np.float32]:
        """The encoder's embedding of `text` (the dense signal and the query-log neighbours'
        channel, asked_channel.py, read the same one)."""
        if self.encoder is None:
            raise ValueError("a query is embedded with an encoder")
        return np.asarray(self.encoder.encode([self.text])[0], dtype=np.float32)


@dataclass(frozen=True)
class BuildEnv:
    """What a signal may need to build its index beyond the corpus (dense: the encoder and
    its cache, chunking bounds, layout, a scratch folder); lexical signals need none of it."""

    encoder: Encoder | None = None
    cache: EmbeddingCache | None = None
    max_tokens: int = 256
    max_note_units: int = 64
    dense: DenseParams = field(default_factory=DenseParams)
    scratch: str | None = None
    progress: Progress | None = None
    count_op: Callable[[], None] | None = None  # the store's fault seam (its saves in scratch)


class Signal(Protocol[IndexT]):
    """A first-stage retrieval signal (module docstring)."""

    name: str
    slot: str
    unavailable: str

    def build(self, corpus: Corpus, env: BuildEnv) -> IndexT: ...

    def update(self, index: IndexT, old: Corpus, corpus: Corpus, since: Since,
               env: BuildEnv) -> IndexT: ...

    def score(self, index: IndexT, query: Query) -> F64 | None: ...

    def ran(self, index: IndexT) -> str:
        """The stage report of a search it scored ("ran", and what a receipt must know)."""
        ...


def _changes(since: Since, old: Corpus, corpus: Corpus, read: Callable[[Corpus, int], R]
             ) -> dict[int, tuple[R | None, R]]:
    """{p: (what the consumer holds for changed position p, its new content)} after the
    removal: the old row of p < shift.kept is `shift.back(p)` (storage/corpus.py `Since`);
    later positions are added (None)."""
    s = since.shift
    at = s.back(np.asarray(since.changed, dtype=np.int64)).tolist()
    return {p: (read(old, a) if p < s.kept else None, read(corpus, p))
            for p, a in zip(since.changed, at, strict=True)}


class Bm25Signal:
    """Okapi BM25 over the stems of title, aliases, description and body (signals/bm25.py)."""

    name, slot, unavailable = "bm25", "bm25", ""

    def build(self, corpus: Corpus, env: BuildEnv) -> Bm25Index:
        return Bm25Index.build(corpus)

    def update(self, index: Bm25Index, old: Corpus, corpus: Corpus, since: Since,
               env: BuildEnv) -> Bm25Index:
        gone = [note_document(old, p) for p in since.removed]  # the removed notes only
        return index.removed(since.shift, gone).updated(
            _changes(since, old, corpus, note_document), len(corpus))

    def score(self, index: Bm25Index, query: Query) -> F64:
        return index.score_tokens(query.tokens)

    def ran(self, index: Bm25Index) -> str:
        return "ran"


class ConjunctiveSignal:
    """Query term pairs co-occurring in a note (signals/conjunctive.py)."""

    name, slot, unavailable = "conjunctive", "conj", ""

    def build(self, corpus: Corpus, env: BuildEnv) -> ConjunctiveIndex:
        return ConjunctiveIndex.build(corpus)

    def update(self, index: ConjunctiveIndex, old: Corpus, corpus: Corpus, since: Since,
               env: BuildEnv, move: bool = True) -> ConjunctiveIndex:
        """`move`: as ConjunctiveIndex.updated's (False: S1 and S2 are set whole after)."""
        gone = [note_text(old, p) for p in since.removed]
        return index.caught_up(since.shift, gone, _changes(since, old, corpus, note_text),
                               len(corpus), move)

    def score(self, index: ConjunctiveIndex, query: Query) -> F64:
        return index.score_tokens(query.tokens)

    def ran(self, index: ConjunctiveIndex) -> str:
        return "ran"


class DenseSignal:
    """Cosine of the query's embedding with each note's best chunk (signals/dense.py)."""

    name, slot, unavailable = "dense", "dense", "no encoder"

    def build(self, corpus: Corpus, env: BuildEnv) -> DenseIndex:
        if env.encoder is None:
            raise ValueError("the dense signal is built with an encoder")
        return DenseIndex.build(corpus, env.encoder, env.cache, env.max_tokens, env.progress,
                                env.max_note_units, env.dense, env.scratch, env.count_op)

    def update(self, index: DenseIndex, old: Corpus, corpus: Corpus, since: Since,
               env: BuildEnv) -> DenseIndex:
        """Catches up by its own generation (`follow`); `since` is not read."""
        return self.follow(index, corpus, env)

    def follow(self, index: DenseIndex, corpus: Corpus, env: BuildEnv) -> DenseIndex:
        """`index` brought up to `corpus` through the corpus's delta chain (DenseIndex.updated:
        a build when the chain does not reach back to the index's generation)."""
        if env.encoder is None:
            raise ValueError("the dense signal is updated with an encoder")
        return index.updated(corpus, env.encoder, env.cache, env.max_tokens, env.progress,
                             env.max_note_units)

    def caught_up(self, base: Corpus, corpus: Corpus, env: BuildEnv) -> DenseIndex:
        """The index of `base` (a saved state: its stores load) brought up to `corpus`
        through its delta without compacting the exact layout (storage/catch_up.py); on the
        IVF layout up to `retrain_max_rows` rows any change trains the lists again
        (signals/dense.py), so the result is a fresh build's, saved for the next process
        (DenseIndex.caught_up); a larger one keeps the base's lists."""
        if env.encoder is None:
            raise ValueError("the dense signal is updated with an encoder")
        return DenseIndex.caught_up(base, corpus, env.encoder, env.cache, env.max_tokens,
                                    env.progress, env.max_note_units, env.dense, env.scratch,
                                    env.count_op)

    def score(self, index: DenseIndex, query: Query) -> F64 | None:
        if query.encoder is None:
            return None
        return dense_scores(index, query.encoder, query.text, query.vector)

    def ran(self, index: DenseIndex) -> str:
        stale = index.staleness
        return f"ran (int8 IVF {stale})" if stale else "ran"


BM25 = Bm25Signal()
DENSE = DenseSignal()
CONJUNCTIVE = ConjunctiveSignal()
REGISTRY: tuple[Signal[Any], ...] = (BM25, DENSE, CONJUNCTIVE)
STAGE1 = tuple(s.name for s in REGISTRY)  # fused by their range (fusion.py, "range")
