"""The hooks' journal folder (VAULT/.rmh/hooks/): the notes used lately (used.json), what the
session-end hook found cited or read, most recent first, which the session-start brief reads
(harness/hooks_recall.py); and one journal per session (`journal_shown`) of what the prompt
hook showed, which the session-end hook logs (`take_shown`).

Parallel client sessions on one vault end at once (terminals closed together; Codex CLI's
`Stop` at every turn): each read-merge-write holds an exclusive lock on the journal folder
(no lock file left), so one session's notes are never lost to the other's write.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from vault import NotAVault, held_state

JOURNAL_DIR = "hooks"
USED_FILE = "used.json"
USED_MAX = 50
PROMPT_CHARS = 500  # how much of a prompt the journal keeps


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # dropped with the descriptor
        yield
    finally:
        os.close(fd)


journal_lock = _locked  # hooks_forget.forget's rewrite of a session journal holds it too


def state_or_plain(root: Path) -> Path:
    """The held `.rmh/` (vault held_state), or the plain `root/.rmh` when there is none (no
    vault; its `.rmh` renamed away for the moment): for reading, and for writes that make
    no folder (a missing `.rmh` is never made again here: a vault's state reset, STORE13)."""
    try:
        return held_state(root)
    except NotAVault:
        return root / ".rmh"


def held_file(root: Path, name: str) -> Path | None:
    """The held `.rmh/NAME` (vault held_state) when it is a file there, not a symlink; else
    None: no vault, or its `.rmh` away for the moment (the plain path was read through the
    symlink another process put there next: another vault's rows, HOUSE39), or no such
    file. For reads; PathRefused while `.rmh` is not the folder held."""
    try:
        path = held_state(root) / name
    except NotAVault:
        return None
    return path if path.is_file() and not path.is_symlink() else None


def session_journal(root: Path, session: str, state: Path | None = None) -> Path:
    """One file per session: a name changed to be safe ("a/b", "a:b") or cut gets a hash.
    In `state` (default: `state_or_plain`)."""
    safe = re.sub(r"[^\w.-]", "-", session)[:120]
    if safe != session:
        safe += "-" + hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return (state or state_or_plain(root)) / JOURNAL_DIR / f"{safe}.jsonl"


def journal_shown(root: Path, session: str, prompt: str, notes: list[str],
                  done: Callable[[], object] = lambda: None) -> None:
    """Append what the prompt hook showed, for the session-end hook to log: one line, in one
    write, under the folder's lock (`forget` rewriting the file would drop it), never through
    a link planted there (one is removed; O_NOFOLLOW). A line a killed or full-disk write cut
    (no newline at the end) is ended first, so it never swallows this one (FIX37: the two
    were read as one bad line, both dropped); one this write could not finish (a full disk
    took part of it) is taken back, OSError. `done`: after the write (the fault count)."""
    path = session_journal(root, session, held_state(root))  # a vault's `.rmh`, never made
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"prompt": prompt[:PROMPT_CHARS], "notes": notes}, ensure_ascii=False)
    with _locked(path.parent):
        if path.is_symlink():
            path.unlink()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o666)
        try:
            size = os.fstat(fd).st_size
            cut = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            data = (("\n" if cut else "") + line + "\n").encode("utf-8")
            if os.write(fd, data) != len(data):  # a full disk took part of it: none stays
                os.ftruncate(fd, size)  # (STORE13: the hook said done, its line was cut)
                raise OSError(errno.ENOSPC, "no room for the whole journal line", str(path))
        finally:
            os.close(fd)
    done()


def take_shown(root: Path, session: str) -> list[tuple[str, list[str]]]:
    """The journalled (prompt, notes) of a session, removing the journal (under the folder's
    lock: a line appended between the read and the unlink was lost)."""
    path = session_journal(root, session)
    out: list[tuple[str, list[str]]] = []
    with _locked(path.parent) if path.parent.is_dir() else contextlib.nullcontext():
        if not path.is_file():  # a FIFO would be read forever
            return []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                doc = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a killed hook
            if isinstance(doc, dict) and isinstance(doc.get("notes"), list):
                out.append((str(doc.get("prompt", "")), [str(n) for n in doc["notes"]]))
        path.unlink()
    return out


def remember_used(root: Path, notes: list[str]) -> None:
    """Put `notes` first in the list of notes used lately (at most USED_MAX)."""
    update_used(root, lambda old: list(dict.fromkeys([*notes, *old]))[:USED_MAX])


def update_used(root: Path, change: Callable[[list[str]], list[str]]) -> None:
    """Replace the list of notes used lately by `change` of it, under the folder's lock."""
    path = held_state(root) / JOURNAL_DIR / USED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    from vault import replace_whole  # whole, never through a link planted at a name

    with _locked(path.parent):
        new = change(used_lately(root))
        replace_whole(path, (json.dumps(new, ensure_ascii=False).encode("utf-8"),))


def used_lately(root: Path) -> list[str]:
    """The notes used lately (`remember_used`), most recent first."""
    path = state_or_plain(root) / JOURNAL_DIR / USED_FILE
    if not path.is_file():  # a FIFO would be read forever
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # ValueError: JSON, UTF-8
        return []
    return [str(n) for n in doc] if isinstance(doc, list) else []
