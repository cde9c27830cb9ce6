"""Corrections and provenance through the real CLI and `rmh serve` (issue 32 items 1 and 4):
a rejected fact stays rejected across re-ingest on every surface, search shows it only as
history, `context` flags the turns that stated it, `why` names sources and uses; two processes
correcting the same fact at once never tear the note."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.forks import run_cli, run_cli_together

ROOT = Path(__file__).resolve().parents[2]
PARIS = "conversations/ab/facts/sarah lives in paris.md"
CONV = {"format": "rmh-conversation/1", "id": "ab", "sessions": [
    {"id": "s1", "date": "2024-05-01T10:00", "turns": [
        {"speaker": "Sarah", "text": "I live in Paris.", "role": "user"},
        {"speaker": "Bot", "text": "Nice city.", "role": "assistant"}]},
    {"id": "s2", "date": "2024-06-01T10:00", "turns": [
        {"speaker": "Sarah", "text": "I live in Paris, near the river.", "role": "user"}]}]}


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "HOME": str(tmp),
                "RMH_EMBED_CACHE": str(tmp / "shared.sqlite")})
    return env


def rmh(tmp: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_cli(["--vault", str(tmp / "v"), *args], env=_env(tmp), cwd=ROOT, stdin=stdin)


def _setup(tmp: Path) -> Path:
    conv = tmp / "c.json"
    conv.write_text(json.dumps(CONV), encoding="utf-8")
    assert rmh(tmp, "init", "--no-dense").returncode == 0
    assert rmh(tmp, "ingest", str(conv)).returncode == 0
    return conv


def _notes(doc: dict[str, Any]) -> list[str]:
    return [h["note"] for h in doc["hits"]]


def test_reject_through_the_cli_survives_reingest_and_shows_only_as_history(
        tmp_path: Path) -> None:
    conv = _setup(tmp_path)
    r = rmh(tmp_path, "fact", "reject", "sarah lives in paris", "--reason", "wrong", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["trust"]["state"] == "rejected"
    again = rmh(tmp_path, "ingest", str(conv), "--json")
    assert json.loads(again.stdout)["written"] == 0
    found = json.loads(rmh(tmp_path, "search", "sarah lives in paris", "--json",
                           "--no-dense").stdout)
    assert PARIS not in _notes(found)
    hist = json.loads(rmh(tmp_path, "search", "sarah lives in paris", "--json", "--no-dense",
                          "--history").stdout)
    assert _notes(hist)[-1] == PARIS
    assert hist["hits"][-1]["trust"]["state"] == "rejected"
    human = rmh(tmp_path, "search", "sarah lives in paris", "--no-dense", "--history").stdout
    assert "[history: rejected by user at" in human
    ctx = json.loads(rmh(tmp_path, "context", "where does sarah live in paris", "--json",
                         "--no-dense").stdout)
    assert "was rejected by user" in ctx["text"]
    nothing = rmh(tmp_path, "context", "melting point of tungsten", "--no-dense")
    assert nothing.stdout.strip() == "Nothing in memory is relevant to this question."
    why = json.loads(rmh(tmp_path, "why", PARIS, "--json").stdout)
    assert why["trust"]["state"] == "rejected" and why["trust"]["history"][0]["state"] == (
        "provisional")
    assert [s["turn"] for s in why["sources"]] == ["s1:1", "s2:1"]
    assert why["used_for"]["by_kind"].get("search", 0) >= 1  # the searches above showed it
    bad = rmh(tmp_path, "fact", "reject", "conversations/ab/s1/ab s1-1", "--json")
    assert bad.returncode == 1 and json.loads(bad.stdout)["error"]["kind"] == "edit_refused"


def test_correct_and_why_over_rmh_serve_and_reingest_over_the_wire(tmp_path: Path) -> None:
    assert rmh(tmp_path, "init", "--no-dense").returncode == 0
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "vault.ingest", "params": {"conversation": CONV}},
        {"jsonrpc": "2.0", "id": 2, "method": "vault.correct",
         "params": {"note": PARIS, "action": "supersede", "value": "Lyon", "by": "agent:t"}},
        {"jsonrpc": "2.0", "id": 3, "method": "vault.ingest", "params": {"conversation": CONV}},
        {"jsonrpc": "2.0", "id": 4, "method": "vault.search",
         "params": {"query": "where does sarah live", "k": 20}},
        {"jsonrpc": "2.0", "id": 5, "method": "vault.why", "params": {"note": PARIS}},
        {"jsonrpc": "2.0", "id": 6, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "correct", "arguments": {"note": PARIS, "action": "maybe"}}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
            "name": "correct", "arguments": {
                "note": "conversations/ab/facts/sarah lives in lyon", "action": "reject"}}},
        {"jsonrpc": "2.0", "id": 9, "method": "vault.search",
         "params": {"query": "sarah lives in lyon", "k": 20, "history": True}},
    ]
    out = rmh(tmp_path, "serve", stdin="".join(json.dumps(f) + "\n" for f in frames))
    replies = {r["id"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert replies[2]["result"]["current"] == "conversations/ab/facts/sarah lives in lyon.md"
    assert replies[3]["result"]["written"] == 0
    notes = _notes(replies[4]["result"])
    assert PARIS not in notes and "conversations/ab/facts/sarah lives in lyon.md" in notes
    why = replies[5]["result"]
    assert why["trust"]["superseded_by"] == [
        "[[conversations/ab/facts/sarah lives in lyon|lyon]]"]
    assert why["trust"]["by"] == "agent:t" and why["used_for"]["events_total"] >= 1
    assert "error" in replies[7] or replies[7]["result"].get("isError")
    assert not replies[8]["result"].get("isError"), replies[8]
    last = replies[9]["result"]["hits"]
    states = [h["trust"]["current"] for h in last if "trust" in h]
    assert states == sorted(states, reverse=True) and False in states  # current first
    # the folder is the truth: a fresh process sees the same after rebuilding the index
    for f in (tmp_path / "v" / ".rmh").glob("index.sqlite*"):
        f.unlink()
    found = json.loads(rmh(tmp_path, "search", "sarah lives", "--json", "--no-dense").stdout)
    assert not {PARIS, "conversations/ab/facts/sarah lives in lyon.md"} & set(_notes(found))


def test_two_processes_correcting_one_fact_at_once_never_tear_it(tmp_path: Path) -> None:
    _setup(tmp_path)
    successes = 0
    for _ in range(10):
        # two real processes, forked at the same moment from one that imported the CLI
        procs = run_cli_together(
            [["--vault", str(tmp_path / "v"), "fact", action, PARIS, "--by", who, "--json"]
             for action, who in (("reject", "a"), ("confirm", "b"))],
            env=_env(tmp_path), cwd=ROOT)
        for p in procs:
            if p.returncode == 0:
                successes += 1
            else:
                assert json.loads(p.stdout)["error"]["kind"] == "edit_conflict", p.stdout
    shown = json.loads(rmh(tmp_path, "why", PARIS, "--json").stdout)["trust"]
    assert shown["state"] in ("rejected", "confirmed")
    assert len(shown["history"]) == successes  # every acknowledged correction is on record
    assert successes >= 10


def test_the_sandboxed_repl_corrects_and_asks_why(tmp_path: Path) -> None:
    _setup(tmp_path)
    code = (f"r = correct({PARIS!r}, 'reject', reason='from the repl')\n"
            f"w = why({PARIS!r})\n"
            "print(r['trust']['state'], r['trust']['by'], w['trust']['reason'], "
            "len(w['sources']))")
    out = rmh(tmp_path, "exec", "-c", code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "rejected agent from the repl 2"
    assert json.loads(rmh(tmp_path, "why", PARIS, "--json").stdout)["trust"]["state"] == (
        "rejected")


def test_a_superseded_fact_is_not_shown_as_confirmed_by_the_superseder(tmp_path: Path) -> None:
    """`fact confirm --by me` then `fact supersede` (default --by user) printed the old fact
    as "confirmed by user ... (not current)": the superseder shown as its confirmer."""
    _setup(tmp_path)
    assert rmh(tmp_path, "fact", "confirm", PARIS, "--by", "me",
               "--at", "2024-07-01T00:00:00Z").returncode == 0
    out = rmh(tmp_path, "fact", "supersede", PARIS, "--value", "Lyon",
              "--at", "2024-08-01T00:00:00Z")
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert "confirmed by user" not in line
    assert line.startswith(f"{PARIS}: superseded by user at 2024-08-01T00:00:00Z (not current")
    why = rmh(tmp_path, "why", PARIS).stdout
    assert ("trust: superseded by user at 2024-08-01T00:00:00Z (not current; was confirmed "
            "by me at 2024-07-01T00:00:00Z)") in why
