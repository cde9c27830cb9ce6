"""The vault's `.rmh` swapped for a symlink while `rmh serve` runs (SBX12, session 37).

Before: the check that `.rmh` is no symlink leaving the vault was made at the open only. Root
serving a vault another user owns: the owner renamed `.rmh` away and put a symlink to another
folder in its place; note writes were refused, but the next search made root-owned derived
files (`stat-columns.bin`, `link-edges.npz`, `name-table-*.bin`, `note-columns.bin`) in that
folder, replacing files of those names; pointed at another vault's `.rmh`, they overwrote its
derived files. Now every state file goes through the `.rmh` the open held
(storage/state_anchor.py), every call is answered with PathRefused naming `.rmh` while another
folder has its name, nothing outside the vault is created or changed (also when the server
stops while swapped), and once `.rmh` is back the vault serves and writes as before. Real
`rmh serve --no-dense`; as root the vault is owned by `rmhtest` (the defect's case), as any
other user by that user."""

from __future__ import annotations

import hashlib
import os
import pwd
from pathlib import Path
from typing import Any

import pytest

from tests.harness.raw_server import RawServer
from tests.harness.test_cli_notes import rmh

pytestmark = pytest.mark.slow

PLANTED = ("stat-columns.bin", "link-edges.npz", "note-columns.bin", "name-table-names.bin",
           "catch-up.json", "write.lock")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("vault.search", {"query": "kiwi"}), ("vault.search", {"query": "mango"}),
    ("vault.write", {"note": "Stray", "content": "stray [[Alpha]]\n"}),
    ("vault.edit", {"note": "Alpha", "kind": "append", "text": "more kiwi\n"}),
    ("vault.list", {}), ("vault.read", {"note": "Beta"}), ("vault.backlinks", {"note": "Beta"})]


def _owner() -> tuple[int, int]:
    """rmhtest's ids as root (the vault of another user), else this process's."""
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("rmhtest")
        except KeyError:
            pytest.skip("no user rmhtest (.ci/run creates it)")
        return user.pw_uid, user.pw_gid
    return os.getuid(), os.getgid()


def _give(path: Path, ids: tuple[int, int]) -> None:
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), *ids)
    os.lchown(path, *ids)


def _snapshot(folder: Path) -> dict[str, tuple[int, int, int, str]]:
    """Every entry below `folder`: mode, owner, mtime and content hash."""
    out = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path.relative_to(folder))] = (info.st_mode, info.st_uid, info.st_mtime_ns,
                                              hashlib.sha256(data).hexdigest())
    return out


def _vault(root: Path, text: str, *, searched: bool = True) -> Path:
    root.mkdir()
    (root / "Alpha.md").write_text(f"Alpha {text}, see [[Beta]].\n", encoding="utf-8")
    (root / "Beta.md").write_text("Beta mango.\n", encoding="utf-8")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    if searched:  # its derived files made
        assert rmh("--vault", str(root), "search", text).returncode == 0
    return root


@pytest.mark.parametrize(("target", "when"), [("outside", "early"), ("other vault", "early"),
                                               ("outside", "late"), ("outside", "stop")])
def test_a_state_folder_swapped_while_served_is_never_written_through(
        tmp_path: Path, target: str, when: str) -> None:
    """`early`: swapped once the server is up, before its first search (none made the
    derived files yet); `late`: after a search and a write; `stop`: as late, then the server
    stops while swapped (its close saves the stat columns)."""
    ids = _owner()
    vault = _vault(tmp_path / "v", "kiwi", searched=when != "early")
    _give(vault, ids)
    if target == "outside":
        dest = tmp_path / "outside"
        dest.mkdir()
        for name in PLANTED:
            (dest / name).write_bytes(b"precious " + name.encode())
            (dest / name).chmod(0o600)
    else:  # another vault of this process's own, its derived files built
        dest = _vault(tmp_path / "other", "papaya") / ".rmh"
    before = _snapshot(dest)
    server = RawServer(vault)
    try:
        if when == "early":
            assert server.call("ping", {})["result"] is not None
        else:
            assert server.call("vault.search", {"query": "kiwi"})["result"]["hits"]
            assert "result" in server.call("vault.write", {"note": "First", "content": "one\n"})
        os.rename(vault / ".rmh", vault / ".rmh-away")  # what the vault's owner may do
        os.symlink(dest, vault / ".rmh")
        os.lchown(vault / ".rmh", *ids)
        answers = [server.call(method, params) for method, params in CALLS]  # each answered
        assert _snapshot(dest) == before, "a file outside the vault was made or changed"
        if when == "stop":
            assert "Traceback" not in server.close()
            assert _snapshot(dest) == before, "the server's close wrote outside the vault"
        for (method, _), answer in zip(CALLS, answers, strict=True):
            assert ".rmh" in str(answer.get("error")), (method, answer)
        if when == "stop":
            return
        os.unlink(vault / ".rmh")
        os.rename(vault / ".rmh-away", vault / ".rmh")
        hits = server.call("vault.search", {"query": "kiwi"})["result"]["hits"]
        assert [h["note"] for h in hits][:1] == ["Alpha.md"]
        assert "result" in server.call("vault.write", {"note": "Second", "content": "two\n"})
        listed = server.call("vault.list", {})["result"]["items"]
        assert [i["note"] for i in listed] == ["Alpha.md", "Beta.md",
                                                *(["First.md"] if when != "early" else []),
                                                "Second.md"]
        assert "Traceback" not in server.close()
    finally:
        if server.p.poll() is None:
            server.p.kill()
            server.p.wait()
    assert _snapshot(dest) == before
