"""A change to the vault answered "cancelled" never lands, through a real `rmh serve`.

A vault call, once queued on the vault thread, runs whatever happens to its request. Before
ADVRPC (session 26), an `edit` queued behind a large `write` and cancelled by `$/cancelRequest`
was answered -32800 "Request cancelled" and appended its line anyway, every time: a client
that retried (what a cancelled answer invites) appended it twice. Now the answer says what
happened: -32800 only when nothing changed, else the edit's result. Rounds alternate a cancel
sent with the edit (before it is queued) and one sent after it is queued.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

ROUNDS = 4
WORDS = " ".join(f"w{j}" for j in range(300_000))  # a write that keeps the vault thread busy


def test_a_cancelled_answer_means_the_vault_did_not_change(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    lunch = vault / "Lunch.md"
    server = Server(vault, tmp_path)
    try:
        assert server.call("ping")["result"] == {}
        outcomes = []
        for i in range(ROUNDS):
            before = lunch.read_bytes()
            server.send("vault.write", {"note": f"Big{i}", "content": WORDS}, f"w{i}")
            time.sleep(0.05)
            edit: dict[str, Any] = {"jsonrpc": "2.0", "id": f"e{i}", "method": "vault.edit",
                                    "params": {"note": "Lunch", "kind": "append",
                                               "text": f"line {i}"}}
            cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": f"e{i}"}}
            if i % 2:  # queued first, then cancelled
                server.send_raw(json.dumps(edit).encode() + b"\n")
                time.sleep(0.05)
                server.send_raw(json.dumps(cancel).encode() + b"\n")
            else:  # cancelled in the same batch, before it can be queued
                server.send_raw(json.dumps([edit, cancel]).encode() + b"\n")
            answers: dict[str, Any] = {}
            while len(answers) < 2:
                out = server.recv()
                for msg in out if isinstance(out, list) else [out]:
                    answers[msg["id"]] = msg
            assert "result" in answers[f"w{i}"], answers[f"w{i}"]
            got = answers[f"e{i}"]
            if "error" in got:
                assert got["error"]["code"] == -32800, got
                assert lunch.read_bytes() == before, f"round {i}: cancelled, yet it landed"
            else:
                assert got["result"]["note"] == "Lunch.md"
                assert lunch.read_bytes().count(f"line {i}".encode()) == 1
            outcomes.append("error" in got)
        assert outcomes[0] is True  # the batch's cancel came first: nothing ran
        # a read queues behind every vault job sent before it: it sees each one that landed
        text = server.call("vault.read", {"note": "Lunch"}, rid="last")["result"]["text"]
        assert [text.count(f"line {i}") for i in range(ROUNDS)] == \
            [0 if cancelled else 1 for cancelled in outcomes], text
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
