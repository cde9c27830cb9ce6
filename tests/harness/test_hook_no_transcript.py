"""A Claude Code session ended before its first message has no transcript file yet: the
session-end hook said `rmh hook session-end: FileNotFoundError: [Errno 2] No such file or
directory: '...'`; now it is a session with nothing said (0 turns), as an empty file is, and
the learning session still ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_hooks_session import hook, rmh, two_notes

pytestmark = pytest.mark.slow


def test_a_session_end_without_a_transcript_file_ingests_nothing(tmp_path: Path) -> None:
    vault = two_notes(tmp_path / "vault")
    (vault / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(vault, "init", "--no-dense").returncode == 0
    base = {"session_id": "s-empty", "cwd": str(tmp_path),
            "transcript_path": str(tmp_path / "s-empty.jsonl")}  # never written
    hook(vault, "session-start", {**base, "hook_event_name": "SessionStart"})
    hook(vault, "prompt", {**base, "hook_event_name": "UserPromptSubmit",
                           "prompt": "When does the nightly job run?"})
    for event, name in (("pre-compact", "PreCompact"), ("session-end", "SessionEnd")):
        out = hook(vault, event, {**base, "hook_event_name": name})
        assert out.stderr == f"rmh hook {event}: 0 turns, 0 notes written, 0 lines skipped\n"
        assert out.stdout == ""
    assert not (vault / "conversations").exists()
    status = json.loads(rmh(vault, "status", "--json").stdout)
    assert status["learning"]["sessions"]["open"] == 0, status["learning"]
