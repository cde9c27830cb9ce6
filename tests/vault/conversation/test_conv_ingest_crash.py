"""An ingest killed after each of its file operations (issue 27 item 2): a conversation's
notes are one journalled operation (Vault.journalled), so after the next open the vault holds
none of them or all of them, byte for byte as an uninterrupted ingest writes them.

Each ingest is a real process SIGKILLed by the store's fault injection: a child forked by a
server that imported the vault and loaded the parse model once (tests/forks.py), so a kill
point costs the ingest, not an interpreter start and a model load."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.forks import VAULT_PRELOAD, ForkServer
from vault import Vault

REPO = Path(__file__).resolve().parents[3]
CONVERSATION = {"format": "rmh-conversation/1", "id": "ab", "sessions": [
    {"id": "s1", "date": "2023-05-09T09:00", "turns": [
        {"speaker": "Bob", "text": "Last month I sold my bike to Alice."},
        {"speaker": "Alice", "text": "I ride it to Lisbon every Friday."}]}]}
CHILD = """
import sys
from pathlib import Path
from vault import Vault, ingest_conversations, load_conversations
with Vault.open(Path(sys.argv[1]), watch=False, fault_after=int(sys.argv[2])) as v:
    ingest_conversations(v, load_conversations(Path(sys.argv[3]).read_text(), "auto"))
"""


def notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


# What every ingest imports, and the parse model (`nlp_status(load=True)` loads it once).
PRELOAD = "from vault import Vault, ingest_conversations, load_conversations, nlp_status\n" \
          "nlp_status(load=True)\n" + VAULT_PRELOAD


def ingest(server: ForkServer, root: Path, conv: Path, n: int) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = server.run([str(root), str(n), str(conv)], code=CHILD, env=env, cwd=REPO)
    assert done.returncode in (0, -9), done.stderr
    return done.returncode


def test_an_ingest_killed_at_every_file_operation_is_all_or_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with ForkServer(PRELOAD, workdir=tmp_path / "forks", env=env, cwd=REPO) as server:
        sweep(tmp_path, server)


def sweep(tmp_path: Path, server: ForkServer) -> None:
    template = tmp_path / "template"
    with Vault.init(template) as v:
        v.write("Alice.md", "Alice rides bikes.\n")
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    reference = tmp_path / "reference"
    shutil.copytree(template, reference)
    assert ingest(server, reference, conv, 10**9) == 0
    before, after = notes(template), notes(reference)
    dangling = {"old": dangling_links(template), "new": dangling_links(reference)}
    assert len(after) - len(before) >= 4  # several notes: the journal has work to do
    states = []
    for n in range(1, 500):
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)
        code = ingest(server, work, conv, n)
        assert code in (0, -9), code
        with Vault.open(work, watch=False) as v:
            report = v.doctor()
        now = notes(work)
        assert now in (before, after), (n, sorted(set(now) ^ set(after)))
        state = "old" if now == before else "new"
        assert report["intents"]["pending"] == []
        assert report["dangling_links"] == dangling[state]  # as the whole state leaves them
        states.append(state)
        if code == 0:
            break
    assert states[-1] == "new" and "old" in states and len(states) > 10


def dangling_links(root: Path) -> list[object]:
    with Vault.open(root, watch=False) as v:
        return list(v.doctor()["dangling_links"])
