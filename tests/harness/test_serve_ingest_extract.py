"""`vault.ingest` takes `[extract] entities` as `rmh ingest` does (harness/extraction.py).

Before session 32 the JSON-RPC, MCP and REPL ingest always extracted as "auto" (spaCy when the
`nlp` extra is installed), whatever rmh.toml said: a vault set to "rules" got parse-built facts
from `rmh serve` and none from `rmh ingest`, and "llm" was never asked. Each test ingests the
same generated conversation through a real `rmh serve` and through the real CLI, each into its
own vault with the same rmh.toml, and compares the notes byte for byte. The LLM step runs
against a real HTTP server on loopback; a cancel while its answers are awaited stops the ingest
before any note (polled on the endpoint's count, never timed), keeps the answers that came, and
the next ingest asks only the rest.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.llm_entities import CACHE_FILE

from .llm_stub_endpoint import ChatEndpoint, Reply
from .test_llm_entities import child_env
from .test_server_e2e import REPO, Server

pytestmark = pytest.mark.slow

NAMES = ("Alice", "Bob", "Carla", "Dmitri", "Esther")
THINGS = ("bike", "guitar", "laptop", "kayak", "piano", "tent")
VERBS = ("sold", "bought", "repaired", "painted", "borrowed")


def turns(seed: int, n: int) -> list[tuple[str, str]]:
    """`n` turns drawn from `seed`, each a sentence spaCy reads as subject-verb-object."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        who, other = rng.sample(NAMES, 2)
        out.append((who, f"{other} {rng.choice(VERBS)} the old {rng.choice(THINGS)} on day {i}."))
    return out


def conversation(seed: int, n: int) -> dict[str, Any]:
    return {"format": "rmh-conversation/1", "id": f"c{seed}", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00",
         "turns": [{"speaker": s, "text": t} for s, t in turns(seed, n)]}]}


def vault(root: Path, toml: str) -> Path:
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text(toml, encoding="utf-8")
    return root


def llm_toml(url: str, in_flight: int = 5) -> str:
    return (f'[llm]\nbase_url = "{url}"\nmodel = "stub-entities"\nin_flight = {in_flight}\n'
            'max_retries = 0\ntimeout_s = 30.0\n[extract]\nentities = "llm"\n')


def notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.relative_to(root).parts}


def cli_ingest(root: Path, doc: dict[str, Any], tmp: Path) -> dict[str, Any]:
    file = tmp / f"{doc['id']}.json"
    file.write_text(json.dumps(doc), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(root), "ingest",
                          str(file), "--json"], capture_output=True, text=True, cwd=REPO,
                         env=child_env(), timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def serve_ingest(root: Path, doc: dict[str, Any], tmp: Path) -> dict[str, Any]:
    server = Server(root, tmp)
    try:
        answer = server.call("vault.ingest", {"conversation": doc})
        assert "result" in answer, answer
        assert server.finish() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    result: dict[str, Any] = answer["result"]
    return result


def entities_of(n: int, body: dict[str, Any]) -> Reply:
    """Every capitalised word and every thing of the turn, as the model's list."""
    turn = body["messages"][-1]["content"]
    words = [w.strip(".") for w in turn.split()]
    return Reply(text=json.dumps([w for w in words if w[:1].isupper() or w in THINGS]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_serve_ingests_with_the_rules_when_rmh_toml_says_rules(tmp_path: Path,
                                                                seed: int) -> None:
    doc = conversation(seed, 12)
    toml = '[extract]\nentities = "rules"\n'
    served = vault(tmp_path / "served", toml)
    result = serve_ingest(served, doc, tmp_path)
    assert result["extraction"] == {"extractor": "rules"}
    by_cli = vault(tmp_path / "cli", toml)
    assert cli_ingest(by_cli, doc, tmp_path)["facts"] == result["facts"]
    assert notes(served) == notes(by_cli)


def test_serve_asks_the_llm_when_rmh_toml_says_llm(tmp_path: Path) -> None:
    doc = conversation(7, 6)
    with ChatEndpoint(entities_of) as ep:
        served = vault(tmp_path / "served", llm_toml(ep.url))
        result = serve_ingest(served, doc, tmp_path)
        assert ep.count == 6
        by_cli = vault(tmp_path / "cli", llm_toml(ep.url))
        cli = cli_ingest(by_cli, doc, tmp_path)
    ext = result["extraction"]
    assert (ext["extractor"], ext["turns"], ext["asked"], ext["answered"]) == ("llm", 6, 6, 6)
    assert cli["extraction"] == ext
    assert notes(served) == notes(by_cli)


def slowly(n: int, body: dict[str, Any]) -> Reply:
    return Reply(text=entities_of(n, body).text, delay_s=0.3)


def cached(root: Path) -> int:
    conn = sqlite3.connect(root / ".rmh" / CACHE_FILE)
    try:
        return int(conn.execute("SELECT count(*) FROM answers").fetchone()[0])
    finally:
        conn.close()


def test_a_cancel_while_the_llm_answers_stops_before_any_note(tmp_path: Path) -> None:
    n = 40
    doc = conversation(11, n)
    with ChatEndpoint(slowly) as ep:
        root = vault(tmp_path / "v", llm_toml(ep.url, in_flight=1))
        server = Server(root, tmp_path)
        try:
            assert server.call("ping")["result"] == {}
            server.send("vault.ingest", {"conversation": doc}, "ing")
            ep.wait_count(4)  # the LLM step has begun, three answers given
            server.send_raw(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest",
                                        "params": {"id": "ing"}}).encode() + b"\n")
            while True:
                msg: dict[str, Any] = server.recv()
                if msg.get("id") == "ing":
                    break
            error = msg["error"]
            assert error["code"] == -32800 and error["data"]["stopped"] is True, error
            assert error["data"]["written"] == 0 and notes(root) == {}
            asked = ep.count
            assert asked < n  # the calls not yet sent were dropped
            kept = cached(root)
            assert 1 <= kept <= asked
            again = server.call("vault.ingest", {"conversation": doc}, rid="again")["result"]
            assert server.finish() == 0
        finally:
            if server.proc.poll() is None:
                server.proc.kill()
                server.proc.wait()
    ext = again["extraction"]
    assert ext["cached"] == kept and ext["asked"] == n - kept and ext["answered"] == n - kept
    assert again["written"] > 0
