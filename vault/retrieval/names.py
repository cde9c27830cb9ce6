"""Notes named in a query: titles and aliases found as token runs among the query's tokens.

A note is named when the token sequence of its title or one of its aliases (1 to
`MAX_NAME_TOKENS` tokens, tokenized as every lexical signal is) occurs contiguously in the
query's tokens. Used by the PageRank seeds (signals/graph.py) and the named stage (stages.py).

Kept compact (a million notes have a million names): a name is the string of its tokens joined
by spaces (a token never holds one, so the join is one-to-one) and its notes a plain int when
there is one, a sorted tuple otherwise; about half the bytes of a tuple of tokens to a tuple.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ..notes.text import tokenize
from ..storage.corpus import Corpus

MAX_NAME_TOKENS = 8

Positions = int | tuple[int, ...]  # one note's position, or several, ascending


def _as_tuple(p: Positions) -> tuple[int, ...]:
    return (p,) if isinstance(p, int) else p


def _packed(ids: set[int]) -> Positions:
    ordered = tuple(sorted(ids))
    return ordered[0] if len(ordered) == 1 else ordered


@dataclass(frozen=True)
class NameIndex:
    """Titles and aliases (tokens joined by spaces) -> positions of the notes they name."""

    names: Mapping[str, Positions]

    @classmethod
    def build(cls, corpus: Corpus) -> NameIndex:
        acc: dict[str, Positions | list[int]] = {}
        for i in range(len(corpus)):
            for name in sorted(_names(corpus, i)):
                had = acc.get(name)
                if had is None:
                    acc[name] = i
                elif isinstance(had, int):
                    acc[name] = [had, i]  # i ascends
                elif isinstance(had, list):
                    had.append(i)
        for name, ids in acc.items():  # lists to tuples in place (no second dict)
            if isinstance(ids, list):
                acc[name] = tuple(ids)
        return cls(cast(dict[str, Positions], acc))

    def positions(self, name: str) -> tuple[int, ...]:
        """The notes named `name` (tokens joined by spaces), ascending."""
        found = self.names.get(name)
        return () if found is None else _as_tuple(found)

    def updated(self, old: Corpus, new: Corpus, positions: Sequence[int]) -> NameIndex:
        """The index for `new`, where only `positions` differ from `old` (or are new)."""
        gone: dict[str, set[int]] = {}
        came: dict[str, set[int]] = {}
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
            ids = (set(self.positions(toks)) - gone.get(toks, set())) | came.get(toks, set())
            if ids:
                names[toks] = _packed(ids)
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
                hit = self.names.get(" ".join(toks[i:j]))
                if hit is not None:
                    found.update(_as_tuple(hit))
        return sorted(found)


def _names(corpus: Corpus, i: int) -> set[str]:
    """The token runs that name the note at position `i`, each joined by spaces."""
    out = set()
    for name in (corpus.titles[i], *corpus.aliases[i]):
        toks = tokenize(name)
        if 0 < len(toks) <= MAX_NAME_TOKENS:
            out.add(" ".join(toks))
    return out
