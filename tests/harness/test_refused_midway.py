"""A journalled change refused midway is all or none (STORE14, session 39).

`rmh ingest` (a conversation's notes) and `rmh fact supersede` (the old fact and its
successor) are journalled so that a kill leaves them whole or absent. A refusal of a later
note (a folder at its path, its folder not writable by this user, a note made there
meanwhile) ended the journal with the earlier notes written: half a conversation, its links
to the notes not written dangling (8 in the ingest below), or an old fact "superseded by" a
note never written. Now the notes written are taken back (only their own bytes: a note
changed since by another program is left), then the refusal is raised; a full disk still
leaves the journal, which writes the rest once there is room (README)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness.test_cli_notes import rmh

OLD = "conversations/c1/facts/kiln temperature is 1200 c.md"
FACT = """---
tier: L2
kind: fact
conversation: c1
subject: kiln
key: temperature
value: 1200 c
---
# kiln temperature is 1200 c
"""


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".rmh" not in p.relative_to(root).parts}


def doctor(root: Path) -> dict[str, object]:
    r = rmh("--vault", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    found: dict[str, object] = json.loads(r.stdout)["vault"]
    return found


def test_an_ingest_refused_at_a_later_note_writes_none_of_the_conversation(
        tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "kiln.md").write_text("# Kiln\n")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    chat = tmp_path / "c2.json"
    chat.write_text(json.dumps({"id": "c2", "messages": [
        {"role": "user", "content": "Alice Moreau moved from Lyon to Berlin last spring."},
        {"role": "assistant", "content": "So Alice Moreau now lives in Berlin."}]}))
    (root / "conversations" / "c2" / "entities" / "berlin.md").mkdir(parents=True)
    before = files(root)
    r = rmh("--vault", str(root), "ingest", str(chat), "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert files(root) == before  # main: 6 of its notes written
    found = doctor(root)
    assert found["dangling_links"] == [], found["dangling_links"]  # main: 8
    assert found["intents"]["pending"] == []  # type: ignore[index]


def test_a_supersede_refused_at_the_new_note_leaves_the_old_one(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / OLD).parent.mkdir(parents=True)
    (root / OLD).write_text(FACT)
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    (root / "conversations" / "c1" / "facts" / "kiln temperature 1250 c.md").mkdir()
    before = files(root)
    r = rmh("--vault", str(root), "fact", "supersede", OLD[:-3], "--value", "1250 c",
            "--by", "t", "--at", "2024-05-01T00:00:00+00:00", "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["error"]["kind"] in ("note_exists", "path_refused"), r.stdout
    assert files(root) == before  # main: the old note "superseded by" a note never written
    assert doctor(root)["dangling_links"] == []
