"""The stale-temp sweep settles a note an erase set aside without ever waiting on the note's
name (review of session 33: it opened that name plainly to compare bytes, so a FIFO there
blocked the sweep, and with it every open of the vault, until some writer came).

An aside left by a dead process (".NAME.rmh-tmp-aside-PID-N") is put back when its name is
free, removed when the name holds the same bytes, and left, hidden, when the name holds
other bytes or is no regular file. Each case runs the sweep in a real child process with a
deadline, so a sweep that blocks fails the test instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWEEP = ("import sys; from vault.storage.store import Store; "
         "print(Store(sys.argv[1]).clean_stale_temps())")
SAVED = b"# a\nbytes an editor saved\n"


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def sweep(root: Path) -> str:
    done = subprocess.run([sys.executable, "-c", SWEEP, str(root)], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("at_name", ["nothing", "same", "other", "fifo"])
def test_an_aside_is_settled_and_the_sweep_never_waits(tmp_path: Path, at_name: str) -> None:
    root = tmp_path / "vault"
    (root / ".rmh").mkdir(parents=True)
    aside = root / f".a.md.rmh-tmp-aside-{dead_pid()}-0"
    aside.write_bytes(SAVED)
    note = root / "a.md"
    if at_name == "same":
        note.write_bytes(SAVED)
    elif at_name == "other":
        note.write_bytes(b"# a\nwritten since\n")
    elif at_name == "fifo":
        os.mkfifo(note)
    sweep(root)
    if at_name in ("nothing", "same"):
        assert not aside.exists() and note.read_bytes() == SAVED
    else:  # kept beside the name, never removed
        assert aside.read_bytes() == SAVED
