"""An ingest's entity notes never take a name the user's own notes hold (session 38,
NOTES-NEWUSER9): after `rmh ingest` of a chat naming Maya and the Ledger, `[[Maya]]` (an alias
of `people/Maya Okafor.md`) and `[[Ledger]]` (a user's note on a longer path) resolved to the
generated `conversations/chat/entities/*.md`, `read Maya` printed the entity note, the user's
note lost its backlinks, and `search Ledger` ranked the entity note first. Also a user note
made after the ingest (`people/Bob Ruiz.md`, alias Bob) takes `[[Bob]]` back at once, and a
destructive command refuses the shared name. Real `rmh` processes, the official `mcp` client."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from .test_ingest_name_ambiguity import ingested
from .test_mcp_sdk_client import server_params

pytestmark = pytest.mark.slow

LEDGER = "teams/payments/services/internal/Ledger.md"  # longer than the entity note's path
CHAT = ("Alice: Maya agreed to move the Ledger to tiered storage.\n"
        "Bob: Great, I will tell Maya and check the Ledger tomorrow.\nAlice: Thanks Bob.\n")


def test_an_ingest_never_takes_the_users_names(tmp_path: Path) -> None:
    root = tmp_path / "v"
    ledger = "# Ledger\n" + ("The ledger service books every payment twice, reconciles "
                             "accounts nightly and keeps an audit trail of every change.\n") * 3
    rmh = ingested(tmp_path, {
        "people/Maya Okafor.md": "---\naliases: [Maya]\n---\nStaff engineer.\n",
        "Onboarding.md": "Pair with [[Maya]]. Read [[Ledger]], ask [[Bob]].\n",
        LEDGER: ledger}, CHAT)
    entities = root / "conversations" / "chat" / "entities"
    for name in ("maya", "ledger", "bob"):
        assert (entities / f"{name}.md").is_file()

    links = rmh("links", "Onboarding")[1]
    assert "Maya -> people/Maya Okafor.md" in links
    assert f"Ledger -> {LEDGER}" in links
    assert "Bob -> conversations/chat/entities/bob.md" in links  # no user note holds Bob
    assert rmh("read", "Maya")[1].startswith("---\naliases: [Maya]")
    assert rmh("read", "Ledger")[1] == ledger
    assert "Onboarding.md" in rmh("backlinks", "people/Maya Okafor")[1]
    hits = [ln.split()[-1] for ln in rmh("search", "Ledger", "--no-dense")[1].splitlines()
            if ln.strip()[:1].isdigit()]
    assert hits[0] == LEDGER
    # the generated notes' own path links still reach the entity notes
    assert "chat S1-2.md" in rmh("backlinks", "conversations/chat/entities/maya")[1]

    code, _, err = rmh("delete", "Maya")  # destructive: never picks, names both
    assert code != 0 and "ambiguous" in err
    assert "people/Maya Okafor.md" in err and "conversations/chat/entities/maya.md" in err
    assert (root / "people" / "Maya Okafor.md").is_file() and (entities / "maya.md").is_file()

    # a user note made after the ingest takes its name back
    (root / "people" / "Bob Ruiz.md").write_text("---\naliases: [Bob]\n---\nSRE.\n", "utf-8")
    assert "Bob -> people/Bob Ruiz.md" in rmh("links", "Onboarding")[1]

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(server_params(root)) as (rx, tx), \
                    ClientSession(rx, tx) as session:
                await session.initialize()
                for name, path in (("Maya", "people/Maya Okafor.md"), ("Ledger", LEDGER),
                                   ("Bob", "people/Bob Ruiz.md")):
                    got = await session.call_tool("read", {"note": name})
                    assert not got.is_error
                    block = got.content[0]
                    assert isinstance(block, TextContent)
                    assert json.loads(block.text)["note"] == path
                got = await session.call_tool("read", {"note": "Onboarding"})
                block = got.content[0]
                assert isinstance(block, TextContent)
                resolved = {ln["target"]: ln["resolved"] for ln in json.loads(block.text)["links"]}
                assert resolved == {"Maya": "people/Maya Okafor.md", "Ledger": LEDGER,
                                    "Bob": "people/Bob Ruiz.md"}

    anyio.run(main)
