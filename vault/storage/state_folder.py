"""Where a vault keeps its own files: `root/.rmh/`, found (or made) and checked.

`.rmh` may be a symlink only to a folder inside the vault. One leaving it is refused before
anything is made: the write lock refused it already (storage/write_lock.py), but the learning
ledger, opened first, had created `learned.sqlite` in the folder outside by then. A `.rmh`
that is a file (or a dangling link) is no vault, said as such, not as a raw `FileExistsError`.

A real folder at `.rmh` that holds files and none of rmh's own (`ANCHORS`: the index, the
learning log, the write lock, the hooks' files, rmh's folders and derived files) is a folder
of the user's moved or named there, not a vault's state: it is refused (StateRefused, with
the folder and what to do) before rmh writes, sweeps or removes anything in it; it used to be
taken silently, rmh's files made among the user's (HOUSE41). An empty `.rmh` is a new one.
Every refusal says which folder, why and what to do (`StateRefused`), the same for every
command, the server and the hooks.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path

from ..errors import NotAVault, StateRefused

# Names rmh makes in `.rmh` (one is enough): the index, the learning log, the write lock,
# the hooks' index, journals, daemon files and socket, the sessions', intents', trash and
# generated folders, the entity cache, and the derived files a search makes (their
# prefixes in `ANCHOR_PREFIXES`), so that a state folder whose index and lock a user
# deleted (the index is rebuilt) is still known.
ANCHORS = ("index.sqlite", "learned.sqlite", "write.lock", "hooks.sqlite", "hooks",
           "hooks.sock", "hooks-daemon.json", "hooks-daemon.log", "hooks-daemon.pid",
           "hooks-daemon.lock", "sessions", "intents", "trash", "generated",
           "entities-llm.sqlite", "forgotten.json", "catch-up.json", "catch-up-paid.json",
           "stat-columns.bin", "note-columns.bin", "link-edges.npz", "lexical-index.bin",
           "conjunctive-sums.bin", "dense-index.npz", "fusion-calibration.json", "used.json")
ANCHOR_PREFIXES = ("name-table-", "stamped-", "dense-rows-", "onnx-optimized-")
LINK_FIX = ("remove the symlink and put the vault's own .rmh folder back in its place (a .rmh "
            "symlink may name only a folder inside the vault)")


def foreign(state: Path) -> str | None:
    """Why the folder `state` is not a vault's state folder (it holds files, none of
    `ANCHORS` nor a name with one of `ANCHOR_PREFIXES`), or None when it is one (or is empty,
    or cannot be listed: said later).

    One listing, read to its end unless an anchor comes first. Another process making a fresh
    `.rmh` at the same moment (tests/vault/storage/test_concurrent_open.py) makes an anchor
    before any other name there, and a listing of a folder that small is one `getdents` call,
    which a file's creation cannot cut in two (the kernel holds the folder's lock across
    each): the listing shows the folder empty or with the anchor, never only what followed
    it."""
    first, count = "", 0
    with contextlib.suppress(OSError), os.scandir(state) as entries:
        for entry in entries:
            if entry.name in ANCHORS or entry.name.startswith(ANCHOR_PREFIXES):
                return None
            first = entry.name if not count else min(first, entry.name)
            count += 1
    if not count:
        return None
    more = "" if count == 1 else f" and {count - 1} more"
    return f"holds {first!r}{more}, none of rmh's own files: not a vault's state folder"


def state_folder(root: Path, name: str, *, create: bool = False) -> Path:
    """`root/name`, made first with `create` (the vault folder too); NotAVault when the vault
    or that folder is missing or not a folder, StateRefused (a PathRefused) when it is a
    symlink leaving the vault or a folder of someone else's files (`foreign`)."""
    state = root / name
    if create and not (root.exists() and not root.is_dir()):
        with contextlib.suppress(FileExistsError, NotADirectoryError):  # said below
            root.mkdir(parents=True, exist_ok=True)
    if not root.is_dir():
        raise NotAVault(str(root), "not a folder" if root.exists() else "no such folder")
    real_root = os.path.realpath(root)
    if os.path.islink(state) and os.path.commonpath(
            [real_root, os.path.realpath(state)]) != real_root:
        raise StateRefused(str(state.absolute()), "symlink leaves the vault", LINK_FIX)
    if create and not os.path.lexists(state):
        state.mkdir(exist_ok=True)
    if not state.is_dir():
        missing = not os.path.lexists(state)
        raise NotAVault(str(root), f"no {name} folder; run `rmh init` first" if missing
                        else f"{name} is not a folder")
    why = foreign(state)
    if why is not None:
        raise StateRefused(str(state.absolute()), why,
                           "move that folder out of the vault (rmh changed nothing in it), "
                           f"then run `rmh init {shlex.quote(str(root.absolute()))}` to make "
                           "the vault's own")
    return state
