"""vault.storage.store durability: SIGKILL mid-write leaves old or new bytes, never torn."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vault.storage.store import Store

REPO = Path(__file__).resolve().parents[3]
KILLS = 20
SIZE = 3 * 1024 * 1024

# The writer alternates two known contents of a few MB forever; it says "ready" once the
# first write is complete, so every kill lands while the file has a known value.
# The package root (vault/__init__) pulls in numpy/scipy (~1 s a start); the child binds a bare
# `vault` package to the real folder so `vault.storage.store` imports alone: 20 starts stay fast.
WRITER = """
import sys, types
from pathlib import Path
pkg = types.ModuleType("vault"); pkg.__path__ = [sys.argv[3]]; sys.modules["vault"] = pkg
from vault.storage.store import Store
store = Store(Path(sys.argv[1]))
size = int(sys.argv[2])
contents = ["A" * size, "b\\n" * (size // 2 + 7)]
store.write_text("note.md", contents[0])
print("ready", flush=True)
i = 1
while True:
    store.write_text("note.md", contents[i % 2])
    i += 1
"""


def test_sigkill_never_tears_a_note(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    contents = {b"A" * SIZE, b"b\n" * (SIZE // 2 + 7)}
    rng = random.Random(1234)
    seen: set[bytes] = set()
    for _ in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(vault), str(SIZE), str(REPO / "vault")],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line == b"ready\n", proc.stderr.read() if proc.stderr else b""
            time.sleep(rng.uniform(0.0, 0.08))  # a random moment inside the write loop
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL
        data = (vault / "note.md").read_bytes()
        assert data in contents, f"torn note: {len(data)} bytes"
        seen.add(data)
    leftovers = sorted(p for p in os.listdir(vault) if ".rmh-tmp-" in p)
    store = Store(vault)
    removed = store.clean_stale_temps()
    assert removed == leftovers
    assert sorted(os.listdir(vault)) == [".rmh", "note.md"]  # .rmh: the write lock
    assert store.read_bytes("note.md") in contents
    assert store.scan().files[0].path == "note.md"
    # both contents were observed at kill time at least once: the kills landed mid-loop
    assert seen == contents


# One store change run with Store(fault_after=N): SIGKILLed right after its N-th file
# operation (the fault-injection seam), on the folder-descriptor path (storage/anchored.py).
CHANGE = """
import sys, types
from pathlib import Path
pkg = types.ModuleType("vault"); pkg.__path__ = [sys.argv[4]]; sys.modules["vault"] = pkg
from vault.storage.store import Store
store = Store(Path(sys.argv[1]), fault_after=int(sys.argv[2]))
op = sys.argv[3]
if op == "write":
    store.write_text("sub/b.md", "bravo 2\\n")
elif op == "guarded":
    import hashlib
    store.write_text("sub/b.md", "bravo 2\\n",
                     expected_hash=hashlib.sha256(b"bravo\\n").hexdigest())
elif op == "create":
    store.write_text("new/deep/c.md", "charlie\\n", create_only=True)
elif op == "move":
    store.move("sub/b.md", "other/B.md")
elif op == "trash":
    store.trash("sub/b.md")
else:
    store.erase("sub/b.md")
print(store.ops, flush=True)
"""
# The file operations each change makes: a temp written and fsynced, its rename (a create:
# link, then the temp unlinked), a folder fsync per folder; a move or trash: link, the old
# name renamed aside, the aside unlinked (FIX37: no unlink by name after the check), fsync of
# both folders. A guarded write exchanges the temp with the note (its rename), then unlinks
# the replaced file the temp's name then holds (NOTES-MOVE3 §5).
CHANGES = {"write": 3, "guarded": 4, "create": 4, "move": 5, "trash": 5, "erase": 2}


def _notes(vault: Path) -> dict[str, bytes]:
    """Every file under the vault but the write lock and temporaries."""
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file() and ".rmh-tmp-" not in p.name and p.parent.name != ".rmh"}


@pytest.mark.parametrize("op", sorted(CHANGES))
def test_a_change_killed_after_each_file_operation_leaves_old_or_new(
        tmp_path: Path, op: str) -> None:
    """Killed after each of its file operations, a change leaves the notes as they were or
    as the change leaves them (a move or trash killed between its link and its unlink: the
    note at both names, one file), and its temporary is swept; the count of operations is
    what the seam counted before the writes went through folder descriptors."""
    def fresh(name: str) -> Path:
        vault = tmp_path / name
        (vault / "sub").mkdir(parents=True)
        (vault / "a.md").write_text("alpha\n", encoding="utf-8")
        (vault / "sub" / "b.md").write_text("bravo\n", encoding="utf-8")
        return vault

    def run(vault: Path, n: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", CHANGE, str(vault), str(n), op,
                               str(REPO / "vault")], capture_output=True, text=True,
                              cwd=REPO, timeout=60)

    before = _notes(fresh("before"))
    done = fresh("after")
    whole = run(done, 10_000)
    assert whole.returncode == 0, whole.stderr
    assert int(whole.stdout) == CHANGES[op]
    after = _notes(done)
    assert after != before
    for n in range(1, CHANGES[op] + 1):
        vault = fresh(f"kill{n}")
        killed = run(vault, n)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        now = _notes(vault)
        both = {**before, **after}
        linked = now == both and op in ("move", "trash")
        assert now in (before, after) or linked, (n, now)
        Store(vault).clean_stale_temps()
        assert not [p for p in vault.rglob("*") if ".rmh-tmp-" in p.name]
