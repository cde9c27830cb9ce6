"""`rmh bench` end to end on tiny LoCoMo / LongMemEval files, and the metric definitions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.metrics import paired_bootstrap, question_metrics

ROOT = Path(__file__).resolve().parents[2]


def _turn(speaker: str, did: str, text: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": did, "text": text}


LOCOMO = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("Caroline", "D1:1", "I went to the LGBTQ support group yesterday."),
            _turn("Melanie", "D1:2", "That sounds great. I painted a sunrise last week."),
            _turn("Caroline", "D1:3", "I am researching adoption agencies now."),
        ],
        "session_2_date_time": "2:00 pm on 9 June, 2023",
        "session_2": [
            _turn("Melanie", "D2:1", "We went camping at the lake with the kids."),
            _turn("Caroline", "D2:2", "I gave a talk at a school about my journey."),
        ],
    },
    "qa": [
        {"question": "When did Caroline go to the support group?", "answer": "7 May",
         "evidence": ["D1:1"], "category": 2},
        {"question": "What did Melanie paint?", "answer": "a sunrise", "evidence": ["D1:2"],
         "category": 4},
        {"question": "Where did Melanie camp?", "answer": "lake", "evidence": ["D2:1"],
         "category": 1},
        {"question": "Adversarial?", "answer": "", "evidence": ["D1:3"], "category": 5},
        {"question": "Missing evidence", "answer": "", "evidence": ["D9:9"], "category": 1},
    ],
}]


def _session(*user: tuple[str, bool]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for text, has in user:
        out.append({"role": "user", "content": text, "has_answer": has})
        out.append({"role": "assistant", "content": "Sure, here is some help."})
    return out


def _lme(qid: str, question: str, answer_has: bool) -> dict[str, object]:
    return {
        "question_id": qid, "question_type": "single-session-user", "question": question,
        "question_date": "2023/05/30", "answer": "x",
        "answer_session_ids": ["answer_1"],
        "haystack_dates": ["2023/05/01", "2023/05/02", "2023/05/03"],
        "haystack_session_ids": ["s_a", "answer_1", "s_b"],
        "haystack_sessions": [
            _session(("How do I bake bread?", False)),
            _session(("I attended a play, The Glass Menagerie, at the community theater.",
                      answer_has), ("Thanks!", False)),
            _session(("Recommend a hiking trail near Denver.", False)),
        ],
    }


LME = [_lme("q1", "What play did I attend at the community theater?", True),
       _lme("q2_abs", "What play did I attend?", True),
       _lme("q3", "What play did I attend at the theater?", False)]


def _bench(tmp_path: Path, *args: str) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "harness", "bench", *args, "--json",
         "--cache", str(tmp_path / "emb.sqlite")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert "rmh bench" in run.stderr  # progress goes to stderr, the document to stdout
    doc: dict[str, Any] = json.loads(run.stdout)
    return doc


@pytest.mark.slow
def test_locomo_json_report(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(LOCOMO))
    doc = _bench(tmp_path, "locomo", "--data", str(data), "--ablate")
    assert doc["questions"] == 3  # category 5 and unresolvable evidence left out
    assert doc["excluded"] == {"no_resolvable_evidence": 1}
    methods = doc["methods"]
    assert isinstance(methods, dict) and set(methods) == {
        "bm25", "dense", "rrf", "full", "-bm25", "-dense", "-conjunctive", "-graph",
        "-context", "-named", "-when"}
    for vals in methods.values():
        assert all(0.0 <= v <= 1.0 for v in vals.values())
        assert vals["recall@10"] == 1.0  # 5 turns: everything is in the top 10
    assert methods["full"]["recall@1"] == 1.0
    assert set(doc["by_category"]) == {"1 (multi-hop)", "2 (temporal)", "4 (single-hop)"}
    assert "full-rrf" in doc["ci"]
    # second run: every embedding comes from the cache
    again = _bench(tmp_path, "locomo", "--data", str(data))
    assert again["methods"]["full"] == methods["full"]


@pytest.mark.slow
def test_longmemeval_session_and_turn(tmp_path: Path) -> None:
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(LME))
    doc = _bench(tmp_path, "longmemeval", "--data", str(data))
    assert doc["questions"] == 1
    assert doc["excluded"] == {"abstention": 1, "no_user_evidence": 1}
    assert doc["methods"]["full"]["recall_all@1"] == 1.0
    turn = _bench(tmp_path, "longmemeval", "--data", str(data), "--granularity", "turn")
    assert turn["granularity"] == "turn" and turn["questions"] == 1
    assert turn["methods"]["full"]["ndcg@5"] == 1.0


def test_metrics_hand_case() -> None:
    m = question_metrics([5, 2, 9, 1], frozenset({2, 1, 7}))
    assert m["recall_any@1"] == 0.0 and m["recall_any@5"] == 1.0
    assert m["recall_all@10"] == 0.0 and abs(m["recall@5"] - 2 / 3) < 1e-12
    # LongMemEval DCG: rel1 + sum_{i>=2} rel_i / log2(i): hits at ranks 2 and 4 -> 1 + 1/2;
    # ideal for 3 relevant: 1 + 1 + 1/log2(3).
    assert abs(m["ndcg@5"] - 1.5 / (2 + 1 / 1.5849625007211563)) < 1e-12
    ci = paired_bootstrap([1, 1, 0, 1], [0, 1, 0, 0])
    assert ci["mean"] == 0.5 and ci["lo"] <= 0.5 <= ci["hi"]
    assert paired_bootstrap([1, 1, 0, 1], [0, 1, 0, 0]) == ci  # fixed seed


def test_benchmark_vault_shapes(tmp_path: Path) -> None:
    from bench.datasets import load_locomo, load_longmemeval

    (tmp_path / "l.json").write_text(json.dumps(LOCOMO))
    (tmp_path / "m.json").write_text(json.dumps(LME))
    conv = next(load_locomo(tmp_path / "l.json")).corpus
    hubs = {i for i, a in enumerate(conv.archived) if a}
    replies = {e for e in conv.edges if not set(e) & hubs}
    assert replies == {(2, 0), (4, 2), (6, 5)}  # each turn links the turn it replies to
    assert all(conv.frontmatter[i]["speaker"] for i in range(len(conv)) if i not in hubs)
    turns = next(load_longmemeval(tmp_path / "m.json", "turn", {})).corpus
    hub = {i for i, a in enumerate(turns.archived) if a}
    # user turns reply to assistant turns, which are not documents: only the hub links them
    assert hub and all(set(e) & hub for e in turns.edges)


@pytest.mark.slow
def test_beir_json_report(tmp_path: Path) -> None:
    from tests.bench.test_beir import write_beir

    folder = write_beir(tmp_path / "tiny", "train")
    doc = _bench(tmp_path, "beir", "--data", str(folder), "--split", "train")
    assert doc["split"] == "train" and doc["documents"] == 3 and doc["questions"] == 3
    assert doc["dropped_judgements"] == 0 and doc["unreachable_judgements"] == 1
    assert doc["no_relevant"] == 1  # q4, judged 0 only: asked, scores 0 (pytrec_eval)
    assert set(doc["methods"]) == {"bm25", "dense", "rrf", "full"}
    for vals in doc["methods"].values():
        assert set(vals) == {"ndcg@10", "recall@100"}
        assert all(0.0 <= v <= 1.0 for v in vals.values())
    # q2's second relevant document shares no word with it: BM25 scores it 0, never ranks it;
    # its third (d9) is not in the corpus, so no method finds it (q1 1, q2 1/3, q4 0)
    assert doc["methods"]["bm25"]["recall@100"] == pytest.approx(4 / 9)
    assert doc["methods"]["full"]["ndcg@10"] >= doc["methods"]["bm25"]["ndcg@10"] > 0.5 * 2 / 3
    ci = doc["ci"]
    assert {"full-rrf", f"full-{ci['best_single']}"} <= set(ci)
    assert {"mean", "lo", "hi", "wins", "losses"} <= set(ci["full-rrf"]["ndcg@10"])
    again = _bench(tmp_path, "beir", "--data", str(folder), "--split", "train")
    assert again["methods"] == doc["methods"]  # deterministic, embeddings from the cache
    bad = subprocess.run([sys.executable, "-m", "harness", "bench", "beir", "--data",
                          str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "qrels/test.tsv" in bad.stderr  # default split: test


def test_beir_says_the_first_query_indexes_the_whole_collection(tmp_path: Path) -> None:
    """`--limit 1` on SciFact still embeds 5,183 documents before the first query: minutes with
    nothing said after the title line before session 33 (NOTES-NEWUSER5.md)."""
    from tests.bench.test_beir import write_beir

    folder = write_beir(tmp_path / "tiny", "train")
    run = subprocess.run(
        [sys.executable, "-m", "harness", "bench", "beir", "--data", str(folder), "--split",
         "train", "--limit", "1", "--json", "--cache", str(tmp_path / "emb.sqlite")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(run.stdout)["questions"] == 1
    said = run.stderr.splitlines()[1]
    assert said.startswith("  the first query indexes all 3 documents (--limit bounds"), said
    assert str(tmp_path / "emb.sqlite") in said
