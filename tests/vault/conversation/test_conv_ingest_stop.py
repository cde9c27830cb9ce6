"""An ingest under a stop test (`vault.cancellable`) stops at its next checkpoint, keeping the
conversations it wrote whole (and taking back the notes of the one it was writing: STORE6,
session 32, tests/vault/conversation/test_take_back.py; from half of its writes on, writing
the rest instead: STORE8, session 33), and ingesting the same conversations
again leaves the vault byte for byte as one uninterrupted ingest (INGSTOP, session 31: before,
an ingest never checked a stop).

The stop turns true at the n-th check, for n across the parse and the write phases of two
generated conversations; the first check of all stops with nothing written."""

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


def conversations(seed: int) -> list[Conversation]:
    rng = random.Random(seed)
    out: list[Conversation] = []
    for c in range(2):
        text = "\n".join(f"{rng.choice(NAMES)}: note {c}.{i} about "
                         + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))
                         for i in range(rng.randint(15, 30)))
        loaded = load_transcript(text, "text").conversations
        out += [Conversation(f"chat-{seed}-{c}", conv.sessions) for conv in loaded]
    return out


def state(root: Path) -> dict[str, bytes]:
    files = [p for p in root.rglob("*") if p.is_file() and (
        (p.suffix == ".md" and ".rmh" not in p.relative_to(root).parts)
        or p.relative_to(root).parts[:2] == (".rmh", "generated"))]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(files)}


def notes(root: Path) -> set[str]:
    return {k for k in state(root) if not k.startswith(".rmh/")}


def after(n: int) -> Callable[[], bool]:
    """A stop test true from its `n`-th call on."""
    calls = [0]

    def stop() -> bool:
        calls[0] += 1
        return calls[0] >= n

    return stop


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_ingest_stopped_at_any_check_keeps_what_landed_and_completes_on_reingest(
        tmp_path: Path, seed: int) -> None:
    convs = conversations(seed)
    template = tmp_path / "template"
    with Vault.init(template) as v:
        v.write("Alice.md", "Alice rides bikes to Lisbon.\n")
    whole = tmp_path / "whole"
    shutil.copytree(template, whole)
    checks: list[None] = []

    def count() -> bool:  # counts the checks, never stops
        checks.append(None)
        return False

    with Vault.open(whole, watch=False) as v, cancellable(count):
        total = len(ingest_conversations(v, convs, use_nlp=False).written)
    expected, before = state(whole), notes(template)
    first = {p for p in notes(whole) - before if f"/{convs[0].conversation_id}/" in p}
    stops = []
    for n in sorted({1, *(len(checks) * k // 8 for k in range(1, 8)), len(checks)}):
        work = tmp_path / f"work-{n}"
        shutil.copytree(template, work)
        with Vault.open(work, watch=False) as v:
            with pytest.raises(IngestStopped) as stopped, cancellable(after(n)):
                ingest_conversations(v, convs, use_nlp=False)
            landed = notes(work) - before
            assert set(stopped.value.written) == landed, n  # it names exactly what landed
            assert stopped.value.data()["written"] == len(landed) <= total
            # each conversation whole or absent: taken back, or finished from half on
            assert len(landed) == (0, len(first), total)[stopped.value.done], n
            stops.append((n, len(landed), stopped.value.done))
            ingest_conversations(v, convs, use_nlp=False)
        assert state(work) == expected, n
        shutil.rmtree(work)
    assert stops[0][:2] == (1, 0)  # stopped at the first check: nothing written
    # at the last, before the last note: the second conversation finished, not taken back
    # (taking back its notes cost more writes than the one left, and its re-ingest all of them)
    assert stops[-1][1:] == (total, 2), (stops, first)
    assert {0, 1} <= {d for _, _, d in stops}, stops  # in either conversation
