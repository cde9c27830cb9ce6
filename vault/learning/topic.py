"""What a note's learned score is about: the phrases of the queries it was used (or skipped) for.

A note's learned score (evidence.py) says how useful it was when examined; it was examined for
particular queries. Applied to every query alike, a note read for "when was Ravi Lindqvist's
employer founded" would be lifted for a question about two other organisations that merely
share its list (measured: unrelated held-out MRR -0.066 on the knowledge workload). So the
score acts on a query in proportion to how much of that query its evidence was about:

    gate(Q, d) = sum_{t in T(Q) & B_d} idf(t) / sum_{t in T'(Q)} idf(t)   in [0, 1]
    idf(t)     = ln(1 + N / max(df(t), 1))
    T'(Q)      = the phrases of T(Q) that a logged query held, or whose words logged queries
                 held (df(t) > 0, or df(w) > 0 for each word w of t: v9, below)

T(Q): the query's phrases, each pair of adjacent content terms (`tokenize`, stop words
removed: "ravi lindqvist", "lindqvist employer"), each once -- pairs, not single words, because
names share words (a question about Felix Brandt and Mira Ferro is not about Felix Ferro; with
single words it lifted him: unrelated MRR -0.022 on the knowledge workload, the gate's design
was chosen on that workload); B_d: the phrases of the queries whose searches
showed d in sessions that used it (`use` bag; the `skip` bag for sessions that passed it over,
which gates a negative score); N: the number of logged searches
and df(t): how many of them held t. A phrase every query holds ("born earlier") weighs little.
No shared phrase (a question about other things): gate 0, the note's score has no effect.

A phrase no logged query held (df(t) = 0) is judged by its words (v9):
- a word of it no logged query held (`word_df`, expansion.py) and no note of the vault holds
  (`held_words`, the search index's document frequency): the phrase is left out of the
  denominator. Such words are how a question is reworded ("employer established" for
  "organisation ... founded"), so they say nothing of what it is about, and the paraphrase of a
  question a note answered keeps gate 1 (the knowledge workload's related questions: every
  word its paraphrases add is in no note);
- a word of it no logged query held that some note holds (v18): the phrase counts in the
  denominator at ln(1 + N), as a new pairing of known words does. A word the vault can be
  searched by that no logged query asked about is what this question is about, and no note's
  use was about it. Before v18 such phrases were left out too, so "What did James and
  Samantha discover they both enjoy at McGee's bar?", whose one logged phrase is the two
  names, gave gate 1 to every turn used for another question about the two, and x1.16 put one
  above the turn "McGee's bar" finds first (LoCoMo conversations 5-10: each of the three
  unrelated first places lost, NOTES-LRN13.md). The line drawn is BM25's: a query word no
  document holds adds nothing to any note's score (Robertson & Zaragoza 2009, "The
  probabilistic relevance framework: BM25 and beyond"), so it cannot be what the question
  finds a note by; one some note holds can. Not against the gate of a note whose own text
  holds every such word of the phrase (v19): for that note the word is what the question finds
  it by, as BM25 reads it, not a sign the question is about something its use was not
  ("Was Lindqvist Works in Ferrisburg set up before Moreau Press?" after "When was Lindqvist
  Works founded?": "ferrisburg" is in the organisation's own note, "Its headquarters are in
  [[Ferrisburg]]", and v18 halved that note's gate; the turns that passed McGee's bar's
  answer hold none of the question's other new words, so their gates still fall). Measured on
  the knowledge workload's `--paraphrases described` set, the one the rule was chosen on:
  related lift v18 - v17 -0.0066, per-note form - v18 +0.0093 (NOTES-LRN14.md,
  NOTES-LRN15.md). Only for a note whose bag holds a logged phrase of the question (v23):
  with none matched, what is left of the question is its new pairings of known words, and
  on a vault of how-to pages the pairing a neighbouring page's use words hold is of the
  vault's commonest words ("How do I preview a linked note by hovering over the link?": only
  "link note" was left, matched by v11, gate 1 for "Internal links", which rose above the
  page the question is about, NOTES-LRN17.md). The exemption says the word is how the question
  finds the note; a logged phrase in its bag says the question is about what its use was
  about; without the second the first is no evidence of topic, as BM25's score of a note
  says nothing of what it was used for. Measured on the help vault (NOTES-LRN18.md): it
  takes back u26 for the three agents that lost it, and moves nothing on the knowledge
  workload (both paraphrase sets) or LoCoMo 1-4. The holding is the search index's postings
  (`held_words`, stem -> the ids of the notes holding it), an argument of every gate as the
  query is, so replay equals live;
- every word of it held by some logged query, never together: it counts in the denominator
  at the weight of a phrase held once, idf = ln(1 + N), as an unseen word does in the
  expansion channel's coverage. Known words in a new pairing are a different question about
  known things: "career high assists" after "career high points", "language tim" after "tim
  learning ... violin" (LoCoMo; NOTES-LRN9.md). Before v9 every unseen phrase was left out,
  so one shared phrase ("tim learning") gave gate 1 to a question about something else;
  counting every unseen phrase instead cost the knowledge workload's paraphrases a third of
  their lift (NOTES-GATE.md). The split is the usual treatment of an unseen event by what
  is known of its parts: a pairing of two known words has an expected frequency
  (df(a) df(b) / N under independence; Church & Hanks 1990, "Word association norms, mutual
  information, and lexicography") and was not observed, a pairing with an unknown word has
  none to compare with.

A query of one content term ("violin") has no phrase: with the note's use words (by stem,
expansion.py) its gate is 1 when they hold that term, else its phrase gate (1 when that
one-word query was logged and the note's bag holds it, else 0) (v10; v9 counted the lone
known word as a new pairing, gate 0, and a keyword search lost the expansion channel that
v8 gave it). The same holds pair by pair (v11): a new pairing both of whose words the note's
use words hold counts for the note, at the weight ln(1 + N) it counts against every other:
"Tim violin" is wholly about what a note used for "When did Tim start learning the violin?"
was used for, though no logged query paired the two words (v10 gave such a keyword search
gate 0), while "high assists" still counts against a note used for "career high points"
("assist" is no use word of it). Each bag keeps its `terms_cap` most frequent phrases (ties:
the newest, then by phrase), so the state stays bounded. Pure and deterministic: no clock,
sorted iteration.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

from ..notes.text import STOPWORDS, stem, tokenize
from ..notes.times_asked import untimed_asked


@functools.lru_cache(maxsize=4096)  # queries are short, and a replay folds each many times
def content_tokens(text: str) -> tuple[str, ...]:
    """A query's content tokens in order (`tokenize`, stop words removed), outside the times
    it names (`untimed_asked`: a time is no topic; expansion.py, learning v8; its loose times,
    "in August", "on Sunday", since v11, as the search's relevance reads a question)."""
    return tuple(t for t in tokenize(untimed_asked(text)) if t not in STOPWORDS)


def query_terms(text: str) -> list[str]:
    """The distinct phrases of a query, sorted: each pair of adjacent content terms ("ravi
    lindqvist"), or the one content term of a query that has only one; the words of its date
    expressions are no terms (`content_tokens`)."""
    words = content_tokens(text)
    if len(words) < 2:
        return sorted(set(words))
    return sorted({f"{a} {b}" for a, b in itertools.pairwise(words)})


Held = Mapping[str, frozenset[int]]  # a stem of the query -> the ids of the notes holding it
NO_HELD: Held = MappingProxyType({})
Holders = Callable[[Sequence[str]], Sequence[Collection[int]]]


class HeldWords(Mapping[str, frozenset[int]]):
    """`held_words`' answer: the query's stems some note holds (by the index's document
    frequency, read at once) and the ids of the notes holding each, read from the index's
    postings only when a gate asks for them -- `weights` asks only for the words new to the
    query log (v19) -- and once per stem. So a word most notes hold ("notes" in every note
    of a 5,000-note vault) costs nothing when the log held it (NOTES-LRN15.md: 86 ms a query
    read eagerly there)."""

    def __init__(self, tokens: Mapping[str, tuple[str, ...]], holders: Holders) -> None:
        self._tokens, self._holders = tokens, holders
        self._notes: dict[str, frozenset[int]] = {}

    def __getitem__(self, key: str) -> frozenset[int]:
        if key not in self._notes:
            self._notes[key] = frozenset().union(*self._holders(self._tokens[key]))
        return self._notes[key]

    def __contains__(self, key: object) -> bool:
        return key in self._tokens

    def __iter__(self) -> Iterator[str]:
        return iter(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)


def held_words(text: str, frequency: Callable[[Sequence[str]], list[int]],
               holders: Holders) -> Held:
    """The stems of the query's content tokens (`content_tokens`) that some note holds, by
    `frequency` (the search index's document frequency of each token), each with the ids of
    the notes holding it, by `holders` (the index's postings, read when asked: `HeldWords`):
    the words the vault can answer by, which a phrase new to the query log counts against the
    gate of every note but those holding them (v18, v19), sorted by stem."""
    tokens = sorted(set(content_tokens(text)))
    by_stem: dict[str, list[str]] = {}
    for t, n in zip(tokens, frequency(tokens), strict=True):
        if n > 0:
            by_stem.setdefault(stem(t), []).append(t)
    return HeldWords({s: tuple(by_stem[s]) for s in sorted(by_stem)}, holders)


def add_terms(bag: dict[str, int], terms: Iterable[str], cap: int) -> None:
    """Count `terms` into `bag` (in place), then keep its `cap` most frequent; among equal
    counts the terms just added win (so a new topic can enter a full bag), then by term."""
    new = set(terms)
    for t in sorted(new):
        bag[t] = bag.get(t, 0) + 1
    if len(bag) > cap:
        keep = sorted(bag.items(), key=lambda kv: (-kv[1], kv[0] not in new, kv[0]))[:cap]
        bag.clear()
        bag.update(sorted(keep))


class Phrases(NamedTuple):
    """A query's phrases as the gate weighs them (`weights`): (phrase, idf) of those a logged
    query held, sorted, and the summed weight ln(1 + N) of its new pairings of known words
    (module docstring, v9), which are in no note's bag (bags hold logged phrases only)."""

    logged: list[tuple[str, float]]
    new: float = 0.0
    word: str = ""  # a query of one content term: its stem (v10, `gate_of`)
    pairs: tuple[tuple[str, str], ...] = ()  # the new pairings' stems (v11, `gate_of`)
    held: float = 0.0  # ln(1 + N) per phrase with a new word some note holds (v18)
    holders: tuple[frozenset[int], ...] = ()  # each such phrase: the notes holding all (v19)
    holding: frozenset[int] = frozenset()  # the notes of any of `holders` (v19)


def weights(terms: Iterable[str], df: Mapping[str, int], searches: int,
            known: Mapping[str, int] | None = None, held: Held = NO_HELD) -> Phrases:
    """The query's `Phrases` against the log (`known`: its word df, by stem; None counts no
    new pairing; `held`: the stems of the query's words some note of the vault holds, each
    with the notes holding it, `held_words`, v18-v19): computed once per query, then
    `gate_of` per note."""
    out = []
    pairs: list[tuple[str, str]] = []
    holders: list[frozenset[int]] = []
    unseen = math.log1p(max(searches, 1))
    phrases = sorted(set(terms))  # `terms` read once: it may be an iterator
    for t in phrases:
        n = df.get(t, 0)
        if n > 0:
            out.append((t, math.log1p(max(searches, n) / n)))
        elif known is not None:
            stems = [stem(w) for w in t.split()]
            if all(known.get(s, 0) > 0 for s in stems):
                pairs.append((stems[0], stems[-1]))
            else:
                new = sorted({s for s in stems if known.get(s, 0) == 0 and s in held})
                if new:
                    holders.append(frozenset.intersection(*(held[s] for s in new)))
    word = stem(phrases[0]) if len(phrases) == 1 and " " not in phrases[0] else ""
    return Phrases(out, unseen * len(pairs), word, tuple(pairs), unseen * len(holders),
                   tuple(holders), frozenset().union(*holders))


def gate_of(phrases: Phrases, bag: Mapping[str, int], dilute: bool = True,
            words: Mapping[str, int] | None = None, note: int | None = None) -> float:
    """The gate from a query's `weights` and a note's bag; `dilute` False leaves the new
    pairings out of the denominator (the gate of a negative score, replay.py `prior_of`).
    A query of one content term has no phrase (phrases are pairs), so with the note's
    `words` (its use words, by stem) its gate is whether they hold that term (v10): a note
    used for "when did Tim start learning the violin" is wholly about "violin", as v8's
    channel had it; v9 counted the lone word as a new pairing and gave it 0. Otherwise its
    phrase gate as before: a one-word query logged is a term of the bag of the notes its
    searches showed in sessions that used them, the asking query or not (state.py). With
    `words`, a new pairing both of whose words they hold counts as matched (v11), at the
    weight it counts against the others. A phrase with a new word some note holds counts
    against every note but `note` when `note` holds all of its new words (v19) and its bag
    holds a logged phrase of the query (v23)."""
    if phrases.word and words is not None and phrases.word in words:
        return 1.0
    hit = sum(w for t, w in phrases.logged if t in bag)
    held = phrases.held
    if dilute and hit > 0.0 and note is not None and note in phrases.holding:
        held *= sum(1 for h in phrases.holders if note not in h) / len(phrases.holders)
    total = sum(w for _, w in phrases.logged) + (phrases.new + held if dilute else 0.0)
    if dilute and words is not None and phrases.pairs:
        unseen = phrases.new / len(phrases.pairs)
        hit += unseen * sum(1 for a, b in phrases.pairs if a in words and b in words)
    return 0.0 if total <= 0.0 else min(1.0, hit / total)


def gate(terms: Iterable[str], bag: Mapping[str, int], df: Mapping[str, int],
         searches: int, known: Mapping[str, int] | None = None) -> float:
    """The share of the query (by idf) that the note's evidence was about (module docstring)."""
    return gate_of(weights(terms, df, searches, known), bag)
