"""The benchmark files as they exist in the wild (BEIR collections, LongMemEval's s/m/oracle
files, LoCoMo) read the same way in every valid variant, invalid ones fail with a typed error
naming the file and the problem, and the BEIR metrics match pytrec_eval's definitions
computed here independently from the raw qrels lines."""

from __future__ import annotations

import gzip
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.beir import BeirError, load_beir, ndcg_at, recall_at, run_beir
from bench.datasets import DatasetError, load_locomo, load_longmemeval, locomo_excluded
from vault import SearchEngine, SearchParams

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("plain", "no-header", "spaces", "crlf", "bom", "gzip", "int-ids")


def _write(path: Path, text: str, variant: str) -> None:
    if variant == "crlf":
        text = text.replace("\n", "\r\n")
    if variant == "bom":
        text = "\ufeff" + text
    if variant == "gzip":
        with gzip.open(path.with_name(path.name + ".gz"), "wt", encoding="utf-8") as fh:
            fh.write(text)
        return
    path.write_bytes(text.encode("utf-8"))


def _collection(folder: Path, docs: list[dict[str, Any]], queries: list[dict[str, Any]],
                qrels: list[tuple[str, str, int]], variant: str, split: str = "test") -> Path:
    (folder / "qrels").mkdir(parents=True)
    if variant == "int-ids":  # SciFact-style numeric _id fields
        docs = [{**d, "_id": int(d["_id"][1:]) + 1000} for d in docs]
        queries = [{**q, "_id": int(q["_id"][1:])} for q in queries]
        qrels = [(q[1:], str(int(d[1:]) + 1000), s) for q, d, s in qrels]
    _write(folder / "corpus.jsonl", "".join(json.dumps(d, ensure_ascii=False) + "\n"
                                            for d in docs), variant)
    _write(folder / "queries.jsonl", "".join(json.dumps(q) + "\n" for q in queries), variant)
    sep = " " if variant == "spaces" else "\t"
    head = "" if variant == "no-header" else sep.join(("query-id", "corpus-id", "score")) + "\n"
    _write(folder / "qrels" / f"{split}.tsv",
           head + "".join(f"{q}{sep}{d}{sep}{s}\n" for q, d, s in qrels), variant)
    return folder


def _generated(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                   list[tuple[str, str, int]]]:
    """Documents with every title/text shape (missing, null, empty, unicode, very long, extra
    fields), queries, and qrels with graded scores 0/1/2, repeated pairs and judged documents
    absent from the corpus."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(40):
        d: dict[str, Any] = {"_id": f"d{i}", "text": f"document {i} ünïcødé 文档 " * (i % 3)}
        if i % 4 == 0:
            d["title"] = f"Title {i}"
        elif i % 4 == 1:
            d["title"] = None
        elif i % 4 == 2:
            d["title"] = ""
        if i % 5 == 0:
            d["metadata"] = {"url": f"https://example.org/{i}"}
        if i == 7:
            d["text"] = "long " * 20000
        docs.append(d)
    queries = [{"_id": f"q{i}", "text": f"query {i}", "metadata": {}} for i in range(12)]
    qrels: list[tuple[str, str, int]] = []
    for q in range(12):
        for _ in range(rng.randint(0, 6)):
            qrels.append((f"q{q}", f"d{rng.randint(0, 49)}", rng.choice((0, 1, 1, 2))))
    return docs, queries, qrels


def _reference(qrels: list[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """BEIR's GenericDataLoader: a later line for the same pair replaces the earlier one."""
    out: dict[str, dict[str, int]] = {}
    for q, d, s in qrels:
        out.setdefault(q, {})[d] = s
    return out


def _trec_ndcg(ranking: list[str], judged: dict[str, int], k: int) -> float:
    """trec_eval's ndcg_cut.k: gain = the judged score, discount log2(rank + 1); the ideal
    over every judged document, in the corpus or not."""
    dcg = sum(judged.get(d, 0) / math.log2(r + 2) for r, d in enumerate(ranking[:k]))
    ideal = sorted((s for s in judged.values() if s > 0), reverse=True)[:k]
    idcg = sum(s / math.log2(r + 2) for r, s in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def _trec_recall(ranking: list[str], judged: dict[str, int], k: int) -> float:
    rel = {d for d, s in judged.items() if s >= 1}
    return len(rel & set(ranking[:k])) / len(rel) if rel else 0.0


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", [1, 2])
def test_beir_variants_read_alike_and_score_as_pytrec_eval(tmp_path: Path, variant: str,
                                                           seed: int) -> None:
    docs, queries, qrels = _generated(seed)
    data = load_beir(_collection(tmp_path / "c", docs, queries, qrels, variant))
    canon = (lambda s: s) if variant != "int-ids" else (lambda s: f"d{int(s) - 1000}")
    assert [canon(d) for d in data.doc_ids] == [d["_id"] for d in docs]
    assert data.corpus.titles[1] == data.doc_ids[1] and data.corpus.titles[0] == "Title 0"
    assert data.corpus.bodies[7] == "long " * 20000 and "文档" in data.corpus.bodies[1]
    reference = _reference(qrels)
    # every judged query is asked, one judged 0 only scoring 0 (pytrec_eval scores it)
    assert sorted(f"q{q.qid.lstrip('q')}" for q in data.queries) == sorted(reference)
    assert data.no_relevant == sum(1 for j in reference.values() if max(j.values()) <= 0)
    rng = random.Random(seed + 100)
    for q in data.queries:
        judged = reference[f"q{q.qid.lstrip('q')}"]
        ranking = rng.sample(range(len(docs)), 30)  # a retrieval run over corpus positions
        ids = [docs[i]["_id"] for i in ranking]
        assert ndcg_at(ranking, q.gains, 10) == pytest.approx(_trec_ndcg(ids, judged, 10))
        assert recall_at(ranking, q.gains, 100) == pytest.approx(_trec_recall(ids, judged, 100))
    absent = sum(1 for j in reference.values() for d, s in j.items()
                 if s > 0 and int(d[1:]) >= len(docs))
    assert data.unreachable_judgements == absent


def test_a_relevant_document_missing_from_the_corpus_still_counts(tmp_path: Path) -> None:
    """pytrec_eval keeps every judged document: one the corpus lacks cannot be found, so the
    query's nDCG@10 and Recall@100 stay below 1 however well it ranks."""
    docs = [{"_id": "d0", "title": "", "text": "zebra stripes camouflage"},
            {"_id": "d1", "title": "", "text": "bread yeast"},
            {"_id": "d2", "title": "", "text": "mountain trail"}]
    folder = _collection(tmp_path / "c", docs, [{"_id": "q0", "text": "zebra stripes"}],
                         [("q0", "d0", 1), ("q0", "gone", 1)], "plain")
    rows, _ = run_beir(load_beir(folder), SearchEngine(SearchParams(weights={"dense": 0.0})),
                       progress=None)
    want = _trec_ndcg(["d0"], {"d0": 1, "gone": 1}, 10)
    assert rows["bm25"][0] == {"ndcg@10": pytest.approx(want), "recall@100": 0.5}
    assert rows["full"][0]["recall@100"] == 0.5


def test_beir_layout_errors_name_what_is_there(tmp_path: Path) -> None:
    docs, queries, qrels = _generated(3)
    _collection(tmp_path / "c", docs, queries, qrels, "plain", split="dev")
    with pytest.raises(BeirError, match=r"qrels/test\.tsv .*splits present: dev\)"):
        load_beir(tmp_path / "c", "test")
    for sub in ("android", "english"):  # CQADupStack: one collection per sub-folder
        _collection(tmp_path / "cqa" / sub, docs, queries, qrels, "plain")
    with pytest.raises(BeirError, match=r"corpus\.jsonl .*give one as --data: android, english"):
        load_beir(tmp_path / "cqa")
    assert load_beir(tmp_path / "cqa" / "english").queries
    _collection(tmp_path / "z", docs, queries, [("q1", "d1", 0), ("q2", "d2", 0)], "plain")
    with pytest.raises(BeirError, match=r"no query has a judgement > 0"):
        load_beir(tmp_path / "z")


def test_beir_last_judgement_of_a_pair_counts(tmp_path: Path) -> None:
    docs, queries, _ = _generated(4)
    qrels = [("q1", "d1", 2), ("q1", "d2", 1), ("q1", "d1", 0), ("q1", "d3", 0),
             ("q1", "d3", 1)]
    data = load_beir(_collection(tmp_path / "c", docs, queries, [*qrels, ("q2", "d1", 0)],
                                 "plain"))
    assert [dict(q.gains) for q in data.queries] == [{2: 1.0, 3: 1.0}, {}]
    rows, _ = run_beir(data, SearchEngine(SearchParams(weights={"dense": 0.0})), progress=None)
    assert rows["full"][1] == {"ndcg@10": 0.0, "recall@100": 0.0}  # q2: averaged in as 0


def _lme_item(qid: str, n_sessions: int = 3) -> dict[str, Any]:
    sessions = [[{"role": "user", "content": f"user says {i}", "has_answer": i == 1},
                 {"role": "assistant", "content": "ok"}] for i in range(n_sessions)]
    return {"question_id": qid, "question_type": "temporal-reasoning", "question": "what?",
            "answer": "x", "question_date": "2023/05/30 (Tue) 22:53",
            "haystack_session_ids": [("answer_1" if i == 1 else f"s{i}")
                                     for i in range(n_sessions)],
            "haystack_dates": ["2023/05/20 (Sat) 02:21"] * n_sessions,
            "haystack_sessions": sessions, "answer_session_ids": ["answer_1"]}


def _broken(item: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("a JSON list is expected", {"data": [item]}),
        ("item 0 has no 'question_id'", [{k: v for k, v in item.items() if k != "question_id"}]),
        ("has no 'question'", [{k: v for k, v in item.items() if k != "question"}]),
        ("3 haystack_session_ids, 2 haystack_dates", [{**item, "haystack_dates": ["x", "y"]}]),
        ("'haystack_sessions' is a str", [{**item, "haystack_sessions": "none"}]),
        ("haystack_sessions\\[0\\] turn has no 'role'",
         [{**item, "haystack_sessions": [[{"content": "hi"}], [], []]}]),
        ("haystack_sessions\\[2\\] is not a list of turns",
         [{**item, "haystack_sessions": [[], [], ["hi"]]}]),
    ]


@pytest.mark.parametrize("case", range(7))
def test_longmemeval_invalid_files_fail_clearly(tmp_path: Path, case: int) -> None:
    problem, doc = _broken(_lme_item("q1"))[case]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match=problem) as e:
        list(load_longmemeval(path, "session", {}))
    assert str(path) in str(e.value)


def test_longmemeval_bad_file_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([_lme_item("q1"), {"question_id": "q2"}]))
    run = subprocess.run([sys.executable, "-m", "harness", "bench", "longmemeval", "--data",
                          str(path), "--cache", str(tmp_path / "e.sqlite")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1] == f"rmh: {path}: question q2 has no 'question'"
    path.write_text(json.dumps([_lme_item("q1_abs")]))  # nothing left to ask
    run = subprocess.run([sys.executable, "-m", "harness", "bench", "longmemeval", "--data",
                          str(path), "--cache", str(tmp_path / "e.sqlite")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f'rmh: {path}: no question to ask (excluded: {{"abstention": 1}})')


def test_longmemeval_file_shapes(tmp_path: Path) -> None:
    """The s/m/oracle files differ in size and session order only; a BOM is read; `_abs`
    questions are counted out (the official retrieval evaluation skips them)."""
    path = tmp_path / "lme.json"
    items = [_lme_item("q1", 3), _lme_item("q2_abs", 2), _lme_item("q3", 40)]
    path.write_bytes(("\ufeff" + json.dumps(items)).encode("utf-8"))
    excluded: dict[str, int] = {}
    stacks = list(load_longmemeval(path, "session", excluded))
    assert [(h.name, len(h.corpus), sorted(h.questions[0].evidence)) for h in stacks] == [
        ("q1", 4, [2]), ("q3", 41, [2])]  # the User hub is position 0
    assert excluded == {"abstention": 1}
    assert stacks[0].questions[0].asked_on is not None


def _locomo(evidence: list[Any], sessions: tuple[int, ...] = (1, 2)) -> list[dict[str, Any]]:
    conv: dict[str, Any] = {"speaker_a": "Zoë", "speaker_b": "Kōji"}
    for s in sessions:
        conv[f"session_{s}_date_time"] = "1:56 pm on 8 May, 2023"
        conv[f"session_{s}"] = [
            {"speaker": "Zoë", "dia_id": f"D{s}:1", "text": "hello"},
            {"speaker": "Kōji", "dia_id": f"D{s}:2", "text": "look", "img_url": ["http://x/y"],
             "blip_caption": "a photo of a dog", "query": "dog"},
        ]
    qa = [{"question": f"q{i}", "answer": "a", "evidence": e, "category": 1 + i % 4}
          for i, e in enumerate(evidence)]
    qa.append({"question": "adv", "adversarial_answer": "a", "evidence": ["D1:1"],
               "category": 5})
    return [{"sample_id": "conv-1", "conversation": conv, "qa": qa}]


def test_locomo_evidence_spellings_and_session_gaps(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    evidence: list[Any] = [["D1:2"], ["D1: 2"], [" D1:1 "], ["D1:1; D3:2"], ["D3:1 D1:2"],
                           ["D1:1", "D3:2"], [], ["D9:9"]]
    path.write_text(json.dumps(_locomo(evidence, sessions=(1, 3)), ensure_ascii=False))
    (stack,) = list(load_locomo(path))
    pos = {stack.corpus.frontmatter[i].get("dia_id"): i for i in range(len(stack.corpus))}
    got = [sorted(q.evidence) for q in stack.questions]
    assert got == [[pos["D1:2"]], [pos["D1:2"]], [pos["D1:1"]], sorted([pos["D1:1"],
               pos["D3:2"]]), sorted([pos["D3:1"], pos["D1:2"]]),
                   sorted([pos["D1:1"], pos["D3:2"]])]
    assert locomo_excluded(path) == {"no_resolvable_evidence": 2}
    assert any("a photo of a dog" in b for b in stack.corpus.bodies)
    assert {"Zoë", "Kōji"} <= set(stack.corpus.titles)


@pytest.mark.parametrize("problem,edit", [
    ("conversation 0 has no 'conversation'", lambda c: c.pop("conversation")),
    ("conversation 0 has no 'qa'", lambda c: c.pop("qa")),
    ("session_1 turn 0 has no 'speaker'", lambda c: c["conversation"]["session_1"][0].pop(
        "speaker")),
    ("qa 0 category 'x' is not a number", lambda c: c["qa"][0].update(category="x")),
])
def test_locomo_invalid_files_fail_clearly(tmp_path: Path, problem: str, edit: Any) -> None:
    doc = _locomo([["D1:1"]])
    edit(doc[0])
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match=problem):
        list(load_locomo(path))


@pytest.mark.parametrize("benchmark", ["locomo", "longmemeval"])
def test_bench_ask_bad_file_is_one_line(tmp_path: Path, benchmark: str) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps([{"question_id": "q1", "qa": []}]))
    run = subprocess.run([sys.executable, "-m", "harness", "bench-ask", benchmark, "--data",
                          str(path), "--cache", str(tmp_path / "e.sqlite")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith(f"rmh: {path}: ")


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_json_lists_are_read_an_item_at_a_time_alike(tmp_path: Path, chunk: int) -> None:
    """The streamed reader (a LongMemEval_M file is gigabytes) gives json.load's items for
    every layout: pretty-printed, CRLF, BOM, unicode, empty list; and fails on broken ones."""
    from bench.datasets import _items

    items = [_lme_item(f"q{i}", 2 + i) for i in range(4)]
    items[1]["question"] = "Zoë's “café” 文档 \\ \" ]},"
    path = tmp_path / "f.json"
    for text in (json.dumps(items), json.dumps(items, indent=2).replace("\n", "\r\n"),
                 "\ufeff" + json.dumps(items, ensure_ascii=False), " [ ] ", "[]"):
        path.write_bytes(text.encode("utf-8"))
        assert list(_items(path, chunk)) == json.loads(text.lstrip("\ufeff"))
    for text, problem in ((json.dumps(items)[:-40], r"not a JSON file \(item 3"),
                          (json.dumps(items)[:-1] + " x", r"after item 3"),
                          ("", "it is empty"), ('{"a": 1}', "starts with '{'")):
        path.write_text(text)
        with pytest.raises(DatasetError, match=problem):
            list(_items(path, chunk))
