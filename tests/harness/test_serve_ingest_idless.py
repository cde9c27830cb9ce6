"""A chat sent to `vault.ingest` with no id never replaces another chat's turns (API7).

A plain-text or WhatsApp chat names no conversation id; over JSON-RPC it is conversation
`conversation` unless the caller names `conversation_id`. Session 32 added the parameter,
but a second id-less chat still wrote over the first's turn notes (NEWUSER4 item 5). Now
such a chat is ingested as `conversation` only when that conversation is empty, holds the
same turns, or is a beginning of it (the same chat again, or grown); otherwise -32602 naming
`conversation_id`, and nothing is written. A caller that names the id means it (naming
`conversation` replaces as before).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_server_e2e import Server

FIRST = "Ivan: I bought a red kayak on Monday.\nKim: Nice, where do you keep it?\n"
GROWN = FIRST + "Ivan: In the garage, next to the bikes.\n"
OTHERS = [
    "Carla: The train to Oslo leaves at nine.\nDmitri: I'll be there early.\n",
    "Ivan: I bought a blue kayak on Monday.\nKim: Nice, where do you keep it?\n",  # one word
    "Kim: I bought a red kayak on Monday.\nIvan: Nice, where do you keep it?\n",  # speakers
    "Ivan: I bought a red kayak on Monday.\n",  # shorter: would take turn 2 back
]


def notes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


@pytest.mark.parametrize("other", OTHERS)
def test_a_second_id_less_chat_is_refused_and_writes_nothing(tmp_path: Path, other: str) -> None:
    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text('[extract]\nentities = "rules"\n', encoding="utf-8")
    server = Server(root, tmp_path)
    try:
        first = server.call("vault.ingest", {"conversation": FIRST, "format": "text"}, rid=1)
        assert first["result"]["conversations"] == ["conversation"], first
        again = server.call("vault.ingest", {"conversation": FIRST, "format": "text"}, rid=2)
        assert again["result"]["written"] == 0, again
        before = notes(root)
        refused = server.call("vault.ingest", {"conversation": other, "format": "text"}, rid=3)
        assert refused["error"]["code"] == -32602, refused
        assert refused["error"]["data"]["param"] == "conversation_id"
        assert "conversation_id" in refused["error"]["data"]["reason"]
        assert notes(root) == before
        named = server.call("vault.ingest", {"conversation": other, "format": "text",
                                             "conversation_id": "second"}, rid=4)
        assert named["result"]["conversations"] == ["second"], named
        grown = server.call("vault.ingest", {"conversation": GROWN, "format": "text"}, rid=5)
        assert grown["result"]["written"] > 0, grown
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    turns = sorted((root / "conversations" / "conversation").rglob("conversation S1-*.md"))
    assert [t.read_text("utf-8").rstrip().rsplit("\n", 1)[-1] for t in turns] == \
        GROWN.rstrip().split("\n")
