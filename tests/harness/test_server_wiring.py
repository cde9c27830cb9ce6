"""`rmh serve` with everything wired: learning sessions, conversations, the recursive ask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

CONVERSATION = {
    "format": "rmh-conversation/1",
    "id": "ab",
    "sessions": [
        {
            "id": "s1",
            "date": "2023-05-01T10:00",
            "turns": [
                {"speaker": "Alice", "text": "I took a pottery class with Carla."},
                {"speaker": "Bob", "text": "Carla taught me too, she is great."},
            ],
        },
        {
            "id": "s2",
            "date": "2023-05-09T09:00",
            "turns": [{"speaker": "Bob", "text": "Last month I sold my bike."}],
        },
    ],
}


def test_learning_sessions_conversations_and_ask(tmp_path: Path) -> None:
    srv = Server(make_vault(tmp_path / "v"), tmp_path)
    try:
        started = srv.call("session.start", {"session": "s-1"}, rid=1)["result"]
        assert started["session"] == "s-1"
        hits = srv.call("vault.search", {"query": "auth rewrite", "k": 3}, rid=2)["result"]
        top = hits["hits"][0]["note"]
        assert top == "Project Atlas.md"
        srv.call("vault.write", {"note": "Plan", "content": "Next: [[Project Atlas]]."}, rid=3)
        ended = srv.call("session.end", None, rid=4)["result"]
        assert ended["session"] == "s-1" and ended["rewards_applied"] is True

        status = srv.call("status", None, rid=5)["result"]
        assert status["llm"]["provider"] == "extractive"

        report = srv.call("vault.ingest", {"conversation": CONVERSATION}, rid=6)["result"]
        assert report["turns"] == 3
        again = srv.call("vault.ingest", {"conversation": CONVERSATION}, rid=7)["result"]
        assert again["written"] == 0 and again["unchanged"] == report["written"]

        ctx = srv.call("vault.context", {"query": "when did Bob sell the bike",
                                         "budget_words": 80}, rid=8)["result"]
        assert "bike" in ctx["text"] and "2023-04" in ctx["text"]

        bad = srv.call("vault.context", {"query": "x", "budget_words": 0}, rid=9)
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["param"] == "budget_words"

        answer = srv.call("vault.ask", {"question": "Who owns Project Atlas?"}, rid=10)
        assert "Caroline" in answer["result"]["answer"]

        cell = srv.call("repl.exec", {"code": "context('pottery class', 50)['text']"}, rid=11)
        assert "pottery" in cell["result"]["value"]
        assert cell["result"]["rlm"]["calls"] == 0
    finally:
        assert srv.finish() == 0

    # The session's citation reached learned.sqlite: Q of the cited note rose above 0 (issue 13:
    # Q starts at the neutral 0; it was "above 0.5" when Q started at 0.5).
    from vault import Ledger, Vault

    with Vault.open(tmp_path / "v") as v:
        ledger = Ledger.open(v.root / ".rmh" / "learned.sqlite", clock=lambda: 0.0)
        try:
            note_id = v.resolve("Project Atlas")
            assert ledger.state.notes[note_id].q > 0.0
        finally:
            ledger.close()


def test_end_of_input_during_a_runaway_exec(tmp_path: Path) -> None:
    """Escape-suite case 24 through `rmh serve`: stdin closes while a cell loops forever. The
    cell is killed at its deadline, answered, the vault is intact, and the server exits 0."""
    root = make_vault(tmp_path / "v")
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    srv = Server(root, tmp_path)
    srv.send("repl.exec", {"code": "while True:\n    pass", "deadline_s": 2}, rid=1)
    assert srv.finish() == 0
    answers = [json.loads(line) for line in srv.lines]
    assert [a["id"] for a in answers] == [1]
    result = answers[0]["result"]
    assert result["ok"] is False and result["state_lost"] is True
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before


def test_ingest_keeps_a_hand_edit_and_regenerates_it_on_request(tmp_path: Path) -> None:
    """`vault.ingest` leaves a generated note edited by hand as it is (`kept_edited`); with
    `regenerate` it writes it as generated, the edited version in the trash (`trashed`)."""
    root = make_vault(tmp_path / "v")
    srv = Server(root, tmp_path)
    try:
        assert srv.call("vault.ingest", {"conversation": CONVERSATION}, rid=1)["result"]["turns"]
        session = root / "conversations/ab/ab s2.md"
        session.write_text(session.read_text("utf-8") + "Mine.\n", "utf-8")
        grown = json.loads(json.dumps(CONVERSATION))
        grown["sessions"][1]["turns"].append({"speaker": "Alice", "text": "Bikes are fun."})
        kept = srv.call("vault.ingest", {"conversation": grown}, rid=2)["result"]
        assert kept["kept_edited"] == ["conversations/ab/ab s2.md"] and kept["trashed"] == []
        assert session.read_text("utf-8").endswith("Mine.\n")
        redone = srv.call("vault.ingest", {"conversation": grown, "regenerate": True},
                          rid=3)["result"]
        assert [d["note"] for d in redone["trashed"]] == ["conversations/ab/ab s2.md"]
        assert (root / redone["trashed"][0]["trash"]).read_text("utf-8").endswith("Mine.\n")
        assert "Mine." not in session.read_text("utf-8")
    finally:
        assert srv.finish() == 0
