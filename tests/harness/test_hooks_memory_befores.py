"""CONV5: the engine-mode prompt hook shows the turn before a hit only with that hit. Before,
a short turn before a long hit fit word budgets the hit did not and was injected alone
("Bob: I like green tea." for a prompt about Paris)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.hooks_memory import prompt_memory
from vault import Vault, ingest_conversations, load_transcript

TURNS = [("Alice", "Hi."), ("Bob", "I like green tea."),
         ("Alice", "My favourite city is Paris, I have been there ten times since school."),
         ("Bob", "Nice."), ("Cy", "Paris again, the city of light?")]


def test_a_turn_before_is_injected_only_with_its_hit(tmp_path: Path) -> None:
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": s, "text": t} for s, t in TURNS]}]})
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, load_transcript(text).conversations, use_nlp=False)
        v.sync()
        seen_tea = False
        for words in range(1, 60):
            got = prompt_memory(v, "Which city is Paris?", words, k=10, min_share=0.3,
                                session=None)
            if "I like green tea." in got:
                seen_tea = True
                assert "My favourite city is Paris" in got, (words, got)
            if "Nice." in got:
                assert "Paris again" in got, (words, got)
        assert seen_tea  # the turn before does come, with its hit
