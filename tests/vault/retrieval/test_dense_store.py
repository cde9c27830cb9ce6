"""Persisted dense rows (dense_store.py): a build in a new process reads them instead of
re-chunking, equals a fresh build byte for byte, re-chunks only the notes that changed, and
ignores a store that is stale (another encoder or shape), torn or corrupt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval import dense_store
from vault.retrieval.signals.dense import DenseIndex
from vault.storage.corpus import Corpus
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus

WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "amber") for b in ("fox", "owl", "elk")]
TOKENS = 12  # a small window: notes of one to several chunks


class Counting(SyntheticEncoder):
    """The synthetic encoder, counting what it tokenises (chunking) and embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []
        self.encoded = 0

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return super().count_tokens(text)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded += len(texts)
        return super().encode(texts)


def corpus(seed: int, n: int = 40) -> Corpus:
    rng = np.random.default_rng(seed)
    notes = [(f"note {i}", " ".join(" ".join(rng.choice(WORDS, int(rng.integers(3, 9)))) + "."
                                    for _ in range(int(rng.integers(1, 5)))))
             for i in range(n)]
    return make_corpus(notes)


def build(c: Corpus, scratch: Path | None, enc: SyntheticEncoder | None = None,
          tokens: int = TOKENS) -> DenseIndex:
    return DenseIndex.build(c, enc or SyntheticEncoder(), MemoryEmbeddingCache(), tokens,
                            scratch=None if scratch is None else str(scratch))


def same(a: DenseIndex, b: DenseIndex) -> None:
    assert np.asarray(a.matrix).tobytes() == np.asarray(b.matrix).tobytes()
    assert a.matrix.shape == b.matrix.shape
    assert a.starts.tobytes() == b.starts.tobytes() and a.cut.tobytes() == b.cut.tobytes()
    assert a.capped == b.capped and a.n_chunks == b.n_chunks
    q = SyntheticEncoder().encode(["redfox blueowl", "amberelk"])
    for v in q:
        assert a.score_vector(v).tobytes() == b.score_vector(v).tobytes()


def test_a_new_process_reads_the_rows_instead_of_chunking(tmp_path: Path) -> None:
    c = corpus(1)
    fresh = build(c, None)
    first = build(c, tmp_path)  # builds and saves
    same(first, fresh)
    assert (tmp_path / dense_store.INDEX).is_file()
    enc = Counting()
    again = build(c, tmp_path, enc)  # as a new process would: an empty embedding cache
    assert enc.counted == [] and enc.encoded == 0  # nothing tokenised, nothing embedded
    same(again, fresh)
    assert isinstance(again.matrix, np.memmap)  # read through the page cache


def test_only_changed_and_added_notes_are_chunked(tmp_path: Path) -> None:
    c = corpus(2)
    build(c, tmp_path)
    notes = [(t, b) for t, b in zip(c.titles, c.bodies, strict=True)]
    notes[3] = (notes[3][0], "amberfox greenowl. redelk redelk blueowl amberowl.")
    notes[17] = (notes[17][0], notes[0][1])  # the same text as another note: still its own
    del notes[9]  # positions shift: rows follow the notes' keys, not positions
    notes.append(("added", "greenelk amberfox."))
    edited = make_corpus(notes, generation=2)
    enc = Counting()
    got = build(edited, tmp_path, enc)
    same(got, build(edited, None))
    full = Counting()
    build(edited, None, full)
    assert 0 < len(enc.counted) < len(full.counted) / 5  # 3 of 40 notes chunked
    assert not any("note 5" in text for text in enc.counted)
    # and the store now holds the edited vault: the next process chunks nothing
    enc2 = Counting()
    same(build(edited, tmp_path, enc2), build(edited, None))
    assert enc2.counted == []


def test_a_stale_or_broken_store_is_ignored(tmp_path: Path) -> None:
    c = corpus(3)
    build(c, tmp_path)
    enc = Counting()
    other = build(c, tmp_path, enc, tokens=TOKENS + 5)  # another shape: a full build
    assert len(enc.counted) > 0
    same(other, build(c, None, tokens=TOKENS + 5))
    for rows in tmp_path.glob(f"{dense_store.ROWS_PREFIX}*.npy"):
        rows.write_bytes(rows.read_bytes()[:-40])  # a torn rows file
    enc = Counting()
    same(build(c, tmp_path, enc, tokens=TOKENS + 5), build(c, None, tokens=TOKENS + 5))
    assert len(enc.counted) > 0
    raw = (tmp_path / dense_store.INDEX).read_bytes()
    (tmp_path / dense_store.INDEX).write_bytes(raw[: len(raw) // 2])  # a torn index
    same(build(c, tmp_path, tokens=TOKENS + 5), build(c, None, tokens=TOKENS + 5))
    (tmp_path / dense_store.INDEX).write_bytes(b"not an npz")
    same(build(c, tmp_path, tokens=TOKENS + 5), build(c, None, tokens=TOKENS + 5))
    assert len(list(tmp_path.glob(f"{dense_store.ROWS_PREFIX}*.npy"))) == 1  # old ones go


def test_keys_cover_title_speaker_and_content() -> None:
    c = make_corpus([("a", "x y"), ("a", "x y"), ("b", "x y"), ("a", "x z")])
    k = dense_store.note_keys(c)
    assert k[0].tobytes() == k[1].tobytes()
    assert len({k[i].tobytes() for i in (0, 2, 3)}) == 3
    spoken = Corpus(**{**c.__dict__, "frontmatter": ({"speaker": "Ann"}, {}, {}, {})})
    assert dense_store.note_keys(spoken)[0].tobytes() != k[0].tobytes()


def test_an_unwritable_folder_costs_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder"
    c = corpus(4)
    same(build(c, missing), build(c, None))
    assert not missing.exists()


def test_a_store_with_nothing_to_reuse(tmp_path: Path) -> None:
    """A store saved by an empty vault (`rmh init` of an empty folder), then notes: none is
    reused, every one is chunked (an empty span list once broke the row copy)."""
    build(make_corpus([]), tmp_path)
    c = corpus(3, n=5)
    same(build(c, tmp_path), build(c, None))
    other = corpus(4, n=5)  # every note new again: nothing reused
    same(build(other, tmp_path), build(other, None))
