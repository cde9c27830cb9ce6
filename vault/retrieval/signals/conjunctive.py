"""Conjunctive signal: engram's binding code (terms and near pairs of terms), IDF-cosine.

Units of a text are its content terms t_i (tokens minus stop words, in order) and every
unordered pair {t_i, t_j} with 0 < j - i < 4 (the unordered-window feature of Metzler & Croft's
sequential dependence model, 2005). Each term is hashed with blake2b to a 32-bit address
(stable across processes, unlike Python's `hash`) and each pair to a 32-bit mix of its two
term addresses (`pair_hash`, vectorised: hashing every pair with blake2b cost 3 us a pair,
10 minutes for a million notes), so "auth on Monday" and "auth on Tuesday" are different
addresses however similar their embeddings are.

Weighting (engram's frozen choice, "IDF-cosine"): with N notes and n_u the number of notes
containing unit u, idf(u) = ln((N + 1) / (n_u + 1)) + 1, computed as c - l_u with
c = ln(N + 1) + 1 and l_u = ln(n_u + 1). A note is the binary unit vector x_d[u] = idf(u),
L2-normalised; the query likewise. The score is the cosine conj(d, q) = <x_d, x_q>, in [0, 1].

Incremental and exact: the index keeps which units each note has (signals/postings.py, a base
plus a delta, and the same lists by note), n_u, and per note m_d = |units(d)|,
S1_d = sum_u l_u and S2_d = sum_u l_u^2, so that

    ||x_d||^2 = sum_u (c - l_u)^2 = m_d c^2 - 2 c S1_d + S2_d

is computed at query time for the notes in the query units' postings only. A new N changes c
alone; replacing a note (`updated`) changes n_u for the units it gained or lost, and S1, S2
are recomputed (same order, same arithmetic as a fresh build) for the notes holding those
units. So scores after any sequence of updates equal those of a fresh build, bit for bit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ..text import content_terms, tokenize
from .postings import Postings

WINDOW = 4  # pairs of content terms fewer than WINDOW positions apart

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]


def unit_hash(unit: str) -> int:
    """Stable 32-bit address of a unit (blake2b, 4-byte digest, big endian)."""
    return int.from_bytes(hashlib.blake2b(unit.encode("utf-8"), digest_size=4).digest(), "big")


def units(terms: Sequence[str], window: int = WINDOW) -> set[str]:
    """Terms and unordered pairs of terms fewer than `window` apart ("a\\x00b", a <= b): the
    units as strings (a reference for the tests; the index hashes them in `token_codes`)."""
    out = set(terms)
    for i, a in enumerate(terms):
        for b in terms[i + 1 : i + window]:
            if a != b:
                lo, hi = (a, b) if a < b else (b, a)
                out.add(f"{lo}\x00{hi}")
    return out


@lru_cache(maxsize=1 << 20)
def term_hash(term: str) -> int:
    """`unit_hash` of a term, memoised (a vault's vocabulary is small next to its text)."""
    return unit_hash(term)


def pair_hash(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> U32:
    """32-bit addresses of the unordered pairs {a_i, b_i} of term addresses: splitmix64's
    finaliser (Steele, Lea & Flood 2014) over (min << 32 | max), high half. Vectorised, and
    symmetric, so a pair has one address whichever term comes first."""
    lo = np.minimum(a, b).astype(np.uint64)
    hi = np.maximum(a, b).astype(np.uint64)
    x = (lo << np.uint64(32)) | hi
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return (x >> np.uint64(32)).astype(np.uint32)


def token_codes(tokens: Sequence[str], window: int = WINDOW) -> U32:
    """Sorted unique hashed units of a tokenized text: the terms' blake2b addresses and the
    `pair_hash` of every pair of distinct terms fewer than `window` apart."""
    terms = content_terms(tokens)
    h = np.fromiter((term_hash(t) for t in terms), dtype=np.uint32, count=len(terms))
    parts = [h]
    for k in range(1, window):
        a, b = h[:-k], h[k:]
        keep = a != b
        parts.append(pair_hash(a[keep], b[keep]))
    return np.unique(np.concatenate(parts))


BLOCK = 65_536  # notes hashed per vectorised block in `many_codes`


def many_codes(texts: Iterable[str], window: int = WINDOW) -> tuple[U32, I64]:
    """`text_codes` of every text at once: (the codes concatenated, how many per text).
    Vectorised over blocks of texts (a Python loop remains only to tokenize)."""
    out: list[U32] = []
    counts: list[I64] = []
    flat: list[int] = []
    lens: list[int] = []

    def flush() -> None:
        h = np.asarray(flat, dtype=np.uint32)
        note = np.repeat(np.arange(len(lens), dtype=np.uint64), lens)
        keys = [(note << np.uint64(32)) | h.astype(np.uint64)]
        for k in range(1, window):
            keep = (note[:-k] == note[k:]) & (h[:-k] != h[k:])
            keys.append((note[:-k][keep] << np.uint64(32))
                        | pair_hash(h[:-k][keep], h[k:][keep]).astype(np.uint64))
        u = np.unique(np.concatenate(keys))  # by note, then by code
        out.append((u & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        counts.append(np.bincount((u >> np.uint64(32)).astype(np.int64),
                                  minlength=len(lens)).astype(np.int64))
        flat.clear()
        lens.clear()

    for text in texts:
        terms = content_terms(tokenize(text))
        flat.extend(term_hash(t) for t in terms)
        lens.append(len(terms))
        if len(lens) == BLOCK:
            flush()
    if lens:
        flush()
    if not out:
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.int64)
    return np.concatenate(out), np.concatenate(counts)


def text_codes(text: str, window: int = WINDOW) -> U32:
    """Sorted unique hashed units of a text."""
    return token_codes(tokenize(text), window)


def note_text(corpus: Corpus, i: int) -> str:
    """What the conjunctive channel reads of a note: title, aliases and body."""
    return " ".join([corpus.titles[i], *corpus.aliases[i], corpus.bodies[i]])


def _sums(l_entries: F64, ptr: I64) -> tuple[F64, F64]:
    """(sum l, sum l^2) per segment ptr[i]:ptr[i+1] (0 for empty segments)."""
    n = int(ptr.shape[0]) - 1
    s1, s2 = np.zeros(n), np.zeros(n)
    has = np.diff(ptr) > 0
    if has.any():
        s1[has] = np.add.reduceat(l_entries, ptr[:-1][has])
        s2[has] = np.add.reduceat(l_entries * l_entries, ptr[:-1][has])
    return s1, s2


@dataclass(frozen=True)
class ConjunctiveIndex:
    """Hashed units of every note, their document frequencies and the norm sums."""

    vocab: U32  # unit hashes, column id -> hash (the base's sorted, later ones appended)
    columns: Mapping[int, int]  # hashes appended since the base build -> column id
    postings: Postings  # column -> notes holding the unit
    row_ptr: I64  # base notes' column ids: row_cols[row_ptr[d]:row_ptr[d+1]], by hash
    row_cols: npt.NDArray[np.integer]
    delta_cols: Mapping[int, I64]  # notes replaced since the base build -> their column ids
    df: I64  # n_u by column id
    m: I64  # units per note
    s1: F64
    s2: F64
    n_docs: int

    @classmethod
    def build(cls, corpus: Corpus) -> ConjunctiveIndex:
        """Index title + aliases + body of every note."""
        return cls.from_texts(note_text(corpus, i) for i in range(len(corpus)))

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> ConjunctiveIndex:
        flat, counts = many_codes(texts)
        n = int(counts.shape[0])
        vocab = np.unique(flat)
        cols = np.empty(flat.shape[0], dtype=np.int32)
        for lo in range(0, flat.shape[0], 1 << 24):  # int32 columns without an int64 copy
            cols[lo : lo + (1 << 24)] = np.searchsorted(vocab, flat[lo : lo + (1 << 24)])
        del flat
        row_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=row_ptr[1:])
        rows = np.repeat(np.arange(n, dtype=np.int64), counts)
        df = np.bincount(cols, minlength=vocab.size).astype(np.int64)
        postings = Postings.build(rows, cols.astype(np.int64), n, int(vocab.size))
        s1, s2 = _sums(np.log(df[cols] + 1.0), row_ptr)
        return cls(vocab.astype(np.uint32), {}, postings, row_ptr, cols, {}, df, counts,
                   s1, s2, n)

    @property
    def delta_docs(self) -> int:
        return len(self.delta_cols)

    def _column(self, code: int) -> int | None:
        base = int(self.postings.n_base_columns)
        if base:
            pos = int(np.searchsorted(self.vocab[:base], np.uint32(code)))  # no upcast copy
            if pos < base and int(self.vocab[pos]) == code:
                return pos
        return self.columns.get(code)

    def _note_cols(self, d: int) -> I64:
        got = self.delta_cols.get(d)
        if got is not None:
            return got
        return self.row_cols[self.row_ptr[d]:self.row_ptr[d + 1]].astype(np.int64)

    def updated(self, changes: Mapping[int, str], n_docs: int) -> ConjunctiveIndex:
        """The index with the note at each position p replaced by the text `changes[p]`
        (p >= self.n_docs: a new note)."""
        vocab, columns = self.vocab, dict(self.columns)
        new_codes = {p: text_codes(t) for p, t in sorted(changes.items())}
        unseen = sorted({int(c) for cs in new_codes.values() for c in cs
                         if self._column(int(c)) is None})
        if unseen:
            for c in unseen:
                columns[c] = int(vocab.size) + len(columns) - len(self.columns)
            vocab = np.concatenate([vocab, np.asarray(unseen, dtype=np.uint32)])
        df = np.zeros(vocab.size, dtype=np.int64)
        df[: self.df.shape[0]] = self.df
        m = np.zeros(n_docs, dtype=np.int64)
        m[: self.n_docs] = self.m[:n_docs]
        probe = ConjunctiveIndex(vocab, columns, self.postings, self.row_ptr, self.row_cols,
                                 self.delta_cols, df, m, self.s1, self.s2, n_docs)
        delta_cols = dict(self.delta_cols)
        docs: dict[int, tuple[I64, F64]] = {}
        touched: set[int] = set()
        for p, codes in new_codes.items():
            if p < self.n_docs:
                old = self._note_cols(p)
                df[old] -= 1
                touched.update(int(c) for c in old)
            cols = np.asarray([probe._column(int(c)) for c in codes], dtype=np.int64)
            df[cols] += 1
            touched.update(int(c) for c in cols)
            m[p] = cols.size
            delta_cols[p] = cols
            docs[p] = (cols, np.zeros(cols.size))
        postings = self.postings.replace(docs)
        changed = sorted(c for c in touched if df[c] != (self.df[c] if c < self.df.shape[0]
                                                          else 0))
        out = ConjunctiveIndex(vocab, columns, postings, self.row_ptr, self.row_cols,
                               delta_cols, df, m, self.s1, self.s2, n_docs)
        return out._renormed(changed, sorted(new_codes))

    def _renormed(self, changed_cols: Sequence[int], changed_docs: Sequence[int]
                  ) -> ConjunctiveIndex:
        """Recompute S1, S2 for every note holding a unit whose n_u changed, and for the
        changed notes themselves (same order and arithmetic as `from_texts`)."""
        hit: set[int] = set(changed_docs)
        for c in changed_cols:
            hit.update(int(r) for r in self.postings.column(c)[0])
        docs = np.asarray(sorted(hit), dtype=np.int64)
        s1 = np.zeros(self.n_docs)
        s2 = np.zeros(self.n_docs)
        s1[: self.s1.shape[0]] = self.s1[: self.n_docs]
        s2[: self.s2.shape[0]] = self.s2[: self.n_docs]
        if docs.size:
            parts = [self._note_cols(int(d)) for d in docs]
            ptr = np.zeros(docs.size + 1, dtype=np.int64)
            np.cumsum([len(x) for x in parts], out=ptr[1:])
            cols = np.concatenate(parts)
            a, b = _sums(np.log(self.df[cols] + 1.0), ptr)
            s1[docs], s2[docs] = a, b
        return ConjunctiveIndex(self.vocab, self.columns, self.postings, self.row_ptr,
                                self.row_cols, self.delta_cols, self.df, self.m, s1, s2,
                                self.n_docs)

    def score(self, query: str) -> F64:
        """IDF-cosine of the query's units against every note (units unseen in notes drop)."""
        return self.score_tokens(tokenize(query))

    def score_tokens(self, query_tokens: Sequence[str]) -> F64:
        """`score` for an already tokenized query."""
        y = np.zeros(self.n_docs, dtype=np.float64)
        if self.n_docs == 0:
            return y
        cols = [c for c in (self._column(int(h)) for h in token_codes(query_tokens))
                if c is not None and self.df[c] > 0]
        if not cols:
            return y
        c0 = float(np.log(np.asarray([self.n_docs + 1.0]))[0]) + 1.0
        idf = c0 - np.log(self.df[np.asarray(cols)] + 1.0)
        w = idf / np.linalg.norm(idf)
        for j, c in enumerate(cols):  # hash order (token_codes is sorted)
            rows = self.postings.column(c)[0]
            norm = np.sqrt(self.m[rows] * (c0 * c0) - 2.0 * c0 * self.s1[rows] + self.s2[rows])
            y[rows] += idf[j] / norm * w[j]
        return y
