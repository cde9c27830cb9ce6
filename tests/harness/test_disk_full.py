"""A full disk says so (issue 27 item 7): `disk_full` (-32016) on every surface and one line
from the CLI, never a traceback; read-only commands keep answering (the index is read as it
is, learning is off for the run); a write that landed is reported as written, with a
warning; `rmh serve` exits 0 at end of input.

The real thing where the machine allows it: a 2 MiB tmpfs filled to the last byte (`mount`
needs root: CI runs as root); elsewhere that test skips saying why. A seam at the lowest layer
(SQLite's connection raising SQLITE_FULL, `os.fsync` raising ENOSPC) runs everywhere."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.errors import to_mcp, to_repl, to_rpc
from tests.harness.test_cli_notes import ROOT, rmh
from tests.harness.test_server_e2e import Server
from vault import DiskFull, Vault

pytestmark = pytest.mark.slow
READ_ONLY = (("read", "Alpha"), ("search", "kiwi", "--no-dense"), ("links", "Alpha"),
             ("backlinks", "Beta"), ("doctor",))


def tmpfs(tmp_path: Path, size: str, instead: str = "") -> Iterator[Path]:
    """A real tmpfs of `size` mounted at `tmp_path`/mnt for the test, unmounted after; the
    test is skipped where none can be mounted (not root), saying what covers it `instead`."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:120] or 'not root'})"
                    + instead)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    yield from tmpfs(tmp_path, "2m", "; the seam tests below cover the same paths")


def fill(folder: Path) -> None:
    """Fill the file system holding `folder` to the last byte."""
    for name, chunk in (("filler", 4096), ("filler-tail", 1)):
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            while True:
                os.write(fd, b"x" * chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
    assert os.statvfs(folder).f_bavail == 0


def used_vault(root: Path, tmp: Path) -> None:
    """A vault with an index and a ledger that has events (a served session)."""
    root.mkdir()
    for name in ("Alpha", "Beta", "Gamma"):
        (root / f"{name}.md").write_text(f"{name} kiwi notes [[Beta]]\n", encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    server = Server(root, tmp)
    try:
        server.call("session.start", {"session": "s1"}, rid=1)
        assert server.call("vault.search", {"query": "kiwi"}, rid=2)["result"]["hits"]
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0


def test_a_full_tmpfs(small_disk: Path, tmp_path: Path) -> None:
    root = small_disk / "v"
    used_vault(root, tmp_path)
    # A server that opened its ledger with room to spare, then the disk fills under it.
    (tmp_path / "early").mkdir()
    early = Server(root, tmp_path / "early")
    assert early.call("vault.search", {"query": "kiwi"}, rid=1)["result"]["hits"]
    fill(small_disk)
    out = early.call("vault.search", {"query": "kiwi notes"}, rid=2)
    assert out["result"]["hits"], out  # its learning event is lost, with a warning
    out = early.call("vault.write", {"note": "Y", "content": "y\n"}, rid=3)
    assert out["error"]["data"]["kind"] == "disk_full", out
    early.stdin.close()  # end of input: session end and checkpoint fail, the exit is clean
    assert early.proc.wait(timeout=60) == 0
    log = early.stderr_path.read_text()
    assert "Traceback" not in log and "disk full" in log, log
    fill(small_disk)  # what its exit freed (SQLite's -shm file) is taken again
    v = ("--vault", str(root))
    for command in READ_ONLY:
        r = rmh(*v, *command)
        assert r.returncode == 0, (command, r.stderr)
        assert "Traceback" not in r.stderr  # a warning when a write it tried had no room
    r = rmh(*v, "write", "New", "--json", stdin="new words\n")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") >= 1 and r.stderr.splitlines()[-1].startswith("rmh: disk full")
    assert json.loads(r.stdout)["error"]["kind"] == "disk_full"
    assert not (root / "New.md").exists()
    r = rmh(*v, "learning", "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "disk_full"
    server = Server(root, tmp_path)
    try:
        assert "result" in server.call("status", rid=1)
        assert server.call("vault.search", {"query": "kiwi"}, rid=2)["result"]["hits"]
        assert "result" in server.call("vault.read", {"note": "Alpha"}, rid=3)
        out = server.call("vault.write", {"note": "X", "content": "x\n"}, rid=4)
        assert out["error"]["code"] == -32016 and out["error"]["data"]["kind"] == "disk_full"
    finally:
        server.stdin.close()
        assert server.proc.wait(timeout=60) == 0
    log = server.stderr_path.read_text()
    assert "Traceback" not in log and "disk full" in log


def _notes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".rmh" not in p.parts}


def test_a_full_disk_postpones_the_open_s_sync(small_disk: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An index that owes writes when it is opened (a re-parse for a newer parser, a note
    edited in another editor) on a full disk: every read-only command still answers, from
    the index as it is, with a warning (before: `disk full` and exit 1 for every command,
    the open's sync was the one write not postponed); no note changes; once there is room
    the next call writes both, in a long-lived process as in the next command."""
    from tests.vault.storage.test_reparse import _old_vault, _version
    from vault.notes.note import PARSE

    root = small_disk / "v"
    _old_vault(root, monkeypatch, extra=20)
    (root / "Target One.md").write_text("t zebra\n", encoding="utf-8")  # edited elsewhere
    before = _notes(root)
    fill(small_disk)
    v = ("--vault", str(root))
    for command in (("read", "hub"), ("links", "hub"), ("search", "note", "--no-dense"),
                    ("list",), ("backlinks", "Target One"), ("doctor",)):
        r = rmh(*v, *command)
        assert r.returncode == 0, (command, r.stderr)
        assert "Traceback" not in r.stderr and "index not brought up to date" in r.stderr, \
            (command, r.stderr)
    assert rmh(*v, "links", "hub").stdout.count("-> Target One.md") == 1  # the old parse
    r = rmh(*v, "index", "--no-dense")  # asked to write the index: it says it could not
    assert r.returncode == 1 and r.stderr.splitlines()[-1].startswith("rmh: disk full"), r.stderr
    assert _version(root) is None and _notes(root) == before
    with Vault.open(root) as served:  # a long-lived process: the open postponed, then room
        assert [ln.resolved for ln in served.links("hub")] == ["Target One.md"]
        assert served.doctor()["sync_errors"][0].startswith("index not brought up to date")
        for name in ("filler", "filler-tail"):
            os.remove(small_disk / name)
        assert len(served.links("hub")) == 3 and served.doctor()["sync_errors"] == []
    fill(small_disk)  # full again: the index owes nothing now, so nothing is postponed
    r = rmh(*v, "links", "hub")
    assert r.returncode == 0 and "not brought up to date" not in r.stderr, r.stderr
    assert "-> Target One.md (2 times)" in r.stdout and "people/Robert.md" in r.stdout
    for name in ("filler", "filler-tail"):
        os.remove(small_disk / name)
    assert _version(root) == str(PARSE)
    found = rmh(*v, "search", "zebra", "--no-dense", "--json")
    assert "Target One.md" in found.stdout, found.stdout
    assert _notes(root) == before


class FullConnection:
    """A sqlite3 connection whose writes fail as SQLite's own SQLITE_FULL (the seam)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.lstrip().split(None, 1)[0].upper() in ("BEGIN", "INSERT", "UPDATE", "DELETE"):
            raise sqlite3.OperationalError("database or disk is full")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_a_write_that_landed_is_written_with_a_warning(tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    v = Vault.init(tmp_path / "v")
    v.write("Beta", "Beta here\n")
    v.index._conn = FullConnection(v.index._conn)  # type: ignore[assignment]
    record = v.write("Alpha", "Alpha links [[Beta]]\n")
    assert (v.root / "Alpha.md").read_text() == "Alpha links [[Beta]]\n"
    assert record.warning is not None and "not yet indexed" in record.warning
    assert record.to_json()["warning"] == record.warning
    assert [ln.resolved for ln in record.links] == ["Beta.md"]
    assert "disk full" in caplog.text
    # Reads and searches go on with the index as it is; the delete lands, with a warning.
    assert v.read("Beta").text == "Beta here\n"
    assert v.delete("Beta") == ".rmh/trash/Beta.md" and not (v.root / "Beta.md").exists()
    v.close()
    with Vault.open(tmp_path / "v") as again:  # room again: the next sync catches up
        assert again.read("Alpha").text == "Alpha links [[Beta]]\n"
        assert [h.note for h in again.search("beta").hits] == ["Alpha.md"]


SEAM = """
import errno, os, sys
real = os.fsync
def full(fd):
    raise OSError(errno.ENOSPC, "No space left on device")
os.fsync = full
from harness.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_enospc_at_the_lowest_layer_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Alpha.md").write_text("Alpha kiwi\n", encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", SEAM, "--vault", str(root), "write", "New",
                        "--json"], input="x\n", capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=120, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[-1].startswith("rmh: disk full"), r.stderr
    assert json.loads(r.stdout)["error"]["kind"] == "disk_full"
    assert not (root / "New.md").exists() and not [
        p for p in root.iterdir() if "rmh-tmp" in p.name]


def test_every_surface_types_a_full_disk() -> None:
    for exc in (OSError(errno.ENOSPC, "No space left on device"),
                sqlite3.OperationalError("database or disk is full"), DiskFull("index.sqlite")):
        err = to_rpc(exc).to_json()
        assert err["code"] == -32016 and err["data"]["kind"] == "disk_full"
        mcp = to_mcp(exc, "write")
        assert mcp["isError"] and mcp["structuredContent"]["error"]["code"] == -32016
        assert to_repl(exc, "write").type_name == "DiskFull"
    denied = to_rpc(OSError(errno.EACCES, "Permission denied", "/tmp/host-only/x.md")).to_json()
    assert denied["code"] == -32017 and denied["data"]["path"] == "x.md"  # no host path


def test_a_full_tmpfs_after_an_edit_made_outside_rmh(small_disk: Path, tmp_path: Path) -> None:
    """A note edited in another editor before the disk filled: the sync that opens the vault
    (and doctor's, status's) had a change to write and failed as disk full, so every read,
    search and doctor failed, not only writes. They answer from the index as it is, with a
    warning; once there is room, the next call indexes the edit."""
    root = small_disk / "v"
    used_vault(root, tmp_path)
    with open(root / "Beta.md", "a", encoding="utf-8") as fh:
        fh.write("papaya grows here too\n")
    fill(small_disk)
    v = ("--vault", str(root))
    for command in (*READ_ONLY, ("status",)):
        r = rmh(*v, *command)
        assert r.returncode == 0, (command, r.stderr)
        assert "Traceback" not in r.stderr and "disk full" in r.stderr
    assert "papaya" in rmh(*v, "read", "Beta").stdout  # the file itself, as it is now
    for name in ("filler", "filler-tail"):
        (small_disk / name).unlink()
    r = rmh(*v, "search", "papaya", "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    assert [h["note"] for h in json.loads(r.stdout)["hits"]][:1] == ["Beta.md"]
