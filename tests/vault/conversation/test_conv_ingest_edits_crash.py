"""A re-ingest killed after each of its file operations loses no hand edit (vault/conversation/
ingest.py, generated.py). A session note and an entity note edited by hand; the grown
transcript ingested with `regenerate` (the edits to the trash, the notes rewritten) or without
(the edits kept), the process SIGKILLed by the store's fault injection at each file operation
in turn. After the next open (the journal finishes or drops its writes) every edited version
is the note or a copy in the trash, and an ingest run again ends as an uninterrupted one: the
record is never left so that the ingest takes its own bytes for a hand edit, or a hand edit
for its own."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forks import VAULT_PRELOAD, ForkServer
from vault import Vault, ingest_conversations, load_conversations

REPO = Path(__file__).resolve().parents[3]
EDITED = ("conversations/ab/ab s1.md", "conversations/ab/entities/alice.md")
CHILD = """
import sys
from pathlib import Path
from vault import Vault, ingest_conversations, load_conversations
with Vault.open(Path(sys.argv[1]), watch=False, fault_after=int(sys.argv[2])) as v:
    ingest_conversations(v, load_conversations(Path(sys.argv[3]).read_text(), "auto"),
                         use_nlp=False, regenerate=sys.argv[4] == "1")
"""
PRELOAD = "from vault import Vault, ingest_conversations, load_conversations\n" + VAULT_PRELOAD


def transcript(n_turns: int) -> str:
    turns = [{"speaker": ("Alice", "Bob")[i % 2], "text": f"Alice likes pottery, day {i}.",
              "role": ("user", "assistant")[i % 2]} for i in range(n_turns)]
    return json.dumps({"format": "rmh-conversation/1", "id": "ab", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": turns}]})


def notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


def trash(root: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted((root / ".rmh" / "trash").rglob("*.md"))]


def killed_ingests(tmp_path: Path, template: Path, conv: Path, regenerate: bool
                   ) -> Iterator[tuple[int, Path, Vault, bool]]:
    """For n = 1, 2, ...: a copy of `template` whose ingest of `conv` was SIGKILLed after its
    n-th file operation, reopened (the journal finishes or drops its writes), with whether it
    finished instead; stops after the first that finished, checking that many were killed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    killed = 0
    with ForkServer(PRELOAD, workdir=tmp_path / "forks", env=env, cwd=REPO) as server:
        for n in range(1, 400):
            work = tmp_path / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(template, work)
            done = server.run([str(work), str(n), str(conv), "1" if regenerate else "0"],
                              code=CHILD, env=env, cwd=REPO)
            assert done.returncode in (0, -9), done.stderr
            with Vault.open(work, watch=False) as v:
                yield n, work, v, done.returncode == 0
            if done.returncode == 0:
                break
            killed += 1
    assert killed > 10  # the sweep did kill the ingest at many points before it finished


@pytest.mark.slow
@pytest.mark.parametrize("regenerate", [True, False])
def test_a_reingest_killed_anywhere_loses_no_hand_edit(tmp_path: Path, regenerate: bool) -> None:
    template, conv = tmp_path / "template", tmp_path / "conv.json"
    with Vault.init(template) as v:
        ingest_conversations(v, load_conversations(transcript(4)), use_nlp=False)
    user = {}
    for rel in EDITED:
        file = template / rel
        file.write_text(file.read_text("utf-8") + f"mine: {rel}\n", "utf-8")
        user[rel] = file.read_bytes()
    conv.write_text(transcript(6), encoding="utf-8")
    reference = tmp_path / "reference"
    shutil.copytree(template, reference)
    with Vault.open(reference, watch=False) as v:
        ingest_conversations(v, load_conversations(transcript(6)), use_nlp=False,
                             regenerate=regenerate)
    expected = notes(reference)
    for n, work, v, _ in killed_ingests(tmp_path, template, conv, regenerate):
        now, copies = notes(work), trash(work)
        for rel, data in user.items():
            assert now[rel] == data or data in copies, (n, rel)
        again = ingest_conversations(v, load_conversations(transcript(6)),
                                     use_nlp=False, regenerate=regenerate)
        assert notes(work) == expected, (n, again)
        if not regenerate:
            assert set(again.kept) == set(EDITED), n
