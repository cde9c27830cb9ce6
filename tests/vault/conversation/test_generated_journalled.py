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

from tests.forks import VAULT_PRELOAD, ForkServer
from tests.vault.conversation.test_take_back import notes, transcripts
from vault import Vault, ingest_conversations

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
PRELOAD = "from vault import Vault, ingest_conversations\n" \
          "from tests.vault.conversation.test_take_back import transcripts\n" + VAULT_PRELOAD
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


STOPPED = """
import sys
from pathlib import Path
from tests.vault.conversation.test_take_back import after, transcripts
from vault import IngestStopped, Vault, cancellable, ingest_conversations
root, seed, stop, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with Vault.open(root, watch=False, fault_after=n or None) as v:
    begun = v.store.ops
    try:
        with cancellable(after(stop, [])):
            ingest_conversations(v, transcripts(seed)[1], use_nlp=False)
    except IngestStopped:
        pass
    print(begun, v.store.ops)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_a_stopped_ingest_killed_while_taking_back_leaves_no_note_for_good(
        tmp_path: Path, seed: int) -> None:
    """A stop inside the first conversation's writes (a transcript that grew), the process
    killed after each of the last file operations (the take-back's, the journal's end): after
    the next open each conversation is whole or as it was, and one ingest then gives the notes
    of an uninterrupted ingest. Before the record was put back first, a kill after the notes
    were taken back left created notes recorded as written, so the ingest took them for
    notes the user deleted and left them out."""
    first, grown = transcripts(seed)
    template = tmp_path / "template"
    with Vault.init(template) as v:
        ingest_conversations(v, first, use_nlp=False)
    whole = tmp_path / "whole"
    shutil.copytree(template, whole)
    with Vault.open(whole, watch=False) as v:
        ingest_conversations(v, grown, use_nlp=False)
    old, new = notes(template), notes(whole)
    cid = grown[0].conversation_id
    mine = {p for p in {*old, *new} if f"/{cid}/" in p}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # a check inside the first conversation's writes: after its own and one per turn parsed
    stop = 1 + len(grown[0].turns()) + 3 + seed
    with ForkServer(PRELOAD, workdir=tmp_path / "forks", env=env, cwd=REPO) as server:
        def run(root: Path, n: int) -> tuple[int, str]:
            done = server.run([str(root), str(seed), str(stop), str(n)], code=STOPPED,
                              env=env, cwd=REPO)
            assert done.returncode in (0, -9), done.stderr
            return done.returncode, done.stdout
        probe = tmp_path / "probe"
        shutil.copytree(template, probe)
        begun, last = map(int, run(probe, 0)[1].split())
        assert last - begun > 8  # it wrote notes, then took them back
        assert {p: b for p, b in notes(probe).items() if p in mine} == \
            {p: old[p] for p in mine if p in old}  # stopped inside it: taken back
        for n in range(max(begun + 1, last - 7), last + 1):
            work = tmp_path / f"k{n}"
            shutil.copytree(template, work)
            assert run(work, n)[0] == -9, n
            with Vault.open(work, watch=False) as v:  # the recovery
                assert v.doctor()["intents"]["pending"] == []
            now = {p: b for p, b in notes(work).items() if p in mine}
            assert now in ({p: old[p] for p in mine if p in old},
                           {p: new[p] for p in mine if p in new}), n
            with Vault.open(work, watch=False) as v:
                report = ingest_conversations(v, grown, use_nlp=False)
            assert notes(work) == new, (n, report.left_deleted)
            shutil.rmtree(work)
