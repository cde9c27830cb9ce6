"""An open waits for no writer when nothing is left to recover (SBX9, session 34: every
`Vault.open` took the vault's write lock, for the intent journal's and the erasures' recovery,
so `rmh exec -c "1 + 1"` waited out another process's 20 s write before running).

A real child holds `.rmh/write.lock` (flock, as a long write of another rmh process does)
until the test ends; a second child opens the vault, searches it and reads a note, with a
deadline far below the hold. With an intent left by a dead process the open still waits for
the lock (recovery is the lock holder's business), which the second case checks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vault import Vault

REPO = Path(__file__).resolve().parents[3]
HOLD = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()")
OPEN = ("import sys; from pathlib import Path; from vault import Vault; "
        "v = Vault.open(Path(sys.argv[1])); "
        "print(v.search('alpha').hits[0].note, v.read('a.md').title); v.close()")


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "vault"
    root.mkdir()
    Vault.init(root).close()
    (root / "a.md").write_text("# a\n\nalpha note\n")
    with Vault.open(root) as vault:
        vault.search("alpha")  # synced before the hold
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root / ".rmh" / "write.lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield root
    finally:
        holder.kill()
        holder.wait()


def test_an_open_search_and_read_wait_for_no_writer(held: Path) -> None:
    done = subprocess.run([sys.executable, "-c", OPEN, str(held)], capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["a.md", "a"]


def test_an_open_with_an_intent_left_still_waits_for_the_lock(held: Path) -> None:
    intents = held / ".rmh" / "intents"
    intents.mkdir(exist_ok=True)
    (intents / "00000001.json").write_text(json.dumps({"kind": "unknown"}))
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", OPEN, str(held)], capture_output=True,
                       timeout=5, cwd=REPO)
