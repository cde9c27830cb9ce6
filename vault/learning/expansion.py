"""Query-log document expansion (learning v6): a note is found by the words of the queries it
was used for.

A note's learned score (evidence.py) says how useful it was; the topic gate (topic.py) says on
which queries, by shared *pairs* of words. Neither finds a note for a new question that shares
single informative words with the questions it answered before ("Why did Jon start his dance
studio?" after "What is Jon offering at his dance studio?"), and neither can raise a note that
the query's words miss. Click logs as document expansion does: the queries whose results an
agent used a document from are added to the document as text (Joachims 2002, "Optimizing search
engines using clickthrough data", KDD; Amitay, Darlow, Konopnicki & Weiss 2005, "Queries as
anchors: selection by association", Hypertext; Xue et al. 2004, "Optimizing web search using
web click-through data", CIKM; Nogueira et al. 2019, "Document expansion by query prediction"
predicts such queries instead of logging them). Here they are kept apart from the note's text,
as a learned profile, and read through their own channel of the ranking:

- Profile (`NoteState.use_words`): when a session ends with a note used (rewards.py), the
  Snowball stems of the content words (`query_words`: BM25's tokens and stems, stop words
  removed, and the words of the query's date expressions too: v8, below) of the queries it
  was used for are counted into its bag, each once per session; the
  queries it was used for are those of the last search that showed it before each read,
  citation or rewrite of it (`asking_queries`), or every search that showed it for a note used
  otherwise (the agent's answer). A bag keeps its `terms_cap` most frequent stems (topic.py
  `add_terms`), so the state stays bounded.
- Word weights from the query log: idf(w) = ln(1 + N / df(w)), N the logged searches and df(w)
  how many of them held w (`LearnedState.word_df`); a query word no logged search held counts
  at the largest weight ln(1 + N), so the words a query adds beyond what notes were used for
  dilute the match (measured on LoCoMo: without it the channel cost unrelated questions).
- Channel value (v9): x(d, Q) = q(d) g(Q, d) c(Q, d) in [0, 1], with the word coverage
      c(Q, d) = sum_{w in W(Q) & B_d} idf(w) / sum_{w in W(Q)} idf(w):
  the note's positive learned score (the Beta posterior of use, evidence.py; 0 for a note
  never used or passed over more than used) times the topic gate g of topic.py (the share of
  the query, by phrases, its evidence was about) times the share of the query's word weight
  its bag covers. No shared word or no shared phrase: x = 0, the note is untouched.
  The coverage acts once: the channel holds the gated share q g c, the multiplicative
  topic-free part (replay.py `free_of`) the rest q (1 - g) c. v6-v8 fused x = q c, so the
  ungated share acted twice (channel and free part) on top of the gated prior q g: a turn
  used for a neighbouring question ("Tim learning the violin" for "Which language is Tim
  learning?") was lifted by all three, and LoCoMo's held-out unrelated questions lost MRR
  -0.012 on conversations 5-10, below issue 31's -0.005 floor (NOTES-GATE.md). The rank-fused
  channel can lift a note from anywhere in the list, so it takes only the share the topic
  gate vouches for; the bounded factor (x1.2 at most, held below the notes the query names)
  takes the rest. A paraphrase of a question the note answered has gate 1 (topic.py: new
  words leave the gate) and keeps the whole channel, which is what moves the knowledge
  workload's reworded questions (NOTES-LRN9.md).
- Ranking (vault/retrieval/pipeline.py stage 3, scope.py `expansion_channel`): the channel is
  fused with the query-dependent signals, adding w_learned x(d) / (k + rank + 1) (weight 0.5,
  `[search] weights.learned`; 0 turns it off), and nothing it lifts passes a note the query
  names that ranked above it without the channel (scope.py `hold_below`: the notes a query
  names are its own evidence of what it is about; without the hold, on the knowledge workload
  a note used for "Felix Ferro" passed Felix Brandt for "Is Mira Ferro older than Felix
  Brandt?").

Dates are not topics (v8). A query's date expressions ("in August 2023", "last weekend
before April 10, 2023": vault/notes/clocks.py `untimed`, what `resolve` recognises; since v11
also the loose times of a question, "in August", "on Sunday": notes/times_asked.py
`untimed_asked`) are left
out of its words, here and in the topic gate's phrases (topic.py), as they are everywhere a
question's words are matched against a note's (retrieval/relevance.py, the conversation
context): a time the question names is matched as a time, never as words. Otherwise a turn
used for "What happened to John's job in August 2023?" matched "What did John do the week
before August 3, 2023 involving his kids?" on "august" and "2023", the rarest words of both
(LoCoMo, four conversations: three of the unrelated questions that lost a place lost it so;
NOTES-LRN.md).

Pure and deterministic: stems, sorted iteration, no clock; replay folds the same events into
the same bags (`replay == live`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..notes.text import stem
from .rewards import Event
from .topic import content_tokens

Weighted = tuple[list[tuple[str, float]], float]  # (word, idf) of the logged words; total idf


def query_words(text: str) -> list[str]:
    """The distinct Snowball stems of a query's content tokens outside its date expressions
    (`untimed_asked`, module docstring), sorted (BM25's terms)."""
    return sorted({stem(t) for t in content_tokens(text)})


def word_weights(words: Sequence[str], df: Mapping[str, int], searches: int) -> Weighted:
    """(word, idf) for the query's words some logged search held, sorted, and the query's
    total idf, where a word no logged search held counts ln(1 + N) (module docstring)."""
    out: list[tuple[str, float]] = []
    total = 0.0
    unseen = math.log1p(max(searches, 1))
    for w in sorted(set(words)):
        n = df.get(w, 0)
        idf = math.log1p(max(searches, n) / n) if n > 0 else unseen
        if n > 0:
            out.append((w, idf))
        total += idf
    return out, total


def coverage(weighted: Weighted, bag: Mapping[str, int]) -> float:
    """The share of the query's idf that the bag holds, in [0, 1]; 0 for an empty bag."""
    pairs, total = weighted
    if total <= 0.0 or not bag:
        return 0.0
    return min(1.0, sum(w for t, w in pairs if t in bag) / total)


def asking_queries(events: Sequence[Event]) -> dict[int, list[str]]:
    """Per note shown in a session's events, the queries it was used for: the query of the
    last search that showed it before each read, citation or rewrite of it; a note never
    acted on gets every query that showed it (used, if at all, through the answer)."""
    last: dict[int, str] = {}
    shown: dict[int, list[str]] = {}
    acted: dict[int, list[str]] = {}
    for ev in events:
        if ev.kind == "search":
            query = str(ev.data.get("query", ""))
            for note, _, _ in ev.shown():
                last[note] = query
                shown.setdefault(note, []).append(query)
        elif ev.kind in ("read", "write"):
            targets = [int(t) for t in ev.data.get("linked", [])] if ev.kind == "write" else []
            if ev.note is not None:
                targets.append(ev.note)
            for note in targets:
                if note in last:
                    acted.setdefault(note, []).append(last[note])
    return {note: acted.get(note, queries) for note, queries in sorted(shown.items())}
