"""Agent transcripts -> `Conversation`: Claude Code and Codex CLI session JSONL, OpenAI chat.

Three shapes, read as the clients write them (one JSON object per line for the two JSONL ones):

- **Claude Code** (``~/.claude/projects/<project>/<session>.jsonl``): lines with ``type``
  "user" or "assistant", a ``message`` (``role``, ``content``: a string or a list of blocks
  ``text`` / ``tool_use`` / ``tool_result`` / ``thinking``), ``sessionId``, ``uuid``,
  ``timestamp``, ``cwd``. Lines of other types ("summary", "system", snapshots) are not turns;
  side-chain (sub-agent) and meta lines are skipped.
- **Codex CLI** (rollout ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): lines
  ``{"timestamp", "type", "payload"}``; ``session_meta`` names the session, ``response_item``
  lines carry ``message`` (``role``, ``content`` blocks ``input_text`` / ``output_text``),
  ``function_call`` / ``local_shell_call`` / ``custom_tool_call`` (tools) and outputs and
  reasoning (not turns); ``event_msg`` and ``turn_context`` repeat what the items say and are
  not read. Context the client injects as a user message (``<environment_context>...``) is
  not the user speaking and is skipped.
- **OpenAI chat**: a ``messages`` list (``role``, ``content`` a string or ``text`` blocks,
  ``tool_calls``), bare or in an object ``{"id", "date", "messages"}``. A chat has no clock:
  its turns are dated ``date`` when given, else 1970-01-01 (a fixed date, never the wall
  clock).

What a turn is: a user turn is what the user typed (tool results the client sends back as
"user" lines are not); an assistant turn is everything the assistant said and did until the
user speaks again: its text, and each tool call summarised on one line ("[tool Bash: git
status]"); thinking and reasoning are left out. Speakers are "user" and "assistant"; one
transcript is one conversation with one session, both named by the client's session id.
Memory that rmh's hooks injected (``<rmh-memory>...</rmh-memory>``) is cut out of every turn.

A line that is not JSON, not an object, or a user/assistant line without its message or time
is reported (`Loaded.problems`: "line N: why") and skipped whole, never half-read. Timestamps
are read as UTC and kept naive. Same bytes -> same conversation.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import ConversationFormatError
from .formats import Conversation, Session, Turn, decode_json, timestamp

TRANSCRIPT_FORMATS: tuple[str, ...] = ("claude-code", "codex", "openai")
TOOL_ARG_CHARS = 80
CHAT_EPOCH = datetime(1970, 1, 1)
_TOOL_KEYS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "note",
              "description", "prompt")
_INJECTED = re.compile(r"^\s*<([\w-]+)>.*</\1>\s*$", re.S)
# What rmh's own hooks injected (harness/hooks_memory.py) is not the user speaking.
_RMH_MEMORY = re.compile(r"<rmh-memory>.*?</rmh-memory>", re.S)


@dataclass(frozen=True)
class Loaded:
    """Conversations read from one file, and the lines that were skipped with the reason."""

    conversations: tuple[Conversation, ...]
    problems: tuple[str, ...] = field(default=())


@dataclass
class _Piece:
    role: str
    text: str
    tools: list[str]
    when: datetime
    ident: str


def tool_line(name: str, args: Any) -> str:
    """One line for a tool call: "[tool NAME: most telling argument]" (cut to 80 chars)."""
    if isinstance(args, str):
        with contextlib.suppress(json.JSONDecodeError):
            args = decode_json(args)
    arg = ""
    if isinstance(args, Mapping):
        for key in _TOOL_KEYS:
            value = args.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value.strip():
                arg = value
                break
        else:
            arg = next((str(v) for _, v in sorted(args.items()) if isinstance(v, str)), "")
    elif isinstance(args, list):
        arg = " ".join(str(v) for v in args)
    elif isinstance(args, str):
        arg = args
    arg = " ".join(arg.split())
    if len(arg) > TOOL_ARG_CHARS:
        arg = arg[: TOOL_ARG_CHARS - 1] + "…"
    return f"[tool {name}: {arg}]" if arg else f"[tool {name}]"


def json_lines(text: str) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, decoded object or None, problem or None) of each non-blank line."""
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = decode_json(raw)
        except json.JSONDecodeError as exc:
            yield n, None, f"line {n}: not JSON ({exc.msg})"
            continue
        if not isinstance(obj, Mapping):
            yield n, None, f"line {n}: not a JSON object"
            continue
        yield n, obj, None


def _blocks(content: Any) -> tuple[list[str], list[str], bool]:
    """(texts, tool lines, only tool results) of a message's content."""
    if isinstance(content, str):
        return [content], [], False
    texts: list[str] = []
    tools: list[str] = []
    results = 0
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, Mapping):
                continue
            kind = b.get("type")
            if kind in ("text", "input_text", "output_text") and isinstance(b.get("text"), str):
                texts.append(str(b["text"]))
            elif kind == "tool_use":
                tools.append(tool_line(str(b.get("name", "?")), b.get("input")))
            elif kind == "tool_result":
                results += 1
    return texts, tools, results > 0 and not texts and not tools


def _conversation(cid: str, pieces: Sequence[_Piece]) -> Conversation:
    """Pieces -> one session of turns: user pieces are turns, assistant pieces are merged
    until the user speaks again."""
    turns: list[Turn] = []
    open_assistant: list[_Piece] = []

    def flush() -> None:
        if not open_assistant:
            return
        first = open_assistant[0]
        body = [p.text for p in open_assistant if p.text] + [
            t for p in open_assistant for t in p.tools]
        if body:
            turns.append(Turn(first.ident, "assistant", "\n".join(body), first.when,
                              role="assistant"))
        open_assistant.clear()

    for p in pieces:
        if p.role == "assistant":
            open_assistant.append(p)
            continue
        flush()
        if p.text:
            turns.append(Turn(p.ident, "user", p.text, p.when, role="user"))
    flush()
    if not turns:
        return Conversation(cid, ())
    return Conversation(cid, (Session(cid, turns[0].when, tuple(turns)),))


def _text(parts: Sequence[str]) -> str:
    parts = [_RMH_MEMORY.sub("", s).strip() for s in parts]
    return "\n".join(s for s in parts if s)


def parse_claude_code(text: str, default_id: str = "claude-code") -> Loaded:
    """A Claude Code session JSONL (module docstring)."""
    pieces: list[_Piece] = []
    problems: list[str] = []
    sid = ""
    seen: set[str] = set()  # a line read twice (a retried write, files joined) is one turn
    for n, obj, problem in json_lines(text):
        if problem is not None:
            problems.append(problem)
            continue
        kind, uid = obj.get("type"), obj.get("uuid")
        if kind not in ("user", "assistant") or (isinstance(uid, str) and uid in seen):
            continue
        if obj.get("isSidechain") is True or obj.get("isMeta") is True:
            continue
        msg = obj.get("message")
        if not isinstance(msg, Mapping) or "content" not in msg:
            problems.append(f"line {n}: {kind} line without a message")
            continue
        try:
            when = timestamp(obj.get("timestamp"))
        except ConversationFormatError as exc:
            problems.append(f"line {n}: {exc}")
            continue
        texts, tools, only_results = _blocks(msg.get("content"))
        if only_results:
            continue
        sid = sid or str(obj.get("sessionId") or "")
        role = "assistant" if kind == "assistant" else "user"
        body = _text(texts)
        if role == "user" and _INJECTED.match(body):
            continue
        if isinstance(uid, str):
            seen.add(uid)
        pieces.append(_Piece(role, body, tools, when, str(uid or f"L{n}")))
    return Loaded((_conversation(sid or default_id, pieces),), tuple(problems))


def parse_codex(text: str, default_id: str = "codex") -> Loaded:
    """A Codex CLI rollout JSONL (module docstring)."""
    pieces: list[_Piece] = []
    problems: list[str] = []
    sid = ""
    for n, obj, problem in json_lines(text):
        if problem is not None:
            problems.append(problem)
            continue
        payload = obj.get("payload")
        kind = obj.get("type")
        if kind not in ("session_meta", "response_item"):
            continue
        if not isinstance(payload, Mapping):
            problems.append(f"line {n}: {kind} line without a payload")
            continue
        if kind == "session_meta":
            sid = sid or str(payload.get("id") or "")
            continue
        item = payload.get("type")
        if item not in ("message", "function_call", "local_shell_call", "custom_tool_call"):
            continue
        try:
            when = timestamp(obj.get("timestamp"))
        except ConversationFormatError as exc:
            problems.append(f"line {n}: {exc}")
            continue
        ident = f"L{n}"
        if item == "message":
            role = payload.get("role")
            if role not in ("user", "assistant"):
                continue
            texts, tools, _ = _blocks(payload.get("content"))
            body = _text(texts)
            if role == "user" and _INJECTED.match(body):
                continue
            pieces.append(_Piece(str(role), body, tools, when, ident))
        elif item == "local_shell_call":
            action = payload.get("action")
            cmd = action.get("command") if isinstance(action, Mapping) else None
            pieces.append(_Piece("assistant", "", [tool_line("shell", {"command": cmd})],
                                 when, ident))
        else:
            args = payload.get("arguments", payload.get("input"))
            pieces.append(_Piece("assistant", "", [tool_line(str(payload.get("name", "?")),
                                                             args)], when, ident))
    return Loaded((_conversation(sid or default_id, pieces),), tuple(problems))


def parse_openai(obj: Any, default_id: str = "chat") -> Loaded:
    """An OpenAI chat `messages` list, bare or in {"id", "date", "messages"}."""
    cid, when = default_id, CHAT_EPOCH
    messages = obj
    if isinstance(obj, Mapping):
        messages = obj.get("messages")
        cid = str(obj.get("id") or default_id)
        if obj.get("date") is not None:
            when = timestamp(obj["date"])
    if not isinstance(messages, list):
        raise ConversationFormatError("openai: 'messages' must be a list")
    pieces: list[_Piece] = []
    problems: list[str] = []
    for n, m in enumerate(messages, start=1):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str):
            problems.append(f"message {n}: not an object with a role")
            continue
        role = m["role"]
        if role not in ("user", "assistant"):
            continue
        texts, tools, _ = _blocks(m.get("content") or "")
        for call in (m["tool_calls"] if isinstance(m.get("tool_calls"), list) else ()):
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                tools.append(tool_line(str(fn.get("name", "?")), fn.get("arguments")))
        pieces.append(_Piece(role, _text(texts), tools, when, f"m{n}"))
    return Loaded((_conversation(cid, pieces),), tuple(problems))


def detect_jsonl(text: str) -> str | None:
    """"claude-code" or "codex" when the first JSON object line looks like one; else None."""
    for _, obj, problem in json_lines(text):
        if problem is not None:
            continue
        if "payload" in obj and obj.get("type") in (
                "session_meta", "response_item", "event_msg", "turn_context"):
            return "codex"
        if "sessionId" in obj or obj.get("type") in ("user", "assistant", "summary"):
            return "claude-code"
        return None
    return None


def is_openai_chat(obj: Any) -> bool:
    """A decoded JSON value that is a chat `messages` list (or an object holding one)."""
    if isinstance(obj, Mapping):
        obj = obj.get("messages")
    return (isinstance(obj, list) and bool(obj) and isinstance(obj[0], Mapping)
            and "role" in obj[0] and "content" in obj[0])
