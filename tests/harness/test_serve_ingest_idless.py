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
from typing import Any

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


def test_two_servers_id_less_chats_at_once_never_both_land(tmp_path: Path) -> None:
    """API7/REV (session 33): the check and the ingest were two calls, and two `rmh serve` on
    one vault share no vault thread: two id-less chats sent at once both passed the check,
    and the second replaced the first's turns (both answered `written`). Now the check is made
    again with the ingest under the vault's write lock: one lands, the other is refused."""
    import threading

    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text('[extract]\nentities = "rules"\n', encoding="utf-8")
    chats = ["".join(f"{a}: {word} message {i}.\n{b}: reply {i}.\n" for i in range(100))
             for a, b, word in (("Ivan", "Kim", "alpha"), ("Carla", "Dmitri", "beta"))]
    for k in (0, 1):
        (tmp_path / f"s{k}").mkdir()
    servers = [Server(root, tmp_path / f"s{k}") for k in (0, 1)]
    got: list[Any] = [None, None]
    try:
        for server in servers:  # both started and answering before the two chats go
            assert "result" in server.call("ping", rid=0)

        def send(k: int) -> None:
            got[k] = servers[k].call("vault.ingest", {"conversation": chats[k],
                                                      "format": "text"}, rid=k + 1)

        threads = [threading.Thread(target=send, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        for server in servers:
            assert server.finish() == 0
    finally:
        for server in servers:
            if server.proc.poll() is None:
                server.proc.kill()
    codes = sorted(str(g["error"]["code"]) if "error" in g else "result" for g in got)
    assert codes == ["-32602", "result"], got
    landed = chats[0] if "result" in got[0] else chats[1]
    word = "alpha" if landed is chats[0] else "beta"
    texts = [p.read_text(encoding="utf-8") for p in (root / "conversations").rglob("*.md")]
    assert sum(f"{word} message" in t for t in texts) >= 100
    other = "beta" if word == "alpha" else "alpha"
    assert not any(f"{other} message" in t for t in texts)
