"""A read-only vault is served, not refused: where this process may not write the vault's
`.rmh/` (files of another owner, a read-only mount), search, read, list, links, context,
status and doctor answer from the index as it is, learning is off (said once: a warning on
stderr, `read_only` in status and doctor, a line in the MCP instructions), and every write
is refused as `read_only_vault` (-32018) before it changes anything.

Real permissions: the vault is root's, served by the unprivileged user `rmhtest` through the
real CLI and a real `rmh serve` (root would bypass the modes); and root itself on a read-only
bind mount (EROFS binds root too). In process, a seam at the lowest layer (access(2) saying
the state folder is not writable, as the kernel does on a read-only mount) runs everywhere."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.as_user import USER, as_user, unprivileged_home
from tests.harness.test_cli_notes import rmh
from vault import ReadOnlyVault, Vault

pytestmark = pytest.mark.slow
NOTES = {"Alpha": "Alpha kiwi notes, see [[Beta]].\n", "Beta": "Beta mango notes.\n",
         "people/Caro": "Caro hikes. [[Alpha]]\n"}
READS: tuple[tuple[str, ...], ...] = (
         ("search", "kiwi", "--no-dense"), ("read", "Alpha"), ("list",), ("list", "folders"),
         ("links", "Alpha"), ("backlinks", "Beta"), ("context", "kiwi", "--budget", "40"),
         ("status", "--no-dense"), ("doctor",))
WRITES: tuple[tuple[str, ...], ...] = (("write", "New"), ("write", "Alpha", "--overwrite"),
          ("edit", "Alpha", "append", "--text", "more"), ("move", "Alpha", "Gamma"),
          ("delete", "Beta"), ("init",))


def tree(root: Path) -> dict[str, str]:
    """Every file under `root` (`.rmh/` included) -> sha256 of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def make_vault(root: Path) -> None:
    for name, text in NOTES.items():
        (root / f"{name}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    done = rmh("--vault", str(root), "init", "--no-dense")
    assert done.returncode == 0, done.stderr
    assert rmh("--vault", str(root), "search", "kiwi", "--no-dense").returncode == 0  # learned


def test_a_read_only_state_folder_in_process(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    root.mkdir()
    make_vault(root)
    before = tree(root)
    real_access = os.access

    def refusing(path: str | bytes | os.PathLike[str], mode: int, **kw: object) -> bool:
        if os.fsdecode(path).endswith(".rmh") and mode & os.W_OK:
            return False  # what access(2) says on a read-only mount, even to root
        return real_access(path, mode)

    monkeypatch.setattr(os, "access", refusing)
    with Vault.open(root) as v:
        assert v.read_only
        assert v.search("kiwi").hits[0].note == "Alpha.md"
        assert "mango" in v.read("Beta").text
        for write in (lambda: v.write("New", "new\n"), lambda: v.delete("Beta"),
                      lambda: v.move("Alpha", "Gamma"), lambda: v.write("Alpha", "x\n",
                                                                        overwrite=True)):
            with pytest.raises(ReadOnlyVault) as caught:
                write()
            assert caught.value.code_name == "read_only_vault"
        assert v.sync().generation > 0
    # Nothing written: no note, no index row, no lock file. (Root, whom only the seam stops,
    # lets SQLite make its read-lock files, an empty -wal and a -shm; the kernel refuses them
    # to rmhtest and on a read-only mount: the tests below.)
    after = {k: h for k, h in tree(root).items() if not k.endswith(("-shm", "-wal"))}
    assert after == before


@pytest.fixture
def foreign_vault() -> Iterator[tuple[Path, Path]]:
    """(root's vault, readable by everyone, writable by root only; `rmhtest`'s home)."""
    top = Path(tempfile.mkdtemp(prefix="rmh-ro-"))
    try:
        os.chmod(top, 0o755)
        home = unprivileged_home(top)
        root = top / "v"
        root.mkdir()
        make_vault(root)
        for p in [root, *root.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        yield root, home
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_another_owners_vault_through_the_cli(foreign_vault: tuple[Path, Path]) -> None:
    root, home = foreign_vault
    before = tree(root)
    v = ("--vault", str(root))
    for command in READS:
        r = as_user(home, *v, *command, "--json")
        assert r.returncode == 0, (command, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
        json.loads(r.stdout)
        if command[0] in ("search", "read", "context", "links"):
            assert r.stderr.count("learning is off") == 1, (command, r.stderr)
    found = json.loads(as_user(home, *v, "search", "kiwi", "--no-dense", "--json").stdout)
    assert found["hits"][0]["note"] == "Alpha.md"
    status = json.loads(as_user(home, *v, "status", "--no-dense", "--json").stdout)
    assert status["read_only"] is True and status["index"]["notes"] == 3
    assert "read only" in as_user(home, *v, "status", "--no-dense").stdout
    assert json.loads(as_user(home, *v, "doctor", "--json").stdout)["read_only"] is True
    for command in WRITES:
        r = as_user(home, *v, *command, "--json", stdin="replacement words\n")
        assert r.returncode == 1, (command, r.stdout, r.stderr)
        assert json.loads(r.stdout)["error"]["kind"] == "read_only_vault", (command, r.stdout)
        assert r.stderr.splitlines()[-1].startswith("rmh: read-only vault"), r.stderr
    assert tree(root) == before  # nothing half-written, nothing learned


def frames(*messages: dict[str, object]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def test_another_owners_vault_through_rmh_serve(foreign_vault: tuple[Path, Path]) -> None:
    root, home = foreign_vault
    before = tree(root)

    def call(rid: int, name: str, arguments: dict[str, object]) -> dict[str, object]:
        return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}

    r = as_user(home, "--vault", str(root), "serve", "--no-dense", stdin=frames(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(1, "search", {"query": "kiwi", "k": 3}),
        call(2, "read", {"note": "Beta"}),
        call(10, "search", {"query": "mango", "k": 3}),
        call(3, "list", {"what": "folders"}),
        call(4, "write", {"note": "New", "content": "new\n"}),
        call(5, "edit", {"note": "Alpha", "kind": "append", "text": "more"}),
        {"jsonrpc": "2.0", "id": 6, "method": "resources/read",
         "params": {"uri": "rmh://note/Alpha.md"}},
        {"jsonrpc": "2.0", "id": 7, "method": "vault.search", "params": {"query": "mango"}},
        {"jsonrpc": "2.0", "id": 8, "method": "vault.delete", "params": {"note": "Beta"}},
        {"jsonrpc": "2.0", "id": 9, "method": "status"}))
    assert r.returncode == 0, r.stderr
    out = {m["id"]: m for m in map(json.loads, r.stdout.splitlines())}
    assert "READ ONLY" in out[0]["result"]["instructions"]
    for rid in (1, 2, 3):
        assert not out[rid]["result"].get("isError"), out[rid]
    assert out[1]["result"]["structuredContent"]["hits"][0]["note"] == "Alpha.md"
    assert "read-only vault" in out[1]["result"]["structuredContent"]["notice"]  # said once
    assert "notice" not in out[2]["result"]["structuredContent"]
    assert "notice" not in out[10]["result"]["structuredContent"]
    for rid in (4, 5):
        error = out[rid]["result"]["structuredContent"]["error"]
        assert out[rid]["result"]["isError"] and error["kind"] == "read_only_vault", out[rid]
        assert error["code"] == -32018
    assert "kiwi" in out[6]["result"]["contents"][0]["text"]
    assert out[7]["result"]["hits"][0]["note"] == "Beta.md"
    assert out[8]["error"]["code"] == -32018
    assert out[8]["error"]["data"]["kind"] == "read_only_vault"
    assert out[9]["result"]["read_only"] is True
    assert "Traceback" not in r.stderr and r.stderr.count("learning is off") == 1, r.stderr
    assert tree(root) == before


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A vault behind a read-only bind mount (needs root; elsewhere this test skips saying
    why: the seam test above covers the same path)."""
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    make_vault(src)
    done = subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here ({done.stderr.strip()[:120] or 'not root'})")
    try:
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], capture_output=True,
                            text=True, check=False)
        if ro.returncode != 0:
            pytest.skip(f"cannot remount read-only here ({ro.stderr.strip()[:120]})")
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_root_on_a_read_only_mount(read_only_mount: Path) -> None:
    root = read_only_mount
    before = tree(root)
    v = ("--vault", str(root))
    r = rmh(*v, "search", "kiwi", "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["note"] == "Alpha.md"
    r = rmh(*v, "write", "New", "--json", stdin="new\n")
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "read_only_vault"
    assert json.loads(rmh(*v, "status", "--no-dense", "--json").stdout)["read_only"] is True
    assert tree(root) == before


def test_another_owners_files_in_a_shared_state_folder(
        foreign_vault: tuple[Path, Path]) -> None:
    """`.rmh/` writable by all, its files root's (0644): read only all the same, and nothing
    of this user's is left there (no SQLite -shm that would lock the owner out)."""
    root, home = foreign_vault
    os.chmod(root / ".rmh", 0o777)
    before = tree(root)
    v = ("--vault", str(root))
    r = as_user(home, *v, "search", "kiwi", "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["note"] == "Alpha.md"
    r = as_user(home, *v, "write", "New", "--json", stdin="new\n")
    assert json.loads(r.stdout)["error"]["kind"] == "read_only_vault"
    assert tree(root) == before
    uid = int(subprocess.check_output(["id", "-u", USER]))
    assert [p.name for p in (root / ".rmh").iterdir() if p.stat().st_uid == uid] == []
