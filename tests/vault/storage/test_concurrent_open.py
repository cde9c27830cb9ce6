"""Opening is idempotent under concurrency (issue 27 item 4): several real processes opening a
fresh vault at the same instant all succeed, and the SQLite files they create (index.sqlite,
learned.sqlite, the shared embedding cache) end with the schema one process alone creates."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PROCESSES = 6
ROUNDS = 3

# Every child waits for the `go` file, then opens all three databases as rmh does.
OPENER = """
import os, sys, time
from pathlib import Path
from vault import LEDGER_FILE, Ledger, SharedEmbeddingCache, Vault
root, go, shared = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
while not go.exists():
    time.sleep(0.001)
errors = []
with Vault.open(root, watch=False) as v:
    Ledger.open(root / ".rmh" / LEDGER_FILE, clock=lambda: 0.0).close()
    cache = SharedEmbeddingCache(shared, on_error=errors.append)
    cache.get_embeddings("m", ["k"])
    v.sync()
assert not errors, errors
print("ok")
"""


def schema(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master "
                            "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").fetchall()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()
    return [("version", "", str(version)), *rows]


def open_together(root: Path, shared: Path, n: int) -> list[subprocess.CompletedProcess[str]]:
    go = root.parent / f"go-{root.name}"
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(root), str(go), str(shared)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=REPO) for _ in range(n)]
    time.sleep(0.5)  # let them import; the `go` file releases them together
    go.touch()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def fresh_vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    for i in range(5):
        (root / f"n{i}.md").write_text(f"note {i} links [[n{(i + 1) % 5}]]\n", "utf-8")
    return root


def test_processes_opening_a_fresh_vault_at_once_all_succeed_with_one_schema(
        tmp_path: Path) -> None:
    ref = fresh_vault(tmp_path / "ref")
    (single,) = open_together(ref, tmp_path / "ref-shared.sqlite", 1)
    assert single.returncode == 0, single.stderr
    files = [".rmh/index.sqlite", ".rmh/learned.sqlite"]
    expected = {f: schema(ref / f) for f in files}
    expected_shared = schema(tmp_path / "ref-shared.sqlite")
    for r in range(ROUNDS):
        root = fresh_vault(tmp_path / f"v{r}")
        shared = tmp_path / f"shared-{r}.sqlite"
        results = open_together(root, shared, PROCESSES)
        failures = [res.stderr[-2000:] for res in results if res.returncode != 0]
        assert not failures, failures
        assert all(res.stdout.strip() == "ok" for res in results)
        for f in files:
            assert schema(root / f) == expected[f]
        assert schema(shared) == expected_shared
