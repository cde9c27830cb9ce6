"""Agent transcripts written for the tests (no real transcript is copied from anywhere).

`claude_lines` / `codex_lines` build a session JSONL from a list of (role, text, tools)
exchanges, in each client's line shapes, with the noise real files carry (summaries,
thinking, tool results sent back as user lines, injected context, side chains).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Exchange = tuple[str, str, Sequence[tuple[str, dict[str, Any]]]]

CI_TASK: list[Exchange] = [
    ("user", "I'm trying to get the nightly build to pass on the CI server.", ()),
    ("assistant", "Let me look at the failing job first.",
     (("Bash", {"command": "gh run view 4711 --log-failed"}),)),
    ("user", "I cleared the build cache first but the build still failed.", ()),
    ("assistant", "The log shows the compiler was upgraded to version 13 on the runner. "
     "Try pinning the compiler to version 12.",
     (("Edit", {"file_path": "/repo/.ci/config.yml", "old_string": "gcc", "new_string": "x"}),)),
    ("user", "Pinning the compiler to version 12 worked, the build passes now.", ()),
    ("assistant", "Good. Lesson learned: always pin the compiler version in CI.", ()),
]


def _ts(i: int) -> str:
    return f"2025-03-04T09:{i:02d}:00.000Z"


def claude_lines(exchanges: Sequence[Exchange], session: str = "sess-ci-1",
                 noise: bool = True) -> list[str]:
    """A Claude Code session JSONL (one string per line)."""
    out: list[dict[str, Any]] = []
    if noise:
        out.append({"type": "summary", "summary": "CI build", "leafUuid": "u0"})
    n = 0
    for role, text, tools in exchanges:
        base = {"sessionId": session, "cwd": "/repo", "isSidechain": False,
                "timestamp": _ts(n), "parentUuid": f"u{n - 1}" if n else None}
        if role == "user":
            out.append({**base, "type": "user", "uuid": f"u{n}",
                        "message": {"role": "user", "content": text}})
            n += 1
            continue
        blocks: list[dict[str, Any]] = []
        if noise:
            blocks.append({"type": "thinking", "thinking": "secret reasoning", "signature": "x"})
        blocks.append({"type": "text", "text": text})
        out.append({**base, "type": "assistant", "uuid": f"u{n}",
                    "message": {"role": "assistant", "id": f"msg{n}", "content": blocks}})
        n += 1
        for name, args in tools:
            out.append({**base, "timestamp": _ts(n), "type": "assistant", "uuid": f"u{n}",
                        "message": {"role": "assistant", "id": f"msg{n}", "content": [
                            {"type": "tool_use", "id": f"t{n}", "name": name, "input": args}]}})
            n += 1
            out.append({**base, "timestamp": _ts(n), "type": "user", "uuid": f"u{n}",
                        "message": {"role": "user", "content": [
                            {"type": "tool_result", "tool_use_id": f"t{n - 1}",
                             "content": "ok " * 50}]}})
            n += 1
    if noise:
        out.append({"type": "user", "isSidechain": True, "sessionId": session,
                    "timestamp": _ts(n), "uuid": "side",
                    "message": {"role": "user", "content": "sub-agent chatter"}})
        out.append({"type": "user", "isMeta": True, "sessionId": session,
                    "timestamp": _ts(n), "uuid": "meta",
                    "message": {"role": "user", "content": "<local-command-stdout>x"}})
    return [json.dumps(o) for o in out]


def codex_lines(exchanges: Sequence[Exchange], session: str = "019a-codex-ci") -> list[str]:
    """A Codex CLI rollout JSONL (one string per line)."""
    out: list[dict[str, Any]] = [
        {"timestamp": _ts(0), "type": "session_meta",
         "payload": {"id": session, "timestamp": _ts(0), "cwd": "/repo", "cli_version": "0.50.0"}},
        {"timestamp": _ts(0), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [
                {"type": "input_text",
                 "text": "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}]}},
    ]
    n = 1
    for role, text, tools in exchanges:
        kind = "input_text" if role == "user" else "output_text"
        out.append({"timestamp": _ts(n), "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
        if role == "user":
            out.append({"timestamp": _ts(n), "type": "event_msg",
                        "payload": {"type": "user_message", "message": text}})
        out.append({"timestamp": _ts(n), "type": "response_item", "payload": {
            "type": "reasoning", "summary": [], "encrypted_content": "zzz"}})
        for name, args in tools:
            out.append({"timestamp": _ts(n), "type": "response_item", "payload": {
                "type": "function_call", "name": name.lower(), "arguments": json.dumps(args),
                "call_id": f"c{n}"}})
            out.append({"timestamp": _ts(n), "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{n}", "output": "done"}})
        n += 1
    return [json.dumps(o) for o in out]
