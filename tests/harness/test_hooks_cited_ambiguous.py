"""The session-end hook credits a note the agent cited by a name that its own ingest made
ambiguous: the transcript's entity `kafka` becomes `conversations/S1/entities/kafka.md`, so
`[[Kafka]]` (the user's `infra/Kafka.md`, as the link resolves) failed `read` as an ambiguous
name and was dropped: not logged for learning, not in the next session's brief (session 37,
NOTES-NEWUSER8). Real `rmh` processes, a real Claude Code transcript."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.forks import run_cli

from .test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

TURNS = [
    {"type": "user", "sessionId": "S1", "timestamp": "2026-12-01T10:00:00Z", "uuid": "u1",
     "message": {"role": "user", "content": "What is the Kafka retention?"}},
    {"type": "assistant", "sessionId": "S1", "timestamp": "2026-12-01T10:00:05Z", "uuid": "u2",
     "message": {"role": "assistant",
                 "content": [{"type": "text", "text": "Per [[Kafka]] it is 7 days."}]}},
]


def test_a_citation_its_own_ingest_made_ambiguous_is_still_credited(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "infra").mkdir(parents=True)
    (root / "infra" / "Kafka.md").write_text("# Kafka\nretention 7 days\n", encoding="utf-8")
    (root / "Other.md").write_text("# Other\nnothing\n", encoding="utf-8")
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", encoding="utf-8")
    transcript = tmp_path / "S1.jsonl"
    transcript.write_text("".join(json.dumps(t) + "\n" for t in TURNS), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)

    def rmh(*args: str, stdin: str = "") -> str:
        out = run_cli(["--vault", str(root), *args], env=env, cwd=tmp_path, stdin=stdin,
                      timeout=120)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        return out.stderr

    rmh("init", "--no-dense")
    end = {"session_id": "S1", "transcript_path": str(transcript), "cwd": str(tmp_path),
           "hook_event_name": "SessionEnd"}
    assert "2 turns" in rmh("hook", "session-end", "--client", "claude-code",
                            stdin=json.dumps(end))
    assert (root / "conversations" / "S1" / "entities" / "kafka.md").is_file()  # the clash
    used = json.loads((root / ".rmh" / "hooks" / "used.json").read_text(encoding="utf-8"))
    assert used == ["infra/Kafka.md"]
