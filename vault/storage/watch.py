"""Change notification for the vault folder (Linux inotify), so a no-op sync costs no scan.

Without it, every query stats every note (about 0.14 s at 10k notes). With it, the facade asks
`drain()` before a query: the kernel queues an event during the very write(2)/rename(2) that
changes a file, so anything written before the query is in the queue when we read it (no
thread, no polling, no clock). `drain()` returns the vault-relative `.md` paths that changed,
or None when only a full scan can tell (queue overflow, a folder created, moved or deleted, a
watch lost): the caller then falls back to `sync()` over the whole folder.

Platforms without inotify (or with its watch limit exhausted) get `Watcher.start() -> None`:
the facade then scans on every query, as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys

from .store import Store

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ISDIR = 0x40000000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
        | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
_FOLDER_CHANGES = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len
MAX_WATCHES = 50_000


class Watcher:
    """inotify watches on every folder of one vault; read without blocking."""

    def __init__(self, fd: int, libc: ctypes.CDLL, store: Store) -> None:
        self._fd = fd
        self._libc = libc
        self._store = store
        self._folders: dict[int, str] = {}
        self._broken = False

    @classmethod
    def start(cls, store: Store) -> Watcher | None:
        """Watch `store`'s folders, or None where inotify is unavailable or the folders too many."""
        if not sys.platform.startswith("linux"):
            return None
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            fd = int(libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watcher = cls(fd, libc, store)
        if not watcher._watch_all():
            watcher.close()
            return None
        return watcher

    def _watch_all(self) -> bool:
        folders = self._store.folders()
        if len(folders) > MAX_WATCHES:
            return False
        for rel in folders:
            path = os.path.join(self._store.root, rel) if rel else str(self._store.root)
            wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(path), MASK))
            if wd < 0:
                if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                    continue  # vanished between the walk and the watch: the next scan sees it
                return False
            self._folders[wd] = rel
        return True

    def drain(self) -> set[str] | None:
        """Changed `.md` paths since the last drain, or None when a full scan is needed."""
        changed: set[str] = set()
        full = self._broken
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                full = True
                break
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + size]
                offset += _HEADER.size + size
                name = os.fsdecode(raw.rstrip(b"\0"))
                folder = self._folders.get(wd)
                if mask & IN_Q_OVERFLOW:
                    full = True
                elif folder is None:
                    continue  # a watch we removed ourselves (its IN_IGNORED), or stale
                elif mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
                    full = True
                    self._folders.pop(wd, None)
                elif mask & IN_ISDIR:
                    if mask & _FOLDER_CHANGES and not name.startswith("."):
                        full = True  # a folder appeared, left or moved: rescan and rewatch
                elif name.lower().endswith(".md") and not name.startswith("."):
                    changed.add(f"{folder}/{name}" if folder else name)
        if full:
            self._rewatch()
            return None
        return changed

    def _rewatch(self) -> None:
        """After a full-scan event, watch the folders as they are now."""
        for wd in list(self._folders):
            self._libc.inotify_rm_watch(self._fd, wd)
        self._folders.clear()
        self._broken = not self._watch_all()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
