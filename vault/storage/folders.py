"""The folder scan, one folder at a time: what each folder holds, and a digest to compare.

`list_folder` lists one folder through a directory descriptor (one `fstatat` per entry, no
path walk from the root) and returns a `Listing`: the names of its regular `*.md` notes in
name order with (size, mtime_ns, inode, ctime_ns) each, the entries it skips and why, and
its sub-folders. `digest` hashes a folder's notes and their stats; `expected_digests` computes
the same digest from the index's rows, so a folder whose digest equals the index's has no
note added, removed or changed by stat, and sync looks at none of its files one by one
(`Listing.same`; the listing then carries no names). `walk` lists whole sub-trees; it is
what a worker process runs (storage/scan_pool.py), and it imports only the standard library.
A folder whose ctime is unchanged since this process last listed it is not read again, only
its entries stat'ed (`_entries`); entries named like notes are stat'ed by a lean loop that
falls back to the full rules for the folder when one of them is not a plain note
(`_stat_notes`, `_classify`). That loop is C when vault/storage/_stat_loop.c was built at
install (`NATIVE`; the build is optional and RMH_NO_NATIVE=1 turns it off): os.lstat's
stat_result costs as much as the system call, so at 10^6 notes the C loop takes about 40 % off
a no-op sync (BENCHMARKS.md). Both loops give the same bytes (`_packed`).

A note's identity is (size, mtime_ns, inode, ctime_ns). The ctime is there because an edit
that keeps the size and is followed by setting the mtime back (`touch -r`, `rsync -t`,
`os.utime`) changes nothing else; every content change sets the ctime, and utime cannot set it
back (it is the kernel's clock). git's "racily clean" rule covers an edit in the same
file-system clock tick as rmh's read of the file (the stats then say nothing changed): a row
whose ctime was not SETTLED_NS old when the sync began reading (`stored_ctime`) stores RACY
instead, which no listing shows, so the next sync reads and hashes that file again and the
content hash decides; once settled, its true ctime is stored (one ahead of the file system's
clock is stored negated and trusted until that clock nears it: storage/future.py). The clock
decides only whether a file is read again, never what the index holds of it. A row from
before ctimes were kept holds LEGACY, and the first sync adopts its file's ctime when the other
stats match (sync.py): reading every note again on upgrade took 17 s at 10^5 notes.

mtimes, inodes and ctimes are kept as signed 64-bit integers (`wrap64`): SQLite's INTEGER holds no
more, and a file dated after 2262 (`touch -d 2300-01-01`) or an inode above 2^63 would
otherwise stop every sync with an OverflowError.

Skip reasons are those of `Store.scan`; an entry flagged `check` (a non-regular or oversized
`*.md`) is reported under its reason only if `Store.check` accepts its name (the caller
checks: a refused name is reported as such, as the scan always did).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st
import sys
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

MAX_NOTE_BYTES = 8 * 1024 * 1024  # store.MAX_NOTE_BYTES (store.py imports it from here)

# `name.lower().endswith(".md")` without a copy of the name: no other code point lowercases
# to ".", "m" or "d" (checked over all of Unicode in tests/vault/storage/test_folders.py).
_MD = (".md", ".mD", ".Md", ".MD")
_DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))


class Skip(NamedTuple):
    """An entry the scan does not list as a note: its path, the reason, and whether the
    reason holds only once `Store.check` accepted the name."""

    path: str
    reason: str
    check: bool


class Listing(NamedTuple):
    """One folder (vault-relative, "" = the root). `readable` False: it could not be listed
    (its skip says why; nothing below it was seen). `same`: its notes' digest equals the
    expected one; then `names` and the stat columns are empty. `temps`: its hidden entries
    named like the temporary of an interrupted write or a kept save (TEMP_MARK, KEPT_MARK in
    the name; the store decides), so the sync's scan serves the stale-temp sweep
    (Store.clean_stale_temps) and doctor's leftovers (storage/leftovers.py)."""

    folder: str
    readable: bool
    same: bool
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    mtimes: tuple[int, ...]
    inodes: tuple[int, ...]
    ctimes: tuple[int, ...]
    skipped: tuple[Skip, ...]
    temps: tuple[str, ...] = ()


TEMP_MARK = ".rmh-tmp-"  # in the name of every temporary of a write (store.py `_TEMP`)
KEPT_MARK = ".rmh-kept-"  # in the name of a take-back's kept save (storage/leftovers.py)
_I64 = 1 << 63


def wrap64(value: int) -> int:
    """`value` as a signed 64-bit integer (two's complement: mod 2^64), what SQLite's INTEGER
    and an array("q") hold; values already in range are returned as they are."""
    return value if -_I64 <= value < _I64 else (value + _I64) % (1 << 64) - _I64


def _packed(sizes: Sequence[int], mtimes: Sequence[int], inodes: Sequence[int],
            ctimes: Sequence[int]) -> bytes:
    """The stat columns as native int64s, sizes then mtimes then inodes then ctimes (what
    the C loop returns); values out of range are wrapped (`wrap64`)."""
    out = array("q", sizes)
    for column in (mtimes, inodes, ctimes):
        if column and (max(column) >= _I64 or min(column) < -_I64):
            column = [wrap64(v) for v in column]
        out.extend(column)
    return out.tobytes()


def _unpacked(packed: bytes, n: int) -> tuple[list[int], list[int], list[int], list[int]]:
    values = array("q")
    values.frombytes(packed)
    column = values.tolist()
    return column[:n], column[n:2 * n], column[2 * n:3 * n], column[3 * n:]


def _digest(names: Sequence[str], packed: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update("/".join(names).encode("utf-8", "surrogateescape"))  # "/" is in no name
    h.update(packed)
    return h.digest()


def digest(names: Sequence[str], sizes: Sequence[int], mtimes: Sequence[int],
           inodes: Sequence[int], ctimes: Sequence[int]) -> bytes:
    """blake2b of a folder's note names (in name order) and their stats (`_packed`)."""
    return _digest(names, _packed(sizes, mtimes, inodes, ctimes))


def digest_packed(names: Sequence[str], packed: bytes) -> bytes:
    """`digest` of stats already packed as `_packed` packs them (native int64 sizes, then
    mtimes, then inodes, then ctimes, in range)."""
    return _digest(names, packed)


FolderDigest = tuple[bytes, Sequence[str]]  # a folder's digest, and its note paths by name


def expected_digests(rows: Iterable[Sequence[Any]]) -> dict[str, FolderDigest]:
    """folder -> (digest, its note paths in name order) from indexed (path, size, mtime_ns,
    inode, ctime_ns) rows; the digest is the one `list_folder` computes when nothing changed."""
    by_folder: dict[str, list[tuple[str, str, int, int, int, int]]] = {}
    for path, size, mtime_ns, inode, ctime_ns in rows:
        folder, _, name = path.rpartition("/")
        by_folder.setdefault(folder, []).append((name, path, size, mtime_ns, inode, ctime_ns))
    out: dict[str, FolderDigest] = {}
    for folder in sorted(by_folder):
        notes = sorted(by_folder[folder])  # names are unique in a folder
        out[folder] = (digest([n[0] for n in notes], [n[2] for n in notes],
                              [n[3] for n in notes], [n[4] for n in notes],
                              [n[5] for n in notes]),
                       tuple(n[1] for n in notes))
    return out


def _err(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def symlink_reason(root: str, link: str) -> str:
    """Why a symlink is not followed: where it points, or that it is broken or a loop (or it
    was swapped for a file as realpath read it: EINVAL, a race)."""
    try:
        real = os.path.realpath(link)
    except OSError:
        return "symlink swapped in"
    if os.path.commonpath([root, real]) != root:
        return "symlink outside vault"
    try:
        os.stat(link)
    except OSError as exc:
        return "symlink loop" if exc.errno == errno.ELOOP else "broken symlink"
    return "symlink inside vault (not followed)"


# (root, folder) -> (device, inode, ctime_ns, (note names, other names, note names encoded,
# temporaries)) of a folder listed earlier by this process (`_entries`). Adding, removing or
# renaming an entry changes a folder's ctime (POSIX; and unlike mtime, ctime cannot be set
# back by utime), so while it is unchanged the names are too and the directory need not be
# read again; every name is still stat'ed, so an edit is seen as before. A listing is kept
# only when its folder's ctime was already SETTLED_NS old when it was read, so a change in
# the same file-system clock tick as the listing cannot hide behind an equal ctime (git's
# "racily clean" rule). The clock decides only whether to read the directory again, never what a
# listing holds.
_Names = tuple[list[str], list[str], list[bytes], tuple[str, ...]]
_listed: dict[tuple[str, str], tuple[int, int, int, _Names]] = {}
SETTLED_NS = 2_000_000_000
_clock = time.time_ns


RACY = 0  # the ctime a row stores while its file may still change unseen (no file has it)
LEGACY = -1  # the ctime of a row indexed before ctimes were kept (schema.py migration 3)


def stored_ctime(ctime_ns: int, now: int) -> int:
    """The ctime a stat row stores for a file whose ctime is `ctime_ns`, read after the clock
    said `now` (`_clock`): `ctime_ns` once it is SETTLED_NS old, else RACY (module
    docstring: the next sync reads the file again)."""
    return ctime_ns if ctime_ns < now - SETTLED_NS else RACY


def now() -> int:
    """The clock `stored_ctime` is given (ns; `_clock`, which tests replace)."""
    return _clock()


def _entries(fd: int, key: tuple[str, str]) -> _Names:
    """The open folder `fd`'s visible entries, each list sorted: those named like a note
    (`*.md`) and the others (hidden entries are in neither), the first again as the file
    system's bytes (an `lstat` of bytes skips encoding the name: 6 % of a no-op sync's stat
    loop at 10^6), and the hidden names holding TEMP_MARK (found by bisection: the sorted
    names starting with "." are those from "." up to "/", which no name holds). From
    `_listed` when the folder's ctime says they are unchanged; callers must not change the
    lists."""
    info = os.fstat(fd)
    seen = _listed.get(key)
    if seen is not None and seen[:3] == (info.st_dev, info.st_ino, info.st_ctime_ns):
        return seen[3]
    now = _clock()
    names = os.listdir(fd)
    names.sort()
    notes = [n for n in names if n.endswith(_MD) and not n.startswith(".")]
    others = [n for n in names if not n.endswith(_MD) and not n.startswith(".")]
    encoded = [os.fsencode(n) for n in notes]
    hidden = names[bisect_left(names, ".") : bisect_left(names, "/")]
    found = (notes, others, encoded, tuple(n for n in hidden if TEMP_MARK in n or KEPT_MARK in n))
    if info.st_ctime_ns < now - SETTLED_NS:
        _listed[key] = (info.st_dev, info.st_ino, info.st_ctime_ns, found)
    else:
        _listed.pop(key, None)
    return found


def _native_loop() -> Callable[[int, list[bytes], int], bytes | None] | None:
    if os.environ.get("RMH_NO_NATIVE", "") not in ("", "0") or sys.platform == "win32":
        return None
    try:
        from ._stat_loop import COLUMNS, regular_stats
    except ImportError:  # not built (no compiler at install): os.lstat does it
        return None
    return regular_stats if COLUMNS == 4 else None  # a stale build: os.lstat does it


_native = _native_loop()
NATIVE = _native is not None  # the stat loop is the C one (module docstring)


def _stat_notes(fd: int, names: list[bytes]) -> bytes | None:
    """The sizes, mtimes, inodes and ctimes of `names` in the open folder `fd` (`_packed`)
    when every one is a regular file of at most MAX_NOTE_BYTES; None when one is not or cannot be
    stat'ed (the caller then lists the folder by `_classify`'s full rules). The hot loop of a
    no-op sync: the C loop when built, else `_stat_notes_py`."""
    if _native is not None:
        return _native(fd, names, MAX_NOTE_BYTES)
    return _stat_notes_py(fd, names)


def _stat_notes_py(fd: int, names: list[bytes]) -> bytes | None:
    """`_stat_notes` in Python: one lstat per note, four appends, and a mode check only when
    the mode differs from the last regular one seen."""
    sizes: list[int] = []
    mtimes: list[int] = []
    inodes: list[int] = []
    ctimes: list[int] = []
    lstat, is_reg = os.lstat, st.S_ISREG
    add_size, add_mtime, add_inode = sizes.append, mtimes.append, inodes.append
    add_ctime = ctimes.append
    regular = -1  # the last mode seen to be a regular file's
    try:
        for name in names:
            info = lstat(name, dir_fd=fd)
            if info.st_mode != regular:
                if not is_reg(info.st_mode):
                    return None
                regular = info.st_mode
            add_size(info.st_size)
            add_mtime(info.st_mtime_ns)
            add_inode(info.st_ino)
            add_ctime(info.st_ctime_ns)
    except OSError:
        return None
    if sizes and max(sizes) > MAX_NOTE_BYTES:
        return None
    return _packed(sizes, mtimes, inodes, ctimes)


class _Entries(NamedTuple):
    names: list[str]
    sizes: list[int]
    mtimes: list[int]
    inodes: list[int]
    ctimes: list[int]
    skipped: list[Skip]
    subdirs: list[str]


def _classify(root: str, prefix: str, fd: int, entries: list[str]) -> _Entries:
    """Visible `entries` of the open folder `fd` by the full rules: notes with their stats,
    what is skipped and why, sub-folders."""
    out = _Entries([], [], [], [], [], [], [])
    names, sizes, mtimes, inodes, ctimes, skipped, subdirs = out
    lstat, is_reg, is_dir, is_link = os.lstat, st.S_ISREG, st.S_ISDIR, st.S_ISLNK
    for name in entries:
        try:
            info = lstat(name, dir_fd=fd)
        except OSError as exc:
            if name.endswith(_MD):
                skipped.append(Skip(prefix + name, f"unreadable ({_err(exc)})", False))
            continue
        mode = info.st_mode
        if is_reg(mode):
            if not name.endswith(_MD):
                continue
            if info.st_size > MAX_NOTE_BYTES:
                skipped.append(Skip(prefix + name, f"larger than {MAX_NOTE_BYTES} bytes", True))
                continue
            names.append(name)
            sizes.append(info.st_size)
            mtimes.append(wrap64(info.st_mtime_ns))
            inodes.append(wrap64(info.st_ino))
            ctimes.append(wrap64(info.st_ctime_ns))
        elif is_dir(mode):
            subdirs.append(prefix + name)
        elif is_link(mode):
            link = os.path.join(root, prefix + name)
            if name.endswith(_MD) or os.path.isdir(link):
                skipped.append(Skip(prefix + name, symlink_reason(root, link), False))
        elif name.endswith(_MD):
            skipped.append(Skip(prefix + name, "not a regular file", True))
    return out


def list_folder(root: str, folder: str, expected: bytes | None
                ) -> tuple[Listing, list[str]]:
    """One folder's `Listing` (compared against `expected`) and its sub-folders, by name.
    Hidden entries are skipped silently; folder symlinks are never followed. When every
    entry named like a note is a plain note (the usual case) those are only stat'ed
    (`_stat_notes`) and the full rules see the other entries; else they see every entry:
    the listing is the same either way."""
    prefix = f"{folder}/" if folder else ""
    fd = -1
    try:
        fd = os.open(os.path.join(root, folder), _DIR_FLAGS)
        notes, others, encoded, temps = _entries(fd, (root, folder))
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        skip = Skip(folder or ".", f"unreadable folder ({_err(exc)})", False)
        return Listing(folder, False, False, (), (), (), (), (), (skip,)), []
    try:
        packed = _stat_notes(fd, encoded)
        if packed is None:
            found = _classify(root, prefix, fd, sorted([*notes, *others]))
            names, skipped, subdirs = found.names, found.skipped, found.subdirs
            packed = _packed(found.sizes, found.mtimes, found.inodes, found.ctimes)
        else:
            rest = _classify(root, prefix, fd, others)  # no entry named like a note
            names, skipped, subdirs = notes, rest.skipped, rest.subdirs
    finally:
        os.close(fd)
    if expected is not None and _digest(names, packed) == expected:
        return Listing(folder, True, True, (), (), (), (), (), tuple(skipped), temps), subdirs
    sizes, mtimes, inodes, ctimes = _unpacked(packed, len(names))
    return Listing(folder, True, False, tuple(names), tuple(sizes), tuple(mtimes),
                   tuple(inodes), tuple(ctimes), tuple(skipped), temps), subdirs


def walk(root: str, tops: list[str], expected: Mapping[str, bytes]) -> list[Listing]:
    """The listings of the sub-trees at `tops` (each top and every folder below it)."""
    out: list[Listing] = []
    stack = list(reversed(tops))
    while stack:
        folder = stack.pop()
        listing, subdirs = list_folder(root, folder, expected.get(folder))
        out.append(listing)
        stack.extend(reversed(subdirs))
    return out

