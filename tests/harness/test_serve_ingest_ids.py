"""Two plain-text chats over `vault.ingest` each keep their notes when each names its id.

Before session 32 a text chat over JSON-RPC always became conversation `conversation` (a file
given to `rmh ingest` is named after the file), and `vault.ingest` had no way to name it: a
second chat was written over the first's turn notes, nothing trashed or reported
(docs/measurements/session32/NOTES-NEWUSER4.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_server_e2e import Server

NAMES = ("Ivan", "Kim", "Lee", "Joe", "Mia", "Ned")


def chat(i: int) -> str:
    a, b = NAMES[i % len(NAMES)], NAMES[(i + 1) % len(NAMES)]
    return f"{a}: I bought boat {i} on pier {i + 2}.\n{b}: Boat {i} looks fast.\n"


def speakers(root: Path) -> set[str]:
    return {line.removeprefix("speaker: ") for p in root.rglob("*.md")
            for line in p.read_text(encoding="utf-8").splitlines()
            if line.startswith("speaker: ")}


@pytest.mark.parametrize("chats", [2, 3])
def test_each_named_chat_keeps_its_notes(tmp_path: Path, chats: int) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text('[extract]\nentities = "rules"\n', encoding="utf-8")
    server = Server(root, tmp_path)
    results: list[dict[str, Any]] = []
    try:
        for i in range(chats):
            answer = server.call("vault.ingest", {"conversation": chat(i), "format": "text",
                                                  "conversation_id": f"chat-{i}"}, rid=i)
            assert "result" in answer, answer
            results.append(answer["result"])
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert [r["conversations"] for r in results] == [[f"chat-{i}"] for i in range(chats)]
    want = {NAMES[j % len(NAMES)] for i in range(chats) for j in (i, i + 1)}
    assert speakers(root / "conversations") == want
    for i in range(chats):
        turns = sorted((root / "conversations" / f"chat-{i}").rglob(f"chat-{i} S1-*.md"))
        assert len(turns) == 2 and f"boat {i} on pier" in turns[0].read_text("utf-8")
