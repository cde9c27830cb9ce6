"""A stop inside a conversation's writes takes back that conversation's notes written so far
(vault/conversation/take_back.py, STORE6 session 32): each conversation is then on disk whole
or as it was, no link dangles, and ingesting again leaves the vault byte for byte as one
uninterrupted ingest. Before, the turn notes written stayed, linking session, entity and later
turn notes not yet written.

Generated: two conversations per seed, the first already ingested with fewer turns (a
transcript that grew: the ingest replaces its session and entity notes and its last turn), the
second new (the ingest creates its notes); the stop turns true at checks spread over both."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from vault import IngestStopped, Vault, cancellable, ingest_conversations, load_transcript
from vault.conversation.formats import Conversation

NAMES = ("Alice", "Bob", "Carol", "Dmitri")
WORDS = ("plan", "garden", "Lisbon", "bike", "budget", "review", "trip", "Friday", "oven")


def conversation(cid: str, lines: list[str]) -> Conversation:
    (loaded,) = load_transcript("\n".join(lines), "text").conversations
    return Conversation(cid, loaded.sessions)


def transcripts(seed: int) -> tuple[list[Conversation], list[Conversation]]:
    """(the conversations as first ingested, as ingested with the stop)."""
    rng = random.Random(seed)
    lines = [[f"{rng.choice(NAMES)}: note {c}.{i} about "
              + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))
              for i in range(rng.randint(12, 24))] for c in range(2)]
    grown = [conversation(f"chat-{seed}-{c}", ls) for c, ls in enumerate(lines)]
    return [conversation(f"chat-{seed}-0", lines[0][:rng.randint(3, 9)])], grown


def notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.relative_to(root).parts}


def state(root: Path) -> dict[str, bytes]:
    gen = root / ".rmh" / "generated"
    return {**notes(root), **{p.relative_to(root).as_posix(): p.read_bytes()
                              for p in sorted(gen.rglob("*")) if p.is_file()}}


def after(n: int | None, calls: list[None]) -> Callable[[], bool]:
    """A stop test true from its `n`-th call on (None: never), counting its calls."""
    def stop() -> bool:
        calls.append(None)
        return n is not None and len(calls) >= n
    return stop


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_an_ingest_stopped_while_writing_a_conversation_leaves_it_whole_or_as_it_was(
        tmp_path: Path, seed: int) -> None:
    first, grown = transcripts(seed)
    template = tmp_path / "template"
    with Vault.init(template) as v:
        v.write("Alice.md", "Alice rides bikes to Lisbon. [[chat-x]]\n")
        ingest_conversations(v, first, use_nlp=False)
        dangling_before = v.doctor()["dangling_links"]
    whole = tmp_path / "whole"
    shutil.copytree(template, whole)
    checks: list[None] = []
    with Vault.open(whole, watch=False) as v, cancellable(after(None, checks)):
        ingest_conversations(v, grown, use_nlp=False)
    old, new, expected = notes(template), notes(whole), state(whole)
    ids = [c.conversation_id for c in grown]
    per_conv = {cid: {p for p in {*old, *new} if f"/{cid}/" in f"/{p}"} for cid in ids}
    assert all(per_conv.values()) and set(old) != set(new)
    outcomes = set()
    for n in sorted({*(len(checks) * k // 9 for k in range(1, 9)), len(checks) - 1}):
        work = tmp_path / f"work-{n}"
        shutil.copytree(template, work)
        with Vault.open(work, watch=False) as v:
            with pytest.raises(IngestStopped) as stopped, cancellable(after(n, [])):
                ingest_conversations(v, grown, use_nlp=False)
            assert v.doctor()["dangling_links"] == dangling_before, n
        now = notes(work)
        for cid, paths in per_conv.items():
            mine = {p: now[p] for p in paths if p in now}
            assert mine in ({p: old[p] for p in paths if p in old},
                            {p: new[p] for p in paths if p in new}), (n, cid)
            outcomes.add((cid, mine == {p: new[p] for p in paths if p in new}))
        changed = {p for p in now if old.get(p) != now[p]} | (set(old) - set(now))
        assert set(stopped.value.written) == changed, n
        with Vault.open(work, watch=False) as v:
            ingest_conversations(v, grown, use_nlp=False)
        assert state(work) == expected, n
        shutil.rmtree(work)
    assert (ids[0], True) in outcomes and (ids[1], False) in outcomes, outcomes
