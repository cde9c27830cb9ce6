"""A chat export's conversation title reaches the vault (VAULT11, session 37; NEWUSER7 saw it).

Before, the title of a ChatGPT (`title`) or Claude.ai (`name`) conversation was dropped at
ingest: the notes are named by the export's id (a UUID in real exports), so nothing in the
vault said "Ledger cutover plan", `read` by the title was note_not_found and a search of the
title found nothing by it. Now the session note holds it (`title`, its alias, its heading);
a title that is no string, or blank, gives none; a newline in it is a space; a subject `rmh
forget` erased is not written back through it; ingesting again writes nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from vault import Vault, ingest_conversations, load_transcript
from vault.notes.note import parse

WORDS = ["ledger", "cutover", "plan", "teal", "tokens", "Größe", "日本", "Q3", "migration"]


def _chatgpt(cid: str, title: Any, text: str) -> dict[str, Any]:
    return {"id": cid, "title": title, "create_time": 1_714_557_600, "current_node": "b",
            "mapping": {
                "a": {"id": "a", "parent": None, "children": ["b"], "message": {
                    "id": "a", "author": {"role": "user"}, "create_time": 1_714_557_600,
                    "content": {"content_type": "text", "parts": [text]}}},
                "b": {"id": "b", "parent": "a", "children": [], "message": {
                    "id": "b", "author": {"role": "assistant"}, "create_time": 1_714_557_660,
                    "content": {"content_type": "text", "parts": ["Noted, " + text]}}}}}


def _claude(cid: str, title: Any, text: str) -> dict[str, Any]:
    return {"uuid": cid, "name": title, "created_at": "2024-05-01T10:00:00Z", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": text, "created_at": "2024-05-01T10:00:00Z"},
        {"uuid": "m2", "sender": "assistant", "text": "Noted, " + text,
         "created_at": "2024-05-01T10:01:00Z"}]}


def _session_note(root: Path, cid: str) -> dict[str, Any]:
    path = root / "conversations" / cid / f"{cid} {cid}.md"
    return dict(parse(path.read_text(encoding="utf-8")).frontmatter)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("make", [_chatgpt, _claude], ids=["chatgpt", "claude-ai"])
def test_an_export_title_is_the_session_notes_title_and_alias(
        tmp_path: Path, seed: int, make: Any) -> None:
    rng = random.Random(seed)
    titles = [" ".join(rng.sample(WORDS, 3)) + f" {seed}{i}" for i in range(3)]
    export = [make(f"c{i}-{seed}", t, f"we spoke of {w}") for i, (t, w) in
              enumerate(zip(titles, ["kayak", "sourdough", "telescope"], strict=True))]
    export.append(make("untitled", None, "no title here"))
    export.append(make("listed", ["not", "text"], "a list as title"))
    export.append(make("broken", "Line one\nline  two", "a newline in the title"))
    root = tmp_path / "v"
    with Vault.init(root) as v:
        first = ingest_conversations(v, load_transcript(json.dumps(export)).conversations,
                                     use_nlp=False)
        for i, title in enumerate(titles):
            cid = f"c{i}-{seed}"
            fm = _session_note(root, cid)
            assert fm["title"] == title and fm["aliases"] == [title]
            record = v.read(title, learn=False)
            assert record.note == f"conversations/{cid}/{cid} {cid}.md"
            assert f"# {title}\n" in record.text
            hits = [h.note for h in v.search(title, 3, learn=False).hits]
            assert hits[0] == record.note, hits
        for cid in ("untitled", "listed"):
            fm = _session_note(root, cid)
            assert "title" not in fm and "aliases" not in fm
        assert _session_note(root, "broken")["title"] == "Line one line two"
        again = ingest_conversations(v, load_transcript(json.dumps(export)).conversations,
                                     use_nlp=False)
        assert first.written and again.written == ()


def test_a_forgotten_subject_is_not_written_back_through_a_title(tmp_path: Path) -> None:
    export = [_chatgpt("c1", "Zanzibar trip", "we spoke of kayaks"),
              _chatgpt("c2", "Kayak repair", "we spoke of paddles")]
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, load_transcript(json.dumps(export)).conversations, use_nlp=False)
        v.forget(v.forget_plan(subject="Zanzibar"))
        ingest_conversations(v, load_transcript(json.dumps(export)).conversations, use_nlp=False)
        for path in root.rglob("*.md"):
            assert "zanzibar" not in path.read_text(encoding="utf-8").lower(), path
        assert _session_note(root, "c2")["title"] == "Kayak repair"
