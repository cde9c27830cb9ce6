"""A move killed midway while another rmh process keeps serving the vault.

The journalled move's intent was finished only by the next process to *open* the vault
(storage/intents.py). An `rmh serve` already running went on writing over the half-made move:
its acknowledged edit of a referrer changed that file's hash, so the recovery left the
referrer's `[[Target]]` dangling (a dangling link made by rmh, not by an editor). Now the
process taking the free write lock finishes the intents a dead process left (its holder is
gone: every journalled operation holds the lock throughout) before its own change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.crash_move import NEW, OLD, make_template, rmh
from bench.race import Served

pytestmark = pytest.mark.slow
REF = "r/Ref 001.md"


def _append(server: Served) -> dict[str, Any]:
    return server.call("vault.edit", {"note": REF, "kind": "append", "text": "acked\n"}, 1)


def _guarded(server: Served, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Read, then change with the hash read; on edit_conflict (the recovery's rewrite landed
    between the read and the change: the client's bytes were stale) read again, once."""
    for _ in range(2):
        read = server.call("vault.read", {"note": REF}, 1)["result"]
        if "content" in params:
            params = {**params, "content": read["text"] + "acked\n"}
        answer = server.call(method, {**params, "expected_hash": read["hash"]}, 2)
        if answer.get("error", {}).get("code") != -32013:
            break
    return answer


def _guarded_write(server: Served) -> dict[str, Any]:
    return _guarded(server, "vault.write", {"note": REF, "content": ""})


def _guarded_append(server: Served) -> dict[str, Any]:
    return _guarded(server, "vault.edit", {"note": REF, "kind": "append", "text": "acked\n"})


def _new_referrer(server: Served) -> dict[str, Any]:
    return server.call("vault.write", {"note": REF, "content": "acked\n[[Target Moved]]\n",
                                       "overwrite": True}, 1)


@pytest.mark.parametrize("change", [_append, _guarded_write, _guarded_append, _new_referrer],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_live_server_finishes_a_dead_moves_intent_before_its_own_write(
        tmp_path: Path, change: Any) -> None:
    vault = make_template(tmp_path / "v", 3)
    server = Served(vault)
    try:
        assert "result" in server.call("vault.read", {"note": REF})  # open, before the kill
        # killed right after the rename (test_crash_move.py: the 8th file operation)
        assert rmh(vault, "move", OLD, NEW, fault_after=8).returncode == -9
        assert (vault / NEW).exists() and not (vault / OLD).exists()
        answer = change(server)
        assert "result" in answer, answer
        links = server.call("vault.links", {"note": "r/Ref 000.md"}, 3)["result"]
    finally:
        server.close()
    assert {link["resolved"] for link in links} >= {NEW}
    assert "acked" in (vault / REF).read_text(encoding="utf-8").splitlines()
    done = rmh(vault, "doctor", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["vault"]
    assert report["dangling_links"] == [] and report["intents"]["pending"] == []
    assert not list((vault / ".rmh" / "intents").glob("*.json"))
