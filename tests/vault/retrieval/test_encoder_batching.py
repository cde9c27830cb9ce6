"""Length batching (issue 17): a text's vector is a function of the text alone, whatever shares
its batch; batches hold one token length; the grouping is a pure function of the lengths."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.retrieval.encoders import MiniLmEncoder, encode_cached, length_batches
from vault.storage.embeddings import MemoryEmbeddingCache, embedding_key

TARGET = "Caroline: I went to the LGBTQ support group yesterday and it was so powerful."
SHORT = ["Hi!", "Mel: ok", "Nate: Way to go!", "yes"]
LONG = [
    "Melanie: We took the kids camping at the lake last weekend, roasted marshmallows and "
    "watched the stars; it was the best trip we have had in years, honestly.",
    "A much longer sentence with many more word pieces in it. " * 12,
]


@cache
def encoder() -> MiniLmEncoder:
    return MiniLmEncoder()


def same_length_texts(n: int) -> list[str]:
    """`n` texts other than TARGET with exactly TARGET's token count."""
    want = encoder().count_tokens(TARGET)
    out: list[str] = []
    words = ["apple", "river", "stone", "cloud", "music", "tiger", "paper", "light"]
    i = 0
    while len(out) < n:
        text = " ".join(words[(i + j) % len(words)] for j in range(want - 2))
        text = f"{i} {text}"
        while encoder().count_tokens(text) > want:
            text = text.rsplit(" ", 1)[0]
        while encoder().count_tokens(text) < want:
            text += " a"
        if encoder().count_tokens(text) == want and text != TARGET and text not in out:
            out.append(text)
        i += 1
    return out


def test_a_vector_does_not_depend_on_its_company() -> None:
    enc = encoder()
    alone = enc.encode([TARGET])[0]
    peers = same_length_texts(5)
    companies: list[list[str]] = [
        [*SHORT, TARGET, *LONG],  # mixed lengths: other texts go to other batches
        [*peers, TARGET],  # a full equal-length batch, TARGET last
        [TARGET, *peers[:2]],  # a smaller one, TARGET first
        [*LONG, *peers[3:], *SHORT, TARGET, TARGET],  # duplicates
    ]
    for texts in companies:
        rows = enc.encode(texts)
        for i, text in enumerate(texts):
            if text == TARGET:
                assert np.array_equal(rows[i], alone), texts
    # and through the cache path, among other missing texts
    for others in (SHORT, peers, LONG + peers[:1]):
        got = encode_cached(enc, [*others, TARGET], MemoryEmbeddingCache())
        assert np.array_equal(got[-1], alone)
    # every row of a mixed call equals that text embedded alone
    mixed = [*SHORT, *peers[:2], *LONG]
    rows = enc.encode(mixed)
    for i, text in enumerate(mixed):
        assert np.array_equal(rows[i], enc.encode([text])[0]), text


def test_batches_hold_one_token_length_and_no_padding(monkeypatch: pytest.MonkeyPatch) -> None:
    enc = MiniLmEncoder(batch_size=3)
    feeds: list[dict[str, Any]] = []
    real = enc._run

    def spy(feed: dict[str, Any]) -> Any:
        feeds.append({k: v.copy() for k, v in feed.items()})
        return real(feed)

    monkeypatch.setattr(enc, "_run", spy)
    texts = [*SHORT, *same_length_texts(4), TARGET, *LONG]
    enc.encode(texts)
    lengths = sorted(enc.count_tokens(t) for t in texts)
    assert sum(f["input_ids"].shape[0] for f in feeds) == len(texts)
    assert all(f["input_ids"].shape[0] <= 3 for f in feeds)
    assert all(np.all(f["attention_mask"] == 1) for f in feeds)  # nothing padded
    assert all(np.all(f["input_ids"] != 0) for f in feeds)  # [PAD] is id 0
    widths = [f["input_ids"].shape[1] for f in feeds]
    assert widths == sorted(widths) and sorted(set(widths)) == sorted(set(min(n, 256)
                                                                          for n in lengths))


@given(st.lists(st.integers(min_value=2, max_value=12), max_size=60),
       st.integers(min_value=1, max_value=7))
def test_length_batches_partition_by_length(lengths: list[int], size: int) -> None:
    batches = length_batches(lengths, size)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(0 < len(b) <= size for b in batches)
    assert all(len({lengths[i] for i in b}) == 1 for b in batches)
    firsts = [(lengths[b[0]], b[0]) for b in batches]
    assert firsts == sorted(firsts)  # ascending length, then index order
    assert all(b == sorted(b) for b in batches)
    assert length_batches(lengths, size) == batches  # a pure function of its input
    # only the last batch of each length may be short
    for a, b in itertools.pairwise(batches):
        if lengths[a[0]] == lengths[b[0]]:
            assert len(a) == size


def test_length_batches_example() -> None:
    assert length_batches([5, 3, 5, 3, 5, 9], 2) == [[1, 3], [0, 2], [4], [5]]
    assert length_batches([], 32) == []


class RecordingEncoder:
    """The real encoder, recording the lists of texts it is asked to embed."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    @property
    def fingerprint(self) -> str:
        return encoder().fingerprint

    @property
    def dim(self) -> int:
        return encoder().dim

    def count_tokens(self, text: str) -> int:
        return encoder().count_tokens(text)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return encoder().encode(texts)


def test_encode_cached_hands_over_missing_texts_by_characters_then_key() -> None:
    texts = [*LONG, TARGET, *SHORT, *same_length_texts(3)]
    one, two = RecordingEncoder(), RecordingEncoder()
    a = encode_cached(one, texts, MemoryEmbeddingCache())
    b = encode_cached(two, texts[::-1], MemoryEmbeddingCache())
    assert one.calls == two.calls  # the caller's order does not change what is embedded how
    handed = [t for call in one.calls for t in call]
    want = sorted(set(texts), key=lambda t: (len(t), embedding_key(t)))
    assert handed == want
    assert np.array_equal(a, b[::-1])
