"""An ingest killed after its notes' writes were journalled, finished by the next open, then a
note of it deleted by the user: ingesting again leaves that note deleted, as after an ingest
that was not killed (vault/conversation/generated.py `Record.journalled`, STORE6 session 32).

Before, the record kept the notes "pending" (first write under way) for good, since the next
ingest of an unchanged conversation reads no record; a pending note absent is taken as never
written, so the re-ingest wrote the deleted note back. Generated: per seed, two conversations
(tests/vault/conversation/test_take_back.py's), killed (the store's seam, a forked child) at
file operations spread over the ingest, the note deleted drawn from those the kill left."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from tests.forks import ForkServer
from tests.vault.conversation.test_take_back import notes, transcripts
from vault import Vault, ingest_conversations

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
PRELOAD = "from vault import Vault, ingest_conversations\n" \
          "from tests.vault.conversation.test_take_back import transcripts"
CHILD = """
import sys
from pathlib import Path
from tests.vault.conversation.test_take_back import transcripts
from vault import Vault, ingest_conversations
root, seed, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
with Vault.open(root, watch=False, fault_after=n or None) as v:
    before = v.store.ops
    ingest_conversations(v, transcripts(seed)[1], use_nlp=False)
    print(before, v.store.ops)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_a_note_of_a_killed_ingest_deleted_after_its_recovery_stays_deleted(
        tmp_path: Path, seed: int) -> None:
    grown = transcripts(seed)[1]
    template = tmp_path / "template"
    with Vault.init(template) as v:
        v.write("Alice.md", "Alice rides bikes to Lisbon.\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rng = random.Random(seed)
    with ForkServer(PRELOAD, workdir=tmp_path / "forks", env=env, cwd=REPO) as server:
        def run(root: Path, n: int) -> tuple[int, str]:
            done = server.run([str(root), str(seed), str(n)], code=CHILD, env=env, cwd=REPO)
            assert done.returncode in (0, -9), done.stderr
            return done.returncode, done.stdout
        whole = tmp_path / "whole"
        shutil.copytree(template, whole)
        first, last = map(int, run(whole, 0)[1].split())
        kills = 0
        for n in sorted({first + (last - first) * k // 10 for k in range(2, 10)}):
            work = tmp_path / f"k{n}"
            shutil.copytree(template, work)
            if run(work, n)[0] != -9:
                continue
            with Vault.open(work, watch=False) as v:  # finishes the journalled writes
                assert v.doctor()["intents"]["pending"] == []
            landed = sorted(set(notes(work)) - set(notes(template)))
            if not landed:
                continue
            kills += 1
            victim = rng.choice(landed)
            with Vault.open(work, watch=False) as v:
                v.delete(victim)
                report = ingest_conversations(v, grown, use_nlp=False)
            assert not (work / victim).exists(), (n, victim)
            assert victim in report.left_deleted, (n, victim)
            shutil.rmtree(work)
        assert kills >= 4, kills
