"""Typed errors of the vault package: every exception the vault raises is defined here.

One base class (`VaultError`); each subclass names one condition and carries its fields, so
the boundary (harness/errors.py) can map it to a JSON-RPC application code, an MCP tool error
and a REPL exception with structured data. Expected outcomes (no hits, a dangling link) are
values, never exceptions. The tree:

    VaultError
    ├── NotAVault               the folder is missing or has no .rmh/
    ├── PathRefused             traversal, absolute path, control characters, symlink escape
    │   └── StateRefused        the vault's .rmh is not its own state folder (and the fix)
    ├── NoteNotFound            no note matches a path or title
    │   └── NoteSkipped         the path is a file the index skipped (binary, too large...)
    ├── AmbiguousNote           a title matches several notes
    ├── NoteExists              a move or create would overwrite a note
    ├── EditConflict            the file changed since it was read (expected_hash differs)
    ├── EditRefused             an edit cannot apply as asked (no such heading, wrong count)
    ├── NotText                 binary or invalid UTF-8
    ├── NoteFormatError         frontmatter that cannot be read or safely edited
    ├── QuotaExceeded           a size or count limit was hit
    ├── ModelUnavailable        an ONNX model cannot be loaded
    ├── IndexUnusable           index.sqlite is corrupt or from a newer rmh
    ├── LedgerError             learned.sqlite cannot be used
    ├── ConversationFormatError not a conversation in a known format
    ├── Cancelled               the caller stopped waiting (vault/cancel.py)
    │   └── IngestStopped       an ingest stopped between notes (vault/cancel.py)
    ├── DiskFull                no space left (ENOSPC, EDQUOT, EFBIG, SQLite's "disk is full")
    ├── PermissionDenied        the file system refused access to a note (EACCES, EPERM)
    ├── ErasurePending          an erasure's steps failed: the vault stays closed until done
    └── ReadOnlyVault           .rmh/ not writable (a read-only mount, another owner): no write

`storage_error` (untyped_errors.py) turns an OSError or a SQLite error meaning one of the last
three into it (the boundary calls it on anything untyped: "disk full", not "internal").

    sqlite3.DatabaseError
    └── SchemaTooNew            a SQLite schema newer than this rmh (its opener wraps it)
"""

from __future__ import annotations

import os
import resource
import sqlite3
from collections import Counter

from .plural import counted


class VaultError(Exception):
    """Base of every error raised by the vault package."""

    code_name = "vault_error"

    def data(self) -> dict[str, object]:
        """Structured, JSON-safe fields describing the error (no host paths)."""
        return {}


class Cancelled(VaultError):
    """The caller stopped waiting: long work stopped at a checkpoint, nothing changed."""

    code_name = "cancelled"

    def __init__(self) -> None:
        super().__init__("cancelled: the caller stopped waiting for this work")


class NotAVault(VaultError):
    """The folder is missing or is not an initialised vault."""

    code_name = "not_a_vault"

    def __init__(self, root: str, reason: str) -> None:
        super().__init__(f"not a vault: {root} ({reason})")
        self.root = root
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"reason": self.reason}


class PathRefused(VaultError):
    """A note path was refused: traversal, absolute, control characters, symlink escape..."""

    code_name = "path_refused"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"path refused: {path!r} ({reason})")
        self.path = path
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"path": self.path[:200], "reason": self.reason}


class StateRefused(PathRefused):
    """The vault's own folder (`.rmh`) was refused: a symlink leaving the vault, a folder
    holding files rmh never makes, one swapped in while open. `path` stays ".rmh" (what a
    client matched on); `folder` is its full path and `fix` what to do, in the message and
    the data, so every command says the same (HOUSE41). Nothing is read or written there."""

    def __init__(self, folder: str, reason: str, fix: str) -> None:
        super().__init__(".rmh", reason)
        self.args = (f"path refused: {folder!r} ({reason}); rmh reads and writes nothing "
                     f"there. To fix: {fix}",)
        self.folder = folder
        self.fix = fix

    def data(self) -> dict[str, object]:
        return {**super().data(), "folder": self.folder[:300], "fix": self.fix}


class NoteNotFound(VaultError):
    """No note matches the given path or title."""

    code_name = "note_not_found"

    def __init__(self, note: str, moved_to: str | None = None) -> None:
        self.link_target = _link_target(note)
        super().__init__(f"note not found: {note!r}" + (
            (f" (written as a link: the note it names is {self.link_target!r})"
             if self.link_target else "") if moved_to is None else f" (a move interrupted "
            f"earlier, finished when this command opened the vault, moved it to {moved_to!r})"))
        self.note = note
        self.moved_to = moved_to

    def data(self) -> dict[str, object]:
        return {"note": self.note[:200], **({} if self.moved_to is None else
                                            {"moved_to": self.moved_to[:200]}),
                **({"link_target": self.link_target[:200]} if self.link_target else {})}


def _link_target(note: str) -> str:
    """For a name written as a link (`[[Alice#^id|x]]`, `Alice#Heading`): the note it names,
    which an agent that copied a link from a note's text meant (REVIEW42, session 42); else ""."""
    if not any(mark in note for mark in ("[[", "#", "|")):
        return ""
    target = note.strip().removeprefix("!").removeprefix("[[").removesuffix("]]")
    target = target.split("|", 1)[0].split("#", 1)[0].strip()
    return "" if target == note else target


class NoteSkipped(NoteNotFound):
    """The path names a file the index skipped, with the scan's reason ("binary", "not utf-8",
    a size quota, a refused name...). A NoteNotFound, so code that creates a missing note
    still treats it as absent."""

    code_name = "note_skipped"

    def __init__(self, note: str, path: str, reason: str) -> None:
        super().__init__(note)
        self.args = (f"note skipped by the index: {path!r} ({reason})",)
        self.path = path
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"note": self.note[:200], "path": self.path[:200], "reason": self.reason[:200]}


class AmbiguousNote(VaultError):
    """A title matches several notes and no rule picks one."""

    code_name = "ambiguous_note"

    def __init__(self, note: str, candidates: list[str]) -> None:
        super().__init__(f"ambiguous note {note!r}: {', '.join(candidates)}")
        self.note = note
        self.candidates = candidates

    def data(self) -> dict[str, object]:
        return {"note": self.note[:200], "candidates": self.candidates[:20]}


class NoteExists(VaultError):
    """A move or create would overwrite an existing note."""

    code_name = "note_exists"

    def __init__(self, path: str) -> None:
        super().__init__(f"note already exists: {path!r}")
        self.path = path

    def data(self) -> dict[str, object]:
        return {"path": self.path}


class EditConflict(VaultError):
    """A write or edit named the hash of the text it read, and the file now holds other bytes
    (changed in Obsidian, by another agent...). Nothing was written; `current` is the hash of
    what is there now (None when the note is gone), so the caller can re-read and retry."""

    code_name = "edit_conflict"

    def __init__(self, path: str, expected: str, current: str | None) -> None:
        super().__init__(f"{path!r} changed since it was read (expected hash {expected[:12]}, "
                         f"now {current[:12] if current else 'missing'}); read it again")
        self.path = path
        self.expected = expected
        self.current = current

    def data(self) -> dict[str, object]:
        return {"path": self.path, "expected_hash": self.expected, "current_hash": self.current}


class EditRefused(VaultError):
    """An edit cannot apply as asked: no such heading (or several), `find` occurring another
    number of times than expected, an unknown kind. Nothing was written."""

    code_name = "edit_refused"

    def __init__(self, kind: str, reason: str, *, expected: int | None = None,
                 found: int | None = None) -> None:
        super().__init__(f"edit ({kind}) refused: {reason}")
        self.kind = kind
        self.reason = reason
        self.expected = expected
        self.found = found

    def data(self) -> dict[str, object]:
        return {"edit": self.kind, "reason": self.reason[:300], "expected": self.expected,
                "found": self.found}


class NotText(VaultError):
    """A file is binary or not valid UTF-8 and cannot be treated as a note."""

    code_name = "not_text"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"not a text note: {path!r} ({reason})")
        self.path = path
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason}


class QuotaExceeded(VaultError):
    """A size or count limit was hit (note body too large, too many writes...)."""

    code_name = "quota_exceeded"

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"quota exceeded: {what} (limit {limit})")
        self.what = what
        self.limit = limit

    def data(self) -> dict[str, object]:
        return {"what": self.what, "limit": self.limit}


class ModelUnavailable(VaultError):
    """An ONNX model (embedder or cross-encoder) cannot be loaded; `fix`: what to do."""

    code_name = "model_unavailable"

    def __init__(self, what: str, reason: str, fix: str = "") -> None:
        super().__init__(f"model unavailable: {what} ({reason})" + (f"; {fix}" if fix else ""))
        self.what = what
        self.reason = reason
        self.fix = fix

    def data(self) -> dict[str, object]:
        return {"what": self.what, "reason": self.reason, **({"fix": self.fix} if self.fix else {})}


class NoteFormatError(VaultError):
    """A note's frontmatter cannot be read or safely edited; the note is left as it was."""

    code_name = "note_format"

    def __init__(self, reason: str) -> None:
        super().__init__(f"frontmatter: {reason}")
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"reason": self.reason[:500]}


class IndexUnusable(VaultError):
    """The index file is unusable (corrupt, or a newer schema than this rmh knows)."""

    code_name = "index_unusable"


class LedgerError(VaultError):
    """learned.sqlite cannot be used (a newer schema, not a ledger); with `param`, that
    argument asks for a point before the log's base (retention): a bad argument, no damage."""

    code_name = "ledger_error"

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class ConversationFormatError(VaultError):
    """The file is not a conversation in the named (or any recognised) format."""

    code_name = "conversation_format"

    def __init__(self, reason: str) -> None:
        super().__init__(f"not a conversation: {reason}")
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"reason": self.reason}


class DiskFull(VaultError):
    """The file system has no space left (or the user's quota is spent) for `what`: a note,
    the index or the learning ledger. A note write that fails so leaves the old bytes."""

    code_name = "disk_full"

    def __init__(self, what: str) -> None:
        limit = " (or past this process's file-size limit, `ulimit -f`)" if size_limited() else ""
        super().__init__(f"disk full: no space left to write {what}{limit}")
        self.what = what

    def data(self) -> dict[str, object]:
        return {"what": self.what[:200]}


class PermissionDenied(VaultError):
    """The file system refused access to a note (its mode, owner or an ACL): it exists, and
    rmh may not read (or write) it."""

    code_name = "permission_denied"

    def __init__(self, path: str, action: str = "read") -> None:
        super().__init__(f"permission denied: cannot {action} {path!r}")
        self.path = path
        self.action = action

    def data(self) -> dict[str, object]:
        return {"path": self.path[:200], "action": self.action}


class ReadOnlyVault(VaultError):
    """The vault is read only for this process (its `.rmh/` folder is not writable: a
    read-only mount, or files of another owner): `what` was refused before anything changed.
    Reads and searches answer from the index as it is, with learning off."""

    code_name = "read_only_vault"

    def __init__(self, what: str = "the vault") -> None:
        super().__init__(f"read-only vault: cannot write {what} (its .rmh folder or files "
                         "are not writable by this user, or its file system is mounted "
                         "read-only)")
        self.what = what

    def data(self) -> dict[str, object]:
        return {"what": self.what[:200]}


class ErasurePending(VaultError):
    """An erasure (`rmh forget`) of `notes` notes could not finish: (step, rmh's file or "",
    error) per `failed` step (erasure_steps.py), `fix` what to do. No text of it names an erased
    note or the subject; `public`/`data` no host path. `needles`: erased strings (never shown)."""

    code_name = "erasure_pending"

    def __init__(self, intent: str, failed: list[tuple[str, str, str]], fix: str,
                 needles: tuple[str, ...] = (), notes: int = 0) -> None:
        self.intent, self.failed, self.fix, self.needles = intent, failed, fix, needles
        self.notes = notes
        super().__init__(f"{self.public(host=True)}. To fix: {fix}")

    def _steps(self, host: bool) -> Counter[tuple[str, str, str]]:
        """Each (step, target, error) once, counted; the shared cache's path only if `host`."""
        return Counter((s, t if host or not os.path.isabs(t) else "", e) for s, t, e in self.failed)

    def public(self, host: bool = False) -> str:
        """The message without the fix (a client gets `fix` apart); host paths only if `host`."""
        steps = "; ".join(f"{s} {t}".rstrip() + f": {e}" + (f" (x{n})" if n > 1 else "")
                          for (s, t, e), n in self._steps(host).items())
        return f"erasure pending ({self.intent}, {counted(self.notes, 'note')}): {steps}"

    def data(self) -> dict[str, object]:
        return {"intent": self.intent, "notes": self.notes, "fix": self.fix,
                "failed": [{"step": s, **({"target": t} if t else {}), "error": e[:300]}
                           for s, t, e in list(self._steps(host=False))[:20]]}


def size_limited() -> bool:
    """Whether this process may not grow a file past some size (RLIMIT_FSIZE, `ulimit -f`)."""
    return resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY


class SchemaTooNew(sqlite3.DatabaseError):
    """The file was written by a newer rmh (its user_version is past our last migration)."""

    def __init__(self, version: int, known: int) -> None:
        super().__init__(f"schema {version} is newer than this rmh ({known})")
        self.version = version
        self.known = known
