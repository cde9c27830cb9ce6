"""CONV5: a speaker's name is a hub of its own conversation only. Before, the speakers of
every conversation in the vault were left out of the question's words, so a chat with a
speaker (a Discord nickname) "tea" made "Does Al like tea?" find nothing in another chat where
Al says "I like tea."; the speaker's own conversation still leaves its name out."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from vault import Vault, build_context, ingest_conversations, load_transcript


def _chat(cid: str, turns: list[tuple[str, str]]) -> str:
    return json.dumps({"format": "rmh-conversation/1", "id": cid, "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": sp, "text": t} for sp, t in turns]}]})


@pytest.mark.parametrize("word", ["tea", "kayak", "harpsichord"])
@pytest.mark.parametrize("form", ["{w}", "{W}", "{W} Lover", "{U}"])
def test_a_speaker_of_another_chat_does_not_hide_a_word(tmp_path: Path, word: str,
                                                        form: str) -> None:
    other = form.format(w=word, W=word.capitalize(), U=word.upper())
    home = _chat("home", [("Al", "Good morning."), ("Al", f"I like {word}."),
                          ("Bo", "Nice.")])
    server = _chat("server", [(other, "hello everyone"), ("Cy", f"hi {other}")])
    with Vault.init(tmp_path / "v") as v:
        convs = [*load_transcript(home).conversations, *load_transcript(server).conversations]
        ingest_conversations(v, convs, use_nlp=False)
        v.sync()
        ctx = build_context(v, f"Does Al like {word}?", 100, now=date(2025, 1, 1))
    assert f"Al: I like {word}." in [ln.text.split("] ", 1)[1] for ln in ctx.lines]
    # in its own chat the name is still a hub: "hi tea" is not connected by it
    assert not any(ln.item.conversation == "server" for ln in ctx.lines)
