"""The vault's own folder (`.rmh/`) held open from the open on: every state path goes through it.

A process opened over a vault another user owns (root's long-lived `rmh serve`) checked at the
open that `.rmh` is no symlink leaving the vault, then joined `root/.rmh/NAME` by path on every
save. The owner could then rename `.rmh` away and put a symlink to any folder in its place:
note writes were refused (the write lock's realpath check), but search and sync made root-owned
derived files (`stat-columns.bin`, `link-edges.npz`, `name-table-*.bin`, `note-columns.bin`) in
that folder, replacing files of those names there; pointed at another vault's `.rmh`, they
overwrote its derived files (SBX12, session 37).

Now the store opens `.rmh` once (`O_PATH | O_DIRECTORY | O_NOFOLLOW` on its realpath), requires
the folder it got to lie inside the vault (a swap between the open's check and this open is
refused) and to be owned by the vault's owner or by this process, and `path` names it as
`/proc/self/fd/N`: the kernel resolves that through the held
descriptor, never through the name `.rmh`, so an open, rename, unlink or memory map of
`path / NAME` lands in the folder that was opened whatever now sits at `root/.rmh`. SQLite
resolves a `/proc/self/fd` name to the folder's current path itself, so its files are checked
after the connect instead (held_sqlite.py). `check` (before every call, `Store.check_root`)
refuses with PathRefused while `root/.rmh` names another folder or none, so the server says
why instead of serving from a folder the vault no longer shows; put back, it serves again.
Without `/proc` (or before `.rmh` exists) `path` is the plain `root/.rmh` and `check` alone
guards it."""

from __future__ import annotations

import errno
import os
import stat
import threading
import weakref
from pathlib import Path

from ..errors import PathRefused, StateRefused
from .state_folder import LINK_FIX, state_folder

STATE_DIR = ".rmh"

BACK_FIX = "put the vault's own .rmh folder back in its place, then run the command again"
OWNER_FIX = ("give the folder back to the vault's owner (`chown -R`), or put the vault's own .rmh "
             "back in its place")

_FLAGS = (getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0))  # O_PATH: no read right needed (another's vault)


class StateAnchor:
    """`root/name` held open (module docstring): `path` the folder to join state names to,
    `check()` PathRefused once `root/name` no longer names it. `required` (a vault's open,
    which found the folder): PathRefused when it cannot be held, never the plain path."""

    def __init__(self, root: str, name: str, *, required: bool = False) -> None:
        self.name = name
        self.lexical = os.path.join(root, name)
        self.path = self.lexical
        self._id: tuple[int, int] | None = None
        try:
            fd = os.open(os.path.realpath(self.lexical), _FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            if required:  # the open found it: gone or swapped since
                raise StateRefused(self.lexical, "moved or swapped while the vault opened",
                                   BACK_FIX) from None
            return  # no state folder yet (a bare Store): the plain path, made later by the lock
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise StateRefused(self.lexical, "a symlink swapped in while the vault opened",
                               LINK_FIX) from None
        try:
            info = os.fstat(fd)
            owner = os.stat(root).st_uid
            if info.st_uid not in (owner, os.geteuid()):
                raise StateRefused(self.lexical, f"owned by uid {info.st_uid}, neither the "
                                   f"vault's owner ({owner}) nor this process", OWNER_FIX)
            anchored = f"/proc/self/fd/{fd}"
            try:
                held = os.path.samestat(os.stat(anchored), info)
            except OSError:
                held = False
            real = os.path.realpath(anchored if held else self.lexical)  # where it is now
            if os.path.commonpath([root, real]) != root:  # swapped between the open's check
                raise StateRefused(self.lexical, "symlink leaves the vault", LINK_FIX)  # and this
        except BaseException:
            os.close(fd)
            raise
        self._id = (info.st_dev, info.st_ino)
        if not held:  # no /proc: the name alone, checked before every call
            os.close(fd)
            return
        self._fd = fd
        self.path = anchored
        self._closer = weakref.finalize(self, os.close, fd)

    def check(self) -> None:
        """PathRefused when `root/name` (its symlink inside the vault followed) no longer
        names the folder opened: renamed away, removed, or another folder or a symlink put
        in its place."""
        if self._id is None:
            return
        try:
            info = os.stat(self.lexical)
        except OSError:
            raise StateRefused(self.lexical, "moved or removed while open; put it back to go "
                               "on", BACK_FIX) from None
        if not stat.S_ISDIR(info.st_mode) or (info.st_dev, info.st_ino) != self._id:
            raise StateRefused(self.lexical, "another folder or a symlink took its place "
                               "while open; nothing of rmh's is read or written there", BACK_FIX)

    def close(self) -> None:
        """Let the descriptor go (the vault closed): `path` then names nothing of it."""
        closer = getattr(self, "_closer", None)
        if closer is not None:
            closer()
            self.path = self.lexical


_HELD: dict[str, list[StateAnchor]] = {}  # realpath of a vault -> its anchors, newest last
_HELD_LOCK = threading.Lock()


def held_state(root: Path, *, create: bool = False) -> Path:
    """`root/.rmh` for a file of rmh's own outside the store (the learning ledger, the hooks'
    index and journals, the LLM entity cache, the hooks daemon's log), as `/proc/self/fd/N`
    of that folder held open (module docstring): a file opened, made, removed or connected
    (`connect_state`) under it lands in the folder checked to be the vault's, even when
    another process swaps `.rmh` for a symlink in between (STORE13, session 38: the ledger's
    `-wal`/`-shm` and the daemon's log were made in the folder a symlink named). Found or
    made as `Vault.state_dir` (NotAVault, PathRefused); PathRefused while `root/.rmh` is not
    the folder held and cannot be held anew. The descriptors stay open for the process's
    life (a path handed out never names a reused descriptor); a new one only when `.rmh`
    was replaced. Without `/proc`: the plain path, as before."""
    state_folder(root, STATE_DIR, create=create)
    real = os.path.realpath(root)
    with _HELD_LOCK:
        anchors = _HELD.setdefault(real, [])
        if anchors:
            try:
                anchors[-1].check()
                return Path(anchors[-1].path)
            except PathRefused:
                pass
        anchor = StateAnchor(real, STATE_DIR, required=True)
        anchor.check()  # the folder held is the one `.rmh` names now
        anchors.append(anchor)
        return Path(anchor.path)
