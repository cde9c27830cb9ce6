"""The vault's write lock: one advisory lock every rmh writer holds from its check to its rename.

`VAULT/.rmh/write.lock` (mode 0600, created on first use) is `fcntl.flock(LOCK_EX)`ed by the
store around every change it makes to the folder (storage/store.py: a guarded write holds it
from its hash check to its rename; a move or delete, and a whole multi-file operation through
the intent journal, hold it from their first check to their last change). Every rmh process
(CLI, `rmh serve`, REPL host functions, ingest, lifecycle) writes through the store, so none
can forget it; the kernel drops the lock of a killed process at once. It is re-entrant within
one `WriteLock` (a move that writes its referrers holds it once); two `WriteLock`s, in one
process or two, exclude each other. Editors that take no lock (Obsidian) are not stopped by
it: the store checks the file's identity again right before each rename (README, "Storage").
Linux/macOS (flock).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
from collections.abc import Callable, Iterator

from ..errors import NotAVault, PathRefused, ReadOnlyVault

LOCK_FILE = "write.lock"
LOCK_MODE = 0o600
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class WriteLock:
    """The lock file `root/state/LOCK_FILE`, held re-entrantly. The state folder is created
    when missing (never the vault root: NotAVault when it is gone, moved away while open);
    one whose realpath leaves `root` is refused (PathRefused), and the lock file
    itself is never followed through a symlink. `read_only` (a vault this process may not
    write): nothing is created, and taking the lock raises ReadOnlyVault, so every write is
    refused before its first change."""

    def __init__(self, root: str, state: str, *, read_only: bool = False,
                 held: str | None = None) -> None:
        self.read_only = read_only
        self.root = root
        self.lexical = os.path.join(root, state)  # what the vault shows at the name
        self.folder = held or self.lexical  # `held`: the folder opened (state_anchor.py)
        self.label = state  # what messages call it
        self.path = os.path.join(self.folder, LOCK_FILE)
        self._mutex = threading.RLock()  # threads of this process queue here first
        self._depth = 0
        self._owner: int | None = None  # the thread holding it (the mutex's owner)
        self._fd: int | None = None
        # run holding the lock each time this process takes it from free (the store's owner
        # sets it: intents.finish_left, the intents a dead holder left finished first)
        self.on_acquire: Callable[[], None] | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the block (blocking until every other holder lets go)."""
        with self._mutex:
            if self._depth == 0:
                self._fd = self._acquire()
                self._owner = threading.get_ident()
            self._depth += 1
            try:
                if self._depth == 1 and self.on_acquire is not None:
                    self.on_acquire()
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._owner = None
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    os.close(fd)  # closing drops the flock

    @property
    def is_held(self) -> bool:
        return self._depth > 0

    @property
    def held_here(self) -> bool:
        """Whether the calling thread holds it (an operation of this thread is under way)."""
        return self._depth > 0 and self._owner == threading.get_ident()

    def create(self) -> None:
        """Create the lock file now when its folder exists (a vault's `.rmh/`), so that the
        first write adds no file."""
        if os.path.isdir(self.folder) and not self.read_only:
            os.close(self._open())

    def _open(self) -> int:
        real = os.path.realpath(self.lexical)
        if os.path.commonpath([self.root, real]) != self.root:
            raise PathRefused(self.label, "symlink leaves the vault")
        try:  # the state folder only: a vault root gone since the open (moved away, removed)
            if self.folder == self.lexical:  # is never made again, an empty vault beside the
                os.mkdir(self.lexical)  # real one; a held folder renamed away is never made
            elif not os.path.isdir(self.root):  # again at its name either (an empty `.rmh`
                raise FileNotFoundError(self.root)  # that then stood in the held one's place)
        except FileExistsError:
            pass
        except FileNotFoundError as exc:
            raise NotAVault(self.root, "missing: moved or removed while open") from exc
        try:
            return os.open(self.path, _FLAGS, LOCK_MODE)
        except FileNotFoundError as exc:  # the folder held was removed while open
            raise NotAVault(self.root, f"its {self.label} folder was removed while open"
                            ) from exc
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise PathRefused(f"{self.label}/{LOCK_FILE}",
                              "symlink loop or symlink swapped in") from exc

    def _acquire(self) -> int:
        if self.read_only:
            raise ReadOnlyVault()
        fd = self._open()
        try:
            if os.fstat(fd).st_mode & 0o777 != LOCK_MODE:
                with contextlib.suppress(OSError):  # another owner's file: leave its mode
                    os.fchmod(fd, LOCK_MODE)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd
