"""Two real `rmh serve` processes on one vault, an editor script saving files beside them
(VAULT11, session 37; before, a one-off probe).

Each server, in its own thread, runs a seeded mix: appends to one shared note (no expected
hash), writes of notes of its own that the other server must then read, moves of notes linked
from a hub note, reads and searches. Meanwhile an editor process saves its own notes atomically
(temporary file and rename, as Obsidian does) and in place, and creates and removes scratch
notes. Checked: every answer is a result or a typed error (no -32603, no traceback), both exit 0;
every acknowledged append is in the shared note exactly once; a note one server wrote is read
by the other with the same bytes; after the moves the hub's links name the new notes and both
servers resolve them; the editor's notes hold the editor's last save and both servers read and
find its last word."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.harness.raw_server import RawServer
from tests.harness.test_cli_notes import rmh

pytestmark = pytest.mark.slow
ROUNDS = 40

EDITOR = textwrap.dedent("""
    import os, sys
    vault, rounds = sys.argv[1], int(sys.argv[2])
    for k in range(rounds):
        text = f"editor round {k} word ed{k}zz [[Hub]]\\n"
        tmp = os.path.join(vault, ".Ed.md.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(vault, "Ed.md"))
        with open(os.path.join(vault, "Ed2.md"), "w") as f:
            f.write(f"in place {k} word ip{k}zz\\n")
        scratch = os.path.join(vault, f"Scratch{k % 3}.md")
        if os.path.exists(scratch):
            os.unlink(scratch)
        else:
            with open(scratch, "w") as f:
                f.write(f"scratch {k}\\n")
    """)


def _run(name: str, me: RawServer, other: RawServer, seed: int, out: dict[str, Any]) -> None:
    rng = random.Random(f"{seed}-{name}")
    acked: list[str] = []
    written: list[str] = []
    for i in range(ROUNDS):
        op = rng.choice(["append", "append", "write", "read", "search", "move"])
        if op == "append":
            line = f"{name}-append-{i}"
            a = me.call("vault.edit", {"note": "Shared", "kind": "append", "text": line + "\n"})
            if "result" in a:
                acked.append(line)
            else:
                assert a["error"]["data"]["kind"] in ("edit_conflict", "busy"), a
        elif op == "write":
            note = f"{name} own {i}.md"
            text = f"{name} wrote {i} word {name}w{i}zz\n"
            a = me.call("vault.write", {"note": note, "content": text})
            assert "result" in a, a
            r = other.call("vault.read", {"note": note})
            assert r["result"]["text"] == text, r
            written.append(note)
        elif op == "read":
            a = me.call("vault.read", {"note": rng.choice(["Hub", "Shared", "Ed", "Ed2"])})
            assert "result" in a, a
        elif op == "search":
            a = me.call("vault.search", {"query": rng.choice(["hub", "shared", "editor"])})
            assert "result" in a, a
        else:
            slot = rng.randrange(4)
            old = out["moves"][slot]
            new = f"M{slot} by {name} {i}"
            a = me.call("vault.move", {"note": old, "new": new + ".md"})
            if "result" in a:
                out["moves"][slot] = new
            else:
                assert a["error"]["data"]["kind"] in ("note_not_found", "busy",
                                                      "note_exists"), a
    out[name] = (acked, written)


@pytest.mark.parametrize("seed", [1, 2])
def test_two_servers_and_an_editor_on_one_vault(tmp_path: Path, seed: int) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Shared.md").write_text("# Shared\n", encoding="utf-8")
    (vault / "Hub.md").write_text("hub " + " ".join(f"[[M{j}]]" for j in range(4)) + "\n",
                                  encoding="utf-8")
    for j in range(4):
        (vault / f"M{j}.md").write_text(f"movable {j}\n", encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense").returncode == 0
    a, b = RawServer(vault), RawServer(vault)
    out: dict[str, Any] = {"moves": {j: f"M{j}" for j in range(4)}}
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(vault), str(ROUNDS * 3)])
    threads = [threading.Thread(target=_run, args=("A", a, b, seed, out)),
               threading.Thread(target=_run, args=("B", b, a, seed, out))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert editor.wait(120) == 0
    assert "A" in out and "B" in out, "a server thread failed"
    shared = (vault / "Shared.md").read_text(encoding="utf-8").splitlines()
    for name in ("A", "B"):
        acked, written = out[name]
        for line in acked:
            assert shared.count(line) == 1, (line, shared)
        for note in written:
            assert (vault / note).is_file()
    hub = (vault / "Hub.md").read_text(encoding="utf-8")
    last = ROUNDS * 3 - 1
    for server in (a, b):
        for slot, name in out["moves"].items():
            assert f"[[{name}]]" in hub, (slot, name, hub)
            assert server.call("vault.read", {"note": name})["result"]["note"] == name + ".md"
        back = server.call("vault.backlinks", {"note": out["moves"][0]})["result"]
        assert "Hub.md" in json.dumps(back)
        ed = server.call("vault.read", {"note": "Ed"})["result"]
        assert ed["text"] == f"editor round {last} word ed{last}zz [[Hub]]\n"
        hits = server.call("vault.search", {"query": f"ed{last}zz"})["result"]["hits"]
        assert hits and hits[0]["note"] == "Ed.md", hits
        ed2 = server.call("vault.read", {"note": "Ed2"})["result"]
        assert ed2["text"] == f"in place {last} word ip{last}zz\n"
    for server in (a, b):
        assert "Traceback" not in server.close()
