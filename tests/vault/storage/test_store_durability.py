"""vault.storage.store durability: SIGKILL mid-write leaves old or new bytes, never torn."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

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
