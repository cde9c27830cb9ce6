"""Opening is idempotent under concurrency (issue 27 item 4): several real processes opening a
fresh vault at the same instant (forked together from one that imported the vault,
tests/forks.py) all succeed, and the SQLite files they create (index.sqlite,
learned.sqlite, the shared embedding cache) end with the schema one process alone creates."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forks import ForkServer

REPO = Path(__file__).resolve().parents[3]
PROCESSES = 6
ROUNDS = 3

# Every child says it is ready (imported), waits for the `go` file, then opens all three
# databases as rmh does.
OPENER = """
import os, sys, time
from pathlib import Path
from vault import LEDGER_FILE, Ledger, SharedEmbeddingCache, Vault
root, go, shared = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
(go.parent / f"{go.name}.ready.{os.getpid()}").touch()  # imported: ready to open
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    """One Python that imported the vault: each opener is a real process forked from it."""
    with ForkServer("import vault", workdir=tmp_path_factory.mktemp("forks"),
                    cwd=REPO) as srv:
        yield srv


def open_together(server: ForkServer, root: Path, shared: Path, n: int
                  ) -> list[subprocess.CompletedProcess[str]]:
    go = root.parent / f"go-{root.name}"

    def release() -> None:  # the `go` file releases them together once all are ready
        deadline = time.monotonic() + 300
        while (len(list(root.parent.glob(f"{go.name}.ready.*"))) < n
               and time.monotonic() < deadline):
            time.sleep(0.01)
        go.touch()

    releaser = threading.Thread(target=release)
    releaser.start()
    try:
        return server.run_together([[str(root), str(go), str(shared)]] * n, code=OPENER,
                                   env=os.environ, cwd=REPO, timeout=300)
    finally:
        releaser.join()


def fresh_vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    for i in range(5):
        (root / f"n{i}.md").write_text(f"note {i} links [[n{(i + 1) % 5}]]\n", "utf-8")
    return root


def test_processes_opening_a_fresh_vault_at_once_all_succeed_with_one_schema(
        tmp_path: Path, server: ForkServer) -> None:
    ref = fresh_vault(tmp_path / "ref")
    (single,) = open_together(server, ref, tmp_path / "ref-shared.sqlite", 1)
    assert single.returncode == 0, single.stderr
    files = [".rmh/index.sqlite", ".rmh/learned.sqlite"]
    expected = {f: schema(ref / f) for f in files}
    expected_shared = schema(tmp_path / "ref-shared.sqlite")
    for r in range(ROUNDS):
        root = fresh_vault(tmp_path / f"v{r}")
        shared = tmp_path / f"shared-{r}.sqlite"
        results = open_together(server, root, shared, PROCESSES)
        failures = [res.stderr[-2000:] for res in results if res.returncode != 0]
        assert not failures, failures
        assert all(res.stdout.strip() == "ok" for res in results)
        for f in files:
            assert schema(root / f) == expected[f]
        assert schema(shared) == expected_shared
