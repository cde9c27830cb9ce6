"""Notes named in a query: titles and aliases found as token runs among the query's tokens.

A note is named when the token sequence of its title or one of its aliases (1 to
`MAX_NAME_TOKENS` tokens, tokenized as every lexical signal is) occurs contiguously in the
query's tokens. Used by the PageRank seeds (signals/graph.py) and the named stage (stages.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..storage.corpus import Corpus
from .text import tokenize

MAX_NAME_TOKENS = 8


@dataclass(frozen=True)
class NameIndex:
    """Token sequences of titles and aliases -> positions of the notes they name."""

    names: Mapping[tuple[str, ...], tuple[int, ...]]

    @classmethod
    def build(cls, corpus: Corpus) -> NameIndex:
        acc: dict[tuple[str, ...], set[int]] = {}
        for i in range(len(corpus)):
            for toks in _names(corpus, i):
                acc.setdefault(toks, set()).add(i)
        return cls({k: tuple(sorted(v)) for k, v in acc.items()})

    def updated(self, old: Corpus, new: Corpus, positions: Sequence[int]) -> NameIndex:
        """The index for `new`, where only `positions` differ from `old` (or are new)."""
        gone: dict[tuple[str, ...], set[int]] = {}
        came: dict[tuple[str, ...], set[int]] = {}
        for p in positions:
            before = _names(old, p) if p < len(old) else set()
            after = _names(new, p)
            for toks in before - after:
                gone.setdefault(toks, set()).add(p)
            for toks in after - before:
                came.setdefault(toks, set()).add(p)
        if not gone and not came:
            return self
        names = dict(self.names)
        for toks in sorted(set(gone) | set(came)):
            ids = (set(names.get(toks, ())) - gone.get(toks, set())) | came.get(toks, set())
            if ids:
                names[toks] = tuple(sorted(ids))
            else:
                names.pop(toks, None)
        return NameIndex(names)

    def named_in(self, query: str) -> list[int]:
        """Positions of notes whose title or alias occurs as a token run in the query."""
        return self.named_in_tokens(tokenize(query))

    def named_in_tokens(self, toks: Sequence[str]) -> list[int]:
        """`named_in` for an already tokenized query."""
        found: set[int] = set()
        for i in range(len(toks)):
            for j in range(i + 1, min(len(toks), i + MAX_NAME_TOKENS) + 1):
                found.update(self.names.get(tuple(toks[i:j]), ()))
        return sorted(found)


def _names(corpus: Corpus, i: int) -> set[tuple[str, ...]]:
    """The token runs that name the note at position `i`."""
    out = set()
    for name in (corpus.titles[i], *corpus.aliases[i]):
        toks = tuple(tokenize(name))
        if 0 < len(toks) <= MAX_NAME_TOKENS:
            out.add(toks)
    return out
