"""What a cell's write does to the file it replaces on the host (SBX6, session 32): a note keeps
its owner, group, ACL and user.* attributes and loses setuid/setgid; a FIFO, socket or device
node at a note's path is never replaced.

A note is replaced by a new file renamed over it (vault/storage/store.py). The replacement
used to get only the old permission bits: under a root supervisor a user's note became
root's (a 0600 note out of its owner's reach), a setuid note became a setuid-root file holding
the cell's bytes, and its ACL and extended attributes were dropped on every tier, as any user
(the ACL's mask then became the owning group's bits: a group the ACL shut out could read it).
"""

from __future__ import annotations

import os
import pwd
import socket
import stat
import struct
from pathlib import Path

import pytest

from .conftest import Host, run_attack

MODES = (0o600, 0o640, 0o644, 0o4755, 0o2755, 0o1644, 0o6750)
ATTRS = ("none", "acl", "user", "both")


def _acl() -> bytes:
    """system.posix_acl_access: owner rw-, user 65534 r--, group ---, mask r--, other ---."""
    entries = [(0x01, 6, 0xFFFFFFFF), (0x02, 4, 65534), (0x04, 0, 0xFFFFFFFF),
               (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def _owner() -> tuple[int, int]:
    """Who owns the notes: another user when the supervisor is root, else the supervisor."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    try:
        user = pwd.getpwnam("rmhtest")
        return user.pw_uid, user.pw_gid
    except KeyError:
        return 65534, 65534


def _metadata(path: Path) -> tuple[int, int, int, list[tuple[str, bytes]]]:
    info = os.lstat(path)
    attrs = [(a, os.getxattr(path, a)) for a in sorted(os.listxattr(path))]
    return info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode), attrs


def _prepare(path: Path, mode: int, attrs: str) -> None:
    uid, gid = _owner()
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    try:
        if attrs in ("acl", "both"):
            os.setxattr(path, "system.posix_acl_access", _acl())
        if attrs in ("user", "both"):
            os.setxattr(path, "user.origin", f"host {mode:o}".encode())
    except OSError as exc:
        pytest.skip(f"this file system keeps no ACL or user attribute: {exc}")


@pytest.mark.parametrize("attrs", ATTRS)
def test_a_cells_write_keeps_the_notes_owner_and_attributes(host: Host, attrs: str) -> None:
    notes = {mode: f"meta-{attrs}-{mode:o}.md" for mode in MODES}
    for mode, name in notes.items():
        host.vault.write(name, f"# {name}\n\nthe host's text\n")
        _prepare(host.vault_dir / name, mode, attrs)
    before = {name: _metadata(host.vault_dir / name) for name in notes.values()}
    res = run_attack(host, f"""
    for name in {sorted(notes.values())!r}:
        write(name, "#!/bin/sh\\necho the cell's text\\n")
    "written"
    """, vault_may_change=True, deadline_s=60)
    assert res.ok and res.value == "'written'", res.to_json()
    for name in notes.values():
        path = host.vault_dir / name
        assert "the cell's text" in path.read_text()
        uid, gid, bits, kept = before[name]
        after = _metadata(path)
        want = (uid, gid, bits & ~(stat.S_ISUID | stat.S_ISGID), kept)
        assert after == want, f"{host.tier} {name}: {before[name]} -> {after}"


SPECIAL = ("fifo", "socket", "device")


def _special(path: Path, kind: str) -> socket.socket | None:
    """Make a `kind` entry at `path`; a socket's listener is returned (kept open)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("only root makes a device node")
        os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen()
        return server
    return None


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_cells_write_never_replaces_a_fifo_socket_or_device(host: Host, kind: str) -> None:
    """A write (the REPL's `write(..., overwrite=True)`) renamed a new note over a FIFO, a
    listening socket or a device node at the note's path: the socket took no connection after."""
    path = host.vault_dir / f"special-{kind}.md"
    server = _special(path, kind)
    try:
        before = os.lstat(path)
        res = host.sb.exec(host.code(f"""
        try:
            write({path.name!r}, "a cell wrote this")
            got = "written"
        except HostError as exc:
            got = type(exc).__name__ + ": " + str(exc)
        got
        """), deadline_s=30)  # not run_attack: its digest of the vault would open the FIFO
        assert host.sb.exec("ping(21) * 2", deadline_s=30).value == "42"
        assert res.ok and res.value is not None and "PathRefused" in res.value, res.to_json()
        after = os.lstat(path)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode), f"{kind} replaced"
        assert after.st_ino == before.st_ino
        if server is not None:
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(str(path))
    finally:
        if server is not None:
            server.close()
        path.unlink()


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_a_cells_new_note_and_folders_belong_to_the_vaults_owner(host: Host, depth: int) -> None:
    """As root, a cell's new note (and each folder made for it) was root's in a folder another
    user owns: that user could then neither edit the note nor add a note to the folder."""
    if os.geteuid() != 0:
        pytest.skip("only a root supervisor makes files another user does not own")
    uid, gid = _owner()
    base = host.vault_dir / f"owned-{depth}"
    base.mkdir()
    os.chown(base, uid, gid)
    folders = [f"f{depth}-{i}" for i in range(depth)]
    note = "/".join([base.name, *folders, "new"])
    res = run_attack(host, f"write({note!r}, 'a cell wrote this')['note']",
                     vault_may_change=True, deadline_s=60)
    assert res.ok, res.to_json()
    made = [base.joinpath(*folders[: i + 1]) for i in range(depth)]
    made.append(base.joinpath(*folders, "new.md"))
    owners = {str(p.relative_to(host.vault_dir)): (p.stat().st_uid, p.stat().st_gid)
              for p in made}
    assert owners == {key: (uid, gid) for key in owners}, owners
