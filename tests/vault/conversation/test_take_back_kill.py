"""A take-back killed right after it set a note aside keeps an editor's save (REV, session 33).

STORE8 made `Store.erase(expected_hash=)` rename the note to a temp name before checking its
bytes (tests/vault/conversation/test_take_back_editor.py). That name was a write's temp
(".NAME.rmh-tmp-PID-N"), which the next open's stale-temp sweep removes: a process killed
between the rename and the put-back of a note an editor had saved lost the save (probe
REV_kill_aside: K = 16 of 21 file operations). Now the note is set aside as
".NAME.rmh-tmp-aside-PID-N", which the sweep puts back or, where the name holds other bytes
(the journal's replay wrote the conversation), leaves: never removed unless a copy.

A real child process ingests one conversation, stopped at 2 notes (fewer than half: taken
back); at that stop an editor saves the first of them; the child is SIGKILLed right after the
file operation that set each note aside (`Vault.open(fault_after=)`, counted by a first run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vault import Vault

SAVED = "# My own words\nTyped in the editor while the ingest was being stopped.\n"
CHILD = r'''
import os, sys
from pathlib import Path
from vault import IngestStopped, Vault, cancellable, ingest_conversations, load_transcript
from vault.conversation.formats import Conversation
from vault.storage import faults
from vault.storage.store import Store
root, k, saved = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
real = Store.erase
def erase(self, path, **kw):  # the count of file operations as each erase begins
    print("erase-at", faults._made[1], flush=True)
    real(self, path, **kw)
Store.erase = erase
lines = [f"{'Alice' if i % 2 else 'Bob'}: message {i} about the garden plan for week {i}"
         for i in range(24)]
(c,) = load_transcript("\n".join(lines), "text").conversations
folder = root / "conversations" / "chat-editor"
def stop():
    got = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    if len(got) < 2:
        return False
    if not (root / ".edited").exists():  # the editor's save: a temp renamed over the note
        tmp = got[0].with_name(f".{got[0].name}.editor-tmp")
        tmp.write_text(saved, encoding="utf-8")
        os.replace(tmp, got[0])
        (root / ".edited").write_text("")
    return True
with Vault.open(root, watch=False, fault_after=k or None) as v, cancellable(stop):
    try:
        ingest_conversations(v, [Conversation("chat-editor", c.sessions)], use_nlp=False)
    except IngestStopped:
        print("stopped", flush=True)
'''


def child(root: Path, k: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, str(root), str(k), SAVED],
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_take_back_killed_after_setting_a_note_aside_keeps_the_editors_save(
        tmp_path: Path) -> None:
    first = tmp_path / "count"
    Vault.init(first, watch=False).close()
    run = child(first, 0)
    assert "stopped" in run.stdout, run.stderr
    erases = [int(line.split()[1]) for line in run.stdout.splitlines()
              if line.startswith("erase-at")]
    # the two notes taken back; since session 41 (the journal's take-back, whole) the note the
    # editor saved is not even set aside (its bytes are not the ingest's: left as they are)
    assert 1 <= len(erases) <= 2, run.stdout
    for k in (n + 1 for n in erases):  # right after the rename that sets the note aside
        root = tmp_path / f"k{k}"
        Vault.init(root, watch=False).close()
        assert child(root, k).returncode == -9  # SIGKILLed there
        assert (root / ".edited").exists()
        Vault.open(root, watch=False).close()  # the next open: journal replay, temp sweep
        found = [p for p in root.rglob("*") if p.is_file() and p.read_bytes() == SAVED.encode()]
        assert found, f"the editor's save lost (killed after file operation {k})"
