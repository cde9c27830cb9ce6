"""Persisted lexical indexes (lexical_store.py): loaded instead of rebuilt when the notes are
the same, scoring byte for byte like a fresh build; a stale or broken store is rebuilt."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vault.notes.text import tokenize
from vault.retrieval import lexical_store
from vault.retrieval.derived import build_derived
from vault.retrieval.signals.bm25 import Bm25Index
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.storage import mapped_arrays
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import incident_reports, make_corpus

ROOT = Path(__file__).resolve().parents[3]
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


def _rebuilt_equals_fresh(tmp_path: Path, c: Corpus) -> None:
    assert lexical_store.load(tmp_path, lexical_store.corpus_digest(c)) is None
    got = build_derived(c, str(tmp_path))  # falls back to a build, saved again
    fresh = build_derived(c)
    assert scores(got.bm25, got.conj) == scores(fresh.bm25, fresh.conj)
    assert lexical_store.load(tmp_path, lexical_store.corpus_digest(c)) is not None


def test_damaged_or_other_version_stores_fall_back(tmp_path: Path) -> None:
    c = corpus()
    build_derived(c, str(tmp_path))
    path = tmp_path / lexical_store.FILE
    good = path.read_bytes()
    flips = [good[:i] + bytes([good[i] ^ 1]) + good[i + 1:]
             for i in (3, 30, 200, len(good) // 3, len(good) - 70)]
    for bad in [good[:-1], good[:100], b"", *flips]:
        path.write_bytes(bad)
        _rebuilt_equals_fresh(tmp_path, c)
        assert path.read_bytes() == good  # the same bytes as the first save
    got = mapped_arrays.read(path, lexical_store.MAGIC)
    assert got is not None
    head, arrays = got
    for other in ({**head, "version": lexical_store.VERSION - 1}, {**head, "digest": "0" * 64},
                  {"digest": head["digest"]}):
        assert mapped_arrays.write(path, lexical_store.MAGIC, other, arrays)
        _rebuilt_equals_fresh(tmp_path, c)
    assert mapped_arrays.write(path, lexical_store.MAGIC, head,
                               {k: v for k, v in arrays.items() if k != "c_m"})
    _rebuilt_equals_fresh(tmp_path, c)  # an array missing


def test_each_kind_of_change_makes_it_stale(tmp_path: Path) -> None:
    c = corpus()
    build_derived(c, str(tmp_path))
    fm = list(c.frontmatter)
    fm[3] = {**fm[3], "description": "a new description"}
    changed = [replace(c, frontmatter=tuple(fm)),
               replace(c, content_hashes=("f" * 64, *c.content_hashes[1:])),
               make_corpus([*incident_reports()[:61]]),  # one note more
               make_corpus([*incident_reports()[:59]])]  # one note fewer
    for other in changed:
        assert lexical_store.corpus_digest(other) != lexical_store.corpus_digest(c)
        _rebuilt_equals_fresh(tmp_path, other)


def test_another_vaults_store_is_not_used(tmp_path: Path) -> None:
    mine, theirs = corpus(), make_corpus(incident_reports()[10:70])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    build_derived(mine, str(tmp_path / "a"))
    build_derived(theirs, str(tmp_path / "b"))
    (tmp_path / "b" / lexical_store.FILE).replace(tmp_path / "a" / lexical_store.FILE)
    _rebuilt_equals_fresh(tmp_path / "a", mine)


def test_a_version_2_npz_is_not_read_and_goes_at_the_next_save(tmp_path: Path) -> None:
    c = corpus()
    np.savez(tmp_path / lexical_store.LEGACY, version=np.int64(2),
             digest=np.str_(lexical_store.corpus_digest(c)))
    _rebuilt_equals_fresh(tmp_path, c)
    assert not (tmp_path / lexical_store.LEGACY).exists()


SAVE = """
import sys
from pathlib import Path
from vault.retrieval import lexical_store
from vault.retrieval.derived import build_derived
from vault.storage.store import Store
from tests.vault.retrieval.test_lexical_store import corpus
folder, after = Path(sys.argv[1]), int(sys.argv[2])
c = corpus()
d = build_derived(c)
count_op = Store(folder, fault_after=after).count_op if after else None
print(lexical_store.save(folder, lexical_store.corpus_digest(c), d.bm25, d.conj, count_op))
"""


def _save(folder: Path, after: int, seed: str = "0") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SAVE, str(folder), str(after)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed})


def test_the_store_bytes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    outs = set()
    for seed in ("1", "2"):
        assert _save(tmp_path, 0, seed).stdout.strip() == "True"
        outs.add((tmp_path / lexical_store.FILE).read_bytes())
    (tmp_path / "x").mkdir()
    build_derived(corpus(), str(tmp_path / "x"))  # this process's seed
    outs.add((tmp_path / "x" / lexical_store.FILE).read_bytes())
    assert len(outs) == 1


@pytest.mark.parametrize("after", [1, 2, 3])
def test_killed_while_saving(tmp_path: Path, after: int) -> None:
    """SIGKILLed after the temporary is written (1), after the rename (2), not at all (3):
    the next build loads a whole store or builds, scoring as a fresh build either way."""
    c = corpus()
    stale = make_corpus(incident_reports()[:30])
    build_derived(stale, str(tmp_path))  # an older store in place
    old = (tmp_path / lexical_store.FILE).read_bytes()
    run = _save(tmp_path, after)
    temps = list(tmp_path.glob(f".{lexical_store.FILE}.*.tmp"))
    digest = lexical_store.corpus_digest(c)
    if after == 1:
        assert run.returncode == -9 and len(temps) == 1
        assert (tmp_path / lexical_store.FILE).read_bytes() == old
        assert lexical_store.load(tmp_path, digest) is None
    else:
        assert run.returncode == (-9 if after == 2 else 0), run.stderr
        assert not temps and lexical_store.load(tmp_path, digest) is not None
    got, fresh = build_derived(c, str(tmp_path)), build_derived(c)
    assert scores(got.bm25, got.conj) == scores(fresh.bm25, fresh.conj)
    assert not list(tmp_path.glob(f".{lexical_store.FILE}.*.tmp"))  # swept by the save
