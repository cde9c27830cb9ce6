"""The lexical indexes (BM25, the conjunctive code) of a full build persisted beside the index,
so a new process loads arrays instead of re-tokenising and re-hashing every note.

A full build is a function of every note's title, aliases, `description` and tags, and body, in
position order. The store is valid for exactly one such corpus, named by

    digest = BLAKE2b-256(DIGEST_VERSION, n, for each note: title, aliases, description and
                         tags, content), hashed again with `text.stemmer_fingerprint()`

content being the note's content hash when the corpus has one (the file's bytes) and else its
body, and the fingerprint of the stems this process's snowballstemmer gives (another release
stems some words otherwise, and a query is stemmed by the process that asks it).
`.rmh/lexical-index.bin` holds the version, the digest and the arrays of both indexes (a
build has no delta: postings.py's base only) in storage/mapped_arrays.py's layout: written to
a temporary name, fsynced and renamed into place, so a reader sees a whole store or none; read
back memory-mapped after a CRC-32 of the payload (version 2 was an `.npz` whose `np.load`
copied every byte: 0.7-0.85 s CPU at 3x10^5 notes). `load` returns the indexes only when the
version and digest match and the file is whole (any other store is stale or damaged: the
caller builds and saves), and they are the arrays a fresh build makes, so every score equals
a fresh build's bit for bit (tests/vault/retrieval/test_lexical_store.py). Edits in a running
process update the indexes in place (derived.py); the store is rewritten at the next full
build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..notes.text import stemmer_fingerprint
from ..storage import mapped_arrays
from ..storage.corpus import Corpus
from . import stamped
from .signals.bm25 import Bm25Index, described
from .signals.conjunctive import ConjunctiveIndex
from .signals.postings import Postings
from .signals.vocabulary import Vocabulary

VERSION = 4  # of the file: 2 was an .npz; 3: a mapped file; 4: each note's content terms
# (conjunctive.py `terms`, the median note length fusion.py's `long_query` reads)
DIGEST_VERSION = 9  # of what a build derives from (2: BM25 over stems; 3: the
# conjunctive units of a note's first MAX_NOTE_TERMS content terms, signals/unit_codes.py;
# 4: frontmatter tags beside the description, bm25.py `described`; 5: bigrams of scripts
# written without spaces, notes/text.py `tokenize`; session 30; 6: combining marks kept in
# their word, Arabic/Hebrew points dropped, `tokenize`; session 31; 7: an enclosing mark
# (the keycap of "1️⃣2️⃣") ends its word, `tokenize`; Arabic and Hindi words stemmed, `stem`;
# a frontmatter `title` beside the aliases, bm25.py `described`; session 32; 8: a soft
# hyphen or zero-width joiner inside a word keeps it one word, `tokenize`; session 33;
# 9: the words of a note's other properties, notes/properties.py; session 41)
FILE = "lexical-index.bin"
LEGACY = "lexical-index.npz"  # version 2's file: removed by the next save
MAGIC = b"RMHLEXIX"


def corpus_digest(corpus: Corpus, folder: str | Path | None = None) -> str:
    """What a full lexical build of `corpus` derives from (module docstring), as hex; with
    `folder`, remembered there under the corpus's stamp (retrieval/stamped.py)."""
    notes = str(stamped.remembered(folder, corpus, f"lexical-digest-{DIGEST_VERSION}",
                                   lambda: np.array(_digest(corpus))))
    # the stems of this process's stemmer (a store saved before an upgrade is stale)
    return hashlib.blake2b(f"{notes}/{stemmer_fingerprint()}".encode(), digest_size=32).hexdigest()


def _digest(corpus: Corpus) -> str:
    h = hashlib.blake2b(digest_size=32)
    h.update(f"rmh-lexical/{DIGEST_VERSION}/{len(corpus)}".encode())
    for i in range(len(corpus)):
        title = corpus.titles[i]
        parts = (title, "\x1f".join(corpus.aliases[i]),
                 described(corpus.frontmatter[i], title, corpus.bodies[i]),
                 corpus.content_hashes[i] or corpus.bodies[i])
        h.update(("\x1e" + "\x1d".join(parts)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _postings(p: Postings, prefix: str) -> dict[str, Any]:
    out = {f"{prefix}ptr": p.ptr, f"{prefix}rows": p.rows, f"{prefix}n": np.int64(p.stale.size)}
    if p.vals is not None:
        out[f"{prefix}vals"] = p.vals
    return out


def _base(z: dict[str, Any], prefix: str) -> Postings:
    n = int(z[f"{prefix}n"])
    return Postings(z[f"{prefix}ptr"], z[f"{prefix}rows"], z.get(f"{prefix}vals"),
                    np.zeros(n, dtype=np.bool_), np.zeros(0, np.int64), np.zeros(0, np.int64),
                    np.zeros(0, np.float32), frozenset())


def save(folder: str | Path, digest: str, bm25: Bm25Index, conj: ConjunctiveIndex,
         count_op: Callable[[], None] | None = None) -> bool:
    """Persist a full build; False when it has a delta or the folder cannot be written.
    `count_op` is called after each file operation (mapped_arrays.write's fault seam)."""
    v = bm25.vocabulary
    if bm25.delta_docs or conj.delta_docs or v.extra or conj.columns:
        return False
    arrays: dict[str, Any] = {
        "b_text": np.frombuffer(v.text.encode("utf-8", "surrogatepass"), dtype=np.uint8),
        "b_offsets": v.offsets, "b_ids": v.ids, "b_df": bm25.df, "b_lengths": bm25.lengths,
        "b_scalars": np.asarray([bm25.total, bm25.n_docs], np.int64),
        "b_params": np.asarray([bm25.k1, bm25.b], np.float64),
        "b_stem": np.bool_(bm25.stem),
        **_postings(bm25.postings, "bp_"),
        "c_vocab": conj.vocab, "c_df": conj.df, "c_m": conj.m, "c_s1": conj.s1,
        "c_s2": conj.s2, "c_n": np.int64(conj.n_docs), "c_terms": conj.terms,
        **_postings(conj.postings, "cp_"),
    }
    folder = Path(folder)
    if not mapped_arrays.write(folder / FILE, MAGIC, {"version": VERSION, "digest": digest},
                               arrays, count_op):
        return False
    (folder / LEGACY).unlink(missing_ok=True)
    return True


def load(folder: str | Path, digest: str) -> tuple[Bm25Index, ConjunctiveIndex] | None:
    """Both indexes from the store in `folder` when it was saved for `digest`, else None."""
    got = mapped_arrays.read(Path(folder) / FILE, MAGIC)
    if got is None or got[0].get("version") != VERSION or got[0].get("digest") != digest:
        return None
    z = got[1]
    try:
        text = z["b_text"].tobytes().decode("utf-8", "surrogatepass")
        total, n = (int(x) for x in z["b_scalars"])
        k1, b = (float(x) for x in z["b_params"])
        # `text` is the sorted terms joined by SEP: its offsets are checked by position
        vocab = Vocabulary(text, z["b_offsets"], z["b_ids"])
        bm25 = Bm25Index(vocab, _base(z, "bp_"), z["b_df"], z["b_lengths"], total, n, k1, b,
                         bool(z["b_stem"]))
        conj = ConjunctiveIndex(z["c_vocab"], {}, _base(z, "cp_"), z["c_df"], z["c_m"],
                                z["c_s1"], z["c_s2"], int(z["c_n"]), z["c_terms"])
    except (KeyError, TypeError, ValueError, UnicodeDecodeError):
        return None
    whole = (bm25.lengths.shape == (n,) and conj.m.shape == conj.terms.shape == (conj.n_docs,)
             and vocab.offsets.shape[0] >= 1 and int(vocab.offsets[-1]) == len(text))
    return (bm25, conj) if whole else None
