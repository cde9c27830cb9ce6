"""The notes used lately (VAULT/.rmh/hooks/used.json): what the session-end hook found cited
or read, most recent first, which the session-start brief reads (harness/hooks_recall.py).

Parallel client sessions on one vault end at once (terminals closed together; Codex CLI's
`Stop` at every turn): each read-merge-write holds an exclusive lock on the journal folder
(no lock file left), so one session's notes are never lost to the other's write.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

JOURNAL_DIR = "hooks"
USED_FILE = "used.json"
USED_MAX = 50


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # dropped with the descriptor
        yield
    finally:
        os.close(fd)


def remember_used(root: Path, notes: list[str]) -> None:
    """Put `notes` first in the list of notes used lately (at most USED_MAX)."""
    update_used(root, lambda old: list(dict.fromkeys([*notes, *old]))[:USED_MAX])


def update_used(root: Path, change: Callable[[list[str]], list[str]]) -> None:
    """Replace the list of notes used lately by `change` of it, under the folder's lock."""
    path = root / ".rmh" / JOURNAL_DIR / USED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    from vault import replace_whole  # whole, never through a link planted at a name

    with _locked(path.parent):
        new = change(used_lately(root))
        replace_whole(path, (json.dumps(new, ensure_ascii=False).encode("utf-8"),))


def used_lately(root: Path) -> list[str]:
    """The notes used lately (`remember_used`), most recent first."""
    path = root / ".rmh" / JOURNAL_DIR / USED_FILE
    if not path.is_file():  # a FIFO would be read forever
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # ValueError: JSON, UTF-8
        return []
    return [str(n) for n in doc] if isinstance(doc, list) else []
