"""fileops.keep_metadata through `Store.write_text`: a note's replacement never gives the
writer's own group what the note gave only its group (the group bits are kept only with the
group; else they are the others' bits, as vim's save does)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from vault.storage.fileops import kept_mode
from vault.storage.store import Store

NOBODY = 65534
OTHER_GROUP = 12345  # a group the writer is not in (its supplementary groups are dropped)
MODES = (0o640, 0o660, 0o604, 0o600, 0o664, 0o2750, 0o4644)


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")
@pytest.mark.parametrize("mode", MODES)
def test_a_note_whose_group_cannot_be_kept_gives_the_new_group_no_more_than_others(
        mode: int) -> None:
    """The owner rewrites its own note of a group it is not in: fchown to that group is
    EPERM, so the replacement is in the owner's group. Before, it took the note's group bits
    too (0640 nobody:12345 became 0640 nobody:nogroup, readable by a group it was not for)."""
    base = Path(tempfile.mkdtemp())  # (pytest's tmp_path is out of the child's reach)
    try:
        _rewrite_as_owner(base, mode)
    finally:
        shutil.rmtree(base)


def _rewrite_as_owner(base: Path, mode: int) -> None:
    base.chmod(0o755)
    vault = base / "v"
    vault.mkdir()
    os.chown(vault, NOBODY, NOBODY)
    note = vault / "n.md"
    note.write_text("old\n")
    os.chown(note, NOBODY, OTHER_GROUP)
    note.chmod(mode)
    pid = os.fork()
    if pid == 0:  # the child: the note's owner, in no group but its own
        code = 3
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            Store(vault).write_text("n.md", "new\n")
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    got = os.stat(note)
    assert note.read_text() == "new\n" and got.st_gid == NOBODY
    others = mode & stat.S_IRWXO
    assert stat.S_IMODE(got.st_mode) == (mode & stat.S_IRWXU) | (others << 3) | others


@pytest.mark.parametrize("mode", MODES)
def test_the_kept_mode_in_the_same_group_is_the_notes_less_set_id(mode: int) -> None:
    assert kept_mode(mode, True) == mode & 0o777
    assert kept_mode(mode, False) & 0o707 == mode & 0o707
