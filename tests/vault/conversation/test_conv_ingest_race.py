"""A correction that lands while an ingest builds its notes is kept (vault/conversation/
ingest.py). The ingest decides what to write from the vault as it was when it began, and
builds (parses every turn: seconds for a long transcript) before it writes; a `fact reject`
acknowledged to another process in that window was overwritten by the re-rendered fact note
carrying the old trust, so the rejected value came back as current. Now each write is a
compare-and-swap against the bytes the ingest based it on, and a conflict starts it again
from the vault as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vault import Vault, correct_fact, ingest_conversations, load_conversations
from vault.conversation import ingest as ingest_module
from vault.notes.note import parse

AT = "2026-12-05T00:00:00+00:00"
FACT = "conversations/ab/facts/sarah lives in paris.md"


def conv(extra_turns: int) -> Any:
    turns = [{"speaker": "Sarah", "text": "I live in Paris.", "role": "user"},
             {"speaker": "Bot", "text": "Nice city.", "role": "assistant"}]
    turns += [{"speaker": "Sarah", "text": f"I live in Paris, still, note {i}.", "role": "user"}
              for i in range(extra_turns)]
    (c,) = load_conversations(json.dumps({"format": "rmh-conversation/1", "id": "ab", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": turns}]}))
    return c


def test_a_correction_made_while_an_ingest_builds_is_not_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, conv(0), use_nlp=False)
        assert FACT in v.corpus().paths
        before = (root / FACT).read_text()
        real_build = ingest_module._build
        calls: list[int] = []

        def racing_build(c: Any, use_nlp: bool = True) -> Any:
            if not calls:  # another process rejects the fact while this ingest builds
                with Vault.open(root) as other:
                    correct_fact(other, FACT, "reject", by="user", at=AT, reason="moved")
            calls.append(1)
            return real_build(c, use_nlp)

        monkeypatch.setattr(ingest_module, "_build", racing_build)
        report = ingest_conversations(v, conv(2), use_nlp=False)  # the grown conversation
        after = (root / FACT).read_text()
        assert after != before  # the ingest did update the fact note (its new evidence)
        assert parse(after).frontmatter.get("trust") == "rejected", after
        assert len(calls) == 2  # started again once
        # a note written before the conflict counts once: written, not also unchanged
        assert len(report.written) + report.unchanged == len(set(report.notes))


def test_conversations_sharing_notes_do_not_conflict_with_each_other(tmp_path: Path) -> None:
    """Conversations of one ingest that write the same notes (one id, or ids that `slug`
    alike: `team/a`, `team?a`): each write's expected hash is what this ingest last wrote there,
    not the vault as it began. Before, the second write of a note conflicted with the first, and
    with three such conversations every attempt did: a re-ingest raised EditConflict."""
    root = tmp_path / "v"
    convs = [conv(n) for n in range(3)]
    with Vault.init(root) as v:
        ingest_conversations(v, convs, use_nlp=False)
        first = {p: p.read_bytes() for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}
        again = ingest_conversations(v, convs, use_nlp=False)  # raised EditConflict
        assert again.turns == sum(len(c.turns()) for c in convs)
        assert {p: p.read_bytes() for p in first} == first  # the last conversation's notes


def test_a_note_created_and_corrected_while_an_ingest_builds_is_not_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same conversation ingested by another process, and its fact rejected, while this
    ingest (of the conversation grown) parses its turns: the fact note was new to this ingest,
    so it was written without a check and the rejection was lost. A note the vault did not
    hold is now created only if still absent; else the ingest starts again and carries it."""
    root = tmp_path / "v"
    Vault.init(root).close()
    with Vault.open(root) as v:
        real_build = ingest_module._build
        calls: list[int] = []

        def racing_build(c: Any, use_nlp: bool = True) -> Any:
            calls.append(len(c.turns()))
            if calls == [len(c.turns())] and len(c.turns()) > 2:  # this ingest's first build
                with Vault.open(root) as other:
                    ingest_conversations(other, conv(0), use_nlp=False)  # builds too: 2 turns
                    correct_fact(other, FACT, "reject", by="user", at=AT, reason="moved")
            return real_build(c, use_nlp)

        monkeypatch.setattr(ingest_module, "_build", racing_build)
        report = ingest_conversations(v, conv(2), use_nlp=False)
        assert parse((root / FACT).read_text()).frontmatter.get("trust") == "rejected"
        assert calls == [4, 2, 4]  # this ingest, the other's, this one's second attempt
        assert len(report.written) + report.unchanged == len(set(report.notes))
