"""An editor that saves in place (truncate, then write on the same descriptor: nano, `>`
redirections, many scripts) racing `rmh edit ... append`. Between the truncate and the write
the note reads empty; rmh's append computed on those bytes passed every hash check (the file
is still empty when it swaps its version in) and replaced the file, so the editor's write
went into the replaced inode: the whole note was lost, the editor's save included
(STORE9_serve_editor_race.py.txt: 2 runs of 3 reset the note). Now a guarded swap also asks
whether another process holds the replaced file open for writing (a read lease is refused
then: leases.held_for_writing) and puts it back: the append is refused or retried, the
editor's save lands. Real processes: the editor is a child that truncates and holds the file
open while a real `rmh edit` runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.forks import cli_env

ROOT = Path(__file__).resolve().parents[2]
EDITOR = """
import sys
f = open(sys.argv[1], "r+")
f.truncate(0)
f.flush()
print("truncated", flush=True)
sys.stdin.readline()  # until told: rmh's edit runs meanwhile
f.write(sys.argv[2])
f.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file leases are Linux's")
def test_an_append_never_replaces_a_note_an_editor_is_writing_in_place(
        tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "kiln.md"
    note.write_text("# Kiln\nFirst line.\n")
    env = cli_env(tmp_path)
    run = [sys.executable, "-m", "harness", "--vault", str(vault)]
    assert subprocess.run([*run, "init", "--no-dense"], env=env, cwd=ROOT,
                          capture_output=True).returncode == 0
    saved = "# Kiln\nFirst line.\nThe editor's new line.\n"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(note), saved],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert editor.stdin is not None and editor.stdout is not None
    try:
        assert editor.stdout.readline().strip() == "truncated"
        edit = subprocess.run([*run, "edit", "kiln", "append", "--text", "From rmh."],
                              env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        editor.stdin.write("go\n")
        editor.stdin.close()
        editor.wait(timeout=30)
    assert editor.returncode == 0
    after = note.read_text()
    # the editor's save is there whole; rmh's append is refused or on top of it, never alone
    assert after.startswith(saved), (edit.returncode, edit.stderr, after)
    assert edit.returncode in (0, 1), edit.stderr
    if edit.returncode == 1:
        assert "changed since it was read" in edit.stderr or "conflict" in edit.stderr
