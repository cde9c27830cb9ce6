"""An ingest is all or none across a kill at every file operation, its record included
(STORE16, session 41).

`rmh ingest` writes a conversation's notes as one journalled operation and keeps ingest's
record of generated notes (`.rmh/generated/H.json`: the bytes it wrote to each). Before, a
refused ingest (a folder at a note's path) killed at any of 44 of its 50 file operations was
replayed by the next open up to the refused note: half a conversation, 5 links dangling
(NOTES-STORE15 "Still weak"); its take-back (a stop, a refusal) was not marked in the journal
(a kill during it was replayed forward), and the record's saves were no kill point at all.
Now the journal is whole (all or none; a refusal renamed refused before its take-back) and
carries each note's record line, set as the recovery leaves the note.

Swept: killed after every N-th file operation (a stride: each point costs four commands;
RMH_FAULT_AFTER_OPS, vault/storage/faults.py) of an ingest that succeeds, one refused midway
by a folder at a note's path, and one refused by an immutable note it would replace
(`chattr +i`, root); then another process opens the vault (`rmh doctor`). After each: the
conversation's notes are all of the clean run's or none (as before the ingest), no link
dangles, no intent is pending, the record says what the notes are (the clean run's, or as
before), the user's own note is byte-identical, and the same
ingest again (the obstacle gone) leaves the bytes and record of a clean run."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh
from tests.harness.test_refused_midway import files

MAX_OPS = 400
CID = "c2"
MINE = f"conversations/{CID}/"
USER_NOTE = "# Kiln\nMy own note about [[Kiln]] firing.\n"
TURNS = [("user", "Alice Moreau moved from Lyon to Berlin last spring."),
         ("assistant", "So Alice Moreau now lives in Berlin."),
         ("user", "Yes, and Bruno Keller visits her in Berlin every May."),
         ("assistant", "Bruno Keller sounds like a good friend.")]
BLOCKED = f"{MINE}entities/berlin.md"

Setup = Callable[[Path], None]


def chat(folder: Path, turns: int) -> Path:
    path = folder / f"{CID}-{turns}.json"
    path.write_text(json.dumps({"id": CID, "messages": [
        {"role": r, "content": c} for r, c in TURNS[:turns]]}))
    return path


def record(root: Path) -> dict[str, object]:
    """Every record file's notes, parsed (a file with no notes counts as none)."""
    out: dict[str, object] = {}
    for f in sorted((root / ".rmh" / "generated").glob("*.json")):
        notes = json.loads(f.read_bytes())["notes"]
        if notes:
            out[f.name] = notes
    return out


def state(root: Path) -> tuple[dict[str, bytes], dict[str, object]]:
    return files(root), record(root)


def ingest(root: Path, path: Path, n: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {} if n is None else {"RMH_FAULT_AFTER_OPS": str(n)}
    r = rmh("--vault", str(root), "ingest", str(path), "--json", env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def doctor(root: Path) -> dict[str, object]:
    r = rmh("--vault", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    found: dict[str, object] = json.loads(r.stdout)["vault"]
    return found


def immutable(root: Path, flag: str) -> bool:
    return subprocess.run(["chattr", flag, str(root / BLOCKED)], capture_output=True,
                          check=False).returncode == 0


def sweep(tmp_path: Path, first: int, grown: int, block: Setup | None, unblock: Setup | None,
          stride: int = 1) -> tuple[int, list[tuple[int, str]]]:
    """Kill points swept and what was wrong after each (N, why)."""
    base = tmp_path / "base"
    base.mkdir()
    (base / "Kiln.md").write_text(USER_NOTE)
    assert rmh("--vault", str(base), "init", "--no-dense").returncode == 0
    if first:
        assert ingest(base, chat(tmp_path, first)).returncode == 0
    before = state(base)
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    conv = chat(tmp_path, grown)
    assert ingest(clean, conv).returncode == 0
    after = state(clean)
    assert after != before
    bad: list[tuple[int, str]] = []
    points = 0
    for n in range(1, MAX_OPS, stride):
        root = tmp_path / f"v{n}"
        shutil.copytree(base, root)
        if block is not None:
            block(root)
        code = ingest(root, conv, n).returncode
        found = doctor(root)  # another process: the recovery
        if unblock is not None:
            unblock(root)
        now = state(root)
        if now not in (before, after):
            why = "notes" if now[0] not in (before[0], after[0]) else "record"
            mine = sorted(p for p in set(now[0]) ^ set(after[0]) if p.startswith(MINE))
            bad.append((n, f"{why}: {len(mine)} of the conversation's notes differ"))
        if found["dangling_links"] or found["intents"]["pending"]:  # type: ignore[index]
            bad.append((n, json.dumps([found["dangling_links"], found["intents"]])[:300]))
        if now[0].get("Kiln.md") != USER_NOTE.encode():
            bad.append((n, "the user's note changed"))
        assert ingest(root, conv).returncode == 0
        if state(root) != after:
            bad.append((n, "the ingest again differs from a clean run"))
        shutil.rmtree(root)
        if code != -9:
            assert code in (0, 1), code
            break
        points += 1
    else:
        raise AssertionError(f"still killed after {MAX_OPS} operations")
    return points, bad


def _folder(root: Path) -> None:
    (root / BLOCKED).mkdir(parents=True)


def _unfolder(root: Path) -> None:
    (root / BLOCKED).rmdir()


@pytest.mark.slow
def test_an_ingest_refused_midway_killed_at_every_step_is_none(tmp_path: Path) -> None:
    points, bad = sweep(tmp_path, 0, 2, _folder, _unfolder, stride=9)
    assert points > 4 and not bad, bad  # main: 44 of 50 points left 5 links dangling


@pytest.mark.slow
def test_an_ingest_killed_at_every_step_is_whole_or_none(tmp_path: Path) -> None:
    points, bad = sweep(tmp_path, 0, 4, None, None, stride=9)
    assert points > 4 and not bad, bad


@pytest.mark.slow
def test_a_grown_ingest_refused_by_an_immutable_note_killed_at_every_step(
        tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "x").write_text("x")
    if subprocess.run(["chattr", "+i", str(probe / "x")], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("no chattr +i here (not root, or the file system has none); the folder "
                    "sweep above covers a refusal midway")
    subprocess.run(["chattr", "-i", str(probe / "x")], check=True)

    def block(root: Path) -> None:
        assert immutable(root, "+i")

    def unblock(root: Path) -> None:
        assert immutable(root, "-i")

    points, bad = sweep(tmp_path, 2, 4, block, unblock, stride=13)
    assert points > 4 and not bad, bad
