"""A killed move's recovery, for the notes its plan did not list: one that did not link to the
moved note when the move was planned, and that somebody (an editor) saved with a link to its
old name before the recovery finished the move. The move was never acknowledged, so that link
meant the note that moved (Obsidian rewrites every link to a renamed note at the rename): the
recovery rewrites it by the plan's own rule (notes/relinks.py `retarget`), with the note's
name tables read from the folders (`folders.walk`; no index: the recovery runs before it is
open). Only notes changed since the plan are read: their ctime is at or after the intent
file's mtime (both the file system's clock; a note changed in the same tick is read too, and
holds no link that meant the moved note unless one was added: a plan lists every referrer);
so are the notes below a folder renamed since (moved into the vault: a folder's rename leaves
its notes' ctimes as they were).
The live move makes the same pass before it ends (vault/writes.py `move`), from the file
system's clock read before its plan: an editor takes no lock, so it may save such a note
while the move runs, and the move is not acknowledged yet either."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator

from ..errors import EditConflict, NoteNotFound, VaultError
from ..notes.hashing import content_hash
from ..notes.links import Resolver
from ..notes.note import rewrite_links
from ..notes.relinks import moved, retarget
from .folders import walk, wrap64
from .intent_writes import Outcome
from .store import Store


def _renamed_since(root: str, folder: str, since_ns: int) -> bool:
    """Whether `folder` itself was renamed (moved in from elsewhere) at or after `since_ns`:
    its ctime is, its mtime is not (an entry added or removed sets both; a rename of the
    folder, which leaves its notes' ctimes as they were, sets its ctime alone)."""
    try:
        st = os.lstat(os.path.join(root, folder))
    except OSError:
        return False
    return st.st_ctime_ns >= since_ns > st.st_mtime_ns


def _changed_since(store: Store, since_ns: int) -> Iterator[tuple[str, bool]]:
    """Every note's vault path, in order, with whether it changed at or after `since_ns`:
    its ctime, or a folder above it renamed since (`_renamed_since`)."""
    since, root = wrap64(since_ns), str(store.root)
    renamed: dict[str, bool] = {"": False}
    for listing in walk(root, [""], {}):
        folder = listing.folder
        if folder not in renamed:  # a parent is listed before its sub-folders
            renamed[folder] = (renamed.get(posixpath.dirname(folder), False)
                               or _renamed_since(root, folder, since_ns))
        for name, ctime in zip(listing.names, listing.ctimes, strict=True):
            yield posixpath.join(folder, name), renamed[folder] or ctime >= since


def relink_added(store: Store, old: str, new: str, wiki: str, planned: frozenset[str],
                 since_ns: int, out: Outcome) -> None:
    """Rewrite the links that meant the note moved `old` -> `new` (renamed already) in the
    notes changed since `since_ns` that the plan did not list (`planned`, and `new` itself):
    each rewritten one joins `out.written`, one that changed again meanwhile `out.left`, as
    does one whose wiki-link `wiki` cannot be written in (`#|[]`: rmh's move refuses such a
    name, so only a forged plan has one) (module docstring). Call with the write lock held."""
    notes = sorted(_changed_since(store, since_ns))
    paths = tuple(p for p, _ in notes)
    if new not in paths:
        return
    after = Resolver.over(range(len(paths)), paths, ((),) * len(paths))
    note_id = paths.index(new)
    before = moved(after, note_id, old)
    for path, changed in notes:
        if not changed or path == new or path in planned:
            continue
        try:
            text = store.read_text(path)
        except (VaultError, OSError):
            continue  # gone, or no longer text: nothing of it can be rewritten
        new_text = rewrite_links(text, retarget(before, after, path, note_id, wiki))
        if new_text == text:
            continue
        if any(c in wiki for c in "[]|#"):
            out.left.append(path)
            continue
        try:
            store.write_text(path, new_text, expected_hash=content_hash(text))
        except (EditConflict, NoteNotFound):
            out.left.append(path)
        else:
            out.written.append(path)
