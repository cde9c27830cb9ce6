"""The units of the conjunctive signal (signals/conjunctive.py) as 32-bit codes.

Units of a text are its content terms t_i (tokens minus stop words, in order) and every
unordered pair {t_i, t_j} with 0 < j - i < 4 (the unordered-window feature of Metzler & Croft's
sequential dependence model, 2005). Each term is hashed with blake2b to a 32-bit address
(stable across processes, unlike Python's `hash`) and each pair to a 32-bit mix of its two
term addresses (`pair_hash`, vectorised: hashing every pair with blake2b cost 3 us a pair,
10 minutes for a million notes), so "auth on Monday" and "auth on Tuesday" are different
addresses however similar their embeddings are. `coded` and `distinct` serve a whole build,
with temporaries bounded by blocks (at 10^6 notes the codes alone are ~500 MB).

A note's units come from its first MAX_NOTE_TERMS content terms only: at most
MAX_NOTE_TERMS * WINDOW codes a note, so the index's memory for one note is bounded (a 3.9 MB
note of 500,000 distinct words made ~2 million units, each a column of the index and an entry
of its dict of added codes). The cap is past any note of the benchmarks' data (a few thousand
terms at most), so their units and rankings are unchanged; BM25 (signals/bm25.py) still reads
every term of a longer note, so each of its words still finds it.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ...notes.text import content_terms, tokenize

WINDOW = 4  # pairs of content terms fewer than WINDOW positions apart
MAX_NOTE_TERMS = 1 << 15  # content terms of a text that make its units (module docstring)

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
    `pair_hash` of every pair of distinct terms fewer than `window` apart, of its first
    MAX_NOTE_TERMS content terms."""
    terms = content_terms(tokens)[:MAX_NOTE_TERMS]
    h = np.fromiter((term_hash(t) for t in terms), dtype=np.uint32, count=len(terms))
    parts = [h]
    for k in range(1, window):
        a, b = h[:-k], h[k:]
        keep = a != b
        parts.append(pair_hash(a[keep], b[keep]))
    out: U32 = sorted_distinct(np.concatenate(parts))
    return out


BLOCK = 16_384  # notes hashed per vectorised block in `coded` (bounds its temporaries)
ENTRY_BLOCK = 1 << 22  # unit entries handled at a time by a build (int64 temporaries: 32 MB)


def term_count(tokens: Sequence[str]) -> int:
    """The content terms a text's units come from (`token_codes`): at most MAX_NOTE_TERMS."""
    return min(len(content_terms(tokens)), MAX_NOTE_TERMS)


def coded(texts: Iterable[str], window: int = WINDOW) -> tuple[U32, I64, I64]:
    """`text_codes` of every text at once (the codes concatenated, how many per text) and each
    text's `term_count`. Vectorised over blocks of texts (a Python loop remains only to
    tokenize)."""
    out: list[U32] = []
    terms_of = array("q")
    counts: list[I64] = []
    flat = array("I")  # 4 bytes a term hash (a list of ints would take ~40)
    lens: list[int] = []

    def flush() -> None:
        h = np.frombuffer(flat, dtype=np.uint32).copy() if flat else np.zeros(0, np.uint32)
        note = np.repeat(np.arange(len(lens), dtype=np.uint64), lens)
        keys = [(note << np.uint64(32)) | h.astype(np.uint64)]
        for k in range(1, window):
            keep = (note[:-k] == note[k:]) & (h[:-k] != h[k:])
            keys.append((note[:-k][keep] << np.uint64(32))
                        | pair_hash(h[:-k][keep], h[k:][keep]).astype(np.uint64))
        u = sorted_distinct(np.concatenate(keys))  # by note, then by code
        out.append((u & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        counts.append(np.bincount((u >> np.uint64(32)).astype(np.int64),
                                  minlength=len(lens)).astype(np.int64))
        del flat[:]
        lens.clear()

    for text in texts:
        terms = content_terms(tokenize(text))[:MAX_NOTE_TERMS]
        flat.extend(term_hash(t) for t in terms)
        lens.append(len(terms))
        terms_of.append(len(terms))
        if len(lens) == BLOCK:
            flush()
    if lens:
        flush()
    if not out:
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.int64), np.zeros(0, np.int64)
    return _joined(out), np.concatenate(counts), np.frombuffer(terms_of, np.int64).copy()


def _joined(parts: list[U32]) -> U32:
    """np.concatenate(parts), emptying `parts` as it copies (one block beside the result, not
    every block)."""
    joined = np.empty(sum(int(p.shape[0]) for p in parts), dtype=np.uint32)
    at = 0
    for j in range(len(parts)):
        part, parts[j] = parts[j], np.zeros(0, np.uint32)
        joined[at : at + part.shape[0]] = part
        at += int(part.shape[0])
    parts.clear()
    return joined


BUCKET_BITS = 4  # `distinct` handles the codes 2^(32 - BUCKET_BITS) values at a time


def sorted_distinct(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """np.unique(x) of integers x (same values, same dtype, flattened) by a sort and a mask:
    numpy 2's np.unique hashes, 4-6x slower on a note's few hundred units and 13-16x on
    10^6-10^7 (BENCHMARKS.md, session 18). Not for floats: NaNs would not collapse."""
    s = np.sort(x, axis=None)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if s.size else s


def distinct(flat: U32) -> tuple[U32, I64]:
    """np.unique(flat, return_counts=True) with a sort of 1/2^BUCKET_BITS of the codes at a
    time (the buckets of their top bits, in order) instead of a sorted copy of all of them."""
    shift = np.uint32(32 - BUCKET_BITS)
    codes: list[U32] = []
    counts: list[I64] = []
    for j in range(1 << BUCKET_BITS):
        part = np.concatenate([np.zeros(0, np.uint32)] + [
            block[(block >> shift) == j] for block in
            (flat[lo : lo + ENTRY_BLOCK] for lo in range(0, flat.shape[0], ENTRY_BLOCK))])
        u, c = np.unique(part, return_counts=True)
        codes.append(u.astype(np.uint32))
        counts.append(c.astype(np.int64))
    return np.concatenate(codes), np.concatenate(counts)


def text_codes(text: str, window: int = WINDOW) -> U32:
    """Sorted unique hashed units of a text."""
    return token_codes(tokenize(text), window)
