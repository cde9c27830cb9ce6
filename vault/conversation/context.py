"""Budgeted context for a model (NDM seed 000, step 6), with zero LLM tokens.

"When a question arrives, the engine scores every event and shows the model only the best
ones, in date order, within a word budget ... keep the top events; add the turn just before
each kept event; sort by date, label who said each line, and cut the lowest scores first if
over budget."

Score of event t for query q. Relevance comes only from what t shares with q: its words, its
entities, or a time q itself names; the other terms multiply it (that q asks "when", or names
t's speaker, never makes an unconnected turn relevant):

    rel(t) = lex(t) + W_ENTITY · ent(t)     when ent(t) > 0 or lex(t) >= LEX_STRONG
           = 0                              otherwise
    rel(t) = max(rel(t), DATE_ALONE)        when a time q names holds t (named)
    s(t)   = rel(t) · (1 + W_TIME · time(t)) · (1 + W_SPEAKER · spk(t)) · (1 + W_OMEGA · Ω(t))

- lex: a lexical (or fused lexical+dense) score, divided by its maximum over the events, so in
  [0, 1], and 0 for a turn whose text holds no content term of q in any form (stems; stop
  words and speakers' names do not connect: passages.query_terms); only a strong one
  (>= LEX_STRONG of the best) connects on its own;
- ent: Σ idf(e) over the non-speaker entity rows of t whose words all occur in q outside its
  date expressions (not its frame words when q asks for a time and nothing else,
  notes/times_asked.py), divided by
  Σ idf(e) over every entity row matched by q; idf(e) = ln(1 + N / df(e)); speakers are hubs
  and never count;
- time: 1 when q asks about time ("when", "what year", "how long ago", ...) and t carries an
  anchored date expression, or when a date written in q (or a time q names that is over, read
  against the day q is asked on: "last month", retrieval/when.py) overlaps t's date or its
  expressions;
- named: a time q names (the dates in `time` below, not the mere asking) holds t's date or
  one of its expressions: "what happened on 8 May 2024" connects that day's turns, at
  DATE_ALONE = LEX_STRONG, the weakest connection a lexical score makes;
- spk: 1 when q names t's speaker;
- Ω: DMF survival (weight 0 by default: adopted only if the benchmark says so).

Depiction (NDM seed, step 6): the events with s > 0 in score order (ties: tick) are the top
events; each brings the turn just before it (same session) as a line whose priority is
BEFORE_SHARE · s(hit) (or its own score when higher). Lines are kept in priority order while
they fit the budget, so the lowest are cut first; the result is sorted by (date, tick). A line
is "[YYYY-MM-DD HH:MM] Speaker: text", followed by "(expr = absolute date; ...)" when the turn
has anchored expressions; budget counts its words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..notes.clocks import absolute
from ..notes.text import content_stems, stem, tokenize
from ..notes.times_asked import (
    FRAME,
    MAX_ASKED,
    asked_ranges,
    distinct,
    topicless,
    untimed_asked,
)
from .corrections import stale_sources
from .items import Item
from .passages import query_terms, vault_turns

if TYPE_CHECKING:
    from ..core import Vault

W_ENTITY = 0.5
W_TIME = 0.3
W_SPEAKER = 0.1
W_OMEGA = 0.0
LEX_STRONG = 0.25
BEFORE_SHARE = 0.5
DATE_ALONE = LEX_STRONG  # a named time alone connects as the weakest lexical score does
_ASKS_TIME = re.compile(
    r"\b(when|what (?:date|year|month|day|time)|which (?:year|month|day)|how long|"
    r"how many (?:days|weeks|months|years)|since when)\b",
    re.I,
)


@dataclass(frozen=True)
class Weights:
    """The fixed weights of the score (module docstring)."""

    entity: float = W_ENTITY
    time: float = W_TIME
    speaker: float = W_SPEAKER
    omega: float = W_OMEGA
    before: bool = True
    labels: bool = True
    lex_strong: float = LEX_STRONG
    before_share: float = BEFORE_SHARE
    date_alone: float = DATE_ALONE


@dataclass(frozen=True)
class Line:
    """One chosen line: the event, its score, and why it is there ("hit" or "before")."""

    item: Item
    score: float
    reason: str
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class Context:
    """The assembled context: lines in date order and what they cost."""

    query: str
    budget_words: int
    lines: tuple[Line, ...]
    candidates: int
    receipt: dict[str, Any] = field(default_factory=dict)
    # False when nothing in memory is relevant: the search declined (retrieval/relevance.py)
    # and no turn shares a named entity with the question (a time it names then connects
    # nothing: "the melting point of tungsten in May 2024"); then there are no lines. True
    # with no lines: relevant turns, none of whose lines fits in the budget.
    relevant: bool = True

    @property
    def words(self) -> int:
        return sum(line.words for line in self.lines)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "budget_words": self.budget_words,
            "words": self.words,
            "candidates": self.candidates,
            "text": self.text,
            "lines": [
                {
                    "note": ln.item.note,
                    "turn": ln.item.turn_id,
                    "speaker": ln.item.speaker,
                    "date": ln.item.when.isoformat(),
                    "tick": ln.item.tick,
                    "score": round(ln.score, 6),
                    "reason": ln.reason,
                }
                for ln in self.lines
            ],
            "receipt": dict(self.receipt),
            "relevant": self.relevant,
        }


def in_range(item: Item, lo: date | None, hi: date | None, *, within: bool = False) -> bool:
    """The event's date, or one of its anchored expressions, falls in [lo, hi]; with
    `within`, only an expression no longer than [lo, hi] counts ("next year", said in April
    2022, is no evidence of 8 May 2023: retrieval/when.py `closeness`)."""
    lo_ = lo or date.min
    hi_ = hi or date.max
    if lo_ <= item.when.date() <= hi_:
        return True
    return any(s <= hi_ and lo_ <= e and not (within and e - s > hi_ - lo_)
               for _, s, e in item.dates)


@dataclass(frozen=True)
class EventIndex:
    """What scoring needs from a fixed list of items, computed once (df, key words, flags)."""

    items: tuple[Item, ...]
    df: dict[str, int]
    key_words: dict[str, tuple[str, ...]]
    by_first_word: dict[str, tuple[str, ...]]
    entity_sets: tuple[frozenset[str], ...]
    speaker_words: tuple[frozenset[str], ...]
    has_dates: npt.NDArray[np.bool_]
    omega: npt.NDArray[np.float64]
    # a conversation's speakers: hubs the gate of lex leaves out for its turns only (CONV5)
    speakers: dict[str, tuple[str, ...]]

    @classmethod
    def build(cls, items: Sequence[Item]) -> EventIndex:
        df: dict[str, int] = {}
        sets = tuple(frozenset(it.entities) for it in items)
        for ks in sets:
            for k in ks:
                df[k] = df.get(k, 0) + 1
        words = {k: tuple(tokenize(k)) for k in sorted(df)}
        first: dict[str, list[str]] = {}
        for k, w in words.items():
            if w:
                first.setdefault(w[0], []).append(k)
        return cls(
            tuple(items), df, words, {w: tuple(ks) for w, ks in first.items()}, sets,
            tuple(frozenset(tokenize(it.speaker)) for it in items),
            np.asarray([bool(it.dates) for it in items], dtype=bool),
            np.asarray([it.omega for it in items], dtype=np.float64),
            _speakers(items),
        )


def _speakers(items: Sequence[Item]) -> dict[str, tuple[str, ...]]:
    turns = [it for it in items if it.kind == "turn"]
    return {c: tuple(sorted({it.speaker for it in turns if it.conversation == c}))
            for c in sorted({it.conversation for it in turns})}


@dataclass(frozen=True)
class Parts:
    """The score terms of every item for one query (each in [0, 1])."""

    lex: npt.NDArray[np.float64]
    ent: npt.NDArray[np.float64]
    time: npt.NDArray[np.float64]
    speaker: npt.NDArray[np.float64]
    omega: npt.NDArray[np.float64]
    # 1 where a time the question names (a date written in it, or one that is over) holds the
    # event: a connection of its own; None: no time named
    named: npt.NDArray[np.float64] | None = None

    def combine(self, weights: Weights) -> npt.NDArray[np.float64]:
        """s(t) (module docstring); 0 for events that share nothing with the question."""
        connected = (self.ent > 0) | ((self.lex > 0) & (self.lex >= weights.lex_strong))
        rel = np.where(connected, self.lex + weights.entity * self.ent, 0.0)
        if self.named is not None and weights.date_alone > 0:  # at least what the time gives
            rel = np.where(self.named > 0, np.maximum(rel, weights.date_alone), rel)
        return np.asarray(rel * (1.0 + weights.time * self.time)
                          * (1.0 + weights.speaker * self.speaker)
                          * (1.0 + weights.omega * self.omega), dtype=np.float64)


def score_parts(index: EventIndex, query: str, lexical: npt.ArrayLike,
                now: date | None = None) -> Parts:
    """The terms of s(t) for every item of `index`; `now`, the day the query is asked on,
    places the times it names relative to it ("last month": retrieval/when.py)."""
    items = index.items
    n = len(items)
    lex = np.asarray(lexical, dtype=np.float64).reshape(-1)
    if lex.shape[0] != n:
        raise ValueError(f"lexical scores: {lex.shape[0]}, items: {n} (one score an item)")
    terms: dict[str, frozenset[str]] = {}  # a conversation's: its speakers left out
    lex = lex.copy()
    for i in np.flatnonzero(lex).tolist():  # the gate, where there is a score to gate
        if (it := items[i]).kind == "turn" and terms.setdefault(it.conversation, query_terms(
                query, index.speakers.get(it.conversation, ()))).isdisjoint(content_stems(it.text)):
            lex[i] = 0.0
    top = float(lex.max()) if n else 0.0
    lex = lex / top if top > 0 else np.zeros(n)
    qtok = set(tokenize(query))
    # the words an entity row is matched by: not those of a date expression (the time q names
    # connects by `named`: "1" of "1 January 2019" is no entity "1"), nor a frame word of a
    # query that asks for a time and nothing else ("talk", "happen")
    etok = set(tokenize(untimed_asked(query)))
    if topicless(query):
        etok = {w for w in etok if stem(w) not in FRAME}
    matched = sorted(
        k for w in etok for k in index.by_first_word.get(w, ())
        if all(x in etok for x in index.key_words[k])
    )
    idf = {k: math.log(1.0 + n / index.df[k]) for k in matched}
    total = sum(idf.values())
    ent = np.zeros(n)
    if total > 0:
        for i, ks in enumerate(index.entity_sets):
            if ks:
                ent[i] = sum(v for k, v in idf.items() if k in ks) / total
    # Dates written absolutely in q, and with `now` the times it names that are over
    # (asked_ranges); without `now` a relative one names no time.
    named = distinct((*absolute(query), *(asked_ranges(query, now) if now is not None else ())),
                     MAX_ASKED)  # the first MAX_ASKED distinct ranges: bounded work
    tim = index.has_dates.astype(np.float64) if _ASKS_TIME.search(query) else np.zeros(n)
    held = None
    if named:
        held = np.asarray([any(in_range(it, r.start, r.end, within=True) for r in named)
                           for it in items],
                          dtype=np.float64)
        tim = np.maximum(tim, held)
    spk = np.asarray([1.0 if w and w <= qtok else 0.0 for w in index.speaker_words])
    return Parts(lex, ent, tim, spk, index.omega, held)


def assemble(
    items: Sequence[Item],
    scores: npt.ArrayLike,
    query: str,
    budget_words: int,
    weights: Weights = Weights(),
    allowed: Sequence[bool] | None = None,
) -> Context:
    """The top events and the turn before each, lowest priority cut first; date order.

    `allowed` (a date filter) also bars a turn from entering as the turn before."""
    sc = np.asarray(scores, dtype=np.float64)
    order = sorted((i for i in range(len(items)) if sc[i] > 0), key=lambda i: (-sc[i], i))
    pos = {(it.conversation, it.tick): i for i, it in enumerate(items) if it.kind == "turn"}
    # priority and reason of every candidate line: hits, then the turns before them
    prio: dict[int, tuple[float, str, float]] = {i: (float(sc[i]), "hit", float(sc[i]))
                                                 for i in order}
    if weights.before:
        for i in order:
            it = items[i]
            j = pos.get((it.conversation, it.tick - 1)) if it.kind == "turn" else None
            if (j is None or items[j].session != it.session
                    or (allowed is not None and not allowed[j])):
                continue
            p = weights.before_share * float(sc[i])
            if j not in prio or prio[j][0] < p:
                prio[j] = (p, "before", float(sc[i]))
    ranked = sorted(prio, key=lambda k: (-prio[k][0], items[k].tick, k))
    chosen: dict[int, Line] = {}
    used = 0
    for k in ranked:
        if used >= budget_words:
            break
        p, why, hit = prio[k]
        if why == "before" and pos.get((items[k].conversation, items[k].tick + 1)) not in chosen:
            continue  # the turn before a hit that did not fit explains nothing (CONV5)
        line = Line(items[k], hit if why == "before" else p, why,
                    items[k].render(labels=weights.labels))
        if used + line.words > budget_words:
            continue
        chosen[k] = line
        used += line.words
    ordered = sorted(chosen.items(), key=lambda kv: (kv[1].item.instant, kv[1].item.tick, kv[0]))
    return Context(
        query,
        budget_words,
        tuple(ln for _, ln in ordered),
        len(order),
        {"weights": weights.__dict__.copy(), "words": used},
    )


def context_from_items(
    items: Sequence[Item] | EventIndex,
    query: str,
    budget_words: int,
    lexical: npt.ArrayLike | Parts,
    *,
    weights: Weights = Weights(),
    date_from: date | None = None,
    date_to: date | None = None,
    now: date | None = None,
) -> Context:
    """Score (or reuse precomputed `Parts`), filter by date range (if given), assemble."""
    index = items if isinstance(items, EventIndex) else EventIndex.build(items)
    parts = (lexical if isinstance(lexical, Parts)
             else score_parts(index, query, lexical, now))
    sc = parts.combine(weights)
    keep: list[bool] | None = None
    if date_from is not None or date_to is not None:
        keep = [in_range(it, date_from, date_to) for it in index.items]
        sc = np.where(np.asarray(keep, dtype=bool), sc, 0.0)
    return assemble(index.items, sc, query, budget_words, weights, keep)


def build_context(
    vault: Vault,
    query: str,
    budget_words: int,
    *,
    conversation: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    weights: Weights = Weights(),
    k: int | None = None,
    now: date | None = None,
) -> Context:
    """Context over the vault's turn notes (tier L0) and the passages of the ordinary notes
    it finds, lexical scores from `vault.search` (`vault_turns`). The times the query names
    are read against `now` (default: the day of the vault's clock, `Vault.today`).

    The top `k` hits (default max(50, budget_words // 5)) give lex; every other turn has
    lex 0 and can still enter through its entity rows.
    """
    day = vault.today() if now is None else now  # one clock reading for both uses of it
    items, lex, n_hits = vault_turns(vault, query, k or max(50, budget_words // 5), conversation,
                                     decline=True, now=day)
    if n_hits == 0:  # the search declined: the question's topic is not in memory, so a
        weights = replace(weights, date_alone=0.0)  # time it names connects nothing alone
    corrected = stale_sources(vault.corpus())
    if corrected:  # a turn stating a value since rejected or superseded says so (corrections)
        items = tuple(replace(it, text=f"{it.text} [{'; '.join(corrected[it.note])}]")
                      if it.note in corrected else it for it in items)
    ctx = context_from_items(items, query, budget_words, lex, weights=weights,
                             date_from=date_from, date_to=date_to,
                             now=day)
    receipt = dict(ctx.receipt, turns=len(items), search_hits=n_hits)
    # relevant: some turn scored, whether or not a line fits the budget (CONV5)
    return Context(ctx.query, ctx.budget_words, ctx.lines, ctx.candidates, receipt,
                   relevant=ctx.candidates > 0)
