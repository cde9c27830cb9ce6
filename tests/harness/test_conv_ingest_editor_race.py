"""An editor saving a generated note while `rmh ingest` runs in another process loses nothing
(vault/conversation/ingest.py, generated.py). A second process rewrites a session note and an
entity note the way an editor saves (a temp file in the same folder, then a rename over the
note), each save appending a numbered line to what it read, in bursts and pauses, while the real
CLI ingests a transcript that grows each round, with and without `--regenerate` (which may
give up, EditConflict, on a note saved under each of its attempts). The invariant: every line
the editor wrote is in the note or in a copy in `.rmh/trash/`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.forks import run_cli

ROUNDS = 6
TARGETS = ("conversations/ab/ab s1.md", "conversations/ab/entities/alice.md")

EDITOR = textwrap.dedent("""
    import os, random, sys, time
    root, stop, log = sys.argv[1], sys.argv[2], sys.argv[3]
    targets = sys.argv[4:]
    n = 0
    with open(log, "a", encoding="utf-8") as out:
        while not os.path.exists(stop):
            for rel in targets:
                path = os.path.join(root, rel)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                line = f"editor save {n}"
                tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.swp")
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text + line + "\\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
                out.write(line + "\\n")
                out.flush()
                n += 1
            time.sleep(random.choice((0.001, 0.02, 0.2)))  # bursts, and pauses to write in
""")


def transcript(n_turns: int) -> dict[str, object]:
    turns = [{"speaker": ("Alice", "Bob")[i % 2], "text": f"Alice talks about pottery, day {i}.",
              "role": ("user", "assistant")[i % 2]} for i in range(n_turns)]
    return {"format": "rmh-conversation/1", "id": "ab", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": turns}]}


def rmh(root: Path, *args: str) -> dict[str, object]:
    """The command's JSON document; {} when `--regenerate` gave up on a note that changed
    under each of its attempts (EditConflict: refused, nothing overwritten)."""
    done = run_cli(["--vault", str(root), *args, "--json"], env=dict(os.environ), cwd=Path.cwd(),
                   timeout=120)
    if done.returncode == 1 and "--regenerate" in args and "changed since it was read" in (
            done.stderr):
        return {}
    assert done.returncode == 0, done.stderr
    doc: dict[str, object] = json.loads(done.stdout)
    return doc


@pytest.mark.slow
def test_an_editor_saving_while_ingest_runs_loses_no_line(tmp_path: Path) -> None:
    root, stop, log = tmp_path / "v", tmp_path / "stop", tmp_path / "editor.log"
    assert run_cli(["--vault", str(root), "init"], env=dict(os.environ), cwd=Path.cwd(),
                   timeout=120).returncode == 0
    (root / "rmh.toml").write_text('[extract]\nentities = "rules"\n', encoding="utf-8")
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps(transcript(4)), encoding="utf-8")
    rmh(root, "ingest", str(conv))
    reports = []
    for r in range(ROUNDS):
        stop.unlink(missing_ok=True)
        editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(root), str(stop), str(log),
                                   *TARGETS])
        try:
            time.sleep(0.05)
            conv.write_text(json.dumps(transcript(6 + 2 * r)), encoding="utf-8")
            reports.append(rmh(root, "ingest", str(conv),
                               *(["--regenerate"] if r % 2 else [])))
        finally:
            stop.touch()
            assert editor.wait(timeout=60) == 0
    with log.open("a", encoding="utf-8") as out:  # one save after the last ingest, whatever
        for rel in TARGETS:  # the race left (the editor may have saved last before its write)
            note = root / rel
            note.write_text(note.read_text(encoding="utf-8") + "editor save final\n",
                            encoding="utf-8")
            out.write("editor save final\n")
    reports.append(rmh(root, "ingest", str(conv), "--regenerate"))  # the editor stopped
    assert {d["note"] for d in reports[-1]["trashed"]} == set(TARGETS)  # type: ignore[attr-defined]
    saved = log.read_text(encoding="utf-8").splitlines()
    assert len(saved) > ROUNDS * len(TARGETS)  # the editor did save during the ingests
    kept = "".join((root / t).read_text(encoding="utf-8") for t in TARGETS)
    kept += "".join(p.read_text(encoding="utf-8")
                    for p in (root / ".rmh" / "trash").rglob("*.md"))
    lost = [line for line in saved if line + "\n" not in kept]
    assert not lost, (lost[:5], reports)
    assert any(doc.get("kept_edited") for doc in reports)  # without --regenerate: left as edited
