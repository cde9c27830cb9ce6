"""A chat export ingested over its older version, the process SIGKILLed after each of its file
operations (session 29 CHATTXT: WhatsApp; session 30 CHATPERF: DiscordChatExporter's JSON):
after the next open the vault holds the old notes or the new ones whole, no half-written note
and no pending intent, and an ingest run to the end then gives the bytes of one never
interrupted (tests/forks.py runs each ingest as a real process)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.forks import VAULT_PRELOAD, ForkServer
from vault import Vault, ingest_conversations, load_transcript

REPO = Path(__file__).resolve().parents[3]
WHATSAPP_OLD = ("\ufeff31/12/2023, 21:15 - Messages and calls are end-to-end encrypted.\r\n"
                "31/12/2023, 21:15 - Alice: I sold my bike: the red one\r\nit had a flat\r\n"
                "01/01/2024, 09:05 - Bob: Nice! Where do you ride now?\n")
WHATSAPP_NEW = WHATSAPP_OLD + (
    "13/01/2024, 17:40 - Alice: I row a kayak on Lake Como\n"
    "13/01/2024, 17:41 - Bob: <Media omitted>\n"
    "14/01/2024, 08:00 - Bob: I bought a sourdough starter from Lisbon\n")


def _export(rows: list[tuple[str, str, str, str, str]]) -> str:
    return json.dumps({
        "guild": {"id": "1", "name": "Friends", "iconUrl": ""},
        "channel": {"id": "2", "type": "GuildTextChat", "categoryId": None, "category": None,
                    "name": "general", "topic": None},
        "dateRange": {"after": None, "before": None}, "exportedAt": "2024-02-01T00:00:00+00:00",
        "messages": [{"id": i, "type": kind, "timestamp": when, "timestampEdited": None,
                      "isPinned": False, "content": text,
                      "author": {"id": "7" + i, "name": who.lower(), "nickname": who,
                                 "isBot": False, "roles": []},
                      "attachments": [], "embeds": [], "reactions": [], "mentions": []}
                     for i, kind, when, who, text in rows]}, indent=2)


_ROWS = [("101", "Default", "2023-12-31T21:15:00.120+01:00", "Alice",
          "I sold my bike: the red one\nit had a flat"),
         ("102", "GuildMemberJoin", "2023-12-31T21:16:00+01:00", "Bob", ""),
         ("103", "Reply", "2024-01-01T09:05:00+01:00", "Bob", "Nice! Where do you ride now?")]
DISCORD_OLD = _export(_ROWS)
DISCORD_NEW = _export([
    *_ROWS,
    ("104", "Default", "2024-01-13T17:40:00+01:00", "Alice", "I row a kayak on Lake Como"),
    ("105", "Default", "2024-01-13T17:41:00+01:00", "Bob", ""),
    ("106", "Default", "2024-01-14T08:00:00+01:00", "Bob",
     "I bought a sourdough starter from Lisbon")])
CHILD = """
import sys
from pathlib import Path
from vault import Vault, ingest_conversations, load_transcript
text = Path(sys.argv[3]).read_text(encoding="utf-8")
with Vault.open(Path(sys.argv[1]), watch=False, fault_after=int(sys.argv[2])) as v:
    ingest_conversations(v, load_transcript(text, "auto", sys.argv[4]).conversations,
                         use_nlp=False)
"""
PRELOAD = "from vault import Vault, ingest_conversations, load_transcript\n" + VAULT_PRELOAD
EXPORTS = [("wa", WHATSAPP_OLD, WHATSAPP_NEW, "WhatsApp Chat with Bob.txt"),
           ("dc", DISCORD_OLD, DISCORD_NEW, "Friends - general [2].json")]


def _notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


@pytest.mark.parametrize(("source", "old", "new", "name"), EXPORTS, ids=["whatsapp", "discord"])
def test_a_chat_ingest_killed_at_every_file_operation_is_all_or_nothing(
        tmp_path: Path, source: str, old: str, new: str, name: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    template = tmp_path / "template"
    with Vault.init(template) as v:
        ingest_conversations(v, load_transcript(old, "auto", source).conversations,
                             use_nlp=False)
    chat = tmp_path / name
    chat.write_text(new, encoding="utf-8", newline="")
    reference = tmp_path / "reference"
    shutil.copytree(template, reference)
    with ForkServer(PRELOAD, workdir=tmp_path / "forks", env=env, cwd=REPO) as server:
        def ingest(root: Path, n: int) -> int:
            done = server.run([str(root), str(n), str(chat), source], code=CHILD, env=env,
                              cwd=REPO)
            assert done.returncode in (0, -9), done.stderr
            return done.returncode

        assert ingest(reference, 10**9) == 0
        before, after = _notes(template), _notes(reference)
        assert len(after) - len(before) >= 3
        states = []
        for n in range(1, 400):
            work = tmp_path / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            code = ingest(work, n)
            with Vault.open(work, watch=False) as v:
                assert v.doctor()["intents"]["pending"] == []
            now = _notes(work)
            assert now in (before, after), (n, sorted(set(now) ^ set(after)))
            states.append("old" if now == before else "new")
            if code == 0:
                break
            assert ingest(work, 10**9) == 0  # finished after the kill: as if never killed
            assert _notes(work) == after, n
        assert states[-1] == "new" and "old" in states and len(states) > 5
