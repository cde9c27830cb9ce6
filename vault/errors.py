"""Typed errors of the vault package.

One base class (`VaultError`); each subclass names one condition and carries its fields, so
the JSON-RPC boundary (harness) can map it to an application code with structured data.
Expected outcomes (no hits, a dangling link) are values, never exceptions.
"""

from __future__ import annotations


class VaultError(Exception):
    """Base of every error raised by the vault package."""

    code_name = "vault_error"

    def data(self) -> dict[str, object]:
        """Structured, JSON-safe fields describing the error (no host paths)."""
        return {}


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


class NoteNotFound(VaultError):
    """No note matches the given path or title."""

    code_name = "note_not_found"

    def __init__(self, note: str) -> None:
        super().__init__(f"note not found: {note!r}")
        self.note = note

    def data(self) -> dict[str, object]:
        return {"note": self.note[:200]}


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
    """An ONNX model (embedder or cross-encoder) cannot be loaded."""

    code_name = "model_unavailable"

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"model unavailable: {what} ({reason})")
        self.what = what
        self.reason = reason

    def data(self) -> dict[str, object]:
        return {"what": self.what, "reason": self.reason}
