"""A long `vault.ingest` stops between notes at SIGTERM or a cancel, through a real `rmh serve`.

Before INGSTOP (session 31) an ingest was a shielded change that ran to its end whatever
happened to its request: SIGTERM 2 s into a 3,000-line ingest exited 95 s later (PROTO5), and
a supervisor's SIGKILL then left it half done. Now each turn parsed and note written checks
the request's stop test: the conversations written stay, the one being written is taken back
(STORE6, session 32: its turn notes linked notes not yet written), the answer (-32091 at a
stop, -32800 at a cancel) names what stayed, and ingesting the same export again leaves the
vault byte for byte as one uninterrupted ingest does. The signal or cancel is sent once the
first notes have landed (polled on disk); what landed is counted against the whole, never
timed.
"""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from .test_server_e2e import Server

pytestmark = pytest.mark.slow

LINES = 500  # turn notes: far more than land while a signal is delivered
NAMES = ("Alice", "Bob", "Carol", "Dmitri", "Esther")
WORDS = ("plan", "garden", "Lisbon", "bike", "budget", "review", "trip", "Friday", "oven")


def export(seed: int) -> str:
    """A plain "Name: text" chat of LINES lines, drawn from `seed`."""
    rng = random.Random(seed)
    return "\n".join(f"{rng.choice(NAMES)}: message {i} about the "
                     + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
                     for i in range(LINES))


def vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text('[extract]\nentities = "rules"\n', encoding="utf-8")
    (root / "Lunch.md").write_text("Lunch on Tuesday with Bob at the noodle bar.\n", "utf-8")
    return root


def state(root: Path) -> dict[str, bytes]:
    """The notes and the ingest's record of what it generated (`.rmh/generated/`)."""
    files = [p for p in root.rglob("*") if p.is_file() and (
        (p.suffix == ".md" and ".rmh" not in p.relative_to(root).parts)
        or p.relative_to(root).parts[:2] == (".rmh", "generated"))]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(files)}


def notes(root: Path) -> int:
    return sum(1 for p in root.rglob("*.md") if ".rmh" not in p.relative_to(root).parts)


def ingest(server: Server, text: str, rid: str) -> dict[str, Any]:
    answer = server.call("vault.ingest", {"conversation": text, "format": "text"}, rid=rid)
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def answer_of(server: Server, rid: str) -> dict[str, Any]:
    while True:
        msg: dict[str, Any] = server.recv()
        if msg.get("id") == rid:
            return msg


def stopped(tmp: Path, text: str, how: str) -> tuple[Path, dict[str, Any]]:
    """A vault whose ingest of `text` was stopped (`how`: "sigterm" or "cancel") once its first
    notes landed, then ingested again in full; and the stopped answer's error."""
    root = vault(tmp / "stopped")
    before = notes(root)
    server = Server(root, tmp)
    try:
        assert server.call("ping")["result"] == {}
        server.send("vault.ingest", {"conversation": text, "format": "text"}, "ing")
        while notes(root) < before + 5:  # poll: the write phase has begun
            assert server.proc.poll() is None
            time.sleep(0.02)
        if how == "sigterm":
            server.proc.send_signal(signal.SIGTERM)
        else:
            server.send_raw(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest",
                                        "params": {"id": "ing"}}).encode() + b"\n")
        error = answer_of(server, "ing")["error"]
        assert error["code"] == (-32091 if how == "sigterm" else -32800), error
        assert error["data"]["stopped"] is True, error
        assert notes(root) == before + error["data"]["written"]  # what it says landed did
        if how == "cancel":  # the server goes on: the same export again completes it
            assert ingest(server, text, "again")["written"] > 0
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    if how == "sigterm":  # a new server completes it
        again = Server(root, tmp)
        try:
            assert ingest(again, text, "again")["written"] > 0
            assert again.finish() == 0
        finally:
            if again.proc.poll() is None:
                again.proc.kill()
                again.proc.wait()
    return root, error


@pytest.mark.parametrize(("seed", "how"), [(1, "sigterm"), (2, "cancel"), (3, "sigterm"),
                                           (4, "cancel")])
def test_a_stopped_ingest_keeps_what_landed_and_reingest_completes_it(
        tmp_path: Path, seed: int, how: str) -> None:
    text = export(seed)
    whole = vault(tmp_path / "whole")
    server = Server(whole, tmp_path)
    try:
        total = ingest(server, text, "whole")["written"]
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    root, error = stopped(tmp_path, text, how)
    # it stopped between notes of its one conversation, which it took back (take_back.py)
    assert error["data"]["written"] == 0 < total, (error, total)
    assert error["data"]["conversations_done"] == 0
    assert state(root) == state(whole)
