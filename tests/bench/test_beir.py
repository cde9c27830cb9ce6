"""The BEIR loader, its metrics (trec_eval's nDCG with hand-computed golden values) and the
plain RRF baseline, on a small collection written here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bench.beir import BeirError, load_beir, ndcg_at, plain_rrf, recall_at, summarize_beir

DOCS = [
    {"_id": "d1", "title": "Cardiac progenitors", "text": "The heart develops from progenitors."},
    {"_id": "d2", "title": "Bread", "text": "Yeast makes the dough rise."},
    {"_id": "d3", "title": "", "text": "Hiking trails near Denver."},
]
QUERIES = [{"_id": "q1", "text": "heart progenitors"}, {"_id": "q2", "text": "dough rise"},
           {"_id": "q3", "text": "not judged"}, {"_id": "q4", "text": "only score 0"}]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td3\t1\nq2\td9\t1\nq4\td3\t0\n"


def write_beir(folder: Path, split: str = "test", qrels: str = QRELS) -> Path:
    """A BEIR-layout collection in `folder` (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv)."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / f"{split}.tsv").write_text(qrels)
    return folder


def test_loader(tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path), "test")
    assert data.doc_ids == ("d1", "d2", "d3")
    c = data.corpus
    assert len(c) == 3 and c.titles == ("Cardiac progenitors", "Bread", "d3")  # no title: id
    assert c.bodies[1] == "Yeast makes the dough rise." and not c.edges
    # every judged query is asked, in id order (q4, judged 0 only, scores 0 as in pytrec_eval);
    # d9 is not in the corpus but stays relevant (pytrec_eval keeps it): a position no
    # ranking holds
    assert [(q.qid, dict(q.gains)) for q in data.queries] == [
        ("q1", {0: 1.0}), ("q2", {1: 2.0, 2: 1.0, -1: 1.0}), ("q4", {})]
    assert data.dropped_judgements == 0 and data.unreachable_judgements == 1
    assert data.no_relevant == 1


def test_loader_errors(tmp_path: Path) -> None:
    write_beir(tmp_path, "train")
    with pytest.raises(BeirError, match=r"qrels/test\.tsv"):
        load_beir(tmp_path, "test")
    with pytest.raises(BeirError, match="unknown split"):
        load_beir(tmp_path, "validation")
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(BeirError, match="line 2"):
        load_beir(tmp_path, "dev")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1"}\nnot json\n')
    with pytest.raises(BeirError, match=r"corpus\.jsonl line 2"):
        load_beir(tmp_path, "train")


def test_ndcg_golden() -> None:
    gains = {2: 1.0, 1: 2.0, 7: 1.0}
    # hits at ranks 2 (gain 1) and 4 (gain 2); ideal order 2, 1, 1
    dcg = 1 / math.log2(3) + 2 / math.log2(5)
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at([5, 2, 9, 1], gains) == pytest.approx(dcg / idcg, abs=1e-12)
    assert ndcg_at([5, 2, 9, 1], gains) == pytest.approx(0.476627, abs=1e-6)
    assert ndcg_at([1, 2, 7], gains) == pytest.approx(1.0)
    assert ndcg_at([2], {2: 1.0}, k=10) == 1.0 and ndcg_at([3], {2: 1.0}) == 0.0
    assert ndcg_at(list(range(20)), {15: 1.0}, k=10) == 0.0  # below the cut
    assert recall_at([5, 2, 9, 1], gains) == pytest.approx(2 / 3)
    assert recall_at([5, 2, 9, 1], gains, k=2) == pytest.approx(1 / 3)


def test_plain_rrf_hand_case() -> None:
    a = np.array([3.0, 0.0, 1.0, 2.0])
    b = np.array([0.1, 0.9, 0.0, 0.1])  # a tie at 0.1: position 0 ranks first
    el = np.array([True, True, True, True])
    out = plain_rrf([a, b], el, k=60)
    expect = [1 / 61 + 1 / 62, 1 / 61, 1 / 63, 1 / 62 + 1 / 63]
    assert out.tolist() == pytest.approx(expect, abs=1e-15)
    el[0] = False  # an ineligible note is not ranked: the others move up
    out = plain_rrf([a, b], el, k=60)
    assert out[0] == 0.0 and out[3] == pytest.approx(1 / 61 + 1 / 62)


def test_summary_wins_and_losses() -> None:
    rows = {m: [{"ndcg@10": v, "recall@100": 1.0} for v in vals] for m, vals in {
        "bm25": [0.5, 0.2, 0.0], "dense": [0.4, 0.6, 0.1], "rrf": [0.5, 0.5, 0.5],
        "full": [1.0, 0.5, 0.0]}.items()}
    s = summarize_beir(rows)
    assert s["ci"]["best_single"] == "dense"
    d = s["ci"]["full-rrf"]["ndcg@10"]
    assert (d["wins"], d["losses"]) == (1, 1) and d["mean"] == pytest.approx(0.0)
    assert s["ci"]["full-dense"]["ndcg@10"]["wins"] == 1
    assert s["methods"]["full"]["ndcg@10"] == pytest.approx(0.5)


def test_the_querys_own_document_is_not_scored(tmp_path: Path) -> None:
    """ArguAna's layout: each query is also a corpus document with the same `_id`. As BEIR's
    evaluation does (ignore_identical_ids), it leaves every method's ranking before scoring,
    and the judged counter-argument, second behind it, is then first."""
    from bench.beir import run_beir
    from vault import SearchEngine, SearchParams

    folder = tmp_path / "arg"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": "a1", "title": "", "text": "Zoos protect endangered species from poaching."},
            {"_id": "a2", "title": "", "text": "Zoos confine endangered species; poaching is "
                                                 "better fought in the wild."},
            {"_id": "a3", "title": "", "text": "Bread needs yeast."}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "a1", "text": docs[0]["text"]}))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\na1\ta2\t1\n")
    data = load_beir(folder)
    engine = SearchEngine(SearchParams(weights={"dense": 0.0}))
    rows, _ = run_beir(data, engine, progress=None)
    assert {m: r[0]["ndcg@10"] for m, r in rows.items()} == {
        "bm25": 1.0, "dense": 0.0, "rrf": 1.0, "full": 1.0}
