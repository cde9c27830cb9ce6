"""Where a vault keeps its own files: `root/.rmh/`, found (or made) and checked.

`.rmh` may be a symlink only to a folder inside the vault. One leaving it is refused before
anything is made: the write lock refused it already (storage/write_lock.py), but the learning
ledger, opened first, had created `learned.sqlite` in the folder outside by then. A `.rmh`
that is a file (or a dangling link) is no vault, said as such, not as a raw `FileExistsError`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import NotAVault, PathRefused


def state_folder(root: Path, name: str, *, create: bool = False) -> Path:
    """`root/name`, made first with `create` (the vault folder too); NotAVault when the vault
    or that folder is missing or not a folder, PathRefused when it is a symlink leaving the
    vault."""
    state = root / name
    if create and not (root.exists() and not root.is_dir()):
        with contextlib.suppress(FileExistsError, NotADirectoryError):  # said below
            root.mkdir(parents=True, exist_ok=True)
    if not root.is_dir():
        raise NotAVault(str(root), "not a folder" if root.exists() else "no such folder")
    real_root = os.path.realpath(root)
    if os.path.islink(state) and os.path.commonpath(
            [real_root, os.path.realpath(state)]) != real_root:
        raise PathRefused(name, "symlink leaves the vault")
    if create and not os.path.lexists(state):
        state.mkdir(exist_ok=True)
    if not state.is_dir():
        missing = not os.path.lexists(state)
        raise NotAVault(str(root), f"no {name} folder; run `rmh init` first" if missing
                        else f"{name} is not a folder")
    return state
