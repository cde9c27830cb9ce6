"""CONV5: `build_context` at every budget from 1 to past the whole answer: the words never
exceed the budget (words as `Line.words` counts them, whitespace-split), and a question whose
turns are relevant stays `relevant` when no line fits (before: `relevant` was `bool(lines)`, so
a budget under the shortest line made `rmh context` print "Nothing in memory is relevant to
this question." for a question that the next budget answers)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from vault import Vault, build_context, ingest_conversations, load_transcript

TEXTS = ["I moved to Rome last month.", "My kayak is green and the kayak club meets on Sundays.",
         "The harpsichord teacher praised my kayak drawing.", "Nothing to add."]


def test_every_budget_is_respected_and_relevance_does_not_hang_on_it(tmp_path: Path) -> None:
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": "Bob" if i % 2 else "Alice", "text": t} for i, t in enumerate(TEXTS)]}]})
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, load_transcript(text).conversations, use_nlp=False)
        v.sync()
        full = build_context(v, "What about the kayak?", 10_000, now=date(2025, 1, 1))
        assert full.lines and full.relevant
        shortest = min(ln.words for ln in full.lines)
        for budget in range(1, full.words + 3):
            ctx = build_context(v, "What about the kayak?", budget, now=date(2025, 1, 1))
            assert ctx.words == sum(len(ln.text.split()) for ln in ctx.lines) <= budget
            assert len(ctx.text.split()) == ctx.words
            assert bool(ctx.lines) == (budget >= shortest), budget
            assert ctx.relevant, budget
            assert ctx.to_json()["relevant"] is True
        assert build_context(v, "What about the kayak?", full.words,
                             now=date(2025, 1, 1)).text == full.text
        none = build_context(v, "melting point of tungsten", 50, now=date(2025, 1, 1))
        assert not none.lines and not none.relevant


def test_a_turn_before_enters_only_with_the_hit_it_comes_before(tmp_path: Path) -> None:
    """CONV5: a short turn before a long hit fit budgets the hit did not, and came alone
    ("alice: I like green tea." for a question about Paris, reason "before")."""
    turns = [("Alice", "Hi."), ("Bob", "I like green tea."),
             ("Alice", "My favourite city is Paris, I have been there ten times since school."),
             ("Bob", "Nice."), ("Cy", "Paris again?")]
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": sp, "text": t} for sp, t in turns]}]})
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, load_transcript(text).conversations, use_nlp=False)
        v.sync()
        full = build_context(v, "What about Paris?", 10_000, now=date(2025, 1, 1))
        assert any(ln.reason == "before" for ln in full.lines)
        for budget in range(1, full.words + 2):
            ctx = build_context(v, "What about Paris?", budget, now=date(2025, 1, 1))
            shown = {(ln.item.conversation, ln.item.tick) for ln in ctx.lines}
            for ln in ctx.lines:
                if ln.reason == "before":
                    assert (ln.item.conversation, ln.item.tick + 1) in shown, (budget, ln.text)
