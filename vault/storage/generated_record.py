"""The file of ingest's record of generated notes (conversation/generated.py says what it
means and when it is written): `.rmh/generated/<h>.json` per folder of conversation notes,

    {"version": 1, "notes": {sha256(note path)[:32]: [sha256 of bytes the ingest wrote]},
     "moved": {sha256(note path)[:32]: sha256(the path the user moved it to)[:32]}}

read (a file that cannot be read is an empty record), written whole (temp, fsync, rename),
and cut by an erasure (`forget_notes`, vault/erasure_steps.py), which sits below the
conversation floor: paths are hashed, so the file names no one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .fileops import fsync_dir, open_regular, replace_or_raise

FOLDER = "generated"  # under the vault's .rmh/
VERSION = 1


def digest(text: str, n: int = 64) -> str:
    """The hex sha256 of `text` (its first `n` digits)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def hashed(path: str) -> str:
    """A path as the record names it."""
    return digest(path, 32)


def forget_notes(state_dir: Path, paths: Sequence[str]) -> None:
    """Drop what the record says of the notes at `paths`, an erasure's (`rmh forget`): those
    generated there and those the user had moved there. The next ingest then writes what
    remains of them (a session's other turns) as new notes, without what the erasure made it
    forget (storage/forgotten.py), instead of taking them for notes the user deleted and
    leaving them out (`left_deleted`). Every record file is read: a moved note's entry is in
    its conversation's file, wherever the user moved it."""
    gone = {hashed(p) for p in paths}
    folder = state_dir / FOLDER
    if not gone or not folder.is_dir():
        return
    changed = False
    for file in sorted(folder.glob("*.json")):
        notes, moved = load(file)
        drop = {k for k in notes if k in gone} | {k for k, at in moved.items() if at in gone}
        if drop:
            write(file, {k: v for k, v in notes.items() if k not in drop},
                   {k: v for k, v in moved.items() if k not in drop})
            changed = True
    if changed:
        fsync_dir(str(folder))


@dataclass(frozen=True)
class Entry:
    """One note's line of the record, as a journalled write of it leaves it: in record file
    `file` (`<h>.json`), under `key` (the hashed generated path), `before` (the hashes it had
    before the write, None: no line) when the write is taken back, `[after]` when it is made
    (storage/intent_writes.py `apply_writes`: a recovery leaves the record as the notes)."""

    file: str
    key: str
    before: tuple[str, ...] | None
    after: str


def set_entries(state_dir: Path, entries: Sequence[tuple[Entry, bool]],
                count_op: Callable[[], None] | None = None) -> None:
    """Set each (entry, made) in its record file: `[after]` when made, else `before`; each
    file written once, only where it changes (DiskFull, PermissionDenied, OSError: `write`)."""
    folder = state_dir / FOLDER
    files: dict[str, list[tuple[Entry, bool]]] = {}
    for entry, made in entries:
        files.setdefault(entry.file, []).append((entry, made))
    changed = False
    for name in sorted(files):
        notes, moved = load(folder / name)
        now = dict(notes)
        for entry, made in files[name]:
            if made:
                now[entry.key] = [entry.after]
            elif entry.before is None:
                now.pop(entry.key, None)
            else:
                now[entry.key] = list(entry.before)
        if now != notes:
            folder.mkdir(exist_ok=True)
            write(folder / name, now, moved, count_op)
            changed = True
    if changed:
        fsync_dir(str(folder), done=count_op or _nothing)


def _nothing() -> None:
    return None


def write(target: Path, notes: dict[str, list[str]], moved: dict[str, str],
          count_op: Callable[[], None] | None = None) -> None:
    """One folder's record file, whole (fileops.replace_or_raise); DiskFull, PermissionDenied
    or OSError when it could not be written (the ingest must not write notes the record does
    not announce), naming the file from the vault folder (`target` is under /proc/self/fd/N:
    the held `.rmh`; a full disk said "cannot write H.json in /proc/self/fd/4/generated")."""
    doc: dict[str, object] = {"version": VERSION, "notes": notes}
    if moved:
        doc["moved"] = moved
    data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("ascii")
    replace_or_raise(target, [data], f".rmh/{FOLDER}/{target.name}", count_op)


def load(file: Path) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(hashed path -> hashes, hashed path -> hashed path moved to) of one record file."""
    try:
        with open_regular(file) as fh:
            doc = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}, {}
    ok = isinstance(doc, dict) and doc.get("version") == VERSION
    notes, moved = (doc.get("notes"), doc.get("moved")) if ok else (None, None)
    if not isinstance(notes, dict):
        return {}, {}
    return ({k: [h for h in v if isinstance(h, str)] for k, v in notes.items()
             if isinstance(k, str) and isinstance(v, list)},
            {k: v for k, v in moved.items() if isinstance(k, str) and isinstance(v, str)}
            if isinstance(moved, dict) else {})
