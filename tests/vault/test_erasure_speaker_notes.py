"""vault.erasure: `forget --subject` of a speaker erases the notes ingest made about that
speaker, though their text holds only the speaker's key (CONV6, session 32: a speaker key
drops punctuation, so forgetting "John (work)" erased the turns and left the entity note
"john work" and the fact "john work likes jazz", found by search, with a proof of 0). Generated
speaker names: a few given names with the decorations chat apps show (a label in brackets, a
title with a full stop, quotes, an exclamation mark, a comma)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from vault import Vault, ingest_conversations, load_conversations

NAMES = ("John", "Åsa Lind", "Bo")
DRESS = ("{} (work)", "Dr. {}", '"{}"', "{}!", "[{}]", "{}, PhD", "({})")
CASES = [d.format(n) for n, d in itertools.product(NAMES, DRESS)]


def _ingest(root: Path, speaker: str) -> None:
    conv = {"format": "rmh-conversation/1", "id": "chat", "sessions": [{
        "id": "s1", "date": "2024-01-13T09:00:00", "turns": [
            {"speaker": speaker, "text": "I love jazz.", "role": "user"},
            {"speaker": speaker, "text": "I work at Initech.", "role": "user"},
            {"speaker": "Kim", "text": "I love tea.", "role": "user"}]}]}
    Vault.init(root)
    with Vault.open(root, watch=False) as v:
        ingest_conversations(v, load_conversations(json.dumps(conv)), use_nlp=False)


@pytest.mark.parametrize("speaker", CASES)
def test_forgetting_a_speaker_erases_its_entity_and_fact_notes(tmp_path: Path,
                                                                speaker: str) -> None:
    _ingest(tmp_path, speaker)
    about = sorted(p.relative_to(tmp_path).as_posix()
                   for p in (tmp_path / "conversations/chat").glob("*/*.md")
                   if p.parent.name in ("entities", "facts") and not p.name.startswith("kim")
                   and ("kind: speaker" in (t := p.read_text(encoding="utf-8"))
                        or "tier: L2" in t))
    assert len(about) >= 3, about  # the speaker's entity and its two facts
    with Vault.open(tmp_path, watch=False) as v:
        todo = v.forget_plan(subject=speaker)
        assert set(about) <= set(todo.notes), sorted(set(about) - set(todo.notes))
        erased = v.forget(todo)
    assert erased.proof.occurrences == 0
    left = sorted(p.name for p in (tmp_path / "conversations/chat").rglob("*.md"))
    assert not set(about) & {f"conversations/chat/{n}" for n in left}
    assert "kim.md" in left and "kim likes tea.md" in left  # the other speaker's notes stay
