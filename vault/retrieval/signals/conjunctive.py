"""Conjunctive signal: engram's binding code (terms and near pairs of terms), IDF-cosine.

Units of a text are its content terms and the unordered pairs of near terms, hashed to 32-bit
codes (signals/unit_codes.py), so "auth on Monday" and "auth on Tuesday" are different
addresses however similar their embeddings are.

Weighting (engram's frozen choice, "IDF-cosine"): with N notes and n_u the number of notes
containing unit u, idf(u) = ln((N + 1) / (n_u + 1)) + 1, computed as c - l_u with
c = ln(N + 1) + 1 and l_u = ln(n_u + 1). A note is the binary unit vector x_d[u] = idf(u),
L2-normalised; the query likewise. The score is the cosine conj(d, q) = <x_d, x_q>, in [0, 1].

Incremental and exact: the index keeps which notes hold each unit (signals/postings.py, a base
plus a delta), n_u, and per note m_d = |units(d)|, S1_d = sum_u l_u and S2_d = sum_u l_u^2 (in
fixed point, so sums are exact in any order), so that

    ||x_d||^2 = sum_u (c - l_u)^2 = m_d c^2 - 2 c S1_d + S2_d

is computed at query time for the notes in the query units' postings only. A new N changes c
alone; replacing a note (`updated`) changes n_u for the units it gained or lost, and the notes
holding those units get the change of l_u added to S1, S2: O(their postings), and the integer
sums equal a fresh build's. So scores after any sequence of updates equal those of a fresh
build, bit for bit. Removing notes (`removed`) is the same over the units they held. A
catch-up that removes some notes and replaces others (`caught_up`) moves the sums once, from
the first n_u to the last: a common unit both steps move is read once, not twice.

The index also keeps each note's content terms (`terms`: those its units come from,
unit_codes.py `term_count`) and so the length of the note a vault's term occurrence typically
falls in (`occurrence_median`: the length-weighted median of `terms`, exact), the bound
fusion.py's `long_query` sets a query against. It is a number of the index state (replaced
notes replace their counts, removed ones drop theirs), saved with the index
(lexical_store.py), so a new process reads it without a pass over the notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ...cancel import checked
from ...notes.note import frontmatter_tags
from ...notes.text import tokenize
from ...shift import Shift
from ...storage.corpus import Corpus
from .postings import Postings
from .unit_codes import ENTRY_BLOCK, coded, distinct, term_count, text_codes, token_codes

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]


def note_text(corpus: Corpus, i: int) -> str:
    """What the conjunctive channel reads of a note: title, aliases, frontmatter tags and
    body. The other properties' words are BM25's and the relevance check's only
    (notes/properties.py): read here too they cost LoCoMo recall@10 -0.0045 [-0.0075,
    -0.0020] (13 questions lost, 0 won; session 41, QUERY41) by giving generated notes
    their `type` words as term pairs."""
    fm = corpus.frontmatter[i]
    tags = frontmatter_tags(fm) if fm else []
    return " ".join([corpus.titles[i], *corpus.aliases[i], *tags, corpus.bodies[i]])


L_SCALE = float(1 << 32)  # fixed-point scale of l_u in S1
L2_SCALE = float(1 << 24)  # ... and of l_u^2 in S2 (both sums stay far below 2^53)
ALONE = 256  # entries from which `_moved` reads a column on its own (untuned)


def _lq(df: npt.NDArray[np.integer]) -> I64:
    """l_u = ln(n_u + 1) in fixed point (rounded to 2^-32)."""
    out: I64 = np.rint(np.log(np.asarray(df, np.float64) + 1.0) * L_SCALE).astype(np.int64)
    return out


def _l2q(df: npt.NDArray[np.integer]) -> I64:
    """l_u^2 in fixed point (rounded to 2^-24)."""
    lu = np.log(np.asarray(df, np.float64) + 1.0)
    out: I64 = np.rint(lu * lu * L2_SCALE).astype(np.int64)
    return out


@dataclass(frozen=True)
class ConjunctiveIndex:
    """Hashed units of every note, their document frequencies and the norm sums.

    S1 and S2 are sums of fixed-point integers (l_u to 2^-32, l_u^2 to 2^-24), so they are
    exact and independent of the order of additions: an update adds the change of l_u to
    every note holding a unit whose n_u changed, and the result is the fresh build's."""

    vocab: U32  # unit hashes, column id -> hash (the base's sorted, later ones appended)
    columns: Mapping[int, int]  # hashes appended since the base build -> column id
    postings: Postings  # column -> notes holding the unit
    df: I64  # n_u by column id
    m: I64  # units per note
    s1: I64  # sum of l_u (fixed point) per note
    s2: I64  # sum of l_u^2 (fixed point) per note
    n_docs: int
    terms: I64  # content terms per note (module docstring)

    @classmethod
    def build(cls, corpus: Corpus) -> ConjunctiveIndex:
        """Index title + aliases + body of every note."""
        return cls.from_texts(checked(note_text(corpus, i) for i in range(len(corpus))))

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> ConjunctiveIndex:
        flat, counts, terms = coded(texts)
        n = int(counts.shape[0])
        vocab, df = distinct(flat)  # a note holds a unit once: its count is n_u
        cols = flat.view(np.int32)  # int32 columns written over the codes they replace
        for lo in range(0, flat.shape[0], ENTRY_BLOCK):
            cols[lo : lo + ENTRY_BLOCK] = np.searchsorted(vocab, flat[lo : lo + ENTRY_BLOCK])
        del flat
        lq, l2q = _lq(df), _l2q(df)
        s1 = np.zeros(n, dtype=np.int64)
        s2 = np.zeros(n, dtype=np.int64)
        ends = np.cumsum(counts)
        for lo in range(0, cols.shape[0], ENTRY_BLOCK):  # the rows of a block, not of all
            hi = min(lo + ENTRY_BLOCK, cols.shape[0])
            first, last = np.searchsorted(ends, [lo, hi - 1], side="right")
            span = np.minimum(ends[first : last + 1], hi) - np.maximum(
                ends[first : last + 1] - counts[first : last + 1], lo)
            r = np.repeat(np.arange(first, last + 1, dtype=np.int32), span)
            c = cols[lo:hi]
            np.add.at(s1, r, lq[c])
            np.add.at(s2, r, l2q[c])
        postings = Postings.from_row_counts(counts, cols, int(vocab.size))
        return cls(vocab.astype(np.uint32), {}, postings, df, counts, s1, s2, n, terms)

    @property
    def delta_docs(self) -> int:
        """Notes held in the delta or removed since the last full build."""
        return len(self.postings.delta_docs) + self.postings.removed_docs

    def _column(self, code: int) -> int | None:
        base = int(self.postings.n_base_columns)
        if base:
            pos = int(np.searchsorted(self.vocab[:base], np.uint32(code)))  # no upcast copy
            if pos < base and int(self.vocab[pos]) == code:
                return pos
        return self.columns.get(code)

    def _columns_of(self, codes: U32) -> I64:
        """`_column` of each code, in order, the unknown ones dropped: the base columns by
        one vectorised search (a call per code was 8 us: 0.17 s of a rename that rewrites 73
        notes at 10^5), the columns added since from their dict."""
        codes = np.asarray(codes, dtype=np.uint32)
        out = np.full(codes.size, -1, dtype=np.int64)
        base = int(self.postings.n_base_columns)
        if base and codes.size:
            at = np.searchsorted(self.vocab[:base], codes)
            hit = at < base
            hit[hit] = self.vocab[at[hit]] == codes[hit]
            out[hit] = at[hit]
        rest = np.flatnonzero(out < 0) if self.columns else np.zeros(0, np.int64)
        if rest.size * 8 < len(self.columns):  # a few codes: the dict
            for k in rest.tolist():
                col = self.columns.get(int(codes[k]))
                out[k] = -1 if col is None else col
        elif rest.size:  # many (a long note): one search of the added columns' codes
            added = self.vocab[base:]  # the code of column base + k (`updated`)
            order = np.argsort(added, kind="stable")
            at = np.minimum(np.searchsorted(added, codes[rest], sorter=order), added.size - 1)
            hit = added[order[at]] == codes[rest]
            out[rest[hit]] = base + order[at[hit]]
        return out[out >= 0]

    def removed(self, shift: Shift, texts: Sequence[str], move: bool = True
                ) -> ConjunctiveIndex:
        """The index without the notes at `shift.removed` (`shift.n` = `n_docs`), every later
        one moved down; `texts[k]` is the text this index holds at `shift.removed[k]`. n_u
        falls by one for each unit of a removed note, and each note still holding such a
        unit gets the change of l_u added to S1 and S2 (O(those units' postings)); N is
        read at query time: the fixed-point sums a fresh build of the other notes makes.
        Without `move` S1 and S2 are left as they were (the caller sets them whole:
        retrieval/caught_up_sums.py)."""
        shift.check(self.n_docs, len(texts), "notes")
        if not shift.removed:
            return self
        df = self.df.copy()
        for t in texts:
            df[self._columns_of(text_codes(t))] -= 1
        postings = self.postings.removed(shift)
        keep = shift.keep
        s1, s2 = self.s1[keep], self.s2[keep]
        if move:
            self._moved(postings, self.df, df, s1, s2)
        return ConjunctiveIndex(self.vocab, self.columns, postings, df, self.m[keep], s1, s2,
                                shift.kept, self.terms[keep])

    @staticmethod
    def _moved(postings: Postings, old_df: I64, df: I64, s1: I64, s2: I64) -> None:
        """Adds the change of l_u and l_u^2 to S1 and S2 (in place) of every note holding a
        unit whose n_u moved from `old_df` to `df` (a changed note's sums are then set whole
        by `updated`: filtering its rows out here cost each process catching up after 50
        added notes ~0.8 s of a 10 s profile at 10^6 notes, COLD38): `Postings.add_by_column`,
        a column of at least `ALONE` entries on its own, the smaller ones in blocks (COLD39)."""
        moved = np.flatnonzero(df != old_df)
        d1, d2 = _lq(df[moved]) - _lq(old_df[moved]), _l2q(df[moved]) - _l2q(old_df[moved])
        postings.add_by_column(moved, (d1, d2), (s1, s2), ALONE, ENTRY_BLOCK)

    def caught_up(self, shift: Shift, gone: Sequence[str],
                  changes: Mapping[int, tuple[str | None, str]], n_docs: int,
                  move: bool = True) -> ConjunctiveIndex:
        """`removed(shift, gone, move).updated(changes, n_docs, move)` with the sums moved
        once, from this index's n_u to the result's, rather than once per step: a unit a
        removed note and an added one both hold (every common unit) is read once. The same
        integers: for a note kept unchanged the two steps add (l' - l) + (l'' - l'), this
        adds l'' - l; a changed note's sums are set whole from the final n_u either way."""
        out = self.removed(shift, gone, False).updated(changes, n_docs, False)
        if not move or (not shift.removed and not changes):
            return out
        old_df = np.zeros(out.df.size, dtype=np.int64)
        old_df[: self.df.size] = self.df
        s1, s2 = out.s1.copy(), out.s2.copy()
        self._moved(out.postings, old_df, out.df, s1, s2)
        done = np.asarray(sorted(changes), dtype=np.int64)
        s1[done], s2[done] = out.s1[done], out.s2[done]
        return replace(out, s1=s1, s2=s2)

    def updated(self, changes: Mapping[int, tuple[str | None, str]], n_docs: int,
                move: bool = True) -> ConjunctiveIndex:
        """The index with the note at each position p replaced: `changes[p] = (old text or
        None for a new note, new text)`, `old` being what this index holds for p; without
        `move` the other notes' S1 and S2 are left as they were (`removed`)."""
        olds = {p: text_codes(o) for p, (o, _) in changes.items() if o is not None}
        tokens = {p: tokenize(t) for p, (_, t) in sorted(changes.items())}
        news = {p: token_codes(tok) for p, tok in tokens.items()}
        columns = dict(self.columns)
        codes = np.sort(np.concatenate([np.zeros(0, np.uint32), *news.values()]))
        codes = codes[np.r_[True, codes[1:] != codes[:-1]]] if codes.size else codes
        known = np.zeros(codes.size, np.bool_)
        known[np.searchsorted(codes, self.vocab[self._columns_of(codes)])] = True
        added: list[int] = codes[~known].tolist()  # ascending, as the loop per code was
        for k, c in enumerate(added):
            columns[c] = int(self.vocab.size) + k
        vocab = (np.concatenate([self.vocab, np.asarray(added, dtype=np.uint32)])
                 if added else self.vocab)
        cols_of = replace(self, vocab=vocab, columns=columns)._columns_of
        old_df = np.zeros(vocab.size, dtype=np.int64)
        old_df[: self.df.shape[0]] = self.df
        df = old_df.copy()
        m = np.zeros(n_docs, dtype=np.int64)
        m[: self.n_docs] = self.m[:n_docs]
        terms = np.zeros(n_docs, dtype=np.int64)
        terms[: self.n_docs] = self.terms[:n_docs]
        docs: dict[int, tuple[I64, F64]] = {}
        for p, codes in news.items():
            if p < self.n_docs:
                if p not in olds:
                    raise ValueError(f"position {p} is indexed: its old text is needed")
                df[cols_of(olds[p])] -= 1
            cols = cols_of(codes)
            df[cols] += 1
            m[p], terms[p] = cols.size, term_count(tokens[p])
            docs[p] = (cols, np.zeros(cols.size))
        postings = self.postings.replace(docs)
        s1 = np.zeros(n_docs, dtype=np.int64)
        s2 = np.zeros(n_docs, dtype=np.int64)
        s1[: self.n_docs], s2[: self.n_docs] = self.s1[:n_docs], self.s2[:n_docs]
        if move:
            self._moved(postings, old_df, df, s1, s2)
        # the changed notes' sums set whole (what _moved added to them is overwritten), from
        # l_u of their units only (over every unit: ~0.5 s at 10^6)
        for p in news:
            held = df[docs[p][0]]
            s1[p], s2[p] = int(_lq(held).sum()), int(_l2q(held).sum())
        return ConjunctiveIndex(vocab, columns, postings, df, m, s1, s2, n_docs, terms)

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
        c0 = self._c0
        idf = c0 - np.log(self.df[np.asarray(cols)] + 1.0)
        w = idf / np.linalg.norm(idf)
        norms = self._norms
        for j, c in enumerate(cols):  # hash order (token_codes is sorted)
            rows = self.postings.entries(c)[0]
            v = norms[rows]
            np.divide(idf[j], v, out=v)  # idf / norm * w, in place: the same numbers
            v *= w[j]
            np.add.at(y, rows, v)  # rows are distinct: the same as y[rows] += v
        return y

    @cached_property
    def occurrence_median(self) -> float:
        """The length-weighted median of `terms`: the fewest terms t such that the notes of
        at most t terms hold at least half of all the vault's term occurrences, i.e. the
        median length of the note a random term occurrence falls in (0 for no terms). Once
        per index state, O(n log n).

        Weighted by length, not the plain median of notes: the channel's evidence is a pair
        of the query's terms inside one note, and a query's terms are found where the vault's
        terms are, in proportion to length. Notes with few or no terms (an empty placeholder
        made by following a dangling link, a daily note of one line, a tag hub) hold few
        occurrences, so they barely move this number, where they pull the plain median down
        to a few terms and would switch the channel off for ordinary questions. This is the
        length-biased ("size-biased") distribution of renewal theory and of the inspection
        paradox (Feller, "An Introduction to Probability Theory", vol. II, ch. XI): the
        length of the interval a random point falls in. Measured in session 39
        (NOTES-FUS41.md)."""
        if not self.n_docs:
            return 0.0
        s = np.sort(self.terms)
        c = np.cumsum(s, dtype=np.int64)
        total = int(c[-1])
        if total == 0:
            return 0.0
        return float(s[int(np.searchsorted(2 * c, total))])  # first 2 c[i] >= total

    @property
    def _c0(self) -> float:
        return float(np.log(np.asarray([self.n_docs + 1.0]))[0]) + 1.0

    @cached_property
    def _norms(self) -> F64:
        """||x_d|| of every note, once per index state (elementwise: the same numbers as
        computing it per posting)."""
        c0 = self._c0
        out: F64 = np.sqrt(self.m * (c0 * c0) - 2.0 * c0 * (self.s1 / L_SCALE)
                           + self.s2 / L2_SCALE)
        return out
