"""The recursive query loop over a real vault: retrieval, link spreading, sub-questions, stops."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.ask import TRACE_KEYS, ask, render_note, render_notes
from harness.config import LlmSection
from harness.llm import Broker
from harness.vault_ops import VaultOps, VaultThread
from vault import Vault

from .llm_stub_endpoint import ChatEndpoint, Reply

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


@pytest.fixture
def library(tmp_path: Path) -> Iterator[VaultOps]:
    vault = Vault.init(tmp_path / "vault")
    for path, text in NOTES.items():
        vault.write(path, text)
    thread = VaultThread()
    yield VaultOps(vault, thread, lambda: None)
    thread.call(vault.close)
    thread.close()


def passes(result: Any) -> list[dict[str, Any]]:
    return [dict(step) for step in result.trace]


def test_offline_loop_follows_links_and_recurses(library: VaultOps) -> None:
    with Broker.from_config(LlmSection()) as broker:
        result = ask("Who founded the company where Alice works?", library, broker,
                     broker.new_budget(), k=1)
    steps = passes(result)
    assert steps[0]["hits"] == ["people/Alice.md"]
    assert "orgs/Acme.md" in steps[0]["via_links"]  # spread along [[Acme]]
    assert "Dana founded it in 1999." in result.answer
    assert result.answer.startswith("[extractive]")
    assert result.notes[:2] == ("people/Alice.md", "orgs/Acme.md")
    assert result.usage["calls"] == len([s for s in steps if s["answer"] is not None])
    assert all(tuple(s) == TRACE_KEYS for s in steps)  # one schema for every entry


def test_unresolved_pass_enters_from_a_new_point_until_nothing_new(library: VaultOps) -> None:
    with Broker.from_config(LlmSection()) as broker:
        result = ask("Where was the founder of Acme born, in which city?", library, broker,
                     broker.new_budget(), k=1)
    steps = passes(result)
    first, second, last = steps[0], steps[1], steps[-1]
    assert first["resolved"] is False and "city" in first["missing_terms"]
    assert second["query"] in first["sub_questions"]  # a sub-question ran its own pass
    assert second["new_notes"] and not set(second["new_notes"]) & set(first["new_notes"])
    assert result.stop == "no new notes"
    assert last["new_notes"] == [] and last["via_links"] == [] and last["answer"] is None
    assert "Lisbon" in result.answer
    assert result.usage["calls"] == len(steps) - 1


def test_same_inputs_same_result(library: VaultOps) -> None:
    runs = []
    for _ in range(2):
        with Broker.from_config(LlmSection()) as broker:
            runs.append(ask(QUESTION, library, broker, broker.new_budget(), k=2).to_json())
    assert runs[0] == runs[1]


def test_loop_stops_when_the_budget_is_spent(library: VaultOps) -> None:
    with Broker.from_config(LlmSection(calls_per_exec=1)) as broker:
        result = ask("Where was the founder of Acme born, in which city?", library, broker,
                     broker.new_budget(), k=1)
    assert result.stop == "budget spent"
    assert result.usage["calls"] == 1


def test_model_writes_the_sub_questions(library: VaultOps) -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        if "search queries" in user:
            return Reply(text="1. Dana\n- NONE")
        return Reply(text="Dana was born in Lisbon." if "Lisbon" in user else "NOT FOUND")

    with ChatEndpoint(script) as ep, Broker.from_config(
        LlmSection(base_url=ep.url, model="stub", retry_backoff_s=0.0)
    ) as broker:
        result = ask("Where was the person born who founded Acme?", library, broker,
                     broker.new_budget(), k=1)
    steps = passes(result)
    assert steps[0]["answer"] == "NOT FOUND" and steps[0]["sub_questions"] == ["Dana"]
    assert steps[1]["query"] == "Dana" and "people/Dana.md" in steps[1]["new_notes"]
    assert result.answer == "Dana was born in Lisbon."
    assert ep.count == result.usage["calls"] == 3  # answer, sub-questions, answer


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
