"""BM25 keyword signal over title (x3), aliases, frontmatter title, description and tags (x2) and
body (x1, inline `#tags` among its words).

Variant: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework") with
the non-negative idf used by Lucene:

    idf(t)      = ln( (N - n_t + 0.5) / (n_t + 0.5) + 1 )
    score(d, q) = sum_{t in q} idf(t) * f(t,d) * (k1 + 1)
                  / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2, b = 0.75, over English Snowball stems (text.stems) of the tokens: an index
built with `stem` (every corpus build) stems the documents it is given and every query, so
"develops" finds "developed" (on SciFact train, BM25 nDCG@10 0.668 -> 0.704; NOTES-F.md).
Fields are combined by term-frequency weighting: the document is the
title's tokens three times, the aliases' (and frontmatter `title`, `description` and `tags`: a note
tagged `zeppelin` in its frontmatter is found by "zeppelin", as Obsidian's search finds it)
twice and the body once,
so f and |d| count weighted occurrences. This equals `rank_bm25.BM25Okapi` over that repeated
token list with its idf replaced by the formula above (checked to 1e-6 in the tests). Query
terms count with multiplicity, as BM25Okapi does, except the query's stop words (Lucene's 33
English ones, `QUERY_STOPWORDS`): together they count as one term, each occurrence 1/s of a
term for s of them in the query. BM25 adds each query term as independent evidence; a
sentence asked of one-line notes holds eight or more function words ("of", "the", "in", each
in a third to half of the titles), whose sum outweighed a rare shared word. Dropping them (as
Lucene's analyzer does) cost the short questions with a single one ("what was her first
pet called?"), where it breaks ties between turns. Counting them as one term keeps those
questions' scores (s = 1), a query of stop words only ranks as before (every weight scaled by
1/s), and a verbose query's function words weigh one term (session 37, NOTES-QUAL13.md: on
titlecorpus BM25 nDCG@10 0.543 -> 0.568, Pyserini's 0.568; LoCoMo's BM25 and every set's
fused ranking unchanged within their intervals).
Documents keep every word (the index is unchanged).

The index stores raw term frequencies (signals/postings.py: a base plus a delta) and the
document lengths, never the weights: idf, avgdl and the length norm are computed at query time
for the query terms' postings only, so replacing one note (`updated`) changes df, |d| and the
total length in O(that note) and the scores stay exactly those of a fresh build of the new
corpus (the same expression over the same numbers, terms summed in term order). Removing
notes (`removed`) likewise changes df, |d|, N and the total by what the removed notes held.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from ...cancel import checked
from ...notes.note import frontmatter_tags
from ...notes.properties import property_text
from ...notes.text import stems, tokenize
from ...shift import Shift
from ...storage.corpus import Corpus
from .postings import Postings
from .vocabulary import Vocabulary

K1 = 1.2
B = 0.75
# Lucene's English stop words (EnglishAnalyzer's default set), as a query's function words
QUERY_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split())
TITLE_WEIGHT = 3
ALIAS_WEIGHT = 2
BODY_WEIGHT = 1

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Doc = Sequence[str]


def field_tokens(title: str, aliases: Sequence[str], description: str, body: str) -> list[str]:
    """The weighted token list BM25 sees for one note (title x3, aliases/description x2, body)."""
    side = tokenize(" ".join([*aliases, description]))
    return tokenize(title) * TITLE_WEIGHT + side * ALIAS_WEIGHT + tokenize(body) * BODY_WEIGHT


def described(frontmatter: Mapping[str, Any], title: str, body: str = "") -> str:
    """What a note's frontmatter adds to its aliases' field: its `title` (a string whose
    words are not those of `title`, the file's), its `description` (a string; both keys in
    any case, as `frontmatter_tags` reads `Tags:`), its tags (note.py `frontmatter_tags`)
    and its other properties' words that neither `title` nor `body` holds
    (notes/properties.py: `status: blocked`, `owner: "[[Alice]]"`), space-joined. A vault
    of Hugo, Jekyll or Zettelkasten notes names each `2024-01-05.md` or `202401051230.md`
    and writes the title in `title:`; Obsidian's search finds the note by it (properties
    are searched)."""
    found = {"title": "", "description": ""}
    for key, value in frontmatter.items():
        low = key.lower() if key.isascii() else ""
        if low in found and isinstance(value, str) and not found[low]:
            found[low] = value
    text, named = found["description"], found["title"]
    if named and tokenize(named) != tokenize(title):
        text = f"{named} {text}" if text else named
    tags = frontmatter_tags(frontmatter) if frontmatter else []
    props = property_text(frontmatter, f"{title}\n{body}") if frontmatter else ""
    return " ".join(p for p in (text, *tags, props) if p)


def note_document(corpus: Corpus, i: int) -> list[str]:
    """The weighted token list of the note at position `i`."""
    return field_tokens(corpus.titles[i], corpus.aliases[i],
                        described(corpus.frontmatter[i], corpus.titles[i], corpus.bodies[i]),
                        corpus.bodies[i])


def corpus_documents(corpus: Corpus) -> Iterator[list[str]]:
    """Weighted token lists for every note of a corpus, by position (streamed)."""
    return (note_document(corpus, i) for i in range(len(corpus)))


def query_weights(tokens: Sequence[str], terms: Sequence[str]) -> dict[str, float]:
    """Each query term's weight (`terms[i]` is the term of `tokens[i]`): its occurrences,
    those of a stop word each 1/s for the query's s stop-word occurrences (module
    docstring); exact: integer counts, one division per term."""
    plain: Counter[str] = Counter()
    stop: Counter[str] = Counter()
    for token, term in zip(tokens, terms, strict=True):
        (stop if token in QUERY_STOPWORDS else plain)[term] += 1
    s = sum(stop.values())
    return {t: plain[t] + (stop[t] / s if stop[t] else 0)
            for t in sorted(plain.keys() | stop.keys())}


@dataclass(frozen=True)
class Bm25Index:
    """Term frequencies, document frequencies and lengths of every document (module docstring)."""

    vocabulary: Vocabulary
    postings: Postings  # values = f(t, d)
    df: I64  # documents containing each term id, now
    lengths: F64  # |d| (weighted tokens) by position
    total: int  # sum of |d|
    n_docs: int
    k1: float = K1
    b: float = B
    stem: bool = False  # documents and queries are stemmed by the index (module docstring)

    @classmethod
    def build(cls, corpus: Corpus) -> Bm25Index:
        """Index every note of `corpus`."""
        return cls.from_documents(checked(corpus_documents(corpus)), stem=True)

    @classmethod
    def from_documents(cls, docs: Iterable[Doc], k1: float = K1, b: float = B,
                       stem: bool = False) -> Bm25Index:
        """Index tokenized documents (position = row; stemmed here with `stem`); term ids
        in first-seen order."""
        vocab: dict[str, int] = {}
        ids = array("i")  # 4 bytes a token (a list of ints would take ~36)
        lengths = array("q")
        for raw in docs:
            doc = stems(raw) if stem else raw
            ids.extend(vocab.setdefault(t, len(vocab)) for t in doc)
            lengths.append(len(doc))
        n, v = len(lengths), len(vocab)
        lens = np.frombuffer(lengths, dtype=np.int64) if n else np.zeros(0, np.int64)
        cols = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, np.int32)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        from scipy import sparse

        # rows given by the lengths (CSR, no per-token row array), counted in int32 (exact),
        # transposed to CSC, then duplicates summed in place: the canonical term frequencies
        tf = sparse.csr_matrix((np.ones(cols.size, np.int32), cols, indptr), shape=(n, v)).tocsc()
        del ids, cols
        tf.sum_duplicates()
        postings = Postings.from_csc(tf.indptr, tf.indices, tf.data, n)
        df = np.diff(tf.indptr).astype(np.int64)
        return cls(Vocabulary.of(vocab), postings, df, lens.astype(np.float64), int(lens.sum()),
                   n, k1, b, stem)

    @property
    def delta_docs(self) -> int:
        """Documents held in the delta or removed since the last full build."""
        return len(self.postings.delta_docs) + self.postings.removed_docs

    def removed(self, shift: Shift, docs: Sequence[Doc]) -> Bm25Index:
        """The index without the documents at `shift.removed` (`shift.n` = `n_docs`), every
        later one moved down; `docs[k]` is the document this index holds at
        `shift.removed[k]`, as given to `from_documents`. n_t falls by one for each distinct
        term of a removed document, |d| and N lose its rows, the total its lengths: the
        numbers a fresh build of the other documents counts (postings.py `removed`)."""
        shift.check(self.n_docs, len(docs), "documents")
        if not shift.removed:
            return self
        df = self.df.copy()
        total = self.total
        for raw in docs:
            doc = stems(raw) if self.stem else raw
            df[[self.vocabulary[t] for t in set(doc)]] -= 1
            total -= len(doc)
        return Bm25Index(self.vocabulary, self.postings.removed(shift), df,
                         self.lengths[shift.keep], total, shift.kept, self.k1, self.b,
                         self.stem)

    def updated(self, changes: Mapping[int, tuple[Doc | None, Doc]], n_docs: int) -> Bm25Index:
        """The index with each position's document replaced: `changes[p] = (old, new)`, `old`
        being what this index holds for p (None: p is new, p >= self.n_docs); documents as
        given to `from_documents` (stemmed here when the index stems)."""
        if self.stem:
            changes = {p: (None if old is None else stems(old), stems(new))
                       for p, (old, new) in changes.items()}
        fresh = sorted(t for t in {t for _, new in changes.values() for t in new}
                       if t not in self.vocabulary)
        vocab = self.vocabulary.with_terms(fresh)
        df = np.zeros(len(vocab), dtype=np.int64)
        df[: self.df.shape[0]] = self.df
        lengths = np.zeros(n_docs, dtype=np.float64)
        lengths[: self.n_docs] = self.lengths[:n_docs]
        total = self.total
        docs: dict[int, tuple[I64, F64]] = {}
        for p, (old, new) in sorted(changes.items()):
            if old is None and p < self.n_docs:
                raise ValueError(f"position {p} is indexed: its old document is needed")
            if old is not None:
                df[[vocab[t] for t in set(old)]] -= 1
                total -= len(old)
            counts = Counter(new)
            ids = np.asarray([vocab[t] for t in counts], dtype=np.int64)
            vals = np.asarray(list(counts.values()), dtype=np.float64)
            order = np.argsort(ids)
            docs[p] = (ids[order], vals[order])
            df[ids] += 1
            lengths[p] = len(new)
            total += len(new)
        return Bm25Index(vocab, self.postings.replace(docs), df, lengths, total, n_docs,
                         self.k1, self.b, self.stem)

    @cached_property
    def _norms(self) -> F64:
        """k1 (1 - b + b |d| / avgdl) of every document, once per index state (elementwise,
        so the same numbers as computing it per posting)."""
        n, k1, b = self.n_docs, self.k1, self.b
        avgdl = self.total / n if n else 0.0
        if avgdl <= 0:
            return np.full(n, k1)
        out: F64 = k1 * (1.0 - b + b * self.lengths / avgdl)
        return out

    def score_tokens(self, query_tokens: Sequence[str]) -> F64:
        """BM25 score of every document for a tokenized query (multiplicity counts)."""
        n = self.n_docs
        y = np.zeros(n, dtype=np.float64)
        terms = stems(query_tokens) if self.stem else query_tokens
        weights = query_weights(query_tokens, terms)
        counts = {t: w for t, w in weights.items() if t in self.vocabulary}
        if not counts or n == 0:
            return y
        k1 = self.k1
        for term in sorted(counts):  # term order, not id order: ids depend on history
            j = self.vocabulary[term]
            rows, f32 = self.postings.entries(j)
            if rows.size == 0:
                continue
            df = float(self.df[j])
            idf = float(np.log(np.asarray([(n - df + 0.5) / (df + 0.5) + 1.0]))[0])
            # idf * f * (k1 + 1) / (f + norm) * count, one IEEE operation at a time in that
            # order and in place (a * b = b * a and a + b = b + a exactly; * 1.0 is the
            # identity): the same numbers as the expression, with fewer temporaries
            f = f32.astype(np.float64)
            den = self._norms[rows]
            den += f
            v = f
            v *= idf
            v *= k1 + 1.0
            v /= den
            if counts[term] != 1:
                v *= counts[term]
            np.add.at(y, rows, v)  # rows are distinct: the same as y[rows] += v
        return y

    def score(self, query: str) -> F64:
        """BM25 score of every document for a query string."""
        return self.score_tokens(tokenize(query))

    def frequency(self, tokens: Sequence[str]) -> list[int]:
        """n_t, the documents containing each token (its stem, when the index stems; 0 for
        a token no document holds)."""
        if self.stem:
            tokens = stems(tokens)
        return [int(self.df[self.vocabulary[t]]) if t in self.vocabulary else 0 for t in tokens]

    def holders(self, tokens: Sequence[str], ids: Sequence[int]) -> list[frozenset[int]]:
        """The documents holding each token (`frequency`'s n_t documents), as their `ids`
        (the corpus's ids, by row); none for a token no document holds."""
        if self.stem:
            tokens = stems(tokens)
        rows = [self.postings.column(self.vocabulary[t])[0].tolist() if t in self.vocabulary
                else [] for t in tokens]
        return [frozenset(map(ids.__getitem__, col)) for col in rows]
