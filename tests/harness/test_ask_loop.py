"""The recursive query loop over a real vault: retrieval, link spreading, sub-questions, stops."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.ask import LoopParams, ask, render_note, render_notes
from harness.config import LlmSection
from harness.llm import Broker
from harness.vault_ops import VaultCalls, VaultThread
from vault import Vault

from .llm_stub_endpoint import ChatEndpoint, Reply
from .vault_calls import vault_calls

NOTES = {
    "people/Alice.md": "---\ndate: 2024-03-01\n---\nAlice works as an engineer at [[Acme]].\n",
    "orgs/Acme.md": "Acme is a robotics company. Dana founded it in 1999.\n",
    "people/Dana.md": "Dana was born in Lisbon and studied physics.\n",
    "food/Ramen.md": "The ramen shop Ichiran serves tonkotsu broth late at night.\n",
    "garden/Tomatoes.md": "Tomatoes need six hours of sun and steady watering.\n",
    "travel/Kyoto.md": "Kyoto temples are quiet early in the morning.\n",
    "music/Cello.md": "The cello has four strings tuned in fifths.\n",
}
QUESTION = "Where was Dana born, who founded the company where Alice works?"
# The tests of the passes on this seven-note vault search one hit deep (pool 1, no feedback
# round), so that each pass's contribution is visible; the feedback round has its own tests.
ONE_DEEP = LoopParams(pool=1, feedback=False)


@pytest.fixture
def library(tmp_path: Path) -> Iterator[VaultCalls]:
    with vault_calls(tmp_path / "vault", NOTES) as calls:
        yield calls


def passes(result: Any) -> list[dict[str, Any]]:
    return [dict(step) for step in result.trace]


def test_offline_loop_follows_links_and_recurses(library: VaultCalls) -> None:
    with Broker.from_config(LlmSection()) as broker:
        result = ask("Who founded the company where Alice works?", library, broker,
                     broker.new_budget(), k=1, params=ONE_DEEP)
    steps = passes(result)
    assert steps[0]["hits"] == ["people/Alice.md"]
    assert "orgs/Acme.md" in steps[0]["via_links"]  # spread along [[Acme]]
    assert "Dana founded it in 1999." in result.answer
    assert result.answer.startswith("[extractive]")
    assert result.notes[:2] == ("people/Alice.md", "orgs/Acme.md")
    assert result.usage["calls"] == len([s for s in steps if s["answer"] is not None])


def test_unresolved_pass_enters_from_a_new_point_until_nothing_new(library: VaultCalls) -> None:
    with Broker.from_config(LlmSection()) as broker:
        result = ask("Where was the founder of Acme born, in which city?", library, broker,
                     broker.new_budget(), k=1, params=ONE_DEEP)
    steps = passes(result)
    first, second, last = steps[0], steps[1], steps[-1]
    assert first["resolved"] is False and "city" in first["missing_terms"]
    assert second["query"] in first["sub_questions"]  # a sub-question ran its own pass
    assert second["new_notes"] and not set(second["new_notes"]) & set(first["new_notes"])
    assert result.stop == "no new notes"
    # one trace schema (fixed keys): the stopping pass made no answer call
    assert last["new_notes"] == [] and last["via_links"] == [] and last["answer"] is None
    assert "Lisbon" in result.answer
    assert result.usage["calls"] == len([s for s in steps if s["answer"] is not None])
    assert result.usage["calls"] == len({s["pass"] for s in steps}) - 1


def test_same_inputs_same_result(library: VaultCalls) -> None:
    runs = []
    for _ in range(2):
        with Broker.from_config(LlmSection()) as broker:
            runs.append(ask(QUESTION, library, broker, broker.new_budget(), k=2).to_json())
    assert runs[0] == runs[1]


def test_loop_stops_when_the_budget_is_spent(library: VaultCalls) -> None:
    with Broker.from_config(LlmSection(calls_per_exec=1)) as broker:
        result = ask("Where was the founder of Acme born, in which city?", library, broker,
                     broker.new_budget(), k=1, params=ONE_DEEP)
    assert result.stop == "budget spent"
    assert result.usage["calls"] == 1


def test_model_writes_the_sub_questions(library: VaultCalls) -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        if "search queries" in user:
            return Reply(text="1. Dana\n- NONE")
        return Reply(text="Dana was born in Lisbon." if "Lisbon" in user else "NOT FOUND")

    with ChatEndpoint(script) as ep, Broker.from_config(
        LlmSection(base_url=ep.url, model="stub", retry_backoff_s=0.0)
    ) as broker:
        result = ask("Where was the person born who founded Acme?", library, broker,
                     broker.new_budget(), k=1, params=ONE_DEEP)
    steps = passes(result)
    # the model's sub-questions run first, the deterministic ones after them (same budget)
    assert steps[0]["answer"] == "NOT FOUND" and steps[0]["sub_questions"][0] == "Dana"
    assert steps[1]["query"] == "Dana" and steps[1]["origin"] == "model"
    assert "people/Dana.md" in steps[1]["new_notes"]
    assert result.answer == "Dana was born in Lisbon."
    answered = len([s for s in steps if s["answer"] is not None])
    asked_model = len([s for s in steps if s["sub_questions"] and s["answer"] is not None])
    assert ep.count == result.usage["calls"] == answered + asked_model


def test_render_note_shows_title_source_and_date() -> None:
    record = {"note": "people/Alice.md", "title": "Alice",
              "text": "---\ndate: 2024-03-01\nsource: chat\n---\nAlice works at Acme.\n",
              "frontmatter": {"date": "2024-03-01", "source": "chat"}}
    assert render_note(record) == (
        "## Alice\nsource: people/Alice.md (chat)\ndate: 2024-03-01\n\nAlice works at Acme."
    )


def test_render_notes_stays_within_the_cap() -> None:
    records = [{"note": f"n{i}.md", "title": f"n{i}", "text": "word " * 500} for i in range(7)]
    text = render_notes(records, 2_000)
    assert len(text) <= 2_000
    assert all(f"## n{i}" in text for i in range(7))  # every note keeps its heading


# -- the loop's contracts on the linked knowledge vault (bench/knowledge.py, real engine) ------

def knowledge() -> tuple[Any, Any]:
    from bench import generate_knowledge as generate
    from bench.corpus_searchable import CorpusSearchable
    from vault import SearchEngine

    hay = generate(15, bridge=24, comparison=12)
    return hay, CorpusSearchable(hay.corpus, SearchEngine.lexical())


def test_answer_set_is_bounded_ordered_and_receipted() -> None:
    from harness.ask import FLOOR, KEEP_PER

    hay, lib = knowledge()
    for q in hay.questions[::4]:
        for budget in (1, 3, 10):
            result = ask(q.text, lib, budget=budget)
            found = result.found
            assert 1 <= len(found) <= budget and len(result.notes) == len(found)
            # the search's head leads, in its order; the rest by value
            keep = max(1, budget // KEEP_PER)
            head = [h["note"] for h in lib.search(q.text, budget)["hits"][:keep]]
            assert list(result.notes[:keep]) == head
            rest = [f.value for f in found[keep:]]
            assert rest == sorted(rest, reverse=True)
            queries = {s["query"] for s in result.trace}
            passes_run = {s["pass"] for s in result.trace}
            for f in found:
                assert f.pass_no in passes_run
                assert f.query in queries or f.query.startswith("link from ")
            # pass 1 is search(question): its best hit is worth 1 plus what feedback adds
            assert found[0].value >= 1.0 and FLOOR < 1.0
    with pytest.raises(ValueError):
        ask("anything", lib, budget=0)
    one = ask(hay.questions[0].text, lib, params=LoopParams(max_passes=1))
    assert {s["pass"] for s in one.trace} == {1}


def test_stop_rule_no_new_notes_and_resolved_means_covered() -> None:
    from harness.ask import FLOOR, RESOLVE_TOP
    from harness.ask_evidence import note_terms, term_groups

    hay, lib = knowledge()
    stops = set()
    for q in hay.questions:
        result = ask(q.text, lib)
        stops.add(result.stop)
        last_pass = result.trace[-1]["pass"]
        if result.stop == "no new notes":
            # the last pass added (or raised) nothing above the floor and made no answer call
            assert not [f for f in result.found if f.pass_no == last_pass and f.value >= FLOOR]
            assert all(s["answer"] is None for s in result.trace if s["pass"] == last_pass)
        if result.resolved:
            best = sorted(result.found, key=lambda f: -f.value)[:RESOLVE_TOP]
            have: frozenset[str] = frozenset().union(*(note_terms(lib.read(f.note)) for f in best))
            assert all(g.terms <= have for g in term_groups(q.text))
        for step in result.trace:  # one schema for every entry
            assert set(step) == {"pass", "query", "origin", "parent", "hits", "new_notes",
                                 "via_links", "answer", "resolved", "missing_terms",
                                 "sub_questions", "relevant"}
    assert "no new notes" in stops
    assert "nothing relevant" not in stops  # every question here has its notes


def test_sub_queries_come_from_what_was_found() -> None:
    hay, lib = knowledge()
    gained = 0
    for q in [q for q in hay.questions if q.category == "bridge"]:
        result = ask(q.text, lib)
        search = {h["note"] for h in lib.search(q.text, 10)["hits"]}
        got = {lib.position(n) for n in result.notes}
        plain = {lib.position(n) for n in search}
        for step in result.trace[1:]:
            assert step["origin"] in {"feedback", "bridge", "uncovered"}
            assert step["query"] != q.text
            if step["origin"] == "bridge":
                assert step["parent"] is not None and step["pass"] > 1
            if step["origin"] == "feedback":  # pass 1's round, from one of its best hits
                assert step["pass"] == 1 and step["parent"] in result.trace[0]["hits"][:3]
        gained += len(q.evidence & got) - len(q.evidence & plain)
    assert gained > 0  # the bridge notes a single search misses


def test_same_answer_set_under_another_hash_seed(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    code = ("import json\nfrom tests.harness.test_ask_loop import knowledge\n"
            "from harness.ask import ask\nhay, lib = knowledge()\n"
            "print(json.dumps([ask(q.text, lib).to_json() for q in hay.questions[:12]]))")
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, cwd=str(Path(__file__).parents[2]))
        outs.append(json.loads(run.stdout))
    assert outs[0] == outs[1]


def test_feedback_queries_follow_rare_words_of_the_best_hits() -> None:
    from harness.ask import FEEDBACK_FROM, FEEDBACK_TERMS
    from harness.ask_evidence import body_of
    from vault import content_terms, tokenize

    hay, lib = knowledge()
    seen = 0
    for q in hay.questions[:20]:
        result = ask(q.text, lib)
        feedback = [s for s in result.trace if s["origin"] == "feedback"]
        assert [s["parent"] for s in feedback] == [
            p for p in result.trace[0]["hits"][:FEEDBACK_FROM] if p in
            {s["parent"] for s in feedback}]
        for step in feedback:
            assert step["query"].startswith(q.text + " ")
            extra = step["query"][len(q.text) + 1:].split()
            assert 1 <= len(extra) <= FEEDBACK_TERMS
            body = tokenize(body_of(lib.read(step["parent"])))
            asked = set(tokenize(q.text))
            for word, n in zip(extra, lib.document_frequency(extra), strict=True):
                assert word in body and word not in asked and n >= 2
            # no other word of the note the question lacks is rarer than the ones picked
            others = [w for w in dict.fromkeys(content_terms(body))
                      if w not in asked and w not in extra]
            rarest = max(lib.document_frequency(extra))
            assert all(n < 2 or n >= rarest
                       for n in lib.document_frequency([w for w in others if not w.isdigit()]))
            seen += 1
    assert seen > 0


def test_feedback_evidence_adds_up() -> None:
    """A note the question and a feedback query both find is worth the sum of both."""
    from harness.ask import FEEDBACK_WEIGHT, POOL

    hay, lib = knowledge()
    checked = 0
    for q in hay.questions[:30]:
        result = ask(q.text, lib, params=LoopParams(max_passes=1, links=False))
        hits = lib.search(q.text, 10 * POOL)["hits"]
        value = {h["note"]: h["score"] / hits[0]["score"] for h in hits}
        parent_value = dict(value)
        for step in result.trace[1:]:
            assert step["origin"] == "feedback"
            sub = lib.search(step["query"], 10)["hits"]
            for h in sub:
                value[h["note"]] = value.get(h["note"], 0.0) + (
                    FEEDBACK_WEIGHT * parent_value[step["parent"]] * h["score"] / sub[0]["score"])
        for f in result.found:
            assert f.value == pytest.approx(value[f.note], rel=1e-12)
            checked += 1
    assert checked > 0


def test_feedback_round_on_a_real_vault(library: VaultCalls) -> None:
    """Through VaultCalls (the sandbox's path): the round asks the vault for rarity and runs."""
    result = ask("Who founded the company where Alice works?", library, k=2)
    feedback = [s for s in result.trace if s["origin"] == "feedback"]
    assert feedback and all(s["pass"] == 1 for s in feedback)
    assert library.document_frequency(["acme", "nosuchword"])[1] == 0
    assert library.document_frequency(["acme"])[0] >= 2  # Alice's link and Acme's own note
    assert "orgs/Acme.md" in result.notes


def test_ask_teaches_only_what_it_returns(tmp_path: Path) -> None:
    """Through RlmTools (the REPL's and MCP's ask), on a real ledger: the loop's inner
    searches and reads are not logged; its answer set is logged once, as shown for the
    question, in the open session."""
    from harness.compose import open_ledger
    from harness.rlm_tools import RlmTools

    ledger = open_ledger(tmp_path / "vault", create=True)
    vault = Vault.init(tmp_path / "vault", usage=ledger)
    for path, text in NOTES.items():
        vault.write(path, text)
    before = len(list(ledger.events()))
    thread = VaultThread()
    try:
        ops = VaultCalls(vault, thread, lambda: "s1")
        with Broker.from_config(LlmSection()) as broker:
            tools = RlmTools(broker)
            tools.begin_exec()
            result = tools.ask("Who founded the company where Alice works?", 10, ops)
        new = list(ledger.events())[before:]
        assert len(result["trace"]) > 1  # several inner searches ran
        assert [ev.kind for ev in new] == ["search"]
        assert new[0].session == "s1"
        ids = [row[0] for row in new[0].data["shown"]]
        assert ids == [vault.resolve(n) for n in result["notes"]]
    finally:
        thread.call(vault.close)
        thread.close()
