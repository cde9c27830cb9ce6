"""Chat data exports (CONV, session 28): ChatGPT's and Claude.ai's `conversations.json`.

Before: both were refused ("format not recognised (simple, locomo, longmemeval)"), and a file
of no known shape got one of two messages, each naming only part of what `rmh ingest` reads.
Now both exports are read (the shown thread, message ids as turn ids, UTC times, a message
without a time dated as the one before), re-ingest writes nothing, a grown export writes its
new turns, and any other shape's error names every format read."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vault import Vault, ingest_conversations, load_transcript
from vault.errors import ConversationFormatError
from vault.notes.note import parse

TOPICS = ["zebrafinch", "kayak", "harpsichord", "sourdough", "telescope"]


def _chatgpt(n: int, *, branch: bool = False, times: bool = True) -> list[dict[str, Any]]:
    """One ChatGPT conversation of `n` messages, user and assistant in turn; `branch` adds an
    abandoned sibling of the second message (an edit), which is not the current thread."""
    mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "children": [],
                                        "message": None}}
    parent = "root"
    for i in range(n):
        key = f"n{i}"
        role = "user" if i % 2 == 0 else "assistant"
        mapping[key] = {"id": key, "parent": parent, "children": [], "message": {
            "id": key, "author": {"role": role},
            "create_time": 1_700_000_000 + 60 * i if times and i != 2 else None,
            "content": {"content_type": "text", "parts": [f"I talk of {TOPICS[i % 5]} {i}"]}}}
        mapping[parent]["children"].append(key)
        parent = key
    if branch and n > 1:
        mapping["old"] = {"id": "old", "parent": "n0", "children": [], "message": {
            "id": "old", "author": {"role": "assistant"}, "create_time": 1_700_000_030,
            "content": {"content_type": "text", "parts": ["an abandoned answer"]}}}
        mapping["n0"]["children"].insert(0, "old")
    return [{"id": "chat-1", "title": "t", "create_time": 1_699_999_999, "mapping": mapping,
             "current_node": parent}]


@pytest.mark.parametrize("n,branch,times", [(1, False, True), (4, True, True),
                                            (5, False, False), (7, True, True)])
def test_a_chatgpt_export_reads_the_shown_thread(n: int, branch: bool, times: bool) -> None:
    (conv,) = load_transcript(json.dumps(_chatgpt(n, branch=branch, times=times))
                              ).conversations
    turns = conv.turns()
    assert conv.conversation_id == "chat-1"
    assert [t.turn_id for t in turns] == [f"n{i}" for i in range(n)]
    assert [t.speaker for t in turns] == ["user" if i % 2 == 0 else "assistant"
                                          for i in range(n)]
    assert all("abandoned" not in t.text for t in turns)
    for i, t in enumerate(turns):  # message 2 has no time: dated as message 1
        seconds = 1_700_000_000 + 60 * (i if i != 2 else 1) if times else 1_699_999_999
        assert t.when == datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)


def test_a_claude_ai_export_reads_human_and_assistant() -> None:
    export = [{"uuid": "u-1", "created_at": "2023-11-14T22:13:20Z", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "I sold my kayak",
         "created_at": "2023-11-14T23:13:20+01:00"},
        {"uuid": "m2", "sender": "assistant", "text": "",
         "content": [{"type": "text", "text": "Noted."}], "created_at": None}]}]
    (conv,) = load_transcript(json.dumps(export)).conversations
    assert [(t.turn_id, t.speaker, t.text, t.when.isoformat()) for t in conv.turns()] == [
        ("m1", "user", "I sold my kayak", "2023-11-14T22:13:20"),
        ("m2", "assistant", "Noted.", "2023-11-14T22:13:20")]


def _turn_notes(root: Path, paths: tuple[str, ...]) -> set[str]:
    return {p for p in paths
            if parse((root / p).read_text(encoding="utf-8")).frontmatter.get("tier") == "L0"}


def test_a_chatgpt_export_is_idempotent_grows_and_is_found(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        first = ingest_conversations(v, load_transcript(json.dumps(_chatgpt(4))).conversations,
                                     use_nlp=False)
        assert len(_turn_notes(root, first.written)) == 4
        before = {p: (root / p).read_bytes() for p in first.written}
        again = ingest_conversations(
            v, load_transcript(json.dumps(_chatgpt(4))).conversations, use_nlp=False)
        assert again.written == ()
        assert {p: (root / p).read_bytes() for p in first.written} == before
        grown = ingest_conversations(
            v, load_transcript(json.dumps(_chatgpt(6))).conversations, use_nlp=False)
        # the two new turns, and the old last turn (its `next` link): no other old turn
        assert sorted(Path(p).stem for p in _turn_notes(root, grown.written)) == [
            "chat-1 n3", "chat-1 n4", "chat-1 n5"]
        v.sync()
        hits = [h.note for h in v.search("sourdough", 5, learn=False).hits]
        assert hits and parse((root / hits[0]).read_text(encoding="utf-8")
                              ).frontmatter.get("turn") == "n3"


@pytest.mark.parametrize("text", [
    "", "[]", "{}", "Subject: bike\nFrom: Bob\nTo: Ann\n",  # WhatsApp, "Name: text": read
    json.dumps([{"type": "file", "user": "U1", "text": "hi", "ts": "1700000000.000100"}]),
    json.dumps({"guild": {}, "messages": [{"author": {"name": "b"}, "content": "hi"}]}),
    json.dumps({"role": "user"}) + "\n" + json.dumps({"content": "hi"}),
])
def test_a_file_of_no_known_shape_names_every_format(text: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        load_transcript(text)
    for name in ("simple", "LoCoMo", "LongMemEval", "OpenAI chat", "ChatGPT", "Claude.ai",
                 "Claude Code", "Codex", "WhatsApp", "Name: text", "Slack"):
        assert name in info.value.reason


def _message_lines(n: int) -> str:
    return "".join(json.dumps({"role": "user" if i % 2 == 0 else "assistant",
                               "content": f"I talk of {TOPICS[i % 5]} {i}"}) + "\n"
                   for i in range(n))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_a_jsonl_of_chats_is_a_conversation_a_line(n: int) -> None:
    lines = [json.dumps({"messages": [{"role": "user", "content": f"I own a {TOPICS[i]}"},
                                      {"role": "assistant", "content": "ok"}]})
             for i in range(n)]
    loaded = load_transcript("\n".join([*lines, "not json"]), "auto", "tune")
    assert [c.conversation_id for c in loaded.conversations] == [
        f"tune-{i}" for i in range(1, n + 1)]
    assert [len(c.turns()) for c in loaded.conversations] == [2] * n
    assert loaded.problems == (f"line {n + 1}: not JSON (Expecting value)",)


def test_a_jsonl_of_messages_is_one_chat_that_grows(tmp_path: Path) -> None:
    (conv,) = load_transcript(_message_lines(3), "auto", "log").conversations
    assert [(t.turn_id, t.speaker) for t in conv.turns()] == [
        ("m1", "user"), ("m2", "assistant"), ("m3", "user")]
    root = tmp_path / "v"
    with Vault.init(root) as v:
        first = ingest_conversations(v, load_transcript(_message_lines(3), "auto", "log"
                                                        ).conversations, use_nlp=False)
        again = ingest_conversations(v, load_transcript(_message_lines(3), "openai", "log"
                                                        ).conversations, use_nlp=False)
        assert again.written == ()
        grown = ingest_conversations(v, load_transcript(_message_lines(5), "auto", "log"
                                                        ).conversations, use_nlp=False)
    assert sorted(Path(p).stem for p in _turn_notes(root, grown.written)) == [
        "log m3", "log m4", "log m5"]
    assert len(_turn_notes(root, first.written)) == 3


def _cc(uuid: Any, kind: str, text: str, second: int) -> str:
    return json.dumps({"type": kind, "sessionId": "S", "uuid": uuid,
                       "timestamp": f"2024-05-01T10:00:{second:02d}Z",
                       "message": {"role": kind, "content": text}})


@pytest.mark.parametrize("order", [[0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 0, 1, 2], [0, 1, 1, 2, 2]])
def test_a_claude_code_line_read_twice_is_one_turn(order: list[int]) -> None:
    lines = [_cc("u1", "user", "I sold my kayak", 0), _cc("a1", "assistant", "Noted.", 5),
             _cc("u2", "user", "It was red", 9)]
    (conv,) = load_transcript("\n".join(lines[i] for i in order)).conversations
    assert [t.turn_id for t in conv.turns()] == ["u1", "a1", "u2"]


def test_a_claude_ai_message_listed_twice_is_one_turn() -> None:
    msg = {"uuid": "m1", "sender": "human", "text": "I sold my kayak",
           "created_at": "2023-11-14T22:13:20Z"}
    export = [{"uuid": "u", "created_at": "2023-11-14T22:13:20Z", "chat_messages": [msg, msg]}]
    (conv,) = load_transcript(json.dumps(export)).conversations
    assert [t.turn_id for t in conv.turns()] == ["m1"]


def test_an_unhashable_uuid_is_read_as_text() -> None:
    (conv,) = load_transcript(_cc(["x"], "user", "I sold my kayak", 0)).conversations
    assert [t.text for t in conv.turns()] == ["I sold my kayak"]


_JS = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
                   lambda c: st.lists(c, max_size=3)
                   | st.dictionaries(st.text(max_size=2), c, max_size=3), max_leaves=8)
_SLOT = st.one_of(_JS, st.sampled_from(["a", "b", "r"]))
_MESSAGE = st.fixed_dictionaries({
    "id": _SLOT, "create_time": _JS, "metadata": _JS,
    "author": st.one_of(_JS, st.fixed_dictionaries(
        {"role": st.one_of(_JS, st.sampled_from(["user", "assistant"]))})),
    "content": st.one_of(_JS, st.fixed_dictionaries(
        {"content_type": st.one_of(_JS, st.just("text")), "parts": _JS}))})
_NODE = st.fixed_dictionaries({"id": _SLOT, "parent": _SLOT, "message": st.one_of(_JS, _MESSAGE),
                               "children": st.one_of(_JS, st.lists(_SLOT, max_size=3))})
_CHATGPT = st.fixed_dictionaries({"id": _JS, "create_time": _JS, "current_node": _SLOT,
                                  "mapping": st.dictionaries(st.sampled_from(["a", "b", "r"]),
                                                             st.one_of(_NODE, _JS), max_size=3)})
_CLAUDE = st.fixed_dictionaries({"uuid": _JS, "created_at": _JS, "chat_messages": st.lists(
    st.one_of(_JS, st.fixed_dictionaries({"uuid": _JS, "sender": st.one_of(_JS, st.just("human")),
                                          "text": _JS, "content": _JS, "created_at": _JS})),
    max_size=3)})


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_CHATGPT, _CLAUDE), min_size=1, max_size=2))
@example([{"mapping": {"a": {"parent": "a"}, "b": {"parent": None, "children": [[]]}}}])
@example([{"current_node": "a", "mapping": {"a": {"parent": ["b"], "message": None}}}])
def test_a_hostile_export_is_read_or_refused_never_a_crash(items: list[Any]) -> None:
    """Before the fix: a ChatGPT node whose child or parent was a list (not a node id) was a
    TypeError ("unhashable type: 'list'")."""
    try:
        loaded = load_transcript(json.dumps(items))
    except ConversationFormatError:
        return
    for conv in loaded.conversations:
        assert all(t.speaker in ("user", "assistant") and t.text.strip() for t in conv.turns())


@pytest.mark.parametrize("calls", [5, True, 1.5, {"a": 1}, "ab", None, []])
def test_openai_tool_calls_that_are_no_list_are_no_calls(calls: Any) -> None:
    """Before: `"tool_calls": 5` (any number) was a TypeError out of the reader."""
    chat = {"messages": [{"role": "assistant", "content": "x", "tool_calls": calls}]}
    (conv,) = load_transcript(json.dumps(chat)).conversations
    assert [t.text for t in conv.turns()] == ["x"]


@pytest.mark.parametrize("fmt", ["chatgpt", "claude-ai"])
@pytest.mark.parametrize("obj", [
    {"format": "rmh-conversation/1", "id": "x", "sessions": []}, [], {"messages": []},
    "the other export"])
def test_an_export_format_named_for_another_file_is_refused(fmt: str, obj: Any) -> None:
    """Before: `--format chatgpt` on a simple file 'ingested 1 conversation(s): 0 turns'."""
    if obj == "the other export":
        obj = [{"chat_messages": []}] if fmt == "chatgpt" else [{"mapping": {}}]
    with pytest.raises(ConversationFormatError, match=f"{fmt}: not an export"):
        load_transcript(json.dumps(obj), fmt)
