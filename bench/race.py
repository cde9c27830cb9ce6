"""Racing rmh processes against one note (issue 27 item 1), for tests and bench/bench_race.py.

`race_edits`: two real `rmh serve` processes read the same note (one hash) and send
`vault.edit` append with that hash at the same moment, round after round. The compare-and-swap
holds when exactly one of each pair is acknowledged, the other is refused with edit_conflict
(-32013, carrying current_hash), and every acknowledged append is in the file at the end.

`race_editor`: an "editor" process that reads the note and replaces it atomically (temp file,
rename: as Obsidian saves) in a tight loop, adding one numbered line per save, while an
`rmh serve` edits the same note with the hash it just read. An editor line missing at the end
was overwritten by rmh (the editor never loses its own lines: it re-reads before each save).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHILD_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "RMH_EMBED_CACHE", "XDG_CACHE_HOME")
NOTE = "Race.md"


class Served:
    """`python -m harness serve --no-dense` on `vault`, driven line by line."""

    def __init__(self, vault: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
        env["PYTHONPATH"] = str(REPO)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "--vault", str(vault), "serve", "--no-dense"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=REPO, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def send(self, method: str, params: dict[str, Any], rid: int) -> None:
        msg = {"jsonrpc": "2.0", "method": method, "params": params, "id": rid}
        self.stdin.write(json.dumps(msg).encode() + b"\n")
        self.stdin.flush()

    def recv(self) -> dict[str, Any]:
        line = self.stdout.readline()
        if not line:
            raise RuntimeError("rmh serve closed its output")
        out: dict[str, Any] = json.loads(line)
        return out

    def call(self, method: str, params: dict[str, Any], rid: int = 0) -> dict[str, Any]:
        self.send(method, params, rid)
        return self.recv()

    def close(self) -> int:
        self.stdin.close()
        self.stdout.read()
        return self.proc.wait(timeout=60)


def make_vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    (root / NOTE).write_text("# Race\n", encoding="utf-8")
    return root


@dataclass
class RaceResult:
    rounds: int = 0
    acknowledged: int = 0
    conflicts: int = 0
    lost: int = 0
    anomalies: int = 0  # rounds with not exactly one ack and one edit_conflict with current_hash

    def row(self) -> str:
        return (f"| {self.rounds} | {self.acknowledged} | {self.conflicts} | {self.lost} | "
                f"{self.anomalies} |")


def race_edits(vault: Path, rounds: int) -> RaceResult:
    """Two servers racing `vault.edit` append with the same expected_hash (module docstring)."""
    servers = [Served(vault), Served(vault)]
    result, acked = RaceResult(), []
    try:
        for r in range(rounds):
            digest = servers[0].call("vault.read", {"note": NOTE})["result"]["hash"]
            order = servers if r % 2 == 0 else servers[::-1]  # each goes first half the time
            tags = [f"r{r}-{'ab'[servers.index(s)]}" for s in order]
            for s, tag in zip(order, tags, strict=True):
                s.send("vault.edit", {"note": NOTE, "kind": "append", "text": tag + "\n",
                                      "expected_hash": digest}, r + 1)
            answers = [s.recv() for s in order]
            oks = [tag for tag, a in zip(tags, answers, strict=True) if "result" in a]
            refused = [a["error"] for a in answers if "error" in a]
            result.rounds += 1
            result.acknowledged += len(oks)
            result.conflicts += sum(e["code"] == -32013 for e in refused)
            acked += oks
            if len(oks) != 1 or len(refused) != 1 or refused[0]["code"] != -32013 \
                    or not refused[0]["data"].get("current_hash"):
                result.anomalies += 1
    finally:
        for s in servers:
            s.close()
    lines = set((vault / NOTE).read_text(encoding="utf-8").splitlines())
    result.lost = sum(tag not in lines for tag in acked)
    return result


EDITOR = """
import os, random, sys, time
path, stop, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
n = 0
while not os.path.exists(stop):
    time.sleep(random.uniform(0, pause))
    with open(path, "rb") as fh:
        data = fh.read()
    n += 1
    tmp = path + ".editor-tmp"
    with open(tmp, "wb") as fh:
        fh.write(data + b"e%d\\n" % n)
    os.replace(tmp, path)
print(n)
"""


@dataclass
class EditorResult:
    rmh_edits: int = 0
    rmh_acknowledged: int = 0
    rmh_conflicts: int = 0
    editor_saves: int = 0
    editor_lost: int = 0

    def row(self) -> str:
        return (f"| {self.rmh_edits} | {self.rmh_acknowledged} | {self.rmh_conflicts} | "
                f"{self.editor_saves} | {self.editor_lost} |")


def race_editor(vault: Path, edits: int, pause_s: float = 0.002) -> EditorResult:
    """rmh editing a note while an editor saves it atomically in a loop, pausing up to
    `pause_s` (uniform) before each save (module docstring)."""
    server, stop = Served(vault), vault.parent / f"{vault.name}.stop"
    path = str(vault / NOTE)
    server.call("vault.read", {"note": NOTE})  # started and synced before the editor runs
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, path, str(stop), str(pause_s)],
                              stdout=subprocess.PIPE, text=True)
    result = EditorResult()
    try:
        for r in range(edits):
            read = server.call("vault.read", {"note": NOTE}, r)
            if "result" not in read:
                continue
            answer = server.call("vault.edit", {
                "note": NOTE, "kind": "append", "text": f"rmh{r}\n",
                "expected_hash": read["result"]["hash"]}, r)
            result.rmh_edits += 1
            result.rmh_acknowledged += "result" in answer
            result.rmh_conflicts += answer.get("error", {}).get("code") == -32013
    finally:
        stop.touch()
        out, _ = editor.communicate(timeout=60)
        server.close()
    result.editor_saves = int(out.strip())
    lines = set((vault / NOTE).read_text(encoding="utf-8").splitlines())
    result.editor_lost = sum(f"e{n}" not in lines for n in range(1, result.editor_saves + 1))
    return result
