"""An in-place editor (truncate, then write) racing `rmh edit ... append` when rmh and the
note's owner are two users (test_edit_inplace_editor.py is the one-user case). The read lease
that tells rmh an editor holds the note open for writing (leases.held_for_writing) may be
taken only by the file's owner or with CAP_LEASE:

- rmh as root (CAP_LEASE), the note and its editor another user's: the lease answers, the
  editor's save is kept (held on main too: proved here as a second user would attack it);
- rmh as the unprivileged user, the note and its editor root's: no lease can be asked, so on
  main the check answered "not held", the append replaced the truncated file and the
  editor's write went into the removed inode (the note was rmh's line alone). Now such a
  note is judged by `leases.mid_save` (changed in the last seconds, or emptied in the last
  minute): refused, the editor's save whole; a quiet note of another owner still takes the
  append, an empty one too (refused for good before REV35: Obsidian's new notes are empty)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.as_user import USER, as_user, unprivileged_home
from tests.harness.test_edit_inplace_editor import EDITOR

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="file leases are Linux's")
SAVED = "# Kiln\nFirst line.\nThe editor's new line.\n"


def _uid() -> int:
    return int(subprocess.check_output(["id", "-u", USER]))


def _vault(home: Path, note_owner: int) -> tuple[Path, Path]:
    vault = home / "vault"
    vault.mkdir()
    os.chown(vault, _uid(), -1)
    note = vault / "kiln.md"
    note.write_text("# Kiln\nFirst line.\n")
    os.chown(note, note_owner, -1)
    os.chmod(note, 0o666)  # both users may read and write it (a shared vault)
    return vault, note


def _race(note: Path, editor_cmd: list[str], edit: list[str],
          run_edit: object) -> tuple[subprocess.CompletedProcess[str], str]:
    editor = subprocess.Popen([*editor_cmd, sys.executable, "-c", EDITOR, str(note), SAVED],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert editor.stdin is not None and editor.stdout is not None
    try:
        assert editor.stdout.readline().strip() == "truncated"
        assert callable(run_edit)
        done: subprocess.CompletedProcess[str] = run_edit(edit)
    finally:
        editor.stdin.write("go\n")
        editor.stdin.close()
        editor.wait(timeout=30)
    assert editor.returncode == 0
    return done, note.read_text()


def _kept(done: subprocess.CompletedProcess[str], after: str) -> None:
    # the editor's save is there whole; rmh's append is refused or on top of it, never alone
    assert after.startswith(SAVED), (done.returncode, done.stderr, after)
    assert done.returncode in (0, 1), done.stderr
    if done.returncode == 1:
        assert "changed since it was read" in done.stderr or "conflict" in done.stderr


def test_unprivileged_rmh_never_replaces_a_root_note_its_editor_is_writing() -> None:
    home = unprivileged_home()
    try:
        vault, note = _vault(home, 0)
        args = ("--vault", str(vault))
        assert as_user(home, *args, "init", "--no-dense").returncode == 0
        done, after = _race(note, [], ["edit", "kiln", "append", "--text", "From rmh."],
                            lambda edit: as_user(home, *args, *edit, timeout=120))
        _kept(done, after)
        # a quiet note of another owner (saved seconds ago, not empty) still takes an append
        os.utime(note, ns=(10**18, 10**18))
        done = as_user(home, *args, "edit", "kiln", "append", "--text", "Later.")
        assert done.returncode == 0, done.stderr
        assert note.read_text().startswith(SAVED) and "Later." in note.read_text()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_rmh_as_root_never_replaces_a_users_note_their_editor_is_writing() -> None:
    home = unprivileged_home()
    try:
        vault, note = _vault(home, _uid())
        run = [sys.executable, "-m", "harness", "--vault", str(vault)]
        env = {**os.environ, "HOME": str(home)}
        root = Path(__file__).resolve().parents[2]
        assert subprocess.run([*run, "init", "--no-dense"], env=env, cwd=root,
                              capture_output=True).returncode == 0
        os.chown(note, _uid(), -1)  # init as root keeps the owner; made sure
        done, after = _race(note, ["runuser", "-u", USER, "--"],
                            ["edit", "kiln", "append", "--text", "From rmh."],
                            lambda edit: subprocess.run([*run, *edit], env=env, cwd=root,
                                                        capture_output=True, text=True,
                                                        timeout=120))
        _kept(done, after)
        assert os.stat(note).st_uid == _uid()  # still the user's note
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_unprivileged_rmh_appends_to_a_root_note_left_empty_long_ago() -> None:
    home = unprivileged_home()
    try:
        vault, note = _vault(home, 0)
        note.write_text("")  # a new note another user made and never wrote (still root's)
        os.utime(note, ns=(10**18, 10**18))
        args = ("--vault", str(vault))
        assert as_user(home, *args, "init", "--no-dense").returncode == 0
        done = as_user(home, *args, "edit", "kiln", "append", "--text", "From rmh.")
        assert done.returncode == 0, done.stderr  # was EditConflict at every try, for good
        assert "From rmh." in note.read_text()
    finally:
        shutil.rmtree(home, ignore_errors=True)
