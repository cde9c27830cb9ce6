"""Persisted lexical indexes (lexical_store.py): loaded instead of rebuilt when the notes are
the same, scoring byte for byte like a fresh build; a stale or broken store is rebuilt."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vault.notes.text import tokenize
from vault.retrieval import lexical_store
from vault.retrieval.derived import build_derived
from vault.retrieval.signals.bm25 import Bm25Index
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import incident_reports, make_corpus

QUERIES = ["auth outage on Monday", "billing latency", "payments crash Friday gateway",
           "Ünïcode ﬁle naïve", "nothing matches zzzz"]


def corpus() -> Corpus:
    notes = [*incident_reports()[:60], ("Ünïcode", "naïve ﬁle ÄÖ straße")]
    return make_corpus(notes, aliases=[("alias one",) if i % 7 == 0 else () for i in
                                       range(len(notes))])


def scores(bm25: Bm25Index, conj: ConjunctiveIndex) -> list[bytes]:
    return [x.tobytes() for q in QUERIES for x in (bm25.score_tokens(tokenize(q)),
                                                    conj.score_tokens(tokenize(q)))]


def test_loaded_equals_a_fresh_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = corpus()
    fresh = build_derived(c)
    build_derived(c, str(tmp_path))  # builds and saves
    assert (tmp_path / lexical_store.FILE).is_file()
    calls: list[int] = []
    real = Bm25Index.build

    def counted(corpus: Corpus) -> Bm25Index:
        calls.append(1)
        return real(corpus)

    monkeypatch.setattr(Bm25Index, "build", counted)
    loaded = build_derived(c, str(tmp_path))
    assert calls == []  # nothing re-tokenised
    assert scores(loaded.bm25, loaded.conj) == scores(fresh.bm25, fresh.conj)
    assert loaded.bm25.frequency(["auth", "zzzz"]) == fresh.bm25.frequency(["auth", "zzzz"])
    for a, b in ((loaded.bm25.postings, fresh.bm25.postings),
                 (loaded.conj.postings, fresh.conj.postings)):
        assert a.ptr.tobytes() == b.ptr.tobytes() and a.rows.tobytes() == b.rows.tobytes()
    assert list(loaded.bm25.vocabulary.items()) == list(fresh.bm25.vocabulary.items())


def test_a_changed_note_makes_the_store_stale(tmp_path: Path) -> None:
    c = corpus()
    build_derived(c, str(tmp_path))
    bodies = list(c.bodies)
    bodies[5] += " a new word"
    edited = replace(c, bodies=tuple(bodies), generation=2)
    assert lexical_store.load(tmp_path, lexical_store.corpus_digest(edited)) is None
    got = build_derived(edited, str(tmp_path))  # rebuilt, and saved for the next process
    fresh = build_derived(edited)
    assert scores(got.bm25, got.conj) == scores(fresh.bm25, fresh.conj)
    assert lexical_store.load(tmp_path, lexical_store.corpus_digest(edited)) is not None
    renamed = replace(c, titles=("other", *tuple(c.titles[1:])))
    aliased = replace(c, aliases=((),) * len(c))
    digests = {lexical_store.corpus_digest(x) for x in (c, edited, renamed, aliased)}
    assert len(digests) == 4


def test_a_broken_store_is_ignored(tmp_path: Path) -> None:
    c = corpus()
    build_derived(c, str(tmp_path))
    raw = (tmp_path / lexical_store.FILE).read_bytes()
    (tmp_path / lexical_store.FILE).write_bytes(raw[: len(raw) // 2])
    assert lexical_store.load(tmp_path, lexical_store.corpus_digest(c)) is None
    got = build_derived(c, str(tmp_path))
    fresh = build_derived(c)
    assert scores(got.bm25, got.conj) == scores(fresh.bm25, fresh.conj)
    # an updated (delta-holding) index is never saved as if it were a build
    upd = got.bm25.updated({0: (list(tokenize(c.titles[0] + " " + c.bodies[0])),
                                ["new", "words"])}, len(c))
    assert not lexical_store.save(tmp_path, "x", upd, got.conj)
    assert np.asarray(got.bm25.df).sum() > 0
