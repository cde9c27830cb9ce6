"""How a move's planned rewrite is made (storage/intents.py `apply_move`): a guarded swap of
the planned text, or, over a file an editor changed since the plan, a three-way merge (the
intents module docstring says when each is made, left or reported); and how a save of the
moved note under its old name, made after the rename and before the move ended, follows it
(`fold_old`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import EditConflict, NoteExists, NoteNotFound, PathRefused, VaultError
from ..notes.canvas_cards import is_canvas, moved_cards
from ..notes.hashing import content_hash
from ..notes.merge3 import holds, merge3
from ..notes.relinks import relinked
from .fileops import open_regular
from .intent_writes import step_hash
from .paths import copy_name
from .removal import MAX_TRASH_COPIES, TRASH_NAME
from .store import MAX_NOTE_BYTES, TRASH_DIR, Store


@dataclass(frozen=True)
class Rewrite:
    """One file of a plan: at `path` (after the rename), `text` -> `new_text`."""

    path: str
    text: str
    new_text: str
    names: tuple[str, ...] = ()  # bare link targets that meant the moved note from here

    @property
    def old_hash(self) -> str:
        return content_hash(self.text)

    @property
    def new_hash(self) -> str:
        return content_hash(self.new_text)


def swap(store: Store, path: str, expected: str, text: str) -> str:
    """Write `text` at `path` if it still hashes to `expected` (under the lock): "written";
    "busy" when refused while another program held it open for writing, its bytes still
    those (an appender between its open and its write: worth another try once it lets go,
    `intents._rewrite`); else "left" (changed, gone, or no note may be written there now, a
    symlink or a folder in its place)."""
    try:
        store.write_text(path, text, expected_hash=expected, canvas=is_canvas(path))
    except EditConflict as exc:
        return "busy" if exc.current == expected else "left"
    except (NoteNotFound, NoteExists, PathRefused):
        return "left"
    return "written"


def merged(store: Store, rw: Rewrite, now: str | None, old: str, new: str, wiki: str) -> str:
    """Make the planned rewrite of a file changed since it was planned over its new text, in
    the move of `old` to `new` (`wiki`: a link's target to it after; "" for an older plan)
    (intents.py docstring): "written", "made" (it holds it already: a recovery killed after this
    step), or "left" (the moved note's own lines changed both ways, a wiki-link of theirs
    cannot name it, the file is gone or no longer text, or it changed again meanwhile). A
    canvas's cards are rewritten again on its text now (notes/canvas_cards.py), its text
    cards' links as a changed note's are (`relinked`, by the names the plan recorded)."""
    if now is None:
        return "left"
    try:
        text = store.read_text(rw.path)
    except (VaultError, OSError):
        return "left"
    if content_hash(text) != now:
        return "left"
    if is_canvas(rw.path):
        again = moved_cards(text, old, new, None if not wiki else lambda card: relinked(
            card, (card, card), rw.path, rw.path, old, new, wiki, rw.names))
        return "made" if again is None else swap(store, rw.path, now, again)
    out = merge3(rw.text, rw.new_text, text)
    if out is None and (holds(rw.text, rw.new_text, text)
                           or (wiki and rw.path != new)):
        out = text
    if out is None:
        return "left"
    if wiki:  # a plan recorded by an older rmh has no names: its merge alone
        src = old if rw.path == new else rw.path
        out = relinked(out, (rw.text, rw.new_text), src, rw.path, old, new, wiki, rw.names)
    if out is None:  # a wiki-link they wrote cannot name the note now: theirs, reported
        return "left"
    if out == text:
        return "made"
    return swap(store, rw.path, now, out)


def rewrite_once(store: Store, rw: Rewrite, undo: bool, now: str | None, old: str, new: str,
                 wiki: str) -> str | None:
    """One try of a move's planned rewrite (or, `undo`, its take-back) on the file hashing to
    `now`, in the move of `old` to `new` (intents.py `_rewrite`): "written", "left", "busy"
    (`swap`) or None."""
    if undo:  # undo what was made, the same guarded way
        done = swap(store, rw.path, rw.new_hash, rw.text) if now == rw.new_hash else None
        return done if done in ("written", "busy") else None
    if now == rw.old_hash and rw.old_hash != rw.new_hash:
        return swap(store, rw.path, rw.old_hash, rw.new_text)
    merge = None if now == rw.new_hash else merged(store, rw, now, old, new, wiki)
    return merge if merge in ("written", "left", "busy") else None


def twins(store: Store, a: str, b: str) -> bool:
    """Whether `a` and `b` are two links to one file (a rename killed between its link and
    its unlink: Store.move finishes it)."""
    try:
        return os.path.samefile(store.resolve(a), store.resolve(b))
    except OSError:
        return False


def fold_old(store: Store, old: str, new: str, planned: frozenset[str]) -> str | None:
    """After a move's rename: a file at `old` again (not a second link of `new`) is a save of
    the moved note under the name its editor knows (temp file renamed over `old`, as editors
    save) made before the move ended, or a copy of it. While `new` holds what the move put
    there (a hash of `planned`, or `old`'s own bytes), the file at `old` is renamed over `new`
    in one step (`Removal.move_over`): the save follows the note and nothing is left at the
    old name; a kill leaves it before or after. None when it was not (nothing at `old`, `new`
    changed too, or either changed meanwhile: both left as they are). The file at `old` may
    also be another note made at the freed name (nothing tells it from a save): so the bytes
    at `new`, where they differ, are first put in the trash (`Store.trash`, kept: a hard
    link; a kill after it leaves a copy, found again by the next run): no byte is lost
    (REV36, session 36: that note's rename over `new` removed the moved note's bytes), and
    the copy's vault path is returned, for the move to report ("" when `new` held `old`'s
    very bytes: nothing replaced; FIX37: the copy was made silently)."""
    old_hash = step_hash(store, old)
    if old_hash is None or twins(store, old, new):
        return None
    kept = ""
    try:
        if step_hash(store, new) in planned - {old_hash}:
            kept = f"{TRASH_DIR}/{store.trash(new, keep=True)}"
        store.move_over(old, new, planned | {old_hash})
    except (VaultError, OSError):
        return None
    return kept


def folded_before(store: Store, new: str, planned: frozenset[str]) -> list[str]:
    """The trash copies (vault paths) of `new` holding what the move put there, while `new`
    holds something else: what an earlier run's fold replaced, when that run was killed or
    failed before it reported it (the fold's report would otherwise be lost: FIX37, a full
    disk or a kill after the fold). Copies are looked up in order until one is missing."""
    now = step_hash(store, new)
    if now is None or now in planned:
        return []
    found = []
    for n in range(MAX_TRASH_COPIES):
        copy = copy_name(new, n)
        try:  # through the held `.rmh` (never another folder put at its name meanwhile)
            with open_regular(store.state / TRASH_NAME / copy) as fh:
                data = fh.read(MAX_NOTE_BYTES + 1)
        except FileNotFoundError:
            break
        except OSError:
            continue
        if content_hash(data) in planned:
            found.append(f"{TRASH_DIR}/{copy}")
    return found
