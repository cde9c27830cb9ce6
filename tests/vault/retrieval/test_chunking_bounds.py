"""Chunking stays linear in the note and a huge note's dense units are capped (issue item 7)."""

from __future__ import annotations

import time
from collections.abc import Callable

from vault.retrieval.chunking import CHARS_PER_TOKEN, chunk_note, plain_links
from vault.retrieval.signals.dense import DenseIndex
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus


class Tally:
    """An additive word counter (2 special tokens, like WordPiece) that records its work."""

    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return len(text.split()) + 2


def links_note(n: int) -> str:
    return " ".join(f"[[Target {i}]]" for i in range(n))


def test_counting_work_is_linear_in_a_one_paragraph_link_note() -> None:
    small, big = Tally(), Tally()
    body_small, body_big = links_note(2_000), links_note(8_000)
    a = chunk_note("Huge", body_small, small, 64)
    b = chunk_note("Huge", body_big, big, 64)
    assert all(small(c) <= 64 for c in a) and all(big(c) <= 64 for c in b)
    assert 3.5 < len(b) / len(a) < 4.5
    # the old chunker re-counted its growing candidate per word: ~ words * window characters
    # per chunk, quadratic in the paragraph; now every character is counted a bounded number
    # of times (each word once, each chunk once more to verify it)
    assert big.chars <= 4 * len(body_big)
    assert big.chars / small.chars < 4.5


def test_contract_holds_for_a_counter_that_is_not_additive() -> None:
    def count(text: str) -> int:  # joining costs extra: the estimate undercounts
        return len(text.split()) * 2 + text.count(" ") + 1

    body = "alpha beta gamma delta. " * 300 + "\n\n" + "word " * 500
    chunks = chunk_note("T", body, count, 40)
    assert chunks and all(count(c) <= 40 for c in chunks)
    kept = " ".join(" ".join(c.split("\n", 1)[-1] for c in chunks).split())
    assert kept == " ".join(body.split())  # nothing lost, order kept


def test_text_over_the_character_bound_is_split_without_being_counted() -> None:
    seen: list[int] = []

    def count(text: str) -> int:
        seen.append(len(text))
        return len(text.split()) + 2

    body = "x" * 50 + " " + "word " * 20_000
    chunk_note("T", body, count, 32)
    assert max(seen) <= 32 * CHARS_PER_TOKEN


def test_max_units_returns_the_first_units_and_stops_early() -> None:
    body = links_note(5_000)
    full, capped = Tally(), Tally()
    everything = chunk_note("Huge", body, full, 64)
    first = chunk_note("Huge", body, capped, 64, max_units=5)
    assert first == everything[:5]
    assert capped.calls < full.calls / 10  # the rest of the note is never looked at


def test_link_markup_on_adversarial_input_is_linear() -> None:
    for evil in ("[[" * 100_000, "[[a|" * 50_000, "[[a#" * 50_000, "![[" * 60_000):
        t = time.process_time()  # CPU, not wall: a loaded machine's waits do not count
        assert plain_links(evil) == evil  # nothing closes: no link
        assert time.process_time() - t < 2.0  # was minutes: quadratic backtracking
    assert plain_links("[[A|b]] [[C#h]] ![[d]] [[x\n]]") == "b C d [[x\n]]"


def test_dense_index_caps_units_per_note() -> None:
    class Enc:
        fingerprint, dim = "fake", 4
        count_tokens: Callable[[str], int] = staticmethod(lambda t: len(t.split()) + 2)

        def __init__(self) -> None:
            self.encoded = 0

        def encode(self, texts: list[str]):  # type: ignore[no-untyped-def]
            import numpy as np

            self.encoded += len(texts)
            out = np.zeros((len(texts), 4), dtype=np.float32)
            out[:, 0] = 1.0
            return out

    corpus = make_corpus([("huge", links_note(20_000)), ("small", "A short note.")])
    enc = Enc()
    idx = DenseIndex.build(corpus, enc, MemoryEmbeddingCache(), 256, None, 8)  # type: ignore[arg-type]
    assert idx.capped == 1 and idx.starts.tolist() == [0, 8] and idx.matrix.shape[0] == 9
    assert enc.encoded == 9
    uncapped = DenseIndex.build(corpus, Enc(), None, 256, None, 0)  # type: ignore[arg-type]
    assert uncapped.capped == 0 and uncapped.matrix.shape[0] > 100
