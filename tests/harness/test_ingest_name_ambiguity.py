"""A name an ingest gives an entity note (`conversations/chat/entities/kafka.md`) still reads
the user's own note (`infra/Kafka.md`), as the link `[[Kafka]]` at the vault root resolves:
`rmh read Kafka` and MCP `read` by name answered `ambiguous_note` after an ingest (session 37,
NOTES-NEWUSER8). A destructive command keeps refusing a shared name, naming the candidates,
and so does a read where two paths are as short (a tie only code points break). Real `rmh`
processes, a real chat export, the official `mcp` client over `rmh serve`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from tests.forks import run_cli

from .test_mcp_sdk_client import server_params
from .test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

CHAT = ("[13/11/2026, 09:15:07] Alice Chen: Kafka retention is now 14 days.\n"
        "[13/11/2026, 09:16:00] Bob Ruiz: Noted.\n")


Rmh = Callable[..., tuple[int, str, str]]


def ingested(tmp_path: Path, notes: Mapping[str, str], chat: str) -> Rmh:
    """The vault `tmp_path/v` made of `notes` (path: text), `rmh init --no-dense`, then `chat`
    ingested; the `rmh` runner on it (no traceback allowed): (returncode, stdout, stderr)."""
    root = tmp_path / "v"
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (tmp_path / "chat.txt").write_text(chat, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)

    def rmh(*args: str) -> tuple[int, str, str]:
        out = run_cli(["--vault", str(root), *args], env=env, cwd=tmp_path, timeout=120)
        assert "Traceback" not in out.stderr, out.stderr
        return out.returncode, out.stdout, out.stderr

    assert rmh("init", "--no-dense")[0] == 0
    assert rmh("ingest", str(tmp_path / "chat.txt"))[0] == 0
    return rmh


def test_an_ingest_leaves_the_users_names_readable(tmp_path: Path) -> None:
    root = tmp_path / "v"
    rmh = ingested(tmp_path, {"people/Alice Chen.md": "# Alice Chen\nowns billing\n",
                              "infra/Kafka.md": "# Kafka\nretention 7 days\n",
                              "aa/Dup.md": "# Dup\none\n", "bb/Dup.md": "# Dup\ntwo\n"}, CHAT)
    entities = root / "conversations" / "chat" / "entities"
    assert (entities / "kafka.md").is_file() and (entities / "alice chen.md").is_file()

    assert rmh("read", "Alice Chen")[:2] == (0, "# Alice Chen\nowns billing\n")
    assert rmh("read", "Kafka")[:2] == (0, "# Kafka\nretention 7 days\n")
    code, _, err = rmh("read", "Dup")  # two paths as short: no rule but code points picks
    assert code != 0 and "ambiguous" in err and "aa/Dup.md" in err and "bb/Dup.md" in err
    code, _, err = rmh("delete", "Kafka")  # destructive: refused, the candidates named
    assert code != 0 and "ambiguous" in err
    assert "infra/Kafka.md" in err and "conversations/chat/entities/kafka.md" in err
    assert (root / "infra" / "Kafka.md").is_file() and (entities / "kafka.md").is_file()

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(server_params(root)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                await session.initialize()
                got = await session.call_tool("read", {"note": "Kafka"})
                assert not got.is_error
                block = got.content[0]
                assert isinstance(block, TextContent)
                assert json.loads(block.text)["note"] == "infra/Kafka.md"
                moved = await session.call_tool("move", {"note": "Kafka", "new": "x/Kafka"})
                assert moved.is_error
                block = moved.content[0]
                assert isinstance(block, TextContent)
                assert "ambiguous_note" in block.text and "infra/Kafka.md" in block.text

    anyio.run(main)
    assert (root / "infra" / "Kafka.md").is_file()
