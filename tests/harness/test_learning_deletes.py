"""Deletes reach learning from every surface (issue 27 item 6, issue 28 item 1): the vault is
built whole with its ledger, so a delete through `rmh serve`, the CLI, or a file removed on
disk and noticed by a sync is a `delete` event, and the note leaves the learned state (its Q,
warmth, pairs); a removal no ledger heard (a process opened without learning) is forgotten
when the server recovers. Real processes and the real learned.sqlite throughout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_cli_notes import rmh
from tests.harness.test_server_e2e import Server

pytestmark = pytest.mark.slow

NOTES = {
    "Alpha": "Alpha kiwi orchard notes link to [[Beta]] and [[Gamma]].\n",
    "Beta": "Beta kiwi harvest notes link to [[Alpha]].\n",
    "Gamma": "Gamma kiwi storage notes link to [[Beta]].\n",
    "Delta": "Delta is about something else entirely.\n",
}


def make(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    root.mkdir()
    for name, text in NOTES.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    return root


def learning(root: Path) -> dict[str, Any]:
    r = rmh("--vault", str(root), "learning", "--json")
    assert r.returncode == 0, (r.stdout, r.stderr)  # exit 1 when rows name missing notes
    doc: dict[str, Any] = json.loads(r.stdout)
    assert doc["missing_rows"] == 0 and doc["missing_notes"] == []
    return doc


def note_id(root: Path, name: str) -> int:
    r = rmh("--vault", str(root), "read", name, "--json")
    return int(json.loads(r.stdout)["id"])


def learned_ids(root: Path) -> set[int]:
    """Every note id the learned state names (its notes and its co-occurrence pairs)."""
    code = ("import json,sys,time; from vault import Ledger; "
            "l = Ledger.open(__import__('pathlib').Path(sys.argv[1]), clock=time.time); "
            "s = l.state; print(json.dumps(sorted(set(s.notes) | "
            "{n for p in s.pairs for n in p}))); l.close()")
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code, str(root / ".rmh" / "learned.sqlite")],
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def use(server: Server, rid: int) -> int:
    """A session that searches, reads and cites, so notes get Q, warmth and pairs."""
    server.call("session.start", {"session": f"s{rid}"}, rid=rid)
    server.call("vault.search", {"query": "kiwi notes"}, rid=rid + 1)
    server.call("vault.read", {"note": "Alpha"}, rid=rid + 2)
    server.call("vault.read", {"note": "Beta"}, rid=rid + 3)
    server.call("vault.write", {"note": f"Cite{rid}", "content": "[[Alpha]] [[Beta]]\n"},
                rid=rid + 4)
    return rid + 5


def test_a_delete_through_serve_leaves_learning(tmp_path: Path) -> None:
    """JSON-RPC's vault.delete and MCP's delete tool (the REPL has no delete function)."""
    root = make(tmp_path)
    alpha, beta, gamma = (note_id(root, n) for n in ("Alpha", "Beta", "Gamma"))
    server = Server(root, tmp_path)
    try:
        rid = use(server, 10)
        server.call("vault.read", {"note": "Gamma"}, rid=rid)
        server.call("session.end", rid=rid + 1)
        assert {alpha, beta, gamma} <= learned_ids(root)
        out = server.call("vault.delete", {"note": "Alpha"}, rid=rid + 2)
        assert "result" in out, out
        server.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "t", "version": "1"}}, rid=rid + 3)
        out = server.call("tools/call", {"name": "delete", "arguments": {"note": "Beta"}},
                          rid=rid + 4)
        assert not out["result"].get("isError"), out
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    learned = learned_ids(root)
    assert not {alpha, beta} & learned and gamma in learned
    doc = learning(root)
    assert doc["events"].get("delete") == 2 and "prune" not in doc["events"]
    r = rmh("--vault", str(root), "learning", "Alpha", "--no-dense")
    assert r.returncode == 1 and "not found" in r.stderr


def test_a_delete_through_the_cli_and_on_disk_leave_learning(tmp_path: Path) -> None:
    root = make(tmp_path)
    ids = {n: note_id(root, n) for n in NOTES}
    server = Server(root, tmp_path)
    try:
        use(server, 10)
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    assert {ids["Alpha"], ids["Beta"]} <= learned_ids(root)
    assert rmh("--vault", str(root), "delete", "Beta").returncode == 0
    assert ids["Beta"] not in learned_ids(root)
    assert learning(root)["events"].get("delete") == 1
    (root / "Alpha.md").unlink()  # as Obsidian or `rm` would: the next sync notices
    assert rmh("--vault", str(root), "search", "kiwi", "--no-dense").returncode == 0
    assert ids["Alpha"] not in learned_ids(root)
    assert learning(root)["events"].get("delete") == 2


def test_a_removal_no_ledger_heard_is_forgotten_at_recovery(tmp_path: Path) -> None:
    root = make(tmp_path)
    gamma = note_id(root, "Gamma")
    server = Server(root, tmp_path)
    try:
        rid = use(server, 10)
        server.call("vault.read", {"note": "Gamma"}, rid=rid)
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    assert gamma in learned_ids(root)
    (root / "Gamma.md").unlink()
    # `rmh init` opens the vault without learning: its sync removes Gamma from the index,
    # and no ledger hears of it.
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    assert gamma in learned_ids(root)
    server = Server(root, tmp_path)  # recovery at start forgets it
    try:
        assert "result" in server.call("status", rid=1)
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    assert gamma not in learned_ids(root)
    assert learning(root)["events"].get("prune") == 1
