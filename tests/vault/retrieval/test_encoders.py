"""The MiniLM encoder (published similarities), the embedding cache, chunking, dense scores."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt
import pytest

from vault.retrieval.chunking import chunk_note, informative_title, plain_links, turn_speaker
from vault.retrieval.encoders import MiniLmEncoder, encode_cached, mean_pool
from vault.retrieval.signals.dense import DenseIndex, dense_scores
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus


@cache
def encoder() -> MiniLmEncoder:
    return MiniLmEncoder()


def test_published_similarities() -> None:
    # sentence-transformers' model card for all-MiniLM-L6-v2: 0.6660, 0.1046, 0.1411.
    # Measured with this int8 export: 0.6684, 0.1055, 0.1404 (all within 0.003).
    v = encoder().encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    sims = v @ v.T
    assert abs(sims[0, 1] - 0.666) < 0.01
    assert abs(sims[0, 2] - 0.105) < 0.01
    assert abs(sims[1, 2] - 0.141) < 0.01
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v.dtype == np.float32 and v.shape == (3, 384)


def test_batching_does_not_change_vectors() -> None:
    texts = ["short", "a much longer sentence with many more word pieces in it " * 5]
    together = encoder().encode(texts)
    alone = np.stack([encoder().encode([t])[0] for t in texts])
    assert np.array_equal(together, alone)  # bit for bit (test_encoder_batching.py)


def test_truncation_is_256_not_the_shipped_128() -> None:
    base = "word " * 200  # ~200 pieces: past the tokenizer file's fixed 128
    a, b = encoder().encode([base + "apple", base + "zebra orchestra volcano"])
    assert float(a @ b) < 0.9999  # tokens past 128 still reach the model
    assert encoder().count_tokens("hello world " * 300) == 602


def test_fingerprint_depends_on_settings() -> None:
    assert encoder().fingerprint == MiniLmEncoder().fingerprint
    assert MiniLmEncoder(max_tokens=128).fingerprint != encoder().fingerprint


def test_mean_pool_ignores_padding() -> None:
    hidden = np.array([[[3.0, 4.0], [100.0, 100.0]]])
    out = mean_pool(hidden, np.array([[1, 0]]))
    assert np.allclose(out, [[0.6, 0.8]])


class CountingEncoder:
    """Wraps the real encoder and counts texts actually embedded."""

    def __init__(self) -> None:
        self.embedded = 0

    @property
    def fingerprint(self) -> str:
        return encoder().fingerprint

    @property
    def dim(self) -> int:
        return 384

    def count_tokens(self, text: str) -> int:
        return encoder().count_tokens(text)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded += len(texts)
        return encoder().encode(texts)


def test_cache_embeds_each_text_once() -> None:
    enc, store = CountingEncoder(), MemoryEmbeddingCache()
    first = encode_cached(enc, ["alpha", "beta", "alpha"], store)
    assert enc.embedded == 2 and len(store) == 2
    second = encode_cached(enc, ["beta", "alpha"], store)
    assert enc.embedded == 2
    assert np.array_equal(first[1], second[0]) and np.array_equal(first[0], first[2])


def test_chunks_fit_window_and_follow_headings() -> None:
    body = "# Intro\n" + "The cat sat on the mat. " * 60 + "\n\n## Details\n" + "\n\n".join(
        f"Paragraph {i} " + "word " * 40 for i in range(10))
    chunks = chunk_note("Note", body, encoder().count_tokens, 256)
    assert len(chunks) > 3
    assert all(encoder().count_tokens(c) <= 256 for c in chunks)
    assert chunks[0].startswith("Note\nIntro") and chunks[-1].startswith("Note\nDetails")
    assert chunk_note("Tiny", "short body", encoder().count_tokens) == ("Tiny\nshort body",)
    words = " ".join(body.split())
    joined = " ".join(" ".join(c.split("\n", 2)[-1] for c in chunks).split())
    assert len(joined) >= len(words) - 200  # only headings/prefixes move; no text is lost


def test_dense_best_chunk_matches_brute_force() -> None:
    long_body = "Budget spreadsheets and quarterly accounting. " * 80 + "\n\n## Weekend\n" + \
        "It was sunny and warm at the beach all afternoon."
    corpus = make_corpus([("weather", "The weather is lovely today."),
                          ("stadium", "He drove to the stadium."),
                          ("mixed", long_body)])
    idx = DenseIndex.build(corpus, encoder(), MemoryEmbeddingCache())
    scores = dense_scores(idx, encoder(), "It's so sunny outside!")
    q = encoder().encode(["It's so sunny outside!"])[0]
    for i in range(3):
        rows = idx.matrix[idx.starts[i]: (idx.starts[i + 1] if i < 2 else None)]
        assert abs(scores[i] - float(np.max(rows @ q))) < 1e-6
    assert idx.matrix.shape[0] > 3  # the long note was chunked
    assert scores[0] > scores[1] and scores[2] > scores[1]


def test_embedded_text_is_prose() -> None:
    assert plain_links("[[Caroline]]: see ![[p.png]], [[A#h|that]] and [[B#sec]]") == (
        "Caroline: see p.png, that and B")
    assert informative_title("D1-3") == "" and informative_title("2024-05-01") == ""
    assert informative_title("Session 3") == "Session 3"
    count = encoder().count_tokens
    assert chunk_note("D1-3", "[[Caroline]]: hello", count) == ("Caroline: hello",)
    assert chunk_note("Auth", "[[Bob|he]] fixed it", count) == ("Auth\nhe fixed it",)


def test_dialogue_turns_are_also_embedded_sentence_by_sentence_with_their_speaker() -> None:
    count = encoder().count_tokens
    body = "[[Nate]]: Way to go! I just got a new dog, this is Max! [shares a photo: a dog]"
    assert chunk_note("D12-3", body, count, speaker="Nate") == (
        "Nate: Way to go! I just got a new dog, this is Max! [shares a photo: a dog]",
        "Nate: Way to go!",
        "Nate: I just got a new dog, this is Max!",
        "Nate: [shares a photo: a dog]",
    )
    # one sentence: the whole turn is the only unit; no speaker: no sentence units
    assert chunk_note("D1-1", "[[Nate]]: Hi there.", count, speaker="Nate") == ("Nate: Hi there.",)
    assert chunk_note("Note", "One. Two.", count) == ("Note\nOne. Two.",)
    # the speaker label is matched case-insensitively and not repeated; the title is kept
    assert chunk_note("Session 2 turn 1", "[[User]]: I moved. It rained.", count,
                      speaker="user") == ("Session 2 turn 1\nUser: I moved. It rained.",
                                          "Session 2 turn 1\nuser: I moved.",
                                          "Session 2 turn 1\nuser: It rained.")
    long_turn = "Budget talk. " * 200  # over the window: paragraph chunks only
    assert chunk_note("t", long_turn, count, speaker="Ann") == chunk_note("t", long_turn, count)


def test_dense_index_reads_the_speaker_from_frontmatter() -> None:
    from dataclasses import replace

    text = "[[Ann]]: The weather is lovely today. He drove to the stadium."
    plain = make_corpus([("D1-1", text)])
    turn = replace(plain, frontmatter=({"speaker": "Ann"},))
    assert DenseIndex.build(plain, encoder(), MemoryEmbeddingCache()).matrix.shape[0] == 1
    idx = DenseIndex.build(turn, encoder(), MemoryEmbeddingCache())
    assert idx.matrix.shape[0] == 3  # the whole turn and its two sentences
    q = "Ann: He drove to the stadium."
    whole = float(idx.matrix[0] @ encoder().encode([q])[0])
    assert dense_scores(idx, encoder(), q)[0] > whole + 0.05  # the sentence unit wins


@pytest.mark.parametrize("name", ["user", "assistant", "Caroline", "Dr. Ann Lee", "O'Brien"])
def test_a_body_that_starts_with_a_speaker_label_is_that_speakers_turn(name: str) -> None:
    text = "I'm planning a trip. By the way, I canceled my magazine subscription."
    assert turn_speaker(f"{name}: {text}") == name
    assert turn_speaker(f"\n  {name}:\t{text}") == name
    # two labelled lines are an exchange, not one turn; no label, a digit or a URL: none
    assert turn_speaker(f"{name}: {text}\nBob: Which one?") == ""
    assert turn_speaker(text) == ""
    assert turn_speaker(f"1. {name}: {text}") == ""
    assert turn_speaker(f"{name}://example.org {text}") == ""


@pytest.mark.parametrize("labels", [("Background", "Methods", "Results", "Conclusions"),
                                    ("BACKGROUND", "METHODS", "RESULTS"),
                                    ("Objective", "Materials and methods", "Results"),
                                    ("Rationale", "Design", "Setting", "Main outcome measure"),
                                    ("Alice", "Bob", "Alice")])
def test_a_body_whose_first_label_is_answered_by_later_labelled_parts_has_no_speaker(
        labels: tuple[str, ...]) -> None:
    # a structured abstract on one line ("Background: ... Methods: ... Results: ...") or a
    # pasted exchange: the first label heads a part of the text, it is nobody's turn
    parts = [f"{label}: We measured {i} things in 2014. It took {i} days." for i, label in
             enumerate(labels)]
    assert turn_speaker(" ".join(parts)) == ""
    assert turn_speaker(" ".join(parts[:2])) == labels[0]  # one later label: an aside


@pytest.mark.parametrize("name", ["user", "assistant", "Gina", "Tim"])
def test_a_speakers_asides_lists_and_initials_are_no_labelled_parts(name: str) -> None:
    asides = [f"{name}: Hey Evan! Exciting news: I got the job. It was a big step.",
              f"{name}: Options are:\n\n1. Hiking: the park has trails. 2. Camping: sites "
              "open in May. 3. Skiing: in winter.",
              f"{name}: Read The Poppy War by R.F. Kuang: a fantasy. Or The Ten Thousand "
              "Doors of January by Alix E. Harrow: a portal story."]
    assert [turn_speaker(text) for text in asides] == [name] * len(asides)


def test_dense_index_reads_the_speaker_from_the_body_when_frontmatter_names_none() -> None:
    # a chat turn as a BEIR corpus or a pasted message holds it (issue 33's lme_turns): the
    # aside gets a unit of its own, and a question about it finds the turn by that unit
    text = "user: I'm planning a trip to Jordan to see Petra. By the way, I just canceled my " \
           "Forbes magazine subscription."
    idx = DenseIndex.build(make_corpus([("t00001", text)]), encoder(), MemoryEmbeddingCache())
    assert idx.matrix.shape[0] == 3  # the whole turn and its two sentences
    q = "How many magazine subscriptions do I have?"
    whole = float(idx.matrix[0] @ encoder().encode([q])[0])
    assert dense_scores(idx, encoder(), q)[0] > whole


def test_progress_is_reported_before_the_first_slice_and_after_each() -> None:
    from vault.retrieval.encoders import PROGRESS_STEP

    seen: list[tuple[int, int]] = []
    texts = [f"text number {i}" for i in range(PROGRESS_STEP + 3)]
    encode_cached(CountingEncoder(), texts, MemoryEmbeddingCache(),
                  lambda done, total, what: seen.append((done, total)))
    total = len(texts)
    assert seen == [(0, total), (PROGRESS_STEP, total), (total, total)]
    seen.clear()
    encode_cached(CountingEncoder(), [], MemoryEmbeddingCache(),
                  lambda done, total, what: seen.append((done, total)))
    assert seen == []  # nothing to embed: nothing reported


def test_a_lone_surrogate_is_embedded_as_the_replacement_character() -> None:
    """A query whose argv bytes were not UTF-8 (or JSON "\\udcff") holds lone surrogates: the
    tokenizer refused the whole batch with a TypeError (`rmh search` was a traceback)."""
    for text in ["bad\udcff\udcfe", "\ud800", "ok \udfff end", "caf\u00e9 \udc80"]:
        fixed = text.replace("\udcff", "\ufffd").replace("\udcfe", "\ufffd").replace(
            "\ud800", "\ufffd").replace("\udfff", "\ufffd").replace("\udc80", "\ufffd")
        got = encoder().encode([text, "plain"])
        assert np.array_equal(got[0], encoder().encode([fixed])[0])
        assert encoder().count_tokens(text) == encoder().count_tokens(fixed)
