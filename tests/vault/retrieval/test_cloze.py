"""The conjunctive weight from cloze queries (vault/retrieval/cloze.py; issue 33 item 1)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from vault import MiniLmEncoder
from vault.retrieval import calibration as cal
from vault.retrieval import cloze
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.signals.bm25 import Bm25Index
from vault.retrieval.signals.dense import DenseIndex
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import incident_reports, make_corpus

TOPICS = ("harbour", "orchard", "glacier", "library", "bakery", "railway", "meadow", "foundry",
          "lighthouse", "vineyard", "quarry", "monastery", "canal", "observatory", "market",
          "sawmill", "island", "theatre", "brewery", "mine")


def trips() -> list[tuple[str, str]]:
    """20 notes of three sentences each (cloze needs two or more)."""
    return [(f"visit {t}", f"We walked to the old {t} early on day {i}. The guide told us how "
             f"the {t} was built by hand over {i + 3} long winters. Afterwards we ate bread "
             f"and cheese by the water and talked about the {t} until dark.")
            for i, t in enumerate(TOPICS)]


def test_a_cloze_query_is_scored_against_its_note_without_it() -> None:
    c = make_corpus(trips())
    qs = cloze.cloze_queries(c)
    assert len(qs) == len(TOPICS) and qs == cloze.cloze_queries(make_corpus(trips()))
    enc, cache = MiniLmEncoder(), MemoryEmbeddingCache()
    dense = cloze.Dense(DenseIndex.build(c, enc, cache), enc, cache, 256, 0)
    bm25 = Bm25Index.build(c)
    for q in qs[:4]:
        assert q.query not in q.rest and q.query in c.bodies[q.source]
        # the note without its sentence, indexed from scratch: the same BM25 and dense ranks
        bodies = [b if i != q.source else q.rest for i, (_, b) in enumerate(trips())]
        cut = make_corpus([(t, b) for (t, _), b in zip(trips(), bodies, strict=True)])
        fresh_b = Bm25Index.build(cut).score(q.query)
        fresh_d = DenseIndex.build(cut, enc, cache).score_vector(enc.encode([q.query])[0])
        got = cloze.ranks(c, q, bm25, dense)
        assert got == (cal.reciprocal_rank(fresh_b, q.source, c.paths),
                       cal.reciprocal_rank(fresh_d, q.source, c.paths))


def test_the_verdict_is_a_two_sided_sign_test() -> None:
    assert cloze.sign_p(0, 6) == 2 / 64 and cloze.sign_p(5, 5) == 1.0
    assert cloze.sign_p(0, 0) == 1.0
    assert math.isclose(cloze.sign_p(14, 42), cloze.sign_p(42, 14))
    lme = [(1.0, 0.5)] * 14 + [(0.5, 1.0)] * 42 + [(1.0, 1.0)] * 8  # lme_turns' split
    assert cloze.verdict(lme)[:3] == (cloze.DENSE_BETTER, 14, 42)
    keyword = [(1.0, 0.5)] * 10 + [(0.5, 1.0)] * 18 + [(1.0, 1.0)] * 36  # within chance
    assert cloze.verdict(keyword)[0] == 1.0
    bm25_better = [(1.0, 0.5)] * 42 + [(0.5, 1.0)] * 14  # only dense's win moves the weight
    assert cloze.verdict(bm25_better)[0] == 1.0
    few = [(0.5, 1.0)] * (cal.MIN_QUERIES - 1)  # too few queries: as configured
    assert cloze.verdict(few)[0] == 1.0
    assert cloze.verdict(few + few[:1])[0] == cloze.DENSE_BETTER


def test_one_sentence_notes_give_no_cloze_query() -> None:
    c = make_corpus([(t, b.split(". ")[0] + ".") for t, b in trips()])
    assert cloze.cloze_queries(c) == []


def test_the_pipeline_makes_it_once_shows_it_and_persists_it(tmp_path: Path) -> None:
    c = make_corpus(trips() + incident_reports())
    enc, cache = MiniLmEncoder(), MemoryEmbeddingCache()
    params = SearchParams(cloze=True)
    on = SearchEngine(params, encoder=enc, cache=cache, scratch=str(tmp_path))
    off = SearchEngine(SearchParams(), encoder=enc, cache=cache)
    q = "who built the lighthouse by hand"
    assert off.calibration(c) is None and "cloze" not in off.search(c, q, 5).stages["fusion"]
    got = on.calibration(c)
    assert got is not None and got.method == "cloze" and got.queries == len(TOPICS)
    assert got.describe().startswith(f"cloze on {len(TOPICS)} sentence-queries of 145 notes")
    assert got.describe() in on.search(c, q, 5).stages["fusion"]
    conj = got.multipliers[2]
    assert got.weights == {"bm25": 0.5, "dense": 1.0, "conjunctive": conj}
    saved = json.loads((tmp_path / cal.FILE).read_text(encoding="utf-8"))
    assert saved["method"] == "cloze" and saved["line"] == got.describe()
    # a new process reads it; the grid calibration on the same folder is made anew
    again = SearchEngine(params, encoder=enc, cache=cache, scratch=str(tmp_path))
    assert again.calibration(c) == got
    grid = SearchEngine(replace(params, calibrate=True), encoder=enc, cache=cache,
                        scratch=str(tmp_path)).calibration(c)
    assert grid is not None and grid.method == "grid"
    assert cal.stale(grid, c, enc.fingerprint, {**got.weights, "conjunctive": 1.0},
                     "cloze") == "made by grid"
    # without the dense channel there is nothing to compare: none
    lexical = SearchEngine(params, scratch=str(tmp_path / "x"))
    assert lexical.calibration(c) is None
