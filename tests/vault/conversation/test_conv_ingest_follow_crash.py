"""A re-ingest that follows moved notes, killed after each of its file operations, leaves no
duplicate and loses nothing (vault/conversation/follow.py, ingest.py). The vault before: a
session note renamed on disk (unchanged), an entity note moved with `Vault.move` (its
referrers' links rewritten) and then edited by hand, another entity note deleted, a fact note
edited by hand. The grown transcript ingested with `regenerate` or without, the process
SIGKILLed by the store's fault injection at each file operation in turn. After the next open
(the journal finishes or drops its writes) no generated path of a moved or deleted note holds
a note again, every version the user wrote is the note or a copy in the trash, and an ingest
run again ends as an uninterrupted one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.vault.conversation.test_conv_ingest_edits import conv_json
from tests.vault.conversation.test_conv_ingest_edits_crash import killed_ingests, notes, trash
from vault import Vault, ingest_conversations, load_conversations

SESSION, ALICE = "conversations/ab/ab s1.md", "conversations/ab/entities/alice.md"
BOB, FACT = "conversations/ab/entities/bob.md", "conversations/ab/facts/alice likes lisbon.md"


def template(root: Path) -> dict[str, bytes]:
    """The vault as the user left it; returns the versions the user wrote, by path."""
    with Vault.init(root) as v:
        ingest_conversations(v, load_conversations(conv_json(10)), use_nlp=False)
        (root / "mine").mkdir()
        os.rename(root / SESSION, root / "mine/session.md")
        v.move(ALICE, "mine/alice.md")
        (root / BOB).unlink()
    user = {}
    for rel in ("mine/alice.md", FACT):
        file = root / rel
        file.write_text(file.read_text("utf-8") + f"mine: {rel}\n", "utf-8")
        user[rel] = file.read_bytes()
    return user


@pytest.mark.slow
@pytest.mark.parametrize("regenerate", [True, False])
def test_a_following_reingest_killed_anywhere_leaves_no_duplicate(tmp_path: Path,
                                                                   regenerate: bool) -> None:
    base, conv = tmp_path / "template", tmp_path / "conv.json"
    user = template(base)
    conv.write_text(conv_json(16), encoding="utf-8")
    reference = tmp_path / "reference"
    shutil.copytree(base, reference)
    with Vault.open(reference, watch=False) as v:
        first = ingest_conversations(v, load_conversations(conv_json(16)), use_nlp=False,
                                     regenerate=regenerate)
    expected = notes(reference)
    assert SESSION not in expected and ALICE not in expected and (BOB in expected) == regenerate
    assert "mine/session.md" in first.written
    for n, work, v, _ in killed_ingests(tmp_path, base, conv, regenerate):
        now, copies = notes(work), trash(work)
        assert SESSION not in now and ALICE not in now, n  # no duplicate
        assert BOB not in now or regenerate, n
        for rel, data in user.items():
            assert now[rel] == data or data in copies, (n, rel)
        again = ingest_conversations(v, load_conversations(conv_json(16)),
                                     use_nlp=False, regenerate=regenerate)
        assert notes(work) == expected, (n, again)
        if not regenerate:
            assert set(again.kept) == set(user) and again.left_deleted == (BOB,), n
