"""The dense units: the chunk texts a note is embedded as (chunking.py's cut of its title and
body, its speaker from frontmatter or its turn), for one note, a set of notes or the whole
corpus.

One definition shared by everything that must agree on a note's embedding keys: the dense
index's builds and updates (dense.py), erasure's embedding keys (vault/erasure.py), the cloze
stage (retrieval/cloze.py) and `rmh index` locally or on Ray (`corpus_chunks`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ...storage.corpus import Corpus
from ..chunking import chunk_note, turn_speaker
from ..packed_texts import PackedTexts

Bools = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]
Texts = TypeVar("Texts", list[str], PackedTexts)


def note_chunks_of(
    corpus: Corpus, positions: I64, count_tokens: Callable[[str], int], max_tokens: int,
    max_units: int, texts: Texts,
) -> tuple[Texts, I64, Bools]:
    """Chunk texts of the notes at `positions` (in that order, appended to `texts`: a list,
    or a build's `PackedTexts`), chunks per note, and which notes were cut at `max_units`."""
    counts = np.zeros(positions.shape[0], dtype=np.int64)
    cut = np.zeros(positions.shape[0], dtype=np.bool_)
    for j, i in enumerate(positions.tolist()):
        chunks, cut[j] = note_chunks(corpus.titles[i], corpus.bodies[i],
                                     corpus.frontmatter[i], count_tokens, max_tokens, max_units)
        texts.extend(chunks)
        counts[j] = len(chunks)
    return texts, counts, cut


def note_chunks(title: str, body: str, frontmatter: Mapping[str, Any],
                count_tokens: Callable[[str], int], max_tokens: int, max_units: int
                ) -> tuple[tuple[str, ...], bool]:
    """The chunks one note is embedded as, and whether they were cut at `max_units` (the
    one definition the index and erasure's embedding keys share)."""
    given = frontmatter.get("speaker")
    speaker = given.strip() if isinstance(given, str) else ""
    chunks = chunk_note(title, body, count_tokens, max_tokens,
                        speaker or turn_speaker(body),
                        max_units + 1 if max_units > 0 else 0)  # one more tells a cut note
    if 0 < max_units < len(chunks):
        return chunks[:max_units], True
    return chunks, False


def corpus_chunks(
    corpus: Corpus, count_tokens: Callable[[str], int], max_tokens: int = 256, max_units: int = 0
) -> tuple[list[str], npt.NDArray[np.int64], int]:
    """The dense units of every note, in position order: (chunk texts, first row of each
    note, notes cut at `max_units`). What `DenseIndex.build` embeds and `rmh index` (local or
    on Ray) must find in the cache."""
    every = np.arange(len(corpus), dtype=np.int64)
    texts, counts, cut = note_chunks_of(corpus, every, count_tokens, max_tokens, max_units, [])
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)[: len(corpus)]
    return texts, starts, int(cut.sum())
