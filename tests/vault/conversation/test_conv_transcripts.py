"""Agent transcripts as conversations: Claude Code, Codex CLI, OpenAI chat; bad lines skipped;
re-ingest of a grown transcript adds only what is new."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vault.conversation.transcript_fixtures import CI_TASK, claude_lines, codex_lines
from vault import ConversationFormatError, Vault, ingest_conversations, load_transcript


def test_claude_code_turns_tools_and_noise() -> None:
    loaded = load_transcript("\n".join(claude_lines(CI_TASK)))
    assert loaded.problems == ()
    (conv,) = loaded.conversations
    assert conv.conversation_id == "sess-ci-1" and conv.speakers == ("user", "assistant")
    turns = conv.turns()
    assert [t.role for t in turns] == ["user", "assistant"] * 3
    assert turns[0].text == CI_TASK[0][1]
    assert turns[0].when == datetime(2025, 3, 4, 9, 0)
    # the tool call is one line of the assistant's turn; thinking and tool output are not
    assert turns[1].text.splitlines() == [
        "Let me look at the failing job first.", "[tool Bash: gh run view 4711 --log-failed]"]
    assert "[tool Edit: /repo/.ci/config.yml]" in turns[3].text
    assert not any("secret" in t.text or "ok ok" in t.text or "chatter" in t.text
                   for t in turns)


def test_codex_rollout() -> None:
    loaded = load_transcript("\n".join(codex_lines(CI_TASK)))
    (conv,) = loaded.conversations
    assert loaded.problems == () and conv.conversation_id == "019a-codex-ci"
    turns = conv.turns()
    assert [t.role for t in turns] == ["user", "assistant"] * 3  # environment context skipped
    assert turns[1].text.endswith("[tool bash: gh run view 4711 --log-failed]")
    assert turns[4].text == CI_TASK[4][1]


def test_openai_chat_bare_and_wrapped() -> None:
    msgs = [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "Where is the billing service deployed?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "1", "type": "function",
                 "function": {"name": "search", "arguments": "{\"query\": \"billing\"}"}}]},
            {"role": "tool", "content": "eu-west-1", "tool_call_id": "1"},
            {"role": "assistant", "content": [{"type": "text", "text": "In eu-west-1."}]}]
    (bare,) = load_transcript(json.dumps(msgs), default_id="chat-1").conversations
    assert bare.conversation_id == "chat-1"
    assert [t.text for t in bare.turns()] == [
        "Where is the billing service deployed?", "In eu-west-1.\n[tool search: billing]"]
    assert bare.turns()[0].when == datetime(1970, 1, 1)
    (wrapped,) = load_transcript(json.dumps(
        {"id": "c9", "date": "2024-02-01T08:00:00Z", "messages": msgs}), "openai").conversations
    assert wrapped.conversation_id == "c9" and wrapped.sessions[0].when == datetime(2024, 2, 1, 8)


def test_malformed_lines_are_reported_and_skipped_whole() -> None:
    lines = claude_lines(CI_TASK, noise=False)
    bad = [lines[0], "{not json", lines[1], "[1, 2]",
           json.dumps({"type": "user", "timestamp": "2025-03-04T09:00:00Z"}),
           json.dumps({"type": "user", "message": {"content": "hi"}, "timestamp": "yesterday"}),
           *lines[2:]]
    loaded = load_transcript("\n".join(bad), "claude-code")
    assert [p.split(":")[0] for p in loaded.problems] == ["line 2", "line 4", "line 5", "line 6"]
    good = load_transcript("\n".join(lines)).conversations[0]
    assert loaded.conversations[0].turns() == good.turns()


def test_unknown_text_is_a_typed_error() -> None:
    with pytest.raises(ConversationFormatError):
        load_transcript("hello\nworld")
    with pytest.raises(ConversationFormatError):
        load_transcript("{}", "nope")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["{", "null", "\"x\"", "{\"type\": \"user\"}", "[]", "",
                                 "{\"type\": \"assistant\", \"message\": 3}"]), max_size=6),
       st.integers(0, 12))
def test_garbage_anywhere_never_half_reads(garbage: list[str], at: int) -> None:
    lines = claude_lines(CI_TASK, noise=False)
    at = min(at, len(lines))
    loaded = load_transcript("\n".join(lines[:at] + garbage + lines[at:]), "claude-code")
    assert loaded.conversations[0].turns() == load_transcript(
        "\n".join(lines), "claude-code").conversations[0].turns()
    assert len(loaded.problems) == sum(1 for g in garbage if g)  # blank lines are no problem


def _texts(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*.md"))}


def test_incremental_and_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "v"
    v = Vault.init(root)
    lines = claude_lines(CI_TASK, noise=False)
    half = [ln for ln in lines if json.loads(ln)["uuid"] in {"u0", "u1", "u2", "u3", "u4"}]
    with v:
        first = ingest_conversations(v, load_transcript("\n".join(half)).conversations)
        assert first.turns == 3 and first.written
        before = _texts(root)
        again = ingest_conversations(v, load_transcript("\n".join(half)).conversations)
        assert again.written == () and _texts(root) == before  # same bytes: nothing written
        grown = ingest_conversations(v, load_transcript("\n".join(lines)).conversations)
    after = _texts(root)
    turn_notes = [p for p in before if "/sess-ci-1/sess-ci-1/" in p]
    # every earlier turn note keeps its text but for the last one's link to the next turn
    changed = [p for p in turn_notes if after[p] != before[p]]
    assert len(changed) <= 1
    new_turns = [p for p in grown.written if p not in before and "/sess-ci-1/sess-ci-1/" in p]
    assert len(new_turns) == 3 and grown.turns == 6
