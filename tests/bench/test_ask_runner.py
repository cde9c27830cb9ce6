"""bench/ask_runner.py: the search methods and the ask loop see the day a question is asked on
(LongMemEval's question_date), as `rmh bench` does, so `full` here is the same ranking."""

from __future__ import annotations

from datetime import date, timedelta

from bench.ask_runner import run
from bench.cli_ask import asker
from bench.datasets import Haystack, Question
from harness import LoopParams
from vault import Corpus, SearchEngine

ASKED = date(2023, 4, 1)


def haystack() -> Haystack:
    """Three notes about a lamp, the last dated four weeks before the question (ties by id
    would put it third)."""
    n = 3
    days = (10, 60, 28)
    body = "I bought a lamp for the study."
    corpus = Corpus(0, tuple(range(1, n + 1)), tuple(f"s{i}.md" for i in range(n)),
                    tuple(f"s{i}" for i in range(n)), tuple(() for _ in range(n)),
                    tuple(body for _ in range(n)),
                    tuple({"date": (ASKED - timedelta(days=d)).isoformat()} for d in days),
                    tuple("h" for _ in range(n)), (), tuple(False for _ in range(n)))
    q = Question("q", "Which lamp did I buy four weeks ago?", "temporal-reasoning",
                 frozenset({2}), ASKED)
    return Haystack("h", corpus, (q,))


def test_full_and_the_ask_loop_place_the_time_on_the_day_asked() -> None:
    engine = SearchEngine.lexical()
    got = run([haystack()], engine, askers={"ask": asker(engine, LoopParams())},
              progress=None)
    assert {m: r[0]["recall_all@2"] for m, r in got["rows"].items()} == {
        "bm25": 0.0, "rrf": 0.0, "full": 1.0, "ask": 1.0}
    undated = Haystack("h", haystack().corpus, (Question(
        "q", "Which lamp did I buy four weeks ago?", "t", frozenset({2})),))
    assert run([undated], engine, progress=None)["rows"]["full"][0]["recall_all@2"] == 0.0
